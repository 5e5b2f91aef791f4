/* vtrace.c — reads value-trace files (format.h, docs/formats.md).
 *
 * The file is mapped (or, when it is not a regular file, read) whole and
 * walked chunk by chunk.  Anything that does not
 * fit — a chunk header or payload running past the end, a wrong magic, a
 * fixed-size payload of the wrong size — stops the walk with a message that
 * names the offset; every chunk before it is still handed out, because a
 * crashed or killed recorder leaves exactly such a prefix. */
#include "replay/format.h"
#include "replay/vpack.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

static int vt_fail(char err[FMT_ERR_LEN], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, FMT_ERR_LEN, fmt, ap);
	va_end(ap);
	return -1;
}

static int vt_header_check(vtrace *t, char err[FMT_ERR_LEN])
{
	if (t->size < 8 || memcmp(t->data, VT_MAGIC, 8) != 0)
		return vt_fail(err, "bad magic: not a skel value trace");
	if (t->size < VT_HEADER_SIZE)
		return vt_fail(err, "truncated header (%zu of %d bytes)",
			       t->size, VT_HEADER_SIZE);
	memcpy(&t->header, t->data, sizeof t->header);
	if (t->header.version != VT_VERSION)
		return vt_fail(err, "unsupported version %u (want %d)%s",
			       t->header.version, VT_VERSION,
			       t->header.version < VT_VERSION
			       ? ": recorded by an older skel; record it again" : "");
	vt_header sealed = t->header;
	vt_header_seal(&sealed);
	if (sealed.check != t->header.check)
		return vt_fail(err, "header check mismatch: the header is damaged");
	if (t->header.id_len > SKEL_ID_MAX)
		return vt_fail(err, "bad header: identity of %u bytes",
			       t->header.id_len);
	t->pos = VT_HEADER_SIZE;
	return 0;
}

int vtrace_open_mem(vtrace *t, const void *data, size_t size,
		    char err[FMT_ERR_LEN])
{
	memset(t, 0, sizeof *t);
	t->data = malloc(size ? size : 1);
	if (!t->data)
		return vt_fail(err, "out of memory");
	memcpy(t->data, data, size);
	t->size = size;
	if (vt_header_check(t, err)) {
		vtrace_close(t);
		return -1;
	}
	return 0;
}

/* Reads a file that cannot be mapped (a pipe, say) into memory. */
static int vt_read_all(vtrace *t, FILE *f, char err[FMT_ERR_LEN])
{
	size_t cap = 1 << 16, len = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			uint8_t *n = realloc(buf, cap *= 2);
			if (!n)
				free(buf);
			buf = n;
		}
	}
	if (!buf)
		return vt_fail(err, "out of memory");
	if (ferror(f)) {
		free(buf);
		return vt_fail(err, "read error");
	}
	t->data = buf;
	t->size = len;
	return 0;
}

int vtrace_open(vtrace *t, const char *path, char err[FMT_ERR_LEN])
{
	memset(t, 0, sizeof *t);
	FILE *f = fopen(path, "rb");
	if (!f)
		return vt_fail(err, "%s", strerror(errno));
	struct stat sb;
	int rc = 0;
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		/* a regular file is mapped: replay reads the words in place;
		 * the pages read are given back behind the reader
		 * (vt_release), so memory stays flat whatever the size */
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE,
			       fileno(f), 0);
		if (m != MAP_FAILED)
			madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL);
		if (m == MAP_FAILED) {
			rc = vt_fail(err, "cannot map: %s", strerror(errno));
		} else {
			t->data = m;
			t->size = (size_t)sb.st_size;
			t->mapped = true;
		}
	} else {
		rc = vt_read_all(t, f, err);
	}
	fclose(f);
	if (rc)
		return -1;
	if (vt_header_check(t, err)) {
		vtrace_close(t);
		return -1;
	}
	return 0;
}

/* The payload sizes the format fixes; -1 = any multiple of `unit`. */
static int vt_payload_ok(const vt_chunk_header *h, const uint8_t *payload)
{
	switch (h->type) {
	case VT_THREAD_START:
		return h->payload_bytes == sizeof(vt_thread_start) ||
		       h->payload_bytes == VT_THREAD_START_OLD;
	case VT_VALUES:
		return h->payload_bytes >= sizeof(vt_packed) && h->payload_bytes % 8 == 0;
	case VT_ZVALUES:
		return h->payload_bytes >= sizeof(vt_zvalues) && h->payload_bytes % 8 == 0;
	case VT_THREAD_END:
		return h->payload_bytes == 8 || h->payload_bytes == 16;
	case VT_TRAMPOLINE_MAP:
		return h->payload_bytes % sizeof(vt_map_entry) == 0;
	case VT_END:
		return h->payload_bytes == sizeof(vt_end);
	case VT_CRASH:
		return h->payload_bytes == sizeof(vt_crash);
	case VT_SIGNAL:
		return h->payload_bytes == sizeof(vt_signal);
	case VT_EXEC:
		return h->payload_bytes == sizeof(vt_exec);
	case VT_FORK:
		return h->payload_bytes == sizeof(vt_fork);
	case VT_PROCESS:
		return h->payload_bytes == sizeof(vt_process);
	case VT_HEAP:
		return h->payload_bytes % sizeof(vt_heap_event) == 0;
	case VT_TIME:
	case VT_TP_MOVED:
		return h->payload_bytes == sizeof(vt_time);
	case VT_HANDLER:
		return h->payload_bytes == sizeof(vt_handler);
	case VT_OBJECTS:
		return h->payload_bytes >= 8 &&
		       (h->payload_bytes - 8) % sizeof(vt_object) == 0;
	case VT_MAP_REF: {
		vt_map_ref r;
		if (h->payload_bytes < sizeof r || h->payload_bytes % 8)
			return 0;
		memcpy(&r, payload, sizeof r);
		return r.path_len && r.path_len < 4096 &&
		       h->payload_bytes == sizeof r + ((r.path_len + 7ull) & ~7ull);
	}
	case VT_LINKS: {
		uint32_t hd[2];
		if (h->payload_bytes < 8)
			return 0;
		memcpy(hd, payload, 8);
		return h->payload_bytes == 8 + 8ull * hd[1];
	}
	default:
		return 0;
	}
}

int vt_unsummed_ok, vt_unsummed_seen;

int vt_chunk_verify(const vt_chunk_header *h, const uint8_t *payload,
		    uint64_t off, char err[FMT_ERR_LEN])
{
	if (h->magic != VT_CHUNK_MAGIC)
		return vt_fail(err, "bad chunk magic at offset %" PRIu64, off);
	if (!vt_payload_ok(h, payload))
		return vt_fail(err, "bad chunk at offset %" PRIu64 ": type %u with "
			       "%" PRIu64 " bytes of payload", off, h->type,
			       h->payload_bytes);
	vt_chunk_header c = *h;
	uint64_t summed = h->payload_bytes;
	if (h->type == VT_VALUES) {
		vt_packed pk;
		memcpy(&pk, payload, sizeof pk);
		if (pk.tokens == VT_TOKENS_RAW_UNSUMMED) {
			if (!vt_unsummed_ok) {
				vt_unsummed_seen = 1;
				return vt_fail(err, "chunk at offset %" PRIu64 " (thread %u): "
					       "values written by skel check's run under valgrind, "
					       "without a checksum over them: only skel check "
					       "replays them", off, h->thread);
			}
			summed = sizeof pk;	/* the header and vt_packed */
		}
	}
	vt_chunk_seal(&c, NULL, 0, payload, summed);
	if (c.check != h->check)
		return vt_fail(err, "chunk at offset %" PRIu64 " (type %u, thread %u): "
			       "check mismatch, the chunk is damaged", off, h->type,
			       h->thread);
	return 0;
}

/* A ZVALUES head: sizes that fit the payload and a word count its VALUES
 * payload can hold. */
static int vt_zhead_check(const vt_chunk_header *h, const uint8_t *payload,
			  uint64_t off, char err[FMT_ERR_LEN])
{
	vt_zvalues z;
	memcpy(&z, payload, sizeof z);
	if (z.raw < sizeof(vt_packed) || z.raw > VT_ZRAW_MAX || z.raw % 8 ||
	    z.zbytes > h->payload_bytes - sizeof z ||
	    h->payload_bytes - sizeof z - z.zbytes >= 8 || !z.words ||
	    z.words > 6 * z.raw)
		return vt_fail(err, "thread %u: the ZVALUES chunk at offset %" PRIu64
			       " has a bad head (%" PRIu64 " words in %" PRIu64
			       " bytes, %" PRIu64 " compressed in a payload of %"
			       PRIu64 ")", h->thread, off, z.words, z.raw, z.zbytes,
			       h->payload_bytes);
	return 0;
}

int vt_order_check(vt_order *o, const vt_chunk_header *h, const uint8_t *payload,
		   uint64_t off, char err[FMT_ERR_LEN])
{
	uint32_t t = h->thread;
	uint64_t n;
	if (vt_chunk_global(h->type))
		return 0;
	if (h->type == VT_THREAD_START) {
		if (o->started)
			return vt_fail(err, "thread %u: a second START chunk at offset %"
				       PRIu64, t, off);
		o->started = true;
		return 0;
	}
	if (!o->started)
		return vt_fail(err, "thread %u: chunk at offset %" PRIu64 " (type %u) "
			       "before the thread's START chunk", t, off, h->type);
	if (o->ended)
		return vt_fail(err, "thread %u: chunk at offset %" PRIu64 " (type %u) "
			       "after the thread's end", t, off, h->type);
	switch (h->type) {
	case VT_TP_MOVED: {
		vt_time v;
		memcpy(&v, payload, sizeof v);
		return vt_fail(err, "thread %u: its thread pointer (fs base) moved to 0x%" PRIx64
			       " (arch_prctl) before its word %" PRIu64 ", and its fs-relative "
			       "addresses are computed from the one it started with: the trace "
			       "is not followed from there", t, v.ns, v.word);
	}
	case VT_ZVALUES:
		if (vt_zhead_check(h, payload, off, err))
			return -1;
		/* first and words as a VALUES payload's */
		__attribute__((fallthrough));
	case VT_VALUES:
		memcpy(&n, payload, 8);
		if (n != o->words)
			return vt_fail(err, "thread %u: the VALUES chunk at offset %" PRIu64
				       " starts at word %" PRIu64 ", expected %" PRIu64
				       " (a chunk lost or repeated)", t, off, n, o->words);
		memcpy(&n, payload + 8, 8);
		if (h->type == VT_VALUES && n > 4 * h->payload_bytes)	/* 8 outcomes in 2 bytes at most */
			return vt_fail(err, "thread %u: the VALUES chunk at offset %" PRIu64
				       " says %" PRIu64 " words, more than its %" PRIu64
				       " bytes can hold", t, off, n, h->payload_bytes);
		o->words += n;
		return 0;
	case VT_THREAD_END:
		memcpy(&n, payload, 8);
		if (n != o->words)
			return vt_fail(err, "thread %u: THREAD_END at offset %" PRIu64
				       " counts %" PRIu64 " words, the VALUES chunks hold %"
				       PRIu64 " (a chunk lost or repeated)", t, off, n,
				       o->words);
		o->ended = true;
		return 0;
	case VT_CRASH:
		o->ended = true;
		return 0;
	default:	/* SIGNAL, FORK, HEAP, TIME, HANDLER: events between words */
		return 0;
	}
}

void vt_release(const void *p, size_t n)
{
	uintptr_t a = ((uintptr_t)p + VT_RELEASE_PAGE - 1) & ~(uintptr_t)(VT_RELEASE_PAGE - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(VT_RELEASE_PAGE - 1);
	if (b > a)	/* a private read-only mapping: read again if touched */
		madvise((void *)a, b - a, MADV_DONTNEED);
}

int vtrace_next(vtrace *t, vt_chunk *c, char err[FMT_ERR_LEN])
{
	if (t->failed)
		return vt_fail(err, "reading stopped earlier");
	size_t off = t->pos;
	if (off == t->size)
		return 0;
	t->failed = true;	/* until proven otherwise */
	if (t->size - off < VT_CHUNK_HEADER_SIZE) {
		t->cut = true;
		return vt_fail(err, "truncated chunk at offset %zu", off);
	}
	memcpy(&c->h, t->data + off, sizeof c->h);
	if (c->h.magic != VT_CHUNK_MAGIC)
		return vt_fail(err, "bad chunk magic at offset %zu", off);
	t->cut = c->h.payload_bytes > t->size - off - VT_CHUNK_HEADER_SIZE;
	if (t->cut)
		return vt_fail(err, "truncated chunk at offset %zu "
			       "(payload of %" PRIu64 " bytes, %zu left)", off,
			       c->h.payload_bytes,
			       t->size - off - VT_CHUNK_HEADER_SIZE);
	if (vt_chunk_verify(&c->h, t->data + off + VT_CHUNK_HEADER_SIZE, off, err))
		return -1;
	if (t->ended)
		return vt_fail(err, "chunk after the END chunk at offset %zu",
			       off);
	c->offset = off;
	c->payload = t->data + off + VT_CHUNK_HEADER_SIZE;
	t->pos = off + VT_CHUNK_HEADER_SIZE + c->h.payload_bytes;
	if (t->mapped && t->pos - t->released >= VT_RELEASE_EVERY) {
		/* checked: the replay maps these pages in again as it goes */
		vt_release(t->data + t->released, t->pos - t->released);
		t->released = t->pos;
	}
	t->ended = c->h.type == VT_END;
	t->failed = false;
	return 1;
}

void vtrace_close(vtrace *t)
{
	if (t->mapped)
		munmap(t->data, t->size);
	else
		free(t->data);
	memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------ per-thread view */

vt_stream *vtrace_stream(vt_streams *s, uint32_t thread)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->s[i].thread == thread)
			return &s->s[i];
	return NULL;
}

/* While a file is read: thread -> its stream, in a hash table of stream
 * indices + 1 (0 = free).  A file may name millions of threads (a corrupt
 * one at least); a linear search per chunk made reading it quadratic. */
typedef struct vt_reader {
	vt_streams *s;
	bool ref;
	uint32_t *slot;
	size_t cap;		/* slots, a power of two */
	size_t scap;		/* streams allocated in s->s */
} vt_reader;

static size_t vt_slot_of(const vt_reader *rd, uint32_t thread)
{
	size_t i = (thread * 0x9e3779b1u) & (rd->cap - 1);
	while (rd->slot[i] && rd->s->s[rd->slot[i] - 1].thread != thread)
		i = (i + 1) & (rd->cap - 1);
	return i;
}

static int vt_index_grow(vt_reader *rd)
{
	size_t cap = rd->cap ? 2 * rd->cap : 64;
	uint32_t *slot = calloc(cap, sizeof *slot);
	if (!slot)
		return -1;
	free(rd->slot);
	rd->slot = slot;
	rd->cap = cap;
	for (size_t k = 0; k < rd->s->n; k++)
		rd->slot[vt_slot_of(rd, rd->s->s[k].thread)] = (uint32_t)(k + 1);
	return 0;
}

static vt_stream *vt_stream_get(vt_reader *rd, uint32_t thread)
{
	vt_streams *s = rd->s;
	if (rd->cap) {
		uint32_t k = rd->slot[vt_slot_of(rd, thread)];
		if (k)
			return &s->s[k - 1];
	}
	/* at most one chunk per stream: s->n stays far below UINT32_MAX */
	if (2 * (s->n + 1) > rd->cap && vt_index_grow(rd))
		return NULL;
	if (s->n == rd->scap) {
		size_t cap = rd->scap ? 2 * rd->scap : 8;
		vt_stream *n = realloc(s->s, cap * sizeof *n);
		if (!n)
			return NULL;
		s->s = n;
		rd->scap = cap;
	}
	vt_stream *st = &s->s[s->n++];
	memset(st, 0, sizeof *st);
	st->thread = thread;
	rd->slot[vt_slot_of(rd, thread)] = (uint32_t)s->n;
	return st;
}

/* A VALUES payload's words, unpacked (a chunk of no words is legal: a
 * flush of nothing). */
static int vt_values_add(vt_stream *st, const uint8_t *p, size_t nbytes, uint64_t n,
			 char err[FMT_ERR_LEN])
{
	if (!n)
		return 0;
	if (st->nvalues + n + VT_UNPACK_SLACK > st->cap) {
		size_t cap = st->cap ? st->cap : 1024;
		while (cap < st->nvalues + n + VT_UNPACK_SLACK)
			cap *= 2;
		uint64_t *v = realloc(st->values, cap * sizeof *v);
		if (!v)
			return vt_fail(err, "out of memory");
		st->values = v;
		st->cap = cap;
	}
	if (vt_values_unpack(p, nbytes, st->values + st->nvalues, n))
		return vt_fail(err, "thread %u: a VALUES chunk's words do not unpack "
			       "(format.h, vt_pack)", st->thread);
	st->nvalues += n;
	return 0;
}

static int vt_map_add(vt_streams *s, const uint8_t *p, size_t n)
{
	if (!n)
		return 0;
	vt_map_entry *m = realloc(s->map, (s->nmap + n) * sizeof *m);
	if (!m)
		return -1;
	s->map = m;
	memcpy(s->map + s->nmap, p, n * sizeof *m);
	s->nmap += n;
	return 0;
}

int vt_maps_resolve(vt_streams *s, char err[FMT_ERR_LEN])
{
	for (size_t at = 0; at < s->nrefs;) {
		vt_map_ref r;
		memcpy(&r, s->refs + at, sizeof r);
		char path[4096];
		memcpy(path, s->refs + at + sizeof r, r.path_len);
		path[r.path_len] = 0;
		at += sizeof r + ((r.path_len + 7ull) & ~7ull);
		/* not a FIFO's open that waits for a writer */
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return vt_fail(err, "the trampoline map of object %u is in %s, which is gone "
				       "(%s)", r.object, path, strerror(errno));
		struct stat st;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || r.object >= PATCH_MAX_OBJECTS ||
		    r.offset > (uint64_t)st.st_size ||
		    r.n > ((uint64_t)st.st_size - r.offset) / sizeof(vt_map_entry) ||
		    r.n > SIZE_MAX / sizeof(vt_map_entry) - s->nmap) {
			close(fd);
			return vt_fail(err, "the trampoline map of object %u is no longer in %s: "
				       "the file changed since the recording", r.object, path);
		}
		vt_map_entry *m = r.n ? realloc(s->map, (s->nmap + r.n) * sizeof *m) : s->map;
		if (r.n && !m) {
			close(fd);
			return vt_fail(err, "out of memory");
		}
		s->map = m;
		size_t want = r.n * sizeof *m;
		ssize_t got = want ? pread(fd, m + s->nmap, want, (off_t)r.offset) : 0;
		close(fd);
		if (got != (ssize_t)want || vt_map_sum(m + s->nmap, r.n) != r.sum)
			return vt_fail(err, "the trampoline map of object %u is no longer in %s: "
				       "the file changed since the recording", r.object, path);
		for (size_t i = 0; i < r.n; i++) {
			m[s->nmap + i].tramp += r.base;
			m[s->nmap + i].kind = VT_MAP_KIND(m[s->nmap + i].kind) | r.object << 16;
		}
		s->nmap += r.n;
	}
	s->nrefs = 0;
	return 0;
}

/* Appends k records of `size` bytes to a growing array. */
static int vt_append(void **v, size_t *n, size_t *cap, const void *p, size_t k, size_t size)
{
	if (!k)
		return 0;
	if (*n + k > *cap) {
		size_t c = *cap ? *cap : 64;
		while (c < *n + k)
			c *= 2;
		void *a = realloc(*v, c * size);
		if (!a)
			return -1;
		*v = a;
		*cap = c;
	}
	memcpy((char *)*v + *n * size, p, k * size);
	*n += k;
	return 0;
}

static int vt_heap_add(vt_stream *st, const uint8_t *p, size_t n)
{
	return vt_append((void **)&st->heap, &st->nheap, &st->heapcap, p,
			 n / sizeof(vt_heap_event), sizeof(vt_heap_event));
}

static int vt_time_add(vt_stream *st, const uint8_t *p)
{
	return vt_append((void **)&st->times, &st->ntimes, &st->timecap, p, 1,
			 sizeof(vt_time));
}

static int vt_handler_add(vt_stream *st, const uint8_t *p)
{
	return vt_append((void **)&st->hand, &st->nhand, &st->handcap, p, 1,
			 sizeof(vt_handler));
}

/* ------------------------------------------------- compressed VALUES */

/* A stream's decompressor: its ZVALUES chunks are one zstd stream
 * (format.h), decompressed in order; `next` is the index of the next
 * chunk it expects, `raw` holds the last payload decompressed. */
struct vt_unz {
	ZSTD_DCtx *d;
	size_t next;
	uint8_t *raw;
	size_t cap;
};

static struct vt_unz *vt_unz_new(void)
{
	struct vt_unz *z = calloc(1, sizeof *z);
	if (z && !(z->d = ZSTD_createDCtx())) {
		free(z);
		return NULL;
	}
	if (z && ZSTD_isError(ZSTD_DCtx_setParameter(z->d, ZSTD_d_windowLogMax,
						     VT_ZWINDOW_LOG))) {
		ZSTD_freeDCtx(z->d);
		free(z);
		return NULL;
	}
	return z;
}

void vt_unz_free(struct vt_unz *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->d);
	free(z->raw);
	free(z);
}

/* The ZVALUES payload p (its head checked by vt_order_check)
 * decompressed into z->raw: its VALUES payload's size, or 0 when it does
 * not decompress to exactly that many bytes. */
static size_t vt_unz_one(struct vt_unz *z, const uint8_t *p)
{
	vt_zvalues h;
	memcpy(&h, p, sizeof h);
	if (h.raw > z->cap) {
		uint8_t *r = realloc(z->raw, h.raw);
		if (!r)
			return 0;
		z->raw = r;
		z->cap = h.raw;
	}
	ZSTD_inBuffer in = { p + sizeof h, h.zbytes, 0 };
	ZSTD_outBuffer out = { z->raw, h.raw, 0 };
	while (in.pos < in.size) {
		size_t r = ZSTD_decompressStream(z->d, &out, &in);
		if (ZSTD_isError(r) || (out.pos == out.size && in.pos < in.size))
			return 0;
	}
	return out.pos == h.raw ? h.raw : 0;
}

const uint8_t *vt_unz_payload(struct vt_unz **z, const uint8_t *p, size_t *nraw)
{
	if (!*z && !(*z = vt_unz_new()))
		return NULL;
	*nraw = vt_unz_one(*z, p);
	return *nraw ? (*z)->raw : NULL;
}

/* r's VALUES payload, decompressed after the chunks before it (from the
 * stream's first when r comes before the last one decompressed); NULL
 * when it does not decompress.  The stream's runs may mix raw VALUES
 * with ZVALUES (the recorder writes a buffer raw when the thread waited
 * for it): the ZVALUES runs before r are found by their index. */
static const uint8_t *vt_unz_run(const struct vt_run *r, size_t *nraw)
{
	struct vt_unz *z = r->z;
	*nraw = 0;
	if (r->i < z->next) {
		ZSTD_DCtx_reset(z->d, ZSTD_reset_session_only);
		z->next = 0;
	}
	const struct vt_run *q = r;	/* the ZVALUES run of index z->next */
	while (q->i != z->next || !q->z)
		q--;
	for (; z->next <= r->i; z->next++) {
		while (!q->z)	/* raw runs between */
			q++;
		if (!(*nraw = vt_unz_one(z, (q++)->p))) {
			ZSTD_DCtx_reset(z->d, ZSTD_reset_session_only);
			z->next = 0;
			return NULL;
		}
	}
	return z->raw;
}

static int vt_run_add(vt_stream *st, const uint8_t *p, size_t nbytes, uint64_t n)
{
	if (!n)
		return 0;
	if (st->nruns == st->runcap) {
		size_t cap = st->runcap ? 2 * st->runcap : 64;
		struct vt_run *r = realloc(st->runs, cap * sizeof *r);
		if (!r)
			return -1;
		st->runs = r;
		st->runcap = cap;
	}
	st->runs[st->nruns++] = (struct vt_run){ p, nbytes, n, NULL, 0 };
	st->nvalues += n;
	return 0;
}

/* A ZVALUES payload: a run whose words a replay decompresses in order. */
static int vt_zrun_add(vt_stream *st, const uint8_t *p, size_t nbytes, uint64_t n)
{
	if (!st->unz && !(st->unz = vt_unz_new()))
		return -1;
	if (vt_run_add(st, p, nbytes, n))	/* n > 0: vt_order_check */
		return -1;
	st->runs[st->nruns - 1].z = st->unz;
	st->runs[st->nruns - 1].i = st->nz++;
	return 0;
}

int vt_run_words(const struct vt_run *r, uint64_t *w)
{
	if (!r->z)
		return vt_values_unpack_fast(vt_simd(), r->p, r->nbytes, w, r->n);
	size_t nraw;
	const uint8_t *raw = vt_unz_run(r, &nraw);
	return raw ? vt_values_unpack_fast(vt_simd(), raw, nraw, w, r->n) : -1;
}

int vt_objects_add(vt_objects *o, const uint8_t *payload, size_t n)
{
	uint64_t marker;
	memcpy(&marker, payload, 8);
	bool first = !o->n && !o->marker;
	if (first)
		o->marker = marker;
	else if (marker)
		o->late_marker = marker;
	size_t k = (n - 8) / sizeof(vt_object);
	vt_object *v = realloc(o->v, (o->n + k + 1) * sizeof *v);
	if (!v)
		return -1;
	o->v = v;
	uint32_t *b = realloc(o->batch, (o->n + k + 1) * sizeof *b);
	if (!b)
		return -1;
	o->batch = b;
	if (!first && marker)
		o->nbatch++;
	for (size_t i = 0; i < k; i++)
		b[o->n + i] = first || !marker ? 0 : o->nbatch;
	memcpy(v + o->n, payload + 8, k * sizeof *v);
	for (size_t i = 0; i < k; i++)
		v[o->n + i].path[sizeof v->path - 1] = 0;
	o->n += k;
	return 0;
}

int vt_links_add(vt_objects *o, const uint8_t *payload, size_t n)
{
	uint64_t *v = realloc(o->links, (o->nlinks + n / 8) * sizeof *v);
	if (!v)
		return -1;
	memcpy(v + o->nlinks, payload, n);
	o->links = v;
	o->nlinks += n / 8;
	return 0;
}

const vt_object *vt_objects_find(const vt_objects *o, uint32_t index)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].index == index && (o->v[i].flags & VT_OBJ_COVERED))
			return &o->v[i];
	return NULL;
}

static int vt_fork_add(vt_streams *s, uint32_t thread, const uint8_t *payload)
{
	struct vt_fork_at *v = realloc(s->forks, (s->nforks + 1) * sizeof *v);
	if (!v)
		return -1;
	s->forks = v;
	v[s->nforks].thread = thread;
	memcpy(&v[s->nforks++].f, payload, sizeof v->f);
	return 0;
}

/* A ZVALUES chunk: a run decompressed when the replay comes to it, or
 * (copying) its words now, the chunks coming in the stream's order. */
static int vt_zvalues_take(vt_reader *rd, vt_stream *st, const vt_chunk *c,
			   uint64_t words, char err[FMT_ERR_LEN])
{
	size_t n = c->h.payload_bytes;
	if (rd->ref)
		return vt_zrun_add(st, c->payload, n, words) ? vt_fail(err, "out of memory") : 0;
	size_t nraw;
	const uint8_t *raw = vt_unz_payload(&st->unz, c->payload, &nraw);
	if (!raw)
		return vt_fail(err, "thread %u: the ZVALUES chunk at offset %" PRIu64
			       " does not decompress", st->thread, c->offset);
	return vt_values_add(st, raw, nraw, words, err);
}

static int vt_chunk_take(vt_reader *rd, const vt_chunk *c, char err[FMT_ERR_LEN])
{
	vt_streams *s = rd->s;
	size_t n = c->h.payload_bytes;
	if (c->h.type == VT_TRAMPOLINE_MAP)
		return vt_map_add(s, c->payload, n / sizeof(vt_map_entry)) ?
			vt_fail(err, "out of memory") : 0;
	if (c->h.type == VT_MAP_REF)	/* read by vt_maps_resolve */
		return vt_append((void **)&s->refs, &s->nrefs, &s->caprefs, c->payload, n, 1) ?
			vt_fail(err, "out of memory") : 0;
	if (c->h.type == VT_END) {
		memcpy(&s->end, c->payload, sizeof s->end);
		s->complete = true;
		return 0;
	}
	if (c->h.type == VT_EXEC) {
		vt_exec e;
		memcpy(&e, c->payload, sizeof e);
		e.path[sizeof e.path - 1] = 0;
		if (e.stage != VT_EXEC_SPAWNED)
			s->exec = e;
		else if (!s->nspawns++)
			s->spawn = e;
		return 0;
	}
	if (c->h.type == VT_OBJECTS)
		return vt_objects_add(&s->objects, c->payload, n) ?
			vt_fail(err, "out of memory") : 0;
	if (c->h.type == VT_LINKS)
		return vt_links_add(&s->objects, c->payload, n) ?
			vt_fail(err, "out of memory") : 0;
	if (c->h.type == VT_PROCESS) {
		memcpy(&s->process, c->payload, sizeof s->process);
		return 0;
	}
	vt_stream *st = vt_stream_get(rd, c->h.thread);
	if (!st)
		return vt_fail(err, "out of memory");
	if (vt_order_check(&st->order, &c->h, c->payload, c->offset, err))
		return -1;
	if (c->h.type == VT_THREAD_START) {
		memset(&st->start, 0, sizeof st->start);
		memcpy(&st->start, c->payload, c->h.payload_bytes);
		st->started = true;
	} else if (c->h.type == VT_THREAD_END) {
		st->ended = true;
		if (c->h.payload_bytes >= 16)
			memcpy(&st->end_flags, c->payload + 8, 8);
	} else if (c->h.type == VT_CRASH) {
		memcpy(&st->crash, c->payload, sizeof st->crash);
		st->crashed = true;
	} else if (c->h.type == VT_SIGNAL) {
		if (!st->signalled)
			memcpy(&st->sig, c->payload, sizeof st->sig);
		st->signalled = true;
	} else if (c->h.type == VT_FORK) {
		if (!st->forks++)
			memcpy(&st->fork, c->payload, sizeof st->fork);
		if (vt_fork_add(s, c->h.thread, c->payload))
			return vt_fail(err, "out of memory");
	} else if (c->h.type == VT_HEAP) {
		if (vt_heap_add(st, c->payload, n))
			return vt_fail(err, "out of memory");
	} else if (c->h.type == VT_TIME) {
		if (vt_time_add(st, c->payload))
			return vt_fail(err, "out of memory");
	} else if (c->h.type == VT_HANDLER) {
		if (vt_handler_add(st, c->payload))
			return vt_fail(err, "out of memory");
	} else if (st->signalled) {
		/* words of the handler and after: the replay stops at the
		 * signal */
	} else {
		uint64_t words;
		memcpy(&words, c->payload + 8, 8);
		if (c->h.type == VT_ZVALUES)
			return vt_zvalues_take(rd, st, c, words, err);
		if (!rd->ref)
			return vt_values_add(st, c->payload, n, words, err);
		if (vt_run_add(st, c->payload, n, words))
			return vt_fail(err, "out of memory");
	}
	return 0;
}

static int vt_streams_read(vtrace *t, vt_streams *out, bool ref)
{
	memset(out, 0, sizeof *out);
	vt_reader rd = { .s = out, .ref = ref };
	vt_chunk c;
	int rc;
	while ((rc = vtrace_next(t, &c, out->error)) == 1)
		if (vt_chunk_take(&rd, &c, out->error)) {
			t->failed = true;
			break;
		}
	if (rc == 0)
		out->error[0] = 0;
	out->cut = rc < 0 && t->cut;
	free(rd.slot);
	return 0;
}

int vtrace_streams_from(vtrace *t, vt_streams *out)
{
	return vt_streams_read(t, out, false);
}

int vtrace_streams_ref(vtrace *t, vt_streams *out)
{
	return vt_streams_read(t, out, true);
}

int vtrace_load_streams(const char *path, vt_streams *out,
			char err[FMT_ERR_LEN])
{
	vtrace t;
	memset(out, 0, sizeof *out);
	if (vtrace_open(&t, path, err))
		return -1;
	vtrace_streams_from(&t, out);
	vtrace_close(&t);
	return 0;
}

void vtrace_streams_free(vt_streams *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->s[i].values);
		free(s->s[i].runs);
		free(s->s[i].heap);
		free(s->s[i].times);
		free(s->s[i].hand);
		vt_unz_free(s->s[i].unz);
	}
	free(s->s);
	free(s->map);
	free(s->refs);
	free(s->objects.v);
	free(s->objects.batch);
	free(s->objects.links);
	free(s->forks);
	memset(s, 0, sizeof *s);
}

/* The PROCESS chunk of the file at path (pid 0: none, or unreadable). */
static vt_process vt_process_of(const char *path)
{
	vt_process p = { 0 };
	vtrace t;
	char err[FMT_ERR_LEN];
	vt_chunk c;
	if (vtrace_open(&t, path, err))
		return p;
	while (vtrace_next(&t, &c, err) == 1)
		if (c.h.type == VT_PROCESS) {
			memcpy(&p, c.payload, sizeof p);
			break;
		}
	vtrace_close(&t);
	return p;
}

uint32_t vt_find_child(const char *root, uint32_t parent, uint32_t thread, uint64_t word)
{
	char dir[4096], path[8192];
	const char *slash = strrchr(root, '/');
	const char *base = slash ? slash + 1 : root;
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - root) : 1, slash ? root : ".");
	size_t bl = strlen(base);
	DIR *d = opendir(dir);
	struct dirent *e;
	uint32_t found = 0;
	while (d && !found && (e = readdir(d))) {
		const char *n = e->d_name;
		if (strncmp(n, base, bl) || n[bl] != '.' || !n[bl + 1] ||
		    strspn(n + bl + 1, "0123456789") != strlen(n + bl + 1))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, n);
		vt_process p = vt_process_of(path);
		if ((p.flags & VT_PROC_FORKED) && p.parent == parent && p.thread == thread &&
		    p.word == word)
			found = p.pid;
	}
	if (d)
		closedir(d);
	return found;
}
