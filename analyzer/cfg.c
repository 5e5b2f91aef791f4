/* cfg.c — routines and their control-flow graphs by recursive traversal.
 *
 * Routine starts come from function symbols, .eh_frame FDEs not covered by
 * a symbol, the entry point and direct call targets.  Each routine is
 * decoded from its start following direct control flow; calls end blocks
 * (the return address is a block start, which the recorder relies on), a
 * jump to another routine's start is a tail call, and calls to routines
 * that never return end their block.  Whether a routine returns is a
 * fixpoint: all routines are assumed to return, then rebuilt while the
 * set of non-returning ones grows (objtool's dead_end_function() reasons
 * the same way). */
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct cfg_ctx {
	program *p;
	addrmap starts;              /* routine start -> index in list */
	VEC(uint64_t) list;          /* routine starts, discovery order */
	uint8_t *noret;              /* per start: known not to return */
	size_t noret_cap;
	/* per start: found only as an FDE (no symbol, no call); such a start
	 * that only one routine jumps to is that routine's split-off cold
	 * part and is merged back into it (demoted) */
	VEC(uint8_t) soft;
	VEC(uint8_t) demoted;
	bool seeding_soft;
} cfg_ctx;

static const char *const noreturn_names[] = {
	"exit", "_exit", "_Exit", "abort", "__stack_chk_fail", "__assert_fail",
	"__assert_perror_fail", "__fortify_fail", "__chk_fail", "err", "errx",
	"verr", "verrx", "pthread_exit", "longjmp", "siglongjmp", "_longjmp",
	"__longjmp_chk", "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume",
	"__libc_start_main", "quick_exit", "__libc_fatal", "__cxa_bad_cast",
	"__cxa_call_unexpected", "_ZSt9terminatev", "__ubsan_handle_builtin_unreachable",
};

static bool name_noreturn(const char *name)
{
	if (!name)
		return false;
	for (size_t i = 0; i < sizeof noreturn_names / sizeof *noreturn_names; i++)
		if (!strcmp(name, noreturn_names[i]))
			return true;
	return false;
}

static bool in_plt(const binary *b, uint64_t a)
{
	const elf_section *s = elf_section_at(b, a);
	return s && !strncmp(s->name, ".plt", 4);
}

static bool is_code(const binary *b, uint64_t a)
{
	size_t avail;
	return elf_code_at(b, a, &avail) != NULL && !in_plt(b, a);
}

/* gcc's hot/cold splitting puts "f.cold" in its own symbol; it is part of
 * f, reached by jumps only. */
static bool is_cold_part(const char *name)
{
	return name && strstr(name, ".cold");
}

static bool is_start(const cfg_ctx *c, uint64_t a)
{
	uint32_t i;
	return addrmap_get(&c->starts, a, &i) && !c->demoted.a[i];
}

static void add_start(cfg_ctx *c, uint64_t a)
{
	uint32_t i;
	if (!is_code(&c->p->bin, a))
		return;
	if (addrmap_get(&c->starts, a, &i)) {
		if (!c->seeding_soft)
			c->soft.a[i] = 0; /* called, or a symbol: a routine for sure */
		return;
	}
	addrmap_put(&c->starts, a, (uint32_t)c->list.n);
	vec_push(c->list, a);
	vec_push(c->soft, (uint8_t)c->seeding_soft);
	vec_push(c->demoted, (uint8_t)0);
}

static bool target_noreturn(const cfg_ctx *c, uint64_t t)
{
	const binary *b = &c->p->bin;
	uint32_t i;
	if (name_noreturn(elf_plt_name(b, t)) || name_noreturn(elf_func_name(b, t)))
		return true;
	return addrmap_get(&c->starts, t, &i) && i < c->noret_cap && c->noret[i];
}

/* ------------------------------------------------------ jump tables */

/* Abstract values for the backward window of a jump table: a linear form
 * a*sym + c over one unknown, or c + load(base + a*sym). */
enum { AV_LIN, AV_LOAD };
typedef struct aval {
	int kind;
	int sym;            /* -1: none (a constant) */
	int64_t a, c;
	uint64_t base;      /* AV_LOAD: table address */
	uint8_t lsize;
	bool lsigned;
} aval;

typedef struct jt_state {
	aval reg[16];
	int nsym;
	int bound_sym;      /* index known to be < bound */
	int64_t bound;
	aval cmp_val;       /* last cmp reg, imm (or the address of cmp [m], imm) */
	int64_t cmp_imm;
	bool cmp_valid;
	bool cmp_mem;       /* the compare was on memory operand cmp_m */
	/* a compared memory operand and its base/index values at the compare;
	 * once bounded, later loads of the same operand get the bound symbol */
	mem_access cmp_m;
	aval cmp_base, cmp_index;
	mem_access mem_m;
	aval mem_base, mem_index;
	int mem_sym;
	/* cmp al, 0x49; ja default: only the low byte is bounded; a later
	 * movzx of that byte gets low_sym */
	uint8_t cmp_size, low_cmp_reg;
	int low_sym;
	uint8_t low_reg, low_size;
} jt_state;


static aval av_fresh(jt_state *s)
{
	return (aval){ .kind = AV_LIN, .sym = s->nsym++, .a = 1 };
}

static aval av_const(int64_t c)
{
	return (aval){ .kind = AV_LIN, .sym = -1, .c = c };
}

static bool av_eq(aval x, aval y)
{
	return x.kind == y.kind && x.sym == y.sym && x.a == y.a && x.c == y.c &&
	       x.base == y.base && x.lsize == y.lsize && x.lsigned == y.lsigned;
}

static aval reg_or_none(const jt_state *s, uint8_t r)
{
	return r < 16 ? s->reg[r] : av_const(0);
}

/* Same memory operand, with its registers still holding the same values. */
static bool same_operand(const jt_state *s, const mem_access *m)
{
	return m->base == s->mem_m.base && m->index == s->mem_m.index &&
	       m->scale == s->mem_m.scale && m->disp == s->mem_m.disp &&
	       m->seg == s->mem_m.seg && m->size == s->mem_m.size &&
	       av_eq(reg_or_none(s, m->base), s->mem_base) &&
	       av_eq(reg_or_none(s, m->index), s->mem_index);
}

/* x + k*y for linear forms sharing at most one unknown; ok=false else. */
static aval av_add(aval x, aval y, int64_t k, bool *ok)
{
	*ok = false;
	if (y.kind == AV_LOAD && x.kind == AV_LIN && x.sym < 0 && k == 1) {
		y.c += x.c;
		*ok = true;
		return y;
	}
	if (x.kind == AV_LOAD && y.kind == AV_LIN && y.sym < 0) {
		x.c += k * y.c;
		*ok = true;
		return x;
	}
	if (x.kind != AV_LIN || y.kind != AV_LIN)
		return x;
	if (x.sym >= 0 && y.sym >= 0 && x.sym != y.sym)
		return x;
	aval r = av_const(x.c + k * y.c);
	r.sym = x.sym >= 0 ? x.sym : y.sym;
	r.a = (x.sym >= 0 ? x.a : 0) + k * (y.sym >= 0 ? y.a : 0);
	if (r.a == 0)
		r.sym = -1;
	*ok = true;
	return r;
}

static aval jt_addr(jt_state *s, const mem_access *m, bool *ok)
{
	*ok = true;
	if (m->seg != SEG_NONE || m->addr32) {
		*ok = false;
		return av_const(0);
	}
	aval v = av_const(m->disp);
	if (m->base != R_NONE)
		v = av_add(v, s->reg[m->base], 1, ok);
	if (*ok && m->index != R_NONE)
		v = av_add(v, s->reg[m->index], m->scale, ok);
	return v;
}

static bool plausible_table(const binary *b, uint64_t a)
{
	const elf_section *sec = elf_section_at(b, a);
	return sec && sec->alloc && sec->data && !sec->exec;
}

static void jt_set(jt_state *s, const insn *in, int r, aval v)
{
	if (r == s->low_reg)
		s->low_sym = -1;
	/* a 1- or 2-byte write merges into an unknown upper part */
	if (in->wsize[r] < 4)
		v = av_fresh(s);
	s->reg[r] = v;
}

static void jt_clobber(jt_state *s, const insn *in, int skip)
{
	for (int r = 0; r < 16; r++)
		if (r != skip && (in->writes & REG_BIT(r))) {
			s->reg[r] = av_fresh(s);
			if (r == s->low_reg)
				s->low_sym = -1;
		}
	if (in->writes & REG_BIT(R_FLAGS))
		s->cmp_valid = false;
	for (unsigned k = 0; k < in->nmem; k++)
		if (in->mem[k].kind & ACC_W)
			s->mem_sym = -1;
}

static void jt_load(jt_state *s, const binary *b, const insn *in, int dst,
		    bool sign)
{
	bool ok;
	const mem_access *m = &in->mem[in->opd[1].mem];
	aval addr = jt_addr(s, m, &ok);
	if (s->mem_sym >= 0 && !sign && same_operand(s, m)) {
		jt_set(s, in, dst, (aval){ .kind = AV_LIN, .sym = s->mem_sym, .a = 1 });
		return;
	}
	if (!ok || addr.sym < 0 || !plausible_table(b, (uint64_t)addr.c)) {
		jt_set(s, in, dst, av_fresh(s));
		return;
	}
	aval v = { .kind = AV_LOAD, .sym = addr.sym, .a = addr.a,
		   .base = (uint64_t)addr.c, .lsize = (uint8_t)m->size,
		   .lsigned = sign && m->size < 8 };
	if (in->opd[0].size == 4 && m->size == 4)
		v.lsigned = false;
	s->reg[dst] = v;
}

/* An index bounded by `cmp x, imm; ja default` (we are on the fall-through
 * path) gets a symbol of its own, so later copies of it share the bound. */
static void jt_bound(jt_state *s, const insn *in)
{
	if (!s->cmp_valid || s->cmp_imm < 0)
		return;
	int64_t n;
	if (in->cond == CC_A)
		n = s->cmp_imm + 1;
	else if (in->cond == CC_AE)
		n = s->cmp_imm;
	else
		return;
	aval v = s->cmp_val;
	if (s->cmp_mem) {
		/* cmp byte [m], 9; ja default; movzx esi, byte [m] */
		s->mem_m = s->cmp_m;
		s->mem_base = s->cmp_base;
		s->mem_index = s->cmp_index;
		s->mem_sym = s->bound_sym = s->nsym++;
		s->bound = n;
		return;
	}
	if (s->cmp_size < 4) {
		s->low_sym = s->bound_sym = s->nsym++;
		s->low_reg = s->low_cmp_reg;
		s->low_size = s->cmp_size;
		s->bound = n;
		return;
	}
	if (v.kind != AV_LIN || v.sym < 0 || v.a != 1)
		return;
	int sym = s->nsym++;
	for (int r = 0; r < 16; r++) {
		aval *x = &s->reg[r];
		if (x->kind == AV_LIN && x->sym == v.sym && x->a == 1 && x->c == v.c)
			*x = (aval){ .kind = AV_LIN, .sym = sym, .a = 1 };
	}
	s->bound_sym = sym;
	s->bound = n;
}

static void jt_step(jt_state *s, const binary *b, const insn *in)
{
	const operand *d = &in->opd[0], *src = &in->opd[1];
	int dst = d->type == OPD_REG && !d->high8 ? d->reg : -1;
	bool ok = false;
	aval v;

	switch (in->op) {
	case OP_MOV:
	case OP_MOVZX:
	case OP_MOVSX:
		if (in->op == OP_MOVSX && in->nopd == 0 && s->reg[R_AX].kind == AV_LOAD &&
		    in->wsize[R_AX] == 8) {
			/* cdqe */
			s->reg[R_AX].lsigned = true;
			return;
		}
		if (dst < 0)
			break;
		if (src->type == OPD_IMM) {
			jt_set(s, in, dst, av_const(src->imm));
			return;
		}
		if (src->type == OPD_MEM) {
			jt_load(s, b, in, dst, in->op == OP_MOVSX);
			return;
		}
		if (in->op == OP_MOVZX && src->type == OPD_REG && !src->high8 &&
		    s->low_sym >= 0 && src->reg == s->low_reg && src->size == s->low_size) {
			jt_set(s, in, dst, (aval){ .kind = AV_LIN, .sym = s->low_sym, .a = 1 });
			return;
		}
		if (in->nopd == 2 && src->type == OPD_REG && !src->high8 && src->size >= 4) {
			v = s->reg[src->reg];
			if (in->op == OP_MOVSX && v.kind == AV_LOAD && v.lsize == 4)
				v.lsigned = true;
			jt_set(s, in, dst, v);
			return;
		}
		break;
	case OP_LEA:
		if (dst < 0)
			break;
		v = jt_addr(s, &in->mem[d->type == OPD_REG ? in->opd[1].mem : 0], &ok);
		if (ok) {
			jt_set(s, in, dst, v);
			return;
		}
		break;
	case OP_ADD:
	case OP_SUB:
		if (dst < 0)
			break;
		if (src->type == OPD_IMM)
			v = av_add(s->reg[dst], av_const(src->imm), in->op == OP_ADD ? 1 : -1, &ok);
		else if (src->type == OPD_REG)
			v = av_add(s->reg[dst], s->reg[src->reg], in->op == OP_ADD ? 1 : -1, &ok);
		if (ok) {
			s->cmp_valid = false;
			jt_set(s, in, dst, v);
			return;
		}
		break;
	case OP_SHL:
		if (dst >= 0 && src->type == OPD_IMM && s->reg[dst].kind == AV_LIN &&
		    src->imm >= 0 && src->imm < 8) {
			s->reg[dst].a <<= src->imm;
			s->reg[dst].c <<= src->imm;
			s->cmp_valid = false;
			return;
		}
		break;
	case OP_CMP:
		if (d->type == OPD_REG && !d->high8 && src->type == OPD_IMM) {
			s->cmp_val = s->reg[d->reg];
			s->cmp_imm = d->size < 8 ? (int64_t)((uint64_t)src->imm &
							      (~0ull >> (64 - 8 * d->size)))
						 : src->imm;
			s->cmp_valid = true;
			s->cmp_mem = false;
			s->cmp_size = d->size;
			s->low_cmp_reg = d->reg;
			return;
		}
		if (d->type == OPD_MEM && src->type == OPD_IMM) {
			const mem_access *m = &in->mem[d->mem];
			s->cmp_m = *m;
			s->cmp_base = reg_or_none(s, m->base);
			s->cmp_index = reg_or_none(s, m->index);
			s->cmp_imm = src->imm;
			s->cmp_valid = true;
			s->cmp_mem = true;
			return;
		}
		break;
	case OP_JCC:
		jt_bound(s, in);
		return;
	case OP_NOP:
		return;
	default:
		break;
	}
	jt_clobber(s, in, -1);
}

/* Resolves the jump table of the indirect jump `jmp` from the straight-line
 * window[0..n) of instructions before it (window[n-1] is the jump).  Fills
 * targets; returns their number, 0 when not a recognised bounded table. */
static size_t jt_resolve(const binary *b, const insn *const *window, size_t n,
			 uint64_t **targets)
{
	jt_state s = { .bound_sym = -1, .mem_sym = -1, .low_sym = -1, .low_reg = R_NONE };
	for (int r = 0; r < 16; r++)
		s.reg[r] = av_fresh(&s);
	for (size_t i = 0; i + 1 < n; i++)
		jt_step(&s, b, window[i]);

	const insn *j = window[n - 1];
	aval t;
	bool ok = false;
	if (j->opd[0].type == OPD_MEM) {
		aval addr = jt_addr(&s, &j->mem[j->opd[0].mem], &ok);
		if (!ok || addr.sym < 0)
			return 0;
		t = (aval){ .kind = AV_LOAD, .sym = addr.sym, .a = addr.a,
			    .base = (uint64_t)addr.c, .lsize = 8 };
	} else if (j->opd[0].type == OPD_REG) {
		t = s.reg[j->opd[0].reg];
	} else {
		return 0;
	}
	if (t.kind != AV_LOAD || t.sym != s.bound_sym || s.bound <= 0 ||
	    s.bound > 4096 || t.a != t.lsize || (t.lsize != 4 && t.lsize != 8))
		return 0;

	uint64_t *out = xmalloc((size_t)s.bound * sizeof *out);
	for (int64_t k = 0; k < s.bound; k++) {
		uint64_t e;
		if (elf_read(b, t.base + (uint64_t)(k * t.a), t.lsize, &e) < 0)
			goto bad;
		if (t.lsize == 4 && t.lsigned)
			e = (uint64_t)(int64_t)(int32_t)e;
		out[k] = e + (uint64_t)t.c;
		if (!is_code(b, out[k]))
			goto bad;
	}
	*targets = out;
	return (size_t)s.bound;
bad:
	free(out);
	return 0;
}

/* ------------------------------------------------- routine building */

typedef struct jtable {
	uint64_t at;        /* address of the indirect jump */
	uint64_t *t;
	size_t n;
} jtable;

typedef struct rbuild {
	cfg_ctx *c;
	routine *r;
	VEC(insn) insns;
	addrmap at, ends;   /* insn start / end address -> index */
	addrmap leaders;
	VEC(uint64_t) work;
	VEC(jtable) tables;
	VEC(uint64_t) callees;
} rbuild;

static void leader(rbuild *rb, uint64_t a)
{
	addrmap_put(&rb->leaders, a, 1);
	vec_push(rb->work, a);
}

/* A jump or fall-through to `t` leaves the routine when t is another
 * routine's start, a PLT stub, or not code. */
static bool leaves_routine(rbuild *rb, uint64_t t)
{
	const binary *b = &rb->c->p->bin;
	return (t != rb->r->start && is_start(rb->c, t)) || !is_code(b, t);
}

static void try_jump_table(rbuild *rb, uint32_t idx)
{
	enum { WINDOW = 24 };
	const insn *win[WINDOW];
	size_t n = 0;
	uint32_t i = idx, k;
	win[n++] = &rb->insns.a[idx];
	while (n < WINDOW && addrmap_get(&rb->ends, rb->insns.a[i].addr, &k)) {
		uint8_t f = rb->insns.a[k].flow;
		if (f != FLOW_NEXT && f != FLOW_CJUMP && f != FLOW_SYSCALL)
			break;
		win[n++] = &rb->insns.a[k];
		i = k;
	}
	for (size_t x = 0; x < n / 2; x++) {
		const insn *tmp = win[x];
		win[x] = win[n - 1 - x];
		win[n - 1 - x] = tmp;
	}
	uint64_t *t = NULL;
	size_t nt = jt_resolve(&rb->c->p->bin, win, n, &t);
	if (!nt)
		return;
	jtable jt = { rb->insns.a[idx].addr, t, nt };
	vec_push(rb->tables, jt);
	for (size_t x = 0; x < nt; x++)
		if (!leaves_routine(rb, t[x]))
			leader(rb, t[x]);
}

/* Decodes from `a` along fall-through until a control transfer. */
static void trace_from(rbuild *rb, uint64_t a)
{
	const binary *b = &rb->c->p->bin;
	uint32_t idx;
	for (;;) {
		if (addrmap_get(&rb->at, a, &idx))
			return;
		size_t avail;
		const uint8_t *code = elf_code_at(b, a, &avail);
		if (!code) {
			rb->r->partial = true;
			return;
		}
		insn in;
		if (decode_insn(code, avail, a, &in) < 0)
			rb->r->partial = true;
		idx = (uint32_t)rb->insns.n;
		vec_push(rb->insns, in);
		addrmap_put(&rb->at, a, idx);
		addrmap_put(&rb->ends, a + in.len, idx);
		uint64_t next = a + in.len;

		switch (in.flow) {
		case FLOW_NEXT:
		case FLOW_SYSCALL:
			if (leaves_routine(rb, next))
				return;
			a = next;
			continue;
		case FLOW_JUMP:
			if (!leaves_routine(rb, in.target))
				leader(rb, in.target);
			return;
		case FLOW_CJUMP:
			if (!leaves_routine(rb, in.target))
				leader(rb, in.target);
			if (!leaves_routine(rb, next))
				leader(rb, next);
			return;
		case FLOW_CALL:
			vec_push(rb->callees, in.target);
			if (!target_noreturn(rb->c, in.target) && !leaves_routine(rb, next))
				leader(rb, next);
			return;
		case FLOW_ICALL:
			if (!leaves_routine(rb, next))
				leader(rb, next);
			return;
		case FLOW_IJUMP:
			try_jump_table(rb, idx);
			return;
		default: /* ret, halt */
			return;
		}
	}
}

static int cmp_insn(const void *x, const void *y)
{
	const insn *a = x, *b = y;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

static bool ends_block(const insn *in)
{
	return in->flow != FLOW_NEXT && in->flow != FLOW_SYSCALL;
}

static const jtable *find_table(const rbuild *rb, uint64_t at)
{
	for (size_t i = 0; i < rb->tables.n; i++)
		if (rb->tables.a[i].at == at)
			return &rb->tables.a[i];
	return NULL;
}

static void add_succ(routine *r, uint32_t from, uint64_t to)
{
	int t = cfg_block_of(r, to);
	block *b = &r->blocks[from];
	if (t < 0 || r->blocks[t].start != to)
		return;
	for (uint32_t i = 0; i < b->nsucc; i++)
		if (b->succ[i] == (uint32_t)t)
			return;
	b->succ = xrealloc(b->succ, (b->nsucc + 1) * sizeof *b->succ);
	b->succ[b->nsucc++] = (uint32_t)t;
}

/* Splits the sorted instructions into blocks, entry block first. */
static void form_blocks(rbuild *rb)
{
	routine *r = rb->r;
	VEC(block) bl = {0};
	uint32_t dummy;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		const insn *in = &r->insns[i];
		bool start = i == 0 || addrmap_get(&rb->leaders, in->addr, &dummy) ||
			     ends_block(&r->insns[i - 1]) ||
			     r->insns[i - 1].addr + r->insns[i - 1].len != in->addr;
		if (start) {
			block b = { .start = in->addr, .first = i, .idom = -1, .loop = -1 };
			vec_push(bl, b);
		}
		block *b = &bl.a[bl.n - 1];
		b->ninsn++;
		b->end = in->addr + in->len;
	}
	/* entry first, the rest by address */
	for (size_t i = 0; i < bl.n; i++) {
		if (bl.a[i].start == r->start) {
			block e = bl.a[i];
			memmove(bl.a + 1, bl.a, i * sizeof *bl.a);
			bl.a[0] = e;
			break;
		}
	}
	r->blocks = bl.a;
	r->nblocks = (uint32_t)bl.n;
	if (r->nblocks)
		r->blocks[0].flags |= BLK_ENTRY;
}

static void link_block(rbuild *rb, uint32_t bi)
{
	routine *r = rb->r;
	block *b = &r->blocks[bi];
	const insn *last = &r->insns[b->first + b->ninsn - 1];
	uint64_t next = b->end;
	const jtable *jt;

	switch (last->flow) {
	case FLOW_NEXT:
	case FLOW_SYSCALL:
		if (leaves_routine(rb, next))
			b->flags |= BLK_TAILCALL, b->call_target = next;
		else
			add_succ(r, bi, next);
		break;
	case FLOW_JUMP:
		if (leaves_routine(rb, last->target))
			b->flags |= BLK_TAILCALL, b->call_target = last->target;
		else
			add_succ(r, bi, last->target);
		break;
	case FLOW_CJUMP:
		if (leaves_routine(rb, last->target))
			b->flags |= BLK_TAILCALL, b->call_target = last->target;
		else
			add_succ(r, bi, last->target);
		if (!leaves_routine(rb, next))
			add_succ(r, bi, next);
		break;
	case FLOW_CALL:
	case FLOW_ICALL:
		b->call_target = last->flow == FLOW_CALL ? last->target : 0;
		if (last->flow == FLOW_CALL && target_noreturn(rb->c, last->target)) {
			b->flags |= BLK_NORETURN;
		} else {
			b->flags |= BLK_CALL;
			if (!leaves_routine(rb, next))
				add_succ(r, bi, next);
		}
		break;
	case FLOW_IJUMP:
		jt = find_table(rb, last->addr);
		if (!jt) {
			b->flags |= BLK_IJUMP;
			r->partial = true;
			break;
		}
		b->flags |= BLK_JUMPTABLE;
		for (size_t k = 0; k < jt->n; k++)
			add_succ(r, bi, jt->t[k]);
		break;
	case FLOW_RET:
		b->flags |= BLK_RET;
		break;
	default:
		b->flags |= BLK_HALT;
		break;
	}
}

static void link_preds(routine *r)
{
	for (uint32_t i = 0; i < r->nblocks; i++)
		for (uint32_t k = 0; k < r->blocks[i].nsucc; k++) {
			block *s = &r->blocks[r->blocks[i].succ[k]];
			s->pred = xrealloc(s->pred, (s->npred + 1) * sizeof *s->pred);
			s->pred[s->npred++] = i;
		}
}

static void set_callees(rbuild *rb)
{
	routine *r = rb->r;
	if (rb->callees.n)
		qsort(rb->callees.a, rb->callees.n, sizeof *rb->callees.a, cmp_u64);
	r->callees = xmalloc((rb->callees.n ? rb->callees.n : 1) * sizeof *r->callees);
	for (size_t i = 0; i < rb->callees.n; i++)
		if (!r->ncallees || r->callees[r->ncallees - 1] != rb->callees.a[i])
			r->callees[r->ncallees++] = rb->callees.a[i];
}

static void routine_clear(routine *r)
{
	for (uint32_t i = 0; i < r->nblocks; i++) {
		free(r->blocks[i].succ);
		free(r->blocks[i].pred);
	}
	for (uint32_t i = 0; i < r->nloops; i++) {
		loop *l = &r->loops[i];
		free(l->blocks);
		free(l->entries);
		free(l->exit_from);
		free(l->exit_to);
	}
	free(r->blocks);
	free(r->loops);
	free(r->insns);
	free(r->callees);
	free(r->name);
	memset(r, 0, sizeof *r);
}

static char *routine_name(const binary *b, uint64_t start)
{
	const char *n = elf_func_name(b, start);
	char buf[32];
	if (n)
		return xstrdup(n);
	snprintf(buf, sizeof buf, "sub_%llx", (unsigned long long)start);
	return xstrdup(buf);
}

static void build_routine(cfg_ctx *c, routine *r, uint64_t start)
{
	rbuild rb = { .c = c, .r = r };
	r->name = routine_name(&c->p->bin, start);
	r->start = start;
	leader(&rb, start);
	while (rb.work.n)
		trace_from(&rb, rb.work.a[--rb.work.n]);

	if (rb.insns.n)
		qsort(rb.insns.a, rb.insns.n, sizeof *rb.insns.a, cmp_insn);
	r->insns = rb.insns.a;
	r->ninsn = (uint32_t)rb.insns.n;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		if (r->insns[i].nmem)
			r->nmem++;
		/* overlapping instructions: a jump into the middle of another */
		if (i && r->insns[i - 1].addr + r->insns[i - 1].len > r->insns[i].addr)
			r->partial = true;
	}
	form_blocks(&rb);
	for (uint32_t i = 0; i < r->nblocks; i++)
		link_block(&rb, i);
	link_preds(r);
	set_callees(&rb);

	for (size_t i = 0; i < rb.tables.n; i++)
		free(rb.tables.a[i].t);
	free(rb.tables.a);
	free(rb.work.a);
	free(rb.callees.a);
	addrmap_free(&rb.at);
	addrmap_free(&rb.ends);
	addrmap_free(&rb.leaders);
}

/* A routine returns if some path reaches a ret, a tail call to a routine
 * that may return, or an indirect jump we could not follow. */
static bool routine_returns(const cfg_ctx *c, const routine *r)
{
	for (uint32_t i = 0; i < r->nblocks; i++) {
		const block *b = &r->blocks[i];
		if (b->flags & (BLK_RET | BLK_IJUMP))
			return true;
		if ((b->flags & BLK_TAILCALL) && !target_noreturn(c, b->call_target))
			return true;
	}
	return r->nblocks == 0;
}

static void seed_starts(cfg_ctx *c)
{
	const binary *b = &c->p->bin;
	for (size_t i = 0; i < b->nfuncs; i++)
		if (!is_cold_part(b->funcs[i].name))
			add_start(c, b->funcs[i].addr);
	/* FDEs not inside a symbol: routines of a stripped binary */
	c->seeding_soft = true;
	for (size_t i = 0; i < b->nfdes; i++) {
		uint64_t a = b->fde_starts[i];
		bool covered = false;
		for (size_t k = 0; k < b->nfuncs && !covered; k++) {
			const elf_symbol *s = &b->funcs[k];
			covered = a >= s->addr && a < s->addr + (s->size ? s->size : 1);
		}
		if (!covered)
			add_start(c, a);
	}
	c->seeding_soft = false;
	add_start(c, b->entry);
	for (size_t i = 0; i < b->ninit_funcs; i++)
		add_start(c, b->init_funcs[i]);
}

/* A soft start (an FDE only) that no one calls and exactly one routine
 * jumps to is that routine's cold part (gcc's hot/cold splitting, which
 * jumps back into its parent): it is merged into the parent.  Returns
 * whether anything was demoted. */
static bool demote_cold_parts(cfg_ctx *c, routine *rs, size_t nr)
{
	bool any = false;
	for (size_t s = 0; s < c->list.n; s++) {
		if (!c->soft.a[s] || c->demoted.a[s] || c->list.a[s] == c->p->bin.entry)
			continue;
		uint64_t a = c->list.a[s];
		size_t jumpers = 0;
		bool called = false;
		for (size_t i = 0; i < nr && !called; i++) {
			const routine *r = &rs[i];
			bool jumps = false;
			for (uint32_t k = 0; k < r->ncallees; k++)
				called |= r->callees[k] == a;
			for (uint32_t b = 0; b < r->nblocks; b++)
				jumps |= (r->blocks[b].flags & BLK_TAILCALL) && r->blocks[b].call_target == a;
			jumpers += jumps;
		}
		if (!called && jumpers == 1) {
			c->demoted.a[s] = 1;
			any = true;
		}
	}
	return any;
}

static int cmp_routine(const void *x, const void *y)
{
	const routine *a = x, *b = y;
	return (a->start > b->start) - (a->start < b->start);
}

void cfg_build(program *p)
{
	cfg_ctx c = { .p = p };
	seed_starts(&c);
	routine *rs = NULL;
	size_t nr = 0;
	bool changed = true;
	for (int round = 0; changed && round < 16; round++) {
		changed = false;
		for (size_t i = 0; i < nr; i++)
			routine_clear(&rs[i]);
		/* call targets found while building become routines too */
		for (size_t i = 0; i < c.list.n; i++) {
			if (i >= nr) {
				rs = xrealloc(rs, (i + 1) * sizeof *rs);
				memset(&rs[i], 0, sizeof *rs);
				nr = i + 1;
			}
			if (!c.demoted.a[i])
				build_routine(&c, &rs[i], c.list.a[i]);
			for (uint32_t k = 0; k < rs[i].ncallees; k++)
				add_start(&c, rs[i].callees[k]);
		}
		changed |= demote_cold_parts(&c, rs, nr);
		if (c.noret_cap < c.list.n) {
			c.noret = xrealloc(c.noret, c.list.n);
			memset(c.noret + c.noret_cap, 0, c.list.n - c.noret_cap);
			c.noret_cap = c.list.n;
			changed = true;
		}
		for (size_t i = 0; i < nr; i++) {
			bool nor = !routine_returns(&c, &rs[i]);
			if (nor != c.noret[i])
				changed = true;
			c.noret[i] = nor;
		}
		if (nr != c.list.n)
			changed = true;
	}
	size_t kept = 0;
	for (size_t i = 0; i < nr; i++) {
		rs[i].noreturn = c.noret[i];
		if (c.demoted.a[i])
			routine_clear(&rs[i]);
		else
			rs[kept++] = rs[i];
	}
	nr = kept;
	if (nr)
		qsort(rs, nr, sizeof *rs, cmp_routine);
	p->routines = rs;
	p->nroutines = (uint32_t)nr;
	free(c.list.a);
	free(c.noret);
	free(c.soft.a);
	free(c.demoted.a);
	addrmap_free(&c.starts);
}

/* The block with the last start at or before addr: blocks split the sorted
 * instructions into runs, so that is the block of any instruction address
 * even when a jump into the middle of an instruction made blocks overlap
 * (their ends are then not sorted). */
int cfg_block_of(const routine *r, uint64_t addr)
{
	if (!r->nblocks)
		return -1;
	uint32_t lo = 1, hi = r->nblocks;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r->blocks[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	int b = lo > 1 ? (int)lo - 1 : -1;
	if (r->blocks[0].start <= addr && (b < 0 || r->blocks[0].start > r->blocks[b].start))
		b = 0;
	return b >= 0 && addr < r->blocks[b].end ? b : -1;
}

void cfg_routine_free(routine *r)
{
	routine_clear(r);
}
