/* The value trace's integrity (format.h, version 3): every way a file can
 * be damaged that once replayed with status 0 and a different trace is
 * refused, with a message that names the chunk; an intact file reads
 * back exactly. */
#include "tests/testutil.h"
#include "tests/vtutil.h"
#include "replay/vpack.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

enum { NVAL = 3, PER = 4 };	/* VALUES chunks of thread 1, words in each */

typedef struct file {
	uint8_t buf[4096];
	size_t n;
	size_t start;			/* offset of thread 1's START chunk */
	size_t values[NVAL];		/* offsets of its VALUES chunks */
	size_t end_thread;		/* its THREAD_END */
} file;

/* Header, map, thread 0 (START, 2 words, END), thread 1 (START, NVAL
 * chunks of PER words, THREAD_END), END. */
static void make(file *f)
{
	memset(f, 0, sizeof *f);
	uint8_t *b = f->buf;
	size_t at = vt_put_header(b);
	vt_map_entry m = { 0x1000, 0x10, 5, VT_MAP_PROBE };
	at = vt_put_chunk(b, at, VT_TRAMPOLINE_MAP, 0, 0, &m, sizeof m);
	at = vt_put_start(b, at, 0);
	uint64_t w0[2] = { 7, 8 };
	at = vt_put_chunk(b, at, VT_VALUES, 0, 0, w0, sizeof w0);
	f->start = at;
	at = vt_put_start(b, at, 1);
	for (int k = 0; k < NVAL; k++) {
		uint64_t w[PER];
		for (int i = 0; i < PER; i++)
			w[i] = 100 * (uint64_t)k + (uint64_t)i;
		f->values[k] = at;
		at = vt_put_chunk(b, at, VT_VALUES, 1, (uint64_t)k * PER, w, sizeof w);
	}
	f->end_thread = at;
	uint64_t count = NVAL * PER;
	at = vt_put_chunk(b, at, VT_THREAD_END, 1, 0, &count, 8);
	count = 2;
	at = vt_put_chunk(b, at, VT_THREAD_END, 0, 0, &count, 8);
	vt_end e = { 2, 2 + NVAL * PER, VT_END_EXIT, 0 };
	at = vt_put_chunk(b, at, VT_END, 0, 0, &e, sizeof e);
	f->n = at;
}

/* Reads f; returns the error ("" if none) in a static buffer, and checks
 * that the words read before it are a prefix of the intact ones. */
static const char *read_error(const uint8_t *b, size_t n)
{
	static char out[FMT_ERR_LEN];
	char err[FMT_ERR_LEN];
	vtrace t;
	if (vtrace_open_mem(&t, b, n, err) < 0) {
		snprintf(out, sizeof out, "%s", err);
		return out;
	}
	vt_streams s;
	vtrace_streams_from(&t, &s);
	snprintf(out, sizeof out, "%s", s.error);
	const vt_stream *st = vtrace_stream(&s, 1);
	for (size_t i = 0; st && i < st->nvalues; i++)
		assert_int_equal(st->values[i], 100 * (i / PER) + i % PER);
	vtrace_streams_free(&s);
	vtrace_close(&t);
	return out;
}

static void expect(const uint8_t *b, size_t n, const char *what)
{
	const char *e = read_error(b, n);
	if (!strstr(e, what))
		fail_msg("expected an error with '%s', got '%s'", what, e);
}

/* b, built by a test, read without an error */
static void read_whole(const uint8_t *b, size_t n, vtrace *t, vt_streams *s)
{
	char err[FMT_ERR_LEN];
	assert_int_equal(vtrace_open_mem(t, b, n, err), 0);
	vtrace_streams_from(t, s);
	assert_string_equal(s->error, "");
}

/* ------------------------------------------------- compressed VALUES */

enum { ZN = 4, ZPER = 64 };	/* ZVALUES chunks of thread 0, words in each */

static uint64_t zword(int k, int i)
{
	/* chunks 2 and 3 repeat chunks 0 and 1: the stream refers back */
	return (uint64_t)(k % 2) * 1000003u + (uint64_t)i * (uint64_t)i * 7919u;
}

/* A ZVALUES chunk of `nw` words from `first` at b + at, compressed
 * through c (one stream per thread, flushed after each payload, as the
 * recorder does).  Returns the end. */
static size_t put_zvalues(uint8_t *b, size_t at, ZSTD_CCtx *c, uint64_t first,
			  const uint64_t *w, size_t nw)
{
	uint64_t n = nw * 8;
	uint8_t *raw = vt_packed_payload(w, &n, first);
	uint8_t out[4096];
	vt_zvalues h = { first, nw, n, 0 };
	ZSTD_inBuffer in = { raw, n, 0 };
	ZSTD_outBuffer o = { out + sizeof h, sizeof out - sizeof h - 8, 0 };
	assert_int_equal(ZSTD_compressStream2(c, &o, &in, ZSTD_e_flush), 0);
	h.zbytes = o.pos;
	memcpy(out, &h, sizeof h);
	size_t len = sizeof h + o.pos;
	while (len % 8)
		out[len++] = 0;
	free(raw);
	return vt_put_chunk(b, at, VT_ZVALUES, 0, 0, out, len);
}

/* Thread 0: START, nc chunks of ZPER words, THREAD_END, then END; the
 * chunks' offsets in at[].  Chunk k is raw VALUES where bit k of `raw`
 * is set (as the recorder writes a buffer its thread waited for), else
 * ZVALUES, the compressed ones one zstd stream. */
static size_t make_zm(uint8_t *b, size_t *at, int nc, unsigned raw)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	size_t n = vt_put_header(b);
	n = vt_put_start(b, n, 0);
	for (int k = 0; k < nc; k++) {
		uint64_t w[ZPER];
		for (int i = 0; i < ZPER; i++)
			w[i] = zword(k, i);
		at[k] = n;
		if (raw >> k & 1)
			n = vt_put_chunk(b, n, VT_VALUES, 0, (uint64_t)k * ZPER, w, sizeof w);
		else
			n = put_zvalues(b, n, c, (uint64_t)k * ZPER, w, ZPER);
	}
	ZSTD_freeCCtx(c);
	at[nc] = n;
	uint64_t count = (uint64_t)nc * ZPER;
	n = vt_put_chunk(b, n, VT_THREAD_END, 0, 0, &count, 8);
	vt_end e = { 1, count, VT_END_EXIT, 0 };
	return vt_put_chunk(b, n, VT_END, 0, 0, &e, sizeof e);
}

static size_t make_z(uint8_t *b, size_t at[ZN + 1])
{
	return make_zm(b, at, ZN, 0);
}

static void expect_run(const vt_stream *st, int k)
{
	uint64_t w[ZPER + VT_UNPACK_SLACK];
	assert_int_equal(vt_run_words(&st->runs[k], w), 0);
	for (int i = 0; i < ZPER; i++)
		assert_int_equal(w[i], zword(k, i));
}

/* b (nc chunks of thread 0) read whole (copied), then in place, its
 * runs decompressed in the given order (the decompressor starts the
 * stream over for a run before the last one); `raw`: which runs are
 * raw VALUES. */
static void read_back(const uint8_t *b, size_t n, int nc, unsigned raw,
		      const int *order, size_t norder)
{
	vtrace t;
	vt_streams s;
	read_whole(b, n, &t, &s);
	const vt_stream *st = vtrace_stream(&s, 0);
	assert_int_equal(st->nvalues, nc * ZPER);
	for (int i = 0; i < nc * ZPER; i++)
		assert_int_equal(st->values[i], zword(i / ZPER, i % ZPER));
	vtrace_streams_free(&s);
	vtrace_close(&t);
	char err[FMT_ERR_LEN];
	assert_int_equal(vtrace_open_mem(&t, b, n, err), 0);
	vtrace_streams_ref(&t, &s);
	assert_string_equal(s.error, "");
	st = vtrace_stream(&s, 0);
	assert_int_equal(st->nruns, nc);
	for (int k = 0; k < nc; k++)
		assert_int_equal(st->runs[k].z == NULL, (raw >> k & 1) != 0);
	for (size_t k = 0; k < norder; k++)
		expect_run(st, order[k]);
	vtrace_streams_free(&s);
	vtrace_close(&t);
}

static void test_zvalues_read_back(void **state)
{
	(void)state;
	uint8_t b[8192];
	size_t at[ZN + 1];
	size_t n = make_z(b, at);
	/* the repeated chunks cost less than the first ones */
	assert_true(at[3] - at[2] < (at[1] - at[0]) / 2);
	int order[] = { 2, 3, 0, 1, 1, 3 };
	read_back(b, n, ZN, 0, order, sizeof order / sizeof *order);
}

/* A stream mixing the two, Z R Z Z R Z (the recorder writes a buffer
 * its thread waited for raw): the compressed runs before one are found
 * across the raw ones. */
static void test_zvalues_mixed(void **state)
{
	(void)state;
	uint8_t b[16384];
	size_t at[7];
	unsigned raw = 1u << 1 | 1u << 4;
	size_t n = make_zm(b, at, 6, raw);
	int order[] = { 5, 2, 1, 3, 0, 4, 5, 3 };
	read_back(b, n, 6, raw, order, sizeof order / sizeof *order);
}

/* A sealed copy of chunk `off` (its check made again after a change). */
static void reseal(uint8_t *b, size_t off)
{
	vt_chunk_header h;
	memcpy(&h, b + off, sizeof h);
	vt_chunk_seal(&h, NULL, 0, b + off + sizeof h, h.payload_bytes);
	memcpy(b + off, &h, sizeof h);
}

/* Damage that the check does not see (the chunk sealed again): zstd bytes
 * changed, a wrong raw size, no words, sizes past the payload; and a
 * chunk lost from the stream. */
static void test_zvalues_damage_refused(void **state)
{
	(void)state;
	uint8_t b[8192], d[8192];
	size_t at[ZN + 1];
	size_t n = make_z(b, at);
	size_t z1 = at[1] + VT_CHUNK_HEADER_SIZE;	/* chunk 1's vt_zvalues */
	struct { size_t off; uint64_t v; const char *what; } cases[] = {
		{ z1 + sizeof(vt_zvalues) + 3, 0x5a, "does not decompress" },
		{ z1 + 16, 0, "bad head" },		/* raw */
		{ z1 + 16, 8 * ZPER, "does not decompress" },
		{ z1 + 8, 0, "bad head" },		/* words */
		{ z1 + 24, 4096, "bad head" },		/* zbytes */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		memcpy(d, b, n);
		if (i == 0)
			d[cases[i].off] ^= (uint8_t)cases[i].v;
		else
			memcpy(d + cases[i].off, &cases[i].v, 8);
		reseal(d, at[1]);
		expect(d, n, cases[i].what);
	}
	/* chunk 1 lost: chunk 2 starts at the wrong word */
	memcpy(d, b, at[1]);
	memcpy(d + at[1], b + at[2], n - at[2]);
	expect(d, n - (at[2] - at[1]), "starts at word 128, expected 64");
}

static void test_intact_file_reads_back(void **state)
{
	(void)state;
	file f;
	make(&f);
	char err[FMT_ERR_LEN];
	vtrace t;
	assert_int_equal(vtrace_open_mem(&t, f.buf, f.n, err), 0);
	vt_streams s;
	vtrace_streams_ref(&t, &s);
	assert_string_equal(s.error, "");
	assert_true(s.complete);
	assert_int_equal(s.nmap, 1);
	const vt_stream *st = vtrace_stream(&s, 1);
	assert_non_null(st);
	assert_int_equal(st->nvalues, NVAL * PER);
	assert_int_equal(st->nruns, NVAL);
	for (int k = 0; k < NVAL; k++) {
		uint64_t w[PER + VT_UNPACK_SLACK];
		assert_int_equal(vt_run_words(&st->runs[k], w), 0);
		for (int i = 0; i < PER; i++)
			assert_int_equal(w[i], 100 * k + i);
	}
	assert_int_equal(vtrace_stream(&s, 0)->nvalues, 2);
	vtrace_streams_free(&s);
	vtrace_close(&t);
}

/* A thread's START, n0 bytes of `type` chunk at p0, two words, n1 bytes
 * more at p1; its stream read back into s (the caller frees it), the
 * file's length in *whole. */
static const vt_stream *events_around_words(uint8_t *b, size_t *whole, uint32_t type,
					    const void *p0, size_t n0, const void *p1, size_t n1,
					    vt_streams *s)
{
	size_t at = vt_put_header(b);
	at = vt_put_start(b, at, 0);
	at = vt_put_chunk(b, at, type, 0, 0, p0, n0);
	uint64_t w[2] = { 5, 6 };
	at = vt_put_chunk(b, at, VT_VALUES, 0, 0, w, sizeof w);
	*whole = vt_put_chunk(b, at, type, 0, 0, p1, n1);
	char err[FMT_ERR_LEN];
	vtrace t;
	assert_int_equal(vtrace_open_mem(&t, b, *whole, err), 0);
	vtrace_streams_from(&t, s);	/* copies: the file may go */
	vtrace_close(&t);
	assert_string_equal(s->error, "");
	const vt_stream *st = vtrace_stream(s, 0);
	assert_non_null(st);
	assert_int_equal(st->nvalues, 2);
	return st;
}

/* HEAP chunks: a thread's events read back in order, whole (two chunks);
 * a payload that is not whole events, or a HEAP chunk before the
 * thread's START, is refused. */
static void test_heap_events_read_back(void **state)
{
	(void)state;
	uint8_t b[4096];
	vt_heap_event e[3] = {
		{ .word = 0, .seq = 1, .addr = 0x7000, .size = 0x1000, .kind = VT_HEAP_STACK },
		{ .word = 2, .seq = 2, .addr = 0x5000, .size = 24, .site = 0x401000,
		  .kind = VT_HEAP_MALLOC, .block = 1 },
		{ .word = 2, .seq = 3, .addr = 0x5000, .kind = VT_HEAP_FREE },
	};
	size_t whole, at;
	vt_streams s;
	const vt_stream *st = events_around_words(b, &whole, VT_HEAP, e, 2 * sizeof *e, &e[2],
						  sizeof *e, &s);
	assert_int_equal(st->nheap, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&st->heap[i], &e[i], sizeof *e);
	vtrace_streams_free(&s);
	/* 50 bytes: not whole events */
	at = vt_put_chunk(b, whole, VT_HEAP, 0, 0, e, 50);
	expect(b, at, "type 11 with 50 bytes of payload");
	/* thread 1 has no START */
	at = vt_put_chunk(b, whole, VT_HEAP, 1, 0, e, sizeof *e);
	expect(b, at, "before the thread's START chunk");
}

/* TIME chunks: a thread's stamps read back in order between its words;
 * a TIME chunk of another size is refused. */
static void test_time_stamps_read_back(void **state)
{
	(void)state;
	uint8_t b[4096];
	vt_time tm[2] = { { 0, 1000 }, { 2, 250000 } };
	size_t whole;
	vt_streams s;
	const vt_stream *st = events_around_words(b, &whole, VT_TIME, &tm[0], sizeof *tm, &tm[1],
						  sizeof *tm, &s);
	assert_int_equal(st->ntimes, 2);
	assert_memory_equal(st->times, tm, sizeof tm);
	vtrace_streams_free(&s);
	expect(b, vt_put_chunk(b, whole, VT_TIME, 0, 0, tm, sizeof tm),
	       "type 12 with 32 bytes of payload");
}

/* A forked child's file: its PROCESS chunk and every FORK chunk of a
 * parent (with its thread) read back, SPAWNED execs apart from the exec
 * that ends a run; a PROCESS payload of another size is refused. */
static void test_process_and_forks_read_back(void **state)
{
	(void)state;
	uint8_t b[4096];
	size_t at = vt_put_header(b);
	vt_process p = { 42, 41, 17, 1, VT_PROC_FORKED | 3u << 16 };
	at = vt_put_chunk(b, at, VT_PROCESS, 0, 0, &p, sizeof p);
	at = vt_put_start(b, at, 0);
	at = vt_put_start(b, at, 1);
	vt_fork f1 = { 3, 50, 0 }, f2 = { 9, 51, 0 };
	at = vt_put_chunk(b, at, VT_FORK, 1, 0, &f1, sizeof f1);
	at = vt_put_chunk(b, at, VT_FORK, 0, 0, &f2, sizeof f2);
	vt_exec sp = { .stage = VT_EXEC_SPAWNED, .path = "/bin/sh -c true" };
	vt_exec ex = { .stage = VT_EXEC_CALLED, .path = "/bin/echo" };
	at = vt_put_chunk(b, at, VT_EXEC, 0, 0, &sp, sizeof sp);
	at = vt_put_chunk(b, at, VT_EXEC, 0, 0, &ex, sizeof ex);
	at = vt_put_chunk(b, at, VT_EXEC, 0, 0, &sp, sizeof sp);
	size_t whole = at;
	vtrace t;
	vt_streams s;
	read_whole(b, whole, &t, &s);
	assert_memory_equal(&s.process, &p, sizeof p);
	assert_int_equal(VT_PROC_IMAGE(s.process.flags), 3);
	assert_int_equal(s.nforks, 2);
	assert_int_equal(s.forks[0].thread, 1);
	assert_memory_equal(&s.forks[0].f, &f1, sizeof f1);
	assert_int_equal(s.forks[1].thread, 0);
	assert_memory_equal(&s.forks[1].f, &f2, sizeof f2);
	assert_int_equal(s.exec.stage, VT_EXEC_CALLED);
	assert_string_equal(s.exec.path, "/bin/echo");
	assert_int_equal(s.nspawns, 2);
	assert_string_equal(s.spawn.path, "/bin/sh -c true");
	vtrace_streams_free(&s);
	vtrace_close(&t);
	at = vt_put_chunk(b, whole, VT_PROCESS, 0, 0, &p, 16);
	expect(b, at, "type 13 with 16 bytes of payload");
}

/* One bit of a value word, of a thread id, of the header's image_base */
static void test_changed_bits_are_refused(void **state)
{
	(void)state;
	file f;
	make(&f);
	f.buf[f.values[1] + VT_CHUNK_HEADER_SIZE + 24 + 2] ^= 0x10;	/* a word */
	expect(f.buf, f.n, "check mismatch");
	make(&f);
	f.buf[f.values[1] + VT_CHUNK_HEADER_SIZE + 8] ^= 1;	/* their number */
	expect(f.buf, f.n, "check mismatch");
	make(&f);
	f.buf[f.values[2] + 8] ^= 1;	/* the chunk's thread */
	expect(f.buf, f.n, "check mismatch");
	make(&f);
	f.buf[f.values[0] + VT_CHUNK_HEADER_SIZE] ^= 4;	/* its first word's index */
	expect(f.buf, f.n, "check mismatch");
	make(&f);
	f.buf[offsetof(vt_header, image_base)] ^= 0x40;
	expect(f.buf, f.n, "header check mismatch");
	make(&f);
	f.buf[offsetof(vt_header, patch_hash) + 7] ^= 0x80;
	expect(f.buf, f.n, "header check mismatch");
}

/* Whole chunks repeated, dropped or moved: each chunk is intact, their
 * sequence is not. */
static void test_lost_repeated_moved_chunks_are_refused(void **state)
{
	(void)state;
	file f, g;
	make(&f);
	size_t len1 = f.values[2] - f.values[1];
	/* a VALUES chunk twice */
	memcpy(g.buf, f.buf, f.values[2]);
	memcpy(g.buf + f.values[2], f.buf + f.values[1], len1);
	memcpy(g.buf + f.values[2] + len1, f.buf + f.values[2], f.n - f.values[2]);
	expect(g.buf, f.n + len1, "starts at word 4, expected 8 (a chunk lost or repeated)");
	/* one dropped from the middle */
	memcpy(g.buf, f.buf, f.values[1]);
	memcpy(g.buf + f.values[1], f.buf + f.values[2], f.n - f.values[2]);
	expect(g.buf, f.n - len1, "starts at word 8, expected 4");
	/* the last one dropped: THREAD_END's count tells */
	memcpy(g.buf, f.buf, f.values[2]);
	memcpy(g.buf + f.values[2], f.buf + f.end_thread, f.n - f.end_thread);
	expect(g.buf, f.n - (f.end_thread - f.values[2]), "counts 12 words, the VALUES chunks hold 8");
	/* the thread's START dropped */
	size_t slen = f.values[0] - f.start;
	memcpy(g.buf, f.buf, f.start);
	memcpy(g.buf + f.start, f.buf + f.values[0], f.n - f.values[0]);
	expect(g.buf, f.n - slen, "before the thread's START chunk");
	/* START repeated after the values began */
	memcpy(g.buf, f.buf, f.values[1]);
	memcpy(g.buf + f.values[1], f.buf + f.start, slen);
	memcpy(g.buf + f.values[1] + slen, f.buf + f.values[1], f.n - f.values[1]);
	expect(g.buf, f.n + slen, "a second START chunk");
	/* values after the thread's end */
	size_t vlen = f.values[1] - f.values[0];
	memcpy(g.buf, f.buf, f.end_thread + VT_CHUNK_HEADER_SIZE + 8);
	memcpy(g.buf + f.end_thread + VT_CHUNK_HEADER_SIZE + 8, f.buf + f.values[0], vlen);
	memcpy(g.buf + f.end_thread + VT_CHUNK_HEADER_SIZE + 8 + vlen,
	       f.buf + f.end_thread + VT_CHUNK_HEADER_SIZE + 8,
	       f.n - f.end_thread - VT_CHUNK_HEADER_SIZE - 8);
	expect(g.buf, f.n + vlen, "after the thread's end");
}

/* A file of the previous format is refused as such, not misread. */
static void test_older_version_refused(void **state)
{
	(void)state;
	file f;
	make(&f);
	vt_header h;
	memcpy(&h, f.buf, sizeof h);
	h.version = 3;	/* runs of outcomes in one code */
	vt_header_seal(&h);
	memcpy(f.buf, &h, sizeof h);
	expect(f.buf, f.n, "unsupported version 3 (want 4): recorded by an older skel");
}

/* Worked by hand from format.h (version 4): a code per word, two a
 * byte, the first in the low half; data: the zigzag's bytes (no eight
 * outcomes in a row here: see the run below). */
static const uint64_t pk_words[] = {
	0,			/* code 0, no data */
	1, 1,			/* code 9 each (the word 1), no data */
	0,			/* code 0 */
	5,			/* z 10: code 1, 0x0a */
	(uint64_t)-3,		/* z 5: code 1, 0x05 */
	300,			/* z 600 = 0x258: code 2, 0x58 0x02 */
	1ull << 40,		/* z 2^41, 42 bits: code 6, 00 00 00 00 00 02 */
	(uint64_t)-1,		/* z 1: code 1, 0x01 */
	1ull << 63,		/* z 2^64 - 1: code 8, eight 0xff */
	1,			/* code 9, and the odd word's other half 0 */
};
static const uint8_t pk_codes[] = { 0x90, 0x09, 0x11, 0x62, 0x81, 0x09 };
static const uint8_t pk_data[] = {
	0x0a, 0x05, 0x58, 0x02, 0, 0, 0, 0, 0, 0x02, 0x01,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};
enum { PK_N = sizeof pk_words / 8 };

/* A payload of n words, tokens, codes and data, padded; its size. */
static size_t pk_payload(uint8_t *p, uint64_t n, uint32_t tokens, const uint8_t *codes,
			 const uint8_t *data, uint32_t ndata)
{
	vt_packed h = { 0, n, tokens, ndata };
	memcpy(p, &h, sizeof h);
	memcpy(p + sizeof h, codes, (tokens + 1) / 2);
	size_t at = vt_packed_head(tokens);
	memcpy(p + at, data, ndata);
	at += ndata;
	while (at % 8)
		p[at++] = 0;
	return at;
}

static void test_pack_tokens_by_hand(void **state)
{
	(void)state;
	uint8_t codes[PK_N], data[PK_N * VT_PACK_MAX + 8], p[256];
	uint32_t tokens, ndata;
	assert_int_equal(vt_pack(pk_words, PK_N, codes, data, sizeof data - 8, &tokens, &ndata),
			 PK_N);
	assert_int_equal(tokens, 2 * sizeof pk_codes);
	assert_int_equal(ndata, sizeof pk_data);
	assert_memory_equal(codes, pk_codes, sizeof pk_codes);
	assert_memory_equal(data, pk_data, sizeof pk_data);
	uint64_t w[PK_N + 16 + VT_UNPACK_SLACK];
	size_t n = pk_payload(p, PK_N, 2 * sizeof pk_codes, pk_codes, pk_data, sizeof pk_data);
	assert_int_equal(n, 56);	/* 24 + 6 codes + 19 data, padded */
	assert_int_equal(vt_values_unpack(p, n, w, PK_N), 0);
	assert_memory_equal(w, pk_words, sizeof pk_words);
	/* eight outcomes 1 0 1 1 0 0 0 1: one code byte 0xff and the data
	 * byte 0b10001101; then 5 (code 1, 0x0a) alone: code byte 0x01 */
	uint64_t run[9] = { 1, 0, 1, 1, 0, 0, 0, 1, 5 };
	assert_int_equal(vt_pack(run, 9, codes, data, sizeof data - 8, &tokens, &ndata), 9);
	assert_int_equal(tokens, 4);
	assert_int_equal(codes[0], 0xff);
	assert_int_equal(codes[1], 0x01);
	assert_int_equal(ndata, 2);
	assert_int_equal(data[0], 0x8d);
	assert_int_equal(data[1], 0x0a);
	n = pk_payload(p, 9, 4, codes, data, 2);
	assert_int_equal(vt_values_unpack(p, n, w, 9), 0);
	assert_memory_equal(w, run, sizeof run);
	/* seven outcomes then 5: no run (8 words, not all 0 or 1): four
	 * pairs, codes 9 0 | 9 9 | 0 0 | 9 1 */
	uint64_t seven[8] = { 1, 0, 1, 1, 0, 0, 1, 5 };
	assert_int_equal(vt_pack(seven, 8, codes, data, sizeof data - 8, &tokens, &ndata), 8);
	assert_int_equal(tokens, 8);
	const uint8_t seven_codes[] = { 0x09, 0x99, 0x00, 0x19 };
	assert_memory_equal(codes, seven_codes, 4);
	assert_int_equal(ndata, 1);
	/* 24 bytes of room: a pair is packed only with room for its code
	 * byte and 2 * VT_PACK_MAX data bytes: 0 1, 1 0, 5 -3 (2 bytes),
	 * 300 2^40 (8 more: 3 + 1 + 10 + 16 > 24 stops the next) */
	assert_int_equal(vt_pack(pk_words, PK_N, codes, data, 24, &tokens, &ndata), 8);
	assert_int_equal(tokens, 8);
	assert_int_equal(ndata, 10);
}

/* Streams like the recorder's: outcome runs of every length at every
 * offset, zeros, ones, small and large differences of both signs, the
 * extremes; from a fixed LCG. */
static uint64_t pk_lcg;
static uint64_t pk_next(void)
{
	pk_lcg = pk_lcg * 6364136223846793005ull + 1442695040888963407ull;
	return pk_lcg >> 11;
}

static void pk_stream(uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint64_t r = pk_next();
		size_t len = 1 + (size_t)(r >> 8) % 19;
		for (size_t j = 0; j < len && i < n; j++, i++) {
			uint64_t v = pk_next();
			switch (r % 7) {
			case 0: case 1: w[i] = v & 1; break;		/* outcomes */
			case 2: w[i] = (uint64_t)((int64_t)(v % 255) - 127); break;
			case 3: w[i] = (uint64_t)((int64_t)(v % 65535) - 32767); break;
			case 4: w[i] = v << (v % 23); break;		/* any length */
			case 5: w[i] = (v & 3) == 0 ? UINT64_MAX : (v & 3) == 1 ? (1ull << 63)
					: (v & 3) == 2 ? (1ull << 63) - 1 : 0; break;
			default: w[i] = (v & 7) ? 0 : 1; break;	/* mostly 0 */
			}
		}
	}
}

/* n words packed with room (and the payload that makes): the same words
 * come back. */
static void pk_round_trip(const uint64_t *w, size_t n, size_t used, const uint8_t *codes,
			  uint32_t tokens, const uint8_t *data, uint32_t ndata)
{
	uint8_t *p = malloc(sizeof(vt_packed) + n / 2 + 8 + n * VT_PACK_MAX + 16);
	uint64_t *back = malloc((n + VT_UNPACK_SLACK + 1) * 8);
	size_t m = pk_payload(p, used, tokens, codes, data, ndata);
	assert_int_equal(vt_values_unpack(p, m, back, used), 0);
	assert_memory_equal(back, w, used * 8);
	free(p);
	free(back);
}

/* vt_pack (the reader's and the recorder's fallback) gives back every
 * word, whole or cut short by its room, on streams of any length. */
static void test_pack_round_trips(void **state)
{
	(void)state;
	enum { N = 4099 };
	uint64_t *w = malloc(N * 8);
	uint8_t *codes = malloc(N / 2 + 8), *data = malloc(N * VT_PACK_MAX + 16);
	pk_lcg = 42;
	for (int round = 0; round < 40; round++) {
		size_t n = round < 20 ? (size_t)round : N - (size_t)(pk_next() % 300);
		size_t room = round % 3 ? N * VT_PACK_MAX + N / 2 + 1 : 9 + pk_next() % 3000;
		pk_stream(w, n);
		uint32_t tokens, ndata;
		size_t used = vt_pack(w, n, codes, data, room, &tokens, &ndata);
		assert_true(used <= n);
		assert_true(tokens / 2 + ndata <= room);
		if (room > N * VT_PACK_MAX)
			assert_int_equal(used, n);
		pk_round_trip(w, n, used, codes, tokens, data, ndata);
	}
	/* an odd last word needs room for its code byte and its own data
	 * only: one word of any size in 9 bytes */
	uint64_t big = UINT64_MAX - 5;
	uint32_t tokens, ndata;
	assert_int_equal(vt_pack(&big, 1, codes, data, 9, &tokens, &ndata), 1);
	assert_int_equal(ndata, 1);
	assert_int_equal(vt_pack(&big, 1, codes, data, 1, &tokens, &ndata), 0);
	free(w);
	free(codes);
	free(data);
}

/* The vector packer (vpack.h, the recorder's) makes the very bytes
 * vt_pack makes, on the same streams and rooms. */
static void test_pack_vector_equals_scalar(void **state)
{
	(void)state;
	if (!vt_pack_simd_ok())
		skip();	/* this processor has no AVX-512 VBMI2: nothing to compare */
	enum { N = 4099 };
	uint64_t *w = malloc(N * 8);
	uint8_t *c1 = malloc(N / 2 + 8), *c2 = malloc(N / 2 + 8);
	uint8_t *d1 = malloc(N * VT_PACK_MAX + 16), *d2 = malloc(N * VT_PACK_MAX + 16);
	pk_lcg = 7;
	for (int round = 0; round < 200; round++) {
		size_t n = round < 40 ? (size_t)round : N - (size_t)(pk_next() % 1000);
		size_t room = round % 4 ? N * VT_PACK_MAX + N / 2 + 1 : 9 + pk_next() % 3000;
		pk_stream(w, n);
		uint32_t t1, t2, n1, n2;
		size_t u1 = vt_pack(w, n, c1, d1, room, &t1, &n1);
		size_t u2 = vt_pack_fast(true, w, n, c2, d2, room, &t2, &n2);
		assert_int_equal(u1, u2);
		assert_int_equal(t1, t2);
		assert_int_equal(n1, n2);
		assert_memory_equal(c1, c2, (t1 + 1) / 2);
		assert_memory_equal(d1, d2, n1);
		pk_round_trip(w, n, u2, c2, t2, d2, n2);
	}
	free(w);
	free(c1);
	free(c2);
	free(d1);
	free(d2);
}

/* A payload of w[0..n) with runs wherever eight outcomes start (not only
 * where vt_pack puts them: files of earlier packers), or, with skip, at
 * some such places only. */
static size_t pk_any_layout(uint8_t *p, const uint64_t *w, size_t n, int skip)
{
	uint8_t codes[4200], data[4200 * VT_PACK_MAX + 16];
	size_t t = 0, d = 0, i = 0;
	while (i < n) {
		uint64_t o = 0;
		for (size_t j = i; j < i + 8 && j < n; j++)
			o |= w[j];
		if (i + 8 <= n && o <= 1 && !(skip && pk_next() % 3 == 0)) {
			uint8_t bits = 0;
			for (unsigned j = 0; j < 8; j++)
				bits |= (uint8_t)(w[i + j] << j);
			codes[t++] = VT_CODE_RUN;
			data[d++] = bits;
			i += 8;
			continue;
		}
		codes[t++] = vt_pack_pair(vt_zigzag(w[i]), i + 1 < n ? vt_zigzag(w[i + 1]) : 0,
					  data, &d);
		i += 2;
	}
	return pk_payload(p, n, (uint32_t)(2 * t), codes, data, (uint32_t)d);
}

/* The vector reader (vpack.h, the replay's) gives the words vt_values_unpack
 * gives, and refuses what it refuses: payloads of any layout, whole and
 * with a byte changed. */
static void test_unpack_vector_equals_scalar(void **state)
{
	(void)state;
	if (!vt_pack_simd_ok())
		skip();	/* this processor has no AVX-512 VBMI2: nothing to compare */
	enum { N = 4099 };
	uint64_t *w = malloc(N * 8), *a = malloc((N + VT_UNPACK_SLACK) * 8);
	uint64_t *b = malloc((N + VT_UNPACK_SLACK) * 8);
	uint8_t *p = malloc(sizeof(vt_packed) + N + N * VT_PACK_MAX + 64);
	pk_lcg = 11;
	unsigned refused = 0;
	for (int round = 0; round < 300; round++) {
		size_t n = round < 40 ? (size_t)round : N - (size_t)(pk_next() % 1500);
		pk_stream(w, n);
		size_t m = pk_any_layout(p, w, n, round % 2);
		assert_int_equal(vt_values_unpack(p, m, a, n), 0);
		assert_int_equal(vt_values_unpack_fast(true, p, m, b, n), 0);
		assert_memory_equal(a, w, n * 8);
		assert_memory_equal(b, w, n * 8);
		for (int k = 0; k < 4 && m > sizeof(vt_packed); k++) {
			size_t at = sizeof(vt_packed) + pk_next() % (m - sizeof(vt_packed));
			uint8_t was = p[at];
			p[at] = (uint8_t)(was ^ (1u << (pk_next() % 8)));
			int ra = vt_values_unpack(p, m, a, n), rb = vt_values_unpack_fast(true, p, m, b, n);
			assert_int_equal(ra, rb);
			if (!ra)
				assert_memory_equal(a, b, n * 8);
			refused += ra != 0;
			p[at] = was;
		}
	}
	assert_true(refused > 100);	/* the damage cases were not all harmless */
	free(w);
	free(a);
	free(b);
	free(p);
}

/* The unpacked form (VT_TOKENS_RAW, the recorder's under valgrind):
 * its words as they are; any other size, data count or word count is
 * refused. */
static void test_unpack_raw_words(void **state)
{
	(void)state;
	uint8_t p[sizeof(vt_packed) + sizeof pk_words + 8];
	uint64_t w[PK_N + VT_UNPACK_SLACK];
	vt_packed h = { 0, PK_N, VT_TOKENS_RAW, 0 };
	memcpy(p, &h, sizeof h);
	memcpy(p + sizeof h, pk_words, sizeof pk_words);
	size_t n = sizeof h + sizeof pk_words;
	assert_int_equal(vt_values_unpack(p, n, w, PK_N), 0);
	assert_memory_equal(w, pk_words, sizeof pk_words);
	assert_int_equal(vt_values_unpack(p, n, w, PK_N - 1), -1);	/* not its words */
	assert_int_equal(vt_values_unpack(p, n - 8, w, PK_N), -1);	/* a word short */
	assert_int_equal(vt_values_unpack(p, n + 8, w, PK_N), -1);	/* a word more */
	assert_int_equal(vt_values_unpack(p, n - 1, w, PK_N), -1);	/* not whole words */
	h.data = 8;
	memcpy(p, &h, sizeof h);
	assert_int_equal(vt_values_unpack(p, n, w, PK_N), -1);	/* data counted */
}

/* Payloads that are not what vt_pack makes are refused. */
static void test_unpack_refuses_bad_payloads(void **state)
{
	(void)state;
	uint64_t w[PK_N + VT_UNPACK_SLACK];
	uint8_t p[256];
	size_t n = pk_payload(p, PK_N, 2 * sizeof pk_codes, pk_codes, pk_data, sizeof pk_data);
	assert_int_equal(vt_values_unpack(p, n, w, PK_N - 1), -1);	/* not its words */
	p[24 + sizeof pk_codes + sizeof pk_data] = 1;	/* padding not zero */
	assert_int_equal(vt_values_unpack(p, n, w, PK_N), -1);
	n = pk_payload(p, PK_N, 2 * sizeof pk_codes, pk_codes, pk_data, sizeof pk_data);
	memset(p + n, 0, 8);
	assert_int_equal(vt_values_unpack(p, n + 8, w, PK_N), -1);	/* 8 bytes more */
	assert_int_equal(vt_values_unpack(p, 16, w, PK_N), -1);	/* cut */
	/* a code byte short: the last word has no code */
	n = pk_payload(p, PK_N, 2 * sizeof pk_codes - 2, pk_codes, pk_data, sizeof pk_data - 8);
	assert_int_equal(vt_values_unpack(p, n, w, PK_N), -1);
	const uint8_t c10[] = { 0x0a }, odd[] = { 0x10 }, c1[] = { 0x01 }, c11[] = { 0x11 };
	const uint8_t two[] = { 0x05, 0x00 }, runc[] = { 0xff };
	n = pk_payload(p, 1, 2, c10, two, 0);	/* code 10 */
	assert_int_equal(vt_values_unpack(p, n, w, 1), -1);
	n = pk_payload(p, 1, 2, odd, two, 0);	/* a code after the odd last word */
	assert_int_equal(vt_values_unpack(p, n, w, 1), -1);
	n = pk_payload(p, 1, 2, c1, two, 2);	/* a data byte left over */
	assert_int_equal(vt_values_unpack(p, n, w, 1), -1);
	n = pk_payload(p, 2, 2, c11, two, 1);	/* the second word's byte missing */
	assert_int_equal(vt_values_unpack(p, n, w, 2), -1);
	n = pk_payload(p, 7, 2, runc, two, 1);	/* a run of eight for seven words */
	assert_int_equal(vt_values_unpack(p, n, w, 7), -1);
	n = pk_payload(p, 8, 2, runc, two, 0);	/* a run without its data byte */
	assert_int_equal(vt_values_unpack(p, n, w, 8), -1);
	n = pk_payload(p, 8, 2, runc, two, 1);	/* and whole: 0b101 */
	assert_int_equal(vt_values_unpack(p, n, w, 8), 0);
	assert_int_equal(w[0], 1);
	assert_int_equal(w[1], 0);
	assert_int_equal(w[2], 1);
	assert_int_equal(w[3], 0);
	n = pk_payload(p, 1, 2, c1, two, 1);	/* and whole */
	assert_int_equal(vt_values_unpack(p, n, w, 1), 0);
	assert_int_equal(w[0], (uint64_t)-3);
}

/* ------------------------------------------------------- MAP_REF */

/* A trampoline map by reference (format.h, vt_map_ref): its entries are
 * read from the file it names, moved by its base and given its object;
 * the file replaced by one with the same entries, they are still taken;
 * an entry changed, or the file gone, the reader refuses it and names
 * the file. */
static void put_map_file(const char *path, const vt_map_entry *e, size_t n, size_t junk)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	uint8_t pad[32] = { 1 };
	assert_int_equal(fwrite(pad, 1, 16, f), 16);
	assert_int_equal(fwrite(e, sizeof *e, n, f), n);
	assert_int_equal(fwrite(pad, 1, junk, f), junk);
	assert_int_equal(fclose(f), 0);
}

static void test_map_ref_resolved_and_checked(void **state)
{
	(void)state;
	char path[] = "/tmp/skel-test-mapref-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	/* 16 bytes of something else, then two entries (relative, no object) */
	vt_map_entry e[2] = { { 0x40, 0x1234, 5, VT_MAP_DISPLACED },
			      { 0x80, 0x2000, 9, VT_MAP_PROBE } };
	put_map_file(path, e, 2, 0);
	uint8_t pay[sizeof(vt_map_ref) + 64] = { 0 };
	size_t plen = strlen(path);
	vt_map_ref r = { 0x7f0000000000ull, 16, 2, vt_map_sum(e, 2), 3, (uint32_t)plen };
	memcpy(pay, &r, sizeof r);
	memcpy(pay + sizeof r, path, plen);
	static uint8_t b[4096];
	size_t at = vt_put_header(b);
	at = vt_put_chunk(b, at, VT_MAP_REF, 0, 0, pay, sizeof r + ((plen + 7) & ~(size_t)7));
	at = vt_put_start(b, at, 0);
	vt_end end = { 1, 0, VT_END_EXIT, 0 };
	at = vt_put_chunk(b, at, VT_END, 0, 0, &end, sizeof end);
	vtrace t;
	vt_streams s;
	char err[FMT_ERR_LEN];
	for (int pass = 0; pass < 2; pass++) {
		read_whole(b, at, &t, &s);
		assert_int_equal(s.nmap, 0);	/* not read until asked */
		assert_int_equal(vt_maps_resolve(&s, err), 0);
		assert_int_equal(s.nmap, 2);
		assert_int_equal(s.map[0].tramp, 0x7f0000000040ull);
		assert_int_equal(s.map[0].pc, 0x1234);
		assert_int_equal(s.map[0].len, 5);
		assert_int_equal(VT_MAP_KIND(s.map[0].kind), VT_MAP_DISPLACED);
		assert_int_equal(VT_MAP_OBJECT(s.map[0].kind), 3);
		assert_int_equal(s.map[1].tramp, 0x7f0000000080ull);
		assert_int_equal(VT_MAP_KIND(s.map[1].kind), VT_MAP_PROBE);
		vtrace_streams_free(&s);
		vtrace_close(&t);
		/* another file there, longer, with the same entries */
		assert_int_equal(unlink(path), 0);
		put_map_file(path, e, 2, 24);
	}
	/* an entry changed */
	vt_map_entry e2[2] = { e[0], e[1] };
	e2[0].pc = 0x1235;
	put_map_file(path, e2, 2, 0);
	read_whole(b, at, &t, &s);
	assert_int_equal(vt_maps_resolve(&s, err), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "changed since the recording"));
	vtrace_streams_free(&s);
	vtrace_close(&t);
	/* cut short */
	put_map_file(path, e, 1, 0);
	read_whole(b, at, &t, &s);
	assert_int_equal(vt_maps_resolve(&s, err), -1);
	assert_non_null(strstr(err, "changed since the recording"));
	vtrace_streams_free(&s);
	vtrace_close(&t);
	/* counts the file cannot hold (2^40 entries: a read past the map's
	 * end; 2^62: 24 n wraps to 0 and the sum is of nothing) */
	put_map_file(path, e, 2, 0);
	for (int k = 0; k < 2; k++) {
		vt_map_ref big = r;
		big.n = k ? 1ull << 62 : 1ull << 40;
		big.sum = vt_map_sum(e, 0);
		static uint8_t bb[4096];
		memcpy(pay, &big, sizeof big);
		size_t bat = vt_put_header(bb);
		vt_map_entry m0 = { 0x1000, 0x10, 5, VT_MAP_DISPLACED };
		bat = vt_put_chunk(bb, bat, VT_TRAMPOLINE_MAP, 0, 0, &m0, sizeof m0);
		bat = vt_put_chunk(bb, bat, VT_MAP_REF, 0, 0, pay,
				   sizeof big + ((plen + 7) & ~(size_t)7));
		bat = vt_put_start(bb, bat, 0);
		read_whole(bb, bat, &t, &s);
		assert_int_equal(s.nmap, 1);
		assert_int_equal(vt_maps_resolve(&s, err), -1);
		assert_non_null(strstr(err, "changed since the recording"));
		assert_int_equal(s.nmap, 1);
		vtrace_streams_free(&s);
		vtrace_close(&t);
	}
	memcpy(pay, &r, sizeof r);
	/* and gone */
	unlink(path);
	read_whole(b, at, &t, &s);
	assert_int_equal(vt_maps_resolve(&s, err), -1);
	assert_non_null(strstr(err, "gone"));
	vtrace_streams_free(&s);
	vtrace_close(&t);
	/* a path length the payload does not hold: the chunk is corrupt */
	r.path_len = 200;
	memcpy(pay, &r, sizeof r);
	at = vt_put_header(b);
	at = vt_put_chunk(b, at, VT_MAP_REF, 0, 0, pay, sizeof r + ((plen + 7) & ~(size_t)7));
	at = vt_put_start(b, at, 0);
	assert_string_not_equal(read_error(b, at), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact_file_reads_back),
		cmocka_unit_test(test_map_ref_resolved_and_checked),
		cmocka_unit_test(test_changed_bits_are_refused),
		cmocka_unit_test(test_lost_repeated_moved_chunks_are_refused),
		cmocka_unit_test(test_older_version_refused),
		cmocka_unit_test(test_pack_tokens_by_hand),
		cmocka_unit_test(test_pack_round_trips),
		cmocka_unit_test(test_pack_vector_equals_scalar),
		cmocka_unit_test(test_unpack_vector_equals_scalar),
		cmocka_unit_test(test_unpack_raw_words),
		cmocka_unit_test(test_unpack_refuses_bad_payloads),
		cmocka_unit_test(test_heap_events_read_back),
		cmocka_unit_test(test_time_stamps_read_back),
		cmocka_unit_test(test_process_and_forks_read_back),
		cmocka_unit_test(test_zvalues_read_back),
		cmocka_unit_test(test_zvalues_mixed),
		cmocka_unit_test(test_zvalues_damage_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
