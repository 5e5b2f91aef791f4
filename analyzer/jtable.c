/* jtable.c — jump tables, resolved from the definitions that reach the
 * indirect jump.
 *
 * Two passes.  regconst_solve() is a forward constant propagation over the
 * routine's instructions decoded so far (Kildall's lattice: undefined,
 * constant, varying), through calls under the SysV ABI (callee-saved
 * registers keep their value, caller-saved ones become varying) and around
 * loops; it finds table bases that a `lea` set long before the jump, in a
 * callee-saved register, before a loop.  jt_resolve() then interprets the
 * straight-line window that ends at the jump symbolically, starting from
 * those constants: the target must be load(base + k*index) (+ constant),
 * with the index bounded by a `cmp; ja` in the window (directly, after
 * lea/sub/and/movzx copies, or through a first-level byte table).
 *
 * A wrong guess cannot make a wrong trace: the skeleton still reads the
 * recorded target of every indirect jump and stops on one it does not know. */
#include "analyzer/jtable.h"
#include "analyzer/util.h"

#include <string.h>

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
	/* 8-byte stack slots [rsp + disp] stored in the window (a table's
	 * entry spilled and loaded back: perl's code around setjmp) */
	int nslot;
	int64_t slot_disp[8];
	aval slot[8];
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
	/* a store may change the bounded operand, unless it is a stack slot
	 * and the operand a global (push between the compare and the load) */
	bool global = s->mem_m.base == R_NONE && s->mem_m.index == R_NONE;
	for (unsigned k = 0; k < in->nmem; k++)
		if ((in->mem[k].kind & ACC_W) && !(global && in->mem[k].base == R_SP))
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
	if (!sign && m->size <= 2 && addr.sym == s->bound_sym && addr.a == m->size &&
	    s->bound > 0 && s->bound <= 4096) {
		/* two-level table: movzx eax, byte [tab1 + idx]; the loaded case
		 * number is bounded by tab1's largest entry */
		uint64_t e, max = 0;
		for (int64_t k = 0; k < s->bound; k++) {
			if (elf_read(b, (uint64_t)addr.c + (uint64_t)(k * addr.a), m->size, &e) < 0) {
				jt_set(s, in, dst, av_fresh(s));
				return;
			}
			max = e > max ? e : max;
		}
		s->bound_sym = s->nsym++;
		s->bound = (int64_t)max + 1;
		jt_set(s, in, dst, (aval){ .kind = AV_LIN, .sym = s->bound_sym, .a = 1 });
		return;
	}
	if (!sign && m->size == 1) {
		/* a byte from a table whose index is not bounded here: an
		 * unknown index in 0..255 for a second table (jt_unbounded) */
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
 * path; or `jbe L`, taken) gets a symbol of its own, so later copies of it
 * share the bound. */
static void jt_bound(jt_state *s, const insn *in, bool taken)
{
	if (!s->cmp_valid || s->cmp_imm < 0 || in->cond >= 16)
		return;
	/* the conditions pair up, each beside its negation */
	uint8_t cond = taken ? in->cond ^ 1 : in->cond;
	int64_t n;
	if (cond == CC_A)
		n = s->cmp_imm + 1;
	else if (cond == CC_AE)
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
	int sym = s->nsym++;
	if (s->cmp_size < 4) {
		s->low_sym = s->bound_sym = sym;
		s->low_reg = s->low_cmp_reg;
		s->low_size = s->cmp_size;
		s->bound = n;
		/* `cmp ax, 14; ja` then rax as the index: the compiler knows the
		 * upper bits are clear (a movzx we may not see); if they were
		 * not, the recorded target is not among ours and replay stops */
		if (v.kind != AV_LIN || v.sym < 0 || v.a != 1)
			return;
		s->reg[s->low_cmp_reg] = (aval){ .kind = AV_LIN, .sym = sym, .a = 1 };
		return;
	}
	if (v.kind == AV_LOAD) {
		/* a case number loaded from a first table and rebased
		 * (sqlite3Parser: movzx eax, word [tab1 + rax*2]; lea r12d,
		 * [rax-0x4df]; cmp eax, 0x155; ja): the value itself is the
		 * bounded index, whatever the first table's index was */
		int any = 0;
		for (int r = 0; r < 16; r++)
			if (av_eq(s->reg[r], v)) {
				s->reg[r] = (aval){ .kind = AV_LIN, .sym = sym, .a = 1 };
				any = 1;
			}
		if (any) {
			s->bound_sym = sym;
			s->bound = n;
		}
		return;
	}
	if (v.kind != AV_LIN || v.sym < 0 || v.a != 1)
		return;
	for (int r = 0; r < 16; r++) {
		aval *x = &s->reg[r];
		if (x->kind == AV_LIN && x->sym == v.sym && x->a == 1 && x->c == v.c)
			*x = (aval){ .kind = AV_LIN, .sym = sym, .a = 1 };
	}
	s->bound_sym = sym;
	s->bound = n;
}

static bool stack_slot(const mem_access *m)
{
	return m->base == R_SP && m->index == R_NONE && m->seg == SEG_NONE && !m->addr32;
}

/* Forgets the slots a write may change: those it overlaps on the stack,
 * all of them when rsp moves or the write goes through another pointer. */
static void slots_write(jt_state *s, const insn *in)
{
	if (in->writes & REG_BIT(R_SP)) {
		s->nslot = 0;
		return;
	}
	for (unsigned k = 0; k < in->nmem; k++) {
		const mem_access *m = &in->mem[k];
		if (!(m->kind & ACC_W))
			continue;
		if (!stack_slot(m)) {
			s->nslot = 0;
			return;
		}
		int kept = 0;
		for (int x = 0; x < s->nslot; x++)
			if (s->slot_disp[x] + 8 <= m->disp || m->disp + m->size <= s->slot_disp[x]) {
				s->slot_disp[kept] = s->slot_disp[x];
				s->slot[kept++] = s->slot[x];
			}
		s->nslot = kept;
	}
}

static void jt_step(jt_state *s, const binary *b, const insn *in, bool taken)
{
	if (in->op == OP_MOV && in->nopd == 2 && in->opd[0].size == 8) {
		const operand *o0 = &in->opd[0], *o1 = &in->opd[1];
		if (o0->type == OPD_MEM && o1->type == OPD_REG && !o1->high8 &&
		    stack_slot(&in->mem[o0->mem])) {
			aval v = s->reg[o1->reg];
			slots_write(s, in);
			if (s->nslot < 8) {
				s->slot_disp[s->nslot] = in->mem[o0->mem].disp;
				s->slot[s->nslot++] = v;
			}
			return;
		}
		if (o0->type == OPD_REG && !o0->high8 && o1->type == OPD_MEM &&
		    stack_slot(&in->mem[o1->mem]))
			for (int x = 0; x < s->nslot; x++)
				if (s->slot_disp[x] == in->mem[o1->mem].disp) {
					jt_set(s, in, o0->reg, s->slot[x]);
					return;
				}
	}
	slots_write(s, in);

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
		jt_bound(s, in, taken);
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
/* Interprets the window; false when the jump's target has no form. */
static bool jt_target(const binary *b, const insn *const *window, const bool *taken,
		      size_t n, const regconst *at_start, bool use_hints, jt_state *out,
		      aval *tout)
{
	jt_state s = { .bound_sym = -1, .mem_sym = -1, .low_sym = -1, .low_reg = R_NONE };
	for (int r = 0; r < 16; r++) {
		if (at_start && at_start->k[r] == RC_CONST)
			s.reg[r] = av_const((int64_t)at_start->v[r]);
		else if (at_start && use_hints && at_start->has_hint[r])
			s.reg[r] = av_const((int64_t)at_start->hint[r]);
		else
			s.reg[r] = av_fresh(&s);
	}
	for (size_t i = 0; i + 1 < n; i++)
		jt_step(&s, b, window[i], taken && taken[i]);

	const insn *j = window[n - 1];
	aval t;
	bool ok = false;
	if (j->opd[0].type == OPD_MEM) {
		aval addr = jt_addr(&s, &j->mem[j->opd[0].mem], &ok);
		if (!ok || addr.sym < 0)
			return false;
		t = (aval){ .kind = AV_LOAD, .sym = addr.sym, .a = addr.a,
			    .base = (uint64_t)addr.c, .lsize = 8 };
	} else if (j->opd[0].type == OPD_REG) {
		t = s.reg[j->opd[0].reg];
	} else {
		return false;
	}
	*out = s;
	*tout = t;
	return true;
}

/* Entry k of table t as a target. */
static bool jt_entry(const binary *b, const aval *t, int64_t k, uint64_t *target)
{
	uint64_t e;
	if (elf_read(b, t->base + (uint64_t)(k * t->a), t->lsize, &e) < 0)
		return false;
	if (t->lsize == 4 && t->lsigned)
		e = (uint64_t)(int64_t)(int32_t)e;
	*target = e + (uint64_t)t->c;
	return true;
}

size_t jt_unbounded(const binary *b, const insn *const *window, const bool *taken,
		    size_t n, const regconst *at_start, uint64_t lo, uint64_t hi,
		    uint64_t **targets)
{
	jt_state s;
	aval t;
	if (!jt_target(b, window, taken, n, at_start, false, &s, &t) || t.kind != AV_LOAD ||
	    t.a != t.lsize || (t.lsize != 4 && t.lsize != 8) || !plausible_table(b, t.base))
		return 0;
	VEC(uint64_t) v = {0};
	uint64_t a;
	for (int64_t k = 0; k < 1024 && jt_entry(b, &t, k, &a) && a >= lo && a < hi &&
	     cfg_is_code(b, a); k++)
		vec_push(v, a);
	*targets = v.a;
	return v.n;
}

size_t jt_resolve(const binary *b, const insn *const *window, const bool *taken,
		  size_t n, const regconst *at_start, bool use_hints, uint64_t **targets,
		  jt_shape *shape)
{
	jt_state s;
	aval t;
	if (!jt_target(b, window, taken, n, at_start, use_hints, &s, &t))
		return 0;
	if (t.kind != AV_LOAD || t.sym != s.bound_sym || s.bound <= 0 ||
	    s.bound > 4096 || t.a != t.lsize || (t.lsize != 4 && t.lsize != 8))
		return 0;

	uint64_t *out = xmalloc((size_t)s.bound * sizeof *out);
	for (int64_t k = 0; k < s.bound; k++)
		if (!jt_entry(b, &t, k, &out[k]) || !cfg_is_code(b, out[k]))
			goto bad;
	*targets = out;
	if (shape)
		*shape = (jt_shape){ t.base, t.a, t.c, (uint32_t)s.bound, t.lsize, t.lsigned };
	return (size_t)s.bound;
bad:
	free(out);
	return 0;
}

/* ------------------------------------------- constant propagation */

static void rc_set(regconst *s, int r, uint8_t k, uint64_t v)
{
	s->k[r] = k;
	s->v[r] = k == RC_CONST ? v : 0;
	s->has_hint[r] = 0;
	s->hint[r] = 0;
}

static bool rc_const(const regconst *s, uint8_t r, uint64_t *v)
{
	if (r == R_NONE) {
		*v = 0;
		return true;
	}
	if (r >= 16 || s->k[r] != RC_CONST)
		return false;
	*v = s->v[r];
	return true;
}

/* The value of GPR dst after `in` when `in` computes a constant. */
static bool rc_eval(const regconst *s, const insn *in, int dst, uint64_t *out)
{
	const operand *d = &in->opd[0], *src = &in->opd[1];
	uint64_t x, y;
	if (d->type != OPD_REG || d->high8 || d->reg != dst || in->nopd < 2)
		return false;
	switch (in->op) {
	case OP_MOV:
		if (src->type == OPD_IMM)
			*out = (uint64_t)src->imm;
		else if (src->type == OPD_REG && !src->high8 && rc_const(s, src->reg, &x))
			*out = x;
		else
			return false;
		return true;
	case OP_LEA: {
		const mem_access *m = &in->mem[src->mem];
		if (m->seg != SEG_NONE)
			return false;
		if (m->flags & MEM_RIPREL) {
			*out = (uint64_t)m->disp;
			return true;
		}
		if (!rc_const(s, m->base, &x) || !rc_const(s, m->index, &y))
			return false;
		*out = x + y * m->scale + (uint64_t)m->disp;
		return true;
	}
	case OP_ADD:
	case OP_SUB:
		if (!rc_const(s, d->reg, &x))
			return false;
		if (src->type == OPD_IMM)
			y = (uint64_t)src->imm;
		else if (!(src->type == OPD_REG && !src->high8 && rc_const(s, src->reg, &y)))
			return false;
		*out = in->op == OP_ADD ? x + y : x - y;
		return true;
	case OP_XOR:
		if (src->type == OPD_REG && src->reg == d->reg && !src->high8) {
			*out = 0;
			return true;
		}
		return false;
	default:
		return false;
	}
}

static void rc_step(regconst *s, const insn *in)
{
	if (in->flow == FLOW_CALL || in->flow == FLOW_ICALL) {
		/* SysV: the callee may change the caller-saved registers */
		static const uint8_t clobbered[] = { R_AX, R_CX, R_DX, R_SI, R_DI,
						     R_8, R_9, R_10, R_11 };
		/* ... but gcc's interprocedural register allocation lets a
		 * value live across a call to a local function in a
		 * caller-saved register: kept as a hint */
		for (size_t i = 0; i < sizeof clobbered; i++) {
			int r = clobbered[i];
			bool h = s->k[r] == RC_CONST || s->has_hint[r];
			uint64_t v = s->k[r] == RC_CONST ? s->v[r] : s->hint[r];
			rc_set(s, r, RC_VARYING, 0);
			if (h && in->flow == FLOW_CALL && r != R_AX) {
				s->has_hint[r] = 1;
				s->hint[r] = v;
			}
		}
		return;
	}
	for (int r = 0; r < 16; r++) {
		if (!(in->writes & REG_BIT(r)))
			continue;
		uint64_t v;
		if (in->wsize[r] >= 4 && rc_eval(s, in, r, &v))
			rc_set(s, r, RC_CONST, in->wsize[r] == 4 ? (uint32_t)v : v);
		else
			rc_set(s, r, RC_VARYING, 0);
	}
}

/* Joins `from` into `into`; returns whether `into` changed.  A hint, once
 * set, stays (so the iteration ends). */
static bool rc_join(regconst *into, const regconst *from)
{
	bool changed = false;
	for (int r = 0; r < 16; r++) {
		uint8_t k = into->k[r];
		bool fh = from->k[r] == RC_CONST || from->has_hint[r];
		uint64_t fv = from->k[r] == RC_CONST ? from->v[r] : from->hint[r];
		if (from->k[r] == RC_UNDEF)
			continue;
		if (k == RC_UNDEF) {
			into->k[r] = from->k[r];
			into->v[r] = from->v[r];
			into->has_hint[r] = from->has_hint[r];
			into->hint[r] = from->hint[r];
			changed = true;
		} else if (k == RC_CONST && (from->k[r] == RC_VARYING || from->v[r] != into->v[r])) {
			into->k[r] = RC_VARYING;
			into->has_hint[r] = 1;
			into->hint[r] = into->v[r];
			into->v[r] = 0;
			changed = true;
		} else if (k == RC_VARYING && !into->has_hint[r] && fh) {
			into->has_hint[r] = 1;
			into->hint[r] = fv;
			changed = true;
		}
	}
	return changed;
}

/* Successor addresses of an instruction inside the routine. */
static size_t rc_succs(const jt_code *c, const insn *in, uint64_t *out, size_t max,
		       const uint64_t **table)
{
	uint64_t next = in->addr + in->len;
	*table = NULL;
	switch (in->flow) {
	case FLOW_NEXT:
	case FLOW_SYSCALL:
	case FLOW_CALL:
	case FLOW_ICALL:
		out[0] = next;
		return 1;
	case FLOW_JUMP:
		out[0] = in->target;
		return 1;
	case FLOW_CJUMP:
		out[0] = in->target;
		out[1] = next;
		return max >= 2 ? 2 : 1;
	case FLOW_IJUMP:
		return c->table_of(c->ctx, in->addr, table);
	default:
		return 0;
	}
}

regconst *regconst_solve(const jt_code *c)
{
	regconst *st = xcalloc(c->n ? c->n : 1, sizeof *st);
	uint8_t *queued = xcalloc(c->n ? c->n : 1, 1);
	VEC(uint32_t) work = {0};
	int e = c->index_of(c->ctx, c->start);
	if (e < 0)
		goto done;
	for (int r = 0; r < 16; r++)
		rc_set(&st[e], r, RC_VARYING, 0);
	vec_push(work, (uint32_t)e);
	queued[e] = 1;
	while (work.n) {
		uint32_t i = work.a[--work.n];
		queued[i] = 0;
		regconst out = st[i];
		rc_step(&out, &c->insns[i]);
		uint64_t succ[2];
		const uint64_t *table;
		size_t ns = rc_succs(c, &c->insns[i], succ, 2, &table);
		for (size_t k = 0; k < ns; k++) {
			int s = c->index_of(c->ctx, table ? table[k] : succ[k]);
			if (s >= 0 && rc_join(&st[s], &out) && !queued[s]) {
				queued[s] = 1;
				vec_push(work, (uint32_t)s);
			}
		}
	}
done:
	free(work.a);
	free(queued);
	return st;
}
