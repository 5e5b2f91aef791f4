/* dom.c — immediate dominators by "A Simple, Fast Dominance Algorithm"
 * (Cooper, Harvey, Kennedy, 2001): iterate over reverse postorder,
 * intersecting the dominators of processed predecessors. */
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <stdlib.h>

/* Reverse postorder from block 0, iteratively; po[b] gets b's postorder
 * number, -1 when unreachable.  Returns the number of reachable blocks. */
uint32_t cfg_postorder(const routine *r, int32_t *po, uint32_t *order)
{
	uint32_t n = r->nblocks, cnt = 0, sp = 0;
	uint32_t *stack = xmalloc(n * sizeof *stack), *next = xcalloc(n, sizeof *next);
	uint8_t *seen = xcalloc(n, 1);
	for (uint32_t i = 0; i < n; i++)
		po[i] = -1;
	stack[sp++] = 0;
	seen[0] = 1;
	while (sp) {
		uint32_t b = stack[sp - 1];
		if (next[b] < r->blocks[b].nsucc) {
			uint32_t s = r->blocks[b].succ[next[b]++];
			if (!seen[s]) {
				seen[s] = 1;
				stack[sp++] = s;
			}
			continue;
		}
		po[b] = (int32_t)cnt;
		order[cnt++] = b;
		sp--;
	}
	free(stack);
	free(next);
	free(seen);
	return cnt;
}

static uint32_t intersect(const routine *r, const int32_t *po, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = (uint32_t)r->blocks[a].idom;
		while (po[b] < po[a])
			b = (uint32_t)r->blocks[b].idom;
	}
	return a;
}

void dom_compute(routine *r)
{
	if (!r->nblocks)
		return;
	int32_t *po = xmalloc(r->nblocks * sizeof *po);
	uint32_t *order = xmalloc(r->nblocks * sizeof *order);
	uint32_t cnt = cfg_postorder(r, po, order);
	for (uint32_t i = 0; i < r->nblocks; i++)
		r->blocks[i].idom = -1;
	r->blocks[0].idom = 0;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t k = cnt - 1; k-- > 0;) { /* reverse postorder, skip entry */
			uint32_t b = order[k];
			int32_t nd = -1;
			for (uint32_t i = 0; i < r->blocks[b].npred; i++) {
				uint32_t p = r->blocks[b].pred[i];
				if (r->blocks[p].idom < 0)
					continue;
				nd = nd < 0 ? (int32_t)p : (int32_t)intersect(r, po, p, (uint32_t)nd);
			}
			if (nd != r->blocks[b].idom) {
				r->blocks[b].idom = nd;
				changed = true;
			}
		}
	}
	r->blocks[0].idom = -1;
	free(po);
	free(order);
}

bool dom_dominates(const routine *r, uint32_t a, uint32_t b)
{
	for (int32_t x = (int32_t)b; x >= 0; x = r->blocks[x].idom)
		if ((uint32_t)x == a)
			return true;
	return false;
}
