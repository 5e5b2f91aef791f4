/* rec_heap.c — heap tracking: malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc, memalign, and mmap of anonymous memory,
 * munmap and mremap interposed, each call an
 * event of the calling thread (format.h, HEAP chunks), and each thread's
 * stack and static TLS block.
 *
 * The cost is per call, never per access: the event goes into a ring of
 * the thread, written as a HEAP chunk right before the thread's next
 * VALUES chunk (rec_flush_locked calls rec_heap_flush under the thread's
 * lock), so a replay always has the events before the words that follow
 * them.  The event is placed between two words: the first value recorded
 * after the call is word `word`.
 *
 * The originals are glibc's __libc_* entry points, not dlsym(RTLD_NEXT):
 * dlsym itself calls calloc.  Calls made by the recorder itself (its
 * pthread_create wrapper, dlopen's object scan) are not the program's:
 * they are passed through unrecorded. */
#include "replay/rec.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *__libc_memalign(size_t align, size_t n);

/* events per thread between writes: a full buffer handed to the
 * flusher takes those before its words along (rec_flush_full), so the
 * thread writes them itself (and waits for the flusher) only when more
 * than this many come within one buffer's words */
#define REC_HEAP_RING 4096u

typedef struct rec_heap {
	vt_heap_event ev[REC_HEAP_RING];
	_Atomic uint64_t n;	/* events stored (published by the owner) */
	uint64_t sent;		/* events written (under the thread's lock) */
	int regions;		/* stack and TLS noted */
} rec_heap;

static _Atomic uint64_t rec_heap_seq, rec_heap_blocks;
typedef int (*rec_posix_memalign_fn)(void **, size_t, size_t);
static rec_posix_memalign_fn rec_real_posix_memalign;	/* rec_heap_init */
static uint64_t rec_tls_below, rec_tcb_size;	/* rec_heap_init */

/* the recorder's own image: its calls are not the program's */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));

int rec_in_self(const void *p)
{
	return (const char *)p >= __ehdr_start && (const char *)p < _end;
}

/* The calling thread's ring, made on first use (no libc). */
static rec_heap *rec_heap_of(rec_thread *t)
{
	rec_heap *h = atomic_load_explicit(&t->heap, memory_order_acquire);
	if (!h) {
		h = rec_mmap_raw(sizeof *h);
		if (h)
			atomic_store_explicit(&t->heap, h, memory_order_release);
	}
	return h;
}

/* The calling thread's word index.  A signal
 * handler of this thread may reset the buffer meanwhile (a full
 * buffer): read again until origin and cursor agree. */
static uint64_t rec_heap_word(rec_thread *t)
{
	for (;;) {
		uint64_t *c = *(uint64_t *volatile *)&rec_cursor;
		uint64_t o = *(volatile uint64_t *)&t->origin;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (c == *(uint64_t *volatile *)&rec_cursor)
			return o + (uint64_t)(c - t->base);
	}
}

static void rec_heap_add(rec_thread *t, vt_heap_event e)
{
	rec_heap *h = rec_heap_of(t);
	if (!h)
		return;
	e.word = rec_heap_word(t);
	uint64_t n = atomic_load_explicit(&h->n, memory_order_relaxed);
	if (n - *(volatile uint64_t *)&h->sent >= REC_HEAP_RING)
		rec_flush_upto(t, rec_cursor, 0);	/* writes the ring too */
	h->ev[n % REC_HEAP_RING] = e;
	atomic_store_explicit(&h->n, n + 1, memory_order_release);
}

/* An event of the program's thread, or nothing (not recording, a
 * forked child, a thread without a stream, the recorder's own call). */
static rec_thread *rec_heap_thread_of(const void *site)
{
	rec_thread *t = rec_self;
	if (!R.active || R.child || R.finished || !t || t == &R.sink ||
	    t->ended || rec_in_self(site))
		return NULL;
	return t;
}

static void rec_heap_note(rec_thread *t, uint32_t kind, void *p, size_t size,
			  void *old, const void *site)
{
	vt_heap_event e = { .addr = (uint64_t)p, .size = size,
			    .old = (uint64_t)old, .site = (uint64_t)site,
			    .kind = kind };
	e.seq = atomic_fetch_add(&rec_heap_seq, 1) + 1;
	if (kind != VT_HEAP_FREE && kind != VT_HEAP_MUNMAP)
		e.block = (uint32_t)(atomic_fetch_add(&rec_heap_blocks, 1) + 1);
	rec_heap_add(t, e);	/* errno untouched: no libc */
}

void rec_heap_flush_upto(rec_thread *t, uint64_t upto,
			 void (*write)(uint32_t, uint32_t, const void *, size_t))
{
	rec_heap *h = atomic_load_explicit(&t->heap, memory_order_acquire);
	if (!h)
		return;
	while (h->sent < upto) {
		uint64_t i = h->sent % REC_HEAP_RING, k = upto - h->sent;
		if (k > REC_HEAP_RING - i)
			k = REC_HEAP_RING - i;	/* the ring wraps: two chunks */
		write(VT_HEAP, t->index, &h->ev[i], k * sizeof *h->ev);
		/* read before the slots are given back */
		atomic_thread_fence(memory_order_release);
		*(volatile uint64_t *)&h->sent = h->sent + k;
	}
}

uint64_t rec_heap_stored(const rec_thread *t)
{
	rec_heap *h = atomic_load_explicit(&t->heap, memory_order_acquire);
	return h ? atomic_load_explicit(&h->n, memory_order_acquire) : 0;
}

void rec_heap_flush(rec_thread *t)
{
	rec_heap_flush_upto(t, rec_heap_stored(t), rec_chunk);
}

void rec_heap_publish(void)
{
	rec_thread *t = rec_self;
	if (!R.active || R.child || !t || t == &R.sink || !t->started)
		return;
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	rec_heap_flush(t);
	rec_unlock(&t->lock);
	rec_restore_mask(&old);
}

/* ------------------------------------------------------ thread regions */

void rec_heap_init(void)
{
	void (*info)(size_t *, size_t *) =
		(void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
	const unsigned *tcb = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
	size_t size = 0, align = 0;
	if (info)
		info(&size, &align);
	/* glibc on x86-64 (TLS_TCB_AT_TP): the static TLS block of
	 * dl_tls_static_size bytes ends with the thread control block,
	 * which the thread pointer starts */
	rec_tcb_size = tcb ? *tcb : 0;
	rec_real_posix_memalign = (rec_posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
	rec_tls_below = size > rec_tcb_size ? size - rec_tcb_size : 0;
}

static int rec_hex(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;
	for (;; s++, n++) {
		unsigned c = (unsigned char)*s;
		unsigned d = c - '0' < 10 ? c - '0' : (c | 32) - 'a' < 6 ? (c | 32) - 'a' + 10 : 16;
		if (d == 16)
			break;
		x = x << 4 | d;
	}
	*p = s;
	*v = x;
	return n > 0;
}

static char *rec_line_end(char *p, char *end)
{
	for (; p < end; p++)
		if (*p == '\n')
			return p;
	return NULL;
}

/* The mapping of /proc/self/maps that holds address a, with raw system
 * calls only (libc may be patched).  0 if not found. */
static int rec_mapping_of(uint64_t a, uint64_t *lo, uint64_t *hi, int *is_stack)
{
	enum { BUF = 1 << 16 };
	char *buf = rec_mmap_raw(BUF);
	if (!buf)
		return 0;
	long fd = rec_syscall3(SYS_open, (long)"/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	int found = 0;
	size_t have = 0;
	while (fd >= 0 && !found) {
		long r = rec_syscall3(SYS_read, fd, (long)(buf + have), (long)(BUF - 1 - have));
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = rec_line_end(line, buf + have)) != NULL) {
			const char *p = line;
			uint64_t l, h;
			if (rec_hex(&p, &l) && *p++ == '-' && rec_hex(&p, &h) && a >= l && a < h) {
				*lo = l;
				*hi = h;
				*is_stack = 0;
				for (const char *q = p; q + 7 <= nl; q++)
					if (q[0] == '[' && q[1] == 's' && q[2] == 't' && q[3] == 'a' &&
					    q[4] == 'c' && q[5] == 'k' && q[6] == ']')
						*is_stack = 1;
				found = 1;
				break;
			}
			line = nl + 1;
		}
		/* keep the unfinished line */
		size_t rest = have - (size_t)(line - buf);
		for (size_t i = 0; i < rest; i++)
			buf[i] = line[i];
		have = rest;
	}
	if (fd >= 0)
		rec_syscall3(SYS_close, fd, 0, 0);
	rec_munmap_raw(buf, BUF);
	return found;
}

void rec_heap_thread(rec_thread *t)
{
	rec_heap *h = rec_heap_of(t);
	if (!h || h->regions)
		return;
	h->regions = 1;
	uint64_t lo, hi, sp = (uint64_t)__builtin_frame_address(0);
	int main_stack;
	if (rec_mapping_of(sp, &lo, &hi, &main_stack)) {
		if (main_stack) {	/* grows down to the limit */
			struct rlimit rl;
			uint64_t max = 8ull << 20;
			if (rec_syscall6(SYS_prlimit64, 0, RLIMIT_STACK, 0, (long)&rl, 0, 0) == 0 &&
			    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (1ull << 32))
				max = rl.rlim_cur;
			lo = hi - max < lo ? hi - max : lo;
		}
		vt_heap_event e = { .addr = lo, .size = hi - lo, .kind = VT_HEAP_STACK };
		e.seq = atomic_fetch_add(&rec_heap_seq, 1) + 1;
		rec_heap_add(t, e);
	}
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	if (rec_tcb_size) {
		vt_heap_event e = { .addr = tp - rec_tls_below,
				    .size = rec_tls_below + rec_tcb_size, .kind = VT_HEAP_TLS };
		e.seq = atomic_fetch_add(&rec_heap_seq, 1) + 1;
		rec_heap_add(t, e);
	}
}

/* ----------------------------------------------------- the interposers */

REC_EXPORT void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	rec_thread *t = rec_heap_thread_of(__builtin_return_address(0));
	if (t && p)
		rec_heap_note(t, VT_HEAP_MALLOC, p, n, NULL, __builtin_return_address(0));
	return p;
}

REC_EXPORT void *calloc(size_t n, size_t m)
{
	void *p = __libc_calloc(n, m);
	rec_thread *t = rec_heap_thread_of(__builtin_return_address(0));
	if (t && p)
		rec_heap_note(t, VT_HEAP_CALLOC, p, n * m, NULL, __builtin_return_address(0));
	return p;
}

REC_EXPORT void *realloc(void *old, size_t n)
{
	void *p = __libc_realloc(old, n);
	rec_thread *t = rec_heap_thread_of(__builtin_return_address(0));
	if (!t)
		return p;
	if (p)		/* realloc(NULL, n) allocates; old is then 0 */
		rec_heap_note(t, VT_HEAP_REALLOC, p, n, old, __builtin_return_address(0));
	else if (old && n == 0)	/* glibc frees: realloc(p, 0) */
		rec_heap_note(t, VT_HEAP_FREE, old, 0, NULL, __builtin_return_address(0));
	return p;
}

REC_EXPORT void free(void *p)
{
	rec_thread *t = p ? rec_heap_thread_of(__builtin_return_address(0)) : NULL;
	/* noted before the call: another thread may get the block back at
	 * once, and its malloc must come after this free in `seq` */
	if (t)
		rec_heap_note(t, VT_HEAP_FREE, p, 0, NULL, __builtin_return_address(0));
	__libc_free(p);
}

static void *rec_heap_aligned(size_t align, size_t n, const void *site)
{
	void *p = __libc_memalign(align, n);
	rec_thread *t = rec_heap_thread_of(site);
	if (t && p)
		rec_heap_note(t, VT_HEAP_MEMALIGN, p, n, NULL, site);
	return p;
}

REC_EXPORT void *memalign(size_t align, size_t n)
{
	return rec_heap_aligned(align, n, __builtin_return_address(0));
}

REC_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return rec_heap_aligned(align, n, __builtin_return_address(0));
}

REC_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	const void *site = __builtin_return_address(0);
	int rc;
	if (rec_real_posix_memalign) {
		rc = rec_real_posix_memalign(out, align, n);
	} else if (align % sizeof(void *) || (align & (align - 1)) || !align) {
		return EINVAL;	/* glibc's checks, before rec_heap_init */
	} else {
		void *p = __libc_memalign(align, n);
		if (!p)
			return ENOMEM;
		*out = p;
		rc = 0;
	}
	rec_thread *t = rec_heap_thread_of(site);
	if (t && rc == 0)
		rec_heap_note(t, VT_HEAP_MEMALIGN, *out, n, NULL, site);
	return rc;
}

/* mmap and its kin, by system call: glibc's own entry points (__mmap) are
 * private to it.  Only anonymous memory is a block; libc's own calls
 * (malloc's big blocks, thread stacks) are internal and never come here. */
static long rec_sys_result(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

REC_EXPORT void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	long r = rec_sys_result(rec_syscall6(SYS_mmap, (long)a, (long)n, prot, flags, fd,
					     (long)off));
	rec_thread *t = rec_heap_thread_of(__builtin_return_address(0));
	if (t && r != -1 && (flags & MAP_ANONYMOUS))
		rec_heap_note(t, VT_HEAP_MMAP, (void *)r, n, NULL, __builtin_return_address(0));
	return (void *)r;
}

REC_EXPORT void *mmap64(void *a, size_t n, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

REC_EXPORT int munmap(void *a, size_t n)
{
	rec_thread *t = rec_heap_thread_of(__builtin_return_address(0));
	/* noted before, as free is: the range may be mapped again at once */
	if (t && a)
		rec_heap_note(t, VT_HEAP_MUNMAP, a, n, NULL, __builtin_return_address(0));
	return (int)rec_sys_result(rec_syscall3(SYS_munmap, (long)a, (long)n, 0));
}

REC_EXPORT void *mremap(void *old, size_t oldn, size_t n, int flags, ...)
{
	void *to = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		to = va_arg(ap, void *);
		va_end(ap);
	}
	long r = rec_sys_result(rec_syscall6(SYS_mremap, (long)old, (long)oldn, (long)n, flags,
					     (long)to, 0));
	rec_thread *t = rec_heap_thread_of(__builtin_return_address(0));
	if (t && r != -1)
		rec_heap_note(t, VT_HEAP_MREMAP, (void *)r, n, old, __builtin_return_address(0));
	return (void *)r;
}
