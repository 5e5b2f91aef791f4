/* rec_buf.c — the recorder's per-thread buffers and the value file: a
 * thread's stream opens with a THREAD_START chunk, its words go out as
 * VALUES chunks when its buffer is full (guard-page fault), when it ends,
 * at exit and on fatal signals; `skel run` adds a flusher thread.  Every
 * chunk is one writev on an O_APPEND descriptor. */
#include "replay/rec.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

__thread uint64_t *rec_cursor __attribute__((tls_model("initial-exec")));
__thread rec_thread *rec_self __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ the file */

int rec_off(void)
{
	return R.fd < 0 || R.child || R.finished;
}

/* A system call that leaves errno alone: the recorder writes from signal
 * handlers and from a thread that shares the main thread's TLS. */
long rec_syscall3(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

/* One chunk, one writev on an O_APPEND descriptor: chunks of different
 * threads do not interleave inside each other.  A VALUES chunk's payload
 * starts with `first`, the index of its first word in the stream. */
static void rec_chunk_write(uint32_t type, uint32_t thread, uint64_t first,
			    const void *p, size_t n);

/* Chunks other than VALUES. */
void rec_chunk(uint32_t type, uint32_t thread, const void *p,
		      size_t n)
{
	rec_chunk_write(type, thread, 0, p, n);
}

/* On a pipe only writes of up to PIPE_BUF bytes are atomic: a VALUES
 * chunk goes out in pieces that fit, each one a whole chunk, so that the
 * chunks of concurrent threads (or of a dying thread flushing the others)
 * stay whole.  The reader joins consecutive VALUES chunks of a thread. */
static void rec_values(uint32_t thread, uint64_t first, const uint64_t *w,
		       size_t nwords)
{
	const size_t piece = (PIPE_BUF - sizeof(vt_chunk_header) - 8) / 8;
	if (R.pipe)
		while (nwords > piece) {
			rec_chunk_write(VT_VALUES, thread, first, w, piece * 8);
			w += piece;
			first += piece;
			nwords -= piece;
		}
	rec_chunk_write(VT_VALUES, thread, first, w, nwords * 8);
}

static void rec_chunk_write(uint32_t type, uint32_t thread, uint64_t first,
			    const void *p, size_t n)
{
	if (rec_off())
		return;
	int values = type == VT_VALUES;
	vt_chunk_header h = { VT_CHUNK_MAGIC, type, thread, 0, n + (values ? 8 : 0) };
	vt_chunk_seal(&h, &first, values ? 8 : 0, p, n);
	struct iovec iov[3] = { { &h, sizeof h }, { &first, values ? 8 : 0 },
				{ (void *)p, n } };
	size_t left = sizeof h + (values ? 8 : 0) + n;
	while (left) {
		long w = rec_syscall3(SYS_writev, R.fd, (long)iov, 3);
		if (w == -EINTR)
			continue;
		if (w <= 0)
			return;
		left -= (size_t)w;
		for (int i = 0; i < 3 && w; i++) {
			size_t d = (size_t)w < iov[i].iov_len ? (size_t)w
							      : iov[i].iov_len;
			iov[i].iov_base = (char *)iov[i].iov_base + d;
			iov[i].iov_len -= d;
			w -= (ssize_t)d;
		}
	}
}

/* ------------------------------------------------------ thread streams */

int rec_buffer_map(rec_thread *t)
{
	size_t size = REC_BUF_BYTES + REC_PAGE;
	char *m = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	if (mprotect(m + REC_BUF_BYTES, REC_PAGE, PROT_NONE)) {
		munmap(m, size);
		return -1;
	}
	t->base = t->sent = (uint64_t *)m;
	t->guard = (uint64_t *)(m + REC_BUF_BYTES);
	return 0;
}

/* The recorder's handlers run on an alternate stack (SA_ONSTACK): a
 * buffer flush may happen with the program's stack nearly full, and under
 * valgrind a signal frame cannot grow the main stack. */
static void rec_altstack(void)
{
	stack_t cur;
	if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
		return; /* the program has its own */
	size_t size = 64 * 1024;
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	stack_t ss = { .ss_sp = m, .ss_size = size };
	sigaltstack(&ss, NULL);
}

/* Async-signal-safe (mmap, write): also called from the SIGSEGV handler
 * for threads that reach a probe without passing through pthread_create. */
rec_thread *rec_thread_open(uint64_t start, uint32_t parent,
				   uint32_t flags)
{
	if (R.child || R.finished)
		return &R.sink;
	rec_thread *t = mmap(NULL, REC_PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return &R.sink;
	if (rec_buffer_map(t)) {
		munmap(t, REC_PAGE);
		return &R.sink;
	}
	rec_altstack();
	t->cursor = &rec_cursor;
	t->index = atomic_fetch_add(&R.nthreads, 1);
	if (t->index < REC_MAX_THREADS)
		R.threads[t->index] = t;
	vt_thread_start ts = { .start_runtime = start, .parent = parent,
			       .flags = flags };
	ts.start = start;
	if (start >= R.img.lo && start < R.img.hi) {
		ts.start = start - R.img.bias;
		ts.flags |= VT_START_IN_IMAGE;
	}
	rec_chunk(VT_THREAD_START, t->index, &ts, sizeof ts);
	rec_self = t;
	rec_cursor = t->base;
	pthread_setspecific(R.key, t);
	return t;
}

/* A spin lock: held only around a flush, never while program code runs.
 * The online flusher thread runs no program code and takes signals on no
 * account, so a holder always makes progress. */
static void rec_lock(_Atomic int *l)
{
	for (unsigned n = 0; atomic_exchange_explicit(l, 1, memory_order_acquire); n++) {
		if (n < 64)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

static void rec_unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* Writes [t->sent, end): the words recorded and not yet written.  With
 * `reset` (only by the owning thread, or for it in its signal handler)
 * the buffer starts over: sent and the cursor go back to base.  Under
 * t->lock, with signals blocked. */
static void rec_flush_locked(rec_thread *t, uint64_t *end, int reset)
{
	if (!end || end < t->base || end > t->guard)
		return;
	if (end > t->sent && !rec_off()) {
		size_t n = (size_t)(end - t->sent);
		rec_values(t->index, t->written, t->sent, n);
		t->written += n;
		atomic_fetch_add(&R.values, n);
	}
	if (end > t->sent)
		t->sent = end;
	if (reset) {
		t->sent = t->base;
		rec_cursor = t->base;
	}
}

/* No handler of this thread may come to a lock while the thread holds it
 * (a guard-page fault in a nested handler would wait forever). */
static void rec_block_all(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
}

void rec_flush_upto(rec_thread *t, uint64_t *end, int reset)
{
	if (t == &R.sink)
		return;
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	rec_flush_locked(t, end, reset);
	rec_unlock(&t->lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Flush of the calling thread outside a signal handler: signals are
 * blocked so that a handler running probed code cannot store into the
 * buffer between the write and the reset.  `end` also closes the stream. */
static void rec_flush_self(int end)
{
	sigset_t old;
	rec_block_all(&old);
	rec_thread *t = rec_self;
	if (t && t != &R.sink) {
		rec_flush_upto(t, rec_cursor, 1);
		if (end) {
			rec_lock(&t->lock);
			uint64_t n = t->written;
			rec_chunk(VT_THREAD_END, t->index, &n, sizeof n);
			t->ended = 1;
			rec_unlock(&t->lock);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void rec_thread_end(rec_thread *t)
{
	if (!t || t == &R.sink || t->ended)
		return;
	rec_flush_self(1);
	rec_self = &R.sink;
	rec_cursor = R.sink.base;
	/* the header page stays: the crash flush may still look at t */
	munmap(t->base, REC_BUF_BYTES + REC_PAGE);
}

/* pthread key destructor: thread exit (return or pthread_exit). */
void rec_on_thread_exit(void *p)
{
	rec_thread_end(p);
}

/* Every live thread's words up to its cursor, written without stopping
 * it.  Other threads may be storing meanwhile; a word is written before
 * its cursor moves past it (x86 stores are seen in order), so the prefix
 * read here is valid.  The cursor is read under the thread's lock, which
 * its exit takes before its TLS goes away. */
static void rec_flush_others(const rec_thread *me)
{
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		if (!t || t == me || t->ended)
			continue;
		sigset_t old;
		rec_block_all(&old);
		rec_lock(&t->lock);
		if (!t->ended)
			rec_flush_locked(t, *(uint64_t *volatile *)t->cursor, 0);
		rec_unlock(&t->lock);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

/* Dying: every live thread's words up to its cursor. */
void rec_flush_all_dying(void)
{
	if (rec_off() || getpid() != R.pid)
		return;
	rec_thread *me = rec_self;
	if (me && me != &R.sink && !me->ended)
		rec_flush_upto(me, *(uint64_t *volatile *)me->cursor, 1);
	rec_flush_others(me);
}

/* skel run: the replayer reads a FIFO as the program runs.  Buffers fill
 * only every 32768 words, and a loop nest may record a handful in all, so a
 * thread that blocks every signal writes what each thread has recorded
 * every millisecond: the replayer starts on the first words while the
 * program still runs.  Not used for a value file (nothing reads it yet).
 *
 * The thread is a bare clone() on a stack in .bss, not a pthread: a
 * pthread would malloc (its TLS) and mmap (its stack) in the program's
 * address space, and the program's heap and mapping addresses under skel
 * run must be those under skel record.  It shares the main thread's TLS,
 * so it only makes system calls that leave errno alone (rec_syscall3) and
 * never touches rec_cursor or rec_self. */
static char rec_flusher_stack[64 * 1024] __attribute__((aligned(64)));

static int rec_flusher(void *arg)
{
	(void)arg;
	struct timespec ms = { 0, 1000000 };
	for (;;) {
		rec_syscall3(SYS_nanosleep, (long)&ms, 0, 0);
		rec_lock(&R.pass);
		if (rec_off() || rec_syscall3(SYS_getpid, 0, 0, 0) != R.pid) {
			rec_unlock(&R.pass);
			return 0;
		}
		rec_flush_others(NULL);	/* rec_self here is the main thread's */
		rec_unlock(&R.pass);
	}
}

void rec_flusher_start(void)
{
	sigset_t old;
	rec_block_all(&old);	/* inherited by the thread: all blocked */
	int e = errno;
	if (clone(rec_flusher, rec_flusher_stack + sizeof rec_flusher_stack,
		  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		  CLONE_SYSVSEM, NULL) < 0)
		rec_say("cannot start the online flusher; words reach the replayer "
			"every %lu KiB", REC_BUF_BYTES / 1024);
	errno = e;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void rec_stats(const char *when)
{
	if (R.verbose)
		rec_say("STATS %s sites=%zu neighbour_sites=%zu int3_sites=%zu probes=%zu "
			"trampoline_bytes=%zu threads=%u values=%" PRIu64
			" int3_hits=%" PRIu64, when, R.nsites, R.nneighbour, R.nint3,
			R.patch.nprobes, R.code_size,
			atomic_load(&R.nthreads), atomic_load(&R.values),
			atomic_load(&R.int3_hits));
}

void rec_finish(uint32_t how)
{
	if (!R.active || rec_off() || getpid() != R.pid)
		return;
	rec_thread_end(rec_self);
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&R.pass);
	rec_flush_all_dying();
	vt_end e = { atomic_load(&R.nthreads), atomic_load(&R.values), how,
		     (uint32_t)R.nint3 };
	rec_chunk(VT_END, 0, &e, sizeof e);
	R.finished = 1;
	rec_unlock(&R.pass);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	rec_stats("exit");
}
/* An event in the calling thread's stream, after the words recorded so
 * far: `word` (the payload's first u64) becomes their number.  No reset
 * of the buffer: a signal may have come in the middle of a probe's
 * store. */
void rec_event(uint32_t type, void *payload, size_t n)
{
	rec_thread *t = rec_self;
	if (!R.active || !t || t == &R.sink || rec_off() || getpid() != R.pid)
		return;
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	rec_flush_locked(t, *(uint64_t *volatile *)t->cursor, 0);
	memcpy(payload, &t->written, sizeof t->written);
	rec_chunk(type, t->index, payload, n);
	rec_unlock(&t->lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
