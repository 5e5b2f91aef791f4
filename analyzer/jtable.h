/* jtable.h — the analyzer's jump-table pass (jtable.c), private to the
 * analyzer stage: cfg.c builds routines with it. */
#ifndef SKEL_JTABLE_H
#define SKEL_JTABLE_H

#include "analyzer/analyzer.h"

/* What is known of each GPR at one instruction: undefined (no path seen
 * yet), one constant on every path, or varying; a varying register keeps
 * as `hint` a constant that reaches it along some path (the table base of
 * a switch whose register is reused elsewhere in the routine). */
enum { RC_UNDEF, RC_CONST, RC_VARYING };
typedef struct regconst {
	uint8_t k[16];
	uint8_t has_hint[16];
	uint64_t v[16];
	uint64_t hint[16];
} regconst;

/* The instructions of a routine under construction, in any order, with a
 * way to find an instruction by address and the targets of the jump
 * tables resolved so far. */
typedef struct jt_code {
	const insn *insns;
	size_t n;
	uint64_t start;                                 /* routine entry */
	int (*index_of)(const void *ctx, uint64_t addr); /* -1 if not decoded */
	/* targets of the resolved table at `at`: count, *t set (NULL if none) */
	size_t (*table_of)(const void *ctx, uint64_t at, const uint64_t **t);
	const void *ctx;
} jt_code;

/* Forward constant propagation over c; returns an array of c->n states
 * (the state before each instruction), to free(). */
regconst *regconst_solve(const jt_code *c);

/* A bounded table as the jump reads it: entry k is the lsize bytes at
 * base + k*stride (sign-extended when lsigned), the target that entry
 * plus `add`; `count` entries (jt_resolve's bound). */
typedef struct jt_shape {
	uint64_t base;
	int64_t stride, add;
	uint32_t count;
	uint8_t lsize;
	bool lsigned;
} jt_shape;

/* The jump table of the indirect jump window[n-1], from the path
 * window[0..n) before it (taken[i]: the path takes the conditional jump
 * window[i]; taken may be NULL: none is taken) and the registers known at
 * window[0] (may be NULL; with use_hints, a varying register's hint is
 * taken as its value).  Returns the number of targets (malloc'd into
 * *targets, in table order), 0 when no bounded table is recognised;
 * *shape (if not NULL) says how the jump reads it. */
size_t jt_resolve(const binary *b, const insn *const *window, const bool *taken,
		  size_t n, const regconst *at_start, bool use_hints, uint64_t **targets,
		  jt_shape *shape);

/* A table whose index bound the window does not show (the compare is in
 * another block): its entries from the first on, while each is a code
 * address in [lo, hi) (the function's extent), at most 1024.  Possible
 * targets only: the recorded target of every indirect jump is checked. */
size_t jt_unbounded(const binary *b, const insn *const *window, const bool *taken,
		    size_t n, const regconst *at_start, uint64_t lo, uint64_t hi,
		    uint64_t **targets);

/* Executable, outside the PLT (cfg.c). */
bool cfg_is_code(const binary *b, uint64_t a);

#endif
