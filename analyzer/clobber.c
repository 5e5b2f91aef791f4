/* clobber.c — which caller-saved registers a direct call may change.
 *
 * Under the SysV ABI a call may change rax, rcx, rdx, rsi, rdi, r8-r11.
 * gcc's interprocedural register allocation (-fipa-ra, on at -O2) lets a
 * caller keep values in those registers across a call to a function of its
 * own unit that does not write them: a switch's table base in rcx across
 * the calls of an option loop, a pointer in r8.  Treating them as new
 * unknowns after every call makes the analysis record them again after
 * each call.  Here each routine gets the set of registers it may write,
 * itself and through everything it calls or tail-calls, as a fixed point
 * over the call graph (the sets only grow); a direct call to an analyzed
 * routine then clobbers only those of the ABI set.  Anything not followed
 * statically (indirect calls and jumps, calls out of the program, an
 * unresolved indirect jump) may change the whole ABI set.  Callee-saved
 * registers stay preserved, as everywhere in the analysis. */
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <stdlib.h>

static bool has_insn(const routine *r, uint64_t addr)
{
	uint32_t lo = 0, hi = r->ninsn;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->ninsn && r->insns[lo].addr == addr;
}

/* What control reaching `to` from routine r may write: an analyzed
 * routine's start, that routine's set; r's own code, r's set (a jump
 * there adds nothing); else anything. */
static uint32_t writes_at(const program *p, const uint32_t *w, const routine *r, uint64_t to)
{
	const routine *c = to ? program_routine_at(p, to) : NULL;
	if (c)
		return w[c - p->routines];
	return has_insn(r, to) ? w[r - p->routines] : ABI_CALL_CLOBBERS;
}

static uint32_t routine_writes(const program *p, const uint32_t *w, const routine *r)
{
	uint32_t m = r->partial ? ABI_CALL_CLOBBERS : 0;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		const insn *in = &r->insns[i];
		m |= in->writes & 0xffffu;
		switch (in->flow) {
		case FLOW_CALL:
			m |= writes_at(p, w, r, in->target) & ABI_CALL_CLOBBERS;
			break;
		case FLOW_JUMP:
		case FLOW_CJUMP:
			m |= writes_at(p, w, r, in->target);
			break;
		case FLOW_ICALL:
		case FLOW_IJUMP:
			/* a resolved table stays in the routine; anything else
			 * may be a tail call anywhere */
			if (in->flow == FLOW_ICALL ||
			    !(r->blocks[cfg_block_of(r, in->addr)].flags & BLK_JUMPTABLE))
				m |= ABI_CALL_CLOBBERS;
			break;
		default:
			break;
		}
	}
	return m;
}

void clobber_compute(program *p)
{
	uint32_t n = p->nroutines;
	uint32_t *w = xcalloc(n ? n : 1, sizeof *w);
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t m = w[k] | routine_writes(p, w, &p->routines[k]);
			changed |= m != w[k];
			w[k] = m;
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		routine *r = &p->routines[k];
		for (uint32_t i = 0; i < r->ninsn; i++) {
			insn *in = &r->insns[i];
			if (in->flow == FLOW_CALL)
				in->clobbers = writes_at(p, w, r, in->target) & ABI_CALL_CLOBBERS;
		}
	}
	free(w);
}
