/* bid.c — selective BID instrumentation: which of a block's address
 * expressions keep their probes under the cost factor ω at chunk size C.
 *
 * Economo et al., "Configurable and Efficient Memory Access Tracing via
 * Selective Expression-based x86 Binary Instrumentation" (seeds/), §III.
 * This file is the paper's algorithm on abstract expressions; what an
 * expression and a probe are in skel is skelgen's business (skelgen.c,
 * bid_plan). */
#include "ivres/ivres.h"
#include "analyzer/util.h"

bool bid_equal(const bid_expr *x, const bid_expr *y)
{
	return x->tmpl == y->tmpl && x->r1 == y->r1 && x->r2 == y->r2 && x->imm == y->imm;
}

/* |a - b| ≥ c for two immediates, addresses modulo 2^64 (the nearer way
 * round: 0 and -8 are 8 apart) */
static bool far_apart(int64_t a, int64_t b, uint64_t c)
{
	uint64_t d = (uint64_t)a - (uint64_t)b;
	if (d > UINT64_MAX / 2)
		d = -d;
	return d >= c;
}

/* §III-C, Figure 1.  δ_RRI scores <b, i, d> with <s2, s1, s3> and looks at
 * the displacements only when both registers are the same; δ_IRR scores
 * them with <s3, s2, s1> and looks at the registers only when the
 * immediate bases are within c.  The slides' decision trees give the
 * leaves 0, s1, s2, s1 + s2, s3. */
int bid_distance(const bid_expr *x, const bid_expr *y, uint64_t c)
{
	if (x->tmpl != y->tmpl)
		return -1;
	if (x->tmpl == BID_RRI) {
		if (x->r1 == y->r1 && x->r2 == y->r2)
			return far_apart(x->imm, y->imm, c) ? BID_S3 : 0;
		return (x->r1 != y->r1 ? BID_S2 : 0) + (x->r2 != y->r2 ? BID_S1 : 0);
	}
	if (far_apart(x->imm, y->imm, c))
		return BID_S3;
	return (x->r1 != y->r1 ? BID_S2 : 0) + (x->r2 != y->r2 ? BID_S1 : 0);
}

uint32_t bid_knapsack_size(double omega, uint32_t m)
{
	double x = omega * m - 1e-9;
	uint32_t w = x > 0 ? (uint32_t)x : 0;
	return w < x ? w + 1 : w;
}

/* One candidate of C_b: the first member of an equivalence class. */
typedef struct cand {
	uint32_t e;             /* its expression */
	uint32_t card;          /* |[e]| */
	uint64_t dsum;          /* Σ distances to the same-template candidates */
	uint32_t dn;            /* how many there are: δ̄ = dsum / dn */
	bool in_k, frozen;
	uint32_t aia;           /* |[ê]| */
} cand;

/* Equation (2), highest value first; equal values in program order. */
static int value_cmp(const cand *x, const cand *y)
{
	if (x->card != y->card)
		return x->card > y->card ? -1 : 1;
	/* δ̄x vs δ̄y without division: dsum_x·dn_y vs dsum_y·dn_x (a mean of
	 * no distances is 0) */
	uint64_t l = x->dsum * (y->dn ? y->dn : 1), r = y->dsum * (x->dn ? x->dn : 1);
	if (l != r)
		return l > r ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

static int value_qsort(const void *x, const void *y)
{
	return value_cmp(x, y);
}

/* The classes of equation (1): cls[i] is the first expression equal to
 * e[i]; one candidate per class, in program order. */
static cand *make_candidates(const bid_expr *e, uint32_t n, uint32_t *cls, uint32_t *m)
{
	cand *c = xcalloc(n ? n : 1, sizeof *c);
	uint32_t *of = xmalloc((n ? n : 1) * sizeof *of);	/* expression -> candidate */
	*m = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = 0;
		while (j < i && !bid_equal(&e[j], &e[i]))
			j++;
		cls[i] = j;
		if (j == i) {
			of[i] = *m;
			c[(*m)++] = (cand){ .e = i };
		}
		c[of[j]].card++;
	}
	free(of);
	return c;
}

static void mean_distances(cand *c, uint32_t m, const bid_expr *e, uint64_t chunk)
{
	for (uint32_t x = 0; x < m; x++)
		for (uint32_t y = 0; y < m; y++) {
			int d = x == y ? -1 : bid_distance(&e[c[x].e], &e[c[y].e], chunk);
			if (d >= 0) {
				c[x].dsum += (uint64_t)d;
				c[x].dn++;
			}
		}
}

static bool zero_distance(const cand *x, const cand *y, const bid_expr *e, uint64_t chunk)
{
	return bid_distance(&e[x->e], &e[y->e], chunk) == 0;
}

/* §III-D, steps A–C as the slides run them: in value order, place the
 * next candidate that is neither in the knapsack nor frozen and freeze
 * the others at distance 0 from it (step A's one element per zero-distance
 * set, step B's greedy optimum for equal weights); when the candidates
 * run out with room left, unfreeze and go round again (step C: the
 * discarded zero-distance expressions are recovered).  c is sorted by
 * value; the knapsack's members come out in the order they went in. */
static uint32_t fill_knapsack(cand *c, uint32_t m, uint32_t w, const bid_expr *e, uint64_t chunk)
{
	uint32_t nk = 0;
	while (nk < w) {
		bool placed = false;
		for (uint32_t x = 0; x < m; x++)
			c[x].frozen = false;
		for (uint32_t x = 0; x < m && nk < w; x++) {
			if (c[x].in_k || c[x].frozen)
				continue;
			c[x].in_k = true;
			c[x].aia = c[x].card;
			nk++;
			placed = true;
			for (uint32_t y = 0; y < m; y++)
				if (!c[y].in_k && zero_distance(&c[x], &c[y], e, chunk))
					c[y].frozen = true;
		}
		if (!placed)
			break;
	}
	return nk;
}

void bid_select(const bid_expr *e, uint32_t n, double omega, uint64_t chunk, bid_choice *ch)
{
	*ch = (bid_choice){ 0 };
	ch->role = xmalloc(n ? n : 1);
	ch->fulcrum = xmalloc((n ? n : 1) * sizeof *ch->fulcrum);
	ch->cls = xmalloc((n ? n : 1) * sizeof *ch->cls);
	cand *c = make_candidates(e, n, ch->cls, &ch->m);
	mean_distances(c, ch->m, e, chunk);
	qsort(c, ch->m, sizeof *c, value_qsort);
	ch->w = bid_knapsack_size(omega, ch->m);
	fill_knapsack(c, ch->m, ch->w, e, chunk);

	/* §III-E: a discarded candidate is counted on one kept candidate at
	 * distance 0 (footnote 4: one only; here the most valuable) */
	int32_t *fulcrum_of = xmalloc((n ? n : 1) * sizeof *fulcrum_of);
	for (uint32_t y = 0; y < ch->m; y++) {
		int32_t f = c[y].in_k ? (int32_t)y : -1;
		for (uint32_t x = 0; f < 0 && x < ch->m; x++)
			if (c[x].in_k && zero_distance(&c[x], &c[y], e, chunk))
				f = (int32_t)x;
		if (f >= 0 && f != (int32_t)y)
			c[f].aia += c[y].card;
		fulcrum_of[c[y].e] = f < 0 ? -1 : (int32_t)c[f].e;
	}
	for (uint32_t x = 0; x < ch->m; x++)
		if (c[x].in_k) {
			ch->kept += c[x].card;
			ch->aia += c[x].aia;
		}
	for (uint32_t i = 0; i < n; i++) {
		int32_t f = fulcrum_of[ch->cls[i]];
		ch->fulcrum[i] = f;
		ch->role[i] = f < 0 ? BID_ABSENT : (uint32_t)f == ch->cls[i] ? BID_KEPT : BID_ATTRIBUTED;
	}
	free(fulcrum_of);
	free(c);
}

void bid_choice_free(bid_choice *c)
{
	free(c->role);
	free(c->fulcrum);
	free(c->cls);
	*c = (bid_choice){ 0 };
}
