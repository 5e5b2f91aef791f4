/* skelgen.c — the C skeleton and its patch.
 *
 * The generated code follows the slides of Ketterlin & Clauss: one label
 * per block, OUT() per access in program order, IN() where a probe fired,
 * loop counters reset on loop entry and incremented on back edges.  The
 * stream contract with the recorder: at one instruction, the probes fire in
 * patch order — control words, registers before, direct addresses, branch
 * outcome or target, then registers after — and the skeleton reads them in
 * that same order when it replays that instruction. */
#include "skelgen/skelgen.h"
#include "analyzer/util.h"
#include "replay/skel_rt.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

typedef struct gen {
	FILE *f;
	const program *p;
	const skel_opts *o;
	patch *pt;
	skel_stats *st;
	uint8_t *extern_tail;   /* per routine: may leave through unanalyzed code
				 * (a tail out of the object, an indirect jump,
				 * or runs_other_code) */
	/* Internal routines are entered only by direct calls and jumps from
	 * analyzed code: no entry word, and their entry values are passed by
	 * the caller (computed there, or recorded at the call) instead of
	 * recorded at every entry. */
	uint8_t *internal;
	uint32_t *entry_mask;   /* per routine: entry values its skeleton uses */
	uint8_t *resume;        /* per routine: a setjmp call's return address */
	addrmap shared;         /* instructions in more than one routine */
	addrmap bstarts;        /* every routine's block starts */
	/* Their probes: the union of what each of those routines needs,
	 * written to the patch once, read by every routine's skeleton in the
	 * same order (unneeded words are read and dropped). */
	struct shared_at *sh;
	uint32_t nsh;
	addrmap shidx;          /* pc -> index in sh */
	uint32_t nfetch_blocks; /* FETCH() numbers given so far */
	addrmap links;          /* linkable PLT stub -> its link number + 1 */
} gen;

/* One probe at a shared instruction, in the order the recorder writes
 * and every skeleton reads: RETURNED, registers before, direct addresses
 * (by access), call arguments, branch or target, registers after. */
enum { SP_RETURNED, SP_REG_BEFORE, SP_ADDR, SP_ARG, SP_BRANCH, SP_TARGET, SP_REG_AFTER };
typedef struct sprobe {
	uint8_t cls, rep, key;  /* key: register, access index or variable */
} sprobe;

typedef struct shared_at {
	sprobe *v;
	uint32_t n;
	uint64_t bs, be;        /* probe region: the narrowest any routine has */
	bool region, written;
} shared_at;

/* What a call site passes for one entry value of an internal callee. */
typedef struct call_arg {
	uint32_t insn;          /* the call or jump */
	uint8_t var;
	expr *e;                /* NULL: recorded before the call */
} call_arg;

typedef struct rgen {
	gen *g;
	const routine *r;
	analysis a;
	uint32_t id;
	uint8_t *counter_used;  /* per loop */
	uint8_t *leaf_used;     /* per SSA value: declared as v<n> */
	uint8_t *returned_at;   /* per insn: a RETURNED word fires before it */
	uint8_t *rchain;        /* per block: a return site, or a block after
	                           it, whose RETURNED word fires further on
	                           (returned_site): nothing may record there */
	uint8_t *qret_at;       /* per insn: ...read only when its linked
				   call does not return quietly (patch_qret) */
	uint32_t *probe_first;  /* per insn: first probe index (nprobes if none) */
	call_arg *args;         /* by instruction, then variable */
	uint32_t nargs;
	int32_t *slice_to;      /* per block: a sliced loop's header -> the
	                           block its every exit leads to, else -1 */
	uint8_t *sliced;        /* per block: inside a sliced loop */
	int32_t *elide_to;      /* per block: its conditional jump not
	                           replayed, both ways lead silently to this
	                           block (plan_elisions), else -1 */
	uint32_t nelided;
	/* approximate mode (bid_plan): per access of a.acc */
	uint8_t *role;          /* enum bid_role; BID_KEPT: exact */
	int32_t *fulcrum;       /* BID_ATTRIBUTED: the access it is counted on */
	int32_t *attr_next;     /* a fulcrum: its first attributed access; an
	                           attributed one: the next on its fulcrum */
	uint64_t bid_exprs, bid_kept, bid_aia; /* bid_select's sums */
	struct exit_loop *xl;   /* per loop (plan_exits), or NULL */
	uint32_t *carried;      /* φs computed on the edges into their block,
	                           and values computed where they are defined,
	                           instead of recorded (plan_carried) */
	uint32_t ncarried;
	uint8_t *computed_at;   /* per insn: defines one of those values */
	uint32_t esp_k1;        /* 1 + the probe recorded as edsp (entry rsp,
	                           skipped by linked calls), or 0 */
	/* a narrow value and the conditional jump after it, one word
	 * (plan_tbytes), per insn, or NULL: */
	uint32_t *tb_at;        /* the value's load: 1 + the jump's insn */
	uint32_t *tb_val;       /* the jump: 1 + the value's SSA id */
	uint8_t *tb_reg;        /* the jump: the value's register */
	uint8_t *tb_way;        /* the jump: PATCH_ON_TAKEN or PATCH_ON_FALL,
	                           the way whose word has PATCH_TREG_MARK */
	/* the routines of the landing pads of its call sites
	 * (emit_landing_pads: sk_lp_words, in this order) */
	uint32_t *lp_ids;
	uint32_t nlp_ids;
	uint8_t *tick;          /* per loop: a tick at its header (plan_ticks) */
} rgen;

/* A loop whose one recorded value is its exit (plan_exits): where it
 * leaves, the register `reg` of that exit's jump recorded once (and,
 * when it has several exits, which one), instead of the outcomes of its
 * exit jumps at every iteration. */
/* XL_EXITS: the exits a loop may have to be treated so (XL_MAX: what
 * the code handles).  Two loops leaving to the same block are not
 * (plan_exits): with several exits that came up in python3's allocator. */
#define XL_MAX 4
#define XL_EXITS 4
typedef struct exit_loop {
	uint32_t n;             /* exits; 0: not such a loop */
	bool edge;              /* recorded on the exit jumps' ways (format.h,
				   PATCH_ON_TAKEN), not where they lead */
	struct loop_exit {
		uint32_t insn;          /* the exit's conditional jump */
		uint32_t block;         /* where it leads: entered from there only */
		uint8_t reg;
		int64_t c;              /* reg = e0 + c * I at the jump */
		expr *e0;
	} x[XL_MAX];
} exit_loop;
/* The word an exit's number j is recorded as (PATCH_WORD, so `sword`:
 * less PATCH_CTL_BASE, -(j + 1), a byte in the file) */
#define XL_WORD(j) (PATCH_CTL_BASE - 1 - (uint64_t)(j))

static void emit_signature(gen *g, uint32_t id);
static void emit_landing_pads(rgen *g);
static void emit_call_pad(rgen *g, const insn *in);
static bool block_in_loop(const routine *r, uint32_t b, uint32_t l);

/* A symbol name inside a C comment or string: any byte that could end
 * either (or is not printable) is written as '?'. */
static const char *c_safe(const char *name, char *buf, size_t n)
{
	size_t k = 0;
	for (; name[k] && k + 1 < n; k++) {
		unsigned char c = (unsigned char)name[k];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || strchr("_.@$+-:<>, ", c);
		buf[k] = ok ? (char)c : '?';
	}
	buf[k] = 0;
	return buf;
}

/* A call to skel_roi_begin (skel_roi.h) at insn i of block b: the name
 * it passes, when rdi is set in the block from a constant address
 * (lea rdi, [rip + X], or mov edi, X) of a string in the binary's data;
 * into buf (at most n - 1 characters, each kept as c_safe keeps it and a
 * '\"' or '\\' never), else false.  The replay names the region so;
 * nothing is recorded for it. */
static bool roi_marker_name(const binary *bin, const routine *r, const block *b, uint32_t i,
			    char *buf, size_t n)
{
	for (uint32_t k = i; k-- > b->first;) {
		const insn *in = &r->insns[k];
		if (!(in->writes & REG_BIT(R_DI)))
			continue;
		uint64_t at;
		if (in->op == OP_LEA && in->nopd == 2 && in->opd[1].type == OPD_MEM &&
		    (in->mem[in->opd[1].mem].flags & MEM_RIPREL) &&
		    in->mem[in->opd[1].mem].index == R_NONE)
			at = (uint64_t)in->mem[in->opd[1].mem].disp;
		else if (in->op == OP_MOV && in->nopd == 2 && in->opd[1].type == OPD_IMM)
			at = (uint64_t)in->opd[1].imm;
		else
			return false;
		size_t len = 0;
		for (uint64_t c; len + 1 < n; len++) {
			if (elf_read(bin, at + len, 1, &c) < 0)
				return false;
			if (!c)
				break;
			buf[len] = (char)c;
		}
		buf[len] = 0;
		if (!len || len + 1 >= n)
			return false;
		char safe[128];
		c_safe(buf, safe, sizeof safe);
		for (char *q = safe; *q; q++)
			if (*q == '?')	/* no trigraph can form */
				*q = '_';
		snprintf(buf, n, "%s", safe);
		return true;
	}
	return false;
}

/* ------------------------------------------------------ expressions */

static void emit_expr(FILE *f, const expr *e)
{
	switch (e->kind) {
	case E_CONST:
		fprintf(f, "0x%" PRIx64 "ull", (uint64_t)e->k);
		break;
	case E_LEAF:
		if (e->val == SSA_BIAS)
			fputs("t->bias", f);
		else if (e->val == SSA_FSBASE)
			fputs("t->fsbase", f);
		else
			fprintf(f, "v%u", e->val);
		break;
	case E_COUNTER:
		fprintf(f, "I%u", e->val);
		break;
	case E_ADD:
	case E_MULV:
	case E_AND:
		fputc('(', f);
		emit_expr(f, e->a);
		fputs(e->kind == E_ADD ? " + " : e->kind == E_MULV ? " * " : " & ", f);
		emit_expr(f, e->b);
		fputc(')', f);
		break;
	case E_MUL:
		fputc('(', f);
		emit_expr(f, e->a);
		fprintf(f, " * 0x%" PRIx64 "ull)", (uint64_t)e->k);
		break;
	case E_ZEXT:
		fprintf(f, "(uint64_t)(uint%u_t)(", e->bits);
		emit_expr(f, e->a);
		fputc(')', f);
		break;
	case E_SEXT:
		fprintf(f, "(uint64_t)(int64_t)(int%u_t)(", e->bits);
		emit_expr(f, e->a);
		fputc(')', f);
		break;
	case E_SHR: /* a 32-bit operand is zero-extended (expr_shr) */
		fputc('(', f);
		emit_expr(f, e->a);
		fprintf(f, " >> %u)", (unsigned)e->k);
		break;
	case E_SAR: /* ... sign-extended: its low 32 bits are the result */
		fputs(e->bits == 32 ? "(uint64_t)(uint32_t)((int64_t)(" : "(uint64_t)((int64_t)(", f);
		emit_expr(f, e->a);
		fprintf(f, ") >> %u)", (unsigned)e->k);
		break;
	}
}

static void mark_counters(rgen *g, const expr *e)
{
	if (!e)
		return;
	if (e->kind == E_COUNTER)
		g->counter_used[e->val] = 1;
	mark_counters(g, e->a);
	mark_counters(g, e->b);
}

static void mark_leaf(uint32_t v, void *arg)
{
	rgen *g = arg;
	if (!SSA_PSEUDO(v))
		g->leaf_used[v] = 1;
}

/* --------------------------------------------------------- the patch */

/* Whether control enters block b only by falling through from block p,
 * which ends where b starts: then no jump lands anywhere in p + b but at
 * p's start, and the recorder may lay one span across the two (through
 * p's conditional jump, whose fall-through stays in the trampoline). */
static bool falls_only_into(const gen *g, const routine *r, int32_t p, int32_t b)
{
	uint32_t one;
	if (p < 0 || b <= 0 || p == b)
		return false;
	const block *pb = &r->blocks[p], *bb = &r->blocks[b];
	if (pb->end != bb->start || bb->npred != 1 || bb->pred[0] != (uint32_t)p ||
	    (bb->flags & BLK_ENTRY) || !pb->ninsn || program_is_entry(g->p, bb->start) ||
	    addrmap_get(&g->shared, bb->start, &one))
		return false;
	const insn *last = &r->insns[pb->first + pb->ninsn - 1];
	if (last->flow != FLOW_NEXT && (last->flow != FLOW_CJUMP || last->target == bb->start))
		return false;
	/* not over a block that starts inside either (a jump over a lock
	 * prefix): the span would overwrite a jump target */
	for (uint64_t a = pb->start + 1; a < bb->end; a++) {
		int32_t x = cfg_block_of(r, a);
		if (x >= 0 && r->blocks[x].start == a && a != bb->start)
			return false;
	}
	return true;
}

/* The probe's block as the patch gives it: the basic block of insn i
 * widened over fall-through-only joins (see falls_only_into), so that a
 * probe on a lone short jcc or load still finds a 5-byte span. */
static void probe_region(const rgen *g, uint32_t i, uint64_t *start, uint64_t *end)
{
	const routine *r = g->r;
	int32_t b = cfg_block_of(r, r->insns[i].addr), x;
	for (x = b; falls_only_into(g->g, r, cfg_block_of(r, r->blocks[x].start - 1), x);)
		x = cfg_block_of(r, r->blocks[x].start - 1);
	*start = r->blocks[x].start;
	for (x = b; falls_only_into(g->g, r, x, cfg_block_of(r, r->blocks[x].end));)
		x = cfg_block_of(r, r->blocks[x].end);
	*end = r->blocks[x].end;
	/* nor over code another routine enters there (a block start of its
	 * own, inside one of ours: the code after a setjmp call, a routine
	 * of its own, jumps back into its caller's loop) */
	uint32_t one;
	int32_t first = cfg_block_of(r, *start);
	for (uint32_t k = r->blocks[first].first; k < r->ninsn && r->insns[k].addr < *end; k++) {
		uint64_t a = r->insns[k].addr;
		if (a <= *start || !addrmap_get(&g->g->shared, a, &one) ||
		    !addrmap_get(&g->g->bstarts, a, &one))
			continue;
		int32_t y = cfg_block_of(r, a);
		if (y >= 0 && r->blocks[y].start == a)
			continue;
		if (a <= r->insns[i].addr)
			*start = a;
		else
			*end = a;
	}
}

/* Registers and direct addresses are recorded as short values
 * (format.h): rsp as its change since the thread's previous one
 * (PATCH_DSP), the others less the value last recorded in their delta
 * slot (PATCH_DREG, PATCH_DADDR), so that pointers walking a block or an
 * array, and counters, take a 16-bit field; indirect jump destinations
 * less the jump's pc.  A probe's slot (key: a register, or 16 + the
 * access's operand number) is given the first time the generator asks
 * for it and kept (dslot_map), so that every skeleton reading a shared
 * probe names the same slot as the patch.  A probe in a loop takes the
 * next of its routine's slots in turn (from one the routine's address
 * picks), so that up to 16 of a routine's probes in loops never share
 * one: a hash of pc and key made two of a loop's five probes share a
 * slot about half the time, and each then recorded its value less the
 * other's, a pointer less a character, in 3 to 6 bytes instead of 1
 * (strkern's file 38% larger).  Other probes keep the hash: in
 * straight-line code (libc's and libm's routines) giving them turns too
 * made the files 7% larger, the values of neighbouring probes there
 * often being alike. */
static addrmap dslot_map;
static const routine *dslot_r;	/* the routine being generated */
static unsigned dslot_next;

/* The routine r's probes come next. */
static void dslot_routine(const routine *r)
{
	dslot_r = r;
	dslot_next = (unsigned)((r->start * 0x9e3779b97f4a7c15ull) >> 60);
}

static unsigned dslot(uint64_t pc, unsigned key, bool after)
{
	uint64_t k = (pc << 7 | (uint64_t)(key & 63) << 1 | after) + 1;
	uint32_t v;
	if (addrmap_get(&dslot_map, k, &v))
		return v;
	int32_t b = dslot_r ? cfg_block_of(dslot_r, pc) : -1;
	if (b >= 0 && dslot_r->blocks[b].loop >= 0) {
		v = dslot_next++ % PATCH_DSLOTS;
	} else {
		uint64_t h = (pc * 4 + after) * 0x9e3779b97f4a7c15ull +
			     key * 0xbf58476d1ce4e5b9ull;
		v = (uint32_t)(h >> 60) % PATCH_DSLOTS;
	}
	addrmap_put(&dslot_map, k, v);
	return v;
}

/* Whether register reg after the instruction at pc holds a byte or a
 * 16-bit word loaded and extended (movzx, movsx from 8 or 16 bits): it is
 * recorded as it is (PATCH_REG), which packs as small as its change would
 * (a character: one or two bytes either way), with a cheaper probe (no
 * delta slot to read and write). */
static bool narrow_load(uint64_t pc, unsigned reg, bool after)
{
	const routine *r = dslot_r;
	int32_t b = r && after ? cfg_block_of(r, pc) : -1;
	if (b < 0)
		return false;
	const block *bl = &r->blocks[b];
	for (uint32_t i = bl->first; i < bl->first + bl->ninsn; i++) {
		const insn *in = &r->insns[i];
		if (in->addr != pc)
			continue;
		return insn_is_narrow_load(in) && in->opd[0].reg == reg;
	}
	return false;
}

/* How the skeleton reads register reg recorded at pc. */
static const char *reg_in(uint64_t pc, unsigned reg, bool after)
{
	static char buf[4][24];
	static unsigned n;
	if (reg == R_SP)
		return "SP()";
	if (narrow_load(pc, reg, after))
		return "IN()";
	char *b = buf[n++ % 4];
	snprintf(b, sizeof buf[0], "DSMALL(%u)", dslot(pc, reg, after));
	return b;
}

static const char *addr_in(uint64_t pc, unsigned m)
{
	static char buf[24];
	snprintf(buf, sizeof buf, "DSMALL(%u)", dslot(pc, 16 + m, false));
	return buf;
}

/* A probed block shorter than a jmp rel32 becomes an int3 site in the
 * recorder; `enter` lines name the predecessors whose end may jump to its
 * trampoline instead (format.h): those that reach it by a direct jump or
 * by falling through, no instruction of them shared with another routine
 * (whose blocks could start inside) and none a routine's entry. */
static void add_enters(rgen *g, uint64_t bs, uint64_t be)
{
	const routine *r = g->r;
	patch *pt = g->g->pt;
	int32_t b = cfg_block_of(r, bs);
	uint32_t one;
	if (be - bs >= 5 || b < 0 || r->blocks[b].start != bs)
		return;
	for (size_t k = 0; k < pt->nenters; k++)
		if (pt->enters[k].block == bs)
			return;
	const block *bb = &r->blocks[b];
	for (uint32_t k = 0; k < bb->npred; k++) {
		const block *pb = &r->blocks[bb->pred[k]];
		if (!pb->ninsn)
			continue;
		const insn *last = &r->insns[pb->first + pb->ninsn - 1];
		bool falls = pb->end == bs && (last->flow == FLOW_NEXT || last->flow == FLOW_CJUMP);
		bool jumps = (last->flow == FLOW_JUMP || last->flow == FLOW_CJUMP) &&
			     last->target == bs;
		bool ok = falls || jumps;
		for (uint32_t j = 0; ok && j < pb->ninsn; j++) {
			uint64_t a = r->insns[pb->first + j].addr;
			ok = !addrmap_get(&g->g->shared, a, &one) &&
			     (j == 0 || !program_is_entry(g->g->p, a));
		}
		if (ok)
			patch_add_enter(pt, &(patch_enter){ bs, pb->start, pb->end });
	}
}

static void add_probe_in(rgen *g, uint32_t i, uint64_t bs, uint64_t be, uint8_t after,
			 patch_what what, uint8_t reg, uint32_t k, uint64_t word)
{
	uint64_t pc = g->r->insns[i].addr;
	if (what == PATCH_REG && reg != R_SP && !narrow_load(pc, reg, after == PATCH_AFTER)) {
		what = PATCH_DREG;
		word = dslot(pc, reg, after == PATCH_AFTER);
	} else if (what == PATCH_REG && reg == R_SP)
		what = PATCH_DSP;
	else if (what == PATCH_ADDR) {
		what = PATCH_DADDR;
		word = dslot(pc, 16 + word, false);	/* word: the analysis's operand */
	} else if (what == PATCH_WORD)
		what = PATCH_SWORD;
	else if (what == PATCH_TARGET)
		what = PATCH_STARGET;
	patch_probe pp = { .pc = g->r->insns[i].addr, .block_start = bs,
			   .block_end = be, .after = after, .what = what,
			   .reg = reg, .k = k, .word = word };
	patch_add_probe(g->g->pt, &pp);
	add_enters(g, bs, be);
}

static void add_probe(rgen *g, uint32_t i, uint8_t after, patch_what what, uint8_t reg,
		      uint32_t k, uint64_t word)
{
	uint64_t bs, be;
	probe_region(g, i, &bs, &be);
	add_probe_in(g, i, bs, be, after, what, reg, k, word);
}

/* The recorder numbers memory operands its own way (decode.c,
 * recorder_rank); our record lists them in access order.  Accesses decode
 * made up (enter's) are counted explicit ones first, then implicit ones. */
static uint32_t recorder_k(const insn *in, unsigned k)
{
	if (in->mem[k].rk != MEM_RK_NONE)
		return in->mem[k].rk;
	bool imp = in->mem[k].flags & MEM_IMPLICIT;
	uint32_t n = 0;
	for (unsigned j = 0; j < in->nmem; j++) {
		bool jimp = in->mem[j].flags & MEM_IMPLICIT;
		if (!imp && !jimp && j < k)
			n++;
		if (imp && (!jimp || j < k))
			n++;
	}
	return n;
}

static bool is_entry_param(const rgen *g, const probe *p)
{
	return g->g->internal[g->id] && p->kind == PR_REG_BEFORE && !p->rep &&
	       p->val < SSA_NVARS && p->insn == g->r->blocks[0].first;
}

/* ------------------------------------------- shared instructions */

static shared_at *shared_of(const gen *g, uint64_t pc)
{
	uint32_t k;
	return g->nsh && addrmap_get(&g->shidx, pc, &k) ? &g->sh[k] : NULL;
}

static bool sp_has(const shared_at *u, uint8_t cls, uint8_t rep, uint8_t key)
{
	for (uint32_t k = 0; u && k < u->n; k++)
		if (u->v[k].cls == cls && u->v[k].rep == rep && u->v[k].key == key)
			return true;
	return false;
}

static void sp_add(shared_at *u, uint8_t cls, uint8_t rep, uint8_t key)
{
	if (sp_has(u, cls, rep, key))
		return;
	u->v = xrealloc(u->v, (u->n + 1) * sizeof *u->v);
	u->v[u->n++] = (sprobe){ cls, rep, key };
}

static int sp_cmp(const void *x, const void *y)
{
	const sprobe *a = x, *b = y;
	if (a->cls != b->cls)
		return a->cls < b->cls ? -1 : 1;
	if (a->rep != b->rep)
		return a->rep < b->rep ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

static uint8_t sp_class(const probe *p)
{
	switch (p->kind) {
	case PR_REG_BEFORE:
		return SP_REG_BEFORE;
	case PR_REG_AFTER:
		return SP_REG_AFTER;
	case PR_ADDR:
		return SP_ADDR;
	case PR_BRANCH:
		return SP_BRANCH;
	default:
		return SP_TARGET;
	}
}

static uint8_t sp_key(const probe *p)
{
	return p->kind == PR_ADDR ? p->k : p->kind == PR_BRANCH || p->kind == PR_TARGET ? 0 : p->reg;
}

/* What routine g needs at shared instruction i, into the union u. */
static void shared_collect(rgen *g, uint32_t i, shared_at *u)
{
	const analysis *a = &g->a;
	uint64_t bs, be;
	if (g->returned_at[i])
		sp_add(u, SP_RETURNED, 0, 0);
	for (uint32_t k = g->probe_first[i]; k < a->nprobes && a->probes[k].insn == i; k++)
		if (!is_entry_param(g, &a->probes[k]))
			sp_add(u, sp_class(&a->probes[k]), a->probes[k].rep, sp_key(&a->probes[k]));
	for (uint32_t k = 0; k < g->nargs; k++)
		if (g->args[k].insn == i && !g->args[k].e)
			sp_add(u, SP_ARG, 0, g->args[k].var);
	probe_region(g, i, &bs, &be);
	if (!u->region || bs > u->bs)
		u->bs = bs;
	if (!u->region || be < u->be)
		u->be = be;
	u->region = true;
}

/* A conditional jump's outcome is a `tbit` probe (PATCH_TBIT) when the
 * recorder can take it from the flags (setcc); jrcxz and loop keep
 * `taken`, which the recorder makes by a jump of its own. */
static bool branch_packed(const insn *in)
{
	return in->cond != CC_RCXZ && in->cond != CC_LOOP;
}

static patch_what branch_what(const insn *in)
{
	return branch_packed(in) ? PATCH_TBIT : PATCH_TAKEN;
}

/* The union's probes, once, in the order every skeleton reads them. */
static void patch_shared(rgen *g, uint32_t i, shared_at *u)
{
	static const patch_what what[] = {
		[SP_RETURNED] = PATCH_WORD, [SP_REG_BEFORE] = PATCH_REG,
		[SP_ADDR] = PATCH_ADDR, [SP_ARG] = PATCH_REG, [SP_BRANCH] = PATCH_TAKEN,
		[SP_TARGET] = PATCH_TARGET, [SP_REG_AFTER] = PATCH_REG,
	};
	for (uint32_t k = 0; k < u->n; k++) {
		const sprobe *x = &u->v[k];
		bool reg = what[x->cls] == PATCH_REG;
		patch_what w = x->cls == SP_BRANCH ? branch_what(&g->r->insns[i]) : what[x->cls];
		add_probe_in(g, i, u->bs, u->be, x->cls == SP_REG_AFTER, w,
			     reg ? x->key : 0,
			     x->cls == SP_ADDR ? recorder_k(&g->r->insns[i], x->key) : 0,
			     x->cls == SP_RETURNED ? SK_RETURNED : x->cls == SP_ADDR ? x->key : 0);
	}
	u->written = true;
}

/* Whether jump i is an exit-value loop's exit (not recorded). */
static bool exit_jump(const rgen *g, uint32_t i)
{
	int32_t l = g->r->blocks[g->a.s.block_of[i]].loop;
	for (uint32_t j = 0; g->xl && l >= 0 && j < g->xl[l].n; j++)
		if (g->xl[l].x[j].insn == i)
			return true;
	return false;
}

/* Whether jump i is not replayed: both ways lead to the same place
 * doing nothing the trace shows (plan_elisions). */
static bool elided(const rgen *g, uint32_t i)
{
	uint32_t b = g->a.s.block_of[i];
	return g->elide_to && g->elide_to[b] >= 0 &&
	       i == g->r->blocks[b].first + g->r->blocks[b].ninsn - 1;
}

/* The system call ending at insns[i] of block b makes a process: its
 * number (56 clone, 57 fork, 58 vfork, 435 clone3) set in rax by a
 * `mov $n` earlier in the block, not written between; else 0. */
static uint64_t process_syscall(const routine *r, const block *b, uint32_t i)
{
	if (r->insns[i].op != OP_SYSCALL || r->insns[i].flow == FLOW_HALT)
		return 0;
	for (uint32_t j = i; j-- > b->first;) {
		const insn *in = &r->insns[j];
		if (!(in->writes & REG_BIT(R_AX)))
			continue;
		if (in->op != OP_MOV || in->nopd != 2 || in->opd[0].type != OPD_REG ||
		    in->opd[0].reg != R_AX || in->opd[0].size < 4 || in->opd[1].type != OPD_IMM)
			return 0;
		uint64_t n = (uint64_t)in->opd[1].imm;
		return n == 56 || n == 57 || n == 58 || n == 435 ? n : 0;
	}
	return 0;
}

static int32_t link_of(const gen *g, uint64_t target);
static bool reachable(const routine *r, uint32_t b);
static bool is_header(const routine *r, uint32_t b);
static bool loop_within(const routine *r, int32_t x, uint32_t l);

/* The link number of the PLT call whose return site is instruction i
 * when the skeleton can read i's RETURNED word at the call itself (only
 * that call enters i's block: patch_qret), or -1. */
static int32_t qret_link(const rgen *g, uint32_t i)
{
	const routine *r = g->r;
	const block *n = &r->blocks[g->a.s.block_of[i]];
	if (n->first != i || n->npred != 1)
		return -1;
	const block *c = &r->blocks[n->pred[0]];
	const insn *last = &r->insns[c->first + c->ninsn - 1];
	if (last->flow != FLOW_CALL || !(c->flags & BLK_CALL) || (c->flags & BLK_SETJMP) ||
	    c->end != n->start || !reachable(r, n->pred[0]))
		return -1;
	return link_of(g->g, last->target);
}

/* Whether routine r runs code outside it in its own frame, whose tails
 * find_extern_tails cannot follow from r: a routine after setjmp or at a
 * landing pad, or the code a conditional jump of r falls into. */
static bool runs_other_code(const program *p, const routine *r)
{
	for (uint32_t b = 0; b < r->nblocks; b++) {
		const block *bl = &r->blocks[b];
		if (!bl->ninsn)
			continue;
		const insn *last = &r->insns[bl->first + bl->ninsn - 1];
		int n = cfg_block_of(r, bl->end);
		if ((bl->flags & BLK_SETJMP) ||
		    (last->flow == FLOW_CJUMP && (n < 0 || r->blocks[n].start != bl->end)))
			return true;
	}
	for (size_t i = 0; i < p->bin.nlp; i++)
		if (cfg_block_of(r, p->bin.lp_sites[i]) >= 0)
			return true;
	return false;
}

/* Whether the routine's skeleton returns to its caller only by the
 * routine's own ret (a `closed` line): no extern tail (which includes
 * runs_other_code), and not a setjmp continuation. */
static bool routine_closed(const rgen *g)
{
	return !g->g->extern_tail[g->id] && !g->g->resume[g->id];
}

static void patch_insn(rgen *g, uint32_t i)
{
	const analysis *a = &g->a;
	if (g->sliced && g->sliced[g->a.s.block_of[i]])
		return;
	/* first of its 'after' probes: a child sharing the memory records
	 * nothing from there (rec_proc.c, rec_vm_mark) */
	uint64_t nr = process_syscall(g->r, &g->r->blocks[g->a.s.block_of[i]], i);
	if (nr == 56 || nr == 435)
		add_probe(g, i, PATCH_AFTER, PATCH_VMMARK, 0, 0, nr);
	size_t np0 = g->g->pt->nprobes;
	bool entry = i == g->r->blocks[0].first && !g->g->internal[g->id];
	if (entry)
		add_probe(g, i, false, PATCH_WORD, 0, 0, SK_ENTRY(g->id));
	/* which setjmp frame a longjmp went to (skel_rt.h: sk_resume) */
	if (i == g->r->blocks[0].first && g->g->resume[g->id])
		add_probe(g, i, false, PATCH_REG, R_SP, 0, 0);
	shared_at *u = shared_of(g->g, g->r->insns[i].addr);
	if (u) {
		if (!u->written)
			patch_shared(g, i, u);
		return;
	}
	if (g->returned_at[i]) {
		add_probe(g, i, false, PATCH_WORD, 0, 0, SK_RETURNED);
		int32_t n = qret_link(g, i);
		if (n >= 0) {
			patch_add_qret(g->g->pt, &(patch_qret){ g->r->insns[i].addr, (uint32_t)n, 0 });
			g->qret_at[i] = 1;
		}
	}
	for (uint32_t l = 0; g->xl && l < g->r->nloops; l++)
		for (uint32_t j = 0; j < g->xl[l].n; j++) {
			const struct loop_exit *x = &g->xl[l].x[j];
			const block *to = &g->r->blocks[x->block];
			uint8_t pos = PATCH_BEFORE;
			if (g->xl[l].edge && x->insn != i)
				continue;
			if (g->xl[l].edge)
				pos = g->r->insns[i].target == to->start ? PATCH_ON_TAKEN
									 : PATCH_ON_FALL;
			else if (to->first != i)
				continue;
			if (g->xl[l].n > 1)
				add_probe(g, i, pos, PATCH_WORD, 0, 0, XL_WORD(j));
			add_probe(g, i, pos, PATCH_REG, x->reg, 0, 0);
		}
	for (uint32_t k = g->probe_first[i]; k < a->nprobes && a->probes[k].insn == i; k++) {
		const probe *p = &a->probes[k];
		if (is_entry_param(g, p) ||
		    (p->kind == PR_BRANCH && (exit_jump(g, i) || elided(g, i))))
			continue;
		switch (p->kind) {
		case PR_REG_BEFORE:
			/* rsp right after the entry word: a linked call
			 * enters past both (patch_link) */
			if (entry && p->reg == R_SP && !p->rep && g->g->pt->nprobes == np0 + 1) {
				uint64_t bs, be;
				probe_region(g, i, &bs, &be);
				add_probe_in(g, i, bs, be, PATCH_BEFORE, PATCH_EDSP, R_SP, 0, 0);
				g->esp_k1 = k + 1;
				/* a linked call to it may return quietly */
				if (routine_closed(g))
					patch_add_closed(g->g->pt, g->r->insns[i].addr);
				break;
			}
			add_probe(g, i, false, PATCH_REG, p->reg, 0, 0);
			break;
		case PR_REG_AFTER:
			if (g->tb_at && g->tb_at[i])	/* recorded at its jump */
				break;
			add_probe(g, i, true, PATCH_REG, p->reg, 0, 0);
			break;
		case PR_ADDR:
			add_probe(g, i, false, PATCH_ADDR, 0, recorder_k(&g->r->insns[i], p->k), p->k);
			break;
		case PR_BRANCH:
			if (g->tb_val && g->tb_val[i])
				add_probe(g, i, false, PATCH_TREG, g->tb_reg[i], 0, g->tb_way[i]);
			else
				add_probe(g, i, false, branch_what(&g->r->insns[i]), 0, 0, 0);
			break;
		case PR_TARGET:
			add_probe(g, i, false, PATCH_TARGET, 0, 0, 0);
			break;
		}
	}
	/* a call's recorded arguments fire after its other before-probes; a
	 * call has no branch, target or after-probes to come between */
	for (uint32_t k = 0; k < g->nargs; k++)
		if (g->args[k].insn == i && !g->args[k].e)
			add_probe(g, i, false, PATCH_REG, g->args[k].var, 0, 0);
}

/* A loop without exit that records nothing (for (;;) over a loop nest,
 * left only by a handler's longjmp, a cancellation or the process's
 * exit) gets a tick at its header: a control word per iteration.  A
 * signal that comes in such a loop is held for the thread's next probe;
 * without one it never came, and the watchdog ran the handler where the
 * replay cannot place it.  Loops with a call are left as they are (the
 * callee may record).  np0: the routine's first probe in the patch. */
static void plan_ticks(rgen *g, size_t np0)
{
	const routine *r = g->r;
	patch *pt = g->g->pt;
	for (uint32_t l = 0; l < r->nloops; l++) {
		const loop *L = &r->loops[l];
		const block *h = &r->blocks[L->header];
		if (L->nexits || L->header == 0 || !h->ninsn || !reachable(r, L->header) ||
		    (g->sliced && g->sliced[L->header]) ||
		    shared_of(g->g, r->insns[h->first].addr))
			continue;
		bool quiet = true;
		for (uint32_t k = 0; quiet && k < L->nblocks; k++) {
			const block *b = &r->blocks[L->blocks[k]];
			for (uint32_t i = b->first; quiet && i < b->first + b->ninsn; i++)
				quiet = r->insns[i].flow != FLOW_CALL && r->insns[i].flow != FLOW_ICALL;
			for (size_t q = np0; quiet && q < pt->nprobes; q++)
				quiet = !(pt->probes[q].pc >= b->start && pt->probes[q].pc < b->end);
		}
		if (!quiet)
			continue;
		if (!g->tick)
			g->tick = xcalloc(r->nloops, 1);
		g->tick[l] = 1;
		/* in pc order among the routine's probes */
		size_t n0 = pt->nprobes;
		uint64_t pc = r->insns[h->first].addr;
		add_probe(g, h->first, false, PATCH_WORD, 0, 0, SK_TICK);
		size_t at = np0;
		while (at < n0 && pt->probes[at].pc <= pc)
			at++;
		if (at < n0) {
			patch_probe tp = pt->probes[n0];
			memmove(&pt->probes[at + 1], &pt->probes[at], (n0 - at) * sizeof tp);
			pt->probes[at] = tp;
		}
	}
}

/* ------------------------------------------------------- the skeleton */

/* A routine's id is its index in p->routines. */
static int32_t routine_id(const program *p, uint64_t start)
{
	const routine *r = program_routine_at(p, start);
	return r && r->nblocks ? (int32_t)(r - p->routines) : -1;
}

/* The link number of the PLT stub at `target` (patch_link), or -1. */
static int32_t link_of(const gen *g, uint64_t target)
{
	uint32_t k;
	return addrmap_get(&g->links, target, &k) ? (int32_t)k - 1 : -1;
}

/* Whether control may come back from the call at the end of block b
 * through code we do not analyze, so a RETURNED word marks the return. */
static bool call_needs_returned(const rgen *g, const block *b)
{
	if (!b->call_target)
		return true;
	int32_t id = routine_id(g->g->p, b->call_target);
	return id < 0 || g->g->extern_tail[id];
}

/* Exit j of loop l: its trip count from the register recorded there. */
static void emit_trip_of(rgen *g, uint32_t l, uint32_t j)
{
	const struct loop_exit *x = &g->xl[l].x[j];
	const insn *at = &g->r->insns[g->xl[l].edge ? x->insn : g->r->blocks[x->block].first];
	FILE *f = g->g->f;
	fprintf(f, "N%u = sk_trip(t, 0x%" PRIx64 "ull, %u, ", l, at->addr,
		dslot(at->addr, x->reg, false));
	emit_expr(f, x->e0);
	fprintf(f, ", %" PRId64 "); ", x->c);
}

/* Entering exit-value loop l: its trip count (skel_rt.h, sk_trip), and
 * with several exits, first the number of the one it takes.  A thread
 * that died in it has neither: the loop runs to the faulting access. */
static void emit_trip(rgen *g, uint32_t l)
{
	const exit_loop *x = &g->xl[l];
	FILE *f = g->g->f;
	fprintf(f, "if (sk_trip_dead(t, X%u_pcs, sizeof X%u_pcs / 8)) { N%u = W%u = UINT64_MAX; } "
		"else ", l, l, l, l);
	if (x->n == 1) {
		fputs("{ ", f);
		emit_trip_of(g, l, 0);
		fputs("} ", f);
		return;
	}
	fprintf(f, "switch (W%u = 0 - SMALL() - 1) { ", l);
	for (uint32_t j = 0; j < x->n; j++) {
		fprintf(f, "case %u: ", j);
		emit_trip_of(g, l, j);
		fputs("break; ", f);
	}
	fprintf(f, "default: sk_desync(t, 0x%" PRIx64 "ull, \"a loop's exit number\", W%u); } ",
		g->r->insns[g->r->blocks[x->x[0].block].first].addr, l);
}

/* An edge into an exit-value loop's exit block from outside the loop:
 * the words recorded there (for the loop's exit) are read and dropped;
 * their delta slot takes the value, as in the recorder. */
static void exit_words(rgen *g, uint32_t from, uint32_t to)
{
	const routine *r = g->r;
	for (uint32_t l = 0; g->xl && l < r->nloops; l++)
		for (uint32_t j = 0; j < g->xl[l].n; j++) {
			const struct loop_exit *x = &g->xl[l].x[j];
			if (g->xl[l].edge || x->block != to || block_in_loop(r, from, l))
				continue;
			uint64_t pc = r->insns[r->blocks[to].first].addr;
			if (g->xl[l].n > 1)
				fputs("(void)SMALL(); ", g->g->f);
			fprintf(g->g->f, "(void)DSMALL(%u); ", dslot(pc, x->reg, false));
		}
}

/* The edge from -> to sets the φs of `to` the skeleton carries
 * (plan_carried) to their values on that edge, all at once: each
 * argument is read before any of them is set, as a φ's are (one may be
 * another's argument on a back edge).  Before the counters move: the
 * arguments are values of the iteration that ends here. */
static void emit_carried(rgen *g, uint32_t from, uint32_t to)
{
	const routine *r = g->r;
	FILE *f = g->g->f;
	uint32_t n = 0;
	for (uint32_t c = 0; c < g->ncarried; c++) {
		const ssa_value *sv = &g->a.s.vals[g->carried[c]];
		if (sv->kind != V_PHI || sv->block != to)
			continue;
		uint32_t k = 0;
		while (k < r->blocks[to].npred && r->blocks[to].pred[k] != from)
			k++;
		/* plan_carried keeps only blocks entered by their own edges */
		assert(k < r->blocks[to].npred && k < sv->nargs);
		fprintf(f, "uint64_t cv%u = ", n++);
		emit_expr(f, expr_of_value(g->a.ec, sv->args[k]));
		fputs("; ", f);
	}
	n = 0;
	for (uint32_t c = 0; c < g->ncarried; c++)
		if (g->a.s.vals[g->carried[c]].kind == V_PHI && g->a.s.vals[g->carried[c]].block == to)
			fprintf(f, "v%u = cv%u; ", g->carried[c], n++);
}

static void emit_edge(rgen *g, uint32_t from, uint32_t to)
{
	const routine *r = g->r;
	FILE *f = g->g->f;
	if (g->slice_to && g->slice_to[to] >= 0 && !g->sliced[from]) {
		/* a sliced loop: straight to where it leads */
		emit_edge(g, from, (uint32_t)g->slice_to[to]);
		return;
	}
	fputs("{ ", f);
	emit_carried(g, from, to);
	exit_words(g, from, to);
	for (uint32_t l = 0; l < r->nloops; l++) {
		if (!g->counter_used[l] || r->loops[l].header != to)
			continue;
		bool inside = false;
		for (int32_t x = r->blocks[from].loop; x >= 0; x = r->loops[x].parent)
			inside |= (uint32_t)x == l;
		if (!inside && g->xl && g->xl[l].n)
			emit_trip(g, l);
		fprintf(f, inside ? "I%u++; " : "I%u = 0; ", l);
	}
	if (to == 0)
		fprintf(f, "goto B0_again; }");
	else
		fprintf(f, "goto B_%" PRIx64 "; }", r->blocks[to].start);
}

/* The values a call at pc passes (plan_call_args), as a<var>, in a block
 * the caller closes. */
static void emit_call_args(rgen *g, uint64_t pc)
{
	FILE *f = g->g->f;
	uint32_t i = (uint32_t)cfg_block_of(g->r, pc);
	i = g->r->blocks[i].first + g->r->blocks[i].ninsn - 1;
	bool call = g->r->insns[i].flow == FLOW_CALL;
	fputs("\t{\n", f);
	for (uint32_t k = 0; k < g->nargs; k++) {
		const call_arg *x = &g->args[k];
		if (x->insn != i)
			continue;
		fprintf(f, "\t\tuint64_t a%u = ", x->var);
		if (x->e) {
			/* recorded for another routine sharing this call */
			bool drop = sp_has(shared_of(g->g, g->r->insns[i].addr), SP_ARG, 0, x->var);
			if (drop)
				fprintf(f, "((void)%s, ", reg_in(g->r->insns[i].addr, x->var, false));
			emit_expr(f, x->e);
			fputs(drop ? ")" : "", f);
		} else {
			fprintf(f, "%s%s", reg_in(g->r->insns[i].addr, x->var, false),
				x->var == R_SP && call ? " - 8" : "");
		}
		fputs(";\n", f);
	}
}

static void emit_call_analyzed(rgen *g, uint64_t pc, uint64_t target)
{
	int32_t id = routine_id(g->g->p, target);
	FILE *f = g->g->f;
	if (!g->g->internal[id]) {
		fprintf(f, "\tsk_enter(t, 0x%" PRIx64 "ull, %d);%s r_%d(t);\n", pc, id,
			g->g->resume[id] ? " (void)SP();" : "", id);
		return;
	}
	emit_call_args(g, pc);
	fprintf(f, "\t\tr_%d(t", id);
	for (unsigned v = 0; v < SSA_NVARS; v++)
		if (g->g->entry_mask[id] & (1u << v))
			fprintf(f, ", a%u", v);
	fputs(");\n\t}\n", f);
}

/* A call or tail jump at pc to PLT stub number n (patch_link): its
 * callee's skeleton when the recorder linked the slot; after a call, as
 * for any call out, what runs until it returns (a tail jump leaves that
 * to whoever waits for this routine's return). */
static void emit_plt_call(rgen *g, uint64_t pc, int32_t n, bool tail)
{
	emit_call_args(g, pc);
	const routine *r = g->r;
	int32_t nb = tail ? -1 : cfg_block_of(r, r->blocks[cfg_block_of(r, pc)].end);
	uint32_t ri = nb >= 0 ? r->blocks[nb].first : 0;
	if (nb >= 0 && g->qret_at[ri])	/* its return site's word, if recorded */
		fprintf(g->g->f, "\t\tif (!sk_plt_q(t, %d, a%u))\n\t\t\tsk_expect(t, 0x%"
			PRIx64 "ull, SK_RETURNED);\n\t}\n", n, R_SP, r->insns[ri].addr);
	else
		fprintf(g->g->f, "\t\t%s(t, %d, a%u);\n\t}\n", tail ? "sk_plt_linked" : "sk_plt",
			n, R_SP);
}

/* Leaving the routine to `target` (a tail call, or falling into the next
 * routine): an analyzed target replays here, anything else returns to the
 * caller, which waits for the RETURNED word. */
static void emit_leave(rgen *g, uint64_t pc, uint64_t target)
{
	if (routine_id(g->g->p, target) >= 0)
		emit_call_analyzed(g, pc, target);
	else if (link_of(g->g, target) >= 0)
		emit_plt_call(g, pc, link_of(g->g, target), true);
	fputs("\treturn;\n", g->g->f);
}

static const branch_info *branch_at(const analysis *a, uint32_t i)
{
	for (uint32_t k = 0; k < a->nbr; k++)
		if (a->br[k].insn == i)
			return &a->br[k];
	return NULL;
}

static void emit_condition(FILE *f, const branch_info *b)
{
	static const char *const ops[] = {
		[CC_B] = "<", [CC_AE] = ">=", [CC_E] = "==", [CC_NE] = "!=",
		[CC_BE] = "<=", [CC_A] = ">", [CC_L] = "<", [CC_GE] = ">=",
		[CC_LE] = "<=", [CC_G] = ">",
	};
	unsigned w = b->bits;
	bool sgn = b->cc >= CC_L;
	if (b->cc == CC_S || b->cc == CC_NS) {
		fprintf(f, "(int%u_t)(", w);
		emit_expr(f, b->lhs);
		fputs(" - ", f);
		emit_expr(f, b->rhs);
		fprintf(f, ") %s 0", b->cc == CC_S ? "<" : ">=");
		return;
	}
	fprintf(f, "(%sint%u_t)(", sgn ? "" : "u", w);
	emit_expr(f, b->lhs);
	fprintf(f, ") %s (%sint%u_t)(", ops[b->cc], sgn ? "" : "u", w);
	emit_expr(f, b->rhs);
	fputc(')', f);
}

static void emit_cjump(rgen *g, uint32_t bi, uint32_t i)
{
	const routine *r = g->r;
	const block *b = &r->blocks[bi];
	const insn *in = &r->insns[i];
	FILE *f = g->g->f;
	const branch_info *br = branch_at(&g->a, i);
	if (elided(g, i)) {
		fputc('\t', f);
		emit_edge(g, bi, (uint32_t)g->elide_to[bi]);
		fputc('\n', f);
		return;
	}
	fputs("\tif (", f);
	int32_t xl = b->loop;
	uint32_t xj = 0;
	while (g->xl && xl >= 0 && xj < g->xl[xl].n && g->xl[xl].x[xj].insn != i)
		xj++;
	/* a computed exit keeps its condition (its values are read for it);
	 * the recorded ones leave in iteration N, by exit W */
	if (g->xl && xl >= 0 && xj < g->xl[xl].n && !(br && br->how == BR_COMPUTED)) {
		bool exits = r->blocks[g->xl[xl].x[xj].block].start == in->target;
		fprintf(f, "%s(I%d == N%d", exits ? "" : "!", xl, xl);
		if (g->xl[xl].n > 1)
			fprintf(f, " && W%d == %u", xl, xj);
		fputc(')', f);
	} else if (br && br->how == BR_COMPUTED) {
		/* recorded for another routine sharing this jump */
		if (sp_has(shared_of(g->g, in->addr), SP_BRANCH, 0, 0))
			fputs(branch_packed(in) ? "(void)BIT(), " : "(void)IN(), ", f);
		emit_condition(f, br);
	} else if (g->tb_val && g->tb_val[i]) {
		/* read with the value (plan_tbytes) */
		fprintf(f, "%stb%u", g->tb_way[i] == PATCH_ON_FALL ? "!" : "", g->tb_val[i] - 1);
	} else {
		fputs(branch_packed(in) ? "BIT()" : "IN()", f);
	}
	fputs(") ", f);
	int t = cfg_block_of(r, in->target);
	if (t >= 0 && r->blocks[t].start == in->target && !((b->flags & BLK_TAILCALL) &&
							    b->call_target == in->target)) {
		emit_edge(g, bi, (uint32_t)t);
	} else {
		fputs("{\n", f);
		emit_leave(g, in->addr, in->target);
		fputs("\t}", f);
	}
	fputs("\n", f);
	int n = cfg_block_of(r, b->end);
	if (n >= 0 && r->blocks[n].start == b->end) {
		fputc('\t', f);
		emit_edge(g, bi, (uint32_t)n);
		fputc('\n', f);
	} else {
		emit_leave(g, in->addr, b->end);
	}
}

/* The destination of block b's table jump at pc, read from the table
 * (ivres.c, classify_tables) at the address its load computes, which
 * must be one of its entries; a word another routine sharing the jump
 * records there is read too. */
static void emit_table_target(rgen *g, const block *b, uint64_t pc, const access_info *x)
{
	FILE *f = g->g->f;
	fprintf(f, "\t{ static const uint64_t jt[%u] = {", b->jt_count);
	for (uint32_t k = 0; k < b->jt_count; k++)
		fprintf(f, "%s0x%" PRIx64 "ull", !k ? "\n\t\t" : k % 4 ? ", " : ",\n\t\t",
			b->jt_targets[k]);
	fputs(" };\n", f);
	if (sp_has(shared_of(g->g, pc), SP_TARGET, 0, 0))
		fprintf(f, "\t(void)TARGET(0x%" PRIx64 "ull);\n", pc);
	fputs("\tuint64_t jo = (", f);
	emit_expr(f, x->addr);
	fprintf(f, ") - t->bias - 0x%" PRIx64 "ull;\n", b->jt_base);
	fprintf(f, "\tif (jo %% %u || jo / %u >= %u) sk_desync(t, 0x%" PRIx64
		"ull, \"a jump table's entry address, less the table's\", jo);\n",
		b->jt_size, b->jt_size, b->jt_count, pc);
	fprintf(f, "\tuint64_t to = jt[jo / %u]; switch (to) {\n", b->jt_size);
	g->g->st->tables++;
}

/* Whether block b loads rsp from memory (mov rsp, [m]; pop rsp) before
 * insn i: no frame of the program's goes so, but __builtin_longjmp and
 * hand-made context switches do, and an indirect jump after it lands in
 * another frame (or stack) that the skeleton's own frames cannot follow.
 * rsp from a register (mov rsp, rbp; lea rsp, [rbp-8]) is a frame's
 * teardown, before a tail call through a pointer. */
static bool loads_sp(const routine *r, const block *b, uint32_t i)
{
	for (uint32_t k = b->first; k < i; k++) {
		const insn *in = &r->insns[k];
		if (in->nopd >= 1 && in->opd[0].type == OPD_REG && in->opd[0].reg == R_SP &&
		    ((in->op == OP_MOV && in->nopd >= 2 && in->opd[1].type == OPD_MEM) ||
		     in->op == OP_POP))
			return true;
	}
	return false;
}

static void emit_indirect_jump(rgen *g, uint32_t bi, uint32_t i)
{
	const routine *r = g->r;
	const block *b = &r->blocks[bi];
	FILE *f = g->g->f;
	bool table = g->a.jt_acc && g->a.jt_acc[bi] >= 0;
	if (!table && loads_sp(r, b, i)) {
		fprintf(f, "\tsk_stack_switch(t, 0x%" PRIx64 "ull);\n\treturn;\n", r->insns[i].addr);
		g->g->st->stack_switches++;
		return;
	}
	if (table)
		emit_table_target(g, b, r->insns[i].addr, &g->a.acc[g->a.jt_acc[bi]]);
	else
		fprintf(f, "\t{ uint64_t to = TARGET(0x%" PRIx64 "ull); switch (to) {\n",
			r->insns[i].addr);
	/* a jump table's targets, or an unresolved jump's possible targets
	 * in the routine (cfg.c): the analysis knows these edges only */
	for (uint32_t k = 0; k < b->nsucc; k++) {
		uint32_t s = b->succ[k];
		fprintf(f, "\tcase 0x%" PRIx64 "ull: ", r->blocks[s].start);
		emit_edge(g, bi, s);
		fputc('\n', f);
	}
	/* a table's tail calls (cfg.c): replayed here as a direct tail call
	 * is, so that a caller that passed this routine's entry values (an
	 * internal call) also sees the callee's entry word read */
	for (uint32_t k = 0; k < b->ntails; k++) {
		fprintf(f, "\tcase 0x%" PRIx64 "ull: {\n", b->tails[k]);
		emit_leave(g, r->insns[i].addr, b->tails[k]);
		fputs("\t}\n", f);
	}
	/* elsewhere: a tail call through a pointer (to an analyzed routine,
	 * whose entry word follows, or out of the analyzed code) returns to
	 * the dispatch loop; sk_ijump_other stops on a target it cannot be */
	fprintf(f, "\tdefault: sk_ijump_other(t, 0x%" PRIx64 "ull, to); return;\n"
		"\t} }\n", r->insns[i].addr);
}

/* Whether r calls setjmp returning to its own start (setjmp in a loop of
 * the routine after an earlier setjmp call). */
static bool setjmp_to_self(const routine *r)
{
	for (uint32_t b = 0; b < r->nblocks; b++)
		if (r->blocks[b].flags & BLK_SETJMP && r->blocks[b].end == r->start)
			return true;
	return false;
}

/* A call to setjmp: the routine after it runs now and after every
 * longjmp to it (skel_rt.h: SK_SETJMP).  Called from that routine itself,
 * the skeleton restarts it instead, as a longjmp to the innermost setjmp
 * would (its loops' counters start again). */
static void emit_setjmp(rgen *g, uint64_t pc, uint32_t id)
{
	FILE *f = g->g->f;
	if (id != g->id) {
		fprintf(f, "\tSK_SETJMP(0x%" PRIx64 "ull, %u, r_%u);\n\treturn;\n", pc, id, id);
		return;
	}
	fprintf(f, "\tsk_setjmp_again(t, 0x%" PRIx64 "ull, SK_ENTRY(%u) + t->mbits);\n", pc, id);
	for (uint32_t l = 0; l < g->r->nloops; l++)
		if (g->counter_used[l] && g->r->loops[l].header == 0)
			fprintf(f, "\tI%u = 0;\n", l);
	fputs("\tgoto B0;\n", f);
}

/* Whether insn i has a probe of that kind. */
static bool has_probe(const rgen *g, uint32_t i, int kind)
{
	const analysis *a = &g->a;
	for (uint32_t k = g->probe_first[i]; k < a->nprobes && a->probes[k].insn == i; k++)
		if ((int)a->probes[k].kind == kind)
			return true;
	return false;
}

/* Whether no other way leads into the straight-line code from the mov
 * at `def` to the exit syscall ending block bi (cfg.c: rax traced back
 * along it): each block on the way has one predecessor, falling into it. */
static bool exit_rax_sure(const routine *r, uint32_t bi, uint64_t def)
{
	for (int n = 0; n < 4; n++) {
		const block *b = &r->blocks[bi];
		if (def >= b->start && def < b->end)
			return true;
		if (b->npred != 1 || r->blocks[b->pred[0]].end != b->start || bi == 0)
			return false;
		bi = b->pred[0];
	}
	return false;
}

static void emit_terminator(rgen *g, uint32_t bi)
{
	const routine *r = g->r;
	const block *b = &r->blocks[bi];
	uint32_t i = b->first + b->ninsn - 1;
	const insn *in = &r->insns[i];
	FILE *f = g->g->f;
	int next = cfg_block_of(r, b->end);

	switch (in->flow) {
	case FLOW_CJUMP:
		emit_cjump(g, bi, i);
		return;
	case FLOW_IJUMP:
		emit_indirect_jump(g, bi, i);
		return;
	case FLOW_HALT:
		/* exit: the thread's stream ends here (sk_thread_exit) */
		if (in->op == OP_SYSCALL) {
			if (exit_rax_sure(r, bi, in->target))
				fprintf(f, "\tsk_thread_exit(t, 0x%" PRIx64 "ull);\n", in->addr);
			else
				fprintf(f, "\tsk_desync(t, 0x%" PRIx64 "ull, \"a system call the "
					"analysis took for exit, reached another way\", 0);\n",
					in->addr);
		} else {
			/* a trap (ud2, int3, hlt): the thread died there, or
			 * its handler left by longjmp (FAULT_POINT) */
			fprintf(f, "\tsk_trap(t, 0x%" PRIx64 "ull);\n", in->addr);
		}
		fputs("\treturn;\n", f);
		return;
	case FLOW_RET:
		fputs("\treturn;\n", f);
		return;
	case FLOW_CALL:
	case FLOW_ICALL:
		emit_call_pad(g, in);
		if (b->flags & BLK_SETJMP && routine_id(g->g->p, b->end) >= 0) {
			emit_setjmp(g, in->addr, (uint32_t)routine_id(g->g->p, b->end));
			return;
		}
		if (in->flow == FLOW_ICALL && has_probe(g, i, PR_TARGET))
			fprintf(f, "\tsk_icall_check(t, 0x%" PRIx64 "ull, TARGET(0x%" PRIx64
				"ull));\n", in->addr, in->addr);
		if (in->flow == FLOW_CALL && !call_needs_returned(g, b) &&
		    routine_id(g->g->p, in->target) >= 0 &&
		    !strcmp(g->g->p->routines[routine_id(g->g->p, in->target)].name,
			    "skel_roi_begin")) {
			char name[72];
			if (roi_marker_name(&g->g->p->bin, g->r, b, i, name, sizeof name))
				fprintf(f, "\tSK_ROI_NAME(t, \"%s\");\n", name);
		}
		if (in->flow == FLOW_CALL && !call_needs_returned(g, b))
			emit_call_analyzed(g, in->addr, in->target);
		else if (in->flow == FLOW_CALL && link_of(g->g, in->target) >= 0)
			emit_plt_call(g, in->addr, link_of(g->g, in->target), false);
		else
			fputs("\tsk_external(t);\n", f);
		if (b->flags & BLK_NORETURN || !b->nsucc) {
			fputs("\treturn;\n", f);
			return;
		}
		break;
	case FLOW_JUMP:
		if (b->flags & BLK_TAILCALL) {
			emit_leave(g, in->addr, in->target);
			return;
		}
		fputc('\t', f);
		emit_edge(g, bi, b->succ[0]);
		fputc('\n', f);
		return;
	default:
		if (b->flags & BLK_TAILCALL) {
			emit_leave(g, in->addr, b->end);
			return;
		}
		break;
	}
	if (next >= 0 && r->blocks[next].start == b->end) {
		fputc('\t', f);
		emit_edge(g, bi, (uint32_t)next);
		fputc('\n', f);
	} else if (in->flow == FLOW_CALL || in->flow == FLOW_ICALL) {
		fputs("\treturn;\n", f);
	} else {
		/* the code after this block was not decoded as a block of
		 * its own (overlapping decodes): stop rather than guess */
		fprintf(f, "\tsk_desync(t, 0x%" PRIx64 "ull, \"the analysis has no "
			"block after this one (overlapping code)\", 0);\n", in->addr);
	}
}

static const char *kind_c(unsigned k)
{
	return k == ACC_W ? "SK_W" : "SK_R";
}

static const access_info *access_at(const analysis *a, uint32_t i, unsigned k)
{
	/* accesses are in instruction order: binary search by insn */
	uint32_t lo = 0, hi = a->nacc;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->acc[mid].insn < i || (a->acc[mid].insn == i && a->acc[mid].k < k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->nacc && a->acc[lo].insn == i && a->acc[lo].k == k ? &a->acc[lo] : NULL;
}

/* x's access(es) through `macro` (OUT, or skel_rt.h's approximate
 * OUT_ATTR, OUT_ABSENT) at the address in addr_var, else addr's value,
 * else 0 */
static void emit_out_as(FILE *f, const char *macro, const insn *in, const access_info *x,
			const char *addr_var, const expr *addr)
{
	uint64_t pc = in->addr;
	unsigned kinds[2] = { x->kind == ACC_W ? ACC_W : ACC_R, ACC_W };
	unsigned n = x->kind == ACC_RW ? 2 : 1;
	for (unsigned j = 0; j < n; j++) {
		fprintf(f, "\t%s(0x%" PRIx64 "ull, %s, %u, ", macro, pc, kind_c(kinds[j]), x->size);
		if (addr_var)
			fputs(addr_var, f);
		else if (addr)
			emit_expr(f, addr);
		else
			fputs("0", f);
		fprintf(f, ");%s%s%s\n", j ? "" : "\t/* ", j ? "" : in->text, j ? "" : " */");
	}
}

static void emit_out(FILE *f, const insn *in, const access_info *x, const char *addr_var)
{
	emit_out_as(f, "OUT", in, x, addr_var, x->addr);
}

static void emit_rep(rgen *g, uint32_t i)
{
	const insn *in = &g->r->insns[i];
	FILE *f = g->g->f;
	bool cond = in->op == OP_CMPS || in->op == OP_SCAS;
	fprintf(f, "\t{ uint64_t n = rep_cx%s; for (uint64_t k = 0; k < n; k++) {\n",
		cond ? " - rep_cx_after" : "");
	/* each iteration is an execution (a fetch), and so is the last
	 * check of rcx; a repe/repne that stopped early ends without one */
	fprintf(f, "\t\tif (k) REFETCH(0x%" PRIx64 "ull, %u);\n", in->addr, in->len);
	for (unsigned k = 0; k < in->nmem; k++) {
		const mem_access *m = &in->mem[k];
		unsigned kinds[2] = { m->kind == ACC_W ? ACC_W : ACC_R, ACC_W };
		for (unsigned j = 0; j < (m->kind == ACC_RW ? 2u : 1u); j++)
			fprintf(f, "\t\tOUT(0x%" PRIx64 "ull, %s, %u, %s + k * %u);\n", in->addr,
				kind_c(kinds[j]), m->size, m->base == R_SI ? "rep_si" : "rep_di",
				m->size);
	}
	fprintf(f, "\t} if (n%s) REFETCH(0x%" PRIx64 "ull, %u); }\n",
		cond ? " && !rep_cx_after" : "", in->addr, in->len);
}

/* This routine's own probe matching a union entry, or NULL. */
static const probe *own_probe(const rgen *g, uint32_t i, const sprobe *x)
{
	const analysis *a = &g->a;
	for (uint32_t k = g->probe_first[i]; k < a->nprobes && a->probes[k].insn == i; k++) {
		const probe *p = &a->probes[k];
		if (sp_class(p) == x->cls && p->rep == x->rep && sp_key(p) == x->key &&
		    !is_entry_param(g, p))
			return p;
	}
	return NULL;
}

static void emit_regs_shared(rgen *g, uint32_t i, const shared_at *u, uint8_t cls)
{
	FILE *f = g->g->f;
	for (uint32_t k = 0; k < u->n; k++) {
		if (u->v[k].cls != cls)
			continue;
		const probe *p = own_probe(g, i, &u->v[k]);
		const char *in = reg_in(g->r->insns[i].addr, u->v[k].key, cls == SP_REG_AFTER);
		if (!p)
			fprintf(f, "\t(void)%s;\n", in);
		else if (p->rep && cls == SP_REG_AFTER)
			fprintf(f, "\trep_cx_after = %s;\n", in);
		else if (p->rep)
			fprintf(f, "\trep_%s = %s;\n",
				p->reg == R_CX ? "cx" : p->reg == R_SI ? "si" : "di", in);
		else
			fprintf(f, "\tv%u = %s;\n", p->val, in);
	}
}

/* An instruction several routines share: the union's words in its
 * order, those this routine does not need read and dropped. */
static void emit_insn_shared(rgen *g, uint32_t i, const shared_at *u)
{
	const analysis *a = &g->a;
	const insn *in = &g->r->insns[i];
	FILE *f = g->g->f;
	if (sp_has(u, SP_RETURNED, 0, 0))
		fprintf(f, "\tsk_expect(t, 0x%" PRIx64 "ull, SK_RETURNED);\n", in->addr);
	emit_regs_shared(g, i, u, SP_REG_BEFORE);
	if (insn_is_rep(in)) {
		emit_regs_shared(g, i, u, SP_REG_AFTER);
		emit_rep(g, i);
		return;
	}
	for (unsigned m = 0; m < in->nmem; m++) {
		const access_info *x = access_at(a, i, m);
		bool rec = sp_has(u, SP_ADDR, 0, (uint8_t)m);
		if (x && !x->addr) {
			fprintf(f, "\t{ uint64_t ad = %s;\n", addr_in(in->addr, m));
			emit_out(f, in, x, "ad");
			fputs("\t}\n", f);
			continue;
		}
		if (rec)
			fprintf(f, "\t(void)%s;\n", addr_in(in->addr, m));
		if (x)
			emit_out(f, in, x, NULL);
	}
	emit_regs_shared(g, i, u, SP_REG_AFTER);
}

/* The accesses counted on x (approximate mode), at x's address, right
 * after it: their own values may be gone by their own place. */
static void emit_attributed(rgen *g, const access_info *x, const char *addr_var)
{
	const analysis *a = &g->a;
	for (int32_t y = g->attr_next ? g->attr_next[x - a->acc] : -1; y >= 0; y = g->attr_next[y])
		emit_out_as(g->g->f, "OUT_ATTR", &g->r->insns[a->acc[y].insn], &a->acc[y],
			    addr_var, x->addr);
}

/* The word of value v loaded at insn i and of the jump's outcome after
 * it (plan_tbytes), with the accesses between the two, which a handler
 * held to the jump's probe comes after (sk_in_early_wait). */
static void emit_tbyte_read(rgen *g, uint32_t i, uint32_t v)
{
	FILE *f = g->g->f;
	uint32_t j = g->tb_at[i] - 1, n = 0;
	fputs("\t{ static const uint64_t pcs_[] = { ", f);
	for (uint32_t x = i + 1; x < j; x++)
		if (g->r->insns[x].nmem)
			fprintf(f, "%s0x%" PRIx64 "ull", n++ ? ", " : "", g->r->insns[x].addr);
	fprintf(f, "%s };\n\tuint64_t w_ = IN_EARLY(pcs_, %u); v%u = w_ & 0x%xu; tb%u = w_ >> 16; }\n",
		n ? "" : "0", n, v, PATCH_TREG_MARK - 1, v);
}

static void emit_access(rgen *g, const insn *in, const access_info *x)
{
	FILE *f = g->g->f;
	uint8_t role = g->role ? g->role[x - g->a.acc] : BID_KEPT;
	if (role == BID_ABSENT) {
		emit_out_as(f, "OUT_ABSENT", in, x, NULL, NULL);
	} else if (role == BID_KEPT && x->addr) {
		emit_out(f, in, x, NULL);
		emit_attributed(g, x, NULL);
	} else if (role == BID_KEPT) {
		fprintf(f, "\t{ uint64_t ad = %s;\n", addr_in(in->addr, x->k));
		emit_out(f, in, x, "ad");
		emit_attributed(g, x, "ad");
		fputs("\t}\n", f);
	}
}

static void emit_insn(rgen *g, uint32_t i)
{
	const analysis *a = &g->a;
	const insn *in = &g->r->insns[i];
	FILE *f = g->g->f;
	uint32_t k = g->probe_first[i];
	const shared_at *u = shared_of(g->g, in->addr);
	if (u) {
		emit_insn_shared(g, i, u);
		return;
	}

	if (g->returned_at[i] && !g->qret_at[i])
		fprintf(f, "\tsk_expect(t, 0x%" PRIx64 "ull, SK_RETURNED);\n", in->addr);
	for (; k < a->nprobes && a->probes[k].insn == i && a->probes[k].kind == PR_REG_BEFORE; k++) {
		const probe *p = &a->probes[k];
		if (is_entry_param(g, p))
			continue;
		if (p->rep)
			fprintf(f, "\trep_%s = %s;\n", p->reg == R_CX ? "cx" : p->reg == R_SI ? "si" : "di",
				reg_in(in->addr, p->reg, false));
		else if (k + 1 == g->esp_k1)	/* passed by a linked call */
			fprintf(f, "\tv%u = ESP();\n", p->val);
		else
			fprintf(f, "\tv%u = %s;\n", p->val, reg_in(in->addr, p->reg, false));
	}
	if (insn_is_rep(in)) {
		/* repe/repne cmps/scas repeat rcx - rcx_after times: the
		 * after-probes (nothing else fires at a string op) are read
		 * before the accesses they count */
		for (; k < a->nprobes && a->probes[k].insn == i; k++) {
			const probe *p = &a->probes[k];
			if (p->kind != PR_REG_AFTER)
				continue;
			if (p->rep)
				fprintf(f, "\trep_cx_after = %s;\n", reg_in(in->addr, p->reg, true));
			else
				fprintf(f, "\tv%u = %s;\n", p->val, reg_in(in->addr, p->reg, true));
		}
		emit_rep(g, i);
	} else {
		for (unsigned m = 0; m < in->nmem; m++) {
			const access_info *x = access_at(a, i, m);
			if (x)
				emit_access(g, in, x);
		}
	}
	/* skip the direct-address probes (consumed above) and the branch /
	 * target probe (consumed by the terminator) */
	while (k < a->nprobes && a->probes[k].insn == i &&
	       (a->probes[k].kind == PR_ADDR || a->probes[k].kind == PR_BRANCH ||
		a->probes[k].kind == PR_TARGET))
		k++;
	for (; k < a->nprobes && a->probes[k].insn == i; k++) {
		const probe *p = &a->probes[k];
		if (p->rep)
			fprintf(f, "\trep_cx_after = %s;\n", reg_in(in->addr, p->reg, true));
		else if (g->tb_at && g->tb_at[i])	/* and its jump's outcome */
			emit_tbyte_read(g, i, p->val);
		else
			fprintf(f, "\tv%u = %s;\n", p->val, reg_in(in->addr, p->reg, true));
	}
	/* values it defines that the skeleton computes (plan_carried) */
	for (uint32_t c = 0; g->computed_at && g->computed_at[i] && c < g->ncarried; c++) {
		const ssa_value *sv = &a->s.vals[g->carried[c]];
		if (sv->kind == V_DEF && sv->insn == i) {
			fprintf(f, "\tv%u = ", g->carried[c]);
			emit_expr(f, expr_of_def_bits(a->ec, g->carried[c]));
			fputs(";\n", f);
		}
	}
}

/* probe_first from a.probes (sorted by instruction) */
static void index_probes(rgen *g)
{
	const analysis *a = &g->a;
	for (uint32_t i = 0; i < g->r->ninsn; i++)
		g->probe_first[i] = a->nprobes;
	for (uint32_t k = a->nprobes; k-- > 0;)
		g->probe_first[a->probes[k].insn] = k;
}

/* Whether block b does nothing the replay reads a word for or emits an
 * access at, and goes on to one block only: returned_site's next one. */
static int32_t quiet_next(const rgen *g, uint32_t b)
{
	const routine *r = g->r;
	const analysis *a = &g->a;
	const block *bl = &r->blocks[b];
	if (bl->nsucc != 1 || !bl->ninsn)
		return -1;
	uint32_t one;
	/* (g->g->shared is complete from the start; shared_of is not while
	 * find_shared_probes analyzes the routines) */
	for (uint32_t i = bl->first; i < bl->first + bl->ninsn; i++) {
		const insn *in = &r->insns[i];
		if (in->nmem || insn_is_rep(in) || in->op == OP_SYSCALL ||
		    addrmap_get(&g->g->shared, in->addr, &one) ||
		    (g->probe_first[i] < a->nprobes && a->probes[g->probe_first[i]].insn == i))
			return -1;
	}
	const insn *last = &r->insns[bl->first + bl->ninsn - 1];
	uint64_t to = last->flow == FLOW_NEXT ? bl->end : last->flow == FLOW_JUMP ? last->target : 0;
	int32_t m = cfg_block_of(r, to);
	if (m <= 0 || (uint32_t)m == b || r->blocks[m].start != to || !reachable(r, (uint32_t)m) ||
	    (uint32_t)m != bl->succ[0] || is_header(r, (uint32_t)m) ||
	    (r->blocks[m].flags & BLK_ENTRY) || program_is_entry(g->g->p, to) ||
	    addrmap_get(&g->g->shared, to, &one))
		return -1;
	/* m may be a loop's exit (exit_loop_ok then leaves its words on
	 * the loop's edges), not entered into the middle of its loop */
	const block *mb = &r->blocks[m];
	for (uint32_t k = 0; k < mb->npred; k++)
		if (mb->loop >= 0 && !loop_within(r, r->blocks[mb->pred[k]].loop, (uint32_t)mb->loop))
			return -1;
	for (size_t i = 0; i < g->g->p->bin.nlp; i++)
		if (g->g->p->bin.lp_pads[i] == to)
			return -1;
	return m;
}

/* Where the RETURNED word of a call whose return site is block n fires:
 * n's first instruction; or, when n is too short for the recorder's jmp
 * rel32 (it would trap there, a signal per return: grep's `call memrchr;
 * lea r15, [rax+1]` before a join, 2 M times), the first instruction of
 * the block n falls into, when nothing in n reads a word or makes an
 * access (the word marks the same point of the replay), and that block
 * is long enough: n in the same loop as every way into it (not a loop's
 * exit, whose exit words the skeleton would read on the call's edge
 * before the word), the next block not a loop header (a word per
 * iteration) nor entered into the middle of its loop, both entered only
 * by edges of this routine (quiet_next).  Other ways into the next block
 * then record the word too, and the skeleton reads it on them. */
static uint32_t returned_site(rgen *g, uint32_t n)
{
	const routine *r = g->r;
	const block *rb = &r->blocks[n];
	uint64_t bs, be;
	probe_region(g, rb->first, &bs, &be);
	if (be - bs >= 5)
		return rb->first;
	for (uint32_t k = 0; k < rb->npred; k++)
		if (r->blocks[rb->pred[k]].loop != rb->loop)
			return rb->first;
	/* over a few blocks as short (grep: `lea 0x1(%rax),%rdx` then `mov
	 * %r15,%rbp`, each a join) */
	int32_t m = (int32_t)n, way[5] = { (int32_t)n };
	for (int steps = 0; steps < 4; steps++) {
		if ((m = quiet_next(g, (uint32_t)m)) < 0)
			return rb->first;
		probe_region(g, r->blocks[m].first, &bs, &be);
		if (be - bs >= 5) {
			/* the blocks passed stay quiet: no exit words
			 * (exit_loop_ok), no φ's argument (edge_probe) */
			if (!g->rchain)
				g->rchain = xcalloc(r->nblocks, 1);
			for (int k = 0; k <= steps; k++)
				g->rchain[way[k]] = 1;
			return r->blocks[m].first;
		}
		way[steps + 1] = m;
	}
	return rb->first;
}

static void prepare(rgen *g)
{
	const routine *r = g->r;
	analysis *a = &g->a;
	g->counter_used = xcalloc(r->nloops ? r->nloops : 1, 1);
	g->leaf_used = xcalloc(a->s.nvals ? a->s.nvals : 1, 1);
	g->returned_at = xcalloc(r->ninsn ? r->ninsn : 1, 1);
	free(g->qret_at);
	g->qret_at = xcalloc(r->ninsn ? r->ninsn : 1, 1);
	free(g->rchain);
	g->rchain = NULL;
	g->probe_first = xmalloc((r->ninsn ? r->ninsn : 1) * sizeof *g->probe_first);
	index_probes(g);
	for (uint32_t i = 0; i < a->nacc; i++)
		if (a->acc[i].addr && (!g->role || g->role[i] == BID_KEPT)) {
			mark_counters(g, a->acc[i].addr);
			expr_leaves(a->acc[i].addr, mark_leaf, g);
		}
	for (uint32_t i = 0; i < a->nbr; i++)
		if (a->br[i].how == BR_COMPUTED) {
			mark_counters(g, a->br[i].lhs);
			mark_counters(g, a->br[i].rhs);
			expr_leaves(a->br[i].lhs, mark_leaf, g);
			expr_leaves(a->br[i].rhs, mark_leaf, g);
		}
	for (uint32_t bi = 0; bi < r->nblocks; bi++) {
		const block *b = &r->blocks[bi];
		const insn *last = &r->insns[b->first + b->ninsn - 1];
		if ((last->flow == FLOW_CALL || last->flow == FLOW_ICALL) &&
		    (b->flags & BLK_CALL) && call_needs_returned(g, b)) {
			int n = cfg_block_of(r, b->end);
			if (n >= 0 && r->blocks[n].start == b->end)
				g->returned_at[(b->flags & BLK_SETJMP) ? r->blocks[n].first
								       : returned_site(g, (uint32_t)n)] = 1;
		}
	}
}

static bool reachable(const routine *r, uint32_t b)
{
	return b == 0 || r->blocks[b].idom >= 0;
}

/* ---------------------------------------- approximate mode (issue 15) */

/* Selective BID instrumentation (Economo et al., seeds/, §III; the
 * algorithm is ivres/bid.c).  skel pays for an access's address only
 * when it comes from a recorded value: a direct address, or an expression
 * over a register recorded for it.  Those accesses are the paper's
 * expressions E_b, block by block; bid_select keeps ceil(ω·m) of their
 * classes.  A probe is dropped when nothing still emitted needs its
 * value; an access that lost a value is emitted at its fulcrum's address
 * (attributed) or without an address (absent), both marked.  An access
 * not kept whose values survive for other reasons stays exact: it costs
 * nothing more. */

/* A probe the approximate mode may drop: a register or direct address
 * recorded for this routine alone.  Not the stack pointer (entry words,
 * resumes, rsp packed as deltas), not a rep string op's operands, not an
 * internal routine's entry parameters, not at a shared instruction (its
 * words are the union of several routines' needs). */
static bool probe_droppable(const rgen *g, const probe *p)
{
	uint32_t one;
	if (p->rep || is_entry_param(g, p) ||
	    addrmap_get(&g->g->shared, g->r->insns[p->insn].addr, &one))
		return false;
	return p->kind == PR_ADDR ||
	       ((p->kind == PR_REG_BEFORE || p->kind == PR_REG_AFTER) && p->reg != R_SP);
}

enum { VAL_FREE, VAL_DROPPABLE, VAL_PINNED };

/* Per SSA value: recorded by droppable probes only, by one that is not,
 * or not recorded here (counters, bias, the caller's arguments). */
static uint8_t *recorded_values(const rgen *g)
{
	const analysis *a = &g->a;
	uint8_t *rv = xcalloc(a->s.nvals ? a->s.nvals : 1, 1);
	for (uint32_t k = 0; k < a->nprobes; k++) {
		const probe *p = &a->probes[k];
		if ((p->kind != PR_REG_BEFORE && p->kind != PR_REG_AFTER) || p->val >= a->s.nvals)
			continue;
		if (!probe_droppable(g, p))
			rv[p->val] = VAL_PINNED;
		else if (rv[p->val] == VAL_FREE)
			rv[p->val] = VAL_DROPPABLE;
	}
	return rv;
}

typedef struct leafscan {
	const uint8_t *rv;
	uint8_t *mark;          /* set for every leaf (may be NULL) */
	bool droppable;         /* a leaf is VAL_DROPPABLE */
	bool lost;              /* a leaf is VAL_DROPPABLE and not marked */
} leafscan;

static void scan_leaf(uint32_t v, void *arg)
{
	leafscan *x = arg;
	if (SSA_PSEUDO(v))
		return;
	if (x->rv[v] == VAL_DROPPABLE) {
		x->droppable = true;
		x->lost |= x->mark && !x->mark[v];
	}
}

static void need_leaf(uint32_t v, void *arg)
{
	leafscan *x = arg;
	if (!SSA_PSEUDO(v))
		x->mark[v] = 1;
}

/* Whether access x is one of the paper's expressions: its address costs
 * recorded values the approximate mode could drop. */
static bool bid_candidate(const rgen *g, const access_info *x, const uint8_t *rv)
{
	const insn *in = &g->r->insns[x->insn];
	uint32_t one;
	if (x->rep || insn_is_rep(in) || in->mem[x->k].seg != SEG_NONE ||
	    addrmap_get(&g->g->shared, in->addr, &one))
		return false;
	if (!x->addr)
		return true;
	leafscan s = { .rv = rv };
	expr_leaves(x->addr, scan_leaf, &s);
	return s.droppable;
}

static bid_reg_t bid_field(const analysis *a, uint32_t i, uint8_t reg, unsigned scale)
{
	if (reg == R_NONE)
		return BID_NIL;
	/* §III-B's incarnation: the register's SSA value before i */
	return bid_reg(reg < SSA_NVARS ? a->s.before[i][reg] : UINT32_MAX - reg, scale);
}

/* §III-A: the instruction's own operand as a BID expression; a
 * RIP-relative operand is an absolute address (footnote 2), IRR. */
static bid_expr bid_expr_of(const analysis *a, const access_info *x)
{
	const mem_access *m = &a->r->insns[x->insn].mem[x->k];
	if (m->base != R_NONE)
		return (bid_expr){ BID_RRI, bid_field(a, x->insn, m->base, 1),
				   bid_field(a, x->insn, m->index, m->scale), m->disp };
	return (bid_expr){ BID_IRR, bid_field(a, x->insn, m->index, m->scale), BID_NIL, m->disp };
}

/* bid_select on block b's candidates: the wanted roles in g->role. */
static void bid_block(rgen *g, const block *b, const uint8_t *cand)
{
	const analysis *a = &g->a;
	uint32_t *idx = xmalloc((a->nacc ? a->nacc : 1) * sizeof *idx);
	bid_expr *e = xmalloc((a->nacc ? a->nacc : 1) * sizeof *e);
	uint32_t n = 0;
	for (uint32_t k = 0; k < a->nacc; k++)
		if (cand[k] && a->acc[k].insn >= b->first && a->acc[k].insn < b->first + b->ninsn) {
			idx[n] = k;
			e[n++] = bid_expr_of(a, &a->acc[k]);
		}
	bid_choice c;
	bid_select(e, n, g->g->o->omega, g->g->o->chunk, &c);
	for (uint32_t j = 0; j < n; j++) {
		g->role[idx[j]] = c.role[j];
		g->fulcrum[idx[j]] = c.fulcrum[j] < 0 ? -1 : (int32_t)idx[c.fulcrum[j]];
	}
	g->bid_exprs += n;
	g->bid_kept += c.kept;
	g->bid_aia += c.aia;
	bid_choice_free(&c);
	free(e);
	free(idx);
}

/* The values something still emitted needs: the addresses of kept and of
 * non-candidate accesses, computed branches, tables read (jt_acc). */
static uint8_t *needed_values(const rgen *g, const uint8_t *cand)
{
	const analysis *a = &g->a;
	leafscan s = { .mark = xcalloc(a->s.nvals ? a->s.nvals : 1, 1) };
	for (uint32_t k = 0; k < a->nacc; k++)
		if (a->acc[k].addr && (!cand[k] || g->role[k] == BID_KEPT))
			expr_leaves(a->acc[k].addr, need_leaf, &s);
	for (uint32_t k = 0; k < a->nbr; k++)
		if (a->br[k].how == BR_COMPUTED) {
			expr_leaves(a->br[k].lhs, need_leaf, &s);
			expr_leaves(a->br[k].rhs, need_leaf, &s);
		}
	for (uint32_t b = 0; a->jt_acc && b < g->r->nblocks; b++)
		if (a->jt_acc[b] >= 0)	/* a table read by the skeleton */
			expr_leaves(a->acc[a->jt_acc[b]].addr, need_leaf, &s);
	return s.mark;
}

static bool probe_dropped(const rgen *g, const probe *p, const uint8_t *need)
{
	if (!probe_droppable(g, p))
		return false;
	if (p->kind == PR_ADDR) {
		const access_info *x = access_at(&g->a, p->insn, p->k);
		return x && g->role[x - g->a.acc] != BID_KEPT;
	}
	return p->val < g->a.s.nvals && !need[p->val];
}

/* The final role: exact when every value of the address is still
 * recorded, else attributed when the fulcrum is exact, else absent. */
static uint8_t final_role(const rgen *g, uint32_t k, const uint8_t *rv, const uint8_t *need,
			  const uint8_t *dropped_addr)
{
	const access_info *x = &g->a.acc[k];
	bool lost;
	if (x->addr) {
		leafscan s = { .rv = rv, .mark = (uint8_t *)need };
		expr_leaves(x->addr, scan_leaf, &s);
		lost = s.lost;
	} else {
		lost = dropped_addr[k];
	}
	if (!lost)
		return BID_KEPT;
	int32_t f = g->fulcrum[k];
	return f >= 0 && g->role[f] == BID_KEPT ? BID_ATTRIBUTED : BID_ABSENT;
}

static void drop_probes(rgen *g, const uint8_t *rv, const uint8_t *cand)
{
	analysis *a = &g->a;
	uint8_t *need = needed_values(g, cand);
	uint8_t *dropped_addr = xcalloc(a->nacc ? a->nacc : 1, 1);
	uint32_t n = 0;
	for (uint32_t k = 0; k < a->nprobes; k++) {
		const probe *p = &a->probes[k];
		if (!probe_dropped(g, p, need))
			a->probes[n++] = *p;
		else if (p->kind == PR_ADDR)
			dropped_addr[access_at(a, p->insn, p->k) - a->acc] = 1;
	}
	a->nprobes = n;
	/* kept ones first: an attributed access needs its fulcrum's final role */
	for (uint32_t k = 0; k < a->nacc; k++)
		if (cand[k] && g->role[k] == BID_KEPT)
			g->role[k] = final_role(g, k, rv, need, dropped_addr);
	for (uint32_t k = 0; k < a->nacc; k++)
		if (cand[k] && g->role[k] != BID_KEPT)
			g->role[k] = final_role(g, k, rv, need, dropped_addr);
	/* each fulcrum's attributed accesses, in program order */
	for (uint32_t k = a->nacc; k-- > 0;)
		if (g->role[k] == BID_ATTRIBUTED) {
			g->attr_next[k] = g->attr_next[g->fulcrum[k]];
			g->attr_next[g->fulcrum[k]] = (int32_t)k;
		}
	free(dropped_addr);
	free(need);
}

static void bid_plan(rgen *g)
{
	const analysis *a = &g->a;
	if (!g->g->o->approx || !a->nacc)
		return;
	g->role = xcalloc(a->nacc, 1);
	g->fulcrum = xmalloc(a->nacc * sizeof *g->fulcrum);
	g->attr_next = xmalloc(a->nacc * sizeof *g->attr_next);
	for (uint32_t k = 0; k < a->nacc; k++)
		g->fulcrum[k] = g->attr_next[k] = -1;
	uint8_t *rv = recorded_values(g);
	uint8_t *cand = xcalloc(a->nacc, 1);
	for (uint32_t k = 0; k < a->nacc; k++)
		cand[k] = bid_candidate(g, &a->acc[k], rv);
	for (uint32_t b = 0; b < g->r->nblocks; b++)
		if (reachable(g->r, b))
			bid_block(g, &g->r->blocks[b], cand);
	drop_probes(g, rv, cand);
	free(cand);
	free(rv);
}

static void count_roles(const rgen *g, skel_stats *st)
{
	st->bid_exprs += g->bid_exprs;
	st->bid_kept += g->bid_kept;
	st->bid_aia += g->bid_aia;
	for (uint32_t k = 0; g->role && k < g->a.nacc; k++) {
		st->bid_attributed += g->role[k] == BID_ATTRIBUTED;
		st->bid_absent += g->role[k] == BID_ABSENT;
	}
}

/* Whether the routine's skeleton is entered only by its edges: no
 * shared code (one patch for several skeletons), setjmp or landing pads.
 * early: before find_shared_probes has analyzed the routines, every
 * instruction another routine shares counts (g->shared), later only
 * those with shared probes (shared_of). */
static bool routine_plain_as(const rgen *g, bool early)
{
	const routine *r = g->r;
	const program *p = g->g->p;
	uint32_t one;
	if (g->g->resume[g->id])
		return false;
	for (uint32_t i = 0; i < r->ninsn; i++)
		if (early ? addrmap_get(&g->g->shared, r->insns[i].addr, &one)
			  : shared_of(g->g, r->insns[i].addr) != NULL)
			return false;
	for (size_t i = 0; i < p->bin.nlp; i++)
		if (cfg_block_of(r, p->bin.lp_sites[i]) >= 0)
			return false;
	return true;
}

/* Whether plan_carried may carry a φ of the routine (carry_wanted's
 * conditions that do not depend on the analysis): else the analysis must
 * not plan on it (ivres.c, record_rotated: the loaded byte would be
 * recorded beside the φ, a word more than the outcome it replaces). */
static bool carry_possible(const rgen *g)
{
	return !g->g->o->approx && !g->g->o->all_accesses && routine_plain_as(g, true);
}

/* The analysis a skeleton is made of: the routine's, less what the
 * approximate mode drops. */
static void analyze_routine(rgen *g, unsigned flags)
{
	if (!carry_possible(g))
		flags |= IV_NO_ROTATE;
	iv_analyze(&g->a, g->g->p, g->r, flags);
	bid_plan(g);
	prepare(g);
}


typedef struct avail {
	const rgen *g;
	bool ok;
} avail;

static void avail_leaf(uint32_t v, void *arg)
{
	avail *x = arg;
	if (!SSA_PSEUDO(v) && !x->g->leaf_used[v])
		x->ok = false;
}

/* The entry values an internal callee needs, from this call site: the
 * caller's own expression when its leaves are at hand, else recorded. */
static void plan_call_args(rgen *g, uint32_t i, uint64_t target)
{
	int32_t id = routine_id(g->g->p, target);
	/* a linked PLT stub's callee takes rsp from here (sk_plt) */
	uint32_t mask = link_of(g->g, target) >= 0 ? 1u << R_SP : 0;
	if (id >= 0 && g->g->internal[id])
		mask = g->g->entry_mask[id];
	if (!mask)
		return;
	const insn *in = &g->r->insns[i];
	for (unsigned v = 0; v < SSA_NVARS; v++) {
		if (!(mask & (1u << v)))
			continue;
		expr *e = expr_of_value(g->a.ec, g->a.s.before[i][v]);
		if (v == R_SP && in->flow == FLOW_CALL)
			e = expr_add(g->a.ec, e, expr_const(g->a.ec, -8));
		avail x = { g, true };
		expr_leaves(e, avail_leaf, &x);
		call_arg c = { .insn = i, .var = (uint8_t)v, .e = x.ok ? e : NULL };
		if (c.e)
			mark_counters(g, c.e);
		g->args = xrealloc(g->args, (g->nargs + 1) * sizeof *g->args);
		g->args[g->nargs++] = c;
	}
}

static void plan_calls(rgen *g)
{
	const routine *r = g->r;
	for (uint32_t bi = 0; bi < r->nblocks; bi++) {
		const block *b = &r->blocks[bi];
		uint32_t i = b->first + b->ninsn - 1;
		const insn *in = &r->insns[i];
		if (!reachable(r, bi))
			continue;
		if ((in->flow == FLOW_CALL && (b->flags & (BLK_CALL | BLK_NORETURN))) ||
		    (in->flow == FLOW_JUMP && (b->flags & BLK_TAILCALL)))
			plan_call_args(g, i, in->target);
	}
}

/* Whether a routine's replay is worth gcc's time at -O2: small routines
 * (called from loops, recursive) and routines with loops that are not
 * large.  The rest, most of the text of a large program, replays rarely,
 * and -O2 would multiply a first run's compile time by four or five. */
static bool routine_is_hot(const routine *r)
{
	return r->nblocks <= SKEL_HOT_BLOCKS || (r->nloops && r->nblocks <= SKEL_HOT_LOOP_BLOCKS);
}

/* An exit-value loop's trip count, and the pcs of its accesses (where a
 * thread that died in it may have died: sk_trip). */
static void emit_exit_decl(rgen *g, uint32_t l)
{
	const routine *r = g->r;
	const loop *L = &r->loops[l];
	FILE *f = g->g->f;
	fprintf(f, "\tuint64_t N%u = 0, W%u = 0;\n\t(void)W%u;\n"
		"\tstatic const uint64_t X%u_pcs[] = {", l, l, l, l);
	unsigned n = 0;
	for (uint32_t k = 0; k < L->nblocks; k++) {
		const block *b = &r->blocks[L->blocks[k]];
		for (uint32_t i = b->first; i < b->first + b->ninsn; i++)
			if (r->insns[i].nmem)
				fprintf(f, "%s0x%" PRIx64 "ull", n++ ? ", " : " ", r->insns[i].addr);
	}
	fputs(n ? " };\n" : " 0 };\n", f);
}


/* An instruction that can bring a signal on its thread without a data
 * access, where a handler may run (FAULT_POINT): div and idiv of a
 * register (of memory: the access's pc places it, sk_out), and those that
 * end a block in a trap (ud2, hlt, int3, int n but for int 0x80). */
static bool faults_without_access(const insn *in)
{
	if (in->op == OP_DIV || in->op == OP_IDIV)
		return in->nmem == 0;
	return in->op == OP_HALT;
}

static void emit_routine(rgen *g)
{
	const routine *r = g->r;
	FILE *f = g->g->f;
	analysis *a = &g->a;
	bool rep = false;
	char nb[256];

	fprintf(f, "\n%s%s */\n/* %s at 0x%" PRIx64 ": %u blocks, %u loops, %u probes */\n",
		SKEL_UNIT_MARK, routine_is_hot(r) ? "hot" : "cold",
		c_safe(r->name, nb, sizeof nb), r->start, r->nblocks, r->nloops, a->nprobes);
	fputs("SK_ROUTINE ", f);
	emit_signature(g->g, g->id);
	fputs("\n{\n", f);
	fprintf(f, "\tSK_ROUTINE_ENTER(%u);\n", g->id);	/* --roi (skel_rt.h) */
	uint32_t params = g->g->internal[g->id] ? g->g->entry_mask[g->id] : 0;
	/* a probe's value that nothing reads (the argument of a φ recorded
	 * for a carry that was not planned, ivres.c record_rotated) is
	 * declared too, as unused */
	uint8_t *probed = xcalloc(a->s.nvals ? a->s.nvals : 1, 1);
	for (uint32_t k = 0; k < a->nprobes; k++)
		if ((a->probes[k].kind == PR_REG_BEFORE || a->probes[k].kind == PR_REG_AFTER) &&
		    !a->probes[k].rep)
			probed[a->probes[k].val] = 1;
	for (uint32_t v = 0; v < a->s.nvals; v++)
		if (v < SSA_NVARS && (params & (1u << v)))
			continue;
		else if (g->leaf_used[v])
			fprintf(f, "\tuint64_t v%u = 0;\n", v);
		else if (probed[v])
			fprintf(f, "\tuint64_t v%u __attribute__((unused)) = 0;\n", v);
	free(probed);
	for (uint32_t l = 0; l < r->nloops; l++)
		if (g->counter_used[l])
			fprintf(f, "\tuint64_t I%u = 0;\n", l);
	for (uint32_t i = 0; g->tb_val && i < r->ninsn; i++)
		if (g->tb_val[i])
			fprintf(f, "\tuint64_t tb%u = 0;\n", g->tb_val[i] - 1);
	for (uint32_t l = 0; g->xl && l < r->nloops; l++)
		if (g->xl[l].n)
			emit_exit_decl(g, l);
	for (uint32_t i = 0; i < r->ninsn; i++)
		rep |= insn_is_rep(&r->insns[i]);
	if (rep)
		fputs("\tuint64_t rep_cx = 0, rep_cx_after = 0, rep_si = 0, rep_di = 0;\n"
		      "\t(void)rep_cx_after; (void)rep_si; (void)rep_di;\n", f);
	emit_landing_pads(g);
	/* the caller consumed the entry word; a jump back to the entry
	 * passes the entry probe again */
	bool again = r->blocks[0].npred > 0 || setjmp_to_self(r);
	if (again) {
		/* (B0_again unused when only setjmp_to_self) */
		fputs("\tif (0) goto B0_again;\n\tgoto B0;\nB0_again:\n", f);
		fprintf(f, "\tsk_expect(t, 0x%" PRIx64 "ull, 0x%" PRIx64 "ull);%s\nB0:\n", r->start,
			(uint64_t)SK_ENTRY(g->id), g->g->resume[g->id] ? " (void)SP();" : "");
	}
	for (uint32_t bi = 0; bi < r->nblocks; bi++) {
		const block *b = &r->blocks[bi];
		if (!reachable(r, bi))
			continue;
		/* an elided jump's ways may be entered no more */
		if (bi)
			fprintf(f, "B_%" PRIx64 ":%s\n", b->start,
				g->nelided ? " __attribute__((unused));" : "");
		fprintf(f, "\tFETCH(%u);\n", g->g->nfetch_blocks++);
		for (uint32_t l = 0; l < r->nloops; l++)
			if (r->loops[l].header == bi && !r->loops[l].nexits) {
				if (g->tick && g->tick[l])
					fprintf(f, "\tSK_TICK_AT(0x%" PRIx64 "ull);\n", b->start);
				else
					fputs("\tSK_IDLE();\n", f);
			}
		for (uint32_t i = b->first; i < b->first + b->ninsn; i++) {
			const insn *in = &r->insns[i];
			if (faults_without_access(in))
				fprintf(f, "\tFAULT_POINT(0x%" PRIx64 "ull, 0x%" PRIx64 "ull);\n",
					in->addr, in->addr + in->len);
			emit_insn(g, i);
			/* a handler that ran while the thread was in the call */
			if (in->op == OP_SYSCALL && in->flow != FLOW_HALT)
				fprintf(f, "\tSYSCALL_DONE(0x%" PRIx64 "ull, 0x%" PRIx64 "ull);\n",
					in->addr, in->addr + in->len);
			if (process_syscall(r, b, i))
				fputs("\tFORK_DONE();\n", f);
		}
		emit_terminator(g, bi);
	}
	fputs("}\n", f);
}

/* ----------------------------------------------------------- slicing */

/* The skeletonization slides' slicing, its simplest case: a loop without
 * data accesses, calls or indirect jumps, whose only probes are its own
 * conditional jumps, with a single entry and all its exits to one block,
 * none of whose counters an address or a recorded value outside it
 * depends on, is not replayed: the skeleton goes from the loop's entry
 * straight to its exit, and the loop's branches are not recorded (a
 * Collatz-style `while` between two array accesses cost a word per
 * iteration).  Its instruction fetches are then not in the trace either
 * (the replay says so; `skel gen --no-slice` keeps such loops). */
typedef struct loopset {
	const routine *r;
	uint32_t l;     /* a loop and those nested in it */
	bool hit;
} loopset;

static bool loop_within(const routine *r, int32_t x, uint32_t l)
{
	for (; x >= 0; x = r->loops[x].parent)
		if ((uint32_t)x == l)
			return true;
	return false;
}

static void uses_loop(const expr *e, loopset *s)
{
	if (!e || s->hit)
		return;
	if (e->kind == E_COUNTER && loop_within(s->r, (int32_t)e->val, s->l))
		s->hit = true;
	uses_loop(e->a, s);
	uses_loop(e->b, s);
}

static bool block_in_loop(const routine *r, uint32_t b, uint32_t l)
{
	return loop_within(r, r->blocks[b].loop, l);
}

static bool sliceable(rgen *g, uint32_t l, uint32_t *exit)
{
	const routine *r = g->r;
	const analysis *a = &g->a;
	const loop *L = &r->loops[l];
	if (L->irreducible || L->nentries != 1 || !L->nexits || L->header == 0)
		return false;
	*exit = L->exit_to[0];
	for (uint32_t k = 0; k < L->nexits; k++)
		if (L->exit_to[k] != *exit)
			return false;
	if (!reachable(r, *exit))
		return false;
	for (uint32_t k = 0; k < L->nblocks; k++) {
		const block *b = &r->blocks[L->blocks[k]];
		if (!reachable(r, L->blocks[k]) || (b->flags & (BLK_CALL | BLK_TAILCALL |
								 BLK_JUMPTABLE | BLK_IJUMP)))
			return false;
		for (uint32_t i = b->first; i < b->first + b->ninsn; i++) {
			const insn *in = &r->insns[i];
			if (in->nmem || g->returned_at[i] || shared_of(g->g, in->addr) ||
			    (in->flow != FLOW_NEXT && in->flow != FLOW_JUMP &&
			     in->flow != FLOW_CJUMP))
				return false;
			for (uint32_t p = g->probe_first[i]; p < a->nprobes && a->probes[p].insn == i; p++)
				if (a->probes[p].kind != PR_BRANCH)
					return false;
		}
	}
	/* nothing outside depends on its counters */
	loopset s = { r, l, false };
	for (uint32_t i = 0; i < a->nacc; i++)
		if (!block_in_loop(r, a->s.block_of[a->acc[i].insn], l))
			uses_loop(a->acc[i].addr, &s);
	for (uint32_t i = 0; i < a->nbr; i++)
		if (a->br[i].how == BR_COMPUTED && !block_in_loop(r, a->s.block_of[a->br[i].insn], l)) {
			uses_loop(a->br[i].lhs, &s);
			uses_loop(a->br[i].rhs, &s);
		}
	for (uint32_t i = 0; i < g->nargs; i++)
		uses_loop(g->args[i].e, &s);
	return !s.hit;
}

static void plan_slices(rgen *g)
{
	const routine *r = g->r;
	if (g->g->o->all_accesses || g->g->o->no_slice || !r->nloops)
		return;
	g->slice_to = xmalloc(r->nblocks * sizeof *g->slice_to);
	g->sliced = xcalloc(r->nblocks, 1);
	for (uint32_t b = 0; b < r->nblocks; b++)
		g->slice_to[b] = -1;
	/* outer loops first: a sliced loop takes its nested ones along */
	for (uint32_t l = 0; l < r->nloops; l++) {
		uint32_t x;
		const loop *L = &r->loops[l];
		if (g->sliced[L->header] || !sliceable(g, l, &x))
			continue;
		g->slice_to[L->header] = (int32_t)x;
		for (uint32_t k = 0; k < L->nblocks; k++)
			g->sliced[L->blocks[k]] = 1;
		g->g->st->sliced_loops++;
	}
}

/* ------------------------------------------------- exit-value loops */

/* e = e0 + c * I_l, e0 free of I_l: e0 (and *c), or NULL when e has
 * another shape (I_l under an extension or a product, or not at all). */
static expr *split_counter(const routine *r, expr_ctx *ec, expr *e, uint32_t l, int64_t *c)
{
	if (!e)
		return NULL;
	if (e->kind == E_COUNTER && e->val == l) {
		*c += 1;
		return expr_const(ec, 0);
	}
	if (e->kind == E_MUL && e->a->kind == E_COUNTER && e->a->val == l) {
		*c += e->k;
		return expr_const(ec, 0);
	}
	if (e->kind == E_ADD) {
		expr *x = split_counter(r, ec, e->a, l, c);
		expr *y = x ? split_counter(r, ec, e->b, l, c) : NULL;
		return y ? expr_add(ec, x, y) : NULL;
	}
	loopset s = { r, l, false };
	uses_loop(e, &s);
	return s.hit ? NULL : e;
}

/* A register at exit jump ix (in block xb) of loop l that is e0 + c * I,
 * e0 known at the loop's entry: x filled, true. */
static bool exit_register(rgen *g, uint32_t l, uint32_t xb, struct loop_exit *x)
{
	analysis *a = &g->a;
	for (uint8_t reg = 0; reg < 16; reg++) {
		int64_t c = 0;
		if (reg == R_SP)
			continue;
		expr *e = expr_of_value(a->ec, a->s.at_end[xb][reg]);
		expr *e0 = split_counter(g->r, a->ec, e, l, &c);
		avail ok = { g, true };
		if (e0)
			expr_leaves(e0, avail_leaf, &ok);
		/* |c| small: e0 + c * I wraps only after 2^44 iterations */
		if (!e0 || !ok.ok || c == 0 || c > (1 << 20) || c < -(1 << 20))
			continue;
		x->reg = reg;
		x->c = c;
		x->e0 = e0;
		return true;
	}
	return false;
}

/* Exit block tb of loop l: entered from one block of the loop, and from
 * outside it only by edges the skeleton takes through emit_edge (which
 * reads and drops the words recorded there, exit_words). */
static bool other_ways_in(const rgen *g, uint32_t l, uint32_t tb)
{
	const routine *r = g->r;
	const block *t = &r->blocks[tb];
	uint32_t inside = 0;
	for (uint32_t k = 0; k < t->npred; k++) {
		const block *p = &r->blocks[t->pred[k]];
		if (block_in_loop(r, t->pred[k], l)) {
			inside++;
			continue;
		}
		if (p->flags & (BLK_JUMPTABLE | BLK_IJUMP | BLK_TAILCALL) || !p->ninsn)
			return false;
	}
	return inside == 1;
}

/* The issue-12 case the slides solve with loop bounds: a scan (strlen,
 * strchr, a search with a break, a sentinel loop) whose addresses are
 * computed and whose one unknown is when it stops.  An innermost loop
 * with one entry, entered by its header, whose only probes are the
 * conditional jumps of its exits (XL_MAX at most; one at least recorded),
 * each leading to a block entered from the loop by no other edge, and at
 * each such jump a register that is e0 + c * I, e0 known at the loop's
 * entry.  Then that register is
 * recorded once where the loop leaves (with the exit's number when there
 * are several), and the skeleton finds the trip count from it (sk_trip).
 * Loops with more to record keep their outcomes.  With `edge`, recorded
 * on the exit jump's way instead (the loop's iterations then pass their
 * exit jumps in the trampolines, recording nothing): for an exit block
 * entered by other ways, by a return, or from another such loop. */
static bool exit_loop_ok(rgen *g, uint32_t l, exit_loop *xl, bool edge)
{
	const routine *r = g->r;
	analysis *a = &g->a;
	const loop *L = &r->loops[l];
	if (L->irreducible || L->nentries != 1 || L->header == 0 || !L->nexits ||
	    L->nexits > XL_EXITS || (g->sliced && g->sliced[L->header]))
		return false;
	for (uint32_t m = 0; m < r->nloops; m++)
		if (r->loops[m].parent == (int32_t)l)
			return false;
	xl->n = L->nexits;
	xl->edge = edge;
	bool recorded = false;
	for (uint32_t j = 0; j < L->nexits; j++) {
		uint32_t xb = L->exit_from[j], tb = L->exit_to[j];
		const block *b = &r->blocks[xb], *t = &r->blocks[tb];
		uint32_t ix = b->first + b->ninsn - 1;
		const insn *in = &r->insns[ix];
		const branch_info *br = branch_at(a, ix);
		/* a computed exit (a counted search with a break) records
		 * where it leads too: the skeleton reads the loop's words at
		 * its entry, whichever exit comes (the jump keeps its
		 * computed condition, emit_cjump) */
		if (tb == 0 || !t->ninsn || !reachable(r, tb) || elided(g, ix) ||
		    (g->sliced && g->sliced[tb]) ||	/* records nothing there */
		    in->flow != FLOW_CJUMP || !branch_packed(in) || !br ||
		    (!edge && (!other_ways_in(g, l, tb) ||
			       shared_of(g->g, r->insns[t->first].addr) ||
			       g->returned_at[t->first] || (g->rchain && g->rchain[tb]))))
			return false;
		recorded |= br->how == BR_RECORDED;
		xl->x[j].insn = ix;
		xl->x[j].block = tb;
		if (!exit_register(g, l, xb, &xl->x[j]))
			return false;
	}
	for (uint32_t k = 0; k < L->nblocks; k++) {
		const block *lb = &r->blocks[L->blocks[k]];
		if (!reachable(r, L->blocks[k]) ||
		    (lb->flags & (BLK_CALL | BLK_TAILCALL | BLK_JUMPTABLE | BLK_IJUMP)))
			return false;
		for (uint32_t i = lb->first; i < lb->first + lb->ninsn; i++) {
			if (shared_of(g->g, r->insns[i].addr) || g->returned_at[i])
				return false;
			for (uint32_t p = g->probe_first[i]; p < a->nprobes && a->probes[p].insn == i; p++)
				if (a->probes[p].kind != PR_BRANCH ||
				    !(exit_jump(g, i) || elided(g, i)))
					return false;
		}
	}
	for (uint32_t k = 0; k < g->nargs; k++)
		if (!g->args[k].e && block_in_loop(r, a->s.block_of[g->args[k].insn], l))
			return false;
	return recorded;
}

/* No exit block of loop l is one of m's, nor lies inside m (a loop
 * leaving into another's header: that block's words come at each of the
 * other's iterations, between its entry and its exit). */
static bool exits_apart(const rgen *g, uint32_t l, uint32_t m)
{
	for (uint32_t j = 0; j < g->xl[l].n && g->xl[m].n; j++) {
		if (block_in_loop(g->r, g->xl[l].x[j].block, m))
			return false;
		for (uint32_t k = 0; k < g->xl[m].n; k++)
			if (g->xl[l].x[j].block == g->xl[m].x[k].block)
				return false;
	}
	return true;
}

/* Loop l recorded on its exit jumps' ways, or not treated. */
static void exit_on_edges(rgen *g, uint32_t l)
{
	if (g->xl[l].n && !g->xl[l].edge && !exit_loop_ok(g, l, &g->xl[l], true))
		g->xl[l].n = 0;
}

/* Loop l, planned as an exit-value loop: its counter and those of its
 * exits' start values are kept. */
static void use_exit_loop(rgen *g, uint32_t l)
{
	g->counter_used[l] = 1;
	for (uint32_t j = 0; j < g->xl[l].n; j++)
		mark_counters(g, g->xl[l].x[j].e0);
	g->g->st->exit_loops++;
}

static void plan_exits(rgen *g)
{
	const routine *r = g->r;
	if (g->g->o->all_accesses || g->role || !r->nloops)
		return;
	g->xl = xcalloc(r->nloops, sizeof *g->xl);
	for (uint32_t l = 0; l < r->nloops; l++)
		if (!exit_loop_ok(g, l, &g->xl[l], false) &&
		    !exit_loop_ok(g, l, &g->xl[l], true))
			g->xl[l].n = 0;
	/* two such loops leaving to the same block: the recorder writes
	 * both loops' words there, in loop order, whichever left, and the
	 * skeleton reads a loop's at its entry (python3 desynchronised so
	 * once loops with several exits were treated).  Both record on
	 * their exit jumps' ways, which no other way passes. */
	for (uint32_t l = 0; l < r->nloops; l++)
		for (uint32_t m = l + 1; m < r->nloops; m++)
			if (g->xl[l].n && g->xl[m].n &&
			    (!exits_apart(g, l, m) || !exits_apart(g, m, l))) {
				exit_on_edges(g, l);
				exit_on_edges(g, m);
			}
	for (uint32_t l = 0; l < r->nloops; l++)
		if (g->xl[l].n)
			use_exit_loop(g, l);
}

/* Once the silent branches are known (plan_elisions): a loop whose other
 * branches are all silent ones records on its exit jumps' ways, which no
 * silent way passes. */
static void plan_late_exits(rgen *g)
{
	for (uint32_t l = 0; g->xl && l < g->r->nloops; l++) {
		if (g->xl[l].n)
			continue;
		if (exit_loop_ok(g, l, &g->xl[l], true))
			use_exit_loop(g, l);
		else
			g->xl[l].n = 0;
	}
}

/* ------------------------------------------------- silent branches */

/* The slicing of a branch: a conditional jump both of whose ways lead,
 * through blocks that do nothing the trace or the skeleton's state sees
 * (no access, no recorded value, no call, no loop counter stepped), to
 * the same block is not replayed, and its outcome is not recorded.  In
 * a byte loop such as `if (c != ' ') in_word = 1` the outcome changes
 * which instructions run but not which accesses.  Its instruction
 * fetches are then left out as a sliced loop's are (--no-slice keeps
 * the branches). */

/* Whether entering block `to` does nothing but go there and step the
 * counters of the loops it heads (emit_edge). */
static bool edge_plain(const rgen *g, uint32_t to)
{
	const routine *r = g->r;
	if (to == 0 || (g->slice_to && (g->slice_to[to] >= 0 || g->sliced[to])))
		return false;
	for (uint32_t l = 0; l < r->nloops; l++)
		for (uint32_t j = 0; g->xl && j < g->xl[l].n; j++)
			if (g->xl[l].x[j].block == to && !g->xl[l].edge)
				return false;
	return true;
}

static bool is_header(const routine *r, uint32_t b)
{
	for (uint32_t l = 0; l < r->nloops; l++)
		if (r->loops[l].header == b)
			return true;
	return false;
}

/* Whether an edge from block x into loop header h steps h's loops as one
 * from block y does (emit_edge: a back edge counts an iteration, an entry
 * starts the count). */
static bool same_entry(const rgen *g, uint32_t x, uint32_t y, uint32_t h)
{
	const routine *r = g->r;
	for (uint32_t l = 0; l < r->nloops; l++)
		if (r->loops[l].header == h && block_in_loop(r, x, l) != block_in_loop(r, y, l))
			return false;
	return true;
}

/* Where a replay of block bi goes on to when replaying it does nothing
 * but its fetch, else -1. */
static int32_t silent_next(const rgen *g, uint32_t bi)
{
	const routine *r = g->r;
	const analysis *a = &g->a;
	const block *b = &r->blocks[bi];
	if (!reachable(r, bi) || (b->flags & (BLK_CALL | BLK_TAILCALL | BLK_NORETURN |
					      BLK_JUMPTABLE | BLK_IJUMP | BLK_SETJMP |
					      BLK_HALT | BLK_RET)))
		return -1;
	uint32_t last = b->first + b->ninsn - 1;
	for (uint32_t i = b->first; i <= last; i++) {
		const insn *in = &r->insns[i];
		if (in->nmem || g->returned_at[i] || insn_is_rep(in) || in->op == OP_SYSCALL ||
		    shared_of(g->g, in->addr) ||
		    (in->flow != FLOW_NEXT && in->flow != FLOW_JUMP && in->flow != FLOW_CJUMP))
			return -1;
		for (uint32_t k = g->probe_first[i]; k < a->nprobes && a->probes[k].insn == i; k++)
			if (!(a->probes[k].kind == PR_BRANCH && elided(g, i)))
				return -1;
		for (uint32_t k = 0; k < g->nargs; k++)
			if (g->args[k].insn == i)
				return -1;
	}
	if (r->insns[last].flow == FLOW_CJUMP)
		return elided(g, last) ? g->elide_to[bi] : -1;
	if (b->nsucc != 1)
		return -1;
	uint64_t to = r->insns[last].flow == FLOW_JUMP ? r->insns[last].target : b->end;
	int n = cfg_block_of(r, to);
	return n >= 0 && (uint32_t)n == b->succ[0] && r->blocks[n].start == to ? n : -1;
}

/* The first block that does something, on the way from an edge of
 * block bi into `to`, when every edge on the way is quiet; else -1.  A
 * loop header ends the way (no cycle of elided jumps replays without
 * reading a word), when bi's edge into it would step its loops as the
 * way's last edge does: `c = lower(c)` merging at the loop's latch. */
static int32_t silent_end(const rgen *g, uint32_t bi, uint32_t to)
{
	uint32_t from = bi;
	for (int steps = 0; steps < 64; steps++) {
		if (!edge_plain(g, to))
			return -1;
		if (is_header(g->r, to))
			return same_entry(g, bi, from, to) ? (int32_t)to : -1;
		int32_t n = silent_next(g, to);
		if (n < 0)
			return (int32_t)to;
		from = to;
		to = (uint32_t)n;
	}
	return -1;	/* a silent cycle (a loop without exit we can see) */
}

static void plan_elisions(rgen *g)
{
	const routine *r = g->r;
	if (g->g->o->all_accesses || g->g->o->no_slice)
		return;
	g->elide_to = xmalloc((r->nblocks ? r->nblocks : 1) * sizeof *g->elide_to);
	for (uint32_t b = 0; b < r->nblocks; b++)
		g->elide_to[b] = -1;
	/* an elided jump's block may make another's way silent: again until
	 * nothing changes */
	for (bool more = true; more;) {
		more = false;
		for (uint32_t bi = 0; bi < r->nblocks; bi++) {
			const block *b = &r->blocks[bi];
			uint32_t i = b->first + b->ninsn - 1;
			const insn *in = &r->insns[i];
			/* only recorded outcomes (a computed condition costs
			 * nothing, and its values are declared for it) */
			const branch_info *br = branch_at(&g->a, i);
			if (g->elide_to[bi] >= 0 || !reachable(r, bi) || in->flow != FLOW_CJUMP ||
			    (br && br->how == BR_COMPUTED) || !has_probe(g, i, PR_BRANCH) ||
			    exit_jump(g, i) || shared_of(g->g, in->addr) ||
			    (g->sliced && g->sliced[bi]) ||
			    ((b->flags & BLK_TAILCALL) && b->call_target == in->target))
				continue;
			int t = cfg_block_of(r, in->target), n = cfg_block_of(r, b->end);
			if (t < 0 || n < 0 || r->blocks[t].start != in->target ||
			    r->blocks[n].start != b->end)
				continue;
			int32_t x = silent_end(g, bi, (uint32_t)t);
			if (x < 0 || x != silent_end(g, bi, (uint32_t)n) || (uint32_t)x == bi)
				continue;
			g->elide_to[bi] = x;
			g->nelided++;
			g->g->st->elided_branches++;
			more = true;
		}
	}
}

/* ------------------------------------------------ carried φ values */

/* A φ whose value some address or branch needs is recorded where its
 * block starts.  When every argument of it is known to the skeleton on
 * its edge (an expression over values recorded anyway, counters the
 * skeleton keeps, and other such φs), the skeleton computes it there
 * instead (emit_carried) and nothing is recorded: gzip's best match
 * length, carried around its chain loop, cost a word per iteration.
 * Likewise a value an and, shr or sar defines (expr_of_def_bits) from
 * known operands is computed where it is defined (emit_insn): gzip's
 * `prev[cur_match & WMASK]` index, cur_match being recorded anyway.
 * Only blocks the skeleton enters by their own edges qualify: not the
 * target of a sliced loop or an elided jump (the way taken is not
 * known there), not in a sliced or irreducible loop, not block 0 (its
 * entry edge is the call), in routines with neither shared code (one
 * patch for several skeletons), setjmp or landing pads (entered other
 * than by edges), nor approximate mode.  Nothing new is recorded here
 * (plan_phi_edges, before it, adds probes at the ends of the ways into a
 * φ's block that do not know it, instead of the φ's own); slices, elisions and exit
 * loops are planned before it and stay as they are. */
static bool in_bad_loop(const rgen *g, uint32_t b)
{
	const routine *r = g->r;
	if (g->sliced && g->sliced[b])
		return true;
	for (int32_t x = r->blocks[b].loop; x >= 0; x = r->loops[x].parent)
		if (r->loops[x].irreducible)
			return true;
	return false;
}

static bool carry_block_ok(const rgen *g, uint32_t b)
{
	const routine *r = g->r;
	if (b == 0 || !reachable(r, b) || in_bad_loop(g, b))
		return false;
	for (uint32_t x = 0; x < r->nblocks; x++)
		if ((g->slice_to && g->slice_to[x] == (int32_t)b) ||
		    (g->elide_to && g->elide_to[x] == (int32_t)b))
			return false;
	for (uint32_t k = 0; k < r->blocks[b].npred; k++) {
		uint32_t p = r->blocks[b].pred[k];
		if (reachable(r, p) && in_bad_loop(g, p))
			return false;
	}
	return true;
}

typedef struct carry_check {
	const rgen *g;
	uint8_t *st;            /* per value: CV_* */
	uint32_t b;             /* the φ's block */
	bool ok;
	VEC(uint32_t) *more;    /* growing: φs found as arguments */
	int64_t pred;           /* the edge's block, -1: a computed value's */
} carry_check;

/* Whether block p's end records value v for its edges (plan_phi_edges). */
static bool edge_recorded(const rgen *g, int64_t p, uint32_t v)
{
	if (p < 0)
		return false;
	const block *b = &g->r->blocks[p];
	uint32_t li = b->first + b->ninsn - 1;
	for (uint32_t k = g->probe_first[li]; k < g->a.nprobes && g->a.probes[k].insn == li; k++)
		if (g->a.probes[k].edge && g->a.probes[k].val == v)
			return true;
	return false;
}

/* st[v]: recorded (a probe reads it), and/or a carried candidate;
 * then carried for good (live: a recorded one needs it), and its
 * arguments visited (done) */
enum { CV_RECORDED = 1, CV_CARRIED = 2, CV_LIVE = 4, CV_DONE = 8 };

static void carry_live(uint32_t v, void *arg)
{
	uint8_t *st = arg;
	if (!SSA_PSEUDO(v) && st[v] & CV_CARRIED)
		st[v] |= CV_LIVE;
}

static bool carry_phi_ok(const rgen *g, uint32_t v)
{
	const ssa_value *sv = &g->a.s.vals[v];
	return sv->kind == V_PHI && sv->var < 16 && sv->var != R_SP && carry_block_ok(g, sv->block);
}

static bool carry_def_ok(const rgen *g, uint32_t v)
{
	return expr_of_def_bits(g->a.ec, v) && !in_bad_loop(g, g->a.s.block_of[g->a.s.vals[v].insn]);
}

static void carry_leaf(uint32_t v, void *arg)
{
	carry_check *c = arg;
	if (SSA_PSEUDO(v) || c->st[v] & CV_CARRIED)
		return;
	/* a φ or an and/shr/sar nothing records, known the same way:
	 * computed too */
	if (c->more && !c->st[v] && (carry_phi_ok(c->g, v) || carry_def_ok(c->g, v))) {
		c->st[v] = CV_CARRIED;
		vec_push(*c->more, v);
		return;
	}
	/* recorded, and read before the edge: not a call's result, read
	 * at the return site, where b starts (a φ of b, or a value b
	 * defines, is of this iteration on a back edge) */
	const ssa_value *sv = &c->g->a.s.vals[v];
	if (!(c->st[v] & CV_RECORDED) && edge_recorded(c->g, c->pred, v))
		return;
	if (!(c->st[v] & CV_RECORDED) ||
	    (sv->kind == V_CLOBBER && c->g->a.s.block_of[sv->insn + 1] == c->b))
		c->ok = false;
}

static void carry_counters(carry_check *c, const expr *e)
{
	if (!e || !c->ok)
		return;
	if (e->kind == E_COUNTER && (!c->g->counter_used[e->val] ||
				     in_bad_loop(c->g, c->g->r->loops[e->val].header)))
		c->ok = false;
	carry_counters(c, e->a);
	carry_counters(c, e->b);
}

/* Whether φ v's argument on the edge from its block's k-th predecessor
 * is known (c: the φ's check, its `more` growing). */
static bool carry_edge_ok(carry_check *c, uint32_t v, uint32_t k)
{
	const ssa_value *sv = &c->g->a.s.vals[v];
	c->pred = c->g->r->blocks[sv->block].pred[k];
	expr *e = expr_of_value(c->g->a.ec, sv->args[k]);
	if (!e)
		return false;
	expr_leaves(e, carry_leaf, c);
	carry_counters(c, e);
	return c->ok;
}

/* Whether φ v's arguments are all known on their edges, or a computed
 * value's operands where it is defined; with `more`, the φs among them
 * not yet candidates become candidates (pushed). */
static bool carry_args_ok(const rgen *g, uint32_t v, uint8_t *st, void *more)
{
	const ssa_value *sv = &g->a.s.vals[v];
	if (sv->kind == V_DEF) {
		/* its operands are defined before it, and read there */
		carry_check c = { g, st, UINT32_MAX, true, more, -1 };
		expr *e = expr_of_def_bits(g->a.ec, v);
		expr_leaves(e, carry_leaf, &c);
		carry_counters(&c, e);
		return c.ok;
	}
	const block *b = &g->r->blocks[sv->block];
	carry_check c = { g, st, sv->block, sv->nargs == b->npred, more, -1 };
	for (uint32_t k = 0; k < b->npred && c.ok; k++)
		if (reachable(g->r, b->pred[k]) && !carry_edge_ok(&c, v, k))
			return false;
	return c.ok;
}

typedef VEC(uint32_t) u32_vec;

static bool carry_wanted(const rgen *g)
{
	const analysis *a = &g->a;
	return a->modeled && !g->g->o->all_accesses && !g->g->o->approx && a->nprobes &&
	       routine_plain_as(g, false);
}

/* The values probes record (CV_RECORDED), and the φs and computed values
 * the skeleton can carry (CV_CARRIED, listed in cand): the candidates,
 * then, optimistically, those with an argument not known dropped until
 * none is.  st has a byte per SSA value. */
static uint8_t *carry_solve(const rgen *g, u32_vec *cand)
{
	const analysis *a = &g->a;
	uint8_t *st = xcalloc(a->s.nvals ? a->s.nvals : 1, 1);
	for (uint32_t k = 0; k < a->nprobes; k++) {
		const probe *p = &a->probes[k];
		if ((p->kind == PR_REG_BEFORE || p->kind == PR_REG_AFTER) && !p->rep && !p->edge)
			st[p->val] |= CV_RECORDED;
	}
	for (uint32_t k = 0; k < a->nprobes; k++) {
		const probe *p = &a->probes[k];
		if (p->rep || (st[p->val] & CV_CARRIED))
			continue;
		if ((p->kind == PR_REG_BEFORE && carry_phi_ok(g, p->val)) ||
		    (p->kind == PR_REG_AFTER && carry_def_ok(g, p->val))) {
			st[p->val] |= CV_CARRIED;
			vec_push(*cand, p->val);
		}
	}
	/* the φs their arguments need, transitively */
	for (size_t k = 0; k < cand->n; k++)
		(void)carry_args_ok(g, cand->a[k], st, cand);
	/* optimistic: drop the φs with an argument not known, until none */
	for (bool changed = cand->n > 0; changed;) {
		changed = false;
		for (size_t k = 0; k < cand->n; k++)
			if (st[cand->a[k]] & CV_CARRIED && !carry_args_ok(g, cand->a[k], st, NULL)) {
				st[cand->a[k]] &= (uint8_t)~CV_CARRIED;
				changed = true;
			}
	}
	return st;
}

/* Whether φ v's argument on the edge from its block's k-th predecessor
 * is known there (st as carry_solve left it). */
static bool carry_edge_known(const rgen *g, uint8_t *st, uint32_t v, uint32_t k)
{
	carry_check c = { g, st, g->a.s.vals[v].block, true, NULL, -1 };
	return carry_edge_ok(&c, v, k);
}

/* A probe recording register reg at the end of block p (val: its value
 * there, on p's edge into h), when p is a block the skeleton replays by
 * its own edges and whose end runs about as often as that edge: one way
 * on (h), or a back edge of h's loop whose other way leaves the loop. */
static bool edge_probe(const rgen *g, uint32_t p, uint32_t h, uint8_t reg, uint32_t val,
		       probe *out)
{
	const routine *r = g->r;
	const block *b = &r->blocks[p];
	if (p == 0 || !reachable(r, p) || !b->ninsn || in_bad_loop(g, p) ||
	    (g->elide_to && g->elide_to[p] >= 0) || (g->rchain && g->rchain[p]))
		return false;
	for (uint32_t l = 0; g->xl && l < r->nloops; l++)
		if (g->xl[l].n && block_in_loop(r, p, l))
			return false;
	uint32_t li = b->first + b->ninsn - 1;
	const insn *last = &r->insns[li];
	if (shared_of(g->g, last->addr) || insn_is_rep(last) || last->op == OP_SYSCALL)
		return false;
	if (last->flow == FLOW_CJUMP) {
		int32_t l = r->blocks[h].loop;
		if (b->nsucc != 2 || l < 0 || r->loops[l].header != h || !block_in_loop(r, p, (uint32_t)l))
			return false;
		uint32_t o = b->succ[0] == h ? b->succ[1] : b->succ[0];
		if (o == h || block_in_loop(r, o, (uint32_t)l))
			return false;
	} else if ((last->flow != FLOW_NEXT && last->flow != FLOW_JUMP) || b->nsucc != 1)
		return false;
	probe q = { .reg = reg, .insn = li, .val = val,
		    .depth = b->loop < 0 ? 0 : r->loops[b->loop].depth };
	if (last->writes & REG_BIT(reg)) {
		q.kind = PR_REG_AFTER;
		if (last->flow != FLOW_NEXT || ssa_after(&g->a.s, li, reg) != val)
			return false;
	} else {
		q.kind = PR_REG_BEFORE;
		if (g->a.s.before[li][reg] != val)
			return false;
	}
	*out = q;
	return true;
}

/* φs recorded where their block starts although the skeleton knows their
 * value on some of the edges into it (an argument it computes, a value
 * recorded anyway): recorded instead at the ends of the other edges'
 * blocks, the argument there, so that plan_carried carries the φ and the
 * edges that know it record nothing.  grep's DFA loop: the text pointer
 * and the transition table, known on its busy back edges, were recorded
 * at its header every step. */
static void plan_phi_edges(rgen *g)
{
	analysis *a = &g->a;
	const routine *r = g->r;
	if (!carry_wanted(g))
		return;
	u32_vec cand = {0};
	uint8_t *st = carry_solve(g, &cand);
	VEC(probe) add = {0};
	u32_vec of = {0};	/* the φ of each */
	for (uint32_t k = 0; k < a->nprobes; k++) {
		const probe *p = &a->probes[k];
		uint32_t v = p->val;
		const ssa_value *sv = &a->s.vals[v];
		if (p->kind != PR_REG_BEFORE || p->rep || sv->kind != V_PHI ||
		    p->insn != r->blocks[sv->block].first || (st[v] & CV_CARRIED) ||
		    !carry_phi_ok(g, v))
			continue;
		const block *hb = &r->blocks[sv->block];
		size_t n0 = add.n;
		uint32_t known = 0, unknown = 0;
		bool ok = sv->nargs == hb->npred;
		for (uint32_t j = 0; ok && j < hb->npred; j++) {
			if (!reachable(r, hb->pred[j]))
				continue;
			if (carry_edge_known(g, st, v, j)) {
				known++;
				continue;
			}
			/* the edge's copy reads the argument's leaf: the
			 * register's value there, recorded as that leaf */
			const expr *e = expr_of_value(a->ec, sv->args[j]);
			probe q;
			ok = e && e->kind == E_LEAF && !SSA_PSEUDO(e->val) &&
			     edge_probe(g, hb->pred[j], sv->block, sv->var, sv->args[j], &q);
			if (ok) {
				q.val = e->val;
				q.edge = 1;
				vec_push(add, q);
				vec_push(of, v);
				unknown++;
			}
		}
		if (!ok || !known || !unknown) {
			add.n = n0;
			of.n = n0;
		}
	}
	free(cand.a);
	free(st);
	/* with them, the φs must be carried, else their probes are words
	 * for nothing: until every φ left is */
	uint32_t n0 = a->nprobes;
	for (bool again = add.n > 0; again;) {
		again = false;
		a->nprobes = n0;
		a->probes = xrealloc(a->probes, (n0 + add.n) * sizeof *a->probes);
		memcpy(a->probes + n0, add.a, add.n * sizeof *add.a);
		a->nprobes += (uint32_t)add.n;
		iv_sort_probes(a);	/* for edge_recorded */
		index_probes(g);
		u32_vec c2 = {0};
		st = carry_solve(g, &c2);
		free(c2.a);
		size_t n = 0;
		for (size_t k = 0; k < add.n; k++)
			if (st[of.a[k]] & CV_CARRIED) {
				add.a[n] = add.a[k];
				of.a[n++] = of.a[k];
			}
		again = n < add.n;
		add.n = of.n = n;
		free(st);
		/* the program's probes first again, in order */
		size_t m = 0;
		for (uint32_t k = 0; k < a->nprobes; k++)
			if (!a->probes[k].edge)
				a->probes[m++] = a->probes[k];
		assert(m == n0);
	}
	if (add.n)
		memcpy(a->probes + n0, add.a, add.n * sizeof *add.a);
	a->nprobes = n0 + (uint32_t)add.n;
	for (size_t k = 0; k < add.n; k++)
		g->leaf_used[add.a[k].val] = 1;	/* declared, read there */
	iv_sort_probes(a);
	index_probes(g);
	g->g->st->phi_edges += (uint32_t)add.n;
	free(add.a);
	free(of.a);
}

static void plan_carried(rgen *g)
{
	analysis *a = &g->a;
	if (!carry_wanted(g))
		return;
	u32_vec cand = {0};
	uint8_t *st = carry_solve(g, &cand);
	/* those a recorded one needs, through arguments (CV_LIVE) */
	for (size_t k = 0; k < cand.n; k++)
		if ((st[cand.a[k]] & (CV_CARRIED | CV_RECORDED)) == (CV_CARRIED | CV_RECORDED))
			st[cand.a[k]] |= CV_LIVE;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < cand.n; k++) {
			uint32_t v = cand.a[k];
			if ((st[v] & (CV_CARRIED | CV_LIVE | CV_DONE)) != (CV_CARRIED | CV_LIVE))
				continue;
			st[v] |= CV_DONE;
			const ssa_value *sv = &a->s.vals[v];
			if (sv->kind == V_DEF)
				expr_leaves(expr_of_def_bits(a->ec, v), carry_live, st);
			for (uint32_t j = 0; sv->kind == V_PHI && j < sv->nargs; j++)
				if (reachable(g->r, g->r->blocks[sv->block].pred[j]))
					expr_leaves(expr_of_value(a->ec, sv->args[j]), carry_live, st);
			changed = true;
		}
	}
	for (size_t k = 0; k < cand.n; k++)
		if (st[cand.a[k]] & CV_LIVE) {
			g->carried = xrealloc(g->carried, (g->ncarried + 1) * sizeof *g->carried);
			g->carried[g->ncarried++] = cand.a[k];
			g->leaf_used[cand.a[k]] = 1;
			const ssa_value *sv = &a->s.vals[cand.a[k]];
			if (sv->kind == V_DEF) {
				if (!g->computed_at)
					g->computed_at = xcalloc(g->r->ninsn, 1);
				g->computed_at[sv->insn] = 1;
			}
			g->g->st->carried += (st[cand.a[k]] & CV_RECORDED) != 0;
		}
	uint32_t n = 0;
	for (uint32_t k = 0; k < a->nprobes; k++) {
		const probe *p = &a->probes[k];
		if ((p->kind != PR_REG_BEFORE && p->kind != PR_REG_AFTER) || p->rep ||
		    !(st[p->val] & CV_LIVE))
			a->probes[n++] = *p;
	}
	a->nprobes = n;
	index_probes(g);
	free(cand.a);
	free(st);
}

/* The probes of insn i: how many, and the after-probes' count. */
static uint32_t probes_of(const rgen *g, uint32_t i, uint32_t *after, uint32_t *last)
{
	const analysis *a = &g->a;
	uint32_t n = 0;
	*after = 0;
	for (uint32_t k = g->probe_first[i]; k < a->nprobes && a->probes[k].insn == i; k++) {
		n++;
		*last = k;
		*after += a->probes[k].kind == PR_REG_AFTER;
	}
	return n;
}

/* The conditional jump at insn i when its outcome can travel with a
 * byte or 16-bit word loaded and zero-extended earlier in its block
 * (movzx to a 32- or 64-bit register, recorded raw: narrow_load), the
 * last value recorded before the jump (nothing recorded, no call, no
 * other jump between), its register unchanged until the jump: the
 * recorder stores the register on the jump's ways, plus PATCH_TREG_MARK
 * on the way that leaves the jump's loop (PATCH_TREG), and the skeleton
 * reads the word where it read the value (IN_EARLY).  A byte-scanning
 * loop whose exit depends on memory (a DFA's next state, a lookup
 * table's entry) so records one word an iteration, not two.  Not for
 * shared instructions or the approximate mode. */
static void tbyte_try(rgen *g, uint32_t i)
{
	const routine *r = g->r;
	const analysis *a = &g->a;
	const insn *j = &r->insns[i];
	uint32_t after, last, kp;
	if (j->flow != FLOW_CJUMP || !branch_packed(j) || exit_jump(g, i) || elided(g, i) ||
	    probes_of(g, i, &after, &last) != 1 || a->probes[last].kind != PR_BRANCH ||
	    shared_of(g->g, j->addr) || g->returned_at[i] || g->qret_at[i])
		return;
	const branch_info *br = branch_at(a, i);
	if (br && br->how == BR_COMPUTED)
		return;
	uint32_t b = a->s.block_of[i], pi = i;
	while (pi-- > r->blocks[b].first) {
		const insn *in = &r->insns[pi];
		uint32_t n = probes_of(g, pi, &after, &kp);
		if (in->flow != FLOW_NEXT || g->returned_at[pi] || g->qret_at[pi])
			return;
		if (!n)
			continue;
		const probe *p = &a->probes[kp];
		if (after != 1 || p->kind != PR_REG_AFTER || p->rep || p->reg >= 16 ||
		    p->reg == R_SP || in->op != OP_MOVZX || in->wsize[p->reg] < 4 ||
		    !narrow_load(in->addr, p->reg, true) || shared_of(g->g, in->addr))
			return;
		/* the register kept; nothing that faults without an access or
		 * makes a system call (a handler placed there, not at an
		 * access), nothing shared with another routine */
		for (uint32_t x = pi + 1; x < i; x++)
			if ((r->insns[x].writes & REG_BIT(p->reg)) || r->insns[x].op == OP_SYSCALL ||
			    faults_without_access(&r->insns[x]) || shared_of(g->g, r->insns[x].addr))
				return;
		for (uint32_t x = 0; x < g->nargs; x++)
			if (g->args[x].insn > pi && g->args[x].insn <= i)
				return;
		int32_t l = r->blocks[b].loop;
		int32_t tb = cfg_block_of(r, j->target), fb = cfg_block_of(r, r->blocks[b].end);
		uint8_t way = PATCH_ON_TAKEN;
		if (l >= 0 && tb >= 0 && fb >= 0 && block_in_loop(r, (uint32_t)tb, (uint32_t)l) &&
		    !block_in_loop(r, (uint32_t)fb, (uint32_t)l))
			way = PATCH_ON_FALL;
		if (!g->tb_at) {
			g->tb_at = xcalloc(r->ninsn, sizeof *g->tb_at);
			g->tb_val = xcalloc(r->ninsn, sizeof *g->tb_val);
			g->tb_reg = xcalloc(r->ninsn, 1);
			g->tb_way = xcalloc(r->ninsn, 1);
		}
		g->tb_at[pi] = i + 1;
		g->tb_val[i] = p->val + 1;
		g->tb_reg[i] = p->reg;
		g->tb_way[i] = way;
		g->g->st->tbytes++;
		return;
	}
}

static void plan_tbytes(rgen *g)
{
	if (g->role)	/* approximate: probes come and go per block */
		return;
	for (uint32_t i = 0; i < g->r->ninsn; i++)
		if (reachable(g->r, (uint32_t)cfg_block_of(g->r, g->r->insns[i].addr)))
			tbyte_try(g, i);
}

static void rgen_free(rgen *g)
{
	free(g->carried);
	free(g->computed_at);
	free(g->xl);
	free(g->elide_to);
	free(g->slice_to);
	free(g->sliced);
	free(g->tick);
	free(g->counter_used);
	free(g->lp_ids);
	free(g->leaf_used);
	free(g->returned_at);
	free(g->rchain);
	free(g->qret_at);
	free(g->probe_first);
	free(g->args);
	free(g->role);
	free(g->fulcrum);
	free(g->attr_next);
	free(g->tb_at);
	free(g->tb_val);
	free(g->tb_reg);
	free(g->tb_way);
	iv_free(&g->a);
}

/* ------------------------------------------------------------- driver */

/* The union of the probes each routine needs at the instructions it
 * shares with others (the recorder writes one word per patch line, so
 * each such instruction must have one set of lines and every routine's
 * skeleton must read all of them). */
static void find_shared_probes(gen *g)
{
	const program *p = g->p;
	uint32_t one;
	for (uint32_t id = 0; id < p->nroutines; id++) {
		const routine *r = &p->routines[id];
		bool any = false;
		for (uint32_t i = 0; i < r->ninsn && !any; i++)
			any = addrmap_get(&g->shared, r->insns[i].addr, &one);
		if (!any || !r->nblocks)
			continue;
		rgen rg = { .g = g, .r = r, .id = id };
		analyze_routine(&rg, g->o->all_accesses ? IV_ALL_DIRECT : 0);
		plan_calls(&rg);
		for (uint32_t i = 0; i < r->ninsn; i++) {
			uint64_t pc = r->insns[i].addr;
			uint32_t x;
			if (!addrmap_get(&g->shared, pc, &one) ||
			    !reachable(r, (uint32_t)cfg_block_of(r, pc)))
				continue;
			if (!addrmap_get(&g->shidx, pc, &x)) {
				x = g->nsh++;
				g->sh = xrealloc(g->sh, g->nsh * sizeof *g->sh);
				memset(&g->sh[x], 0, sizeof g->sh[x]);
				addrmap_put(&g->shidx, pc, x);
			}
			shared_collect(&rg, i, &g->sh[x]);
		}
		rgen_free(&rg);
	}
	for (uint32_t k = 0; k < g->nsh; k++)
		if (g->sh[k].n > 1)
			qsort(g->sh[k].v, g->sh[k].n, sizeof *g->sh[k].v, sp_cmp);
}

/* Accesses the decoder could not give an exact address form for. */
static void count_inexact(const program *p, skel_stats *st)
{
	for (uint32_t k = 0; k < p->nroutines; k++)
		for (uint32_t i = 0; i < p->routines[k].ninsn; i++) {
			const insn *in = &p->routines[k].insns[i];
			for (unsigned m = 0; m < in->nmem; m++)
				if (in->mem[m].flags & MEM_INEXACT) {
					if (!st->inexact++ || in->addr < st->first_inexact)
						st->first_inexact = in->addr;
				}
		}
}

/* Instructions that two routines both decode (code reached by jumps from
 * several routines): their probes are the union (find_shared_probes). */
static uint32_t count_shared(const program *p, addrmap *out)
{
	addrmap seen = {0};
	uint32_t shared = 0, one;
	for (uint32_t k = 0; k < p->nroutines; k++)
		for (uint32_t i = 0; i < p->routines[k].ninsn; i++) {
			uint64_t a = p->routines[k].insns[i].addr;
			if (addrmap_get(&seen, a, &one)) {
				shared++;
				addrmap_put(out, a, 1);
			} else {
				addrmap_put(&seen, a, 1);
			}
		}
	addrmap_free(&seen);
	return shared;
}

/* A routine may return through unanalyzed code when it tail-calls out of
 * the analyzed program, directly or through analyzed tail calls. */
static void find_resumes(gen *g)
{
	const program *p = g->p;
	g->resume = xcalloc(p->nroutines ? p->nroutines : 1, 1);
	for (uint32_t i = 0; i < p->nroutines; i++)
		for (uint32_t b = 0; b < p->routines[i].nblocks; b++) {
			const block *bl = &p->routines[i].blocks[b];
			int32_t id = bl->flags & BLK_SETJMP ? routine_id(p, bl->end) : -1;
			if (id >= 0)
				g->resume[id] = 1;
		}
	for (size_t i = 0; i < p->bin.nlp; i++) {
		int32_t id = routine_id(p, p->bin.lp_pads[i]);
		if (id >= 0)
			g->resume[id] = 1;
	}
}

/* A routine whose call sites have C++ landing pads keeps an sk_resume
 * for them in its frame: an exception caught there (or a cleanup run)
 * shows as the pad's entry word, and the skeleton unwinds to this frame
 * and runs the pad's routine in it (skel_rt.h: sk_catch_push). */
static void emit_landing_pads(rgen *g)
{
	const program *p = g->g->p;
	FILE *f = g->g->f;
	VEC(uint32_t) ids = {0};
	for (size_t i = 0; i < p->bin.nlp; i++) {
		int32_t id = routine_id(p, p->bin.lp_pads[i]);
		if (id < 0 || cfg_block_of(g->r, p->bin.lp_sites[i]) < 0)
			continue;
		bool dup = false;
		for (size_t k = 0; k < ids.n && !dup; k++)
			dup = ids.a[k] == (uint32_t)id;
		if (!dup)
			vec_push(ids, (uint32_t)id);
	}
	g->lp_ids = ids.a;
	g->nlp_ids = (uint32_t)ids.n;
	if (!ids.n)
		return;
	fputs("\tstatic const uint64_t sk_lp_words[] = {", f);
	for (size_t k = 0; k < ids.n; k++)
		fprintf(f, " SK_ENTRY(%u),", ids.a[k]);
	fputs(" };\n\tsk_resume sk_lp __attribute__((cleanup(sk_resume_pop)));\n", f);
	fprintf(f, "\tsk_catch_push(t, &sk_lp, sk_lp_words, %zu);\n", ids.n);
	fputs("\tif (__builtin_setjmp(sk_lp.jb)) {\n\t\tswitch (sk_lp.landed) {\n", f);
	for (size_t k = 0; k < ids.n; k++)
		fprintf(f, "\t\tcase %zu: r_%u(t); break;\n", k, ids.a[k]);
	fputs("\t\t}\n\t\treturn;\n\t}\n", f);
}

/* Before a call of a routine with landing pads: the pad an exception
 * leaving the call lands on, as its index in sk_lp_words (SK_NO_PAD:
 * none, the unwinder passes this frame by), which the replay matches a
 * landing's word against (resume_longjmp): the frame a pad's word lands
 * in is the innermost one whose call has that pad, not the innermost
 * one of the routine (recursion, a cleanup's _Unwind_Resume). */
static void emit_call_pad(rgen *g, const insn *in)
{
	const program *p = g->g->p;
	if (!g->nlp_ids)
		return;
	uint64_t at = in->addr + in->len - 1;   /* return address less one */
	uint32_t k = g->nlp_ids;
	for (size_t i = 0; i < p->bin.nlp && k == g->nlp_ids; i++) {
		if (at < p->bin.lp_sites[i] || at >= p->bin.lp_ends[i])
			continue;
		int32_t id = routine_id(p, p->bin.lp_pads[i]);
		for (uint32_t j = 0; id >= 0 && j < g->nlp_ids; j++)
			if (g->lp_ids[j] == (uint32_t)id)
				k = j;
	}
	if (k == g->nlp_ids)
		fputs("\tsk_lp.pad = SK_NO_PAD;\n", g->g->f);
	else
		fprintf(g->g->f, "\tsk_lp.pad = %u;\n", k);
}

static void find_extern_tails(gen *g)
{
	const program *p = g->p;
	g->extern_tail = xcalloc(p->nroutines ? p->nroutines : 1, 1);
	/* those whose tails cannot be followed from them: as if they had
	 * one out of the object (a direct call of theirs then records its
	 * RETURNED word; without, a tail jump out of the code they run
	 * took the caller's) */
	for (uint32_t i = 0; i < p->nroutines; i++)
		g->extern_tail[i] = runs_other_code(p, &p->routines[i]);
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t i = 0; i < p->nroutines; i++) {
			const routine *r = &p->routines[i];
			if (g->extern_tail[i])
				continue;
			for (uint32_t b = 0; b < r->nblocks && !g->extern_tail[i]; b++) {
				const block *bl = &r->blocks[b];
				if (bl->flags & BLK_IJUMP)
					g->extern_tail[i] = 1;
				if (bl->flags & BLK_TAILCALL) {
					int32_t id = routine_id(p, bl->call_target);
					if (id < 0 || g->extern_tail[id])
						g->extern_tail[i] = 1;
				}
				for (uint32_t k = 0; k < bl->ntails; k++) {
					int32_t id = routine_id(p, bl->tails[k]);
					if (id < 0 || g->extern_tail[id])
						g->extern_tail[i] = 1;
				}
			}
			changed |= g->extern_tail[i];
		}
	}
}

/* r_<id>(t) for routines entered through entry words; internal ones take
 * their entry values as arguments, named after the entry SSA values. */
static void emit_signature(gen *g, uint32_t id)
{
	fprintf(g->f, "void r_%u(sk_thread *t", id);
	if (g->internal[id])
		for (unsigned v = 0; v < SSA_NVARS; v++)
			if (g->entry_mask[id] & (1u << v))
				fprintf(g->f, ", uint64_t v%u", v);
	fputc(')', g->f);
}

/* A routine is internal when its start is never taken as a value (no
 * immediate, no RIP-relative address, no pointer-sized word in data), the
 * loader does not call it, and analyzed code only enters it by direct
 * calls and jumps. */
static void find_internal(gen *g)
{
	const program *p = g->p;
	const binary *b = &p->bin;
	uint32_t n = p->nroutines;
	g->internal = xcalloc(n ? n : 1, 1);
	g->entry_mask = xcalloc(n ? n : 1, sizeof *g->entry_mask);
	if (g->o->all_accesses)
		return;
	uint8_t *taken = xcalloc(n ? n : 1, 1), *called = xcalloc(n ? n : 1, 1);
	int32_t id;
#define TAKE(a) do { if ((id = routine_id(p, (a))) >= 0) taken[id] = 1; } while (0)
	TAKE(b->entry);
	for (size_t i = 0; i < b->ninit_funcs; i++)
		TAKE(b->init_funcs[i]);
	for (uint32_t i = 0; i < p->ntaken; i++)
		TAKE(p->taken[i]);
	for (uint32_t k = 0; k < n; k++) {
		const routine *r = &p->routines[k];
		/* entered in ways a call site cannot pass values through */
		for (uint32_t bi = 0; bi < r->nblocks; bi++) {
			const block *bl = &r->blocks[bi];
			const insn *last = &r->insns[bl->first + bl->ninsn - 1];
			if ((bl->flags & BLK_TAILCALL) && last->flow != FLOW_JUMP)
				TAKE(bl->call_target);
			for (uint32_t t = 0; t < bl->ntails; t++)
				TAKE(bl->tails[t]);
			if ((last->flow == FLOW_CALL || last->flow == FLOW_JUMP) &&
			    (id = routine_id(p, last->target)) >= 0)
				called[id] = 1;
		}
	}
#undef TAKE
	/* a routine that may return through unanalyzed code is called like
	 * a library function (RETURNED word), so it keeps its entry word */
	for (uint32_t k = 0; k < n; k++)
		g->internal[k] = !taken[k] && called[k] && !g->extern_tail[k] &&
				 p->routines[k].nblocks && !p->routines[k].blocks[0].npred;
	free(taken);
	free(called);
}

/* Imports whose calls the replay must see through their entry words:
 * they return twice, never, or elsewhere than to their caller (setjmp,
 * longjmp, fork and spawn, exec, context switches, unwinding), where the
 * skeleton's own protocols read the entry word. */
static bool link_refused(const char *name)
{
	static const char *const names[] = {
		"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "longjmp", "_longjmp",
		"siglongjmp", "__longjmp_chk", "fork", "_Fork", "vfork", "clone", "clone3",
		"posix_spawn", "posix_spawnp", "system", "popen", "execve", "execv",
		"execvp", "execvpe", "execl", "execlp", "execle", "fexecve", "getcontext",
		"setcontext", "swapcontext", "makecontext", "__cxa_throw", "__cxa_rethrow",
		"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
		"_Unwind_ForcedUnwind", "pthread_exit", "__libc_start_main",
		SKEL_REPLACED_ROUTINE,
	};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++)
		if (!strcmp(name, names[k]))
			return true;
	return false;
}

static void plt_taint(const binary *b, uint8_t *bad, uint64_t a)
{
	const elf_plt *e = elf_plt_at(b, a);
	if (e)
		bad[e - b->plts] = 1;
}

/* Ways into a stub the skeleton does not replay with sk_plt: code no
 * routine holds (bytes the analysis did not reach, which may still run:
 * a callback, a block after a call wrongly taken for noreturn), blocks
 * the skeleton leaves out as unreachable.  Their calls would enter a
 * linked callee quietly where the replay expects its entry word.  Every
 * byte of the text is tried as a direct call or jump (rel32: e8, e9,
 * 0f 8x; rel8: eb, 7x, e3) to a stub; one that is not a call or tail
 * jump of a reachable block taints it (a few bytes of data or of other
 * instructions that only look like one cost a link, nothing else). */
static void plt_taint_unmodeled(gen *g, uint8_t *bad)
{
	const program *p = g->p;
	const binary *b = &p->bin;
	addrmap handled = { 0 };
	for (uint32_t k = 0; k < p->nroutines; k++) {
		const routine *r = &p->routines[k];
		for (uint32_t bi = 0; bi < r->nblocks; bi++) {
			const block *bl = &r->blocks[bi];
			const insn *last = &r->insns[bl->first + bl->ninsn - 1];
			if (!bl->ninsn || !reachable(r, bi) || !elf_plt_at(b, last->target))
				continue;
			if ((last->flow == FLOW_CALL && !(bl->flags & BLK_SETJMP)) ||
			    (last->flow == FLOW_JUMP && (bl->flags & BLK_TAILCALL)))
				addrmap_put(&handled, last->addr, 1);
		}
	}
	uint32_t one;
	for (size_t s = 0; s < b->nsections; s++) {
		const elf_section *sec = &b->sections[s];
		if (!sec->exec || !sec->data || !strncmp(sec->name, ".plt", 4))
			continue;
		for (uint64_t o = 0; o < sec->size; o++) {
			const uint8_t *c = sec->data + o;
			uint64_t left = sec->size - o, at = sec->addr + o, to = 0;
			int32_t d;
			if ((c[0] == 0xe8 || c[0] == 0xe9) && left >= 5) {
				memcpy(&d, c + 1, 4);
				to = at + 5 + (uint64_t)(int64_t)d;
			} else if (c[0] == 0x0f && left >= 6 && (c[1] & 0xf0) == 0x80) {
				memcpy(&d, c + 2, 4);
				to = at + 6 + (uint64_t)(int64_t)d;
			} else if ((c[0] == 0xeb || (c[0] & 0xf0) == 0x70 || c[0] == 0xe3) &&
				   left >= 2) {
				to = at + 2 + (uint64_t)(int64_t)(int8_t)c[1];
			}
			const elf_plt *e = to ? elf_plt_at(b, to) : NULL;
			if (e && !addrmap_get(&handled, at, &one))
				bad[e - b->plts] = 1;
		}
	}
	addrmap_free(&handled);
}

/* The PLT stubs whose calls may enter their callee quietly (patch_link):
 * slots only stubs read, stubs the skeleton leaves to only by sk_plt
 * (direct calls and tail jumps), whose address no code or data takes as
 * a value (a non-PIE program's &function may be its stub). */
static void find_links(gen *g)
{
	const program *p = g->p;
	const binary *b = &p->bin;
	if (g->o->all_accesses || !b->nplts)
		return;
	uint8_t *bad = xcalloc(b->nplts, 1);
	for (size_t i = 0; i < b->nreloc_values; i++)
		plt_taint(b, bad, b->reloc_values[i]);
	for (size_t i = 0; i < b->nsections; i++) {
		const elf_section *sec = &b->sections[i];
		if (!sec->alloc || sec->exec || !sec->data)
			continue;
		for (uint64_t off = (8 - sec->addr % 8) % 8; off + 8 <= sec->size; off += 8) {
			uint64_t v;
			memcpy(&v, sec->data + off, 8);
			plt_taint(b, bad, v);
		}
	}
	/* direct jumps other than tail calls, conditional ones, setjmp's
	 * calls: plt_taint_unmodeled, with the bytes outside the routines */
	for (uint32_t k = 0; k < p->nroutines; k++) {
		const routine *r = &p->routines[k];
		for (uint32_t i = 0; i < r->ninsn; i++) {
			const insn *in = &r->insns[i];
			if (in->flow == FLOW_JUMP || in->flow == FLOW_CJUMP || in->flow == FLOW_CALL)
				continue;
			for (unsigned o = 0; o < in->nopd; o++)
				if (in->opd[o].type == OPD_IMM)
					plt_taint(b, bad, (uint64_t)in->opd[o].imm);
			for (unsigned m = 0; m <= INSN_MAX_MEM; m++)
				if (in->mem[m].flags & MEM_RIPREL)
					plt_taint(b, bad, (uint64_t)in->mem[m].disp);
		}
		for (uint32_t bi = 0; bi < r->nblocks; bi++)	/* jump tables' */
			for (uint32_t t = 0; t < r->blocks[bi].ntails; t++)
				plt_taint(b, bad, r->blocks[bi].tails[t]);
	}
	plt_taint_unmodeled(g, bad);
	for (size_t i = 0; i < b->nplts; i++) {
		const elf_plt *e = &b->plts[i];
		if (bad[i] || !e->jmprel || link_refused(e->name))
			continue;
		addrmap_put(&g->links, e->addr, (uint32_t)g->pt->nlinks + 1);
		patch_add_link(g->pt, &(patch_link){ e->addr, e->slot });
	}
	free(bad);
}

/* Which entry values each internal routine's skeleton uses. */
static void find_entry_masks(gen *g)
{
	for (uint32_t i = 0; i < g->p->nroutines; i++) {
		const routine *r = &g->p->routines[i];
		if (!g->internal[i])
			continue;
		rgen rg = { .g = g, .r = r, .id = i };
		analyze_routine(&rg, 0);
		for (unsigned v = 0; v < SSA_NVARS && v < rg.a.s.nvals; v++)
			if (rg.leaf_used[v] && rg.a.s.vals[v].kind == V_ENTRY)
				g->entry_mask[i] |= 1u << v;
		rgen_free(&rg);
	}
}

static void emit_header(gen *g)
{
	const binary *b = &g->p->bin;
	fprintf(g->f,
		"/* Skeleton of %s, generated by skel %s.\n"
		" * Binary identity: %s (%s).  Replay it with `skel replay` or `skel run`;\n"
		" * it compiles against replay/skel_rt.h. */\n"
		"#include \"skel_rt.h\"\n"
		"\n"
		"/* static in one translation unit; skel compiles the parts between\n"
		" * SKEL-UNIT lines as units of their own, with -DSK_ROUTINE= */\n"
		"#ifndef SK_ROUTINE\n"
		"#define SK_ROUTINE static __attribute__((unused))\n"
		"#endif\n"
		"/* a runtime from before instruction fetches (the cache is shared\n"
		" * by skel versions) compiles the skeleton without them */\n"
		"#ifndef SK_HAVE_FETCHES\n"
		"#define FETCH(b) ((void)0)\n"
		"#define REFETCH(pc, len) ((void)0)\n"
		"#endif\n"
		"#ifndef SK_ROUTINE_ENTER\n"
		"#define SK_ROUTINE_ENTER(id) ((void)0)\n"
		"#endif\n"
		"#ifndef SK_ROI_NAME\n"
		"#define SK_ROI_NAME(t, name) ((void)0)\n"
		"#endif\n",
		g->o->app ? g->o->app : b->path, SKEL_VERSION, b->id_hex,
		b->has_build_id ? "GNU build-id" : "content hash");
	if (g->o->approx)
		fprintf(g->f, "/* APPROXIMATE (selective BID instrumentation, skel gen --omega %g "
			"--chunk %" PRIu64 "): per block, ceil(omega*m) of the m classes of\n"
			" * accesses whose addresses cost recorded values keep their probes;\n"
			" * OUT_ATTR: an access counted at its fulcrum's address (AIA),\n"
			" * OUT_ABSENT: an access whose address is not known. */\n",
			g->o->omega, g->o->chunk);
	for (uint32_t i = 0; i < g->p->nroutines; i++)
		if (g->p->routines[i].nblocks) {
			fputs("SK_ROUTINE ", g->f);
			emit_signature(g, i);
			fputs(";\n", g->f);
		}
}

/* sk_module_dispatch runs at every entry from unanalyzed code: hot.  The tables
 * after it (and those of emit_scopes, and the patch) are data: cold. */
static void emit_dispatch(gen *g)
{
	char nb[256];
	FILE *f = g->f;
	/* the replayer's sk_dispatch picks the object's skeleton by the
	 * object number in the word (t->mbits) and calls this */
	fprintf(f, "\n%shot */\nvoid sk_module_dispatch(sk_thread *t, uint64_t word)\n"
		"{\n\tswitch (word - t->mbits) {\n", SKEL_UNIT_MARK);
	for (uint32_t i = 0; i < g->p->nroutines; i++)
		if (g->p->routines[i].nblocks && !g->internal[i] && g->resume[i])
			fprintf(f, "\tcase 0x%" PRIx64 "ull: sk_resume_lost(t, word); return;\n",
				(uint64_t)SK_ENTRY(i));
		else if (g->p->routines[i].nblocks && !g->internal[i])
			fprintf(f, "\tcase 0x%" PRIx64 "ull: r_%u(t); return;\n",
				(uint64_t)SK_ENTRY(i), i);
	fputs("\tdefault: sk_desync(t, 0, \"expected a routine entry\", word);\n\t}\n}\n", f);
	fprintf(f, "\n%scold */\nconst char sk_binary_id[] = \"%s\";\n", SKEL_UNIT_MARK,
		g->p->bin.id_hex);
	/* every probe is planned by now: the value trace's patch_hash must
	 * be this one (another skeleton of the same binary records other
	 * values) */
	fprintf(f, "const unsigned long long sk_patch_hash = 0x%" PRIx64 "ull;\n",
		patch_hash(g->pt));
	/* the replay heads an approximate trace with them (weak there) */
	if (g->o->approx)
		fprintf(f, "const double sk_omega = %.17g;\nconst unsigned long long sk_chunk = "
			"%" PRIu64 "ull;\n", g->o->omega, g->o->chunk);
	fputs("\nconst char *const sk_routine_names[] = {\n", f);
	for (uint32_t i = 0; i < g->p->nroutines; i++)
		fprintf(f, "\t\"%s\",\n", c_safe(g->p->routines[i].name, nb, sizeof nb));
	fprintf(f, "};\nconst unsigned sk_nroutines = %u;\n", g->p->nroutines);

	/* for sk_ijump_other: where an indirect jump may land */
	fputs("\nconst uint64_t sk_entry_pcs[] = {\n", f);
	uint32_t n = 0;
	for (uint32_t i = 0; i < g->p->nroutines; i++)
		if (g->p->routines[i].nblocks && !g->internal[i]) {
			fprintf(f, "\t0x%" PRIx64 "ull,\n", g->p->routines[i].start);
			n++;
		}
	fprintf(f, "\t~0ull\n};\nconst unsigned sk_nentry_pcs = %u;\n", n);
	fputs("const uint64_t sk_code_ranges[] = {\n", f);
	n = 0;
	for (size_t i = 0; i < g->p->bin.nsections; i++) {
		const elf_section *sec = &g->p->bin.sections[i];
		if (sec->exec && sec->alloc && strncmp(sec->name, ".plt", 4)) {
			fprintf(f, "\t0x%" PRIx64 "ull, 0x%" PRIx64 "ull,\t/* %s */\n", sec->addr,
				sec->addr + sec->size, sec->name);
			n++;
		}
	}
	fprintf(f, "\t0, 0\n};\nconst unsigned sk_ncode_ranges = %u;\n", n);
}

typedef struct pc_scope {
	uint64_t pc;
	uint32_t scope;
} pc_scope;

static int pc_scope_cmp(const void *a, const void *b)
{
	const pc_scope *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* For --stats: the scopes (routines and their loops, each with its
 * enclosing scope) and, for every instruction that accesses memory, the
 * innermost scope it belongs to (an instruction in several routines counts
 * for the first). */
static void emit_scopes(gen *g)
{
	char nb[256];
	FILE *f = g->f;
	const program *p = g->p;
	VEC(pc_scope) pcs = {0};
	uint32_t n = 0;
	fputs("\nconst sk_scope sk_scopes[] = {\n", f);
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		if (!r->nblocks)
			continue;
		uint32_t rs = n++;
		fprintf(f, "\t{ 0x%" PRIx64 "ull, -1, 0, %u },\t/* %s */\n", r->start, i,
			c_safe(r->name, nb, sizeof nb));
		for (uint32_t l = 0; l < r->nloops; l++) {
			const loop *lp = &r->loops[l];
			int32_t parent = lp->parent < 0 ? (int32_t)rs : (int32_t)(rs + 1) + lp->parent;
			fprintf(f, "\t{ 0x%" PRIx64 "ull, %d, %u, %u },\n", r->blocks[lp->header].start,
				parent, lp->depth, i);
			n++;
		}
		for (uint32_t k = 0; k < r->ninsn; k++) {
			if (!r->insns[k].nmem)
				continue;
			int32_t b = cfg_block_of(r, r->insns[k].addr);
			int32_t lp = b < 0 ? -1 : r->blocks[b].loop;
			pc_scope ps = { r->insns[k].addr, lp < 0 ? rs : rs + 1 + (uint32_t)lp };
			vec_push(pcs, ps);
		}
	}
	fputs("\t{ 0, -1, 0, 0 }\n};\n", f);
	fprintf(f, "const unsigned sk_nscopes = %u;\n", n);
	if (pcs.n)
		qsort(pcs.a, pcs.n, sizeof *pcs.a, pc_scope_cmp);
	size_t m = 0;
	for (size_t k = 0; k < pcs.n; k++)
		if (!m || pcs.a[m - 1].pc != pcs.a[k].pc)
			pcs.a[m++] = pcs.a[k];
	fputs("const sk_pc_scope sk_pc_scopes[] = {\n", f);
	for (size_t k = 0; k < m; k++)
		fprintf(f, "\t{ 0x%" PRIx64 "ull, %u },\n", pcs.a[k].pc, pcs.a[k].scope);
	fprintf(f, "\t{ ~0ull, 0 }\n};\nconst unsigned sk_npc_scopes = %zu;\n", m);
	free(pcs.a);
}

/* For instruction fetches: the blocks FETCH() numbers, in the order
 * emit_routine numbered them, and the length of each instruction. */
static void emit_fetch_blocks(gen *g)
{
	FILE *f = g->f;
	const program *p = g->p;
	uint32_t n = 0, first = 0;
	/* the replay says what fetches sliced loops leave out */
	fprintf(f, "\nconst unsigned sk_nsliced = %u;\nconst unsigned sk_nelided = %u;\n",
		g->st->sliced_loops, g->st->elided_branches);
	fputs("\n#ifdef SK_HAVE_FETCHES\nconst sk_block_info sk_fetch_blocks[] = {\n", f);
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		for (uint32_t bi = 0; bi < r->nblocks; bi++) {
			if (!reachable(r, bi))
				continue;
			fprintf(f, "\t{ 0x%" PRIx64 "ull, %u, %u },\n", r->blocks[bi].start, first,
				r->blocks[bi].ninsn);
			first += r->blocks[bi].ninsn;
			n++;
		}
	}
	assert(n == g->nfetch_blocks);
	fprintf(f, "\t{ 0, 0, 0 }\n};\nconst unsigned sk_nfetch_blocks = %u;\n", n);
	fputs("const unsigned char sk_insn_lens[] = {", f);
	unsigned col = 0;
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		for (uint32_t bi = 0; bi < r->nblocks; bi++) {
			const block *b = &r->blocks[bi];
			if (!reachable(r, bi))
				continue;
			for (uint32_t k = b->first; k < b->first + b->ninsn; k++)
				fprintf(f, "%s%u,", col++ % 24 ? " " : "\n\t", r->insns[k].len);
		}
	}
	fputs("\n\t0\n};\n#endif\n", f);
}

static void emit_patch(gen *g)
{
	fputs("\n/* SKEL-PATCH-BEGIN\n", g->f);
	patch_write(g->f, g->pt);
	fputs("SKEL-PATCH-END */\n", g->f);
}

int skel_generate(FILE *out, const program *p, const skel_opts *o, patch *pt,
		  skel_stats *st, char err[ERR_LEN])
{
	gen g = { .f = out, .p = p, .o = o, .pt = pt, .st = st };
	char perr[FMT_ERR_LEN];
	addrmap_free(&dslot_map);
	dslot_r = NULL;
	memset(pt, 0, sizeof *pt);
	memset(st, 0, sizeof *st);
	if (patch_set_id(pt, p->bin.id_hex, p->bin.has_build_id ? SKEL_ID_BUILDID : SKEL_ID_HASH,
			 perr) < 0) {
		snprintf(err, ERR_LEN, "%s", perr);
		return -1;
	}
	find_extern_tails(&g);
	find_resumes(&g);
	st->shared_insns = count_shared(p, &g.shared);
	for (uint32_t i = 0; i < p->nroutines; i++)
		for (uint32_t b = 0; b < p->routines[i].nblocks; b++)
			addrmap_put(&g.bstarts, p->routines[i].blocks[b].start, 1);
	count_inexact(p, st);
	find_internal(&g);
	find_entry_masks(&g);
	find_links(&g);
	if (st->shared_insns)
		find_shared_probes(&g);
	emit_header(&g);
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		if (!r->nblocks)
			continue;
		rgen rg = { .g = &g, .r = r, .id = i };
		dslot_routine(r);
		analyze_routine(&rg, o->all_accesses ? IV_ALL_DIRECT : 0);
		plan_calls(&rg);
		plan_slices(&rg);
		plan_exits(&rg);
		plan_elisions(&rg);
		plan_late_exits(&rg);
		plan_phi_edges(&rg);
		plan_carried(&rg);
		plan_tbytes(&rg);
		size_t np0 = pt->nprobes;
		for (uint32_t k = 0; k < r->ninsn; k++)
			if (reachable(r, (uint32_t)cfg_block_of(r, r->insns[k].addr)))
				patch_insn(&rg, k);
		plan_ticks(&rg, np0);
		emit_routine(&rg);
		st->routines++;
		st->mem_insns += rg.a.nmem_insns;
		st->direct += rg.a.ndirect;
		st->rotated += rg.a.rotated;
		count_roles(&rg, st);
		rgen_free(&rg);
	}
	/* the values recorded at run time, control words aside */
	for (size_t k = 0; k < pt->nprobes; k++)
		st->probes += pt->probes[k].what != PATCH_WORD && pt->probes[k].what != PATCH_SWORD &&
			      pt->probes[k].what != PATCH_VMMARK;
	emit_dispatch(&g);
	emit_scopes(&g);
	emit_fetch_blocks(&g);
	emit_patch(&g);
	free(g.extern_tail);
	free(g.resume);
	free(g.internal);
	addrmap_free(&g.shared);
	addrmap_free(&g.bstarts);
	for (uint32_t k = 0; k < g.nsh; k++)
		free(g.sh[k].v);
	free(g.sh);
	addrmap_free(&g.shidx);
	addrmap_free(&g.links);
	free(g.entry_mask);
	return 0;
}

char *skel_extract_patch(const char *text)
{
	const char *b = strstr(text, "/* SKEL-PATCH-BEGIN\n");
	if (!b)
		return NULL;
	b += strlen("/* SKEL-PATCH-BEGIN\n");
	const char *e = strstr(b, "SKEL-PATCH-END */");
	if (!e)
		return NULL;
	char *s = xmalloc((size_t)(e - b) + 1);
	memcpy(s, b, (size_t)(e - b));
	s[e - b] = 0;
	return s;
}
