/* Tests of the selective BID instrumentation algorithm (ivres/bid.c,
 * issue 15) on hand-made blocks.  Every expected value is worked by hand
 * from the paper's definitions (Economo et al., §III) in the comment
 * above its test; the scores are the slides' s1 = 1, s2 = 3, s3 = 5. */
#include "tests/testutil.h"
#include "ivres/ivres.h"

/* register incarnations of the hand-made blocks */
enum { RBP, RAX1, RAX2, RAX3, RAX6, RDI, RSI, RDX, R8, RCX };

static bid_expr rri(bid_reg_t b, bid_reg_t i, int64_t d)
{
	return (bid_expr){ BID_RRI, b, i, d };
}

static bid_expr irr(int64_t b, bid_reg_t i, bid_reg_t d)
{
	return (bid_expr){ BID_IRR, i, d, b };
}

#define R(x) bid_reg(x, 1)

/* δ_RRI (Figure 1, the slides' tree): same b and i, |d - d'| < C: 0;
 * |d - d'| ≥ C: s3; only i differs: s1; only b: s2; both: s1 + s2.
 * The displacement is not looked at once a register differs. */
static void test_rri_distance_follows_figure_1(void **st)
{
	bid_expr a = rri(R(RBP), BID_NIL, -4), b = rri(R(RBP), BID_NIL, -8);
	assert_int_equal(bid_distance(&a, &b, 16), 0);
	b.imm = -4 - 16;	/* exactly C apart: not within the chunk */
	assert_int_equal(bid_distance(&a, &b, 16), 5);
	b.imm = -4 - 15;
	assert_int_equal(bid_distance(&a, &b, 16), 0);
	bid_expr c = rri(R(RBP), bid_reg(RAX1, 4), -4);
	assert_int_equal(bid_distance(&a, &c, 16), 1);
	bid_expr d = rri(R(RAX1), BID_NIL, 1000);
	assert_int_equal(bid_distance(&a, &d, 16), 3);
	bid_expr e = rri(R(RAX1), bid_reg(RAX1, 4), -4);
	assert_int_equal(bid_distance(&a, &e, 16), 4);
	/* the same index register under another scale is another index
	 * quantity (footnote 3) */
	bid_expr f = rri(R(RBP), bid_reg(RAX1, 8), -4);
	assert_int_equal(bid_distance(&c, &f, 4096), 1);
}

/* δ_IRR: immediate bases ≥ C apart: s3 whatever the registers; else
 * i differs: s2, d differs: s1, both: s1 + s2. */
static void test_irr_distance_follows_figure_1(void **st)
{
	bid_expr a = irr(0x601120, bid_reg(RAX2, 4), BID_NIL);
	bid_expr b = irr(0x601060, bid_reg(RAX3, 4), BID_NIL);
	assert_int_equal(bid_distance(&a, &b, 16), 5);	/* 0xc0 = 192 ≥ 16 */
	assert_int_equal(bid_distance(&a, &b, 256), 3);	/* only i differs */
	b.r1 = a.r1;
	assert_int_equal(bid_distance(&a, &b, 256), 0);
	b.r2 = R(RDX);
	assert_int_equal(bid_distance(&a, &b, 256), 1);
	b.r1 = R(RSI);
	assert_int_equal(bid_distance(&a, &b, 256), 4);
	/* addresses wrap: 8 and -8 are 16 apart */
	bid_expr x = irr(8, BID_NIL, BID_NIL), y = irr(-8, BID_NIL, BID_NIL);
	assert_int_equal(bid_distance(&x, &y, 17), 0);
	assert_int_equal(bid_distance(&x, &y, 16), 5);
}

static void test_different_templates_are_incomparable(void **st)
{
	bid_expr a = rri(R(RBP), BID_NIL, 0), b = irr(0, BID_NIL, BID_NIL);
	assert_int_equal(bid_distance(&a, &b, 4096), -1);
	assert_false(bid_equal(&a, &b));
}

/* W = ceil(ω·m): 0.3·10 is 3.0000000000000004 in binary, still 3. */
static void test_knapsack_size_is_ceiling_of_omega_m(void **st)
{
	assert_int_equal(bid_knapsack_size(0.3, 10), 3);
	assert_int_equal(bid_knapsack_size(0.25, 3), 1);
	assert_int_equal(bid_knapsack_size(0.5, 8), 4);
	assert_int_equal(bid_knapsack_size(0.1, 10), 1);
	assert_int_equal(bid_knapsack_size(0.11, 10), 2);
	assert_int_equal(bid_knapsack_size(0, 5), 0);
	assert_int_equal(bid_knapsack_size(1, 0), 0);
	assert_int_equal(bid_knapsack_size(1, 7), 7);
}

/* The slides' example block (ω = 50%, C = 16 B, n = 18), register
 * incarnations by the stability analysis of §III-B: rbp never changes;
 * rax is written by lines 3, 9, 12, 13, 15 and 16, so line 7 reads the
 * rax of line 3 (RAX1), line 10 that of line 9 (RAX2), line 13 that of
 * line 12 (RAX3), line 18 that of line 16 (RAX6). */
static void slides_block(bid_expr e[18])
{
	static const int64_t rbp_d[18] = { -4, -8, -0x18, -4, -8, -0x18, 0, -4, -0xc,
					   0, -0xc, -8, 0, -4, -8, -0x18, -4, 0 };
	for (int k = 0; k < 18; k++)
		e[k] = rri(R(RBP), BID_NIL, rbp_d[k]);
	e[6] = rri(R(RAX1), BID_NIL, 0);			/*  7. (%rax) */
	e[9] = irr(0x601120, bid_reg(RAX2, 4), BID_NIL);	/* 10. */
	e[12] = irr(0x601060, bid_reg(RAX3, 4), BID_NIL);	/* 13. */
	e[17] = rri(R(RAX6), BID_NIL, 0);			/* 18. (%rax) */
}

/* Classes (slides: m = 8): A = -4(rbp) {1,4,8,14,17} |5|, B = -8(rbp)
 * {2,5,12,15} |4|, C = -0x18(rbp) {3,6,16} |3|, D = (rax1) {7} |1|,
 * E = -0xc(rbp) {9,11} |2|, F = line 10 |1|, G = line 13 |1|,
 * H = (rax6) {18} |1|.
 * Distances at C = 16 among the RRI ones: A-B 0 (4 apart), A-E 0, B-E 0,
 * C-E 0 (12 apart), A-C 5 (20), B-C 5 (16), and 3 (base differs) from D
 * or H to anything; F-G 5.  Mean distances: A (0+5+3+0+3)/5 = 2.2,
 * B 2.2, C (5+5+3+0+3)/5 = 3.2, D 3, E (0+0+0+3+3)/5 = 1.2, H 3, F 5, G 5.
 * Value order (equation 2): A, B, C, E, F, G, D, H.
 * W = ceil(0.5·8) = 4.  A goes in and freezes B and E; C goes in; F; G:
 * full.  K = {A, C, F, G}: MA = (5+3+1+1)/18 = 10/18.  B and E are at
 * distance 0 from A, their fulcrum: |[Â]| = 5+4+2 = 11, AIA =
 * (11+3+1+1)/18 = 16/18.  D and H are at distance 0 from nothing kept:
 * absent. */
static void test_slides_example_omega_half(void **st)
{
	bid_expr e[18];
	bid_choice c;
	slides_block(e);
	bid_select(e, 18, 0.5, 16, &c);
	assert_int_equal(c.m, 8);
	assert_int_equal(c.w, 4);
	assert_int_equal(c.kept, 10);
	assert_int_equal(c.aia, 16);
	static const uint8_t role[18] = {
		BID_KEPT, BID_ATTRIBUTED, BID_KEPT, BID_KEPT, BID_ATTRIBUTED, BID_KEPT,
		BID_ABSENT, BID_KEPT, BID_ATTRIBUTED, BID_KEPT, BID_ATTRIBUTED, BID_ATTRIBUTED,
		BID_KEPT, BID_KEPT, BID_ATTRIBUTED, BID_KEPT, BID_KEPT, BID_ABSENT,
	};
	for (int k = 0; k < 18; k++)
		assert_int_equal(c.role[k], role[k]);
	assert_int_equal(c.fulcrum[1], 0);	/* B on A (line 1) */
	assert_int_equal(c.fulcrum[8], 0);	/* E on A */
	assert_int_equal(c.fulcrum[15], 2);	/* C's members: line 3 */
	assert_int_equal(c.fulcrum[6], -1);
	assert_int_equal(c.cls[16], 0);
	bid_choice_free(&c);
}

/* Step C recovers the zero-distance candidates discarded in step A.
 * ω = 0.875: W = 7.  Round 1 places A, C, F, G, D, H (B and E frozen by
 * A); round 2 unfreezes, places B, which freezes E; the knapsack is
 * full.  E is on A (the most valuable kept one at distance 0): MA =
 * 16/18, AIA = 18/18.  ω = 1: round 3 places E as well. */
static void test_later_rounds_recover_discarded_candidates(void **st)
{
	bid_expr e[18];
	bid_choice c;
	slides_block(e);
	bid_select(e, 18, 0.875, 16, &c);
	assert_int_equal(c.w, 7);
	assert_int_equal(c.kept, 16);
	assert_int_equal(c.aia, 18);
	assert_int_equal(c.role[1], BID_KEPT);
	assert_int_equal(c.role[8], BID_ATTRIBUTED);
	assert_int_equal(c.fulcrum[8], 0);
	bid_choice_free(&c);

	bid_select(e, 18, 1, 16, &c);
	assert_int_equal(c.kept, 18);
	for (int k = 0; k < 18; k++)
		assert_int_equal(c.role[k], BID_KEPT);
	bid_choice_free(&c);
}

/* The chunk size moves the zero-distance pairs.  At C = 4 no two rbp
 * offsets are within a chunk (the nearest are 4 apart): every distance
 * among A, B, C, E is s3 = 5.  Means: A, B, C, E (5+5+5+3+3)/5 = 4.2,
 * D, H 3.  Order: A, B, C, E, F (5), G (5), D, H.  W = 4: A, B, C, E —
 * nothing attributed: MA = AIA = (5+4+3+2)/18 = 14/18. */
static void test_small_chunk_leaves_nothing_to_attribute(void **st)
{
	bid_expr e[18];
	bid_choice c;
	slides_block(e);
	bid_select(e, 18, 0.5, 4, &c);
	assert_int_equal(c.kept, 14);
	assert_int_equal(c.aia, 14);
	assert_int_equal(c.role[9], BID_ABSENT);
	assert_int_equal(c.role[8], BID_KEPT);
	bid_choice_free(&c);
}

/* A CSR inner loop (x[col[k]] += v[k]·…): col (rdx + 4·rax), x (r8 +
 * 8·rdx'), v (rcx + 8·rax).  Every pair differs in both registers:
 * distance 4, equal means 4, equal cardinalities 1: program order
 * decides.  ω = 0.25, W = ceil(0.75) = 1: the first is kept, the others
 * absent: MA = AIA = 1/3. */
static void test_equal_values_go_to_the_earlier_expression(void **st)
{
	bid_expr e[3] = {
		rri(R(RDX), bid_reg(RAX1, 4), 0),
		rri(R(R8), bid_reg(RDI, 8), 0),
		rri(R(RCX), bid_reg(RAX1, 8), 0),
	};
	bid_choice c;
	bid_select(e, 3, 0.25, 64, &c);
	assert_int_equal(c.m, 3);
	assert_int_equal(c.w, 1);
	assert_int_equal(c.kept, 1);
	assert_int_equal(c.aia, 1);
	assert_int_equal(c.role[0], BID_KEPT);
	assert_int_equal(c.role[1], BID_ABSENT);
	assert_int_equal(c.role[2], BID_ABSENT);
	bid_choice_free(&c);
}

/* A list node's fields {key, val, next} at 0, 8, 16 from one pointer:
 * three classes, all at distance 0 at C = 64.  ω = 0.25: W = 1, the
 * first kept, the other two on it: MA = 1/3, AIA = 3/3.  ω = 0: an
 * empty knapsack, nothing to attribute to: MA = AIA = 0. */
static void test_zero_distance_fields_are_attributed(void **st)
{
	bid_expr e[3] = { rri(R(RDI), BID_NIL, 0), rri(R(RDI), BID_NIL, 8),
			  rri(R(RDI), BID_NIL, 16) };
	bid_choice c;
	bid_select(e, 3, 0.25, 64, &c);
	assert_int_equal(c.kept, 1);
	assert_int_equal(c.aia, 3);
	assert_int_equal(c.fulcrum[2], 0);
	assert_int_equal(c.role[2], BID_ATTRIBUTED);
	bid_choice_free(&c);
	bid_select(e, 3, 0, 64, &c);
	assert_int_equal(c.w, 0);
	assert_int_equal(c.kept, 0);
	assert_int_equal(c.aia, 0);
	assert_int_equal(c.role[0], BID_ABSENT);
	bid_choice_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rri_distance_follows_figure_1),
		cmocka_unit_test(test_irr_distance_follows_figure_1),
		cmocka_unit_test(test_different_templates_are_incomparable),
		cmocka_unit_test(test_knapsack_size_is_ceiling_of_omega_m),
		cmocka_unit_test(test_slides_example_omega_half),
		cmocka_unit_test(test_later_rounds_recover_discarded_candidates),
		cmocka_unit_test(test_small_chunk_leaves_nothing_to_attribute),
		cmocka_unit_test(test_equal_values_go_to_the_earlier_expression),
		cmocka_unit_test(test_zero_distance_fields_are_attributed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
