/* ssa.h — SSA over registers and symbolic expressions by substitution.
 *
 * Variables: the 16 GPRs (enum reg), the flags (VAR_FLAGS) and memory as
 * one variable (VAR_MEM).  Every routine gets entry values for all of them
 * (rsp included), φ-nodes at joins, a new value per definition.  After a
 * call, caller-saved registers, flags and M are new unknown values
 * (V_CLOBBER) and rsp keeps its value from before the call (the callee
 * popped the return address); callee-saved registers are unchanged.
 *
 * Expressions (expr_*) are exact machine arithmetic: a tree over constants,
 * leaves (SSA values that are not expanded further) and loop counters,
 * combined with 64-bit wrap-around add/multiply and explicit zero/sign
 * extensions, so that emitting it as C over uint64_t computes what the CPU
 * computes. */
#ifndef SKEL_SSA_H
#define SKEL_SSA_H

#include "analyzer/analyzer.h"

#define VAR_FLAGS 16
#define VAR_MEM 17
#define SSA_NVARS 18
#define SSA_NONE UINT32_MAX
/* A pseudo-value: the image load bias (0 for non-PIE), known at replay
 * from the value trace header; RIP-relative constants are bias + address. */
#define SSA_BIAS (UINT32_MAX - 1)
/* Another: the thread pointer (the fs base) of the thread that runs the
 * routine, known at replay from the thread's start in the value trace:
 * fs:[disp] and fs:[base+...] accesses are fs + the usual address. */
#define SSA_FSBASE (UINT32_MAX - 2)
#define SSA_PSEUDO(v) ((v) == SSA_BIAS || (v) == SSA_FSBASE)

enum vkind {
	V_ENTRY,    /* value of the variable when the routine is entered */
	V_PHI,      /* φ at the start of `block` */
	V_DEF,      /* defined by instruction `insn` */
	V_CLOBBER,  /* unknown after the call at instruction `insn` */
	V_UNDEF,    /* in unreachable code */
};

typedef struct ssa_value {
	uint8_t kind;       /* enum vkind */
	uint8_t var;        /* 0..SSA_NVARS-1 */
	uint32_t block;     /* block of the definition (entry block for V_ENTRY) */
	uint32_t insn;      /* V_DEF/V_CLOBBER: index in routine.insns */
	uint32_t *args;     /* V_PHI: one value per predecessor, in block.pred order */
	uint32_t nargs;
} ssa_value;

/* Values 0..SSA_NVARS-1 are the V_ENTRY values, in variable order.  When
 * block 0 has predecessors (a jump back to the routine's start), a φ there
 * also merges the routine's entry edge: its value on that edge is the
 * V_ENTRY value of its variable, which is not listed in args (nargs stays
 * block.npred).  Unreachable blocks see one shared V_UNDEF per variable. */

typedef struct ssa {
	const routine *r;
	ssa_value *vals;
	uint32_t nvals;
	/* before[i][v]: the value of variable v just before instruction i */
	uint32_t (*before)[SSA_NVARS];
	/* at_end[b][v]: the value of v when block b is left */
	uint32_t (*at_end)[SSA_NVARS];
	/* at_start[b][v]: the value of v when block b is entered (a φ or not) */
	uint32_t (*at_start)[SSA_NVARS];
	/* block_of[i]: the block containing instruction i */
	uint32_t *block_of;
} ssa;

/* Builds SSA for r (dominators must be computed).  Cytron et al.,
 * "Efficiently computing static single assignment form", TOPLAS 1991:
 * φs at iterated dominance frontiers, values renamed along the dominator
 * tree. */
void ssa_build(ssa *s, const routine *r);
void ssa_free(ssa *s);
/* The value of variable v just after instruction i (i's own definition when
 * it writes v). */
uint32_t ssa_after(const ssa *s, uint32_t i, unsigned v);
const char *ssa_var_name(unsigned v);
/* "rax.12" style name of a value, into buf. */
const char *ssa_value_name(const ssa *s, uint32_t v, char *buf, size_t len);

/* ------------------------------------------------------ expressions */

enum ekind {
	E_CONST,    /* k */
	E_LEAF,     /* SSA value `val` */
	E_COUNTER,  /* normalized iteration counter of loop `loop` */
	E_ADD,      /* a + b (mod 2^64) */
	E_MUL,      /* a * k (mod 2^64), k a constant */
	E_ZEXT,     /* zero-extend the low `bits` of a */
	E_SEXT,     /* sign-extend the low `bits` of a */
	E_MULV,     /* a * b, both non-constant (loop-invariant leaf × counter) */
	/* computable, not affine: what the skeleton evaluates from values
	 * it has (masks of hashes and ring indices, aligned pointers) */
	E_AND,      /* a & b */
	E_SHR,      /* the low `bits` (32 or 64) bits of a shifted right by
	               k, zero-filled (shr) */
	E_SAR,      /* the same, sign-filled (sar) */
};

typedef struct expr expr;
struct expr {
	uint8_t kind;
	uint8_t bits;       /* E_ZEXT/E_SEXT: 8, 16 or 32; E_SHR/E_SAR: 32, 64 */
	uint32_t val;       /* E_LEAF: SSA value; E_COUNTER: loop index */
	int64_t k;          /* E_CONST, E_MUL; E_SHR/E_SAR: the count */
	expr *a, *b;
};

/* Expressions are hash-consed in a pool owned by an expr_ctx: equal trees
 * are the same pointer, so equality is pointer equality. */
typedef struct expr_ctx expr_ctx;

expr_ctx *expr_ctx_new(const ssa *s);
void expr_ctx_free(expr_ctx *c);
expr *expr_const(expr_ctx *c, int64_t k);
expr *expr_leaf(expr_ctx *c, uint32_t val);
expr *expr_counter(expr_ctx *c, uint32_t loop);
expr *expr_add(expr_ctx *c, expr *a, expr *b);   /* folds constants */
expr *expr_mul(expr_ctx *c, expr *a, int64_t k);
expr *expr_mulv(expr_ctx *c, expr *a, expr *b);
expr *expr_zext(expr_ctx *c, expr *a, unsigned bits);
expr *expr_sext(expr_ctx *c, expr *a, unsigned bits);
expr *expr_and(expr_ctx *c, expr *a, expr *b);
/* The low `bits` (32 or 64) bits of a, shifted right by k (mod bits),
 * sign-filled when arith: the 64-bit result of shr/sar r, k. */
expr *expr_shr(expr_ctx *c, expr *a, unsigned bits, unsigned k, bool arith);

/* The expression of SSA value v, by substitution through linear
 * definitions (mov, lea, add, sub, inc, dec, neg, imul by a constant,
 * shl by a constant, xor/sub of a register with itself, movzx, movsx,
 * movsxd, cdqe, 32-bit forms); stops at leaves: entry values, loads,
 * non-linear results, φs, call clobbers.  Memoized. */
expr *expr_of_value(expr_ctx *c, uint32_t v);
/* The address of data access k of instruction i (mem[k]); NULL when it
 * uses a segment base (fs:/gs:), which the caller treats as a direct probe. */
expr *expr_of_access(expr_ctx *c, uint32_t i, unsigned k);
/* Lets a later stage replace a φ by a closed form (induction variables):
 * from now on expr_of_value(phi) returns e.  Must be called before any
 * expression using the φ is built, or memoized results go stale — call
 * expr_reset_memo() after a batch of substitutions. */
void expr_set_value(expr_ctx *c, uint32_t phi, expr *e);
/* A leaf v that instruction v defines by and (register or constant), or
 * shr / sar by a constant, over its operands' expressions: what the
 * skeleton can compute from values it has instead of recording v
 * (skelgen.c, plan_carried).  NULL for any other leaf. */
expr *expr_of_def_bits(expr_ctx *c, uint32_t v);
void expr_reset_memo(expr_ctx *c);
/* Whether expr_set_value replaced v. */
bool expr_is_set(const expr_ctx *c, uint32_t v);

/* e = base + constant: returns base (NULL when e is a constant) and the
 * constant in *off.  Two accesses are in one BID class when their bases
 * are the same pointer. */
expr *expr_split_const(expr_ctx *c, expr *e, int64_t *off);
/* Calls fn on every distinct leaf value of e. */
void expr_leaves(const expr *e, void (*fn)(uint32_t val, void *arg), void *arg);
bool expr_has_counter(const expr *e);
/* Prints e in C-like syntax with leaves named by ssa_value_name and
 * counters as I<loop>. */
void expr_print(FILE *f, const ssa *s, const expr *e);
/* Evaluates e given leaf and counter values (for tests). */
uint64_t expr_eval(const expr *e, uint64_t (*leaf)(uint32_t val, void *arg),
		   uint64_t (*counter)(uint32_t loop, void *arg), void *arg);

#endif
