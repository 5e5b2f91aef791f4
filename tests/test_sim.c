/* The cache simulator (replay/sim.h) on hand-made access sequences whose
 * hits and misses were worked out by hand with cachegrind's model: LRU
 * sets, write-allocate, one miss at most per level for an access that
 * crosses a line, the LL looked up on L1 misses only, a modify counted as
 * one read, accesses cut to 16 bytes. */
#include "tests/testutil.h"
#include "replay/sim.h"

/* Small caches, so that sets are easy to fill by hand: D1 and I1 of
 * 2 sets × 2 ways × 64 B (set = line & 1), LL of 4 sets × 4 ways. */
static sim_config small(void)
{
	sim_config c = { { 256, 2, 64 }, { 256, 2, 64 }, { 1024, 4, 64 } };
	return c;
}

static void start(sim *s, sim_config c, bool per_pc)
{
	char err[SIM_ERR_LEN];
	assert_int_equal(sim_init(s, &c, per_pc, err), 0);
}

static sim_rec R(uint64_t addr, unsigned size)
{
	return (sim_rec){ 0x400000 + addr, addr, size, SIM_READ, 1 };
}

static sim_rec W(uint64_t addr, unsigned size)
{
	return (sim_rec){ 0x500000 + addr, addr, size, SIM_WRITE, 1 };
}

static sim_rec I(uint64_t pc, unsigned len)
{
	return (sim_rec){ pc, pc, len, SIM_FETCH, 1 };
}

static void run(sim *s, const sim_rec *r, size_t n)
{
	assert_int_equal(sim_batch(s, r, n, true), n);
}

#define EV(s, e) ((s)->total.ev[SIM_##e])

/* Lines 0, 2, 4 (addresses 0, 128, 256) all map to set 0 of D1: with
 * two ways the third evicts the least recently used. */
static void test_conflict_misses_at_assoc_plus_one_lines(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { R(0, 8), R(128, 8), R(0, 8), R(128, 8),	/* 2 misses, 2 hits */
			R(256, 8),					/* miss, evicts 0 */
			R(0, 8),					/* miss, evicts 128 */
			R(128, 8),					/* miss, evicts 256 */
			R(64, 8), R(192, 8), R(64, 8) };		/* set 1: 2 misses, a hit */
	run(&s, r, sizeof r / sizeof *r);
	assert_int_equal(EV(&s, DR), 10);
	assert_int_equal(EV(&s, D1MR), 7);
	/* the LL (4 sets: lines 0 and 4 share set 0, 4 ways) holds all
	 * five lines: only first touches miss there */
	assert_int_equal(EV(&s, DLMR), 5);
	sim_free(&s);
}

/* A hit makes its line the most recently used: after 0, 128, 0 the
 * victim of 256 is 128, so 0 still hits. */
static void test_lru_order(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { R(0, 8), R(128, 8), R(0, 8), R(256, 8), R(0, 8), R(128, 8) };
	run(&s, r, sizeof r / sizeof *r);
	/* misses: 0, 128, 256, then 128 again (evicted by 256); 0 hits twice */
	assert_int_equal(EV(&s, D1MR), 4);
	/* the set is now 128 (MRU), 0 */
	assert_int_equal(s.d1.tags[0], 128 / 64 + 1);
	assert_int_equal(s.d1.tags[1], 0 / 64 + 1);
	sim_free(&s);
}

/* 8 bytes at 60 touch lines 0 and 1: one access, one miss even though
 * both lines missed; afterwards both are in, so 4 bytes at 62 hit; 4
 * bytes at 126 touch line 1 (in) and line 2 (not): one miss. */
static void test_line_crossing_counts_one_miss(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { R(60, 8) };
	run(&s, r, 1);
	assert_int_equal(EV(&s, DR), 1);
	assert_int_equal(EV(&s, D1MR), 1);
	assert_int_equal(EV(&s, DLMR), 1);
	sim_rec r2[] = { R(62, 4), R(0, 1), R(64, 1) };
	run(&s, r2, 3);
	assert_int_equal(EV(&s, D1MR), 1);	/* both lines were loaded */
	sim_rec r3[] = { R(126, 4) };
	run(&s, r3, 1);
	assert_int_equal(EV(&s, DR), 5);
	assert_int_equal(EV(&s, D1MR), 2);
	assert_int_equal(EV(&s, DLMR), 2);
	sim_free(&s);
}

/* A crossing access that misses D1 on one line only still looks up both
 * lines in the LL, as cachegrind passes the whole access down. */
static void test_crossing_miss_looks_up_both_lines_in_ll(void **state)
{
	sim s;
	start(&s, small(), false);
	/* line 1 enters D1 and LL; lines 3 and 5 (set 1) push it out of D1
	 * only; then 8 bytes at 60 touch line 0 (miss everywhere) and line 1
	 * (D1 miss, LL hit): one D1 miss, one LL miss */
	sim_rec r[] = { R(64, 8), R(192, 8), R(320, 8), R(60, 8) };
	run(&s, r, 4);
	assert_int_equal(EV(&s, D1MR), 4);
	assert_int_equal(EV(&s, DLMR), 4);
	/* line 1 was looked up in the LL by the crossing access: it is the
	 * most recent of LL set 1 (lines 1, 5 there) */
	assert_int_equal(s.ll.tags[1 * 4 + 0], 1 + 1);
	sim_free(&s);
}

/* Write-allocate: a write miss loads the line, the read after it hits. */
static void test_write_allocate(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { W(0, 8), R(8, 8), W(16, 4) };
	run(&s, r, 3);
	assert_int_equal(EV(&s, DW), 2);
	assert_int_equal(EV(&s, D1MW), 1);
	assert_int_equal(EV(&s, DLMW), 1);
	assert_int_equal(EV(&s, DR), 1);
	assert_int_equal(EV(&s, D1MR), 0);
	sim_free(&s);
}

/* A read then a write of the same instruction, address and size is one
 * read (cachegrind's modify); another address, size or pc is not. */
static void test_modify_counts_as_one_read(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { { 0x10, 0, 8, SIM_READ, 1 }, { 0x10, 0, 8, SIM_WRITE, 1 },	/* modify */
			{ 0x20, 64, 8, SIM_READ, 1 }, { 0x20, 72, 8, SIM_WRITE, 1 },	/* other addr */
			{ 0x30, 64, 8, SIM_READ, 1 }, { 0x30, 64, 4, SIM_WRITE, 1 },	/* other size */
			{ 0x40, 64, 8, SIM_READ, 1 }, { 0x41, 64, 8, SIM_WRITE, 1 } };	/* other pc */
	run(&s, r, 8);
	assert_int_equal(EV(&s, DR), 4);
	assert_int_equal(EV(&s, DW), 3);
	sim_free(&s);
}

/* A read at the end of a batch waits for the next one (its write may
 * start it); the last batch takes everything. */
static void test_batch_keeps_a_trailing_read(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { W(0, 8), { 0x10, 64, 8, SIM_READ, 1 } };
	assert_int_equal(sim_batch(&s, r, 2, false), 1);
	assert_int_equal(EV(&s, DR), 0);
	sim_rec r2[] = { { 0x10, 64, 8, SIM_READ, 1 }, { 0x10, 64, 8, SIM_WRITE, 1 } };
	assert_int_equal(sim_batch(&s, r2, 2, false), 2);
	assert_int_equal(EV(&s, DR), 1);
	assert_int_equal(EV(&s, DW), 1);
	assert_int_equal(sim_batch(&s, r, 2, true), 2);
	assert_int_equal(EV(&s, DR), 2);
	sim_free(&s);
}

/* The LL is neither inclusive nor exclusive: it sees L1 misses only, and
 * evicting a line from it leaves the line in D1. */
static void test_ll_sees_l1_misses_only(void **state)
{
	sim s;
	/* D1: 1 set × 2 ways; LL: 4 sets, direct mapped (set = line & 3) */
	sim_config c = { { 128, 2, 64 }, { 128, 2, 64 }, { 256, 1, 64 } };
	start(&s, c, false);
	/* line 0, often: one miss, then D1 hits that never reach the LL */
	sim_rec r[] = { R(0, 8), R(0, 8), R(0, 8), R(256, 8) };	/* line 4: LL set 0 */
	run(&s, r, 4);
	assert_int_equal(EV(&s, D1MR), 2);
	assert_int_equal(EV(&s, DLMR), 2);
	/* line 4 took line 0's LL set, line 0 is still in D1: a hit */
	sim_rec r2[] = { R(0, 8) };
	run(&s, r2, 1);
	assert_int_equal(EV(&s, D1MR), 2);
	/* line 1 evicts line 4 from D1 (LRU: 0 was used last); line 4 again:
	 * D1 miss, and LL hit, since the D1 hits on 0 never touched it */
	sim_rec r3[] = { R(64, 8), R(256, 8) };
	run(&s, r3, 2);
	assert_int_equal(EV(&s, D1MR), 4);
	assert_int_equal(EV(&s, DLMR), 3);
	sim_free(&s);
}

/* Accesses larger than 16 bytes count as their first 16: 32 bytes at 0
 * load line 0 only, so line 1 still misses after it. */
static void test_large_accesses_cut_to_16_bytes(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { R(56, 32), R(64, 8), R(128 + 48, 32) };
	run(&s, r, 3);
	/* 56+16 crosses into line 1: both loaded, one miss; 64 hits;
	 * 176..191 stays in line 2: one miss */
	assert_int_equal(EV(&s, D1MR), 2);
	sim_rec r2[] = { R(192, 8) };
	run(&s, r2, 1);
	assert_int_equal(EV(&s, D1MR), 3);	/* line 3 was not loaded */
	sim_free(&s);
}

/* Fetches go through I1, then the LL that data shares: code read as data
 * after it was fetched misses D1 but hits the LL. */
static void test_fetches_share_the_ll(void **state)
{
	sim s;
	start(&s, small(), false);
	sim_rec r[] = { I(0x1000, 4), I(0x1004, 3), I(0x103e, 4), R(0x1000, 8) };
	run(&s, r, 4);
	assert_int_equal(EV(&s, IR), 3);
	/* 0x103e..0x1041 crosses into line 0x41: one more I1 miss */
	assert_int_equal(EV(&s, I1MR), 2);
	assert_int_equal(EV(&s, ILMR), 2);
	assert_int_equal(EV(&s, D1MR), 1);
	assert_int_equal(EV(&s, DLMR), 0);
	sim_free(&s);
}

/* A fetch record for several instructions of one line gives what their
 * fetches one by one give: totals and cache state. */
static void test_fetch_runs_equal_single_fetches(void **state)
{
	static const unsigned lens[] = { 4, 7, 3, 5, 2, 6, 1, 8, 3, 4, 15, 2, 5, 3, 7, 4, 6, 9 };
	enum { N = sizeof lens / sizeof *lens };
	sim one, runs;
	start(&one, small(), false);
	start(&runs, small(), false);
	for (int round = 0; round < 3; round++) {
		uint64_t pc = 0x1020 + 0x100 * (uint64_t)round, at = pc;
		sim_rec single[N], runs_of[N];
		size_t nrun = 0;
		for (unsigned i = 0; i < N; i++) {
			single[i] = I(at, lens[i]);
			at += lens[i];
		}
		/* runs: cut where an instruction starts in another line */
		for (unsigned i = 0; i < N;) {
			unsigned k = i;
			while (k + 1 < N && single[k + 1].pc >> 6 == single[i].pc >> 6)
				k++;
			runs_of[nrun++] = (sim_rec){ single[i].pc, single[k].pc, lens[k], SIM_FETCH,
						 (uint16_t)(k - i + 1) };
			i = k + 1;
		}
		assert_true(nrun < N);
		run(&one, single, N);
		run(&runs, runs_of, nrun);
		sim_rec d[] = { R(0x1000 + 0x40 * (uint64_t)round, 8) };	/* data in between */
		run(&one, d, 1);
		run(&runs, d, 1);
	}
	assert_memory_equal(&one.total, &runs.total, sizeof one.total);
	assert_int_equal(one.total.ev[SIM_IR], 3 * N);
	assert_memory_equal(one.i1.tags, runs.i1.tags, 4 * sizeof *one.i1.tags);
	assert_memory_equal(one.ll.tags, runs.ll.tags, 16 * sizeof *one.ll.tags);
	sim_free(&one);
	sim_free(&runs);
}

/* A plain LRU list per set (scan, then shift), cachegrind's way, to
 * check the simulator's one-pass lookup and its first-way shortcuts. */
typedef struct lru {
	uint64_t tags[64];
	unsigned sets, assoc;
} lru;

static bool lru_line(lru *c, uint64_t line)
{
	uint64_t *set = c->tags + (line % c->sets) * c->assoc;
	unsigned i = 0;
	while (i < c->assoc && set[i] != line + 1)
		i++;
	bool miss = i == c->assoc;
	if (miss)
		i--;
	memmove(set + 1, set, i * sizeof *set);
	set[0] = line + 1;
	return miss;
}

static bool lru_ref(lru *c, uint64_t addr, unsigned size)
{
	if (size > SIM_MAX_ACCESS)
		size = SIM_MAX_ACCESS;
	uint64_t first = addr / 64, last = (addr + size - 1) / 64;
	bool m = lru_line(c, first);
	if (last != first)
		m = lru_line(c, last) || m;
	return m;
}

/* Accesses fed one by one (sim_feed_data, sim_feed_fetch) count what the
 * plain model counts, with 1, 3 and 4 ways, lines that share sets, and
 * accesses that cross lines: reads, writes and fetches whose lines take
 * every place in their sets' order. */
static void test_feed_equals_plain_lru(void **state)
{
	static const unsigned ways[] = { 1, 3, 4 };
	for (unsigned w = 0; w < 3; w++) {
		sim_config c = { { 4 * 64 * (uint64_t)ways[w], ways[w], 64 },
				 { 4 * 64 * (uint64_t)ways[w], ways[w], 64 },
				 { 8 * 2 * 64, 2, 64 } };
		sim s;
		start(&s, c, false);
		lru i1 = { { 0 }, 4, ways[w] }, d1 = { { 0 }, 4, ways[w] }, ll = { { 0 }, 8, 2 };
		uint64_t want[SIM_NEVENTS] = { 0 };
		sim_feed f;
		sim_feed_init(&f, &s, NULL);
		uint64_t x = 12345;
		for (int k = 0; k < 20000; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			unsigned r = (unsigned)(x >> 33);
			/* 24 lines over 4 sets, any offset, 1 to 20 bytes */
			uint64_t addr = (r % 24) * 64 + (r >> 8) % 64;
			unsigned size = 1 + (r >> 16) % 20, kind = (r >> 24) % 3;
			int ev = kind == SIM_FETCH ? SIM_IR : kind == SIM_READ ? SIM_DR : SIM_DW;
			want[ev]++;
			if (lru_ref(kind == SIM_FETCH ? &i1 : &d1, addr, size)) {
				want[ev + 1]++;
				if (lru_ref(&ll, addr, size))
					want[ev + 2]++;
			}
			/* distinct pcs: no modifies */
			if (kind == SIM_FETCH)
				sim_feed_fetch(&f, addr, addr, size, 1);
			else
				sim_feed_data(&f, 0x1000 + (uint64_t)k, (int)kind, size, addr);
		}
		sim_feed_flush(&f, NULL);
		assert_memory_equal(s.total.ev, want, sizeof want);
		assert_memory_equal(s.d1.tags, d1.tags, 4 * ways[w] * sizeof *d1.tags);
		assert_memory_equal(s.ll.tags, ll.tags, 16 * sizeof *ll.tags);
		sim_free(&s);
	}
}

/* Costs per instruction add up to the totals and are written per pc. */
static void test_costs_per_instruction(void **state)
{
	sim s;
	start(&s, small(), true);
	sim_rec r[] = { { 0x10, 0, 8, SIM_READ, 1 }, { 0x10, 512, 8, SIM_READ, 1 },
			{ 0x20, 0, 8, SIM_WRITE, 1 } };
	run(&s, r, 3);
	assert_int_equal(EV(&s, DR), 2);
	assert_int_equal(EV(&s, DW), 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(sim_write_pcs(&s, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "skel-sim-pcs 1\n"));
	assert_non_null(strstr(buf, "\n10 0 0 0 2 2 2 0 0 0\n"));
	assert_non_null(strstr(buf, "\n20 0 0 0 0 0 0 1 0 0\n"));
	free(buf);
	sim_free(&s);
}

/* Private L1s, one LL: a line one thread loaded misses the other's D1 and
 * hits the LL; with the simulator's L1s (cachegrind's one cache) it hits. */
static void test_private_l1s_share_the_ll(void **state)
{
	char err[SIM_ERR_LEN];
	for (int own = 0; own < 2; own++) {
		sim s;
		sim_thread a, b;
		start(&s, small(), false);
		assert_int_equal(sim_thread_init(&a, &s, own, err), 0);
		assert_int_equal(sim_thread_init(&b, &s, own, err), 0);
		sim_rec r[] = { R(0, 8), I(0x1000, 4) };
		assert_int_equal(sim_batch_thread(&s, &a, r, 2, true, 3), 2);
		assert_int_equal(sim_batch_thread(&s, &b, r, 2, true, 0), 2);
		assert_int_equal(a.total.ev[SIM_D1MR], 1);
		assert_int_equal(a.total.ev[SIM_DLMR], 1);
		assert_int_equal(a.total.ev[SIM_IR], 1 + 3);	/* the hits counted */
		assert_int_equal(b.total.ev[SIM_D1MR], own ? 1 : 0);
		assert_int_equal(b.total.ev[SIM_I1MR], own ? 1 : 0);
		assert_int_equal(b.total.ev[SIM_DLMR], 0);
		assert_int_equal(b.total.ev[SIM_ILMR], 0);
		assert_int_equal(s.total.ev[SIM_DR], 2);
		sim_thread_free(&a);
		sim_thread_free(&b);
		sim_free(&s);
	}
}

static uint64_t reuse_total(const sim_reuse *r)
{
	uint64_t n = r->cold;
	for (int k = 0; k < SIM_REUSE_BUCKETS; k++)
		n += r->hist[k];
	return n;
}

/* Lines A B C A A B: three first accesses, then A at distance 2 (B, C
 * between), A at 0, B at 2 (C, A); buckets 0, [1,2), [2,4), ... */
static void test_reuse_distances_by_hand(void **state)
{
	sim s;
	char err[SIM_ERR_LEN];
	sim_config c = small();
	assert_int_equal(sim_init_reuse(&s, &c, err), 0);
	sim_rec r[] = { R(0, 8), R(64, 8), R(128, 8), R(8, 8), W(0, 4), R(100, 4),
			I(0x1000, 4) };	/* fetches are not data */
	assert_int_equal(sim_batch(&s, r, 7, false), 7);
	assert_int_equal(s.ru.cold, 3);
	assert_int_equal(s.ru.hist[0], 1);
	assert_int_equal(s.ru.hist[1], 0);
	assert_int_equal(s.ru.hist[2], 2);
	/* 8 bytes at 60: line 0 (distance 1: line 1 since), then line 1
	 * (distance 1: line 0 just now) */
	sim_rec x[] = { R(60, 8) };
	sim_batch(&s, x, 1, true);
	assert_int_equal(s.ru.hist[1], 2);
	assert_int_equal(s.ru.hist[0], 1);
	assert_int_equal(reuse_total(&s.ru), 8);
	sim_free(&s);
}

/* Round robin over 1000 lines, three million accesses: past the first
 * round every access is at distance 999 (bucket [512, 1024)), through
 * the renumbering of times when the tree fills up. */
static void test_reuse_round_robin_survives_compaction(void **state)
{
	sim_reuse r;
	sim_reuse_init(&r, 64);
	for (uint64_t i = 0; i < 3000000; i++)
		sim_reuse_line(&r, (i % 1000) * 7);
	assert_int_equal(r.cold, 1000);
	assert_int_equal(r.hist[10], 3000000 - 1000);
	assert_int_equal(reuse_total(&r), 3000000);
	sim_reuse_free(&r);
}

static void test_levels_cachegrind_refuses(void **state)
{
	char err[SIM_ERR_LEN];
	sim_level l;
	assert_int_equal(sim_parse_level("32768,8,64", &l, err), 0);
	assert_int_equal(l.size, 32768);
	assert_int_equal(l.assoc, 8);
	assert_int_equal(l.line, 64);
	assert_int_equal(sim_check_level("D1", &l, err), 0);
	assert_int_equal(sim_parse_level("32768,8", &l, err), -1);
	assert_int_equal(sim_parse_level("32768,8,64,1", &l, err), -1);
	assert_int_equal(sim_parse_level("32k,8,64", &l, err), -1);
	assert_int_equal(sim_parse_level("0,8,64", &l, err), -1);
	l = (sim_level){ 3 * 4096, 4, 64 };	/* 48 sets */
	assert_int_equal(sim_check_level("LL", &l, err), -1);
	assert_non_null(strstr(err, "power of two"));
	l = (sim_level){ 4096, 4, 8 };		/* line below 16 */
	assert_int_equal(sim_check_level("D1", &l, err), -1);
	l = (sim_level){ 49152, 12, 64 };	/* 64 sets of 12 ways */
	assert_int_equal(sim_check_level("D1", &l, err), 0);
}

/* What CPUID gives is turned into levels cachegrind would simulate. */
static void test_default_config_is_simulable(void **state)
{
	sim_config c;
	char err[SIM_ERR_LEN];
	sim_default_config(&c);
	assert_int_equal(sim_check_level("I1", &c.i1, err), 0);
	assert_int_equal(sim_check_level("D1", &c.d1, err), 0);
	assert_int_equal(sim_check_level("LL", &c.ll, err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conflict_misses_at_assoc_plus_one_lines),
		cmocka_unit_test(test_lru_order),
		cmocka_unit_test(test_line_crossing_counts_one_miss),
		cmocka_unit_test(test_crossing_miss_looks_up_both_lines_in_ll),
		cmocka_unit_test(test_write_allocate),
		cmocka_unit_test(test_modify_counts_as_one_read),
		cmocka_unit_test(test_batch_keeps_a_trailing_read),
		cmocka_unit_test(test_ll_sees_l1_misses_only),
		cmocka_unit_test(test_large_accesses_cut_to_16_bytes),
		cmocka_unit_test(test_fetches_share_the_ll),
		cmocka_unit_test(test_fetch_runs_equal_single_fetches),
		cmocka_unit_test(test_feed_equals_plain_lru),
		cmocka_unit_test(test_costs_per_instruction),
		cmocka_unit_test(test_private_l1s_share_the_ll),
		cmocka_unit_test(test_reuse_distances_by_hand),
		cmocka_unit_test(test_reuse_round_robin_survives_compaction),
		cmocka_unit_test(test_levels_cachegrind_refuses),
		cmocka_unit_test(test_default_config_is_simulable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
