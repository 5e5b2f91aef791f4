/* Matching lackey's one sequence against per-thread streams
 * (replay/interleave.h), on hand-made streams whose matchings were worked
 * out by hand.  Accesses are named by one number (pc = addr = it). */
#include "tests/testutil.h"
#include "replay/interleave.h"

static il_acc A(uint64_t x)
{
	return (il_acc){ .pc = x, .addr = x, .size = 8, .w = 0 };
}

#define THREAD(v) { (v), sizeof(v) / sizeof(v)[0], 0 }

static bool skip_99(const il_acc *a, void *ctx)
{
	(void)ctx;
	return a->pc == 99;
}

/* x is the next access of threads 0 and 1 at once; both then match one
 * access only (c, thread 2's, comes next), so the tie goes to thread 0,
 * the one that matched last.  Then b has no thread: back to the choice,
 * thread 1 takes x, and the rest matches (x c b x a).  One backtrack. */
static void test_tie_resolved_by_backtracking(void **state)
{
	(void)state;
	il_acc t0[] = { A(1), A(10) }, t1[] = { A(1), A(11) }, t2[] = { A(12) };
	il_acc seq[] = { A(1), A(12), A(11), A(1), A(10) };
	il_thread t[] = { THREAD(t0), THREAD(t1), THREAD(t2) };
	il_result r;
	il_match(seq, 5, t, 3, NULL, NULL, &r);
	assert_true(r.matched);
	assert_int_equal(r.backtracks, 1);
	assert_int_equal(t[0].pos, 2);
	assert_int_equal(t[1].pos, 2);
	assert_int_equal(t[2].pos, 1);
}

/* x y z ... : thread 1 matches x and z, thread 0 x only, so thread 1
 * goes first and nothing is taken back. */
static void test_longest_run_first(void **state)
{
	(void)state;
	il_acc t0[] = { A(1), A(2) }, t1[] = { A(1), A(3) };
	il_acc seq[] = { A(1), A(3), A(1), A(2) };
	il_thread t[] = { THREAD(t0), THREAD(t1) };
	il_result r;
	il_match(seq, 4, t, 2, NULL, NULL, &r);
	assert_true(r.matched);
	assert_int_equal(r.backtracks, 0);
}

/* As the first case, but the sequence's last access is 20 where thread 0
 * has 13: the first attempt stops at access 2 (index), the second at 5,
 * which is the one reported, with thread 0's next access. */
static void test_mismatch_reports_the_furthest_attempt(void **state)
{
	(void)state;
	il_acc t0[] = { A(1), A(10), A(13) }, t1[] = { A(1), A(11) }, t2[] = { A(12) };
	il_acc seq[] = { A(1), A(12), A(11), A(1), A(10), A(20) };
	il_thread t[] = { THREAD(t0), THREAD(t1), THREAD(t2) };
	il_result r;
	il_match(seq, 6, t, 3, NULL, NULL, &r);
	assert_false(r.matched);
	assert_int_equal(r.far, 5);
	assert_int_equal(r.thread, 0);
	assert_false(r.ended);
	assert_int_equal(r.next.pc, 13);
	assert_int_equal(r.backtracks, 1);
}

/* A thread with an access the sequence never had. */
static void test_extra_accesses_fail(void **state)
{
	(void)state;
	il_acc t0[] = { A(1), A(2), A(3) };
	il_acc seq[] = { A(1), A(2) };
	il_thread t[] = { THREAD(t0) };
	il_result r;
	il_match(seq, 2, t, 1, NULL, NULL, &r);
	assert_false(r.matched);
	assert_int_equal(r.far, 2);
	assert_int_equal(r.extra, 1);
	assert_int_equal(r.next.pc, 3);
}

/* The sequence goes on after every thread has ended. */
static void test_ended_thread_fails(void **state)
{
	(void)state;
	il_acc t0[] = { A(1) };
	il_acc seq[] = { A(1), A(2) };
	il_thread t[] = { THREAD(t0) };
	il_result r;
	il_match(seq, 2, t, 1, NULL, NULL, &r);
	assert_false(r.matched);
	assert_int_equal(r.far, 1);
	assert_true(r.ended);
	il_match(seq, 2, NULL, 0, NULL, NULL, &r);
	assert_false(r.matched);
	assert_int_equal(r.far, 0);
	il_match(seq, 0, NULL, 0, NULL, NULL, &r);
	assert_true(r.matched);
}

/* A skippable access (99) is skipped only where the sequence lacks it,
 * in the middle and at the end; where the sequence has it, it matches. */
static void test_skippable_accesses(void **state)
{
	(void)state;
	il_acc t0[] = { A(1), A(99), A(2), A(99) };
	il_acc lacks[] = { A(1), A(2) }, has[] = { A(1), A(99), A(2), A(99) };
	il_thread t[] = { THREAD(t0) };
	il_result r;
	il_match(lacks, 2, t, 1, skip_99, NULL, &r);
	assert_true(r.matched);
	assert_int_equal(r.skipped, 2);
	t[0].pos = 0;
	il_match(has, 4, t, 1, skip_99, NULL, &r);
	assert_true(r.matched);
	assert_int_equal(r.skipped, 0);
	t[0].pos = 0;
	il_match(lacks, 2, t, 1, NULL, NULL, &r);
	assert_false(r.matched);
	assert_int_equal(r.far, 1);
	assert_int_equal(r.next.pc, 99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tie_resolved_by_backtracking),
		cmocka_unit_test(test_longest_run_first),
		cmocka_unit_test(test_mismatch_reports_the_furthest_attempt),
		cmocka_unit_test(test_extra_accesses_fail),
		cmocka_unit_test(test_ended_thread_fails),
		cmocka_unit_test(test_skippable_accesses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
