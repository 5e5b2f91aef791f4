/* skelgen.h — emits the C skeleton of a program and the patch it needs.
 *
 * The skeleton has one function per routine with the routine's shape
 * (labels named after block addresses, gotos), loop counters, OUT() per
 * access and IN() per recorded value; see replay/skel_rt.h for what those
 * mean at replay time.  The patch (replay/format.h) lists the probes whose
 * values the skeleton reads, in the order it reads them; it is embedded in
 * the skeleton together with the binary's identity. */
#ifndef SKEL_SKELGEN_H
#define SKEL_SKELGEN_H

#include "ivres/ivres.h"
#include "replay/format.h"

/* The skeleton is one file, cut into parts by SKEL-UNIT lines: the marker
 * below followed by the part's class, "hot" or "cold", and the comment's
 * end.  The text before the first (includes, prototypes) is what every
 * part needs; skel's compile step (driver/run.c) makes units of the parts,
 * hot ones at -O2, cold ones at -O0.  Hot: routines of at most
 * SKEL_HOT_BLOCKS blocks, or with loops and at most SKEL_HOT_LOOP_BLOCKS
 * blocks, and the tables at the end. */
#define SKEL_UNIT_MARK "/* SKEL-UNIT "
#define SKEL_HOT_BLOCKS 16
#define SKEL_HOT_LOOP_BLOCKS 64

typedef struct skel_opts {
	bool all_accesses;      /* full-tracing baseline: every access direct */
	bool no_slice;          /* replay loops without accesses too */
	const char *app;        /* the binary's path, for the header comment */
	/* approximate mode (issue 15, selective BID instrumentation): per
	 * block, ceil(omega·m) of the m classes of accesses whose addresses
	 * cost recorded values keep their probes; chunk is the paper's C */
	bool approx;
	double omega;
	uint64_t chunk;
} skel_opts;

typedef struct skel_stats {
	uint32_t routines;
	uint64_t mem_insns, probes, direct;
	uint32_t shared_insns;  /* instructions in more than one routine */
	uint32_t inexact;       /* accesses whose address form is not exact
				   (gather/scatter, bt mem,reg, xlat) */
	uint64_t first_inexact; /* pc of the first of them */
	uint32_t sliced_loops;  /* loops without accesses, not replayed */
	uint32_t elided_branches; /* jumps whose ways meet silently, not replayed */
	uint32_t exit_loops;    /* loops whose exit is recorded, not their
	                           outcomes (skelgen.c, plan_exits) */
	uint32_t carried;       /* φs the skeleton computes on its edges
	                           instead of recording (plan_carried) */
	uint32_t phi_edges;     /* probes on the edges whose φ argument the
	                           skeleton does not know (plan_phi_edges) */
	uint32_t rotated;       /* loops whose back edges' values are recorded
	                           instead of their φ and its branches */
	uint32_t tables;        /* jump tables whose destination the skeleton
	                           reads from the table (emit_table_target) */
	uint32_t tbytes;        /* conditional jumps whose outcome is recorded
	                           with the byte before them (plan_tbytes) */
	uint32_t stack_switches; /* indirect jumps after a load of rsp from
	                           memory: not followed (sk_stack_switch) */
	/* approximate mode: the expressions bid_select saw (the paper's
	 * Σ n_b), Σ MA_b and AIA_b numerators, and the final roles */
	uint64_t bid_exprs, bid_kept, bid_aia;
	uint64_t bid_attributed, bid_absent;
} skel_stats;

/* Writes the skeleton of p to out and fills `pt` with its patch. */
int skel_generate(FILE *out, const program *p, const skel_opts *o, patch *pt,
		  skel_stats *st, char err[ERR_LEN]);

/* Extracts the embedded patch text from a skeleton file's contents
 * (between the SKEL-PATCH-BEGIN/END markers).  Returns a malloc'd string,
 * or NULL when the file is not a skeleton. */
char *skel_extract_patch(const char *skeleton_text);

#endif
