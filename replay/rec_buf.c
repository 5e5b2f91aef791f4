/* rec_buf.c — the recorder's per-thread buffers and the value file: a
 * thread's stream opens with a THREAD_START chunk, its words go out as
 * VALUES chunks when its buffer is full (guard-page fault), when it ends,
 * at exit and on fatal signals; `skel run` adds a flusher thread.  Every
 * chunk is one writev on an O_APPEND descriptor. */
#include "replay/rec.h"
#include "replay/vpack.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* A thread's cursor starts where its TLS block's copy of the recorder's
 * TLS image points it (rec_prestart_claim, rec_prestart_init): libc's
 * thread start-up code runs (patched) with every signal blocked, where a
 * fault would kill the process, before rec_thread_main opens the
 * thread's stream.  A thread libc starts itself (a SIGEV_THREAD timer's
 * helper, aio's) may run there for ever, all signals blocked: rec_pre is
 * a large reservation whose pages are given back now and then
 * (rec_prestart_trim).  A thread that reaches a guard page gets its
 * stream at the fault, flagged UNKNOWN, or dies there if its signals are
 * blocked. */
uint64_t rec_prestart[(REC_OWN_PAGES + 1) * REC_PAGE / 8] __attribute__((aligned(REC_PAGE)));
__thread rec_tls rec_t __attribute__((tls_model("initial-exec"))) = {
	.cursor = rec_prestart, .vmmark = rec_vm_mark_stub };
_Static_assert(offsetof(rec_tls, vmmark) == REC_TLS_VMMARK, "rec_tls layout");
uint64_t *rec_pre = rec_prestart;
uint64_t *rec_pre_guard = REC_PRESTART_GUARD;
static size_t rec_pre_bytes;	/* the reservation's, guard included */
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

long rec_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c),
			 "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

pid_t rec_getpid(void)
{
	return (pid_t)rec_syscall3(SYS_getpid, 0, 0, 0);
}

void rec_copy_bytes(void *to, const void *from, size_t n)
{
	unsigned char *d = to;
	const unsigned char *f = from;
	for (size_t i = 0; i < n; i++)
		d[i] = f[i];
}

void rec_fill_bytes(void *to, int c, size_t n)
{
	unsigned char *d = to;
	for (size_t i = 0; i < n; i++)
		d[i] = (unsigned char)c;
}

void *rec_mmap_raw(size_t size)
{
	long m = rec_syscall6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m < 0 && m > -4096 ? NULL : (void *)m;
}

void rec_munmap_raw(void *p, size_t size)
{
	rec_syscall3(SYS_munmap, (long)p, (long)size, 0);
}

long rec_futex(void *addr, int op, int val, const struct timespec *ts)
{
	return rec_syscall6(SYS_futex, (long)addr, op, val, (long)ts, 0, 0);
}

/* Spinning before a futex wait (a thread for the flusher, the idle
 * flusher for a job), in pause instructions: what is awaited mostly comes
 * within microseconds when the two run on cores of their own, and
 * sleeping costs two context switches.  When they share one (another
 * process busy on the other cores, a taskset of one) a spin only burns
 * the slice the other needs: each budget halves when a spin ends in the
 * futex anyway and doubles when it succeeds.  Measured on 2 cores with a
 * valgrind run on one, strkern 1M spent 80% of its recording in the two
 * spins at a fixed 20000 pauses (about a millisecond each). */
#define REC_SPIN_MAX 20000u
#define REC_SPIN_MIN 16u
static _Atomic unsigned rec_wait_spin = REC_SPIN_MAX, rec_idle_spin = REC_SPIN_MAX;

/* Spins on *budget's pauses until done(arg); whether it came, the budget
 * adapted. */
static int rec_spin(_Atomic unsigned *budget, int (*done)(const void *), const void *arg)
{
	unsigned b = atomic_load_explicit(budget, memory_order_relaxed);
	for (unsigned n = 0; n < b; n++) {
		if (done(arg)) {
			if (b < REC_SPIN_MAX)
				atomic_store_explicit(budget, 2 * b, memory_order_relaxed);
			return 1;
		}
		__builtin_ia32_pause();
	}
	if (done(arg))
		return 1;
	if (b > REC_SPIN_MIN)
		atomic_store_explicit(budget, b / 2, memory_order_relaxed);
	return 0;
}

/* Jobs of t handed over and not yet written. */
static uint32_t rec_jobs_left(const rec_thread *t)
{
	return atomic_load_explicit(&t->jhead, memory_order_relaxed) -
	       atomic_load_explicit(&t->jtail, memory_order_acquire);
}

static int rec_job_done(const void *t)
{
	return !rec_jobs_left(t);
}

static int rec_job_slot(const void *t)
{
	return rec_jobs_left(t) < REC_JOBS;
}

/* Until done(t): a spin, then sleeps on the flusher's jtail. */
static void rec_job_await(rec_thread *t, int (*done)(const void *))
{
	if (done(t))
		return;
	if (R.zmode == 0)
		atomic_store_explicit(&t->zlag, 1, memory_order_relaxed);
	/* a job takes about as long as the buffer took to fill */
	if (rec_spin(&rec_wait_spin, done, t))
		return;
	while (!done(t)) {
		uint32_t tail = atomic_load_explicit(&t->jtail, memory_order_acquire);
		if (done(t))
			break;
		rec_futex(&t->jtail, FUTEX_WAIT_PRIVATE, (int)tail, NULL);
	}
}

/* Until the flusher has written every full buffer of t handed over. */
static void rec_job_wait(rec_thread *t)
{
	rec_job_await(t, rec_job_done);
}

/* One chunk of pre (np bytes) and p (n bytes), its check over the first
 * `summed` bytes of p (n but for format.h's VT_TOKENS_RAW_UNSUMMED): one
 * writev on an O_APPEND descriptor, so chunks of different threads do not
 * interleave inside each other.  The flusher's own: no wait. */
static void rec_chunk_summed(uint32_t type, uint32_t thread, const void *pre, size_t np,
			     const void *p, size_t n, size_t summed)
{
	if (rec_off())
		return;
	vt_chunk_header h = { VT_CHUNK_MAGIC, type, thread, 0, np + n };
	vt_chunk_seal(&h, pre, np, p, summed);
	struct iovec iov[3] = { { &h, sizeof h }, { (void *)pre, np }, { (void *)p, n } };
	size_t left = sizeof h + np + n;
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

static void rec_chunk_parts(uint32_t type, uint32_t thread, const void *pre, size_t np,
			    const void *p, size_t n)
{
	rec_chunk_summed(type, thread, pre, np, p, n, n);
}

static void rec_chunk_raw(uint32_t type, uint32_t thread, const void *p, size_t n)
{
	rec_chunk_parts(type, thread, NULL, 0, p, n);
}

void rec_chunk(uint32_t type, uint32_t thread, const void *p, size_t n)
{
	rec_thread *t = thread < REC_MAX_THREADS ? R.threads[thread] : NULL;
	if (t)
		rec_job_wait(t);
	rec_chunk_raw(type, thread, p, n);
}

/* rec_z_on_stack(fn, arg, top): fn(arg) run with the stack pointer at
 * top (16-aligned).  Compression runs on the thread's own compressor
 * stack: a flush may run in a signal handler on a small alternate stack,
 * the program's own among them. */
long rec_z_on_stack(long (*fn)(void *), void *arg, void *top);
__asm__(".text\n"
	".globl rec_z_on_stack\n"
	".hidden rec_z_on_stack\n"
	".type rec_z_on_stack, @function\n"
	"rec_z_on_stack:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdx, %rsp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	call *%rax\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size rec_z_on_stack, .-rec_z_on_stack\n");

/* Room for one ZVALUES payload: its head, the compressed bytes of the
 * largest VALUES payload, zero bytes to a multiple of 8. */
static size_t rec_z_room(void)
{
	return sizeof(vt_zvalues) + rec_z_bound(REC_PACK_BYTES) + 8;
}

/* t's compressor unmapped (its thread ended, or it failed). */
static void rec_z_drop(rec_thread *t)
{
	if (t->zmem && t->zmem != (uint8_t *)-1)
		rec_munmap_raw(t->zmem, REC_Z_STACK + rec_z_room() + R.zsize);
	t->zmem = NULL;
	t->z = NULL;
}

/* t writes raw VALUES from now on. */
static void rec_z_disable(rec_thread *t)
{
	rec_z_drop(t);
	t->zmem = (uint8_t *)-1;
}

/* t's compressor, mapped and made at its first use; NULL when there is
 * none (raw VALUES): compression off, or no memory for it (said once). */
static void *rec_z_of(rec_thread *t)
{
	if (!R.zsize || t->zmem == (uint8_t *)-1)
		return NULL;
	if (!t->zmem) {
		t->zmem = rec_mmap_raw(REC_Z_STACK + rec_z_room() + R.zsize);
		t->z = t->zmem ? rec_z_new(t->zmem + REC_Z_STACK + rec_z_room()) : NULL;
		if (!t->z) {
			static int said;
			if (!said++)
				rec_say("no memory for the compressor of thread %u: its "
					"VALUES are written uncompressed", t->index);
			rec_z_disable(t);
			return NULL;
		}
		t->zfresh = 0;
	}
	if (t->zfresh) {
		rec_z_restart(t->z);
		t->zfresh = 0;
	}
	return t->z;
}

typedef struct rec_z_job {
	void *z;
	const void *in;
	size_t n;
	uint8_t *out;
	size_t cap;
} rec_z_job;

static long rec_z_run(void *arg)
{
	rec_z_job *j = arg;
	return (long)rec_z_compress(j->z, j->in, j->n, j->out, j->cap);
}

/* The VALUES payload at p (n bytes, `words` words from `first`) written
 * as a ZVALUES chunk through t's compressor; 0, or -1 when it failed (t's
 * stream of compressed chunks ends: its later payloads go raw, which a
 * reader decodes without the lost state). */
static int rec_values_z(rec_thread *t, void *z, uint64_t first, uint64_t words,
			const uint8_t *p, size_t n)
{
	uint8_t *out = t->zmem + REC_Z_STACK;
	rec_z_job j = { z, p, n, out + sizeof(vt_zvalues),
			rec_z_room() - sizeof(vt_zvalues) - 8 };
	size_t zn = (size_t)rec_z_on_stack(rec_z_run, &j, t->zmem + REC_Z_STACK);
	if (!zn) {
		rec_say("thread %u: compression failed; its later VALUES are written "
			"uncompressed", t->index);
		rec_z_disable(t);
		return -1;
	}
	vt_zvalues h = { first, words, n, zn };
	rec_copy_bytes(out, &h, sizeof h);
	size_t len = sizeof h + zn;
	while (len % 8)
		out[len++] = 0;
	rec_chunk_raw(VT_ZVALUES, t->index, out, len);
	return 0;
}

/* Words w[0..nwords), the `first`-th of their stream on, packed
 * (format.h, vt_pack) into one VALUES payload built in place at out:
 * the data after room for the payload's head, the codes in ctl apart,
 * then copied in front of the data.  Returns the payload's first byte,
 * its bytes in *bytes (a multiple of 8) and the words it took in *used;
 * `room` bounds the codes and data (both at most
 * out + REC_CTL_BYTES + sizeof(vt_packed) + room + 8). */
static uint8_t *rec_pack(uint8_t *out, size_t room, uint8_t *ctl, uint64_t first,
			 const uint64_t *w, size_t nwords, size_t *bytes, size_t *used)
{
	uint8_t *data = out + REC_CTL_BYTES + sizeof(vt_packed);
	vt_packed h = { .first = first };
	*used = vt_pack_fast(vt_simd(), w, nwords, ctl, data, room, &h.tokens, &h.data);
	h.words = *used;
	size_t nc = (h.tokens + 1) / 2;
	uint8_t *head = data - nc - sizeof h;
	rec_copy_bytes(head, &h, sizeof h);
	rec_copy_bytes(head + sizeof h, ctl, nc);
	size_t n = sizeof h + nc + h.data;
	while (n % 8)
		head[n++] = 0;
	*bytes = n;
	return head;
}

/* A packed payload (n bytes, `words` words from `first`) written as a
 * chunk, compressed when z; returns the compressor for the next, NULL
 * once it failed (t's stream of compressed chunks ends: its later
 * payloads go raw, which a reader decodes without the lost state). */
static void *rec_payload(rec_thread *t, void *z, uint64_t first, uint64_t words,
			 const uint8_t *head, size_t n)
{
	if (!z || rec_values_z(t, z, first, words, head, n)) {
		rec_chunk_raw(VT_VALUES, t->index, head, n);
		return NULL;
	}
	return z;
}

/* t's words w[0..nwords), the `first`-th of its stream on, packed into
 * VALUES chunks, compressed into ZVALUES ones when t has a compressor.
 * On a pipe only writes of up to PIPE_BUF bytes are atomic: there each
 * chunk is cut to fit, so that the chunks of concurrent threads (or of a
 * dying thread flushing the others) stay whole.  Under t->lock (t->pack
 * and t's compressor are t's). */
static void rec_values(rec_thread *t, uint64_t first, const uint64_t *w,
		       size_t nwords, int raw)
{
	size_t room = R.pipe ? PIPE_BUF - sizeof(vt_chunk_header) - sizeof(vt_packed) - 8
			     : REC_CTL_BYTES + REC_DATA_BYTES - 16;
	uint8_t *ctl = t->pack + REC_CTL_BYTES + sizeof(vt_packed) + REC_DATA_BYTES;
	void *z = R.pipe || raw ? NULL : rec_z_of(t);
	if (R.valgrind && !R.pipe && nwords) {
		/* unpacked (format.h, VT_TOKENS_RAW): the words as they are */
		vt_packed h = { first, nwords, R.unsummed ? VT_TOKENS_RAW_UNSUMMED : VT_TOKENS_RAW, 0 };
		rec_chunk_summed(VT_VALUES, t->index, &h, sizeof h, w, 8 * nwords,
				 R.unsummed ? 0 : 8 * nwords);
		return;
	}
	while (nwords) {
		size_t n, used;
		uint8_t *head = rec_pack(t->pack, room, ctl, first, w, nwords, &n, &used);
		z = rec_payload(t, z, first, used, head, n);
		w += used;
		first += used;
		nwords -= used;
	}
}

/* ------------------------------------------------------ thread streams */

/* t's buffers with their guard pages, and after them the packing space
 * of its flushes (rec_values); t in the first buffer. */
int rec_buffer_map(rec_thread *t)
{
	size_t size = REC_BUF_MAP_BYTES;
	char *m = rec_mmap_raw(size);
	if (!m)
		return -1;
	for (size_t i = 0; i < REC_BUFS; i++)
		if (rec_syscall3(SYS_mprotect, (long)(m + i * REC_BUF_STRIDE + REC_BUF_BYTES),
				 REC_PAGE, PROT_NONE)) {
			rec_munmap_raw(m, size);
			return -1;
		}
	t->map = (uint64_t *)m;
	t->pack = (uint8_t *)m + REC_BUFS * REC_BUF_STRIDE;
	t->jbuf = (uint64_t *)(t->pack + REC_PACK_BYTES);
	t->jctl = (uint8_t *)(t->jbuf + REC_JOBS * (REC_BUF_BYTES / 8));
	t->bufi = 0;
	t->base = t->sent = t->map;
	t->guard = t->base + REC_BUF_BYTES / 8;
	return 0;
}

/* t's next buffer, free (struct rec_thread, jobs), the one it writes. */
static void rec_buffer_next(rec_thread *t)
{
	t->bufi = (t->bufi + 1) % REC_BUFS;
	t->base = t->map + (size_t)t->bufi * (REC_BUF_STRIDE / 8);
	t->guard = t->base + REC_BUF_BYTES / 8;
}

/* The recorder's handlers run on an alternate stack (SA_ONSTACK): a
 * buffer flush may happen with the program's stack nearly full, and under
 * valgrind a signal frame cannot grow the main stack. */
static void rec_altstack(void)
{
	stack_t cur;
	if (rec_syscall3(SYS_sigaltstack, 0, (long)&cur, 0) == 0 &&
	    !(cur.ss_flags & SS_DISABLE))
		return; /* the program has its own */
	size_t size = 64 * 1024;
	void *m = rec_mmap_raw(size);
	if (!m)
		return;
	stack_t ss = { .ss_sp = m, .ss_size = size };
	rec_syscall3(SYS_sigaltstack, (long)&ss, 0, 0);
}

/* The thread pointer, the fs base the processor adds (a raw system
 * call: fs:0 holds it only where the thread block is glibc's). */
uint64_t rec_thread_pointer(void)
{
	unsigned long fs = 0;
	rec_syscall3(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, (long)&fs, 0);
	return fs;
}

void rec_start_of(vt_thread_start *ts, uint64_t start)
{
	const rec_object *o = rec_object_at(start);
	ts->start_runtime = start;
	ts->start = start;
	if (o) {
		ts->start = start - o->img.bias;
		ts->flags = (ts->flags & 0xffffu) | VT_START_IN_IMAGE |
			    o->index << 16;
	}
}

/* Async-signal-safe, no libc: also called from the SIGSEGV handler for
 * threads that reach a probe without passing through rec_thread_main
 * (raw clone, or libc's own thread start-up code once libc is patched).
 * The START chunk waits for the first flush (rec_thread_begin may still
 * name the start routine). */
/* Two regions take the words of threads without a stream.
 *  - rec_own: the start-up of a child of pthread_create (glibc's clone
 *    child code, start_thread) before rec_thread_main opens its stream.
 *    One child at a time owns a slot of it: its parent claims the next
 *    slot, points the threads' initial cursor (the cell in this
 *    object's TLS image, which glibc copies into the new thread's block
 *    inside pthread_create, in the parent) at it for the call, and back
 *    at rec_pre after; the child's words there open its stream
 *    (rec_thread_open with `keep`).
 *  - rec_pre: every other thread's, i.e. the strays libc starts itself.
 *    Only strays write there, so its first word, a canary, tells at the
 *    end whether any did: their accesses are lost, and END says so.
 * A stray libc starts during a parent's call shares its slot with the
 * child.  Slots are large reservations (libc runs such threads with
 * every signal blocked: a guard fault would kill the process), taken in
 * turn, so a stray that lingers in one meets a later owner only when
 * its slot comes round again.  A slot's first REC_OWN_WORDS words are
 * the canary but for an owner's: a word changed where the owner did not
 * write (at release, at the slot's next claim, at the end), a notify
 * thread's cursor found moved, or an owner's start-up longer than
 * REC_OWN_WORDS marks the run strayed.  (Undetected: a stray in the slot
 * writing no more words than the owner, before the owner takes them.)
 * Where the cell is not found, both regions are the static rec_prestart
 * (one slot), and a stray writing between an owner's words is not seen.
 * A child that never opens a stream (cancelled before it ran) would hold
 * its claim for ever: a claim gives up after a while, and that child's
 * start-up goes to rec_pre, which its replay reports. */
#define REC_PRESTART_CANARY 0x57a7c0de5ca1ab1eull
#define REC_OWN_WORDS (REC_OWN_PAGES * REC_PAGE / 8)
#define REC_OWN_SLOTS 16

static uint64_t *rec_own_base = rec_prestart;
static size_t rec_own_slot = 0;		/* words per slot; 0: one slot */
static unsigned rec_own_n = 1;
static uint32_t rec_own_filled = 1;	/* slots whose canary was laid */
uint64_t *rec_own_guard = REC_PRESTART_GUARD;
static uint64_t *rec_own_cur = rec_prestart;	/* the claim's slot */
/* generation << 2 | holders: a claim makes 2 holders (the parent until
 * its pthread_create returned, the child until it took its words) */
static _Atomic uint64_t rec_own_state;
static _Atomic int rec_strays;		/* sticky: a stray was seen */
static uint64_t **rec_cell;		/* the cursor's initial value */

/* The initial value of rec_t.cursor in this object's TLS image (the
 * bytes every new thread's TLS block is copied from): found through
 * dl_iterate_phdr by the calling thread's own block, and checked. */
typedef struct rec_tls_seek {
	uint64_t **cell;
	int relro;		/* the cell's page is read-only after relocation */
} rec_tls_seek;

static int rec_tls_cb(struct dl_phdr_info *info, size_t size, void *p)
{
	(void)size;
	rec_tls_seek *s = p;
	uintptr_t me = (uintptr_t)&rec_prestart_init;
	const ElfW(Phdr) *tls = NULL, *relro = NULL;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && me >= info->dlpi_addr + ph->p_vaddr &&
		    me < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			mine = 1;
		if (ph->p_type == PT_TLS)
			tls = ph;
		if (ph->p_type == PT_GNU_RELRO)
			relro = ph;
	}
	if (!mine)
		return 0;
	if (!tls || !info->dlpi_tls_data)
		return 1;
	uintptr_t off = (uintptr_t)&rec_t.cursor - (uintptr_t)info->dlpi_tls_data;
	if (off + sizeof(uint64_t *) > tls->p_filesz)
		return 1;
	uintptr_t cell = info->dlpi_addr + tls->p_vaddr + off;
	s->cell = (uint64_t **)cell;
	/* the loader makes read-only the pages wholly inside PT_GNU_RELRO
	 * (its end rounded down); a page it shares with data stays writable */
	if (relro) {
		uintptr_t lo = info->dlpi_addr + relro->p_vaddr;
		uintptr_t hi = (lo + relro->p_memsz) & ~(uintptr_t)(REC_PAGE - 1);
		s->relro = cell >= (lo & ~(uintptr_t)(REC_PAGE - 1)) && cell < hi;
	}
	return 1;
}

/* Points new threads' cursor at `to`; one caller at a time (a claim's
 * holder, or set-up and fork with one thread).  The cell's page was
 * made writable once, at set-up. */
static void rec_cell_set(uint64_t *to)
{
	if (rec_cell)
		*(uint64_t *volatile *)rec_cell = to;
}

static uint64_t *rec_own_slot_at(unsigned k)
{
	return rec_own_base + (size_t)k * rec_own_slot;
}

static void rec_own_fill(uint64_t *slot, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)	/* no libc: it may be patched */
		((volatile uint64_t *)slot)[i] = REC_PRESTART_CANARY;
}

/* A word of the slot's watched words changed (a stray wrote there) */
static int rec_own_changed(const uint64_t *slot)
{
	for (size_t i = 0; i < REC_OWN_WORDS; i++)
		if (((const volatile uint64_t *)slot)[i] != REC_PRESTART_CANARY)
			return 1;
	return 0;
}

/* A slot no owner holds: a stray's words there are noted, the slot laid
 * again. */
static void rec_own_sweep(uint64_t *slot)
{
	if (rec_own_changed(slot)) {
		rec_stray_seen();
		rec_own_fill(slot, 0, REC_OWN_WORDS);
	}
}

/* A reservation of `bytes` (no memory until written), its last page a
 * guard; NULL where refused (e.g. without overcommit). */
static uint64_t *rec_reserve(size_t bytes)
{
	long m = rec_syscall6(SYS_mmap, 0, (long)bytes, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m < 0 && m > -4096)
		return NULL;
	if (rec_syscall3(SYS_mprotect, m + (long)(bytes - REC_PAGE), REC_PAGE, PROT_NONE)) {
		rec_munmap_raw((void *)m, bytes);
		return NULL;
	}
	return (uint64_t *)m;
}

/* At set-up, the only thread: rec_pre and the slots of rec_own are
 * reservations (smaller ones where large ones are refused); else both
 * stay the static rec_prestart. */
void rec_prestart_init(void)
{
	static const size_t pre[] = { (size_t)64 << 30, (size_t)16 << 20 };
	static const size_t slot[] = { (size_t)1 << 30, (size_t)16 << 20 };
	rec_tls_seek s = { 0 };
	dl_iterate_phdr(rec_tls_cb, &s);
	rec_own_fill(rec_prestart, 0, REC_OWN_WORDS);
	if (!s.cell || *s.cell != rec_prestart)
		return;
	uintptr_t pg = (uintptr_t)s.cell & ~(uintptr_t)(REC_PAGE - 1);
	if (s.relro && rec_syscall3(SYS_mprotect, (long)pg, REC_PAGE, PROT_READ | PROT_WRITE))
		return;
	for (size_t k = 0; k < sizeof pre / sizeof *pre; k++) {
		size_t own = REC_OWN_SLOTS * slot[k] + REC_PAGE;
		uint64_t *p = rec_reserve(pre[k]);
		uint64_t *o = p ? rec_reserve(own) : NULL;
		if (!o) {
			if (p)
				rec_munmap_raw(p, pre[k]);
			continue;
		}
		rec_pre = p;
		rec_pre_guard = p + (pre[k] - REC_PAGE) / 8;
		rec_pre_bytes = pre[k];
		rec_pre[0] = REC_PRESTART_CANARY;
		rec_own_base = o;
		rec_own_filled = 0;
		rec_own_slot = slot[k] / 8;
		rec_own_n = REC_OWN_SLOTS;
		rec_own_guard = o + (own - REC_PAGE) / 8;
		rec_cell = s.cell;
		rec_cell_set(rec_pre);
		return;
	}
}

void rec_stray_seen(void)
{
	atomic_store(&rec_strays, 1);
}

/* A slot changed while nobody held a claim (read between two equal
 * states). */
static int rec_own_dirty(void)
{
	for (int tries = 0; tries < 8; tries++) {
		uint64_t a = atomic_load(&rec_own_state);
		if (a & 3)
			continue;
		int dirty = 0;
		for (unsigned k = 0; k < rec_own_n; k++)
			if (rec_own_filled >> k & 1)
				dirty |= rec_own_changed(rec_own_slot_at(k));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load(&rec_own_state) == a)
			return dirty;
	}
	return 0;
}

static int rec_prestart_strayed(void)
{
	return atomic_load(&rec_strays) || rec_own_dirty() ||
	       (rec_pre != rec_prestart &&
		*(volatile uint64_t *)rec_pre != REC_PRESTART_CANARY);
}

/* Threads that never open a stream write on into rec_pre and the slots:
 * their pages past the watched words are dropped, to come back as zero
 * pages if written again.  Called by the flusher when idle. */
void rec_prestart_trim(void)
{
	if (!rec_pre_bytes || !rec_prestart_strayed())
		return;
	rec_syscall3(SYS_madvise, (long)(rec_pre + REC_PAGE / 8),
		     (long)(rec_pre_bytes - 2 * REC_PAGE), MADV_DONTNEED);
	size_t keep = REC_OWN_WORDS * 8;	/* whole pages */
	for (unsigned k = 0; rec_own_slot && k < rec_own_n; k++)
		rec_syscall3(SYS_madvise, (long)((char *)rec_own_slot_at(k) + keep),
			     (long)(rec_own_slot * 8 - keep), MADV_DONTNEED);
}

int rec_prestart_claim(void)
{
	for (unsigned n = 0; n < 100000; n++) {
		uint64_t z = atomic_load(&rec_own_state);
		uint64_t g = (z >> 2) + 1;
		if ((z & 3) == 0 &&
		    atomic_compare_exchange_weak(&rec_own_state, &z, g << 2 | 2)) {
			unsigned k = (unsigned)(g % rec_own_n);
			uint64_t *slot = rec_own_slot_at(k);
			if (!(rec_own_filled >> k & 1)) {
				rec_own_fill(slot, 0, REC_OWN_WORDS);
				rec_own_filled |= 1u << k;
			} else {	/* written since its last release? */
				rec_own_sweep(slot);
			}
			rec_own_cur = slot;
			if (rec_pre != rec_prestart)
				rec_cell_set(slot);
			return 1;
		}
		rec_syscall3(SYS_sched_yield, 0, 0, 0);
	}
	return 0;
}

static void rec_own_drop(void)
{
	atomic_fetch_sub(&rec_own_state, 1);
}

/* The parent, its pthread_create returned (the child's TLS block is
 * copied): new threads start in rec_pre again.  `failed`: no child. */
void rec_prestart_created(int failed)
{
	if (rec_pre != rec_prestart)
		rec_cell_set(rec_pre);
	if (failed) {
		rec_own_sweep(rec_own_cur);
		rec_own_drop();
	}
	rec_own_drop();
}

int rec_prestart_mine(void)
{
	const uint64_t *c = rec_cursor, *own = rec_own_cur;
	return c >= own && c < own + REC_OWN_WORDS;
}

/* The child, its `used` words taken: the slot is laid again; a word
 * changed past them is a stray's. */
void rec_prestart_release(size_t used)
{
	uint64_t *slot = rec_own_cur;
	if (used >= REC_OWN_WORDS)
		used = REC_OWN_WORDS - 1;
	for (size_t i = used; i < REC_OWN_WORDS; i++)
		if (((volatile uint64_t *)slot)[i] != REC_PRESTART_CANARY) {
			rec_stray_seen();
			used = REC_OWN_WORDS - 1;
			break;
		}
	rec_own_fill(slot, 0, used + 1);
	rec_own_drop();
}

/* A forked child: only the forking thread lives on; a claim another
 * thread held, and words strays wrote, were the parent's.  Also at
 * set-up, before the main thread's stream opens. */
void rec_prestart_forked(void)
{
	rec_own_fill(rec_prestart, 0, REC_OWN_WORDS);
	rec_own_filled = rec_own_slot ? 0 : 1;	/* the static page: laid */
	rec_own_cur = rec_own_base;
	if (rec_pre != rec_prestart) {
		rec_pre[0] = REC_PRESTART_CANARY;
		rec_cell_set(rec_pre);
	}
	atomic_store(&rec_strays, 0);
	atomic_store(&rec_own_state, 0);
}

/* A notify thread about to open its stream: a cursor moved from where
 * it started means words lost (in a slot: a stray during a claim). */
void rec_prestart_check_self(void)
{
	uint64_t *c = rec_cursor;
	if (c == rec_pre)
		return;
	if (rec_own_slot && c >= rec_own_base && c < rec_own_guard &&
	    (size_t)(c - rec_own_base) % rec_own_slot == 0)
		return;
	rec_stray_seen();
}

_Static_assert(offsetof(rec_tls, lastsp) == REC_TLS_LASTSP &&
	       offsetof(rec_tls, dslot) == REC_TLS_DSLOT, "rec_tls layout");

static void rec_tls_reset_deltas(void)
{
	rec_t.lastsp = 0;
	for (int i = 0; i < PATCH_DSLOTS; i++)	/* no libc: it may be patched */
		rec_t.dslot[i] = 0;
}

rec_thread *rec_thread_open(uint64_t start, uint32_t parent,
				   uint32_t flags, int keep)
{
	/* the words this thread stored in its claim's slot, if it owns one */
	size_t kept = 0;
	const uint64_t *own = rec_own_cur;	/* its claim's slot */
	if (keep && rec_cursor >= own && rec_cursor < own + REC_OWN_WORDS) {
		kept = (size_t)(rec_cursor - own);
	} else if (keep) {	/* REC_OWN_WORDS or more, or elsewhere */
		rec_stray_seen();
		keep = 0;
		rec_prestart_release(REC_OWN_WORDS);
	}
	if (keep)	/* its words are taken below, or dropped */
		rec_cursor = rec_pre;
	else	/* as the replay starts the stream */
		rec_tls_reset_deltas();
	if (R.child || R.finished) {
		if (keep)
			rec_prestart_release(kept);
		return &R.sink;
	}
	rec_thread *t = rec_mmap_raw(REC_PAGE);
	if (!t || rec_buffer_map(t)) {
		if (t)
			rec_munmap_raw(t, REC_PAGE);
		if (keep)
			rec_prestart_release(kept);
		return &R.sink;
	}
	rec_altstack();
	t->cursor = &rec_cursor;
	t->tls = &rec_t;
	t->ts = (vt_thread_start){ .parent = parent, .flags = flags,
				   .fsbase = rec_thread_pointer() };
	t->t0 = rec_now_ns();
	rec_start_of(&t->ts, start);
	t->index = atomic_fetch_add(&R.nthreads, 1);
	if (t->index < REC_MAX_THREADS)
		R.threads[t->index] = t;
	t->tid = (int)rec_syscall3(SYS_gettid, 0, 0, 0);
	rec_self = t;
	for (size_t i = 0; i < kept; i++)	/* no libc: it may be patched */
		t->base[i] = own[i];
	rec_cursor = t->base + kept;
	if (keep)
		rec_prestart_release(kept);
	return t;
}

static void rec_flush_locked(rec_thread *t, uint64_t *end, int reset);

/* CLOCK_MONOTONIC by a raw system call, not the vDSO through libc (which
 * may be patched): a flush costs one more call, an access nothing. */
uint64_t rec_now_ns(void)
{
	struct timespec ts = { 0, 0 };
	rec_syscall3(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A TIME chunk: t had written `word` words at `ns`. */
static void rec_stamp(const rec_thread *t, uint64_t word, uint64_t ns)
{
	vt_time v = { word, ns };
	rec_chunk_raw(VT_TIME, t->index, &v, sizeof v);
}

/* Writes t's START chunk now: the main thread's, at set-up, so that it
 * is the first thread of the trace whoever flushes first. */
void rec_thread_start_now(rec_thread *t)
{
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	rec_flush_locked(t, NULL, 0);
	rec_unlock(&t->lock);
	rec_restore_mask(&old);
}

rec_thread *rec_thread_begin(uint64_t start, uint32_t parent, int keep)
{
	rec_thread *t = rec_self;
	if (!t) {
		t = rec_thread_open(start, parent, 0, keep);
	} else if (keep) {	/* opened at a guard fault: the page was lost */
		rec_prestart_release(REC_OWN_WORDS);
	}
	if (t && t != &R.sink && rec_self != NULL) {
		sigset_t old;
		rec_block_all(&old);
		rec_lock(&t->lock);
		if (!t->started) {
			t->ts = (vt_thread_start){ .parent = parent,
						   .fsbase = t->ts.fsbase };
			rec_start_of(&t->ts, start);
		}
		rec_unlock(&t->lock);
		rec_restore_mask(&old);
	}
	if (t != &R.sink) {
		pthread_setspecific(R.key, t);
		rec_heap_thread(t);
	}
	rec_sig_undefer(NULL);	/* signals that came before the stream */
	return t;
}

/* A spin lock: held only around a flush, never while program code runs.
 * The online flusher thread runs no program code and takes signals on no
 * account, so a holder always makes progress. */
void rec_lock(_Atomic int *l)
{
	for (unsigned n = 0; atomic_exchange_explicit(l, 1, memory_order_acquire); n++) {
		if (n < 64)
			__builtin_ia32_pause();
		else
			rec_syscall3(SYS_sched_yield, 0, 0, 0);
	}
}

void rec_unlock(_Atomic int *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

/* Writes [t->sent, end): the words recorded and not yet written.  With
 * `reset` (only by the owning thread, or for it in its signal handler)
 * the buffer starts over: sent and the cursor go back to base.  Under
 * t->lock, with signals blocked. */
static void rec_flush_locked(rec_thread *t, uint64_t *end, int reset)
{
	rec_job_wait(t);	/* its words handed over come first */
	if (!t->started && !rec_off()) {
		rec_chunk(VT_THREAD_START, t->index, &t->ts, sizeof t->ts);
		rec_stamp(t, 0, t->t0);
		t->started = 1;
	}
	if (t->tp_moved == 1 && t->started && !rec_off()) {
		/* the skeleton computes fs-relative addresses from ts.fsbase:
		 * from the words already written on, it would be wrong */
		vt_time v = { t->written, rec_thread_pointer() };
		rec_chunk(VT_TP_MOVED, t->index, &v, sizeof v);
		t->tp_moved = 2;
	}
	if (t->started && !rec_off())
		rec_heap_flush(t);	/* before the words they precede */
	if (!end || end < t->base || end > t->guard)
		return;
	if (end > t->sent && !rec_off()) {
		size_t n = (size_t)(end - t->sent);
		rec_values(t, t->written, t->sent, n, 0);
		t->written += n;
		rec_stamp(t, t->written, rec_now_ns());
		atomic_fetch_add(&R.values, n);
	}
	if (end > t->sent)
		t->sent = end;
	if (reset) {
		t->origin = t->written;
		t->sent = t->base;
		rec_cursor = t->base;
	}
}

/* No handler of this thread may come to a lock while the thread holds it
 * (a guard-page fault in a nested handler would wait forever). */
void rec_block_all(sigset_t *old)
{
	uint64_t all = ~0ull;
	rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)old, 8,
		     0, 0);
}

void rec_restore_mask(const sigset_t *old)
{
	rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)old, 0, 8, 0, 0);
}

/* By the owning thread: whether its thread pointer moved since its
 * stream opened (arch_prctl(ARCH_SET_FS), which no libc thread does);
 * the next flush then says so (TP_MOVED).  Asked at the thread's own
 * flushes and when it starts to exit (rec_exit_watch); a thread still
 * running at the process's exit, flushed by another, is not asked. */
int rec_tp_check(rec_thread *t)
{
	if (!t->tp_moved && rec_thread_pointer() != t->ts.fsbase)
		t->tp_moved = 1;
	return t->tp_moved == 1;
}

void rec_flush_upto(rec_thread *t, uint64_t *end, int reset)
{
	if (t == &R.sink)
		return;
	if (reset)
		rec_tp_check(t);
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	rec_flush_locked(t, end, reset);
	rec_unlock(&t->lock);
	rec_restore_mask(&old);
}

/* THREAD_END: t has written all its words; `flags` VT_ENDED_*. */
static void rec_end_chunk(const rec_thread *t, uint64_t flags)
{
	uint64_t p[2] = { t->written, flags };
	rec_chunk(VT_THREAD_END, t->index, p, flags ? sizeof p : sizeof p[0]);
}

/* Flush of the calling thread outside a signal handler: signals are
 * blocked so that a handler running probed code cannot store into the
 * buffer between the write and the reset.  `end` also closes the stream,
 * its THREAD_END with `flags` (VT_ENDED_*). */
static void rec_flush_self(int end, uint32_t flags)
{
	sigset_t old;
	rec_block_all(&old);
	rec_thread *t = rec_self;
	if (t && t != &R.sink) {
		rec_flush_upto(t, rec_cursor, 1);
		if (end) {
			rec_lock(&t->lock);
			rec_end_chunk(t, flags);
			t->ended = 1;
			rec_unlock(&t->lock);
		}
	}
	rec_restore_mask(&old);
}

static void rec_thread_end(rec_thread *t, uint32_t flags)
{
	if (!t || t == &R.sink || t->ended)
		return;
	rec_flush_self(1, flags);
	rec_self = &R.sink;
	rec_cursor = R.sink.base;
	/* the header page stays: the crash flush may still look at t */
	rec_munmap_raw(t->map, REC_BUF_MAP_BYTES);
	rec_z_drop(t);
}

/* pthread key destructor: thread exit (return or pthread_exit).  The
 * stream goes on to the exit system call when the reaper can close it
 * there (rec_exit.c); else it ends here, and says so. */
/* Before code that runs with every signal blocked (libc's, by its own
 * system calls: pthread_create around the clone, posix_spawn, a thread's
 * last steps after its key destructors): a buffer filling up there
 * faults on its guard page with SIGSEGV blocked, and the kernel kills
 * the process.  Those stretches record a few hundred words; with less
 * room than REC_ROOM_WORDS the buffer is written out first. */
void rec_make_room(void)
{
	rec_thread *t = rec_self;
	if (!R.active || !t || t == &R.sink || t->ended)
		return;
	uint64_t *cur = *(uint64_t *volatile *)t->cursor;
	if (cur >= t->base && cur <= t->guard && t->guard - cur < REC_ROOM_WORDS)
		rec_flush_self(0, 0);
}

void rec_thread_exit_now(void)
{
	if (R.active && !rec_off() && rec_getpid() == R.pid)
		rec_thread_end(rec_self, 0);
}

void rec_on_thread_exit(void *p)
{
	rec_make_room();
	if (!rec_exit_watch(p))
		rec_thread_end(p, VT_ENDED_IN_DESTRUCTOR);
}

/* The stream of a thread that died in its exit system call: its words
 * up to the cursor its TLS still holds (the stack is not reused before
 * the reaper says the thread is gone), THREAD_END, its buffer unmapped.
 * By another thread: the reaper, or the one that exits the process. */
void rec_thread_close_dead(rec_thread *t)
{
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&R.pass);
	rec_lock(&t->lock);
	int was = t->ended;
	if (!was) {
		rec_flush_locked(t, *(uint64_t *volatile *)t->cursor, 0);
		rec_end_chunk(t, 0);
		t->ended = 1;
	}
	rec_unlock(&t->lock);
	if (!was) {
		rec_munmap_raw(t->map, REC_BUF_MAP_BYTES);
		rec_z_drop(t);
	}
	rec_unlock(&R.pass);
	rec_restore_mask(&old);
}

/* Every live thread's words up to its cursor, written without stopping
 * it.  Other threads may be storing meanwhile; a word is written before
 * its cursor moves past it (x86 stores are seen in order), so the prefix
 * read here is valid.  The cursor is read under the thread's lock, which
 * its exit takes before its TLS goes away. */
static void rec_flush_others(const rec_thread *me, int dying)
{
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		if (!t || t == me || t->ended)
			continue;
		sigset_t old;
		rec_block_all(&old);
		rec_lock(&t->lock);
		if (!t->ended) {
			uint64_t *end = *(uint64_t *volatile *)t->cursor;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			rec_flush_locked(t, end, 0);
		}
		rec_unlock(&t->lock);
		rec_restore_mask(&old);
	}
}

/* Dying: every live thread's words up to its cursor. */
void rec_flush_all_dying(void)
{
	if (rec_off() || rec_getpid() != R.pid)
		return;
	rec_thread *me = rec_self;
	if (me && me != &R.sink && !me->ended)
		rec_flush_upto(me, *(uint64_t *volatile *)me->cursor, 1);
	rec_flush_others(me, 1);
}

/* The flusher: a thread of the recorder's that writes what the program's
 * threads recorded while they go on.
 *
 * A full buffer (its guard fault) is copied aside and handed to it
 * (rec_flush_full): packing and compressing 32768 words costs about as
 * much as recording them, and on a second core it no longer adds to the
 * program's time.  A thread has REC_JOBS such jobs at most, written in
 * order, each with the thread's HEAP events before its words; whatever
 * else writes for it (its end, a flush by another thread, a full ring of
 * events) waits for them all first (rec_flush_locked, rec_chunk), so its
 * chunks keep their order.  The flusher takes no lock but with trylock:
 * a thread waiting for its job may hold its own.
 *
 * skel run: the replayer reads a FIFO as the program runs.  Buffers fill
 * only every 32768 words, and a loop nest may record a handful in all, so
 * the flusher also writes what each thread has recorded every
 * millisecond: the replayer starts on the first words while the program
 * still runs.
 *
 * The thread is a bare clone() on a stack in .bss, not a pthread: a
 * pthread would malloc (its TLS) and mmap (its stack) in the program's
 * address space, and the program's heap and mapping addresses under skel
 * run must be those under skel record; glibc does not count it either
 * (its single-thread fast paths stay).  It shares the main thread's TLS,
 * so it runs no libc code at all (which, patched, would store into the
 * main thread's buffer), only system calls that leave errno alone, and
 * never touches rec_cursor or rec_self.  The clone is ours too: libc's
 * clone() runs its child's first instructions in libc.  Every signal is
 * blocked in it.  Not under valgrind (skel check): there a second
 * thread's work would only slow the run. */
static char rec_flusher_stack[64 * 1024] __attribute__((aligned(64)));
static _Atomic uint32_t rec_jobs;	/* bumped at each hand-over */
static _Atomic uint32_t rec_jobs_packed;	/* those packed by their thread */
static _Atomic int rec_behind;		/* the flusher takes full buffers */
static int rec_flusher_on;
static _Atomic int rec_flusher_tid;	/* 0 once it has exited */
static _Atomic int rec_flusher_quit;

/* rec_clone_raw(flags, stack, tls, tid): stack[0] is the function,
 * stack[1] its argument; the child pops both, calls, and exits the
 * thread.  tls: the child's fs base with CLONE_SETTLS; tid: parent_tid
 * and child_tid. */
__asm__(".text\n"
	".globl rec_clone_raw\n"
	".hidden rec_clone_raw\n"
	".type rec_clone_raw, @function\n"
	"rec_clone_raw:\n"
	"	mov $56, %eax\n"		/* SYS_clone */
	"	mov %rdx, %r8\n"
	"	mov %rcx, %rdx\n"
	"	mov %rcx, %r10\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	xor %ebp, %ebp\n"
	"	pop %rax\n"
	"	pop %rdi\n"
	"	call *%rax\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"		/* SYS_exit: this thread only */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size rec_clone_raw, .-rec_clone_raw\n");

/* Where t packs its i-th job itself (of its ring of REC_JOBS). */
static uint64_t *rec_job_words(const rec_thread *t, uint32_t i)
{
	return t->jbuf + (size_t)(i % REC_JOBS) * (REC_BUF_BYTES / 8);
}

/* t's oldest job written; t's waiters woken. */
static void rec_job_run(rec_thread *t)
{
	uint32_t i = atomic_load_explicit(&t->jtail, memory_order_relaxed);
	const struct rec_job *j = &t->jobs[i % REC_JOBS];
	/* the thread waited for the flusher, or another job of it waits
	 * behind this one: this one raw (compressing costs the flusher about
	 * as much again as packing) */
	int raw = atomic_exchange_explicit(&t->zlag, 0, memory_order_relaxed) ||
		  (R.zmode == 0 && (rec_jobs_left(t) >= 2 || j->packed));
	if (R.zmode == 2)
		raw = j->first / (REC_BUF_BYTES / 8) % 2;
	rec_heap_flush_upto(t, j->heap, rec_chunk_raw);
	if (j->packed)
		rec_payload(t, raw ? NULL : rec_z_of(t), j->first, j->n,
			    (const uint8_t *)j->words + j->at, j->packed);
	else
		rec_values(t, j->first, j->words, j->n, raw);
	rec_stamp(t, j->first + j->n, j->ns);
	atomic_fetch_add(&R.values, j->n);
	atomic_store_explicit(&t->jtail, i + 1, memory_order_release);
	rec_futex(&t->jtail, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* Every job handed over; 1 if there was one. */
static int rec_jobs_run(void)
{
	int did = 0;
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		if (!t)
			continue;
		/* those handed over by now: a thread that keeps filling
		 * buffers does not hold the flusher from the others, from
		 * skel run's words, from quitting */
		uint32_t head = atomic_load_explicit(&t->jhead, memory_order_acquire);
		while (atomic_load_explicit(&t->jtail, memory_order_relaxed) != head) {
			rec_job_run(t);
			did = 1;
		}
	}
	return did;
}

static int rec_trylock(_Atomic int *l)
{
	return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

/* skel run: every thread's words so far, skipping a thread whose lock is
 * taken (it is flushing) or whose job is not written yet. */
static void rec_flush_online(void)
{
	if (!rec_trylock(&R.pass))
		return;
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		if (!t || t->ended || !rec_trylock(&t->lock))
			continue;
		if (!t->ended && rec_job_done(t)) {
			uint64_t *end = *(uint64_t *volatile *)t->cursor;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			rec_flush_locked(t, end, 0);
		}
		rec_unlock(&t->lock);
	}
	rec_unlock(&R.pass);
}

/* Whether the process's other threads have all exited by their exit
 * system call (not exit_group, nor through rec_finish): then the process
 * lives as long as the flusher does, and its status is the last exit's.
 * From /proc/self/stat: the main thread a zombie, two threads counted
 * (it and the flusher); *code its exit status. */
static int rec_flusher_alone(int *code)
{
	char b[1024];
	long fd = rec_syscall3(SYS_open, (long)"/proc/self/stat", O_RDONLY, 0);
	if (fd < 0)
		return 0;
	long n = rec_syscall3(SYS_read, fd, (long)b, sizeof b - 1);
	rec_syscall3(SYS_close, fd, 0, 0);
	if (n <= 0)
		return 0;
	b[n] = 0;
	char *p = NULL;
	for (long i = 0; i < n; i++)	/* after the name's last ')' */
		if (b[i] == ')')
			p = b + i + 1;
	if (!p)
		return 0;
	long field[53] = { 0 };
	char state = 0;
	for (int f = 3; f <= 52 && *p; f++) {
		while (*p == ' ')
			p++;
		if (f == 3)
			state = *p;
		else
			for (; *p >= '0' && *p <= '9'; p++)
				field[f] = field[f] * 10 + (*p - '0');
		while (*p && *p != ' ')
			p++;
	}
	*code = (int)(field[52] >> 8 & 0xff);
	return state == 'Z' && field[20] == 2;
}

static int rec_jobs_moved(const void *seq)
{
	return atomic_load(&rec_jobs) != *(const uint32_t *)seq;
}

static int rec_flusher(void *arg)
{
	(void)arg;
	const uint64_t period = 1000000;	/* ns, online */
	uint64_t last = 0;
	unsigned idle = 0;
	for (;;) {
		uint32_t seq = atomic_load(&rec_jobs);
		int did = rec_jobs_run();
		if (atomic_load(&rec_flusher_quit))
			return 0;
		if (rec_off()) {	/* a thread of this process only: a
					 * forked child starts its own */
			rec_jobs_run();
			return 0;
		}
		if (R.pipe) {
			uint64_t now = rec_now_ns();
			if (now - last >= period) {
				rec_flush_online();
				last = now;
			}
		}
		/* a next job often comes within microseconds: look again
		 * before sleeping */
		if (!did && rec_spin(&rec_idle_spin, rec_jobs_moved, &seq))
			continue;
		if (!did) {
			/* idle: a look at the process every 200 ms */
			struct timespec ts = { 0, R.pipe ? (long)period : 200000000L };
			int code;
			int slept = rec_futex(&rec_jobs, FUTEX_WAIT_PRIVATE, (int)seq, &ts);
			if (slept == -ETIMEDOUT && (!R.pipe || ++idle % 200 == 0))
				rec_prestart_trim();
			if (slept == -ETIMEDOUT &&
			    (!R.pipe || idle % 200 == 0) && rec_flusher_alone(&code)) {
				if (R.pipe)	/* what the dead threads wrote */
					rec_flush_online();
				return code;
			}
		}
	}
}

void rec_flusher_stop(void)
{
	if (!atomic_load(&rec_flusher_tid))
		return;
	atomic_store(&rec_flusher_quit, 1);
	atomic_fetch_add(&rec_jobs, 1);
	rec_futex(&rec_jobs, FUTEX_WAKE_PRIVATE, 1, NULL);
	int v;
	while ((v = atomic_load(&rec_flusher_tid)) != 0)
		rec_futex(&rec_flusher_tid, FUTEX_WAIT, v, NULL);
	atomic_store(&rec_behind, 0);
}

void rec_flusher_start(int behind)
{
	sigset_t old;
	rec_block_all(&old);	/* inherited by the thread: all blocked */
	void **top = (void **)(rec_flusher_stack + sizeof rec_flusher_stack) - 2;
	top[0] = (void *)rec_flusher;
	top[1] = NULL;
	atomic_store(&rec_flusher_quit, 0);
	rec_flusher_on = rec_clone_raw(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				       CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
				       CLONE_CHILD_CLEARTID, top, 0, &rec_flusher_tid) > 0;
	if (rec_flusher_on)
		atomic_store(&rec_behind, behind);
	else if (R.pipe)
		rec_say("cannot start the online flusher; words reach the replayer "
			"every %lu KiB", REC_BUF_BYTES / 1024);
	rec_restore_mask(&old);
}

void rec_flusher_forked(void)
{
	int behind = atomic_load(&rec_behind);
	atomic_store(&rec_behind, 0);
	atomic_store(&rec_flusher_tid, 0);	/* the parent's */
	if (rec_flusher_on && behind && !rec_off())
		rec_flusher_start(1);
}

void rec_flush_full(rec_thread *t)
{
	if (rec_tp_check(t) || !atomic_load(&rec_behind) || t->index >= REC_MAX_THREADS ||
	    R.threads[t->index] != t || rec_getpid() != R.pid) {
		rec_flush_upto(t, t->guard, 1);
		return;
	}
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	/* START is written by the thread, after the jobs before it; else
	 * a free slot is all this one needs (the job takes the heap events
	 * before its words along) */
	if (!t->started)
		rec_flush_locked(t, NULL, 0);
	else
		rec_job_await(t, rec_job_slot);
	if (t->guard > t->sent && !rec_off()) {
		size_t n = (size_t)(t->guard - t->sent);
		uint32_t i = atomic_load_explicit(&t->jhead, memory_order_relaxed);
		struct rec_job *j = &t->jobs[i % REC_JOBS];
		j->packed = 0;
		if ((rec_jobs_left(t) >= REC_JOBS - 1 || R.prepack_all) && !R.pipe) {
			/* the flusher is three jobs behind: the thread
			 * packs this one while its words are in its cache
			 * (about 2 ns a word), which beats waiting for a
			 * slot; the flusher only writes it.  wc of a 39 MB
			 * file, 700 M words, SKEL_COMPRESS=0: 3.4 -> 2.7 s */
			uint8_t *slot = (uint8_t *)rec_job_words(t, i);
			size_t bytes, used;
			j->words = (uint64_t *)slot;
			const uint8_t *head = rec_pack(slot, REC_BUF_BYTES - REC_CTL_BYTES -
							     sizeof(vt_packed) - 16,
						       t->jctl, t->written, t->sent, n, &bytes, &used);
			if (used == n) {
				j->at = (uint64_t)(head - slot);
				j->packed = bytes;
				atomic_fetch_add(&rec_jobs_packed, 1);
			}
		}
		if (!j->packed) {	/* the buffer itself */
			j->words = t->sent;
			rec_buffer_next(t);
		}
		j->first = t->written;
		j->n = n;
		j->ns = rec_now_ns();
		j->heap = rec_heap_stored(t);
		t->written += n;
		atomic_store_explicit(&t->jhead, i + 1, memory_order_release);
		atomic_fetch_add(&rec_jobs, 1);
		rec_futex(&rec_jobs, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	t->origin = t->written;
	t->sent = t->base;
	rec_cursor = t->base;
	rec_unlock(&t->lock);
	rec_restore_mask(&old);
}

/* SKEL_VERBOSE: the int3 sites hit most, by object and offset */
static void rec_int3_busiest(void)
{
	rec_int3_table *tb = atomic_load(&R.int3);
	if (!tb)
		return;
	uint64_t shown = UINT64_MAX;
	for (int k = 0; k < 8; k++) {
		const rec_int3 *best = NULL;
		for (size_t i = 0; i < tb->n; i++)
			if (tb->v[i].hits && tb->v[i].hits < shown &&
			    (!best || tb->v[i].hits > best->hits))
				best = &tb->v[i];
		if (!best)
			return;
		shown = best->hits;
		const rec_object *o = NULL;
		for (uint32_t j = 0; j < atomic_load(&R.nobj); j++)
			if (R.obj[j].img.path && best->pc >= R.obj[j].img.bias &&
			    (!o || R.obj[j].img.bias > o->img.bias))
				o = &R.obj[j];
		rec_say("int3 site %s+0x%" PRIx64 ": %" PRIu64 " hits",
			!o ? "?" : o->index ? o->img.path : "the executable", o ? best->pc - o->img.bias : best->pc,
			best->hits);
	}
}

void rec_stats(const char *when)
{
	if (R.verbose && !strcmp(when, "exit"))
		rec_int3_busiest();
	if (R.verbose)
		rec_say("STATS %s objects_patched=%u sections=%zu sites=%zu "
			"neighbour_sites=%zu loop_sites=%zu int3_sites=%zu landing_sites=%zu probes=%zu "
			"trampoline_bytes=%zu threads=%u values=%" PRIu64
			" int3_hits=%" PRIu64 " int3_entered=%zu plans_read=%d"
			" plans_made=%d plans_as_is=%d handed_over=%u packed_by_thread=%u", when,
			atomic_load(&R.nobj), R.set.n,
			R.nsites, R.nneighbour, R.nloop, R.nint3, R.nlanding, R.nprobes, R.code_size,
			atomic_load(&R.nthreads), atomic_load(&R.values),
			atomic_load(&R.int3_hits), R.nredirect, R.plans_read,
			R.plans_made, R.plans_as_is, atomic_load(&rec_jobs), atomic_load(&rec_jobs_packed));
}

/* The other threads still running at the process's exit, which the
 * kernel would kill wherever they are (their words after the last flush
 * lost, the accesses after their last word unknown to the replay): each
 * is asked to stop at its next probe, or where it waits in a system
 * call, and waits there for the kill (rec_park_ask).  A thread that does
 * not stop within the watchdog's time (a loop that records nothing, a
 * blocked signal) runs on and is said to have been running.  Those
 * stopped at a probe go on once END is written (rec_park_release): one
 * may hold a lock of the program's that the rest of the exit takes. */
static int rec_park_due(const rec_thread *t, const rec_thread *me)
{
	return t && t != me && !t->ended && t->tid && !atomic_load(&t->parked) &&
	       !atomic_load(&t->reaped);
}

static void rec_park_others(const rec_thread *me)
{
	uint32_t n = atomic_load(&R.nthreads);
	int asked = 0;
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++)
		asked += rec_park_due(R.threads[i], me) && rec_park_ask(R.threads[i]);
	if (!asked)
		return;
	const struct timespec ms1 = { 0, 1000000 };
	for (int w = 0; w < (R.valgrind ? 2000 : 200); w++) {
		int left = 0;
		for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++)
			left += rec_park_due(R.threads[i], me);
		if (!left)
			return;
		rec_syscall3(SYS_nanosleep, (long)&ms1, 0, 0);
	}
}

void rec_finish(uint32_t how)
{
	if (!R.active || rec_off() || rec_getpid() != R.pid)
		return;
	/* before the marker: skel check compares what the others do until
	 * they stop */
	rec_park_others(rec_self);
	rec_started();	/* from here on, nothing of this thread is recorded */
	rec_exit_reap();	/* threads dead in their exit system call */
	rec_thread_end(rec_self, 0);
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&R.pass);
	rec_flush_all_dying();
	/* the threads stopped at a probe: their streams end there */
	uint32_t nt = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < nt && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		int park = t ? atomic_load(&t->parked) : 0;
		if (!t || t == rec_self || (park != 1 && park != 3))
			continue;
		rec_lock(&t->lock);
		if (!t->ended) {
			rec_flush_locked(t, *(uint64_t *volatile *)t->cursor, 0);
			rec_end_chunk(t, VT_ENDED_AT_EXIT);
			t->ended = 1;
		}
		rec_unlock(&t->lock);
	}
	if (rec_prestart_strayed())	/* the replay says so */
		how |= VT_END_STRAY;
	vt_end e = { atomic_load(&R.nthreads), atomic_load(&R.values), how,
		     (uint32_t)R.nint3 };
	rec_chunk(VT_END, 0, &e, sizeof e);
	R.finished = 1;
	rec_unlock(&R.pass);
	rec_park_release();
	rec_restore_mask(&old);
	rec_flusher_stop();
	rec_stats("exit");
}
/* An event in the calling thread's stream, after the words recorded so
 * far: `word` (the payload's first u64) becomes their number, unless
 * `keep` (the caller knows it: fork).  No reset of the buffer: a signal
 * may have come in the middle of a probe's store. */
static void rec_event_word(uint32_t type, void *payload, size_t n, int keep)
{
	rec_thread *t = rec_self;
	if (!R.active || !t || t == &R.sink || rec_off() || rec_getpid() != R.pid)
		return;
	sigset_t old;
	rec_block_all(&old);
	rec_lock(&t->lock);
	/* the words before the event are all written (a handler that runs
	 * between a probe's store and its cursor's move is UNPLACED,
	 * rec_sig.c); after the thread's end (a signal in exit) its stream
	 * takes nothing */
	if (!t->ended) {
		rec_flush_locked(t, *(uint64_t *volatile *)t->cursor, 0);
		if (!keep)
			rec_copy_bytes(payload, &t->written, sizeof t->written);
		rec_chunk(type, t->index, payload, n);
	}
	rec_unlock(&t->lock);
	rec_restore_mask(&old);
}

void rec_event(uint32_t type, void *payload, size_t n)
{
	rec_event_word(type, payload, n, 0);
}

/* fork(), in the parent: the child's stream goes on from fork_word. */
void rec_fork_event(uint32_t pid)
{
	rec_thread *t = rec_self;
	if (!t || t == &R.sink)
		return;
	vt_fork f = { t->fork_word, pid, 0 };
	rec_event_word(VT_FORK, &f, sizeof f, 1);
}

/* pthread_atfork's prepare handler, in the forking thread before the
 * system call: its buffer is written and starts over, so
 * that what the child finds in it from the buffer's start are the
 * child's words (those libc records between here and the system call,
 * the same in both processes, then the child's own).
 *
 * From the fork's word to the fork itself, in both processes after it
 * (rec_fork_unblock), the signals that come from outside wait: a handler
 * run in that window ran in the parent before the fork, its words after
 * the fork's word, so the child's stream began with them but no HANDLER
 * event of its own (a SIGCHLD come during fork() under valgrind).
 * Waiting, the signal comes in the parent after the fork, as if during
 * its system call.  Faults and traps stay deliverable (the probes'). */
static __thread int rec_fork_blocked;
static __thread sigset_t rec_fork_mask;

void rec_fork_prepare(void)
{
	rec_thread *t = rec_self;
	if (!R.active || rec_off() || rec_getpid() != R.pid || !t || t == &R.sink)
		return;
	/* signals held for the next probe run here, before the fork's word:
	 * their words are the child's too, and so is their handler's run */
	rec_sig_run_held();
	rec_block_async(&rec_fork_mask);
	rec_fork_blocked = 1;
	rec_flush_upto(t, rec_cursor, 1);
	t->fork_word = t->written;
}

void rec_fork_unblock(void)
{
	if (!rec_fork_blocked)
		return;
	rec_fork_blocked = 0;
	rec_restore_mask(&rec_fork_mask);
}

/* In the child, only the forking thread t lives: it becomes thread 0,
 * its stream starting at its buffer's start (rec_fork_prepare).  The
 * other threads' state is dropped (their buffers are copies nobody
 * writes), and locks another thread held at the fork are free. */
void rec_fork_streams_reset(rec_thread *t)
{
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++)
		R.threads[i] = NULL;
	R.threads[0] = t;
	atomic_store(&R.nthreads, 1);
	atomic_store(&R.values, 0);
	atomic_store(&R.pass, 0);
	atomic_store(&R.patching, 0);
	t->index = 0;
	t->lock = 0;
	t->written = t->origin = 0;
	t->sent = t->base;
	t->started = 0;
	t->ended = 0;
	t->ts.parent = VT_NO_PARENT;
	t->ts.flags |= VT_START_FORKED;
	t->zfresh = 1;	/* its file's stream starts a frame of its own */
	/* a buffer handed over after the fork's flush is the parent's */
	atomic_store(&t->jtail, atomic_load(&t->jhead));
}
