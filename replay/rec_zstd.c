/* rec_zstd.c — the recorder's compressor: each thread's VALUES payloads
 * as one zstd stream (format.h, VT_ZVALUES), compressed by its flush.
 *
 * zstd comes from Debian's static libzstd.a, linked into this one object
 * with every symbol of it made local (replay.mk): the program may use its
 * own libzstd, which must not see ours, nor ours its.  zstd's calls to
 * libc (memcpy, memset, malloc ...) are renamed to the rec_z_* below: the
 * flush runs no libc code, which may be patched (rec.h).  Compression
 * runs with a static context in memory the recorder maps, so zstd never
 * allocates; the small allocations of setting it up come from an arena. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "replay/rec.h"

#include <stddef.h>
#include <stdint.h>

#define REC_Z_LEVEL 1
#define REC_Z_HIDDEN __attribute__((visibility("hidden")))

/* ----------------------------------------- libc, as zstd may call it */

REC_Z_HIDDEN void *rec_z_memcpy(void *d, const void *s, size_t n)
{
	unsigned char *a = d;
	const unsigned char *b = s;
	for (; n >= 8; n -= 8, a += 8, b += 8)
		__builtin_memcpy(a, b, 8);
	while (n--)
		*a++ = *b++;
	return d;
}

REC_Z_HIDDEN void *rec_z_memmove(void *d, const void *s, size_t n)
{
	unsigned char *a = d;
	const unsigned char *b = s;
	if (a <= b || a >= b + n)
		return rec_z_memcpy(d, s, n);
	while (n--)
		a[n] = b[n];
	return d;
}

REC_Z_HIDDEN void *rec_z_memset(void *d, int c, size_t n)
{
	unsigned char *a = d;
	uint64_t w = 0x0101010101010101ull * (unsigned char)c;
	for (; n >= 8; n -= 8, a += 8)
		__builtin_memcpy(a, &w, 8);
	while (n--)
		*a++ = (unsigned char)c;
	return d;
}

REC_Z_HIDDEN int rec_z_memcmp(const void *x, const void *y, size_t n)
{
	const unsigned char *a = x, *b = y;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] - b[i];
	return 0;
}

/* Set-up's allocations (a parameter block): from an arena, never freed;
 * nothing allocates once compression runs (static contexts). */
static _Alignas(64) unsigned char rec_z_arena[16384];
static size_t rec_z_used;

REC_Z_HIDDEN void *rec_z_malloc(size_t n)
{
	n = (n + 63) & ~(size_t)63;
	if (n > sizeof rec_z_arena - rec_z_used)
		return NULL;
	void *p = rec_z_arena + rec_z_used;
	rec_z_used += n;
	return p;
}

REC_Z_HIDDEN void *rec_z_calloc(size_t k, size_t n)
{
	if (n && k > SIZE_MAX / n)
		return NULL;
	void *p = rec_z_malloc(k * n);
	return p ? rec_z_memset(p, 0, k * n) : NULL;
}

REC_Z_HIDDEN void rec_z_free(void *p)
{
	(void)p;
}

/* What else libzstd.a refers to (its dictionary builder, its debug
 * output, its tracing hooks) is never called here: harmless stand-ins. */
#define REC_Z_STANDIN(name) \
	REC_Z_HIDDEN long rec_z_##name(void) \
	{ \
		return 0; \
	}
REC_Z_STANDIN(qsort)
REC_Z_STANDIN(clock)
REC_Z_STANDIN(__fprintf_chk)
REC_Z_STANDIN(fflush)
REC_Z_STANDIN(fputc)
REC_Z_STANDIN(fwrite)
REC_Z_STANDIN(ZSTD_trace_compress_begin)	/* 0: not traced */
REC_Z_STANDIN(ZSTD_trace_compress_end)
REC_Z_STANDIN(ZSTD_trace_decompress_begin)
REC_Z_STANDIN(ZSTD_trace_decompress_end)
REC_Z_HIDDEN void *rec_z_stderr;

/* ------------------------------------------------------- compression */

static ZSTD_CCtx_params *rec_z_params;
static size_t rec_z_size;

static int rec_z_set(ZSTD_cParameter p, int v)
{
	return ZSTD_isError(ZSTD_CCtxParams_setParameter(rec_z_params, p, v));
}

/* At start-up (libc usable): the parameters and the size of a thread's
 * context.  Long-distance matching over a 2^VT_ZWINDOW_LOG window finds
 * a later pass over the same data; its table sizes are given, as zstd
 * sizes a static context before it would derive them. */
size_t rec_z_setup(void)
{
	rec_z_params = ZSTD_createCCtxParams();
	if (!rec_z_params || ZSTD_isError(ZSTD_CCtxParams_init(rec_z_params, REC_Z_LEVEL)))
		return 0;
	if (rec_z_set(ZSTD_c_windowLog, VT_ZWINDOW_LOG) ||
	    rec_z_set(ZSTD_c_enableLongDistanceMatching, 1) ||
	    rec_z_set(ZSTD_c_ldmHashLog, VT_ZWINDOW_LOG - 7) ||
	    rec_z_set(ZSTD_c_ldmMinMatch, 64) ||
	    rec_z_set(ZSTD_c_ldmBucketSizeLog, 3) ||
	    rec_z_set(ZSTD_c_ldmHashRateLog, 7) ||
	    rec_z_set(ZSTD_c_checksumFlag, 0))
		return 0;
	rec_z_size = ZSTD_estimateCStreamSize_usingCCtxParams(rec_z_params);
	return rec_z_size;
}

/* A thread's context in `mem` (rec_z_size bytes), or NULL. */
void *rec_z_new(void *mem)
{
	ZSTD_CCtx *c = ZSTD_initStaticCCtx(mem, rec_z_size);
	if (!c || ZSTD_isError(ZSTD_CCtx_setParametersUsingCCtxParams(c, rec_z_params)))
		return NULL;
	return c;
}

/* The next payload starts a new frame (a forked child's stream). */
void rec_z_restart(void *z)
{
	ZSTD_CCtx_reset(z, ZSTD_reset_session_only);
}

size_t rec_z_bound(size_t n)
{
	return ZSTD_compressBound(n);
}

/* n bytes at `in` compressed into `out` (room for rec_z_bound(n)) and
 * flushed: every byte of them can be decompressed from what came out so
 * far.  The bytes written, or 0 on an error (the stream is then lost). */
size_t rec_z_compress(void *z, const void *in, size_t n, void *out, size_t cap)
{
	ZSTD_inBuffer i = { in, n, 0 };
	ZSTD_outBuffer o = { out, cap, 0 };
	size_t left;
	do {
		left = ZSTD_compressStream2(z, &o, &i, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return 0;
	} while (left && o.pos < o.size);
	return left || i.pos != n ? 0 : o.pos;
}
