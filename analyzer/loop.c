/* loop.c — the loop nesting forest of a routine.
 *
 * Steensgaard's construction ("Sequentially constructing the loop nesting
 * forest", 1993; compared with Havlak's in Ramalingam, "On loops, dominators
 * and dominance frontiers", TOPLAS 2002): every strongly connected region of
 * the CFG with a cycle is a loop; its entries are the blocks entered from
 * outside; edges back to the entries are cut and the region is decomposed
 * again for inner loops.  A loop with one entry is a natural loop headed by
 * it; more than one entry means an irreducible region, reported as such
 * (its header is the entry first reached in reverse postorder). */
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct lctx {
	routine *r;
	uint8_t *cut;       /* edges into these blocks are cut */
	uint32_t *in_set;   /* == stamp when the block belongs to the region */
	uint32_t stamp;
	/* Tarjan state */
	int32_t *index, *low;
	uint8_t *on_stack;
	uint32_t *stack, sp;
	int32_t counter;
	uint32_t *rpo;      /* block -> reverse postorder rank (for headers) */
	VEC(loop) loops;
} lctx;

static void find_sccs(lctx *c, const uint32_t *set, uint32_t n, int32_t parent,
		      uint32_t depth);

static bool edge_ok(lctx *c, uint32_t to, uint32_t stamp)
{
	return c->in_set[to] == stamp && !c->cut[to];
}

static bool has_self_edge(lctx *c, uint32_t b)
{
	for (uint32_t i = 0; i < c->r->blocks[b].nsucc; i++)
		if (c->r->blocks[b].succ[i] == b && !c->cut[b])
			return true;
	return false;
}

static void u32_push(uint32_t **a, uint32_t *n, uint32_t v)
{
	*a = xrealloc(*a, (*n + 1) * sizeof **a);
	(*a)[(*n)++] = v;
}

/* Makes a loop of the region scc[0..n) and decomposes it further. */
static void make_loop(lctx *c, uint32_t *scc, uint32_t n, int32_t parent,
		      uint32_t depth)
{
	routine *r = c->r;
	uint32_t stamp = ++c->stamp;
	for (uint32_t i = 0; i < n; i++)
		c->in_set[scc[i]] = stamp;

	loop l = { .parent = parent, .depth = depth };
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = scc[i];
		bool entry = b == 0;
		for (uint32_t k = 0; k < r->blocks[b].npred && !entry; k++)
			entry = c->in_set[r->blocks[b].pred[k]] != stamp;
		if (entry)
			u32_push(&l.entries, &l.nentries, b);
	}
	/* header: the entry first in reverse postorder */
	uint32_t best = 0;
	for (uint32_t i = 1; i < l.nentries; i++)
		if (c->rpo[l.entries[i]] < c->rpo[l.entries[best]])
			best = i;
	uint32_t h = l.entries[best];
	l.entries[best] = l.entries[0];
	l.entries[0] = h;
	l.header = h;
	l.irreducible = l.nentries > 1;
	l.blocks = xmalloc(n * sizeof *l.blocks);
	memcpy(l.blocks, scc, n * sizeof *scc);
	l.nblocks = n;
	for (uint32_t i = 0; i < n; i++) {
		const block *b = &r->blocks[scc[i]];
		for (uint32_t k = 0; k < b->nsucc; k++)
			if (c->in_set[b->succ[k]] != stamp) {
				uint32_t m = l.nexits;
				u32_push(&l.exit_from, &m, scc[i]);
				u32_push(&l.exit_to, &l.nexits, b->succ[k]);
			}
	}
	int32_t me = (int32_t)c->loops.n;
	vec_push(c->loops, l);
	for (uint32_t i = 0; i < l.nentries; i++)
		c->cut[l.entries[i]] = 1;
	find_sccs(c, scc, n, me, depth + 1);
}

typedef VEC(uint32_t) u32vec;

static void strongconnect(lctx *c, uint32_t v0, uint32_t stamp, u32vec *out_regions,
			  u32vec *out_sizes)
{
	/* iterative Tarjan: frames of (block, next successor) */
	routine *r = c->r;
	u32vec fb = {0}, fi = {0};
	vec_push(fb, v0);
	vec_push(fi, 0u);
	c->index[v0] = c->low[v0] = c->counter++;
	c->stack[c->sp++] = v0;
	c->on_stack[v0] = 1;
	while (fb.n) {
		uint32_t v = fb.a[fb.n - 1];
		uint32_t *i = &fi.a[fi.n - 1];
		if (*i < r->blocks[v].nsucc) {
			uint32_t w = r->blocks[v].succ[(*i)++];
			if (!edge_ok(c, w, stamp))
				continue;
			if (c->index[w] < 0) {
				c->index[w] = c->low[w] = c->counter++;
				c->stack[c->sp++] = w;
				c->on_stack[w] = 1;
				vec_push(fb, w);
				vec_push(fi, 0u);
			} else if (c->on_stack[w] && c->index[w] < c->low[v]) {
				c->low[v] = c->index[w];
			}
			continue;
		}
		fb.n--;
		fi.n--;
		if (fb.n) {
			uint32_t u = fb.a[fb.n - 1];
			if (c->low[v] < c->low[u])
				c->low[u] = c->low[v];
		}
		if (c->low[v] == c->index[v]) {
			uint32_t size = 0, w;
			do {
				w = c->stack[--c->sp];
				c->on_stack[w] = 0;
				vec_push(*out_regions, w);
				size++;
			} while (w != v);
			vec_push(*out_sizes, size);
		}
	}
	free(fb.a);
	free(fi.a);
}

static void find_sccs(lctx *c, const uint32_t *set, uint32_t n, int32_t parent,
		      uint32_t depth)
{
	uint32_t stamp = ++c->stamp;
	for (uint32_t i = 0; i < n; i++) {
		c->in_set[set[i]] = stamp;
		c->index[set[i]] = -1;
	}
	u32vec regions = {0}, sizes = {0};
	for (uint32_t i = 0; i < n; i++)
		if (c->index[set[i]] < 0 && !c->cut[set[i]])
			strongconnect(c, set[i], stamp, &regions, &sizes);
	/* cut entries are single-block regions of their own at this level */
	size_t off = 0;
	for (size_t k = 0; k < sizes.n; k++) {
		uint32_t *scc = regions.a + off;
		uint32_t m = sizes.a[k];
		off += m;
		if (m > 1 || has_self_edge(c, scc[0]))
			make_loop(c, scc, m, parent, depth);
	}
	free(regions.a);
	free(sizes.a);
}

/* rank in reverse postorder; UINT32_MAX when unreachable */
static void rpo_ranks(routine *r, uint32_t *rpo)
{
	int32_t *po = xmalloc(r->nblocks * sizeof *po);
	uint32_t *order = xmalloc(r->nblocks * sizeof *order);
	uint32_t cnt = cfg_postorder(r, po, order);
	for (uint32_t i = 0; i < r->nblocks; i++)
		rpo[i] = po[i] < 0 ? UINT32_MAX : cnt - 1 - (uint32_t)po[i];
	free(po);
	free(order);
}

void loop_find(routine *r)
{
	uint32_t n = r->nblocks;
	if (!n)
		return;
	lctx c = { .r = r };
	c.cut = xcalloc(n, 1);
	c.in_set = xcalloc(n, sizeof *c.in_set);
	c.index = xmalloc(n * sizeof *c.index);
	c.low = xmalloc(n * sizeof *c.low);
	c.on_stack = xcalloc(n, 1);
	c.stack = xmalloc(n * sizeof *c.stack);
	c.rpo = xmalloc(n * sizeof *c.rpo);
	rpo_ranks(r, c.rpo);

	/* only blocks reachable from the entry take part */
	uint32_t *all = xmalloc(n * sizeof *all), m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (c.rpo[i] != UINT32_MAX)
			all[m++] = i;
	find_sccs(&c, all, m, -1, 1);

	r->loops = c.loops.a;
	r->nloops = (uint32_t)c.loops.n;
	for (uint32_t i = 0; i < r->nloops; i++) {
		for (uint32_t k = 0; k < r->loops[i].nblocks; k++)
			r->blocks[r->loops[i].blocks[k]].loop = (int32_t)i;
		if (r->loops[i].irreducible)
			r->irreducible = true;
	}
	free(all);
	free(c.cut);
	free(c.in_set);
	free(c.index);
	free(c.low);
	free(c.on_stack);
	free(c.stack);
	free(c.rpo);
}
