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
#include "analyzer/jtable.h"
#include "analyzer/util.h"
#include "replay/format.h"

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
	uint64_t replaced;           /* SKEL_REPLACED_ROUTINE's start, or 0 */
	/* possible entries (program.entries) and, among them, the code
	 * addresses taken as values */
	addrmap entries, taken;
	VEC(uint64_t) entry_list, taken_list;
	addrmap pads;                /* C++ landing pads (bin.lp_pads) */
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
	/* libstdc++'s std::__throw_logic_error and its kin: _ZSt<len>__throw_ */
	if (!strncmp(name, "_ZSt", 4)) {
		const char *q = name + 4;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q > name + 4 && !strncmp(q, "__throw_", 8))
			return true;
	}
	for (size_t i = 0; i < sizeof noreturn_names / sizeof *noreturn_names; i++)
		if (!strcmp(name, noreturn_names[i]))
			return true;
	return false;
}

/* Functions that return twice: a longjmp comes back to their return
 * address, which is therefore a routine start (the skeleton restarts the
 * code there, skel_rt.h: SK_SETJMP). */
static const char *const setjmp_names[] = {
	"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp",
};

static bool target_setjmp(const binary *b, uint64_t t)
{
	const char *names[2] = { elf_plt_name(b, t), elf_func_name(b, t) };
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; names[k] && i < sizeof setjmp_names / sizeof *setjmp_names; i++)
			if (!strcmp(names[k], setjmp_names[i]))
				return true;
	return false;
}

static bool in_plt(const binary *b, uint64_t a)
{
	const elf_section *s = elf_section_at(b, a);
	return s && !strncmp(s->name, ".plt", 4);
}

bool cfg_is_code(const binary *b, uint64_t a)
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
	if (!cfg_is_code(&c->p->bin, a))
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

/* A call whose return address is a landing pad does not return: gcc
 * puts a pad right after a call to a function that throws (whose name
 * the list above may not know); the code there is entered by the
 * unwinder, as the pad's routine, never by the call's return. */
static bool call_noreturn(const cfg_ctx *c, const insn *in)
{
	uint32_t i;
	if (addrmap_get(&c->pads, in->addr + in->len, &i))
		return true;
	return in->flow == FLOW_CALL && target_noreturn(c, in->target);
}

/* ------------------------------------------------- routine building */

typedef struct jtable {
	uint64_t at;        /* address of the indirect jump */
	uint64_t *t;
	size_t n;
	bool guess;         /* unresolved: the targets it may have in the routine */
	uint64_t via;       /* resolved through the sole branch into this
			       address (sole_branch_into), else 0 */
	jt_shape shape;     /* resolved: how the jump reads it */
} jtable;

typedef struct rbuild {
	cfg_ctx *c;
	routine *r;
	VEC(insn) insns;
	addrmap at, ends;   /* insn start / end address -> index */
	addrmap leaders;
	VEC(uint64_t) work;
	VEC(jtable) tables;
	VEC(uint32_t) pending;  /* indirect jumps not resolved yet */
	VEC(uint64_t) callees;
	VEC(uint64_t) guess_at, guess_to;   /* unbounded tables' entries */
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
	return (t != rb->r->start && is_start(rb->c, t)) || !cfg_is_code(b, t);
}

/* Tries to resolve the indirect jump at insns[idx]; `rc` (NULL on the
 * first try) gives the registers known before each instruction. */
enum { WINDOW = 24 };

static bool falls_through(const insn *in)
{
	return in->flow == FLOW_NEXT || in->flow == FLOW_CJUMP || in->flow == FLOW_SYSCALL ||
	       in->flow == FLOW_CALL || in->flow == FLOW_ICALL;
}

/* The one jump into `a` when it is the only way in: no instruction falls
 * through to it, it is not the routine's entry, a table's target, a
 * target seen at run time or an address the program takes as a value,
 * and exactly one decoded jump goes there.  Its index, or -1. */
static int sole_branch_into(const rbuild *rb, uint64_t a)
{
	const program *p = rb->c->p;
	uint32_t k;
	if (a == rb->r->start || addrmap_get(&rb->c->taken, a, &k) ||
	    (addrmap_get(&rb->ends, a, &k) && falls_through(&rb->insns.a[k])))
		return -1;
	for (size_t i = 0; i < rb->tables.n; i++)
		for (size_t x = 0; x < rb->tables.a[i].n; x++)
			if (rb->tables.a[i].t[x] == a)
				return -1;
	for (uint32_t i = 0; i < p->nhints; i++)
		if (p->hints[i].to == a)
			return -1;
	int found = -1;
	for (size_t i = 0; i < rb->insns.n; i++) {
		const insn *in = &rb->insns.a[i];
		if ((in->flow == FLOW_JUMP || in->flow == FLOW_CJUMP) && in->target == a) {
			if (found >= 0)
				return -1;
			found = (int)i;
		}
	}
	return found;
}

/* The straight-line window ending at the jump insns[idx], in order; with
 * `via`, it goes on through one jump that is the only way into the code
 * before it (`cmp ecx, 7; jbe L` and the table's jump after L: the bound
 * is on the taken path), taken[] saying which conditional jumps the path
 * takes and *via the address so entered (else 0). */
static size_t jump_window(rbuild *rb, uint32_t idx, const insn *win[WINDOW],
			  uint32_t widx[WINDOW], bool taken[WINDOW], uint64_t *via)
{
	size_t n = 0;
	uint32_t i = idx, k;
	bool cross = via != NULL;
	if (via)
		*via = 0;
	taken[n] = false;
	widx[n] = idx;
	win[n++] = &rb->insns.a[idx];
	while (n < WINDOW) {
		uint64_t a = rb->insns.a[i].addr;
		int j;
		uint8_t f = addrmap_get(&rb->ends, a, &k) ? rb->insns.a[k].flow : FLOW_JUMP;
		if (f == FLOW_NEXT || f == FLOW_CJUMP || f == FLOW_SYSCALL) {
			taken[n] = false;
		} else if (cross && (j = sole_branch_into(rb, a)) >= 0 &&
			   rb->insns.a[j].flow == FLOW_CJUMP &&
			   rb->insns.a[j].addr + rb->insns.a[j].len != a) {
			cross = false;
			*via = a;
			k = (uint32_t)j;
			taken[n] = true;
		} else {
			break;
		}
		widx[n] = k;
		win[n++] = &rb->insns.a[k];
		i = k;
	}
	for (size_t x = 0; x < n / 2; x++) {
		const insn *tmp = win[x];
		win[x] = win[n - 1 - x];
		win[n - 1 - x] = tmp;
		uint32_t w = widx[x];
		widx[x] = widx[n - 1 - x];
		widx[n - 1 - x] = w;
		bool t = taken[x];
		taken[x] = taken[n - 1 - x];
		taken[n - 1 - x] = t;
	}
	return n;
}

/* `rc` NULL: the first try, while the routine is being decoded: the
 * window stays in straight-line code (other ways in may not be decoded
 * yet); later ones may cross a jump (jump_window). */
static bool try_jump_table(rbuild *rb, uint32_t idx, const regconst *rc, bool hints)
{
	const insn *win[WINDOW];
	uint32_t widx[WINDOW];
	bool taken[WINDOW];
	uint64_t via = 0;
	size_t n = jump_window(rb, idx, win, widx, taken, rc ? &via : NULL);
	uint64_t *t = NULL;
	jt_shape shape;
	size_t nt = jt_resolve(&rb->c->p->bin, win, taken, n, rc ? &rc[widx[0]] : NULL,
			       hints, &t, &shape);
	if (!nt)
		return false;
	jtable jt = { rb->insns.a[idx].addr, t, nt, false, via, shape };
	vec_push(rb->tables, jt);
	for (size_t x = 0; x < nt; x++)
		if (!leaves_routine(rb, t[x]))
			leader(rb, t[x]);
	return true;
}

/* Whether the system call at rb->insns[idx] is exit (60): the thread's
 * last instruction.  rax is traced back along the straight-line code
 * decoded before it, through register moves, to a `mov REG, 60`; *def
 * gets that mov's address (skelgen checks that no other way leads from
 * it to the syscall).  glibc's start_thread and the clone children end
 * so, in a loop that a skeleton without words would never leave. */
static bool thread_exit_syscall(const rbuild *rb, uint32_t idx, uint64_t *def)
{
	unsigned want = R_AX;
	uint64_t a = rb->insns.a[idx].addr;
	for (int n = 0; n < 8; n++) {
		uint32_t k;
		if (!addrmap_get(&rb->ends, a, &k))
			return false;
		const insn *in = &rb->insns.a[k];
		if (in->flow != FLOW_NEXT)
			return false;
		a = in->addr;
		if (!(in->writes & REG_BIT(want)))
			continue;
		if (in->op != OP_MOV || in->nopd != 2 || in->opd[0].type != OPD_REG ||
		    in->opd[0].reg != want || in->opd[0].size < 4)
			return false;
		if (in->opd[1].type == OPD_IMM) {
			*def = in->addr;
			return in->opd[1].imm == 60;
		}
		if (in->opd[1].type != OPD_REG || in->opd[1].size < 4 || in->opd[1].high8)
			return false;
		want = in->opd[1].reg;
	}
	return false;
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

		uint64_t def;
		if (in.flow == FLOW_SYSCALL && thread_exit_syscall(rb, idx, &def)) {
			/* the thread ends here: a halt whose target is the
			 * mov that set rax (skelgen) */
			rb->insns.a[idx].flow = FLOW_HALT;
			rb->insns.a[idx].target = def;
			return;
		}
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
			if (!call_noreturn(rb->c, &in) && !leaves_routine(rb, next))
				leader(rb, next);
			return;
		case FLOW_ICALL:
			if (!call_noreturn(rb->c, &in) && !leaves_routine(rb, next))
				leader(rb, next);
			return;
		case FLOW_IJUMP:
			if (!try_jump_table(rb, idx, NULL, false))
				vec_push(rb->pending, idx);
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

/* A resolved table whose entries the skeleton may read as the program
 * does: all in one section that is not writable (in the file as at run
 * time: no relocation applies there, the entries are read from the
 * file) and code targets. */
static void table_shape(const binary *bin, block *b, const jtable *jt)
{
	const jt_shape *sh = &jt->shape;
	const elf_section *sec = elf_section_at(bin, sh->base);
	if (jt->guess || !sh->count || sh->count != jt->n || sh->stride != sh->lsize || !sec ||
	    sec->write || !sec->data || sh->base + (uint64_t)sh->count * sh->lsize > sec->addr + sec->size)
		return;
	b->jt_base = sh->base;
	b->jt_add = sh->add;
	b->jt_size = sh->lsize;
	b->jt_signed = sh->lsigned;
	b->jt_targets = xmalloc(jt->n * sizeof *b->jt_targets);
	memcpy(b->jt_targets, jt->t, jt->n * sizeof *jt->t);
	b->jt_count = (uint32_t)jt->n;
}

static const jtable *find_table(const rbuild *rb, uint64_t at)
{
	for (size_t i = 0; i < rb->tables.n; i++)
		if (rb->tables.a[i].at == at)
			return &rb->tables.a[i];
	return NULL;
}

static int rb_index_of(const void *ctx, uint64_t a)
{
	uint32_t i;
	return addrmap_get(&((const rbuild *)ctx)->at, a, &i) ? (int)i : -1;
}

static size_t rb_table_of(const void *ctx, uint64_t at, const uint64_t **t)
{
	const jtable *jt = find_table(ctx, at);
	*t = jt ? jt->t : NULL;
	return jt ? jt->n : 0;
}

/* Indirect jumps the straight-line window could not resolve get a second
 * chance with the constants that reach them (a table base set before a
 * loop, kept in a callee-saved register); new cases may hold new jumps,
 * so this repeats until nothing changes. */
static void resolve_pending(rbuild *rb)
{
	for (int round = 0; round < 8 && rb->pending.n; round++) {
		jt_code c = { .insns = rb->insns.a, .n = rb->insns.n, .start = rb->r->start,
			      .index_of = rb_index_of, .table_of = rb_table_of, .ctx = rb };
		regconst *rc = regconst_solve(&c);
		size_t kept = 0, resolved = 0;
		for (size_t i = 0; i < rb->pending.n; i++) {
			if (try_jump_table(rb, rb->pending.a[i], rc, false) ||
			    try_jump_table(rb, rb->pending.a[i], rc, true))
				resolved++;
			else
				rb->pending.a[kept++] = rb->pending.a[i];
		}
		rb->pending.n = kept;
		free(rc);
		if (!resolved)
			return;
		while (rb->work.n)
			trace_from(rb, rb->work.a[--rb->work.n]);
	}
}

/* Decodes the leaders queued since, and gives the jumps still unresolved
 * another chance. */
static void decode_work(rbuild *rb)
{
	while (rb->work.n)
		trace_from(rb, rb->work.a[--rb->work.n]);
}

static void decode_more(rbuild *rb)
{
	decode_work(rb);
	resolve_pending(rb);
}

/* Targets seen at run time for the jumps still unresolved: their code
 * joins the routine (the jump stays unresolved: any block may follow). */
static void apply_hints(rbuild *rb)
{
	const program *p = rb->c->p;
	for (int round = 0; round < 8 && p->nhints && rb->pending.n; round++) {
		bool any = false;
		for (size_t i = 0; i < rb->pending.n; i++) {
			uint64_t at = rb->insns.a[rb->pending.a[i]].addr;
			for (uint32_t k = 0; k < p->nhints; k++) {
				uint32_t one;
				uint64_t to = p->hints[k].to;
				if (p->hints[k].at != at || leaves_routine(rb, to) ||
				    addrmap_get(&rb->leaders, to, &one))
					continue;
				leader(rb, to);
				any = true;
			}
		}
		if (!any)
			return;
		decode_more(rb);
	}
}

/* The extent of the function starting at `start`: its FDE's range, else
 * its symbol's size; false when neither is known. */
static bool function_extent(const binary *b, uint64_t start, uint64_t *lo, uint64_t *hi)
{
	size_t l = 0, h = b->nfdes;
	while (l < h) {
		size_t m = l + (h - l) / 2;
		if (b->fde_starts[m] <= start)
			l = m + 1;
		else
			h = m;
	}
	if (l && start < b->fde_ends[l - 1]) {
		*lo = b->fde_starts[l - 1];
		*hi = b->fde_ends[l - 1];
		return true;
	}
	for (size_t i = 0; i < b->nfuncs; i++)
		if (b->funcs[i].addr == start && b->funcs[i].size) {
			*lo = start;
			*hi = start + b->funcs[i].size;
			return true;
		}
	return false;
}

/* A jump still unresolved may go to any code address its function takes
 * as a value (a label's address, `&&label` in GNU C) and to the targets
 * seen at run time: those become blocks of the routine and the jump's
 * successors, so the analysis sees the edges the skeleton follows. */
static bool taken_in_extent(const rbuild *rb, uint64_t a, uint64_t lo, uint64_t hi)
{
	uint32_t one;
	return a > lo && a < hi && addrmap_get(&rb->c->taken, a, &one);
}

/* `a` falls inside an instruction decoded from the routine's real paths.
 * A constant that happens to look like a code address (a non-PIE's
 * immediates, words in data) then is no label: decoding from it would
 * make overlapping instructions, and patching them would break the real
 * ones. */
static bool splits_insn(const rbuild *rb, uint64_t a)
{
	uint32_t k;
	for (uint64_t d = 1; d < 15 && d <= a; d++)
		if (addrmap_get(&rb->at, a - d, &k))
			return rb->insns.a[k].len > d;
	return false;
}

/* A guessed target is code only if its straight-line run agrees with the
 * instructions already known: it must not start inside one, decode
 * through the start of one, or fail to decode before it joins them or ends.
 * A wrong guess (a table entry past the table's real end) would otherwise
 * decode overlapping instructions and cut a real block short. */
static bool guess_conflicts(rbuild *rb, uint64_t a)
{
	const binary *b = &rb->c->p->bin;
	uint32_t k;
	for (int n = 0; n < 64; n++) {
		if (addrmap_get(&rb->at, a, &k))
			return false;
		if (splits_insn(rb, a))
			return true;
		size_t avail;
		const uint8_t *code = elf_code_at(b, a, &avail);
		insn in;
		if (!code || decode_insn(code, avail, a, &in) < 0)
			return true;
		for (uint64_t d = 1; d < in.len; d++)
			if (addrmap_get(&rb->at, a + d, &k))
				return true;
		switch (in.flow) {
		case FLOW_NEXT:
		case FLOW_SYSCALL:
		case FLOW_CJUMP:
		case FLOW_CALL:
		case FLOW_ICALL:
			a += in.len;
			if (leaves_routine(rb, a))
				return false;
			continue;
		default:
			return false;
		}
	}
	return false;
}

static void add_taken_targets(rbuild *rb)
{
	const cfg_ctx *c = rb->c;
	uint64_t lo, hi;
	if (!rb->pending.n || !function_extent(&c->p->bin, rb->r->start, &lo, &hi))
		return;
	VEC(uint64_t) cand = {0};
	for (size_t i = 0; i < c->entry_list.n; i++)
		if (taken_in_extent(rb, c->entry_list.a[i], lo, hi))
			vec_push(cand, c->entry_list.a[i]);
	/* in address order, each decoded at once, so that the next is
	 * checked against it (the result does not depend on discovery order) */
	if (cand.n)
		qsort(cand.a, cand.n, sizeof *cand.a, cmp_u64);
	bool any = false;
	for (size_t i = 0; i < cand.n; i++) {
		uint64_t a = cand.a[i];
		uint32_t one;
		if (leaves_routine(rb, a) || addrmap_get(&rb->leaders, a, &one) ||
		    guess_conflicts(rb, a))
			continue;
		leader(rb, a);
		decode_work(rb);
		any = true;
	}
	free(cand.a);
	if (any)
		decode_more(rb);
}

/* An unresolved jump through a table whose bound is checked in another
 * block (vfprintf's `cmp al, 0x5a; jbe` before a block that indexes a
 * byte table, then a table of offsets from a label): its entries, while
 * they are code in the function, become possible targets.  One round over
 * the jumps not seen yet; true when new code is to be decoded. */
static bool table_guess_round(rbuild *rb, uint64_t lo, uint64_t hi)
{
	bool any = false;
	/* the constants that reach each jump's window (a table base set
	 * before it, beyond the window) */
	jt_code c = { .insns = rb->insns.a, .n = rb->insns.n, .start = rb->r->start,
		      .index_of = rb_index_of, .table_of = rb_table_of, .ctx = rb };
	regconst *rc = regconst_solve(&c);
	size_t done = rb->guess_at.n;
	for (size_t i = 0; i < rb->pending.n; i++) {
		uint32_t idx = rb->pending.a[i], one;
		bool seen = false;
		for (size_t k = 0; k < done && !seen; k++)
			seen = rb->guess_at.a[k] == rb->insns.a[idx].addr;
		if (seen)
			continue;
		const insn *win[WINDOW];
		uint32_t widx[WINDOW];
		bool taken[WINDOW];
		size_t n = jump_window(rb, idx, win, widx, taken, NULL);
		uint64_t *t = NULL;
		/* (instructions decoded since have no state in rc) */
		size_t nt = jt_unbounded(&rb->c->p->bin, win, taken, n,
					 widx[0] < c.n ? &rc[widx[0]] : NULL, lo, hi, &t);
		for (size_t k = 0; k < nt; k++) {
			if (leaves_routine(rb, t[k]) || guess_conflicts(rb, t[k]))
				continue;
			vec_push(rb->guess_at, rb->insns.a[idx].addr);
			vec_push(rb->guess_to, t[k]);
			if (!addrmap_get(&rb->leaders, t[k], &one)) {
				leader(rb, t[k]);
				decode_work(rb);
				any = true;
			}
		}
		free(t);
	}
	free(rc);
	return any;
}

/* Rounds until nothing new: the cases found may hold further such jumps
 * (vfprintf's steps). */
static void add_table_guesses(rbuild *rb)
{
	uint64_t lo, hi;
	if (!function_extent(&rb->c->p->bin, rb->r->start, &lo, &hi))
		return;
	for (int round = 0; round < 8 && rb->pending.n && table_guess_round(rb, lo, hi); round++)
		decode_more(rb);
}

static void record_guesses(rbuild *rb)
{
	const cfg_ctx *c = rb->c;
	const program *p = c->p;
	uint64_t lo = 0, hi = 0;
	bool extent = function_extent(&p->bin, rb->r->start, &lo, &hi);
	for (size_t i = 0; i < rb->pending.n; i++) {
		uint64_t at = rb->insns.a[rb->pending.a[i]].addr;
		VEC(uint64_t) t = {0};
		for (uint32_t k = 0; k < p->nhints; k++)
			if (p->hints[k].at == at && !leaves_routine(rb, p->hints[k].to))
				vec_push(t, p->hints[k].to);
		for (size_t k = 0; extent && k < c->entry_list.n; k++) {
			uint64_t a = c->entry_list.a[k];
			if (taken_in_extent(rb, a, lo, hi) && !leaves_routine(rb, a) &&
			    !splits_insn(rb, a))
				vec_push(t, a);
		}
		for (size_t k = 0; k < rb->guess_at.n; k++) {
			uint64_t g = rb->guess_to.a[k];
			bool dup = false;
			for (size_t x = 0; x < t.n && !dup; x++)
				dup = t.a[x] == g;
			if (rb->guess_at.a[k] == at && !dup && !splits_insn(rb, g))
				vec_push(t, g);
		}
		jtable jt = { at, t.a, t.n, true, 0, { 0 } };
		vec_push(rb->tables, jt);
	}
}

/* A table resolved through a jump that was then the only way into the
 * code before the table's jump keeps its bound only if it still is, the
 * routine decoded: else its targets are possible ones only. */
static void check_via(rbuild *rb)
{
	for (size_t i = 0; i < rb->tables.n; i++)
		if (rb->tables.a[i].via && sole_branch_into(rb, rb->tables.a[i].via) < 0) {
			rb->tables.a[i].guess = true;
			rb->tables.a[i].via = 0;
		}
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

/* A table target outside the routine: a tail call through the table. */
static void add_tail(block *b, uint64_t to)
{
	uint32_t i = 0;
	while (i < b->ntails && b->tails[i] < to)
		i++;
	if (i < b->ntails && b->tails[i] == to)
		return;
	b->tails = xrealloc(b->tails, (b->ntails + 1) * sizeof *b->tails);
	memmove(b->tails + i + 1, b->tails + i, (b->ntails - i) * sizeof *b->tails);
	b->tails[i] = to;
	b->ntails++;
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
			     addrmap_get(&rb->c->entries, in->addr, &dummy) ||
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
		if (call_noreturn(rb->c, last)) {
			b->flags |= BLK_NORETURN;
		} else {
			b->flags |= BLK_CALL;
			if (last->flow == FLOW_CALL && target_setjmp(&rb->c->p->bin, last->target))
				b->flags |= BLK_SETJMP;
			if (!leaves_routine(rb, next))
				add_succ(r, bi, next);
		}
		break;
	case FLOW_IJUMP:
		jt = find_table(rb, last->addr);
		if (!jt || jt->guess) {
			/* the skeleton follows only these edges; any other
			 * target inside the program stops the replay (and is
			 * noted for the next analysis) */
			b->flags |= BLK_IJUMP;
			r->partial = true;
			for (size_t k = 0; jt && k < jt->n; k++)
				add_succ(r, bi, jt->t[k]);
			break;
		}
		b->flags |= BLK_JUMPTABLE;
		table_shape(&rb->c->p->bin, b, jt);
		for (size_t k = 0; k < jt->n; k++) {
			if (leaves_routine(rb, jt->t[k]))
				add_tail(b, jt->t[k]);
			else
				add_succ(r, bi, jt->t[k]);
		}
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
		free(r->blocks[i].tails);
		free(r->blocks[i].jt_targets);
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
	resolve_pending(&rb);
	apply_hints(&rb);
	add_taken_targets(&rb);
	add_table_guesses(&rb);
	record_guesses(&rb);
	check_via(&rb);

	if (rb.insns.n)
		qsort(rb.insns.a, rb.insns.n, sizeof *rb.insns.a, cmp_insn);
	r->insns = rb.insns.a;
	r->ninsn = (uint32_t)rb.insns.n;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		if (r->insns[i].nmem)
			r->nmem++;
		/* overlapping instructions: a jump into the middle of another.
		 * When both end together (glibc jumps over a lock prefix when
		 * single-threaded: `je 1f; lock; 1: cmpxchg`), both flow into
		 * the code after them, which starts a block of its own. */
		const insn *pv = i ? &r->insns[i - 1] : NULL;
		if (pv && pv->addr + pv->len > r->insns[i].addr) {
			if (pv->addr + pv->len == r->insns[i].addr + r->insns[i].len)
				addrmap_put(&rb.leaders, pv->addr + pv->len, 1);
			else
				r->partial = true;
		}
	}
	form_blocks(&rb);
	for (uint32_t i = 0; i < r->nblocks; i++)
		link_block(&rb, i);
	link_preds(r);
	set_callees(&rb);

	for (size_t i = 0; i < rb.tables.n; i++)
		free(rb.tables.a[i].t);
	free(rb.tables.a);
	free(rb.pending.a);
	free(rb.work.a);
	free(rb.callees.a);
	free(rb.guess_at.a);
	free(rb.guess_to.a);
	addrmap_free(&rb.at);
	addrmap_free(&rb.ends);
	addrmap_free(&rb.leaders);
}

/* A routine returns if some path reaches a ret, a tail call (direct or
 * through a jump table) to a routine that may return, or an indirect jump
 * we could not follow. */
static bool routine_returns(const cfg_ctx *c, const routine *r)
{
	for (uint32_t i = 0; i < r->nblocks; i++) {
		const block *b = &r->blocks[i];
		if (b->flags & (BLK_RET | BLK_IJUMP))
			return true;
		if ((b->flags & BLK_TAILCALL) && !target_noreturn(c, b->call_target))
			return true;
		/* setjmp's return address is a routine of its own */
		if ((b->flags & BLK_SETJMP) && !b->nsucc && !target_noreturn(c, b->end))
			return true;
		for (uint32_t k = 0; k < b->ntails; k++)
			if (!target_noreturn(c, b->tails[k]))
				return true;
	}
	return r->nblocks == 0;
}

static bool add_taken(cfg_ctx *c, uint64_t a);

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
	/* C++ landing pads: the unwinder enters them (its own frames are not
	 * analyzed) as a longjmp does the code after setjmp */
	for (size_t i = 0; i < b->nlp; i++)
		if (cfg_is_code(b, b->lp_pads[i])) {
			add_start(c, b->lp_pads[i]);
			add_taken(c, b->lp_pads[i]);
		}
	/* an indirect call seen at run time going where the analysis had no
	 * routine (the skeleton checks such calls when the binary has code
	 * outside every known function): a routine, its address taken */
	for (uint32_t i = 0; i < c->p->nhints; i++) {
		size_t avail;
		const uint8_t *code = elf_code_at(b, c->p->hints[i].at, &avail);
		insn in;
		if (code && !decode_insn(code, avail, c->p->hints[i].at, &in) &&
		    in.flow == FLOW_ICALL) {
			add_start(c, c->p->hints[i].to);
			add_taken(c, c->p->hints[i].to);
		}
	}
}

/* A soft start (an FDE only) that no one calls and exactly one routine
 * jumps to, directly or through a jump table (a switch whose rare case
 * gcc put first in the cold part), is that routine's cold part (gcc's
 * hot/cold splitting, which jumps back into its parent): it is merged
 * into the parent.  Returns whether any start changed. */
static bool demote_cold_parts(cfg_ctx *c, routine *rs, size_t nr)
{
	bool any = false;
	for (size_t s = 0; s < c->list.n; s++) {
		if (!c->soft.a[s] || c->list.a[s] == c->p->bin.entry)
			continue;
		uint64_t a = c->list.a[s];
		uint32_t one;
		if (addrmap_get(&c->taken, a, &one)) {
			/* a cold part's address is never taken */
			any |= c->demoted.a[s];
			c->demoted.a[s] = 0;
			continue;
		}
		size_t jumpers = 0;
		bool called = false;
		for (size_t i = 0; i < nr && !called; i++) {
			const routine *r = &rs[i];
			bool jumps = false;
			/* one demoted in this pass, merged into the start it
			 * jumps to: two cold parts of each other stay apart */
			if (c->demoted.a[i])
				continue;
			for (uint32_t k = 0; k < r->ncallees; k++)
				called |= r->callees[k] == a;
			for (uint32_t b = 0; b < r->nblocks; b++) {
				const block *bl = &r->blocks[b];
				jumps |= (bl->flags & BLK_TAILCALL) && bl->call_target == a;
				for (uint32_t k = 0; k < bl->ntails; k++)
					jumps |= bl->tails[k] == a;
			}
			/* a start demoted in an earlier round is part of the
			 * routine that reaches it */
			if (c->demoted.a[s] && r->start != a) {
				int x = cfg_block_of(r, a);
				jumps |= x >= 0 && r->blocks[x].start == a;
			}
			jumpers += jumps;
		}
		/* decided again each round: an early round, which takes every
		 * callee to return, sees a fall through after a call to a
		 * noreturn function as a jump into the next function; once
		 * that call is known not to return, nothing reaches it.  A
		 * cold part merged into a parent may also be reached by the
		 * parent's other cold parts: it stays merged */
		uint8_t cold = !called && (jumpers == 1 || (c->demoted.a[s] && jumpers > 1));
		if (cold != c->demoted.a[s]) {
			c->demoted.a[s] = cold;
			any = true;
		}
	}
	return any;
}

/* Where a new thread starts: right after `mov eax, 56 (clone) or 435
 * (clone3); syscall` followed by `test rax, rax` and a jump on zero or
 * non-zero (glibc's __clone, __clone3).  Parent and child both return
 * there, the child on its own stack and its own stream: the code from
 * there is a routine of its own, entered by entry word, so that the
 * child's stream starts with it (the parent tail-calls it).  0 when
 * insn k is not such a syscall. */
static uint64_t clone_child(const routine *r, uint32_t k)
{
	const insn *in = &r->insns[k], *pv = k ? &r->insns[k - 1] : NULL;
	if (in->flow != FLOW_SYSCALL || !pv || pv->addr + pv->len != in->addr ||
	    pv->op != OP_MOV || pv->nopd != 2 || pv->opd[0].type != OPD_REG ||
	    pv->opd[0].reg != R_AX || pv->opd[1].type != OPD_IMM ||
	    (pv->opd[1].imm != 56 && pv->opd[1].imm != 435))
		return 0;
	uint32_t i = k + 1;
	if (i >= r->ninsn || r->insns[i].addr != in->addr + in->len ||
	    r->insns[i].op != OP_TEST || r->insns[i].nopd != 2 ||
	    r->insns[i].opd[0].type != OPD_REG || r->insns[i].opd[0].reg != R_AX ||
	    r->insns[i].opd[1].type != OPD_REG || r->insns[i].opd[1].reg != R_AX)
		return 0;
	for (uint32_t n = 0; n < 3 && ++i < r->ninsn; n++) {
		const insn *j = &r->insns[i];
		if (j->addr != r->insns[i - 1].addr + r->insns[i - 1].len || j->flow != FLOW_CJUMP)
			return 0;
		if (j->cond == CC_E || j->cond == CC_NE)
			return in->addr + in->len;
	}
	return 0;
}

/* The return address of each call to setjmp: a routine start, its
 * address taken (a longjmp's destination), entered by its entry word. */
static bool add_setjmp_returns(cfg_ctx *c, const routine *rs, size_t nr)
{
	bool any = false;
	for (size_t i = 0; i < nr; i++)
		for (uint32_t k = 0; k < rs[i].nblocks; k++) {
			const block *b = &rs[i].blocks[k];
			if (!(b->flags & BLK_SETJMP) || is_start(c, b->end))
				continue;
			add_start(c, b->end);
			add_taken(c, b->end);
			any = true;
		}
	return any;
}

static bool add_clone_children(cfg_ctx *c, const routine *rs, size_t nr)
{
	bool any = false;
	for (size_t i = 0; i < nr; i++)
		for (uint32_t k = 0; k < rs[i].ninsn; k++) {
			uint64_t a = clone_child(&rs[i], k);
			uint32_t x;
			if (!a || is_start(c, a))
				continue;
			/* glibc's clone3 starts a new FDE there, which alone
			 * would be taken for a cold part and merged back */
			add_start(c, a);
			if (addrmap_get(&c->starts, a, &x)) {
				c->soft.a[x] = 0;
				c->demoted.a[x] = 0;
				any = true;
			}
		}
	return any;
}

static void add_entry(cfg_ctx *c, uint64_t a)
{
	if (!cfg_is_code(&c->p->bin, a) || addrmap_get(&c->entries, a, &(uint32_t){0}))
		return;
	addrmap_put(&c->entries, a, 1);
	vec_push(c->entry_list, a);
}

static bool add_taken(cfg_ctx *c, uint64_t a)
{
	if (!cfg_is_code(&c->p->bin, a) || addrmap_get(&c->taken, a, &(uint32_t){0}))
		return false;
	addrmap_put(&c->taken, a, 1);
	vec_push(c->taken_list, a);
	add_entry(c, a);
	return true;
}

/* Entries known before any code is decoded: symbols, FDEs, the loader's
 * calls, pointer-sized words in data (relocated words in a shared
 * object). */
static void seed_entries(cfg_ctx *c)
{
	const binary *b = &c->p->bin;
	for (size_t i = 0; i < b->nfuncs; i++)
		add_entry(c, b->funcs[i].addr);
	for (size_t i = 0; i < b->nfdes; i++)
		add_entry(c, b->fde_starts[i]);
	for (size_t i = 0; i < b->ninit_funcs; i++)
		add_entry(c, b->init_funcs[i]);
	add_entry(c, b->entry);
	/* a shared object's data holds an address of its own only where a
	 * relocation puts one; its other words are numbers, whatever they
	 * look like.  Its exported functions' addresses the loader gives to
	 * other objects: taken too, so that a function it also calls
	 * directly keeps its entry from outside. */
	if (b->shared) {
		for (size_t i = 0; i < b->nreloc_values; i++)
			add_taken(c, b->reloc_values[i]);
		for (size_t i = 0; i < b->nexports; i++)
			add_taken(c, b->exports[i]);
		return;
	}
	for (size_t i = 0; i < b->nsections; i++) {
		const elf_section *s = &b->sections[i];
		if (!s->alloc || s->exec || !s->data)
			continue;
		for (uint64_t off = (8 - s->addr % 8) % 8; off + 8 <= s->size; off += 8) {
			uint64_t v;
			memcpy(&v, s->data + off, 8);
			add_taken(c, v);
		}
	}
}

/* Code addresses the decoded instructions take as values; returns whether
 * any is new. */
static bool collect_taken(cfg_ctx *c, const routine *rs, size_t nr)
{
	bool any = false;
	for (size_t k = 0; k < nr; k++)
		for (uint32_t i = 0; i < rs[k].ninsn; i++) {
			const insn *in = &rs[k].insns[i];
			if (in->flow == FLOW_JUMP || in->flow == FLOW_CJUMP || in->flow == FLOW_CALL)
				continue;
			/* position-independent code takes no address as an immediate:
			 * a PIE's or a library's immediates are sizes and masks */
			for (unsigned o = 0; o < in->nopd && !c->p->bin.pie && !c->p->bin.shared; o++)
				if (in->opd[o].type == OPD_IMM)
					any |= add_taken(c, (uint64_t)in->opd[o].imm);
			for (unsigned m = 0; m <= INSN_MAX_MEM; m++)
				if (in->mem[m].flags & MEM_RIPREL)
					any |= add_taken(c, (uint64_t)in->mem[m].disp);
		}
	return any;
}

static bool in_function_symbol(const binary *b, uint64_t a)
{
	for (size_t i = 0; i < b->nfuncs; i++)
		if (a >= b->funcs[i].addr && a < b->funcs[i].addr + b->funcs[i].size)
			return true;
	return false;
}

/* A code address a rip-relative lea computes, outside every routine, FDE
 * and function symbol, and never read or written as data by a
 * rip-relative operand, is a function the binary keeps no other record of
 * (assembly without CFI in a stripped binary: zstd's Huffman decoding
 * loops, called through a pointer): a routine of its own.  Else its code
 * runs unseen, and called indirectly it looks external to the skeleton.
 * Returns whether any was added. */
static bool add_lea_functions(cfg_ctx *c, const routine *rs, size_t nr)
{
	const binary *b = &c->p->bin;
	VEC(uint64_t) lea = {0}, data = {0};
	for (size_t k = 0; k < nr; k++)
		for (uint32_t i = 0; i < rs[k].ninsn; i++) {
			const insn *in = &rs[k].insns[i];
			for (unsigned m = 0; m <= INSN_MAX_MEM; m++)
				if (in->mem[m].flags & MEM_RIPREL) {
					if (in->op == OP_LEA)
						vec_push(lea, (uint64_t)in->mem[m].disp);
					else
						vec_push(data, (uint64_t)in->mem[m].disp);
				}
		}
	if (data.n)
		qsort(data.a, data.n, sizeof *data.a, cmp_u64);
	bool any = false;
	for (size_t x = 0; x < lea.n; x++) {
		uint64_t a = lea.a[x], lo, hi;
		if (!cfg_is_code(b, a) || is_start(c, a) ||
		    (data.n && bsearch(&a, data.a, data.n, sizeof *data.a, cmp_u64)) ||
		    function_extent(b, a, &lo, &hi) || in_function_symbol(b, a))
			continue;
		bool inside = false;
		for (size_t k = 0; k < nr && !inside; k++)
			inside = cfg_block_of(&rs[k], a) >= 0;
		if (inside)
			continue;
		add_start(c, a);
		any = true;
	}
	free(lea.a);
	free(data.a);
	return any;
}

static int cmp_routine(const void *x, const void *y)
{
	const routine *a = x, *b = y;
	return (a->start > b->start) - (a->start < b->start);
}

/* The replaced routine: its name and start, no blocks. */
static void empty_routine(cfg_ctx *c, routine *r, uint64_t start)
{
	r->name = routine_name(&c->p->bin, start);
	r->start = start;
}

/* Whether routine start a is built: not the one the recorder replaces
 * (format.h), a routine without blocks whose callers call out. */
static bool built(const cfg_ctx *c, size_t i)
{
	return !c->demoted.a[i] && (!c->replaced || c->list.a[i] != c->replaced);
}

void cfg_build(program *p)
{
	cfg_ctx c = { .p = p };
	for (size_t i = 0; i < p->bin.nlp; i++)
		addrmap_put(&c.pads, p->bin.lp_pads[i], 0);
	for (size_t i = 0; i < p->bin.nfuncs; i++)
		if (!strcmp(p->bin.funcs[i].name, SKEL_REPLACED_ROUTINE))
			c.replaced = p->bin.funcs[i].addr;
	seed_starts(&c);
	seed_entries(&c);
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
			if (built(&c, i))
				build_routine(&c, &rs[i], c.list.a[i]);
			else if (!c.demoted.a[i])
				empty_routine(&c, &rs[i], c.list.a[i]);
			for (uint32_t k = 0; k < rs[i].ncallees; k++)
				add_start(&c, rs[i].callees[k]);
		}
		changed |= collect_taken(&c, rs, nr);
		changed |= add_lea_functions(&c, rs, nr);
		changed |= demote_cold_parts(&c, rs, nr);
		changed |= add_clone_children(&c, rs, nr);
		changed |= add_setjmp_returns(&c, rs, nr);
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
	/* still changing after the last round (never seen): the routines
	 * are built once more as the last round left the starts */
	if (changed)
		for (size_t i = 0; i < nr; i++) {
			routine_clear(&rs[i]);
			if (built(&c, i))
				build_routine(&c, &rs[i], c.list.a[i]);
			else if (!c.demoted.a[i])
				empty_routine(&c, &rs[i], c.list.a[i]);
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
	if (c.entry_list.n)
		qsort(c.entry_list.a, c.entry_list.n, sizeof *c.entry_list.a, cmp_u64);
	p->entries = c.entry_list.a;
	p->nentries = (uint32_t)c.entry_list.n;
	if (c.taken_list.n)
		qsort(c.taken_list.a, c.taken_list.n, sizeof *c.taken_list.a, cmp_u64);
	p->taken = c.taken_list.a;
	p->ntaken = (uint32_t)c.taken_list.n;
	free(c.list.a);
	free(c.noret);
	free(c.soft.a);
	free(c.demoted.a);
	addrmap_free(&c.starts);
	addrmap_free(&c.pads);
	addrmap_free(&c.entries);
	addrmap_free(&c.taken);
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
