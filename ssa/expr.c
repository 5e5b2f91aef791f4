/* expr.c — symbolic expressions over SSA values: a hash-consed pool of
 * exact 64-bit machine arithmetic, and slicing by substitution (Ketterlin &
 * Clauss, "Efficient memory tracing by program skeletonization", ISPASS
 * 2011: follow use-def links through linear definitions; stop at entry
 * values, loads, non-linear results and φs).
 *
 * Canonical form, so that equal values built in different orders are the
 * same pointer:
 *   - a sum is flattened into terms coefficient·base (a base is never a
 *     sum, a product by a constant or a constant), bases sorted by
 *     expr_order(), equal bases merged, zero terms dropped; the tree is
 *     ADD(const, ADD(t1, ADD(t2, ... tn))) without the const when it is 0;
 *     a term with coefficient 1 is its base, otherwise MUL(base, k);
 *   - a product by a constant distributes over sums (mod 2^64 it is a ring
 *     homomorphism), MUL(MUL(x, a), b) = MUL(x, a·b), ·1 and ·0 vanish;
 *   - MULV distributes the same way and keeps its two factors ordered;
 *   - under an extension of the low n bits, only the low n bits of the
 *     operand matter: inner extensions of ≥ n bits are dropped, constants
 *     and coefficients are reduced to n bits (sign-extended), and
 *     extensions of extensions collapse (zext32(zext8(x)) = zext8(x),
 *     sext32(zext32(x)) = sext32(x), sext32(zext8(x)) = zext8(x)).
 * All arithmetic on constants is done in uint64_t: wrap-around, no UB. */
#include "ssa/ssa.h"
#include "analyzer/util.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

#define CHUNK 256

typedef struct chunk {
	struct chunk *next;
	expr e[CHUNK];
} chunk;

struct expr_ctx {
	const ssa *s;
	expr **tab;         /* open addressing, power-of-two size */
	size_t cap, n;
	chunk *chunks;
	uint32_t used;      /* nodes used in chunks (the head) */
	expr **memo;        /* expr_of_value results, per SSA value */
	expr **fixed;       /* expr_set_value overrides, per SSA value */
};

/* ------------------------------------------------------- the pool */

static uint64_t node_hash(unsigned kind, unsigned bits, uint32_t val, int64_t k,
			  const expr *a, const expr *b)
{
	uint64_t h = kind * 0x9e3779b97f4a7c15ull;
	h = (h ^ bits) * 0xff51afd7ed558ccdull;
	h = (h ^ val) * 0xc4ceb9fe1a85ec53ull;
	h = (h ^ (uint64_t)k) * 0x9e3779b97f4a7c15ull;
	h = (h ^ (uint64_t)(uintptr_t)a) * 0xff51afd7ed558ccdull;
	h = (h ^ (uint64_t)(uintptr_t)b) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static bool node_is(const expr *e, unsigned kind, unsigned bits, uint32_t val, int64_t k,
		    const expr *a, const expr *b)
{
	return e->kind == kind && e->bits == bits && e->val == val && e->k == k &&
	       e->a == a && e->b == b;
}

static void pool_grow(expr_ctx *c)
{
	size_t ncap = c->cap ? 2 * c->cap : 1024;
	expr **nt = xcalloc(ncap, sizeof *nt);
	for (size_t i = 0; i < c->cap; i++) {
		expr *e = c->tab[i];
		if (!e)
			continue;
		size_t h = node_hash(e->kind, e->bits, e->val, e->k, e->a, e->b) & (ncap - 1);
		while (nt[h])
			h = (h + 1) & (ncap - 1);
		nt[h] = e;
	}
	free(c->tab);
	c->tab = nt;
	c->cap = ncap;
}

/* The unique node with these fields; no simplification here. */
static expr *mk(expr_ctx *c, unsigned kind, unsigned bits, uint32_t val, int64_t k,
		expr *a, expr *b)
{
	if (2 * (c->n + 1) > c->cap)
		pool_grow(c);
	size_t h = node_hash(kind, bits, val, k, a, b) & (c->cap - 1);
	for (; c->tab[h]; h = (h + 1) & (c->cap - 1))
		if (node_is(c->tab[h], kind, bits, val, k, a, b))
			return c->tab[h];
	if (!c->chunks || c->used == CHUNK) {
		chunk *ch = xmalloc(sizeof *ch);
		ch->next = c->chunks;
		c->chunks = ch;
		c->used = 0;
	}
	expr *e = &c->chunks->e[c->used++];
	*e = (expr){ .kind = (uint8_t)kind, .bits = (uint8_t)bits, .val = val, .k = k,
		     .a = a, .b = b };
	c->tab[h] = e;
	c->n++;
	return e;
}

expr_ctx *expr_ctx_new(const ssa *s)
{
	expr_ctx *c = xcalloc(1, sizeof *c);
	c->s = s;
	c->memo = xcalloc(s->nvals ? s->nvals : 1, sizeof *c->memo);
	c->fixed = xcalloc(s->nvals ? s->nvals : 1, sizeof *c->fixed);
	return c;
}

void expr_ctx_free(expr_ctx *c)
{
	if (!c)
		return;
	while (c->chunks) {
		chunk *next = c->chunks->next;
		free(c->chunks);
		c->chunks = next;
	}
	free(c->tab);
	free(c->memo);
	free(c->fixed);
	free(c);
}

/* ------------------------------------------------------ canonical order */

static int kind_rank(unsigned kind)
{
	static const int rank[] = {
		[E_LEAF] = 0, [E_COUNTER] = 1, [E_MULV] = 2, [E_ZEXT] = 3,
		[E_SEXT] = 4, [E_MUL] = 5, [E_ADD] = 6, [E_CONST] = 7,
		[E_AND] = 8, [E_SHR] = 9, [E_SAR] = 10,
	};
	return rank[kind];
}

static int cmp3(int64_t x, int64_t y)
{
	return (x > y) - (x < y);
}

/* A total order on nodes that depends on structure only (not on
 * addresses), so that printed sums are stable from run to run.  Pointer
 * equality of hash-consed nodes means structural equality. */
static int expr_order(const expr *x, const expr *y)
{
	if (x == y)
		return 0;
	if (x->kind != y->kind)
		return kind_rank(x->kind) - kind_rank(y->kind);
	int d;
	switch (x->kind) {
	case E_CONST:
		return cmp3(x->k, y->k);
	case E_LEAF:
	case E_COUNTER:
		return cmp3(x->val, y->val);
	case E_ZEXT:
	case E_SEXT:
		if (x->bits != y->bits)
			return x->bits - y->bits;
		return expr_order(x->a, y->a);
	case E_MUL:
		d = expr_order(x->a, y->a);
		return d ? d : cmp3(x->k, y->k);
	case E_SHR:
	case E_SAR:
		if (x->bits != y->bits || x->k != y->k)
			return x->bits != y->bits ? x->bits - y->bits : cmp3(x->k, y->k);
		return expr_order(x->a, y->a);
	default: /* E_ADD, E_MULV, E_AND */
		d = expr_order(x->a, y->a);
		return d ? d : expr_order(x->b, y->b);
	}
}

/* --------------------------------------------------------------- sums */

typedef struct term {
	expr *e;
	uint64_t k;
} term;

/* A sum under construction.  bits < 64: only the low `bits` bits of the
 * result will be used (it is the operand of an extension). */
typedef struct sum {
	term *t;
	size_t n, cap;
	uint64_t k;
	unsigned bits;
} sum;

static expr *low_bits(expr_ctx *c, expr *e, unsigned bits);

static void sum_add(expr_ctx *c, sum *s, expr *e, uint64_t coef)
{
	if (s->bits < 64) {
		if ((e->kind == E_ZEXT || e->kind == E_SEXT) && e->bits >= s->bits) {
			sum_add(c, s, e->a, coef);
			return;
		}
		if (e->kind == E_MULV)
			e = low_bits(c, e, s->bits);
	}
	switch (e->kind) {
	case E_CONST:
		s->k += (uint64_t)e->k * coef;
		return;
	case E_ADD:
		sum_add(c, s, e->a, coef);
		sum_add(c, s, e->b, coef);
		return;
	case E_MUL:
		sum_add(c, s, e->a, (uint64_t)e->k * coef);
		return;
	default:
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 8;
			s->t = xrealloc(s->t, s->cap * sizeof *s->t);
		}
		s->t[s->n++] = (term){ e, coef };
	}
}

/* x reduced to its low `bits` bits, sign-extended: the canonical
 * representative of x modulo 2^bits. */
static uint64_t reduce(uint64_t x, unsigned bits)
{
	if (bits >= 64)
		return x;
	uint64_t m = ((uint64_t)1 << bits) - 1, sign = (uint64_t)1 << (bits - 1);
	x &= m;
	return x & sign ? x | ~m : x;
}

static int term_order(const void *p, const void *q)
{
	return expr_order(((const term *)p)->e, ((const term *)q)->e);
}

static expr *sum_build(expr_ctx *c, sum *s)
{
	size_t n = 0;
	if (s->n > 1)
		qsort(s->t, s->n, sizeof *s->t, term_order);
	for (size_t i = 0; i < s->n; i++) {
		if (n && s->t[n - 1].e == s->t[i].e)
			s->t[n - 1].k += s->t[i].k;
		else
			s->t[n++] = s->t[i];
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		s->t[i].k = reduce(s->t[i].k, s->bits);
		if (s->t[i].k)
			s->t[m++] = s->t[i];
	}
	uint64_t k = reduce(s->k, s->bits);
	expr *rest = NULL;
	for (size_t i = m; i-- > 0;) {
		term *t = &s->t[i];
		expr *x = t->k == 1 ? t->e : mk(c, E_MUL, 0, 0, (int64_t)t->k, t->e, NULL);
		rest = rest ? mk(c, E_ADD, 0, 0, 0, x, rest) : x;
	}
	free(s->t);
	expr *kc = mk(c, E_CONST, 0, 0, (int64_t)k, NULL, NULL);
	if (!rest)
		return kc;
	return k ? mk(c, E_ADD, 0, 0, 0, kc, rest) : rest;
}

/* e with the same low `bits` bits, simplified knowing the rest is
 * discarded: low bits of sums and products depend only on low bits of
 * their operands. */
static expr *low_bits(expr_ctx *c, expr *e, unsigned bits)
{
	switch (e->kind) {
	case E_ZEXT:
	case E_SEXT:
		return e->bits >= bits ? low_bits(c, e->a, bits) : e;
	case E_ADD:
	case E_MUL: {
		sum s = { .bits = bits };
		sum_add(c, &s, e, 1);
		return sum_build(c, &s);
	}
	case E_MULV:
		return expr_mulv(c, low_bits(c, e->a, bits), low_bits(c, e->b, bits));
	case E_CONST:
		return expr_const(c, (int64_t)reduce((uint64_t)e->k, bits));
	default:
		return e;
	}
}

/* ------------------------------------------------------- constructors */

expr *expr_const(expr_ctx *c, int64_t k)
{
	return mk(c, E_CONST, 0, 0, k, NULL, NULL);
}

expr *expr_leaf(expr_ctx *c, uint32_t val)
{
	return mk(c, E_LEAF, 0, val, 0, NULL, NULL);
}

expr *expr_counter(expr_ctx *c, uint32_t l)
{
	return mk(c, E_COUNTER, 0, l, 0, NULL, NULL);
}

expr *expr_add(expr_ctx *c, expr *a, expr *b)
{
	sum s = { .bits = 64 };
	sum_add(c, &s, a, 1);
	sum_add(c, &s, b, 1);
	return sum_build(c, &s);
}

expr *expr_mul(expr_ctx *c, expr *a, int64_t k)
{
	sum s = { .bits = 64 };
	sum_add(c, &s, a, (uint64_t)k);
	return sum_build(c, &s);
}

/* (Σ ai·xi + a0)·(Σ bj·yj + b0) = Σ ai·bj·MULV(xi, yj) + ...: products of
 * bases stay MULV nodes with their factors in expr_order. */
expr *expr_mulv(expr_ctx *c, expr *a, expr *b)
{
	sum sa = { .bits = 64 }, sb = { .bits = 64 }, r = { .bits = 64 };
	sum_add(c, &sa, a, 1);
	sum_add(c, &sb, b, 1);
	for (size_t i = 0; i <= sa.n; i++) {
		expr *x = i < sa.n ? sa.t[i].e : NULL;
		uint64_t kx = i < sa.n ? sa.t[i].k : sa.k;
		for (size_t j = 0; j <= sb.n; j++) {
			expr *y = j < sb.n ? sb.t[j].e : NULL;
			uint64_t ky = j < sb.n ? sb.t[j].k : sb.k;
			expr *p;
			if (!x && !y)
				p = expr_const(c, 1);
			else if (!x || !y)
				p = x ? x : y;
			else if (expr_order(x, y) <= 0)
				p = mk(c, E_MULV, 0, 0, 0, x, y);
			else
				p = mk(c, E_MULV, 0, 0, 0, y, x);
			sum_add(c, &r, p, kx * ky);
		}
	}
	free(sa.t);
	free(sb.t);
	return sum_build(c, &r);
}

expr *expr_zext(expr_ctx *c, expr *a, unsigned bits)
{
	if (bits >= 64)
		return a;
	a = low_bits(c, a, bits);
	if (a->kind == E_CONST)
		return expr_const(c, (int64_t)((uint64_t)a->k & (((uint64_t)1 << bits) - 1)));
	/* low_bits left only narrower extensions: zext_n(zext_m(x)) = zext_m(x) */
	if (a->kind == E_ZEXT)
		return a;
	return mk(c, E_ZEXT, bits, 0, 0, a, NULL);
}

expr *expr_sext(expr_ctx *c, expr *a, unsigned bits)
{
	if (bits >= 64)
		return a;
	a = low_bits(c, a, bits);
	if (a->kind == E_CONST)
		return a; /* low_bits already sign-extended it */
	/* an m-bit extension, m < n, already has bit n-1 equal to bits n..63 */
	if (a->kind == E_ZEXT || a->kind == E_SEXT)
		return a;
	return mk(c, E_SEXT, bits, 0, 0, a, NULL);
}

expr *expr_and(expr_ctx *c, expr *a, expr *b)
{
	if (a->kind == E_CONST) {
		expr *x = a;
		a = b;
		b = x;
	}
	if (b->kind == E_CONST) {
		if (a->kind == E_CONST)
			return expr_const(c, (int64_t)((uint64_t)a->k & (uint64_t)b->k));
		switch ((uint64_t)b->k) {
		case 0: return b;
		case 0xff: return expr_zext(c, a, 8);
		case 0xffff: return expr_zext(c, a, 16);
		case 0xffffffffu: return expr_zext(c, a, 32);
		case UINT64_MAX: return a;
		}
	} else if (a == b) {
		return a;
	} else if (expr_order(a, b) > 0) {
		expr *x = a;
		a = b;
		b = x;
	}
	return mk(c, E_AND, 0, 0, 0, a, b);
}

expr *expr_shr(expr_ctx *c, expr *a, unsigned bits, unsigned k, bool arith)
{
	assert(bits == 32 || bits == 64);
	k &= bits - 1;
	if (bits == 32)
		a = arith ? expr_sext(c, a, 32) : expr_zext(c, a, 32);
	if (!k)
		return a;
	if (a->kind == E_CONST)
		return expr_const(c, arith ? (int64_t)((uint64_t)(a->k >> k) &
						       (bits == 32 ? 0xffffffffu : UINT64_MAX))
					   : (int64_t)((uint64_t)a->k >> k));
	return mk(c, arith ? E_SAR : E_SHR, bits, 0, k, a, NULL);
}

/* ------------------------------------------------- slicing by substitution */

static expr *reg_before(expr_ctx *c, uint32_t i, unsigned reg)
{
	return expr_of_value(c, c->s->before[i][reg]);
}

/* A register operand readable as a whole GPR (not ah..bh). */
static bool plain_reg(const operand *o)
{
	return o->type == OPD_REG && o->reg < 16 && !o->high8;
}

/* Value of a register or immediate source operand; NULL otherwise.  Only
 * the low operand-size bits of the result are meaningful, which is all a
 * destination of that size keeps. */
static expr *source(expr_ctx *c, uint32_t i, const operand *o)
{
	if (o->type == OPD_IMM)
		return expr_const(c, o->imm);
	if (plain_reg(o))
		return reg_before(c, i, o->reg);
	return NULL;
}

static expr *address(expr_ctx *c, uint32_t i, const mem_access *m)
{
	const insn *in = &c->s->r->insns[i];
	expr *e = expr_const(c, m->disp);
	/* RIP-relative: an absolute link-time address, moved by the load bias */
	if (m->flags & MEM_RIPREL)
		e = expr_add(c, e, expr_leaf(c, SSA_BIAS));
	else if (m->base == R_RIP)
		e = expr_add(c, expr_const(c, (int64_t)(in->addr + in->len + (uint64_t)m->disp)),
			     expr_leaf(c, SSA_BIAS));
	else if (m->base < 16)
		e = expr_add(c, e, reg_before(c, i, m->base));
	if (m->index < 16)
		e = expr_add(c, e, expr_mul(c, reg_before(c, i, m->index), m->scale));
	return m->addr32 ? expr_zext(c, e, 32) : e;
}

expr *expr_of_access(expr_ctx *c, uint32_t i, unsigned k)
{
	const mem_access *m = &c->s->r->insns[i].mem[k];
	if (m->seg == SEG_FS)	/* the thread pointer: fs:0 holds it too */
		return expr_add(c, address(c, i, m), expr_leaf(c, SSA_FSBASE));
	if (m->seg != SEG_NONE)
		return NULL;
	return address(c, i, m);
}

/* The implicit stack access of push/pop, whose address tells the new rsp. */
static const mem_access *stack_slot(const insn *in, unsigned kind)
{
	for (unsigned k = 0; k < in->nmem; k++) {
		const mem_access *m = &in->mem[k];
		if ((m->flags & MEM_IMPLICIT) && m->base == R_SP && m->kind == kind)
			return m;
	}
	return NULL;
}

/* rsp after push/pop/leave; NULL when not one of them. */
static expr *stack_pointer(expr_ctx *c, uint32_t i, const insn *in)
{
	const mem_access *m;
	switch (in->op) {
	case OP_PUSH: /* rsp -= size: the new top is the slot written */
		m = stack_slot(in, ACC_W);
		return m ? address(c, i, m) : NULL;
	case OP_POP: /* rsp += size, unless rsp itself is popped */
		m = stack_slot(in, ACC_R);
		if (!m || (in->nopd && in->opd[0].type == OPD_REG && in->opd[0].reg == R_SP))
			return NULL;
		return expr_add(c, address(c, i, m), expr_const(c, m->size));
	case OP_LEAVE: /* mov rsp, rbp; pop rbp */
		return expr_add(c, reg_before(c, i, R_BP), expr_const(c, 8));
	default:
		return NULL;
	}
}

/* and r, imm: masks of low 8/16/32 bits are zero extensions. */
static expr *and_mask(expr_ctx *c, expr *x, const operand *d, int64_t imm)
{
	uint64_t k = (uint64_t)imm;
	if (d->size == 4)
		k &= 0xffffffffu;
	switch (k) {
	case 0: return expr_const(c, 0);
	case 0xff: return expr_zext(c, x, 8);
	case 0xffff: return expr_zext(c, x, 16);
	case 0xffffffffu: return expr_zext(c, x, 32);
	case UINT64_MAX: return x;
	default: return NULL;
	}
}

/* The 64-bit result instruction i writes into register `reg`, before the
 * 32-bit zero extension; NULL when it is not linear in its inputs. */
static expr *linear_def(expr_ctx *c, uint32_t i, unsigned reg)
{
	const insn *in = &c->s->r->insns[i];
	const operand *d = &in->opd[0], *s1 = &in->opd[1];
	if (reg == R_SP) {
		expr *sp = stack_pointer(c, i, in);
		if (sp || in->op == OP_PUSH || in->op == OP_POP || in->op == OP_LEAVE)
			return sp;
	}
	if (in->op == OP_XCHG && in->nopd == 2 && plain_reg(d) && plain_reg(s1) &&
	    d->size >= 4 && s1->size >= 4)
		return reg_before(c, i, reg == d->reg ? s1->reg : d->reg);
	if (in->op == OP_MOVSX && in->nopd < 2 && reg == R_AX) /* cbw/cwde/cdqe */
		return expr_sext(c, reg_before(c, i, R_AX), in->wsize[R_AX] * 4u);
	/* the rest define their first operand */
	if (!in->nopd || !plain_reg(d) || d->reg != reg)
		return NULL;
	bool same = in->nopd >= 2 && plain_reg(s1) && s1->reg == d->reg;
	expr *x = reg_before(c, i, reg), *y = in->nopd >= 2 ? source(c, i, s1) : NULL;
	switch (in->op) {
	case OP_MOV:
		return y;
	case OP_MOVZX:
		return y && s1->type == OPD_REG && s1->size < 4 ? expr_zext(c, y, 8u * s1->size) : NULL;
	case OP_MOVSX:
		return y && s1->type == OPD_REG && s1->size < 8 ? expr_sext(c, y, 8u * s1->size) : NULL;
	case OP_LEA:
		return s1->type == OPD_MEM ? address(c, i, &in->mem[s1->mem]) : NULL;
	case OP_ADD:
		return y ? expr_add(c, x, y) : NULL;
	case OP_SUB:
		if (same)
			return expr_const(c, 0);
		return y ? expr_add(c, x, expr_mul(c, y, -1)) : NULL;
	case OP_INC:
		return expr_add(c, x, expr_const(c, 1));
	case OP_DEC:
		return expr_add(c, x, expr_const(c, -1));
	case OP_NEG:
		return expr_mul(c, x, -1);
	case OP_NOT: /* ~x = -x - 1 */
		return expr_add(c, expr_mul(c, x, -1), expr_const(c, -1));
	case OP_IMUL: /* imul r, r, imm; imul r, m, imm reads memory */
		if (in->nopd == 3 && plain_reg(s1) && in->opd[2].type == OPD_IMM)
			return expr_mul(c, y, in->opd[2].imm);
		if (in->nopd == 2 && s1->type == OPD_IMM) /* imul r, imm */
			return expr_mul(c, x, s1->imm);
		return NULL;
	case OP_SHL:
		if (!y || s1->type != OPD_IMM)
			return NULL;
		return expr_mul(c, x, (int64_t)((uint64_t)1 << (s1->imm & (d->size == 8 ? 63 : 31))));
	case OP_XOR:
		return same ? expr_const(c, 0) : NULL;
	case OP_AND:
		if (same)
			return x;
		return y && s1->type == OPD_IMM ? and_mask(c, x, d, s1->imm) : NULL;
	case OP_OR:
		return same ? x : NULL;
	default:
		return NULL;
	}
}

static expr *value_expr(expr_ctx *c, uint32_t v)
{
	const ssa_value *sv = &c->s->vals[v];
	if (sv->kind != V_DEF || sv->var >= 16)
		return expr_leaf(c, v);
	const insn *in = &c->s->r->insns[sv->insn];
	unsigned ws = in->wsize[sv->var];
	if (ws == 1 || ws == 2) /* merges with the old upper bits */
		return expr_leaf(c, v);
	expr *e = linear_def(c, sv->insn, sv->var);
	if (!e)
		return expr_leaf(c, v);
	return ws == 4 ? expr_zext(c, e, 32) : e;
}

expr *expr_of_def_bits(expr_ctx *c, uint32_t v)
{
	if (v >= c->s->nvals)
		return NULL;
	const ssa_value *sv = &c->s->vals[v];
	if (sv->kind != V_DEF || sv->var >= 16)
		return NULL;
	const insn *in = &c->s->r->insns[sv->insn];
	const operand *d = &in->opd[0], *s1 = &in->opd[1];
	unsigned ws = in->wsize[sv->var];
	if ((ws != 4 && ws != 8) || in->nopd != 2 || !plain_reg(d) || d->reg != sv->var ||
	    d->size != ws)
		return NULL;
	expr *x = reg_before(c, sv->insn, d->reg), *y = source(c, sv->insn, s1), *e;
	if (!y)
		return NULL;
	switch (in->op) {
	case OP_AND:
		e = expr_and(c, x, s1->type == OPD_IMM && ws == 4 ? expr_zext(c, y, 32) : y);
		break;
	case OP_SHR:
	case OP_SAR:
		if (s1->type != OPD_IMM)
			return NULL;
		e = expr_shr(c, x, 8u * ws, (unsigned)s1->imm, in->op == OP_SAR);
		break;
	default:
		return NULL;
	}
	return ws == 4 ? expr_zext(c, e, 32) : e;
}

expr *expr_of_value(expr_ctx *c, uint32_t v)
{
	if (v >= c->s->nvals) /* SSA_BIAS, SSA_FSBASE */
		return expr_leaf(c, v);
	if (c->fixed[v])
		return c->fixed[v];
	if (!c->memo[v])
		c->memo[v] = value_expr(c, v);
	return c->memo[v];
}

void expr_set_value(expr_ctx *c, uint32_t phi, expr *e)
{
	assert(phi < c->s->nvals);
	c->fixed[phi] = e;
}

bool expr_is_set(const expr_ctx *c, uint32_t v)
{
	return v < c->s->nvals && c->fixed[v] != NULL;
}

void expr_reset_memo(expr_ctx *c)
{
	memset(c->memo, 0, (c->s->nvals ? c->s->nvals : 1) * sizeof *c->memo);
}

/* ------------------------------------------------------------ queries */

expr *expr_split_const(expr_ctx *c, expr *e, int64_t *off)
{
	(void)c;
	*off = 0;
	if (e->kind == E_CONST) {
		*off = e->k;
		return NULL;
	}
	/* canonical sums keep their constant first */
	if (e->kind == E_ADD && e->a->kind == E_CONST) {
		*off = e->a->k;
		return e->b;
	}
	return e;
}

typedef struct leafset {
	uint32_t *v;
	size_t n, cap;
} leafset;

static void collect_leaves(const expr *e, leafset *ls,
			   void (*fn)(uint32_t val, void *arg), void *arg)
{
	if (!e)
		return;
	if (e->kind == E_LEAF) {
		for (size_t i = 0; i < ls->n; i++)
			if (ls->v[i] == e->val)
				return;
		if (ls->n == ls->cap) {
			ls->cap = ls->cap ? 2 * ls->cap : 8;
			ls->v = xrealloc(ls->v, ls->cap * sizeof *ls->v);
		}
		ls->v[ls->n++] = e->val;
		fn(e->val, arg);
		return;
	}
	collect_leaves(e->a, ls, fn, arg);
	collect_leaves(e->b, ls, fn, arg);
}

void expr_leaves(const expr *e, void (*fn)(uint32_t val, void *arg), void *arg)
{
	leafset ls = {0};
	collect_leaves(e, &ls, fn, arg);
	free(ls.v);
}

bool expr_has_counter(const expr *e)
{
	if (!e)
		return false;
	if (e->kind == E_COUNTER)
		return true;
	return expr_has_counter(e->a) || expr_has_counter(e->b);
}

/* ------------------------------------------------------------ printing */

/* Syntax: sums as "0x4040a0 + 8*rsi.12 + 2048*I0" (the constant in hex,
 * first when positive and last when negative: "rsp.0 - 0x1c"),
 * coefficients in decimal, MULV as "a*b", counters as I<loop>, and
 * extensions of the low n bits as C casts read in a uint64_t context:
 * "(u32)(x)" zero-extends, "(s32)(x)" sign-extends (u8/u16/s8/s16 alike).
 * Every operation wraps modulo 2^64. */
static void print_expr(FILE *f, const ssa *s, const expr *e);

static void print_hex(FILE *f, uint64_t k)
{
	fprintf(f, "0x%" PRIx64, k);
}

static void print_factor(FILE *f, const ssa *s, const expr *e)
{
	bool paren = e->kind == E_ADD;
	if (paren)
		fputc('(', f);
	print_expr(f, s, e);
	if (paren)
		fputc(')', f);
}

/* A term without its sign; returns true when it was negative. */
static bool term_negative(const expr *t)
{
	if (t->kind == E_CONST || t->kind == E_MUL)
		return t->k < 0;
	return false;
}

static void print_term_abs(FILE *f, const ssa *s, const expr *t)
{
	if (t->kind == E_CONST) {
		print_hex(f, t->k < 0 ? -(uint64_t)t->k : (uint64_t)t->k);
	} else if (t->kind == E_MUL) {
		uint64_t k = t->k < 0 ? -(uint64_t)t->k : (uint64_t)t->k;
		if (k != 1)
			fprintf(f, "%" PRIu64 "*", k);
		print_factor(f, s, t->a);
	} else {
		print_expr(f, s, t);
	}
}

static void flatten(const expr *e, const expr **t, size_t *n, size_t max)
{
	if (e->kind == E_ADD) {
		flatten(e->a, t, n, max);
		flatten(e->b, t, n, max);
	} else if (*n < max) {
		t[(*n)++] = e;
	}
}

static void print_sum(FILE *f, const ssa *s, const expr *e)
{
	enum { MAXT = 256 };
	const expr *t[MAXT];
	size_t n = 0;
	flatten(e, t, &n, MAXT);
	/* a negative constant reads better at the end */
	if (n > 1 && t[0]->kind == E_CONST && t[0]->k < 0) {
		const expr *k = t[0];
		memmove(t, t + 1, (n - 1) * sizeof *t);
		t[n - 1] = k;
	}
	for (size_t i = 0; i < n; i++) {
		bool neg = term_negative(t[i]);
		if (i)
			fputs(neg ? " - " : " + ", f);
		else if (neg)
			fputc('-', f);
		print_term_abs(f, s, t[i]);
	}
}

static void print_expr(FILE *f, const ssa *s, const expr *e)
{
	char buf[32];
	switch (e->kind) {
	case E_CONST:
	case E_MUL:
		if (term_negative(e))
			fputc('-', f);
		print_term_abs(f, s, e);
		break;
	case E_LEAF:
		fputs(ssa_value_name(s, e->val, buf, sizeof buf), f);
		break;
	case E_COUNTER:
		fprintf(f, "I%u", e->val);
		break;
	case E_ADD:
		print_sum(f, s, e);
		break;
	case E_MULV:
		print_factor(f, s, e->a);
		fputc('*', f);
		print_factor(f, s, e->b);
		break;
	case E_ZEXT:
	case E_SEXT:
		fprintf(f, "(%c%u)(", e->kind == E_ZEXT ? 'u' : 's', e->bits);
		print_expr(f, s, e->a);
		fputc(')', f);
		break;
	case E_AND:
		fputc('(', f);
		print_expr(f, s, e->a);
		fputs(" & ", f);
		print_expr(f, s, e->b);
		fputc(')', f);
		break;
	case E_SHR:
	case E_SAR:
		fputc('(', f);
		print_expr(f, s, e->a);
		fprintf(f, " >>%s %" PRId64 ")", e->kind == E_SAR ? "s" : "", e->k);
		break;
	}
}

void expr_print(FILE *f, const ssa *s, const expr *e)
{
	if (!e)
		fputs("(none)", f);
	else
		print_expr(f, s, e);
}

/* ---------------------------------------------------------- evaluation */

uint64_t expr_eval(const expr *e, uint64_t (*leaf)(uint32_t val, void *arg),
		   uint64_t (*counter)(uint32_t loop, void *arg), void *arg)
{
	uint64_t x, m;
	switch (e->kind) {
	case E_CONST:
		return (uint64_t)e->k;
	case E_LEAF:
		return leaf(e->val, arg);
	case E_COUNTER:
		return counter(e->val, arg);
	case E_ADD:
		return expr_eval(e->a, leaf, counter, arg) + expr_eval(e->b, leaf, counter, arg);
	case E_MUL:
		return expr_eval(e->a, leaf, counter, arg) * (uint64_t)e->k;
	case E_MULV:
		return expr_eval(e->a, leaf, counter, arg) * expr_eval(e->b, leaf, counter, arg);
	case E_ZEXT:
	case E_SEXT:
		x = expr_eval(e->a, leaf, counter, arg);
		if (e->bits >= 64)
			return x;
		m = ((uint64_t)1 << e->bits) - 1;
		x &= m;
		if (e->kind == E_SEXT && (x >> (e->bits - 1) & 1))
			x |= ~m;
		return x;
	case E_AND:
		return expr_eval(e->a, leaf, counter, arg) & expr_eval(e->b, leaf, counter, arg);
	case E_SHR:
		return expr_eval(e->a, leaf, counter, arg) >> e->k;
	case E_SAR:
		x = (uint64_t)((int64_t)expr_eval(e->a, leaf, counter, arg) >> e->k);
		return e->bits == 32 ? x & 0xffffffffu : x;
	}
	return 0;
}
