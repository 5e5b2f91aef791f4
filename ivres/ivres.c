/* ivres.c — induction-variable resolution, branch conditions, BID classes
 * and probe selection for one routine.
 *
 * IVs follow Ketterlin & Clauss (ISPASS 2011): a header φ whose entry
 * argument α is one value and whose every back-edge argument is φ + β, β
 * invariant in the loop, is α + β·I with I the loop's normalized counter
 * (back edges taken since the loop was entered).  BID classes follow
 * Economo et al. ("Selective expression-based x86 instrumentation"):
 * accesses whose addresses differ by a constant share one base.  Probes are
 * the leaves those expressions need, placed at their definition, so a
 * loop-invariant leaf is recorded once outside the loop. */
#include "ivres/ivres.h"
#include "analyzer/util.h"

#include <inttypes.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

static bool loop_contains(const routine *r, uint32_t l, uint32_t b)
{
	for (int32_t x = r->blocks[b].loop; x >= 0; x = r->loops[x].parent)
		if ((uint32_t)x == l)
			return true;
	return false;
}

static bool value_in_loop(const analysis *a, uint32_t v, uint32_t l)
{
	if (SSA_PSEUDO(v))
		return false;
	const ssa_value *sv = &a->s.vals[v];
	if (sv->kind == V_ENTRY || sv->kind == V_UNDEF)
		return false;
	return loop_contains(a->r, l, sv->block);
}

static uint32_t block_of_insn(const routine *r, uint32_t i)
{
	return (uint32_t)cfg_block_of(r, r->insns[i].addr);
}

static uint32_t depth_of_block(const routine *r, uint32_t b)
{
	int32_t l = r->blocks[b].loop;
	return l < 0 ? 0 : r->loops[l].depth;
}

typedef struct inv_check {
	const analysis *a;
	uint32_t loop;
	bool ok;
} inv_check;

static void inv_leaf(uint32_t v, void *arg)
{
	inv_check *c = arg;
	if (value_in_loop(c->a, v, c->loop))
		c->ok = false;
}

/* Invariant in loop l: no leaf defined inside it, no counter at all (a
 * counter of an enclosing loop would be fine, but keeping steps free of
 * counters keeps the closed forms affine). */
static bool invariant_in(const analysis *a, expr *e, uint32_t l)
{
	inv_check c = { a, l, true };
	if (expr_has_counter(e))
		return false;
	expr_leaves(e, inv_leaf, &c);
	return c.ok;
}

/* Splits e = leaf(phi) + rest; returns rest, or NULL when phi does not
 * appear exactly once with coefficient 1 at the top of e's sum. */
static expr *minus_phi(expr_ctx *ec, expr *e, expr *phi, int *found)
{
	if (e == phi) {
		(*found)++;
		return expr_const(ec, 0);
	}
	if (e->kind != E_ADD)
		return e;
	expr *x = minus_phi(ec, e->a, phi, found);
	expr *y = minus_phi(ec, e->b, phi, found);
	return expr_add(ec, x, y);
}

/* ------------------------------------------------ induction variables */

static bool clean32(const expr *e)
{
	if (e->kind == E_ZEXT && e->bits == 32)
		return true;
	return e->kind == E_CONST && e->k >= 0 && e->k <= (int64_t)UINT32_MAX;
}

/* Tries to resolve the φ `v` of loop l; returns its closed form or NULL. */
static expr *resolve_phi(analysis *a, uint32_t v, uint32_t l, iv *out)
{
	const routine *r = a->r;
	const ssa_value *sv = &a->s.vals[v];
	const block *h = &r->blocks[r->loops[l].header];
	expr_ctx *ec = a->ec;
	uint32_t alpha = SSA_NONE;
	expr *beta = NULL, *phi = expr_leaf(ec, v);
	unsigned bits = 64;

	for (uint32_t i = 0; i < sv->nargs; i++) {
		uint32_t arg = sv->args[i];
		if (!loop_contains(r, l, h->pred[i])) {
			if (alpha != SSA_NONE && alpha != arg)
				return NULL;
			alpha = arg;
			continue;
		}
		expr *e = expr_of_value(ec, arg);
		unsigned eb = 64;
		if (e->kind == E_ZEXT && e->bits == 32) {
			e = e->a;
			eb = 32;
		}
		int found = 0;
		expr *step = minus_phi(ec, e, phi, &found);
		if (found != 1 || (beta && (step != beta || eb != bits)))
			return NULL;
		beta = step;
		bits = eb;
	}
	if (alpha == SSA_NONE || !beta || !invariant_in(a, beta, l))
		return NULL;
	expr *init = expr_of_value(ec, alpha);
	if (bits == 32 && !clean32(init))
		return NULL;
	expr *I = expr_counter(ec, l);
	expr *term = beta->kind == E_CONST ? expr_mul(ec, I, beta->k) : expr_mulv(ec, beta, I);
	expr *closed = expr_add(ec, init, term);
	if (bits == 32)
		closed = expr_zext(ec, closed, 32);
	*out = (iv){ .phi = v, .loop = l, .init = init, .step = beta, .bits = bits };
	return closed;
}

typedef struct leaf_find {
	uint32_t v;
	bool found;
} leaf_find;

static void find_leaf(uint32_t v, void *arg)
{
	leaf_find *x = arg;
	x->found |= v == x->v;
}

/* rsp φs whose incoming values are all one expression (paths that meet
 * with the same frame: the epilogue reached from several places), or the
 * φ itself (a loop that keeps rsp), are that expression: otherwise each
 * costs a recorded rsp at its join.  The expression's leaves dominate
 * the join (they are used at the end of every way in), so its value there
 * is theirs.  Block 0's φs merge the entry too: not those. */
static void resolve_sp_phis(analysis *a)
{
	const routine *r = a->r;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t b = 1; b < r->nblocks; b++) {
			uint32_t v = a->s.at_start[b][R_SP];
			const ssa_value *sv = &a->s.vals[v];
			if (sv->kind != V_PHI || sv->block != b || expr_is_set(a->ec, v))
				continue;
			expr *self = expr_leaf(a->ec, v), *e = NULL;
			bool ok = sv->nargs > 0;
			for (uint32_t j = 0; ok && j < sv->nargs; j++) {
				expr *x = expr_of_value(a->ec, sv->args[j]);
				if (x == self)
					continue;
				leaf_find lf = { v, false };
				expr_leaves(x, find_leaf, &lf);
				if (lf.found || expr_has_counter(x) || (e && x != e))
					ok = false;
				e = x;
			}
			if (!ok || !e)
				continue;
			expr_set_value(a->ec, v, e);
			expr_reset_memo(a->ec);
			changed = true;
		}
	}
}

static void find_ivs(analysis *a)
{
	const routine *r = a->r;
	VEC(iv) ivs = {0};
	for (uint32_t l = 0; l < r->nloops; l++) {
		if (r->loops[l].irreducible)
			continue;
		uint32_t h = r->loops[l].header;
		uint32_t found = 0;
		for (unsigned var = 0; var < 16; var++) {
			uint32_t v = a->s.at_start[h][var];
			const ssa_value *sv = &a->s.vals[v];
			if (sv->kind != V_PHI || sv->block != h)
				continue;
			iv x;
			expr *closed = resolve_phi(a, v, l, &x);
			if (!closed)
				continue;
			expr_set_value(a->ec, v, closed);
			vec_push(ivs, x);
			found++;
		}
		a->loops[l].niv = found;
		/* inner loops see this loop's closed forms */
		expr_reset_memo(a->ec);
	}
	a->ivs = ivs.a;
	a->nivs = (uint32_t)ivs.n;
}

/* --------------------------------------------------------- accesses */

/* Whether a leaf can be recorded by a probe placed at its definition. */
static bool recordable(const analysis *a, uint32_t v)
{
	if (SSA_PSEUDO(v))
		return true; /* known from the value trace header */
	const ssa_value *sv = &a->s.vals[v];
	const routine *r = a->r;
	switch (sv->kind) {
	case V_ENTRY:
		/* a before-probe at the entry would fire again on a jump back */
		return sv->var < 16 && r->nblocks && r->blocks[0].npred == 0;
	case V_PHI:
		return sv->var < 16;
	case V_DEF: {
		const insn *in = &r->insns[sv->insn];
		return sv->var < 16 && (in->flow == FLOW_NEXT || in->flow == FLOW_SYSCALL);
	}
	case V_CLOBBER:
		return sv->var < 16 && sv->insn + 1 < r->ninsn &&
		       r->insns[sv->insn].addr + r->insns[sv->insn].len == r->insns[sv->insn + 1].addr &&
		       !(r->blocks[block_of_insn(r, sv->insn)].flags & BLK_NORETURN);
	default:
		return false;
	}
}

typedef struct leaf_check {
	const analysis *a;
	bool ok;
} leaf_check;

static void check_leaf(uint32_t v, void *arg)
{
	leaf_check *c = arg;
	if (!recordable(c->a, v))
		c->ok = false;
}

static bool all_recordable(const analysis *a, expr *e)
{
	leaf_check c = { a, true };
	expr_leaves(e, check_leaf, &c);
	return c.ok;
}

static bool in_irreducible(const routine *r, uint32_t b)
{
	for (int32_t x = r->blocks[b].loop; x >= 0; x = r->loops[x].parent)
		if (r->loops[x].irreducible)
			return true;
	return false;
}

static void collect_accesses(analysis *a)
{
	const routine *r = a->r;
	VEC(access_info) acc = {0};
	for (uint32_t i = 0; i < r->ninsn; i++) {
		const insn *in = &r->insns[i];
		uint32_t b = block_of_insn(r, i);
		if (r->blocks[b].idom < 0 && b != 0)
			continue; /* unreachable */
		if (in->nmem)
			a->nmem_insns++;
		for (unsigned k = 0; k < in->nmem; k++) {
			const mem_access *m = &in->mem[k];
			access_info x = { .insn = i, .k = (uint8_t)k, .kind = m->kind,
					  .size = m->size, .rep = m->flags & MEM_REP, .cls = -1 };
			/* string ops repeat: their addresses move with rcx, traced
			 * directly until the skeleton models them; an inexact form
			 * (gather, bt mem,reg, xlat) is never computed */
			if (a->modeled && !x.rep && !(m->flags & MEM_INEXACT) &&
			    !in_irreducible(r, b)) {
				expr *e = expr_of_access(a->ec, i, k);
				if (e && all_recordable(a, e))
					x.addr = e;
			}
			if (!x.addr)
				a->ndirect++;
			vec_push(acc, x);
		}
	}
	a->acc = acc.a;
	a->nacc = (uint32_t)acc.n;
}

static void form_classes(analysis *a)
{
	VEC(bid_class) cls = {0};
	addrmap by_base = {0};
	for (uint32_t i = 0; i < a->nacc; i++) {
		access_info *x = &a->acc[i];
		if (!x->addr)
			continue;
		expr *base = expr_split_const(a->ec, x->addr, &x->off);
		uint64_t key = base ? (uint64_t)(uintptr_t)base : 1;
		uint32_t c;
		if (!addrmap_get(&by_base, key, &c)) {
			c = (uint32_t)cls.n;
			bid_class nc = { .base = base };
			vec_push(cls, nc);
			addrmap_put(&by_base, key, c);
		}
		cls.a[c].nmembers++;
		x->cls = (int32_t)c;
	}
	addrmap_free(&by_base);
	a->cls = cls.a;
	a->ncls = (uint32_t)cls.n;
}

/* ----------------------------------------------------------- branches */

typedef struct need_set {
	addrmap m;          /* SSA value -> 1 */
} need_set;

static void need_leaf(uint32_t v, void *arg)
{
	if (SSA_PSEUDO(v))
		return;
	addrmap_put(&((need_set *)arg)->m, v, 1);
}

typedef struct avail_check {
	const analysis *a;
	const need_set *need;
	int32_t loop;       /* innermost loop of the branch */
	bool ok;
} avail_check;

static void avail_leaf(uint32_t v, void *arg)
{
	avail_check *c = arg;
	uint32_t one;
	if (SSA_PSEUDO(v))
		return;
	if (!recordable(c->a, v))
		c->ok = false;
	else if (addrmap_get(&c->need->m, v, &one))
		return;
	else if (c->loop < 0 || value_in_loop(c->a, v, (uint32_t)c->loop))
		c->ok = false;
}

static expr *operand_expr(analysis *a, uint32_t d, const operand *o)
{
	if (o->type == OPD_IMM)
		return expr_const(a->ec, o->imm);
	if (o->type == OPD_REG && !o->high8)
		return expr_of_value(a->ec, a->s.before[d][o->reg]);
	return NULL;
}

/* The compare behind the flags a conditional jump reads, if the skeleton
 * can evaluate it exactly. */
static bool branch_condition(analysis *a, uint32_t j, branch_info *br)
{
	const routine *r = a->r;
	const insn *jmp = &r->insns[j];
	if (jmp->cond > CC_G || jmp->cond == CC_O || jmp->cond == CC_NO ||
	    jmp->cond == CC_P || jmp->cond == CC_NP)
		return false;
	const ssa_value *f = &a->s.vals[a->s.before[j][VAR_FLAGS]];
	if (f->kind != V_DEF)
		return false;
	const insn *d = &r->insns[f->insn];
	if (d->nopd < 2 || d->opd[0].type != OPD_REG)
		return false;
	br->bits = (uint8_t)(8 * d->opd[0].size);
	if (d->op == OP_CMP || d->op == OP_SUB) {
		br->lhs = operand_expr(a, f->insn, &d->opd[0]);
		br->rhs = operand_expr(a, f->insn, &d->opd[1]);
	} else if (d->op == OP_TEST && d->opd[1].type == OPD_REG &&
		   d->opd[1].reg == d->opd[0].reg && d->opd[1].high8 == d->opd[0].high8) {
		br->test = 1;
		br->lhs = operand_expr(a, f->insn, &d->opd[0]);
		br->rhs = expr_const(a->ec, 0);
	} else {
		return false;
	}
	return br->lhs && br->rhs && br->bits >= 8;
}

/* A branch is computed when its compare's leaves are recorded anyway:
 * needed by an address or by a branch computed already.  The needed set
 * only grows, so the branches are tried again until none changes (a
 * loop's entry test reads the bound its exit test needs, decided later). */
static bool try_compute(analysis *a, need_set *need, branch_info *br, int32_t lp)
{
	avail_check c = { a, need, lp, true };
	expr_leaves(br->lhs, avail_leaf, &c);
	expr_leaves(br->rhs, avail_leaf, &c);
	if (!c.ok)
		return false;
	br->how = BR_COMPUTED;
	expr_leaves(br->lhs, need_leaf, need);
	expr_leaves(br->rhs, need_leaf, need);
	return true;
}

/* The one leaf of branch br's compare that keeps it recorded: a value
 * defined in the branch's innermost loop, recordable and not recorded
 * yet (the others are); SSA_NONE when there is none or more. */
typedef struct lone_leaf {
	const analysis *a;
	const need_set *need;
	int32_t loop;
	uint32_t leaf;
	bool bad;
} lone_leaf;

static void lone_leaf_of(uint32_t v, void *arg)
{
	lone_leaf *c = arg;
	uint32_t one;
	if (SSA_PSEUDO(v) || addrmap_get(&c->need->m, v, &one))
		return;
	if (!recordable(c->a, v))
		c->bad = true;
	else if (!value_in_loop(c->a, v, (uint32_t)c->loop))
		return;		/* recorded once, outside the loop */
	else if (c->a->r->blocks[c->a->s.vals[v].block].loop != c->loop ||
		 (c->leaf != SSA_NONE && c->leaf != v))
		c->bad = true;
	else
		c->leaf = v;
}

/* Whether block b's jump chooses between two ways that both stay in its
 * loop, one of them making an access: not an exit (a loop whose only
 * recorded jumps are exits records its exit once instead, skelgen.c),
 * nor a jump whose ways meet without an access (not replayed). */
static bool inner_choice(const analysis *a, uint32_t b)
{
	const routine *r = a->r;
	const block *bl = &r->blocks[b];
	bool access = false;
	for (uint32_t k = 0; k < bl->nsucc; k++) {
		const block *s = &r->blocks[bl->succ[k]];
		if (bl->loop < 0 || !loop_contains(r, (uint32_t)bl->loop, bl->succ[k]))
			return false;
		for (uint32_t i = 0; i < a->nacc && !access; i++)
			access = a->acc[i].insn >= s->first && a->acc[i].insn < s->first + s->ninsn;
	}
	return access;
}

/* A value whose recording computes two or more of a loop's branches
 * instead (a byte loaded once, then compared with several constants:
 * strkern's word count and case folding, a scanner's character
 * classes): recorded, its branches computed.  A word for two or more,
 * one of them in the value's own block, so taken as often as the value
 * is recorded, one of them not an exit (inner_choice: share2's two exits
 * on a byte are recorded once, where the loop leaves) (tokenize's identifier loop tests a letter first, by an
 * `or` the skeleton cannot compute, and a digit or '_' only after that:
 * the byte recorded each time for two tests seldom made cost it 38 %
 * more words).  true if one was found. */
static bool record_for_branches(analysis *a, need_set *need, branch_info *br, size_t n)
{
	const routine *r = a->r;
	uint32_t *leaf = xmalloc((n ? n : 1) * sizeof *leaf);
	bool found = false;
	for (size_t k = 0; k < n; k++) {
		int32_t l = r->blocks[block_of_insn(r, br[k].insn)].loop;
		leaf[k] = SSA_NONE;
		if (br[k].how != BR_RECORDED || !br[k].lhs || l < 0)
			continue;
		lone_leaf c = { a, need, l, SSA_NONE, false };
		expr_leaves(br[k].lhs, lone_leaf_of, &c);
		expr_leaves(br[k].rhs, lone_leaf_of, &c);
		if (!c.bad)
			leaf[k] = c.leaf;
	}
	for (size_t k = 0; k < n && !found; k++) {
		size_t same = 0;
		bool here = false;	/* one in the value's own block */
		bool inner = false;	/* one that stays in the loop */
		for (size_t j = k; j < n; j++)
			if (leaf[j] != SSA_NONE && leaf[j] == leaf[k]) {
				same++;
				here |= block_of_insn(r, br[j].insn) == a->s.vals[leaf[k]].block;
				inner |= inner_choice(a, block_of_insn(r, br[j].insn));
			}
		if (same < 2 || !here || !inner)
			continue;
		addrmap_put(&need->m, leaf[k], 1);
		found = true;
	}
	free(leaf);
	return found;
}

/* v needed from now on; true if it was not. */
static bool need_new(need_set *need, uint32_t v)
{
	uint32_t one;
	if (addrmap_get(&need->m, v, &one))
		return false;
	addrmap_put(&need->m, v, 1);
	return true;
}

static bool expr_is_leaf(const expr *e, uint32_t v)
{
	return e && e->kind == E_LEAF && e->val == v;
}

typedef struct entry_check {
	const analysis *a;
	need_set *need;
	bool ok;
	bool *add;          /* NULL: only ask; else needed, *add if new */
} entry_check;

static void entry_leaf(uint32_t v, void *arg)
{
	entry_check *c = arg;
	uint32_t one;
	if (SSA_PSEUDO(v) || addrmap_get(&c->need->m, v, &one))
		return;
	uint8_t k = c->a->s.vals[v].kind;
	if ((k != V_DEF && k != V_PHI && k != V_CLOBBER) || !recordable(c->a, v))
		c->ok = false;
	else if (c->add)
		*c->add |= need_new(c->need, v);
}

/* Whether the value v a loop's φ has on an entry edge is known to the
 * skeleton once the leaves of its expression are recorded (not a
 * routine's entry value: those come as the routine's parameters, decided
 * apart); with add, those leaves needed (*add true if one is new).  The
 * leaves, not v: a copy (mov r12, rax) is known by what it copies, and
 * the skeleton's expressions name that. */
static bool entry_known(const analysis *a, need_set *need, uint32_t v, bool *add)
{
	expr *e = expr_of_value(a->ec, v);
	if (!e)
		return false;
	entry_check c = { a, need, true, NULL };
	expr_leaves(e, entry_leaf, &c);
	if (c.ok && add) {
		c.add = add;
		expr_leaves(e, entry_leaf, &c);
	}
	return c.ok;
}

typedef struct only_leaf {
	const need_set *need;
	uint32_t v;
	bool ok;
} only_leaf;

static void only_leaf_of(uint32_t v, void *arg)
{
	only_leaf *c = arg;
	uint32_t one;
	if (v != c->v && !SSA_PSEUDO(v) && !addrmap_get(&c->need->m, v, &one))
		c->ok = false;
}

/* Whether recorded branch br, in loop l, compares v with values the
 * skeleton has already (recorded for others, or constants): known once
 * v is, without a word more. */
static bool branch_on(const analysis *a, const need_set *need, const branch_info *br,
		      int32_t l, uint32_t v)
{
	if (br->how != BR_RECORDED || !br->lhs ||
	    a->r->blocks[block_of_insn(a->r, br->insn)].loop != l)
		return false;
	lone_leaf c = { a, need, l, SSA_NONE, false };
	expr_leaves(br->lhs, lone_leaf_of, &c);
	expr_leaves(br->rhs, lone_leaf_of, &c);
	if (c.bad || c.leaf != v)
		return false;
	only_leaf o = { need, v, true };
	expr_leaves(br->lhs, only_leaf_of, &o);
	expr_leaves(br->rhs, only_leaf_of, &o);
	return o.ok;
}

/* Whether value v is a byte or a 16-bit word loaded from memory (movzx,
 * movsx): a word of 1 or 2 bytes in the file, about the bits of the
 * two outcomes it replaces. */
static bool narrow_loaded(const analysis *a, uint32_t v)
{
	const ssa_value *sv = &a->s.vals[v];
	return sv->kind == V_DEF && insn_is_narrow_load(&a->r->insns[sv->insn]);
}

/* A loop whose header merges, in a φ P, a value defined in the loop on
 * its back edges (a byte loaded at the end of each iteration, the loop
 * rotated: strkern's table_fold, count_words, squeeze): the branches on
 * P and on those values are a word each per iteration, and P one more
 * when an address needs it.  Recording the back edges' values where
 * they are defined instead, and P's entry value once, makes those
 * branches computed, and the skeleton carries P around the loop from
 * them (skelgen.c, carried φs): one word per iteration.  Done where it
 * saves words: a branch on a back edge's value, and P needed or a branch
 * on P too (then the back edges' values bytes or 16-bit words: a wider
 * value costs more bytes than the outcomes it replaces), each branch
 * known without another value.  true if something new is needed. */
static bool record_rotated(analysis *a, need_set *need, branch_info *br, size_t n)
{
	const routine *r = a->r;
	uint32_t one;
	bool found = false;
	for (uint32_t l = 0; l < r->nloops; l++) {
		uint32_t h = r->loops[l].header;
		if (r->loops[l].irreducible || h == 0)
			continue;
		for (unsigned var = 0; var < 16; var++) {
			uint32_t pv = a->s.at_start[h][var];
			const ssa_value *P = &a->s.vals[pv];
			if (SSA_PSEUDO(pv) || P->kind != V_PHI || P->block != h || var == R_SP ||
			    P->nargs != r->blocks[h].npred)
				continue;
			bool ok = true, back = false;
			for (uint32_t k = 0; k < P->nargs && ok; k++) {
				uint32_t pred = r->blocks[h].pred[k], v = P->args[k];
				if (r->blocks[pred].idom < 0 && pred != 0)
					continue;	/* unreachable */
				if (!loop_contains(r, l, pred))
					ok = entry_known(a, need, v, NULL);
				else if (v != pv)
					ok = back = recordable(a, v) && a->s.vals[v].kind == V_DEF &&
						    r->blocks[a->s.vals[v].block].loop == (int32_t)l &&
						    expr_is_leaf(expr_of_value(a->ec, v), v);
			}
			if (!ok || !back)
				continue;
			/* branches on P in its block, on a back edge's value in
			 * that value's block: taken at every iteration that
			 * passes there (a test made on some iterations only
			 * would cost more words as a value: tokenize) */
			bool on_p = false, on_back = false;
			for (size_t k = 0; k < n; k++) {
				uint32_t b = block_of_insn(r, br[k].insn);
				on_p |= b == h && branch_on(a, need, &br[k], (int32_t)l, pv);
				for (uint32_t j = 0; j < P->nargs; j++)
					on_back |= P->args[j] != pv && value_in_loop(a, P->args[j], l) &&
						   a->s.vals[P->args[j]].block == b &&
						   branch_on(a, need, &br[k], (int32_t)l, P->args[j]);
			}
			bool p_needed = addrmap_get(&need->m, pv, &one);
			if (!on_back || (!on_p && !p_needed))
				continue;
			/* recorded instead of P, or narrow */
			for (uint32_t k = 0; k < P->nargs && ok && !p_needed; k++)
				ok = P->args[k] == pv || !value_in_loop(a, P->args[k], l) ||
				     narrow_loaded(a, P->args[k]);
			if (!ok)
				continue;
			/* true only when something is new: the caller tries
			 * its branches again until nothing changes */
			bool more = need_new(need, pv);
			for (uint32_t k = 0; k < P->nargs; k++) {
				uint32_t pred = r->blocks[h].pred[k], v = P->args[k];
				if (v == pv || (r->blocks[pred].idom < 0 && pred != 0))
					continue;
				if (loop_contains(r, l, pred))
					more |= need_new(need, v);
				else
					(void)entry_known(a, need, v, &more);
			}
			a->rotated += more;
			found |= more;
		}
	}
	return found;
}

static void classify_branches(analysis *a, need_set *need, bool rotate)
{
	const routine *r = a->r;
	VEC(branch_info) brs = {0};
	for (uint32_t b = 0; b < r->nblocks; b++) {
		const block *bl = &r->blocks[b];
		uint32_t j = bl->first + bl->ninsn - 1;
		if (r->insns[j].flow != FLOW_CJUMP || (bl->idom < 0 && b != 0))
			continue;
		branch_info br = { .insn = j, .how = BR_RECORDED, .cc = r->insns[j].cond };
		if (!a->modeled || in_irreducible(r, b) || !branch_condition(a, j, &br))
			br.lhs = br.rhs = NULL;
		vec_push(brs, br);
	}
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < brs.n; k++)
			if (brs.a[k].how == BR_RECORDED && brs.a[k].lhs &&
			    try_compute(a, need, &brs.a[k],
					r->blocks[block_of_insn(r, brs.a[k].insn)].loop))
				changed = true;
		if (!changed)
			changed = record_for_branches(a, need, brs.a, brs.n);
		if (!changed && a->modeled && rotate)
			changed = record_rotated(a, need, brs.a, brs.n);
	}
	for (size_t k = 0; k < brs.n; k++)
		if (brs.a[k].how == BR_RECORDED)
			brs.a[k].lhs = brs.a[k].rhs = NULL;
	a->br = brs.a;
	a->nbr = (uint32_t)brs.n;
}

/* ------------------------------------------------------- jump tables */

/* e as a sum: *leaf its one leaf (SSA_NONE: none; false if more, or any
 * other operation), *nbias how often the load bias is added, *k the
 * constant. */
static bool sum_terms(const expr *e, uint32_t *leaf, int *nbias, int64_t *k)
{
	switch (e->kind) {
	case E_CONST:
		*k += e->k;
		return true;
	case E_LEAF:
		if (e->val == SSA_BIAS) {
			(*nbias)++;
			return true;
		}
		if (SSA_PSEUDO(e->val) || *leaf != SSA_NONE)
			return false;
		*leaf = e->val;
		return true;
	case E_ADD:
		return sum_terms(e->a, leaf, nbias, k) && sum_terms(e->b, leaf, nbias, k);
	default:
		return false;
	}
}

/* The constant part of address e, a sum: *k its constant, *nbias how
 * often the load bias is added; other terms (the index) are left. */
static void addr_base(const expr *e, int64_t *k, int *nbias)
{
	if (e->kind == E_ADD) {
		addr_base(e->a, k, nbias);
		addr_base(e->b, k, nbias);
	} else if (e->kind == E_CONST) {
		*k += e->k;
	} else if (e->kind == E_LEAF && e->val == SSA_BIAS) {
		(*nbias)++;
	}
}

/* The access of block b's jump-table load, when the jump's destination
 * is the entry it loads (extended as the table's are) plus the table's
 * constant, in link-time terms, and the skeleton computes its address:
 * the skeleton then reads the entry from the table (the bytes of the
 * file, read-only at run time), checking that the address is in it.
 * -1 otherwise. */
static int32_t table_access(const analysis *a, uint32_t b)
{
	const routine *r = a->r;
	const block *bl = &r->blocks[b];
	const binary *bin = &a->p->bin;
	uint32_t j = bl->first + bl->ninsn - 1;
	const insn *jmp = &r->insns[j];
	bool fixed = !bin->pie && !bin->shared;	/* load bias 0 */
	uint32_t load = j;
	if (!(bl->flags & BLK_JUMPTABLE) || !bl->jt_count || jmp->nopd < 1 ||
	    in_irreducible(r, b))
		return -1;
	if (jmp->opd[0].type == OPD_REG) {
		/* jmp reg: reg = entry + the table's constant (+ the bias) */
		uint32_t leaf = SSA_NONE;
		int nbias = 0;
		int64_t k = 0;
		expr *e = expr_of_value(a->ec, a->s.before[j][jmp->opd[0].reg]);
		if (!e || !sum_terms(e, &leaf, &nbias, &k) || leaf == SSA_NONE ||
		    k != bl->jt_add || !(nbias == 1 || (nbias == 0 && fixed)))
			return -1;
		const ssa_value *v = &a->s.vals[leaf];
		if (v->kind != V_DEF)
			return -1;
		load = v->insn;
		const insn *l = &r->insns[load];
		if (l->nmem != 1 || l->opd[0].type != OPD_REG ||
		    !(l->op == OP_MOVSX ? bl->jt_signed && bl->jt_size == 4 && l->opd[0].size == 8 :
		      l->op == OP_MOV && l->opd[0].size == bl->jt_size && !bl->jt_signed))
			return -1;
	} else if (!(fixed && bl->jt_add == 0 && bl->jt_size == 8)) {
		return -1;	/* jmp [mem]: an absolute entry, bias 0 */
	}
	for (uint32_t i = 0; i < a->nacc; i++) {
		int64_t k = 0;
		int nbias = 0;
		if (a->acc[i].insn != load || a->acc[i].k != 0 || !a->acc[i].addr ||
		    a->acc[i].rep || a->acc[i].size != bl->jt_size || !(a->acc[i].kind & ACC_R))
			continue;
		/* the table's own load (not a reload of the entry spilled to
		 * the stack, which jt_resolve follows, and which would stop
		 * the replay there): its address is the table's plus an index,
		 * whose constant gcc may fold in (sed: -256 entries, a signed
		 * char's) */
		addr_base(a->acc[i].addr, &k, &nbias);
		if (k - (int64_t)bl->jt_base >= -65536 && k - (int64_t)bl->jt_base <= 65536 &&
		    (nbias == 1 || (nbias == 0 && fixed)))
			return (int32_t)i;
	}
	return -1;
}

static void classify_tables(analysis *a)
{
	const routine *r = a->r;
	if (!a->modeled)
		return;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		int32_t i = table_access(a, b);
		if (i < 0)
			continue;
		if (!a->jt_acc) {
			a->jt_acc = xmalloc(r->nblocks * sizeof *a->jt_acc);
			for (uint32_t x = 0; x < r->nblocks; x++)
				a->jt_acc[x] = -1;
		}
		a->jt_acc[b] = i;
	}
}

/* ------------------------------------------------------------- probes */

static uint32_t probe_site(const analysis *a, uint32_t v, uint8_t *kind)
{
	const ssa_value *sv = &a->s.vals[v];
	const routine *r = a->r;
	switch (sv->kind) {
	case V_ENTRY:
		*kind = PR_REG_BEFORE;
		return r->blocks[0].first;
	case V_PHI:
		*kind = PR_REG_BEFORE;
		return r->blocks[sv->block].first;
	case V_CLOBBER:
		*kind = PR_REG_BEFORE;
		return sv->insn + 1;
	default:
		*kind = PR_REG_AFTER;
		return sv->insn;
	}
}

typedef VEC(probe) probe_vec;

/* A rep string op makes rcx accesses from rsi/rdi upwards (the direction
 * flag is assumed clear, as the ABI has it at calls): record the count and
 * the pointers before it, and for repe/repne cmps/scas the count left. */
static void add_rep_probes(analysis *a, probe_vec *pr)
{
	const routine *r = a->r;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		const insn *in = &r->insns[i];
		uint32_t b = block_of_insn(r, i);
		if (!insn_is_rep(in) || (r->blocks[b].idom < 0 && b != 0))
			continue;
		static const uint8_t regs[] = { R_CX, R_SI, R_DI };
		for (unsigned k = 0; k < 3; k++)
			if (k == 0 || (in->reads & REG_BIT(regs[k]))) {
				probe p = { .kind = PR_REG_BEFORE, .reg = regs[k], .rep = 1, .insn = i,
					    .val = a->s.before[i][regs[k]] };
				vec_push(*pr, p);
			}
		if (in->op == OP_CMPS || in->op == OP_SCAS) {
			probe p = { .kind = PR_REG_AFTER, .reg = R_CX, .rep = 1, .insn = i,
				    .val = ssa_after(&a->s, i, R_CX) };
			vec_push(*pr, p);
		}
	}
}

/* Order at one instruction: before-probes (registers by variable, then
 * direct addresses), then branch/target outcomes, then after-probes. */
static int probe_rank(const probe *p)
{
	switch (p->kind) {
	case PR_REG_BEFORE: return 0;
	case PR_ADDR: return 1;
	case PR_BRANCH:
	case PR_TARGET: return 2;
	default: return 3;
	}
}

static int cmp_probe(const void *x, const void *y)
{
	const probe *p = x, *q = y;
	if (p->insn != q->insn)
		return p->insn < q->insn ? -1 : 1;
	if (probe_rank(p) != probe_rank(q))
		return probe_rank(p) - probe_rank(q);
	if (p->kind == PR_ADDR)
		return p->k - q->k;
	if (p->rep != q->rep)
		return p->rep - q->rep;
	/* rsp first: at a routine's entry it follows the entry word (edsp) */
	if ((p->reg == R_SP) != (q->reg == R_SP))
		return p->reg == R_SP ? -1 : 1;
	return p->reg - q->reg;
}

void iv_sort_probes(analysis *a)
{
	if (a->nprobes)
		qsort(a->probes, a->nprobes, sizeof *a->probes, cmp_probe);
}

static void select_probes(analysis *a, need_set *need)
{
	const routine *r = a->r;
	probe_vec pr = {0};
	for (size_t i = 0; i < need->m.cap; i++) {
		if (!need->m.used[i])
			continue;
		uint32_t v = (uint32_t)need->m.keys[i];
		probe p = { .reg = a->s.vals[v].var, .val = v };
		p.insn = probe_site(a, v, &p.kind);
		vec_push(pr, p);
	}
	for (uint32_t i = 0; i < a->nacc; i++)
		if (!a->acc[i].addr && !a->acc[i].rep) {
			probe p = { .kind = PR_ADDR, .insn = a->acc[i].insn, .k = a->acc[i].k };
			vec_push(pr, p);
		}
	add_rep_probes(a, &pr);
	for (uint32_t i = 0; i < a->nbr; i++)
		if (a->br[i].how == BR_RECORDED) {
			probe p = { .kind = PR_BRANCH, .insn = a->br[i].insn };
			vec_push(pr, p);
		}
	/* the skeleton follows a jump table by its recorded destination,
	 * or one it reads from the table (classify_tables) */
	for (uint32_t b = 0; b < r->nblocks; b++) {
		uint32_t last = r->blocks[b].first + r->blocks[b].ninsn - 1;
		/* and checks an indirect call's destination where code outside
		 * every known function exists, which such a call could reach
		 * unseen (program_unreached) */
		if ((r->blocks[b].flags & (BLK_JUMPTABLE | BLK_IJUMP) &&
		     !(a->jt_acc && a->jt_acc[b] >= 0)) ||
		    (r->insns[last].flow == FLOW_ICALL && a->p->unreached)) {
			probe p = { .kind = PR_TARGET, .insn = last };
			vec_push(pr, p);
		}
	}
	for (size_t i = 0; i < pr.n; i++) {
		pr.a[i].depth = depth_of_block(r, block_of_insn(r, pr.a[i].insn));
		bool innermost = false;
		int32_t l = r->blocks[block_of_insn(r, pr.a[i].insn)].loop;
		if (l >= 0) {
			innermost = true;
			for (uint32_t k = 0; k < r->nloops; k++)
				if (r->loops[k].parent == l)
					innermost = false;
		}
		a->ninner_probes += innermost;
	}
	if (pr.n)
		qsort(pr.a, pr.n, sizeof *pr.a, cmp_probe);
	a->probes = pr.a;
	a->nprobes = (uint32_t)pr.n;
}

/* ---------------------------------------------------------- top level */

void iv_analyze(analysis *a, const program *p, const routine *r, unsigned flags)
{
	memset(a, 0, sizeof *a);
	a->p = p;
	a->r = r;
	a->modeled = !(flags & IV_ALL_DIRECT) && r->nblocks > 0;
	ssa_build(&a->s, r);
	a->ec = expr_ctx_new(&a->s);
	a->loops = xcalloc(r->nloops ? r->nloops : 1, sizeof *a->loops);
	if (a->modeled) {
		resolve_sp_phis(a);
		find_ivs(a);
	}
	collect_accesses(a);
	form_classes(a);

	need_set need = {0};
	for (uint32_t i = 0; i < a->nacc; i++)
		if (a->acc[i].addr)
			expr_leaves(a->acc[i].addr, need_leaf, &need);
	classify_branches(a, &need, !(flags & IV_NO_ROTATE));
	classify_tables(a);
	select_probes(a, &need);
	addrmap_free(&need.m);
	iv_affine(a);
}

void iv_free(analysis *a)
{
	for (uint32_t l = 0; a->loops && l < a->r->nloops; l++)
		free(a->loops[l].trip);
	free(a->loops);
	free(a->ivs);
	free(a->acc);
	free(a->cls);
	free(a->br);
	free(a->jt_acc);
	free(a->probes);
	if (a->ec)
		expr_ctx_free(a->ec);
	ssa_free(&a->s);
	memset(a, 0, sizeof *a);
}
