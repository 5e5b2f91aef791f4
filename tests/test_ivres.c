/* Tests of induction-variable resolution, affine forms and probe selection
 * (issue 3) on the samples, whose access patterns are known
 * (samples/README.md).  Trip counts are checked by meaning, not by text:
 * the printed isl function is read back and evaluated at sample points. */
#include "tests/testutil.h"
#include "ivres/ivres.h"

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/space.h>
#include <isl/set.h>
#include <isl/val.h>

/* ------------------------------------------------------------ helpers */

typedef struct fixture {
	program p;
	const routine *r;
	analysis a;
} fixture;

static fixture *open_kernel(const char *sample, const char *opt, const char *fn)
{
	fixture *f = calloc(1, sizeof *f);
	char err[ERR_LEN];
	const char *path = sample_path(sample, opt, "pie", 0);
	assert_non_null(f);
	if (program_load(&f->p, path, err) < 0)
		fail_msg("%s: %s (run make samples)", path, err);
	f->r = program_routine_named(&f->p, fn);
	if (!f->r)
		fail_msg("%s: no routine %s", path, fn);
	iv_analyze(&f->a, &f->p, f->r, 0);
	return f;
}

static void close_kernel(fixture *f)
{
	iv_free(&f->a);
	program_free(&f->p);
	free(f);
}

static uint32_t block_of(const fixture *f, uint32_t i)
{
	return f->a.s.block_of[i];
}

static uint32_t depth_of(const fixture *f, uint32_t i)
{
	int32_t l = f->r->blocks[block_of(f, i)].loop;
	return l < 0 ? 0 : f->r->loops[l].depth;
}

static uint32_t max_depth(const fixture *f)
{
	uint32_t d = 0;
	for (uint32_t l = 0; l < f->r->nloops; l++)
		if (f->r->loops[l].depth > d)
			d = f->r->loops[l].depth;
	return d;
}

static uint64_t pc_of(const fixture *f, uint32_t i)
{
	return f->r->insns[i].addr;
}

/* Number of probes placed at loop depth >= d. */
static uint32_t probes_at_depth(const fixture *f, uint32_t d)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->a.nprobes; i++)
		n += f->a.probes[i].depth >= d;
	return n;
}

static void print_probes(const fixture *f, uint32_t d)
{
	for (uint32_t i = 0; i < f->a.nprobes; i++)
		if (f->a.probes[i].depth >= d)
			print_message("  probe kind %u at 0x%lx depth %u\n", f->a.probes[i].kind,
				      (unsigned long)pc_of(f, f->a.probes[i].insn), f->a.probes[i].depth);
}

/* The trip text evaluated with the named parameters fixed; fails unless
 * that determines one integer. */
static long eval_trip(const char *trip, const char *const *names, const long *vals, unsigned n)
{
	char ctxt[512] = "[", cond[512] = "";
	for (unsigned i = 0; i < n; i++) {
		char b[96];
		snprintf(b, sizeof b, "%s%s", i ? ", " : "", names[i]);
		strcat(ctxt, b);
		snprintf(b, sizeof b, "%s%s = %ld", i ? " and " : "", names[i], vals[i]);
		strcat(cond, b);
	}
	strcat(ctxt, "] -> { : ");
	strcat(ctxt, cond);
	strcat(ctxt, " }");
	isl_ctx *ctx = isl_ctx_alloc();
	isl_pw_aff *pa = isl_pw_aff_read_from_str(ctx, trip);
	if (!pa)
		fail_msg("isl cannot read trip count \"%s\"", trip);
	pa = isl_pw_aff_intersect_params(pa, isl_set_read_from_str(ctx, ctxt));
	isl_val *lo = isl_pw_aff_min_val(isl_pw_aff_copy(pa));
	isl_val *hi = isl_pw_aff_max_val(pa);
	long r = 0;
	bool ok = lo && hi && isl_val_is_int(lo) && isl_val_eq(lo, hi) == isl_bool_true;
	if (ok)
		r = isl_val_get_num_si(lo);
	isl_val_free(lo);
	isl_val_free(hi);
	isl_ctx_free(ctx);
	if (!ok)
		fail_msg("trip count \"%s\" is not one integer at %s", trip, cond);
	return r;
}

static void assert_trip(const char *trip, const char *const *names, const long *vals,
			unsigned n, long want)
{
	if (!trip)
		fail_msg("no trip count (wanted %ld)", want);
	long got = eval_trip(trip, names, vals, n);
	if (got != want)
		fail_msg("trip count \"%s\" gives %ld, expected %ld", trip, got, want);
}

/* The loop at depth d (the first one). */
static int32_t loop_at_depth(const fixture *f, uint32_t d)
{
	for (uint32_t l = 0; l < f->r->nloops; l++)
		if (f->r->loops[l].depth == d)
			return (int32_t)l;
	fail_msg("%s: no loop at depth %u", f->r->name, d);
	return -1;
}

/* ----------------------------------------------------- affine forms */

static void test_expr_to_aff_keeps_64_bit_constants(void **state)
{
	(void)state;
	fixture *f = open_kernel("matmul", "O2", "matmul");
	expr_ctx *c = f->a.ec;
	isl_ctx *ctx = isl_ctx_alloc();
	/* rdi.7 + 0x123456789abc, then (u32)(rdi.7) and rdi.7·rsi.6 */
	const expr *e = expr_add(c, expr_leaf(c, R_DI), expr_const(c, 0x123456789abcLL));
	const expr *z = expr_zext(c, expr_leaf(c, R_DI), 32);
	const expr *m = expr_mulv(c, expr_leaf(c, R_DI), expr_leaf(c, R_SI));
	const expr *all[] = { e, z, m };
	isl_space *sp = iv_aff_space(&f->a, ctx, -1, false, all, 3);
	isl_aff *a = iv_expr_to_aff(&f->a, sp, e);
	assert_non_null(a);
	char *s = isl_aff_to_str(a);
	if (!strstr(s, "20015998343868") || !strstr(s, "rdi_7"))
		fail_msg("rdi.7 + 0x123456789abc became \"%s\"", s);
	free(s);
	isl_aff_free(a);
	a = iv_expr_to_aff(&f->a, sp, z);
	assert_non_null(a);
	s = isl_aff_to_str(a);
	if (!strstr(s, "mod 4294967296"))
		fail_msg("(u32)(rdi.7) became \"%s\"", s);
	free(s);
	isl_aff_free(a);
	a = iv_expr_to_aff(&f->a, sp, m);
	if (a) {
		s = isl_aff_to_str(a);
		fail_msg("rdi.7*rsi.6 is not affine, got \"%s\"", s);
	}
	isl_space_free(sp);
	isl_ctx_free(ctx);
	close_kernel(f);
}

/* ------------------------------------------------------------ matmul */

static void test_matmul_nest_has_no_probes_and_affine_accesses(void **state)
{
	(void)state;
	fixture *f = open_kernel("matmul", "O2", "matmul");
	assert_int_equal(max_depth(f), 3);
	if (probes_at_depth(f, 1)) {
		print_probes(f, 1);
		fail_msg("matmul -O2: %u probes inside the loop nest", probes_at_depth(f, 1));
	}
	uint32_t inner = 0;
	for (uint32_t i = 0; i < f->a.nacc; i++) {
		const access_info *x = &f->a.acc[i];
		if (depth_of(f, x->insn) == 0)
			continue;
		inner++;
		if (!x->addr || x->affine == IV_AFF_NONE)
			fail_msg("matmul -O2: access at 0x%lx is %s", (unsigned long)pc_of(f, x->insn),
				 x->addr ? "not affine in the counters" : "direct");
		if (depth_of(f, x->insn) == 3 && !expr_has_counter(x->addr))
			fail_msg("matmul -O2: inner access at 0x%lx does not move with the counters",
				 (unsigned long)pc_of(f, x->insn));
	}
	/* A[i][k], B[k][j] in the k loop, C[i][j] in the j loop */
	assert_int_equal(inner, 3);
	close_kernel(f);
}

static void test_matmul_loops_get_trip_counts(void **state)
{
	(void)state;
	fixture *f = open_kernel("matmul", "O2", "matmul");
	static const char *const n[] = { "rdi_7" };
	static const long sizes[] = { 1, 2, 24, 600, 1L << 40 };
	for (uint32_t d = 2; d <= 3; d++) {
		int32_t l = loop_at_depth(f, d);
		for (unsigned k = 0; k < 5; k++)
			assert_trip(f->a.loops[l].trip, n, &sizes[k], 1, sizes[k]);
	}
	close_kernel(f);
}

/* -O3 vectorizes the k loop and makes the j loop irreducible
 * (samples/README.md): accesses there are traced directly, by design.
 * What must hold: nothing outside an irreducible region is direct. */
static void test_matmul_O3_direct_only_in_irreducible_region(void **state)
{
	(void)state;
	fixture *f = open_kernel("matmul", "O3", "matmul");
	assert_true(f->r->irreducible);
	for (uint32_t i = 0; i < f->a.nacc; i++) {
		const access_info *x = &f->a.acc[i];
		bool irr = false;
		for (int32_t l = f->r->blocks[block_of(f, x->insn)].loop; l >= 0; l = f->r->loops[l].parent)
			irr |= f->r->loops[l].irreducible;
		if (!x->addr && !irr)
			fail_msg("matmul -O3: access at 0x%lx is direct outside the irreducible region",
				 (unsigned long)pc_of(f, x->insn));
	}
	close_kernel(f);
}

/* -O0 keeps everything in the frame: frame accesses are entry rsp +
 * constant, the rest come from values loaded from the frame. */
static void leaf_is_rsp_or_load(uint32_t v, void *arg)
{
	fixture *f = arg;
	if (v == R_SP)
		return;
	const ssa_value *sv = &f->a.s.vals[v];
	const insn *in = sv->kind == V_DEF ? &f->r->insns[sv->insn] : NULL;
	if (!in || !in->nmem || !(in->mem[0].kind & ACC_R))
		fail_msg("matmul -O0: leaf %u (kind %u) is neither the entry rsp nor a load", v, sv->kind);
}

static void leaf_is_rsp(uint32_t v, void *arg)
{
	(void)arg;
	if (v != R_SP)
		fail_msg("matmul -O0: frame access depends on value %u, not the entry rsp", v);
}

static void test_matmul_O0_frame_accesses_from_entry_rsp(void **state)
{
	(void)state;
	fixture *f = open_kernel("matmul", "O0", "matmul");
	assert_int_equal(f->a.ndirect, 0);
	uint32_t frame = 0;
	for (uint32_t i = 0; i < f->a.nacc; i++) {
		const access_info *x = &f->a.acc[i];
		const mem_access *m = &f->r->insns[x->insn].mem[x->k];
		assert_non_null(x->addr);
		expr_leaves(x->addr, leaf_is_rsp_or_load, f);
		if (m->base == R_SP || m->base == R_BP) {
			expr_leaves(x->addr, leaf_is_rsp, NULL);
			frame++;
		}
	}
	if (frame < 20)
		fail_msg("matmul -O0: only %u rsp/rbp-relative accesses", frame);
	close_kernel(f);
}

/* ----------------------------------------------------------- stencil */

static void test_stencil_O2_inner_loops_have_no_probes(void **state)
{
	(void)state;
	fixture *f = open_kernel("stencil", "O2", "stencil");
	assert_int_equal(max_depth(f), 3);
	assert_int_equal(f->a.ndirect, 0);
	if (probes_at_depth(f, 3)) {
		print_probes(f, 3);
		fail_msg("stencil -O2: %u probes in the j loop", probes_at_depth(f, 3));
	}
	/* Inside the t loop, per time step: s = t & 1 and d = s ^ 1 (the grid
	 * swap, 2 values), and the t loop's exit branch — gcc spills t to the
	 * stack (mov %ecx,-0x4(%rsp)) and reloads it, and values through
	 * memory are leaves.  Per row (depth 2): the j loop's end pointer, the
	 * previous row's final pointer + 0x2000 (needs the exit value of the
	 * inner IV).  4 in all. */
	if (probes_at_depth(f, 1) != 4) {
		print_probes(f, 1);
		fail_msg("stencil -O2: %u probes inside the nest, expected 4", probes_at_depth(f, 1));
	}
	for (uint32_t i = 0; i < f->a.nacc; i++) {
		const access_info *x = &f->a.acc[i];
		if (depth_of(f, x->insn) == 3 && x->affine == IV_AFF_NONE)
			fail_msg("stencil -O2: grid access at 0x%lx not affine",
				 (unsigned long)pc_of(f, x->insn));
	}
	/* rows 1 .. n-2: n - 2 per time step */
	static const char *const n[] = { "rdi_7" };
	static const long sizes[] = { 3, 24, 1024 };
	int32_t rows = loop_at_depth(f, 2);
	for (unsigned k = 0; k < 3; k++)
		assert_trip(f->a.loops[rows].trip, n, &sizes[k], 1, sizes[k] - 2);
	close_kernel(f);
}

static void test_stencil_O3_innermost_loops_have_no_probes(void **state)
{
	(void)state;
	fixture *f = open_kernel("stencil", "O3", "stencil");
	assert_int_equal(f->a.ndirect, 0);
	if (f->a.ninner_probes) {
		print_probes(f, 1);
		fail_msg("stencil -O3: %u probes in innermost loops", f->a.ninner_probes);
	}
	close_kernel(f);
}

/* -------------------------------------------------------- triangular */

/* The inner loop's trip count is a function of the outer counter. */
static void check_triangular(const char *opt, const char *fn, long n, long i, long want)
{
	fixture *f = open_kernel("triangular", opt, fn);
	int32_t l = loop_at_depth(f, 2);
	const char *trip = f->a.loops[l].trip;
	char outer[16];
	snprintf(outer, sizeof outer, "I%d", f->r->loops[l].parent);
	if (!trip || !strstr(trip, outer))
		fail_msg("%s -%s: inner trip count \"%s\" does not mention %s", fn, opt,
			 trip ? trip : "(none)", outer);
	const char *names[] = { "rdi_7", outer };
	const long vals[] = { n, i };
	assert_trip(trip, names, vals, 2, want);
	close_kernel(f);
}

static void test_triangular_inner_bound_follows_outer_counter(void **state)
{
	(void)state;
	static const char *const opts[] = { "O2", "O3" };
	for (unsigned k = 0; k < 2; k++) {
		/* lower_sum: j = 0 .. i, upper_sum: j = i .. n-1 */
		check_triangular(opts[k], "lower_sum", 48, 5, 6);
		check_triangular(opts[k], "upper_sum", 48, 5, 43);
	}
}

/* --------------------------------------------------------------- csr */

static void test_csr_inner_loop_records_only_column_index(void **state)
{
	(void)state;
	static const char *const opts[] = { "O2", "O3" };
	for (unsigned k = 0; k < 2; k++) {
		fixture *f = open_kernel("csr", opts[k], "spmv");
		assert_int_equal(max_depth(f), 2);
		uint32_t nacc = 0, nprobes = 0;
		for (uint32_t i = 0; i < f->a.nacc; i++)
			nacc += depth_of(f, f->a.acc[i].insn) == 2;
		for (uint32_t i = 0; i < f->a.nprobes; i++) {
			const probe *p = &f->a.probes[i];
			if (p->depth < 2)
				continue;
			nprobes++;
			/* what the data decides: a register loaded from memory */
			const insn *in = &f->r->insns[p->insn];
			if (p->kind != PR_REG_AFTER || !in->nmem || !(in->mem[0].kind & ACC_R))
				fail_msg("spmv -%s: inner probe at 0x%lx is not a loaded value", opts[k],
					 (unsigned long)in->addr);
		}
		assert_true(f->a.ndirect < f->a.nacc);
		/* col_idx[k], x[col_idx[k]], val[k]: one value, the column */
		if (nprobes != 1 || nacc != 3) {
			print_probes(f, 2);
			fail_msg("spmv -%s: %u probes for %u accesses in the inner loop", opts[k],
				 nprobes, nacc);
		}
		close_kernel(f);
	}
}

/* Every conditional jump of spmv -O2 is computed: the row loop's entry
 * test (cmp rsi, rax; jge: row_ptr[r+1] against row_ptr[r]) compares
 * two recorded values, one needed by an address, the other by the inner
 * loop's exit test, which comes later in block order; and nrows's test,
 * needed by the row loop's exit.  Before, the first pass left the entry
 * test recorded: a word per row. */
static void test_csr_row_entry_test_is_computed(void **state)
{
	(void)state;
	fixture *f = open_kernel("csr", "O2", "spmv");
	assert_true(f->a.nbr >= 4);
	for (uint32_t i = 0; i < f->a.nbr; i++)
		if (f->a.br[i].how != BR_COMPUTED)
			fail_msg("spmv -O2: the jump at 0x%lx is recorded",
				 (unsigned long)pc_of(f, f->a.br[i].insn));
	for (uint32_t i = 0; i < f->a.nprobes; i++)
		assert_int_not_equal(f->a.probes[i].kind, PR_BRANCH);
	close_kernel(f);
}

/* strkern's fold_case: per character `movzx eax, [rdi]; test al, al`
 * and `lea edx, [rax-0x41]; cmp dl, 0x19; ja`: two outcomes that the
 * byte decides.  The byte is recorded instead (record_for_branches: a
 * word for two, one of them in the byte's own block) and both jumps are
 * computed; before, two outcomes a character were recorded. */
static void test_strkern_case_loop_records_the_byte(void **state)
{
	(void)state;
	fixture *f = open_kernel("strkern", "O2", "fold_case");
	assert_int_equal(max_depth(f), 1);
	for (uint32_t i = 0; i < f->a.nbr; i++)
		if (f->a.br[i].how != BR_COMPUTED)
			fail_msg("fold_case -O2: the jump at 0x%lx is recorded",
				 (unsigned long)pc_of(f, f->a.br[i].insn));
	uint32_t in_loop = 0;
	for (uint32_t i = 0; i < f->a.nprobes; i++) {
		const probe *p = &f->a.probes[i];
		const insn *in = &f->r->insns[p->insn];
		if (p->depth < 1)
			continue;
		in_loop++;
		if (p->kind != PR_REG_AFTER || in->op != OP_MOVZX)
			fail_msg("fold_case -O2: loop probe at 0x%lx is not the loaded byte",
				 (unsigned long)in->addr);
	}
	assert_int_equal(in_loop, 1);
	close_kernel(f);
}

/* -------------------------------------------------------------- list */

static void test_list_node_fields_share_one_class(void **state)
{
	(void)state;
	static const char *const opts[] = { "O2", "O3" };
	for (unsigned k = 0; k < 2; k++) {
		fixture *f = open_kernel("list", opts[k], "list_sum");
		int32_t cls = -1;
		unsigned seen = 0, n = 0;
		for (uint32_t i = 0; i < f->a.nacc; i++) {
			const access_info *x = &f->a.acc[i];
			if (depth_of(f, x->insn) != 1)
				continue;
			n++;
			if (!x->addr)
				fail_msg("list_sum -%s: node access at 0x%lx is direct", opts[k],
					 (unsigned long)pc_of(f, x->insn));
			if (cls >= 0 && x->cls != cls)
				fail_msg("list_sum -%s: node fields in classes %d and %d", opts[k], cls, x->cls);
			cls = x->cls;
			if (x->off == 0 || x->off == 8 || x->off == 16)
				seen |= 1u << (x->off / 8);
			else
				fail_msg("list_sum -%s: node field at offset %ld", opts[k], (long)x->off);
		}
		assert_int_equal(n, 3);
		assert_int_equal(seen, 7);
		/* One recorded register per iteration: the node pointer.  (The
		 * loop's exit branch is recorded too; see the report.) */
		uint32_t regs = 0;
		for (uint32_t i = 0; i < f->a.nprobes; i++) {
			const probe *p = &f->a.probes[i];
			if (p->depth >= 1 && p->kind != PR_BRANCH)
				regs++;
		}
		if (regs != 1) {
			print_probes(f, 1);
			fail_msg("list_sum -%s: %u register probes in the loop", opts[k], regs);
		}
		close_kernel(f);
	}
}

/* ------------------------------------------------------- irreducible */

static void test_irreducible_region_is_traced_directly(void **state)
{
	(void)state;
	static const char *const opts[] = { "O0", "O2", "O3" };
	for (unsigned k = 0; k < 3; k++) {
		fixture *f = open_kernel("irreducible", opts[k], "irreducible");
		const routine *r = f->r;
		assert_true(r->irreducible);
		uint32_t want = 0, inside = 0;
		for (uint32_t i = 0; i < r->ninsn; i++)
			want += r->insns[i].nmem;
		if (f->a.nacc != want)
			fail_msg("irreducible -%s: %u accesses analyzed, the routine makes %u",
				 opts[k], f->a.nacc, want);
		for (uint32_t i = 0; i < f->a.nacc; i++) {
			const access_info *x = &f->a.acc[i];
			int32_t l = r->blocks[block_of(f, x->insn)].loop;
			if (l < 0 || !r->loops[l].irreducible)
				continue;
			inside++;
			if (x->addr)
				fail_msg("irreducible -%s: access at 0x%lx in the irreducible region "
					 "is computed", opts[k], (unsigned long)pc_of(f, x->insn));
		}
		assert_true(inside > 0);
		close_kernel(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr_to_aff_keeps_64_bit_constants),
		cmocka_unit_test(test_matmul_nest_has_no_probes_and_affine_accesses),
		cmocka_unit_test(test_matmul_loops_get_trip_counts),
		cmocka_unit_test(test_matmul_O3_direct_only_in_irreducible_region),
		cmocka_unit_test(test_matmul_O0_frame_accesses_from_entry_rsp),
		cmocka_unit_test(test_stencil_O2_inner_loops_have_no_probes),
		cmocka_unit_test(test_stencil_O3_innermost_loops_have_no_probes),
		cmocka_unit_test(test_triangular_inner_bound_follows_outer_counter),
		cmocka_unit_test(test_csr_inner_loop_records_only_column_index),
		cmocka_unit_test(test_csr_row_entry_test_is_computed),
		cmocka_unit_test(test_strkern_case_loop_records_the_byte),
		cmocka_unit_test(test_list_node_fields_share_one_class),
		cmocka_unit_test(test_irreducible_region_is_traced_directly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
