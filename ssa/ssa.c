/* ssa.c — SSA over the 16 GPRs, the flags and memory (one variable M).
 *
 * Cytron, Ferrante, Rosen, Wegman, Zadeck, "Efficiently computing static
 * single assignment form and the control dependence graph" (TOPLAS 1991):
 * φs at the iterated dominance frontier of each variable's definitions,
 * then values renamed along the dominator tree.  Dominance frontiers use the
 * two-finger "runner" walk of Cooper, Harvey and Kennedy ("A Simple, Fast
 * Dominance Algorithm", 2001) over the idoms dom.c computed.
 *
 * The routine's entry is modelled as a virtual block E above block 0 that
 * defines every variable (the V_ENTRY values 0..SSA_NVARS-1).  E dominates
 * everything and has an empty frontier, so entry values never cause φs by
 * themselves; only a jump back to block 0 does, and then the φ at block 0
 * has one argument per real predecessor plus the implicit entry edge (see
 * ssa.h). */
#include "ssa/ssa.h"
#include "analyzer/util.h"

#include <string.h>

#define VBIT(v) (1u << (v))

static bool is_call(const insn *in)
{
	return in->flow == FLOW_CALL || in->flow == FLOW_ICALL;
}

/* The variables instruction `in` gives a new value, as a VBIT mask. */
static uint32_t insn_defs(const insn *in)
{
	if (is_call(in))	/* what the callee may change (clobber.c) */
		return in->clobbers | VBIT(VAR_FLAGS) | VBIT(VAR_MEM);
	uint32_t m = in->writes & 0xffffu;
	if (in->writes & REG_BIT(R_FLAGS))
		m |= VBIT(VAR_FLAGS);
	for (unsigned k = 0; k < in->nmem; k++)
		if (in->mem[k].kind & ACC_W)
			m |= VBIT(VAR_MEM);
	/* the kernel may write any user memory a system call is given */
	if (in->flow == FLOW_SYSCALL)
		m |= VBIT(VAR_MEM);
	return m;
}

static bool reachable(const routine *r, uint32_t b)
{
	return b == 0 || r->blocks[b].idom >= 0;
}

static uint32_t new_value(ssa *s, size_t *cap, ssa_value v)
{
	if (s->nvals == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		s->vals = xrealloc(s->vals, *cap * sizeof *s->vals);
	}
	s->vals[s->nvals] = v;
	return s->nvals++;
}

/* ------------------------------------------------- dominance frontiers */

/* A dominance frontier: a list of blocks, sized by the frontier rather
 * than by the routine, so large routines stay cheap. */
typedef VEC(uint32_t) blocklist;

/* df[b]: dominance frontier of b (Cooper et al., figure 5): for every join,
 * each predecessor runs up the dominator tree until the join's idom,
 * adding the join to the frontier of every block it passes.  Joins are
 * handled one at a time, so a duplicate is always the last entry.  idom(0)
 * is the virtual entry, written -1. */
static blocklist *dom_frontiers(const routine *r)
{
	uint32_t n = r->nblocks;
	blocklist *df = xcalloc(n, sizeof *df);
	for (uint32_t b = 0; b < n; b++) {
		const block *bb = &r->blocks[b];
		if (!reachable(r, b))
			continue;
		uint32_t npred = bb->npred + (b == 0); /* + the entry edge */
		if (npred < 2)
			continue;
		for (uint32_t k = 0; k < bb->npred; k++) {
			int32_t run = (int32_t)bb->pred[k];
			if (!reachable(r, (uint32_t)run))
				continue;
			while (run != bb->idom && run >= 0) {
				blocklist *l = &df[run];
				if (!l->n || l->a[l->n - 1] != b)
					vec_push(*l, b);
				run = r->blocks[run].idom;
			}
		}
	}
	return df;
}

/* ------------------------------------------------------- φ placement */

/* phi[b * SSA_NVARS + v] = true when v needs a φ at b: the iterated
 * frontier of the blocks defining v (Cytron et al., figure 11). */
static bool *place_phis(const routine *r, const blocklist *df)
{
	uint32_t n = r->nblocks;
	uint32_t *defs = xcalloc(n ? n : 1, sizeof *defs);
	bool *phi = xcalloc((size_t)n * SSA_NVARS, 1);
	uint32_t *work = xmalloc((n ? n : 1) * sizeof *work);
	uint8_t *queued = xmalloc(n ? n : 1);
	for (uint32_t b = 0; b < n; b++) {
		if (!reachable(r, b))
			continue;
		const block *bb = &r->blocks[b];
		for (uint32_t i = bb->first; i < bb->first + bb->ninsn; i++)
			defs[b] |= insn_defs(&r->insns[i]);
	}
	for (unsigned v = 0; v < SSA_NVARS; v++) {
		uint32_t nw = 0;
		memset(queued, 0, n);
		for (uint32_t b = 0; b < n; b++)
			if (defs[b] & VBIT(v)) {
				work[nw++] = b;
				queued[b] = 1;
			}
		while (nw) {
			uint32_t x = work[--nw];
			for (size_t k = 0; k < df[x].n; k++) {
				uint32_t y = df[x].a[k];
				if (phi[y * SSA_NVARS + v])
					continue;
				phi[y * SSA_NVARS + v] = true;
				if (!queued[y]) {
					queued[y] = 1;
					work[nw++] = y;
				}
			}
		}
	}
	free(defs);
	free(work);
	free(queued);
	return phi;
}

/* ---------------------------------------------------------- renaming */

/* Blocks in dominator-tree preorder (reachable ones only): a block's idom
 * is always listed, hence renamed, before it. */
static uint32_t dom_preorder(const routine *r, uint32_t *order)
{
	uint32_t n = r->nblocks, cnt = 0, sp = 0;
	uint32_t *nchild = xcalloc(n + 1, sizeof *nchild);
	uint32_t *child = xmalloc((n ? n : 1) * sizeof *child);
	uint32_t *stack = xmalloc((n ? n : 1) * sizeof *stack);
	/* children of b in child[nchild[b] .. nchild[b+1]) (counting sort) */
	for (uint32_t b = 1; b < n; b++)
		if (r->blocks[b].idom >= 0)
			nchild[r->blocks[b].idom + 1]++;
	for (uint32_t b = 0; b < n; b++)
		nchild[b + 1] += nchild[b];
	uint32_t *fill = xmalloc((n ? n : 1) * sizeof *fill);
	memcpy(fill, nchild, n * sizeof *fill);
	for (uint32_t b = 1; b < n; b++)
		if (r->blocks[b].idom >= 0)
			child[fill[r->blocks[b].idom]++] = b;
	free(fill);
	if (n)
		stack[sp++] = 0;
	while (sp) {
		uint32_t b = stack[--sp];
		order[cnt++] = b;
		for (uint32_t k = nchild[b + 1]; k-- > nchild[b];)
			stack[sp++] = child[k];
	}
	free(nchild);
	free(child);
	free(stack);
	return cnt;
}

/* Gives instruction i's definitions new values in cur[]. */
static void define(ssa *s, size_t *cap, uint32_t b, uint32_t i, uint32_t cur[SSA_NVARS])
{
	const insn *in = &s->r->insns[i];
	uint32_t m = insn_defs(in);
	uint8_t kind = is_call(in) ? V_CLOBBER : V_DEF;
	for (unsigned v = 0; v < SSA_NVARS; v++)
		if (m & VBIT(v))
			cur[v] = new_value(s, cap, (ssa_value){ .kind = kind, .var = (uint8_t)v,
								.block = b, .insn = i });
}

static void rename_block(ssa *s, size_t *cap, const bool *phi, uint32_t b)
{
	const routine *r = s->r;
	const block *bb = &r->blocks[b];
	uint32_t cur[SSA_NVARS];
	for (unsigned v = 0; v < SSA_NVARS; v++) {
		if (phi[b * SSA_NVARS + v])
			cur[v] = new_value(s, cap, (ssa_value){ .kind = V_PHI, .var = (uint8_t)v,
								.block = b, .insn = SSA_NONE });
		else
			cur[v] = b == 0 ? v : s->at_end[bb->idom][v];
	}
	memcpy(s->at_start[b], cur, sizeof cur);
	for (uint32_t i = bb->first; i < bb->first + bb->ninsn; i++) {
		memcpy(s->before[i], cur, sizeof cur);
		define(s, cap, b, i, cur);
	}
	memcpy(s->at_end[b], cur, sizeof cur);
}

/* Unreachable code: one V_UNDEF per variable, shared by all such blocks. */
static void undef_block(ssa *s, size_t *cap, uint32_t undef[SSA_NVARS], uint32_t b)
{
	const block *bb = &s->r->blocks[b];
	if (undef[0] == SSA_NONE)
		for (unsigned v = 0; v < SSA_NVARS; v++)
			undef[v] = new_value(s, cap, (ssa_value){ .kind = V_UNDEF, .var = (uint8_t)v,
								  .block = b, .insn = SSA_NONE });
	memcpy(s->at_start[b], undef, SSA_NVARS * sizeof *undef);
	memcpy(s->at_end[b], undef, SSA_NVARS * sizeof *undef);
	for (uint32_t i = bb->first; i < bb->first + bb->ninsn; i++)
		memcpy(s->before[i], undef, SSA_NVARS * sizeof *undef);
}

/* φ arguments come from each predecessor's end, in block.pred order. */
static void fill_phis(ssa *s)
{
	for (uint32_t x = 0; x < s->nvals; x++) {
		ssa_value *p = &s->vals[x];
		if (p->kind != V_PHI)
			continue;
		const block *bb = &s->r->blocks[p->block];
		p->nargs = bb->npred;
		p->args = xmalloc((bb->npred ? bb->npred : 1) * sizeof *p->args);
		for (uint32_t k = 0; k < bb->npred; k++)
			p->args[k] = s->at_end[bb->pred[k]][p->var];
	}
}

void ssa_build(ssa *s, const routine *r)
{
	uint32_t n = r->nblocks;
	size_t cap = 0;
	memset(s, 0, sizeof *s);
	s->r = r;
	for (unsigned v = 0; v < SSA_NVARS; v++)
		new_value(s, &cap, (ssa_value){ .kind = V_ENTRY, .var = (uint8_t)v,
						.block = 0, .insn = SSA_NONE });
	s->before = xcalloc(r->ninsn ? r->ninsn : 1, sizeof *s->before);
	s->at_start = xcalloc(n ? n : 1, sizeof *s->at_start);
	s->at_end = xcalloc(n ? n : 1, sizeof *s->at_end);
	s->block_of = xcalloc(r->ninsn ? r->ninsn : 1, sizeof *s->block_of);
	for (uint32_t b = 0; b < n; b++)
		for (uint32_t i = r->blocks[b].first; i < r->blocks[b].first + r->blocks[b].ninsn; i++)
			s->block_of[i] = b;
	if (!n)
		return;

	blocklist *df = dom_frontiers(r);
	bool *phi = place_phis(r, df);
	for (uint32_t b = 0; b < n; b++)
		free(df[b].a);
	free(df);

	uint32_t *order = xmalloc(n * sizeof *order);
	uint32_t cnt = dom_preorder(r, order);
	for (uint32_t k = 0; k < cnt; k++)
		rename_block(s, &cap, phi, order[k]);
	free(order);
	free(phi);

	uint32_t undef[SSA_NVARS] = { SSA_NONE };
	for (uint32_t b = 0; b < n; b++)
		if (!reachable(r, b))
			undef_block(s, &cap, undef, b);
	fill_phis(s);
}

void ssa_free(ssa *s)
{
	for (uint32_t x = 0; x < s->nvals; x++)
		free(s->vals[x].args);
	free(s->vals);
	free(s->before);
	free(s->at_start);
	free(s->at_end);
	free(s->block_of);
	memset(s, 0, sizeof *s);
}

uint32_t ssa_after(const ssa *s, uint32_t i, unsigned v)
{
	uint32_t b = s->block_of[i];
	const block *bb = &s->r->blocks[b];
	if (i + 1 < bb->first + bb->ninsn)
		return s->before[i + 1][v];
	return s->at_end[b][v];
}

const char *ssa_var_name(unsigned v)
{
	if (v == VAR_FLAGS)
		return "flags";
	if (v == VAR_MEM)
		return "M";
	return v < 16 ? reg_name(v) : "?";
}

const char *ssa_value_name(const ssa *s, uint32_t v, char *buf, size_t len)
{
	if (v == SSA_BIAS)
		snprintf(buf, len, "bias");
	else if (v == SSA_FSBASE)
		snprintf(buf, len, "fs");
	else if (v >= s->nvals)
		snprintf(buf, len, "?.%u", v);
	else
		snprintf(buf, len, "%s.%u", ssa_var_name(s->vals[v].var), v);
	return buf;
}
