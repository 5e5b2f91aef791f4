/* affine.c — affine forms as isl objects, and trip counts of loops whose
 * exit test is affine in the loop's counter.
 *
 * Machine arithmetic is modular, isl's is over the integers.  The bridge:
 * an expression built from constants, leaves, counters, additions and
 * constant multiplications denotes an integer congruent to the machine
 * value mod 2^64 (the map Z → Z/2^64 is a ring morphism), whatever integer
 * each leaf stands for.  Leaves are taken as integers in [0, 2^64).  A
 * zero extension of the low b bits is then exactly "x mod 2^b", a sign
 * extension "(x + 2^(b-1)) mod 2^b - 2^(b-1)", and a b-bit compare looks
 * only at residues mod 2^b: every compare a jump can test is a Presburger
 * formula, so the sets built here are exact at any width, without any
 * no-overflow assumption. */
#include "ivres/ivres.h"
#include "analyzer/util.h"

#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>
#include <string.h>

/* isl work bound per loop (measured: parametric lexmin with a few
 * parameters and divisions ran past a minute at 2M): a blown-up problem
 * gives "unknown" instead of stalling `skel analyze` on a large binary. */
#define ISL_MAX_OPS 20000

/* ------------------------------------------------------ linear forms */

/* Σ k·atom + c (mod 2^64), atoms being any non-sum, non-scaled node.
 * Expressions are hash-consed, so equal atoms are equal pointers and
 * (n·I0) - (n·I0) cancels, as in a pointer compare whose both sides share
 * a symbolic row offset. */
typedef struct term {
	const expr *atom;
	uint64_t k;
} term;

typedef struct linform {
	VEC(term) t;
	uint64_t c;
} linform;

static void lin_add_term(linform *f, const expr *atom, uint64_t k)
{
	for (size_t i = 0; i < f->t.n; i++)
		if (f->t.a[i].atom == atom) {
			f->t.a[i].k += k;
			return;
		}
	term t = { atom, k };
	vec_push(f->t, t);
}

/* Only residues mod 2^bits are wanted: an extension of the low k >= bits
 * bits keeps them, so it is looked through. */
static void lin_walk(linform *f, const expr *e, uint64_t k, unsigned bits)
{
	switch (e->kind) {
	case E_CONST:
		f->c += k * (uint64_t)e->k;
		break;
	case E_ADD:
		lin_walk(f, e->a, k, bits);
		lin_walk(f, e->b, k, bits);
		break;
	case E_MUL:
		lin_walk(f, e->a, k * (uint64_t)e->k, bits);
		break;
	case E_ZEXT:
	case E_SEXT:
		if (e->bits >= bits) {
			lin_walk(f, e->a, k, bits);
			break;
		}
		/* fall through */
	default:
		lin_add_term(f, e, k);
		break;
	}
}

/* ------------------------------------------------------------ spaces */

static void counter_name(char *buf, size_t len, uint32_t l)
{
	snprintf(buf, len, "I%u", l);
}

/* isl names are identifiers: "rsi.6" becomes "rsi_6". */
static void leaf_name(const analysis *a, uint32_t v, char *buf, size_t len)
{
	ssa_value_name(&a->s, v, buf, len);
	for (char *p = buf; *p; p++)
		if (*p == '.')
			*p = '_';
}

typedef struct name_set {
	VEC(uint32_t) leaves;
	VEC(uint32_t) counters;
} name_set;

static void push_unique(uint32_t **a, size_t *n, size_t *cap, uint32_t x)
{
	for (size_t i = 0; i < *n; i++)
		if ((*a)[i] == x)
			return;
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		*a = xrealloc(*a, *cap * sizeof **a);
	}
	(*a)[(*n)++] = x;
}

static void collect(name_set *ns, const expr *e)
{
	if (!e)
		return;
	if (e->kind == E_LEAF)
		push_unique(&ns->leaves.a, &ns->leaves.n, &ns->leaves.cap, e->val);
	else if (e->kind == E_COUNTER)
		push_unique(&ns->counters.a, &ns->counters.n, &ns->counters.cap, e->val);
	collect(ns, e->a);
	collect(ns, e->b);
}

static bool has_counter(const name_set *ns, uint32_t l)
{
	for (size_t i = 0; i < ns->counters.n; i++)
		if (ns->counters.a[i] == l)
			return true;
	return false;
}

isl_space *iv_aff_space(const analysis *a, isl_ctx *ctx, int32_t l, bool outer_params,
			const expr *const *es, unsigned n)
{
	const routine *r = a->r;
	name_set ns = {0};
	for (unsigned i = 0; i < n; i++)
		collect(&ns, es[i]);
	/* the nest, innermost first */
	uint32_t chain[64], depth = 0;
	for (int32_t x = l; x >= 0 && depth < 64; x = r->loops[x].parent)
		chain[depth++] = (uint32_t)x;
	uint32_t outer[64], nouter = 0;
	if (outer_params)
		for (uint32_t i = depth; i-- > 1;)
			if (has_counter(&ns, chain[i]))
				outer[nouter++] = chain[i];
	unsigned ndim = outer_params ? (depth ? 1 : 0) : depth;
	isl_space *sp = isl_space_set_alloc(ctx, (unsigned)ns.leaves.n + nouter, ndim);
	char buf[48];
	for (size_t i = 0; i < ns.leaves.n; i++) {
		leaf_name(a, ns.leaves.a[i], buf, sizeof buf);
		sp = isl_space_set_dim_name(sp, isl_dim_param, (unsigned)i, buf);
	}
	for (uint32_t i = 0; i < nouter; i++) {
		counter_name(buf, sizeof buf, outer[i]);
		sp = isl_space_set_dim_name(sp, isl_dim_param, (unsigned)ns.leaves.n + i, buf);
	}
	for (unsigned i = 0; i < ndim; i++) {
		counter_name(buf, sizeof buf, chain[ndim - 1 - i]);
		sp = isl_space_set_dim_name(sp, isl_dim_set, i, buf);
	}
	free(ns.leaves.a);
	free(ns.counters.a);
	return sp;
}

/* ------------------------------------------------------ expressions */

static isl_val *val_s64(isl_ctx *ctx, uint64_t k)
{
	return isl_val_int_from_si(ctx, (long)(int64_t)k);
}

static isl_val *pow2(isl_ctx *ctx, unsigned bits)
{
	return isl_val_pow2(isl_val_int_from_ui(ctx, bits));
}

static isl_aff *named_var(__isl_keep isl_space *space, const char *name)
{
	isl_local_space *ls = isl_local_space_from_space(isl_space_copy(space));
	int pos = isl_space_find_dim_by_name(space, isl_dim_set, name);
	if (pos >= 0)
		return isl_aff_var_on_domain(ls, isl_dim_set, (unsigned)pos);
	pos = isl_space_find_dim_by_name(space, isl_dim_param, name);
	if (pos >= 0)
		return isl_aff_var_on_domain(ls, isl_dim_param, (unsigned)pos);
	isl_local_space_free(ls);
	return NULL;
}

static isl_aff *lin_to_aff(const analysis *a, __isl_keep isl_space *space, const linform *f);

static isl_aff *atom_to_aff(const analysis *a, __isl_keep isl_space *space, const expr *e)
{
	isl_ctx *ctx = isl_space_get_ctx(space);
	char buf[48];
	isl_aff *x;
	switch (e->kind) {
	case E_LEAF:
		leaf_name(a, e->val, buf, sizeof buf);
		return named_var(space, buf);
	case E_COUNTER:
		counter_name(buf, sizeof buf, e->val);
		return named_var(space, buf);
	case E_ZEXT:
		x = iv_expr_to_aff(a, space, e->a);
		return x ? isl_aff_mod_val(x, pow2(ctx, e->bits)) : NULL;
	case E_SEXT:
		x = iv_expr_to_aff(a, space, e->a);
		if (!x)
			return NULL;
		x = isl_aff_add_constant_val(x, pow2(ctx, e->bits - 1));
		x = isl_aff_mod_val(x, pow2(ctx, e->bits));
		return isl_aff_add_constant_val(x, isl_val_neg(pow2(ctx, e->bits - 1)));
	default:
		return NULL; /* E_MULV: a product of two unknowns */
	}
}

static isl_aff *lin_to_aff(const analysis *a, __isl_keep isl_space *space, const linform *f)
{
	isl_ctx *ctx = isl_space_get_ctx(space);
	isl_local_space *ls = isl_local_space_from_space(isl_space_copy(space));
	isl_aff *sum = isl_aff_val_on_domain(ls, val_s64(ctx, f->c));
	for (size_t i = 0; i < f->t.n && sum; i++) {
		if (f->t.a[i].k == 0)
			continue;
		isl_aff *t = atom_to_aff(a, space, f->t.a[i].atom);
		if (!t)
			return isl_aff_free(sum);
		sum = isl_aff_add(sum, isl_aff_scale_val(t, val_s64(ctx, f->t.a[i].k)));
	}
	return sum;
}

/* e's residue mod 2^bits as an isl_aff (some integer congruent to it). */
static isl_aff *to_aff(const analysis *a, __isl_keep isl_space *space, const expr *e, unsigned bits)
{
	linform f = {0};
	lin_walk(&f, e, 1, bits);
	isl_aff *x = lin_to_aff(a, space, &f);
	free(f.t.a);
	return x;
}

isl_aff *iv_expr_to_aff(const analysis *a, __isl_keep isl_space *space, const expr *e)
{
	return to_aff(a, space, e, 64);
}

/* -------------------------------------------------------- accesses */

static bool in_nest(const routine *r, int32_t l, uint32_t k)
{
	for (; l >= 0; l = r->loops[l].parent)
		if ((uint32_t)l == k)
			return true;
	return false;
}

static bool counter_free(const expr *e)
{
	return !expr_has_counter(e);
}

/* Affine in the counters of nest l with loop-invariant symbolic
 * coefficients: the design's "(invariant expression) × counter". */
static bool symbolic_affine(const routine *r, const expr *e, int32_t l)
{
	switch (e->kind) {
	case E_CONST:
	case E_LEAF:
		return true;
	case E_COUNTER:
		return in_nest(r, l, e->val);
	case E_ADD:
		return symbolic_affine(r, e->a, l) && symbolic_affine(r, e->b, l);
	case E_MUL:
		return symbolic_affine(r, e->a, l);
	case E_MULV:
		return (counter_free(e->a) && symbolic_affine(r, e->b, l)) ||
		       (counter_free(e->b) && symbolic_affine(r, e->a, l));
	case E_AND: /* a leaf-like atom when free of counters */
		return counter_free(e);
	default:
		return counter_free(e->a);
	}
}

static uint8_t classify_access(analysis *a, isl_ctx *ctx, const access_info *x)
{
	const routine *r = a->r;
	if (!x->addr)
		return IV_AFF_NONE;
	int32_t l = r->blocks[a->s.block_of[x->insn]].loop;
	const expr *e = x->addr;
	isl_space *sp = iv_aff_space(a, ctx, l, false, &e, 1);
	isl_aff *aff = iv_expr_to_aff(a, sp, e);
	isl_space_free(sp);
	if (aff) {
		isl_aff_free(aff);
		return IV_AFF_ISL;
	}
	return symbolic_affine(r, e, l) ? IV_AFF_SYMBOLIC : IV_AFF_NONE;
}

/* ------------------------------------------------------ trip counts */

/* A leaf the loop's test may use: defined before loop l is entered. */
static bool leaf_outside(const analysis *a, uint32_t v, uint32_t l)
{
	if (SSA_PSEUDO(v))
		return true;
	const ssa_value *sv = &a->s.vals[v];
	if (sv->kind == V_ENTRY || sv->kind == V_UNDEF)
		return true;
	for (int32_t x = a->r->blocks[sv->block].loop; x >= 0; x = a->r->loops[x].parent)
		if ((uint32_t)x == l)
			return false;
	return true;
}

/* Operands of l's exit test: counters of l's nest, leaves from outside l. */
static bool test_operand_ok(const analysis *a, const expr *e, uint32_t l)
{
	switch (e->kind) {
	case E_LEAF:
		return leaf_outside(a, e->val, l);
	case E_COUNTER:
		return in_nest(a->r, (int32_t)l, e->val);
	case E_CONST:
		return true;
	default:
		return (!e->a || test_operand_ok(a, e->a, l)) &&
		       (!e->b || test_operand_ok(a, e->b, l));
	}
}

/* Block x runs exactly once in every iteration of l that completes: it is
 * in l but in none of its inner loops, and dominates every latch. */
static bool once_per_iteration(const routine *r, uint32_t l, uint32_t x)
{
	const block *h = &r->blocks[r->loops[l].header];
	if (r->blocks[x].loop != (int32_t)l)
		return false;
	for (uint32_t i = 0; i < h->npred; i++) {
		uint32_t p = h->pred[i];
		if (in_nest(r, r->blocks[p].loop, l) && !dom_dominates(r, x, p))
			return false;
	}
	return true;
}

static const branch_info *branch_of(const analysis *a, uint32_t j)
{
	for (uint32_t i = 0; i < a->nbr; i++)
		if (a->br[i].insn == j)
			return &a->br[i];
	return NULL;
}

/* x mod 2^bits, shifted by 2^(bits-1) when signed: both orders become the
 * order of integers in [0, 2^bits). */
static isl_aff *residue(isl_aff *x, unsigned bits, bool is_signed)
{
	isl_ctx *ctx = isl_aff_get_ctx(x);
	if (is_signed)
		x = isl_aff_add_constant_val(x, pow2(ctx, bits - 1));
	return isl_aff_mod_val(x, pow2(ctx, bits));
}

/* The counter values for which the jump is taken: cmp lhs, rhs (or
 * test lhs, lhs with rhs = 0, which sets the same flags as cmp lhs, 0). */
static isl_set *taken_set(const analysis *a, __isl_keep isl_space *sp, const branch_info *br)
{
	isl_ctx *ctx = isl_space_get_ctx(sp);
	unsigned b = br->bits;
	bool sgn = false;
	switch (br->cc) {
	case CC_E: case CC_NE: case CC_S: case CC_NS: {
		/* flags of lhs - rhs: the difference alone decides */
		linform f = {0};
		lin_walk(&f, br->lhs, 1, br->bits);
		lin_walk(&f, br->rhs, (uint64_t)-1, br->bits);
		isl_aff *d = lin_to_aff(a, sp, &f);
		free(f.t.a);
		if (!d)
			return NULL;
		d = residue(d, b, false);
		isl_aff *z = isl_aff_val_on_domain(isl_local_space_from_space(isl_space_copy(sp)),
						   br->cc == CC_E || br->cc == CC_NE ? isl_val_zero(ctx)
										   : pow2(ctx, b - 1));
		switch (br->cc) {
		case CC_E: return isl_aff_eq_set(d, z);
		case CC_NE: return isl_aff_ne_set(d, z);
		case CC_S: return isl_aff_ge_set(d, z);
		default: return isl_aff_lt_set(d, z);
		}
	}
	case CC_L: case CC_GE: case CC_LE: case CC_G:
		sgn = true;
		/* fall through */
	case CC_B: case CC_AE: case CC_BE: case CC_A: {
		isl_aff *x = to_aff(a, sp, br->lhs, b);
		isl_aff *y = to_aff(a, sp, br->rhs, b);
		if (!x || !y) {
			isl_aff_free(x);
			isl_aff_free(y);
			return NULL;
		}
		x = residue(x, b, sgn);
		y = residue(y, b, sgn);
		switch (br->cc) {
		case CC_B: case CC_L: return isl_aff_lt_set(x, y);
		case CC_AE: case CC_GE: return isl_aff_ge_set(x, y);
		case CC_BE: case CC_LE: return isl_aff_le_set(x, y);
		default: return isl_aff_gt_set(x, y);
		}
	}
	default:
		return NULL;
	}
}

/* Every counter and leaf in [0, 2^64). */
static isl_set *machine_domain(__isl_keep isl_space *sp)
{
	isl_ctx *ctx = isl_space_get_ctx(sp);
	isl_set *dom = isl_set_universe(isl_space_copy(sp));
	static const enum isl_dim_type types[] = { isl_dim_param, isl_dim_set };
	for (unsigned t = 0; t < 2; t++) {
		isl_size n = isl_space_dim(sp, types[t]);
		for (isl_size i = 0; i < n; i++) {
			isl_local_space *ls = isl_local_space_from_space(isl_space_copy(sp));
			isl_aff *v = isl_aff_var_on_domain(ls, types[t], (unsigned)i);
			isl_aff *lo = isl_aff_val_on_domain(isl_local_space_from_space(isl_space_copy(sp)),
							    isl_val_zero(ctx));
			isl_aff *hi = isl_aff_val_on_domain(isl_local_space_from_space(isl_space_copy(sp)),
							    pow2(ctx, 64));
			dom = isl_set_intersect(dom, isl_aff_ge_set(isl_aff_copy(v), lo));
			dom = isl_set_intersect(dom, isl_aff_lt_set(v, hi));
		}
	}
	return dom;
}

/* A block of l that returns, tail-calls (directly or through a jump
 * table), stops or jumps where the CFG does not know: l can be left
 * without taking its exit edge, so the first exit of its test would only
 * bound the trip count. */
static bool leaves_otherwise(const routine *r, uint32_t l)
{
	const loop *lp = &r->loops[l];
	for (uint32_t i = 0; i < lp->nblocks; i++) {
		const block *b = &r->blocks[lp->blocks[i]];
		if ((b->flags & (BLK_RET | BLK_TAILCALL | BLK_NORETURN | BLK_HALT | BLK_IJUMP)) ||
		    b->ntails)
			return true;
	}
	return false;
}

/* The exit edge of l when it is the only one and leaves from a computed
 * jump run once per iteration; *exit_taken says which way it exits. */
static const branch_info *exit_branch(const analysis *a, uint32_t l, bool *exit_taken)
{
	const routine *r = a->r;
	const loop *lp = &r->loops[l];
	if (lp->irreducible || lp->nexits != 1 || leaves_otherwise(r, l))
		return NULL;
	uint32_t x = lp->exit_from[0];
	const block *bx = &r->blocks[x];
	const insn *j = &r->insns[bx->first + bx->ninsn - 1];
	if (j->flow != FLOW_CJUMP || !once_per_iteration(r, l, x))
		return NULL;
	const branch_info *br = branch_of(a, bx->first + bx->ninsn - 1);
	if (!br || br->how != BR_COMPUTED || j->target == bx->end)
		return NULL;
	uint64_t to = r->blocks[lp->exit_to[0]].start;
	if (to != j->target && to != bx->end)
		return NULL;
	*exit_taken = to == j->target;
	if (!test_operand_ok(a, br->lhs, l) || !test_operand_ok(a, br->rhs, l))
		return NULL;
	return br;
}

/* Splits x mod 2^m into at most two pieces without "mod" when x spans
 * at most two periods over dom — "n if n > 0, 2^64 if n = 0" reads better
 * than "(n + 2^64 - 1) mod 2^64 + 1" and is the same function. */
static isl_pw_aff *mod_pieces(__isl_take isl_set *dom, __isl_take isl_aff *x, unsigned m)
{
	isl_ctx *ctx = isl_aff_get_ctx(x);
	isl_val *lo = isl_set_min_val(dom, x), *hi = isl_set_max_val(dom, x);
	isl_val *qlo = isl_val_floor(isl_val_div(lo, pow2(ctx, m)));
	isl_val *qhi = isl_val_floor(isl_val_div(hi, pow2(ctx, m)));
	isl_val *span = isl_val_sub(isl_val_copy(qhi), isl_val_copy(qlo));
	isl_pw_aff *pa = NULL;
	if (span && isl_val_is_int(span) && isl_val_cmp_si(span, 1) <= 0) {
		isl_val *q = qlo;
		for (int i = 0; i <= isl_val_cmp_si(span, 0); i++, q = qhi) {
			isl_val *base = isl_val_mul(isl_val_copy(q), pow2(ctx, m));
			isl_aff *piece = isl_aff_add_constant_val(isl_aff_copy(x), isl_val_neg(isl_val_copy(base)));
			isl_aff *z = isl_aff_zero_on_domain(isl_aff_get_domain_local_space(x));
			isl_aff *top = isl_aff_val_on_domain(isl_aff_get_domain_local_space(x), pow2(ctx, m));
			isl_set *d = isl_set_copy(dom);
			d = isl_set_intersect(d, isl_aff_ge_set(isl_aff_copy(piece), z));
			d = isl_set_intersect(d, isl_aff_lt_set(isl_aff_copy(piece), top));
			isl_pw_aff *p = isl_pw_aff_alloc(d, piece);
			pa = pa ? isl_pw_aff_union_add(pa, p) : p;
			isl_val_free(base);
		}
	}
	isl_val_free(span);
	isl_val_free(qlo);
	isl_val_free(qhi);
	if (pa) {
		isl_set_free(dom);
		isl_aff_free(x);
		return pa;
	}
	return isl_pw_aff_alloc(dom, isl_aff_mod_val(x, pow2(ctx, m)));
}

/* u^-1 mod 2^64 for odd u (Newton: each step doubles the correct bits). */
static uint64_t inverse_odd(uint64_t u)
{
	uint64_t x = u;
	for (int i = 0; i < 6; i++)
		x *= 2 - u * x;
	return x;
}

static bool mentions_counter(const expr *e, uint32_t l)
{
	if (!e)
		return false;
	if (e->kind == E_COUNTER)
		return e->val == l;
	return mentions_counter(e->a, l) || mentions_counter(e->b, l);
}

/* The first I >= 0 with lhs = rhs in `bits` bits, in closed form rather
 * than by parametric integer programming (which blows up with a few
 * parameters and divisions): with lhs - rhs = c·I + D, c = 2^t·u, u odd,
 * a solution exists iff 2^t divides D, and then
 * I = (-(D / 2^t)·u^-1) mod 2^(bits-t). */
static isl_pw_aff *first_equal(const analysis *a, __isl_keep isl_space *sp,
			       const branch_info *br, uint32_t l)
{
	isl_ctx *ctx = isl_space_get_ctx(sp);
	unsigned b = br->bits;
	linform f = {0};
	lin_walk(&f, br->lhs, 1, br->bits);
	lin_walk(&f, br->rhs, (uint64_t)-1, br->bits);
	uint64_t c = 0;
	bool ok = true;
	for (size_t i = 0; i < f.t.n; i++) {
		const expr *at = f.t.a[i].atom;
		if (at->kind == E_COUNTER && at->val == l) {
			c = f.t.a[i].k;
			f.t.a[i].k = 0;
		} else if (f.t.a[i].k && mentions_counter(at, l)) {
			ok = false; /* e.g. a zero-extended counter: not linear in I */
		}
	}
	uint64_t mask = b == 64 ? ~0ull : (1ull << b) - 1;
	c &= mask;
	isl_space *psp = isl_space_params(isl_space_copy(sp));
	isl_aff *d = ok && c ? lin_to_aff(a, psp, &f) : NULL;
	isl_space_free(psp);
	free(f.t.a);
	if (!d)
		return NULL;
	unsigned t = (unsigned)__builtin_ctzll(c), m = b - t;
	uint64_t mm = m == 64 ? ~0ull : (1ull << m) - 1;
	uint64_t r = (0 - inverse_odd(c >> t)) & mm;
	/* the representative of -u^-1 nearest 0 keeps the printed form small */
	int64_t k = r >> (m - 1) ? (int64_t)(r - mm - 1) : (int64_t)r;
	isl_set *dom = isl_set_params(machine_domain(sp));
	if (t)
		dom = isl_set_intersect(dom, isl_set_from_basic_set(isl_aff_zero_basic_set(isl_aff_mod_val(isl_aff_copy(d), pow2(ctx, t)))));
	isl_aff *x = isl_aff_floor(isl_aff_scale_down_val(d, pow2(ctx, t)));
	x = isl_aff_scale_val(x, isl_val_int_from_si(ctx, k));
	return mod_pieces(dom, x, m);
}

/* The first I >= 0 whose test exits, by parametric lexmin: the general
 * case (ordered compares, loops that exit when two values differ). */
static isl_pw_aff *first_exit(const analysis *a, __isl_keep isl_space *sp,
			      const branch_info *br, bool exit_taken)
{
	isl_set *taken = taken_set(a, sp, br);
	if (!taken)
		return NULL;
	isl_set *dom = machine_domain(sp);
	isl_set *exits = exit_taken ? isl_set_intersect(taken, dom) : isl_set_subtract(dom, taken);
	return isl_set_dim_min(exits, 0);
}

/* Trip count of loop l (header runs per entry): with I the counter at the
 * exit test, the loop leaves at the first I >= 0 whose test exits, after
 * I + 1 runs of the header — the same whether the test sits in the header
 * (while form) or at the latch (do-while form), as the test's operands are
 * expressed in the current iteration's I either way. */
static char *trip_count(analysis *a, isl_ctx *ctx, uint32_t l)
{
	bool exit_taken;
	const branch_info *br = exit_branch(a, l, &exit_taken);
	if (!br)
		return NULL;
	const expr *es[2] = { br->lhs, br->rhs };
	isl_space *sp = iv_aff_space(a, ctx, (int32_t)l, true, es, 2);
	bool on_equal = br->cc == (exit_taken ? CC_E : CC_NE);
	isl_pw_aff *first = on_equal ? first_equal(a, sp, br, l) : first_exit(a, sp, br, exit_taken);
	char *text = NULL;
	if (first) {
		isl_set *params = isl_set_params(machine_domain(sp));
		first = isl_pw_aff_add_constant_val(first, isl_val_one(ctx));
		first = isl_pw_aff_gist_params(first, params);
		first = isl_pw_aff_drop_unused_params(first);
		if (first && isl_pw_aff_n_piece(first) > 0) {
			char *s = isl_pw_aff_to_str(first);
			if (s)
				text = xstrdup(s);
			free(s);
		}
		isl_pw_aff_free(first);
	}
	isl_space_free(sp);
	return text;
}

/* ------------------------------------------------------------- entry */

void iv_affine(analysis *a)
{
	if (!a->modeled)
		return;
	isl_ctx *ctx = isl_ctx_alloc();
	isl_options_set_on_error(ctx, ISL_ON_ERROR_CONTINUE);
	isl_ctx_set_max_operations(ctx, ISL_MAX_OPS);
	for (uint32_t i = 0; i < a->nacc; i++)
		a->acc[i].affine = classify_access(a, ctx, &a->acc[i]);
	for (uint32_t l = 0; l < a->r->nloops; l++) {
		isl_ctx_reset_operations(ctx);
		a->loops[l].trip = trip_count(a, ctx, l);
		isl_ctx_reset_error(ctx);
	}
	isl_ctx_free(ctx);
}
