/* ivres.h — induction variables, branch conditions, BID classes and probe
 * selection: everything the skeleton generator needs to know about one
 * routine.
 *
 * The result for a routine is an `analysis`: per loop its counter and
 * (when affine) trip count; per access its address expression in counters
 * and leaves, or "direct" when the address itself is recorded; per
 * conditional branch whether the skeleton computes it; and the probes —
 * the minimal set of values to record at run time. */
#ifndef SKEL_IVRES_H
#define SKEL_IVRES_H

#include "ssa/ssa.h"

/* r = φ(α, r + β) at a loop header, α and β invariant in the loop:
 * r = α + β·I (Ketterlin & Clauss, "IV resolution"). */
typedef struct iv {
	uint32_t phi;       /* SSA value of the φ */
	uint32_t loop;
	expr *init;         /* α */
	expr *step;         /* β */
	unsigned bits;      /* 64, or 32 when the update is a 32-bit add */
} iv;

typedef struct loop_info {
	/* trip count per entry (back edges taken + 1) when the exit test is
	 * affine in the counter, as text from isl; NULL when unknown */
	char *trip;
	expr *bound_lhs;    /* the exit test, when computed */
	uint32_t niv;
} loop_info;

typedef struct access_info {
	uint32_t insn;      /* index in routine.insns */
	uint8_t k;          /* index in insn.mem */
	uint8_t kind;       /* enum acc_kind */
	uint16_t size;
	bool rep;           /* string op under rep: repeats rcx times */
	expr *addr;         /* NULL: direct (the address is recorded) */
	int32_t cls;        /* BID class, -1 when direct */
	int64_t off;        /* offset from the class base */
	uint8_t affine;     /* enum iv_aff (affine.c) */
} access_info;

typedef struct bid_class {
	expr *base;         /* NULL when every member is constant */
	uint32_t nmembers;
} bid_class;

enum branch_how { BR_COMPUTED, BR_RECORDED };

typedef struct branch_info {
	uint32_t insn;      /* the conditional jump */
	uint8_t how;        /* enum branch_how */
	uint8_t cc;         /* enum cond of the jump */
	uint8_t bits;       /* operand width of the compare */
	uint8_t test;       /* 1: test a,a (compare a with 0); 0: cmp a,b */
	expr *lhs, *rhs;    /* BR_COMPUTED: compare lhs with rhs */
} branch_info;

enum probe_kind {
	PR_REG_AFTER,   /* record register `reg` after instruction `insn` */
	PR_REG_BEFORE,  /* record register `reg` before instruction `insn`
	                   (φs: at the block's first instruction; call results:
	                   at the return site) */
	PR_ADDR,        /* record the address of access `k` of `insn` (direct) */
	PR_BRANCH,      /* record 1 when the jump at `insn` is taken, else 0 */
	PR_TARGET,      /* record the destination of the indirect jump/call */
};

typedef struct probe {
	uint8_t kind;       /* enum probe_kind */
	uint8_t reg;        /* PR_REG_*: enum reg */
	uint8_t k;          /* PR_ADDR: access index */
	uint8_t rep;        /* an operand of a rep string op (count, pointers),
	                       read into temporaries, not a leaf */
	uint32_t insn;
	uint32_t val;       /* PR_REG_*: the SSA value recorded */
	uint32_t depth;     /* loop depth of the placement (0 = outside loops) */
	uint8_t edge;       /* PR_REG_*: read at the end of its block for the
	                       φ copies on that block's edges only (skelgen.c,
	                       plan_phi_edges); nothing else may use it */
} probe;

typedef struct analysis {
	const program *p;
	const routine *r;
	ssa s;
	expr_ctx *ec;
	iv *ivs;
	uint32_t nivs;
	loop_info *loops;   /* parallel to r->loops */
	access_info *acc;
	uint32_t nacc;
	bid_class *cls;
	uint32_t ncls;
	branch_info *br;
	uint32_t nbr;
	/* per block: the access that reads the entry of its jump table (a
	 * read-only one, analyzer.h block.jt_*) at an address the skeleton
	 * computes, from which it computes the jump's destination instead of
	 * recording it; -1 elsewhere (NULL: none) */
	int32_t *jt_acc;
	probe *probes;      /* sorted by instruction, before-probes first */
	uint32_t nprobes;
	/* totals */
	uint32_t nmem_insns, ndirect, ninner_probes;
	uint32_t rotated;   /* loops whose back edges' values are recorded
	                       instead of their φ and its branches
	                       (record_rotated) */
	bool modeled;       /* false: the routine is traced by direct probes */
} analysis;

/* IV_ALL_DIRECT: the full-tracing baseline — every access recorded
 * directly, every branch recorded, no expressions. */
#define IV_ALL_DIRECT 1
/* IV_NO_ROTATE: no record_rotated (the caller cannot carry a loop's φ
 * from its edges: skelgen.c, routine_plain_as) */
#define IV_NO_ROTATE 2
void iv_analyze(analysis *a, const program *p, const routine *r, unsigned flags);
void iv_free(analysis *a);
/* a->probes in their order again (by instruction, then as read), after
 * a caller added some (skelgen.c, plan_phi_edges) */
void iv_sort_probes(analysis *a);
/* Text report (skel analyze) and JSON (skel analyze --json).  The JSON
 * routine object is left open after its totals: the caller may add
 * fields (skel analyze: gen_probes) and closes it with '}'. */
void iv_print(FILE *f, const analysis *a);
void iv_print_json(FILE *f, const analysis *a, bool first);

/* ------------------------------------------- affine forms (affine.c) */

#include <isl/aff.h>

/* How an access address depends on the counters of its loop nest. */
enum iv_aff {
	IV_AFF_NONE,     /* direct, or not affine in the counters */
	IV_AFF_SYMBOLIC, /* Σ invariant·I + invariant with a symbolic
	                    coefficient (n·I): affine for the skeleton, not
	                    an isl_aff */
	IV_AFF_ISL,      /* an isl_aff: constant coefficients over counters
	                    and leaves (zero/sign extensions as mod) */
};

/* The space of affine forms in loop l's nest: counters I<k> of l and its
 * ancestors as set dimensions, outermost first (none when l < 0), the
 * leaves of es[0..n) as parameters named after ssa_value_name ("rsi_6",
 * "bias").  outer_params: only I<l> is a set dimension; the ancestors'
 * counters that occur in es become parameters. */
isl_space *iv_aff_space(const analysis *a, isl_ctx *ctx, int32_t l, bool outer_params,
			const expr *const *es, unsigned n);
/* e as an isl_aff over `space` (from iv_aff_space), exactly: the integer
 * it denotes is congruent to the machine value mod 2^64.  NULL when e is
 * not affine with constant coefficients (a product of two non-constants
 * that does not cancel) or names a counter or leaf missing from space. */
isl_aff *iv_expr_to_aff(const analysis *a, __isl_keep isl_space *space, const expr *e);
/* Fills acc[].affine and, for loops whose single exit test is affine in
 * the counter, loops[].trip.  Run by iv_analyze. */
void iv_affine(analysis *a);

/* ------------------------------ selective BID instrumentation (bid.c) */

/* Economo, Cingolani, Pellegrini, Quaglia, "Configurable and Efficient
 * Memory Access Tracing via Selective Expression-based x86 Binary
 * Instrumentation" (seeds/): the approximate mode's choice, per block, of
 * the address expressions that keep their probes.  The section numbers
 * below are the paper's. */

/* §III-A: the two BID templates.  RRI: base and index registers, an
 * immediate displacement (dynamic data); IRR: an immediate base, index
 * and displacement registers (static data, absolute addressing). */
enum bid_tmpl { BID_RRI, BID_IRR };

/* A register field: 0 is nil (the quantity is missing), else a register
 * incarnation (§III-B: the SSA value, which is a block's incarnation
 * number made global) with the scale folded in (footnote 3: the index
 * times its scale is the revised index quantity); bid_reg() builds one. */
typedef uint64_t bid_reg_t;
#define BID_NIL ((bid_reg_t)0)
static inline bid_reg_t bid_reg(uint32_t incarnation, unsigned scale)
{
	return ((bid_reg_t)incarnation + 1) << 8 | scale;
}

typedef struct bid_expr {
	uint8_t tmpl;           /* enum bid_tmpl */
	bid_reg_t r1, r2;       /* RRI: b, i; IRR: i, d */
	int64_t imm;            /* RRI: d; IRR: b */
} bid_expr;

/* §III-C, Figure 1 with the slides' scores s1 = 1, s2 = 3, s3 = 5
 * (s1 < s2 < s3, s1 + s2 < s3). */
enum { BID_S1 = 1, BID_S2 = 3, BID_S3 = 5 };

/* Equation (1). */
bool bid_equal(const bid_expr *x, const bid_expr *y);
/* δ_RRI / δ_IRR at chunk size c; -1 when the templates differ
 * (incomparable). */
int bid_distance(const bid_expr *x, const bid_expr *y, uint64_t c);

enum bid_role {
	BID_KEPT,       /* its class is in the knapsack: traced exactly */
	BID_ATTRIBUTED, /* at distance 0 from a kept fulcrum (§III-E, AIA) */
	BID_ABSENT,     /* neither */
};

/* The choice for one block's expressions e[0..n). */
typedef struct bid_choice {
	uint32_t m;             /* candidates |C_b| (equivalence classes) */
	uint32_t w;             /* knapsack size W = ceil(ω·m) */
	uint32_t kept;          /* Σ_{e∈K_b} |[e]|: MA_b's numerator */
	uint32_t aia;           /* Σ_{e∈K_b} |[ê]|: AIA_b's numerator */
	/* per expression */
	uint8_t *role;          /* enum bid_role */
	int32_t *fulcrum;       /* kept: itself; attributed: the index of its
	                           fulcrum's first member; absent: -1 */
	uint32_t *cls;          /* index of its class's first member */
} bid_choice;

/* W = ceil(ω·m), with ω·m's rounding error (0.3·10 = 3.0000000000000004)
 * not taken for a fraction. */
uint32_t bid_knapsack_size(double omega, uint32_t m);
/* §III-C/D: classes, values <|[e]|, mean distance>, the iterative
 * knapsack, then §III-E's attribution.  Ties in value go to the earlier
 * expression, so the choice is deterministic.  Fills c (bid_choice_free). */
void bid_select(const bid_expr *e, uint32_t n, double omega, uint64_t chunk, bid_choice *c);
void bid_choice_free(bid_choice *c);

#endif
