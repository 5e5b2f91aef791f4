/* rec.c — the recorder: a library preloaded into the program that applies a
 * patch (format.h) before main and writes the value trace.
 *
 *   SKEL_PATCH=app.patch SKEL_VALUES=app.vals LD_PRELOAD=libskelrec.so app
 *
 * Order of business (rec_init, a constructor, so it runs before the
 * executable's own initialisers and _start):
 *   1. both variables set, the patch readable, and the running executable
 *      the one the patch names (build-id from the loaded program headers, or
 *      FNV-1a of /proc/self/exe) — otherwise do nothing at all: the library
 *      is inherited by every process the program starts, valgrind's launcher
 *      included (PLATFORM-NOTES.md, "Runtime patching");
 *   2. plan: each probed pc gets a span of whole instructions of its block,
 *      >= 5 bytes, for a jmp rel32; int3 where no such span exists;
 *   3. emit trampolines into pages mapped within +-2 GiB of the text;
 *   4. open the value trace, install signal handlers, then rewrite the text.
 * Any failure after step 1 is reported ("skel-rec: ...") and ends the
 * program with status 125: a half-recorded run is worse than none.
 *
 * Hot path (per recorded value, no system call, no flags touched):
 *     mov rdx, fs:[rec_cursor]; mov [rdx], rax; lea rdx, [rdx+8];
 *     mov fs:[rec_cursor], rdx
 * rec_cursor is an initial-exec TLS variable, so its fs offset is fixed.
 * Each thread's buffer is followed by a PROT_NONE guard page; the store
 * that hits it faults, and the SIGSEGV handler flushes the buffer, resets
 * the cursor (TLS and rdx in the ucontext) and lets the store retry.
 *
 * Trampolines are flag-free: `lea rsp, [rsp-128]` steps over the red zone
 * (pushf would cost 5x, PLATFORM-NOTES), rax and rdx are saved by push and
 * restored by pop; every other register and the flags are never written. */
#include "replay/format.h"

#include <Zydis/Zydis.h>
#include <alloca.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <time.h>
#include <unistd.h>

#define REC_PAGE 4096ul
#define REC_BUF_BYTES (256ul * 1024)	/* per thread, before the guard */
#define REC_MAX_THREADS 4096
#define REC_MAX_SEGS 16
#define REC_MAX_BLOCK_INSNS 4096
/* The probe frame: 128 bytes of red zone skipped, then rax and rdx. */
#define REC_FRAME (128 + 16)
#define REC_EXPORT __attribute__((visibility("default")))

/* --------------------------------------------------------------- state */

typedef struct rec_thread {
	uint64_t *base;		/* buffer */
	uint64_t *guard;	/* first word of the PROT_NONE page */
	uint64_t *sent;		/* words before it (from base) are written */
	uint64_t **cursor;	/* the owning thread's rec_cursor */
	uint64_t written;	/* words flushed */
	uint32_t index;
	volatile int ended;
	_Atomic int lock;	/* sent, written, ended, the cursor reset and
				   the reading of *cursor from other threads */
} rec_thread;

static __thread uint64_t *rec_cursor __attribute__((tls_model("initial-exec")));
static __thread rec_thread *rec_self __attribute__((tls_model("initial-exec")));

typedef struct rec_int3 {
	uint64_t pc;		/* runtime address of the int3 */
	uint64_t tramp;
} rec_int3;

typedef struct rec_image {
	uint64_t bias;
	uint64_t lo, hi;	/* whole image, runtime */
	uint64_t xlo[REC_MAX_SEGS], xhi[REC_MAX_SEGS];	/* executable */
	int xprot[REC_MAX_SEGS];
	int nx;
	const uint8_t *build_id;
	uint32_t build_id_len;
} rec_image;

static struct {
	int pipe;		/* the value file is a FIFO or pipe (skel run) */
	int active;		/* patch applied, recording */
	int verbose;
	int force_int3;		/* SKEL_INT3=1: every site an int3 */
	int fd;
	pid_t pid;		/* the recording process */
	volatile int child;	/* forked: record nothing */
	volatile int finished;	/* END written */
	rec_image img;
	patch patch;
	long cursor_off;	/* fs offset of rec_cursor */
	uint8_t *code;		/* trampoline pages */
	size_t code_size;
	rec_int3 *int3;		/* sorted by pc */
	size_t nint3;
	size_t nsites;
	size_t nneighbour;	/* sites whose span takes in other instructions */
	pthread_key_t key;
	rec_thread *threads[REC_MAX_THREADS];
	_Atomic uint32_t nthreads;
	_Atomic uint64_t values;
	_Atomic uint64_t int3_hits;
	rec_thread sink;	/* discard buffer: ended threads, fork child */
	int have_gsbase;
	_Atomic int pass;	/* held by the online flusher during a pass and
				   by rec_finish: no VALUES after END */
} R = { .fd = -1 };

/* ------------------------------------------------------------- messages */

static void rec_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "skel-rec: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, n);
	(void)w;
}

__attribute__((noreturn)) static void rec_die(const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	rec_say("%s; not running the program half-recorded", buf);
	_exit(125);
}

/* ----------------------------------------------------- real functions */

/* The definitions below interpose libc's; the originals come from
 * dlsym(RTLD_NEXT), looked up on first use because other libraries'
 * constructors may call them before ours runs. */
#define REC_REAL(name, type) \
	static type rec_real_##name(void) \
	{ \
		static type fn; \
		if (!fn) \
			fn = (type)dlsym(RTLD_NEXT, #name); \
		return fn; \
	}
typedef int (*rec_sigaction_fn)(int, const struct sigaction *,
				struct sigaction *);
typedef int (*rec_pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				     void *(*)(void *), void *);
typedef void (*rec_exit_fn)(int);
typedef int (*rec_sigmask_fn)(int, const sigset_t *, sigset_t *);
REC_REAL(sigaction, rec_sigaction_fn)
REC_REAL(sigprocmask, rec_sigmask_fn)
REC_REAL(pthread_sigmask, rec_sigmask_fn)
REC_REAL(pthread_create, rec_pthread_create_fn)
REC_REAL(_exit, rec_exit_fn)
typedef int (*rec_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*rec_execv_fn)(const char *, char *const[]);
typedef int (*rec_fexecve_fn)(int, char *const[], char *const[]);
typedef pid_t (*rec_fork_fn)(void);
REC_REAL(execve, rec_execve_fn)
REC_REAL(execv, rec_execv_fn)
REC_REAL(execvp, rec_execv_fn)
REC_REAL(execvpe, rec_execve_fn)
REC_REAL(fexecve, rec_fexecve_fn)
REC_REAL(fork, rec_fork_fn)

static int rec_sys_sigaction(int sig, const struct sigaction *a,
			     struct sigaction *o)
{
	rec_sigaction_fn fn = rec_real_sigaction();
	return fn(sig, a, o);
}

/* ------------------------------------------------------------ the file */

static int rec_off(void)
{
	return R.fd < 0 || R.child || R.finished;
}

/* A system call that leaves errno alone: the recorder writes from signal
 * handlers and from a thread that shares the main thread's TLS. */
static long rec_syscall3(long nr, long a, long b, long c)
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
static void rec_chunk(uint32_t type, uint32_t thread, const void *p,
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

static int rec_buffer_map(rec_thread *t)
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
static rec_thread *rec_thread_open(uint64_t start, uint32_t parent,
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

static void rec_flush_upto(rec_thread *t, uint64_t *end, int reset)
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
static void rec_on_thread_exit(void *p)
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
static void rec_flush_all_dying(void)
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

static void rec_flusher_start(void)
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

static void rec_stats(const char *when)
{
	if (R.verbose)
		rec_say("STATS %s sites=%zu neighbour_sites=%zu int3_sites=%zu probes=%zu "
			"trampoline_bytes=%zu threads=%u values=%" PRIu64
			" int3_hits=%" PRIu64, when, R.nsites, R.nneighbour, R.nint3,
			R.patch.nprobes, R.code_size,
			atomic_load(&R.nthreads), atomic_load(&R.values),
			atomic_load(&R.int3_hits));
}

static void rec_finish(uint32_t how)
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

/* ---------------------------------------------------------- the image */

static int rec_image_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	rec_image *img = data;
	img->bias = info->dlpi_addr;
	img->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = img->bias + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			if (lo < img->lo)
				img->lo = lo;
			if (lo + ph->p_memsz > img->hi)
				img->hi = lo + ph->p_memsz;
			if ((ph->p_flags & PF_X) && img->nx < REC_MAX_SEGS) {
				img->xlo[img->nx] = lo;
				img->xhi[img->nx] = lo + ph->p_memsz;
				img->xprot[img->nx++] =
					(ph->p_flags & PF_R ? PROT_READ : 0) |
					PROT_EXEC;
			}
		} else if (ph->p_type == PT_NOTE && !img->build_id) {
			size_t align = ph->p_align == 8 ? 8 : 4;
			const uint8_t *p = (const uint8_t *)lo;
			const uint8_t *end = p + ph->p_memsz;
			while (end - p >= 12) {
				const ElfW(Nhdr) *nh = (const void *)p;
				const uint8_t *name = p + 12;
				const uint8_t *desc = name +
					((nh->n_namesz + align - 1) & -align);
				if (nh->n_type == NT_GNU_BUILD_ID &&
				    nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
				    desc + nh->n_descsz <= end) {
					img->build_id = desc;
					img->build_id_len = nh->n_descsz;
					break;
				}
				p = desc + ((nh->n_descsz + align - 1) & -align);
			}
		}
	}
	return 1;	/* the first entry is the executable */
}

static int rec_exe_hash(uint64_t *h)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	static uint8_t buf[1 << 16];
	uint64_t x = SKEL_FNV1A64_INIT;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		x = skel_fnv1a64(x, buf, (size_t)n);
	close(fd);
	*h = x;
	return n < 0 ? -1 : 0;
}

/* The identity the patch names, if it is this executable's. */
static int rec_identity(const patch *p, uint8_t id[SKEL_ID_MAX],
			uint32_t *len)
{
	if (p->id_kind == SKEL_ID_BUILDID) {
		if (!R.img.build_id || R.img.build_id_len != p->id_len ||
		    memcmp(R.img.build_id, p->id, p->id_len))
			return -1;
		memcpy(id, p->id, p->id_len);
		*len = p->id_len;
		return 0;
	}
	uint64_t h;
	if (rec_exe_hash(&h))
		return -1;
	skel_id_from_hash(h, id, len);
	return *len == p->id_len && !memcmp(id, p->id, *len) ? 0 : -1;
}

static int rec_in_text(uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < R.img.nx; i++)
		if (lo >= R.img.xlo[i] && hi <= R.img.xhi[i])
			return 1;
	return 0;
}

/* ------------------------------------------------------------ decoding */

static ZydisDecoder rec_dec;

typedef struct rec_insn {
	uint64_t addr;		/* runtime */
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
} rec_insn;

static int rec_decode(uint64_t addr, uint64_t limit, rec_insn *x)
{
	x->addr = addr;
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&rec_dec,
		(const void *)addr, limit - addr, &x->in, x->op)) ? 0 : -1;
}

static int rec_is_call(const rec_insn *x)
{
	return x->in.meta.category == ZYDIS_CATEGORY_CALL;
}

/* Ends a span: nothing may follow it in the trampoline (a call's return
 * address is a landing point in the original code). */
static int rec_is_transfer(const rec_insn *x)
{
	switch (x->in.meta.category) {
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_RET:
		return 1;
	default:
		return x->in.mnemonic == ZYDIS_MNEMONIC_LOOP ||
		       x->in.mnemonic == ZYDIS_MNEMONIC_LOOPE ||
		       x->in.mnemonic == ZYDIS_MNEMONIC_LOOPNE;
	}
}

/* ----------------------------------------------------------- planning */

typedef struct rec_probe {
	patch_probe p;		/* addresses made runtime */
	uint32_t order;		/* in the file */
} rec_probe;

typedef struct rec_site {
	uint64_t start, end;	/* span rewritten, runtime */
	uint64_t bstart, bend;	/* its block */
	size_t p0, np;		/* probes, in the sorted array */
	int int3;
	int last_transfer;	/* the span ends with a transfer */
	uint64_t first_end;	/* end of its first probed instruction */
} rec_site;

static int rec_probe_cmp(const void *a, const void *b)
{
	const rec_probe *x = a, *y = b;
	if (x->p.pc != y->p.pc)
		return x->p.pc < y->p.pc ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int rec_cond_code(const rec_insn *x)
{
	return x->in.meta.category == ZYDIS_CATEGORY_COND_BR &&
	       ((x->in.opcode & 0xf0) == 0x70 || (x->in.opcode & 0xf0) == 0x80)
		? x->in.opcode & 0x0f : -1;
}

/* A transfer a span may hold in its middle: a jcc rel, whose fall-through
 * continues in the trampoline.  The patch's block is then a run of basic
 * blocks entered only at its start (skelgen's probe_region), so the
 * fall-through is the next instruction of the span and nothing else jumps
 * into it. */
static int rec_hard_transfer(const rec_insn *x)
{
	return rec_is_transfer(x) && !(x->in.meta.category == ZYDIS_CATEGORY_COND_BR &&
				       rec_cond_code(x) >= 0);
}

/* Instruction starts of [bs, be), decoded linearly. */
static int rec_block_insns(uint64_t bs, uint64_t be, uint64_t *starts,
			   uint8_t *transfer, size_t *n)
{
	rec_insn x;
	*n = 0;
	for (uint64_t a = bs; a < be;) {
		/* lengths and kinds only: no operands */
		x.addr = a;
		if (*n == REC_MAX_BLOCK_INSNS ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec, NULL,
				(const void *)a, be - a, &x.in)))
			return -1;
		starts[*n] = a;
		transfer[(*n)++] = (uint8_t)rec_hard_transfer(&x);
		a += x.in.length;
	}
	return 0;
}

static uint64_t rec_starts[REC_MAX_BLOCK_INSNS + 1];
static uint8_t rec_transfer[REC_MAX_BLOCK_INSNS];

/* Chooses the span for a new pc: whole instructions around pc, within its
 * block and after `floor` (the previous site's end), >= 5 bytes, not
 * passing a transfer.  0 = span found, 1 = too short, -1 = bad block. */
static int rec_span(const patch_probe *pr, uint64_t floor, uint64_t *s,
		    uint64_t *e, int *last_transfer, int *reach_floor,
		    uint64_t *first_end)
{
	/* Under valgrind, decoding is most of the start-up.  Mostly the
	 * instructions from pc on make 5 bytes: nothing before pc is needed
	 * (the loops below would stop at k = i). */
	rec_insn x;
	for (uint64_t a = pr->pc; a < pr->block_end && a >= pr->block_start;) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec, NULL,
				(const void *)a, pr->block_end - a, &x.in)))
			break;
		a += x.in.length;
		if (a == pr->pc + x.in.length)
			*first_end = a;
		int t = rec_hard_transfer(&x);
		if (a - pr->pc >= 5) {
			*s = pr->pc;
			*e = a;
			*last_transfer = t;
			*reach_floor = floor == pr->pc;
			return 0;
		}
		if (t)
			break;
	}
	/* else the block's instructions, from its start; probes come sorted
	 * by pc, so a block's probes are consecutive: it is decoded once */
	static uint64_t memo_bs, memo_be;
	static size_t memo_n;
	size_t n, i, j, k;
	if (memo_be == 0 || memo_bs != pr->block_start ||
	    memo_be != pr->block_end) {
		memo_be = 0;
		if (rec_block_insns(pr->block_start, pr->block_end,
				    rec_starts, rec_transfer, &memo_n))
			return -1;
		memo_bs = pr->block_start;
		memo_be = pr->block_end;
	}
	n = memo_n;
	rec_starts[n] = pr->block_end;
	for (i = 0; i < n && rec_starts[i] != pr->pc; i++)
		;
	if (i == n)
		return -1;
	*first_end = rec_starts[i + 1];
	for (j = i; rec_starts[j + 1] - rec_starts[i] < 5 && !rec_transfer[j] &&
		    j + 1 < n; j++)
		;
	for (k = i; rec_starts[j + 1] - rec_starts[k] < 5 && k > 0 &&
		    rec_starts[k - 1] >= floor && !rec_transfer[k - 1]; k--)
		;
	*s = rec_starts[k];
	*e = rec_starts[j + 1];
	*last_transfer = rec_transfer[j];
	*reach_floor = k == 0 || rec_starts[k - 1] < floor;
	return *e - *s >= 5 ? 0 : 1;
}

static int rec_plan(rec_probe *pv, size_t np, rec_site **out, size_t *nout)
{
	rec_site *sv = calloc(np ? np : 1, sizeof *sv);
	size_t ns = 0;
	if (!sv)
		rec_die("out of memory");
	for (size_t i = 0; i < np; i++) {
		const patch_probe *pr = &pv[i].p;
		rec_site *prev = ns ? &sv[ns - 1] : NULL;
		if (prev && pr->pc < prev->end) {
			prev->np++;	/* inside a span already chosen */
			continue;
		}
		int same_block = prev && prev->bstart == pr->block_start;
		uint64_t floor = same_block ? prev->end : pr->block_start;
		uint64_t s, e, fe = 0;
		int lt, reach;
		int rc = rec_span(pr, floor, &s, &e, &lt, &reach, &fe);
		if (R.force_int3 && rc == 0)
			rc = 1;
		if (rc < 0)
			rec_die("patch line %u: pc %" PRIx64 " is not an "
				"instruction of its block [%" PRIx64 ", %" PRIx64
				")", pr->line, pr->pc - R.img.bias,
				pr->block_start - R.img.bias,
				pr->block_end - R.img.bias);
		if (rc == 1 && same_block && reach && !prev->int3 &&
		    !prev->last_transfer) {
			/* join the previous span: every instruction between
			 * them is in the same block, none a transfer */
			prev->end = e;
			prev->last_transfer = lt;
			prev->np++;
			continue;
		}
		rec_site *st = &sv[ns++];
		*st = (rec_site){ s, e, pr->block_start, pr->block_end, i, 1,
				  rc == 1, lt, fe };
		if (rc == 1) {
			rec_insn x;
			rec_decode(pr->pc, pr->block_end, &x);
			st->start = pr->pc;
			st->end = pr->pc + x.in.length;
			st->last_transfer = rec_hard_transfer(&x);
		}
	}
	/* a site whose span is more than its first probed instruction */
	for (size_t k = 0; k < ns; k++)
		if (!sv[k].int3 && (sv[k].start != pv[sv[k].p0].p.pc ||
				    sv[k].end != sv[k].first_end))
			R.nneighbour++;
	*out = sv;
	*nout = ns;
	return 0;
}

/* ------------------------------------------------------------ emitting */

typedef struct rec_lit {
	size_t disp_at;		/* offset of a rel32 to the literal */
	size_t next;		/* offset of the end of that instruction */
	uint64_t value;
} rec_lit;

typedef struct rec_emit {
	uint8_t *p;		/* code; runtime address == pointer */
	size_t len, cap;
	rec_lit lit[64];
	int nlit;
	vt_map_entry *map;
	size_t nmap, capmap;
} rec_emit;

static void rec_b(rec_emit *e, const void *bytes, size_t n)
{
	if (e->len + n > e->cap)
		rec_die("trampoline space exhausted");
	memcpy(e->p + e->len, bytes, n);
	e->len += n;
}

static void rec_b1(rec_emit *e, uint8_t b)
{
	rec_b(e, &b, 1);
}

static void rec_b4(rec_emit *e, int32_t v)
{
	rec_b(e, &v, 4);
}

static uint64_t rec_here(const rec_emit *e)
{
	return (uint64_t)(e->p + e->len);
}

static int rec_fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void rec_map(rec_emit *e, uint64_t from, uint64_t pc, uint32_t kind)
{
	if (e->nmap == e->capmap) {
		e->capmap = e->capmap ? 2 * e->capmap : 64;
		e->map = realloc(e->map, e->capmap * sizeof *e->map);
		if (!e->map)
			rec_die("out of memory");
	}
	e->map[e->nmap++] = (vt_map_entry){ from, pc - R.img.bias,
		(uint32_t)(rec_here(e) - from), kind };
}

/* A rel32 whose base is the end of a `len`-byte instruction at here(). */
static void rec_rel32(rec_emit *e, uint64_t target, size_t rest)
{
	int64_t d = (int64_t)(target - (rec_here(e) + 4 + rest));
	if (!rec_fits32(d))
		rec_die("target %" PRIx64 " out of rel32 reach of the "
			"trampolines", target);
	rec_b4(e, (int32_t)d);
}

static void rec_jmp(rec_emit *e, uint64_t target)
{
	rec_b1(e, 0xe9);
	rec_rel32(e, target, 0);
}

/* `opcode [rip+lit]` where lit holds `value`: rel32 fixed up later. */
static void rec_riplit(rec_emit *e, const uint8_t *op, size_t n,
		       uint64_t value)
{
	if (e->nlit == 64)
		rec_die("too many literals in one trampoline");
	rec_b(e, op, n);
	e->lit[e->nlit++] = (rec_lit){ e->len, e->len + 4, value };
	rec_b4(e, 0);
}

static void rec_lits_place(rec_emit *e)
{
	while (e->len % 8)
		rec_b1(e, 0xcc);
	for (int i = 0; i < e->nlit; i++) {
		int32_t d = (int32_t)(e->len - e->lit[i].next);
		memcpy(e->p + e->lit[i].disp_at, &d, 4);
		rec_b(e, &e->lit[i].value, 8);
	}
	e->nlit = 0;
}

/* `opcode reg, [base + index*scale + disp32]`, REX.W, always SIB form.
 * base/index are GPR numbers, -1 for none (index never rsp). */
static void rec_modrm_mem(rec_emit *e, uint8_t opcode, int reg, int base,
			  int index, int scale, int32_t disp)
{
	uint8_t rex = 0x48 | (reg & 8 ? 4 : 0) | (index >= 8 ? 2 : 0) |
		      (base >= 8 ? 1 : 0);
	int ss = scale == 8 ? 3 : scale == 4 ? 2 : scale == 2 ? 1 : 0;
	uint8_t idx = index < 0 ? 4 : (uint8_t)(index & 7);
	rec_b1(e, rex);
	rec_b1(e, opcode);
	if (base < 0) {
		rec_b1(e, (uint8_t)(0x04 | (reg & 7) << 3));
		rec_b1(e, (uint8_t)(ss << 6 | idx << 3 | 5));
	} else {
		rec_b1(e, (uint8_t)(0x84 | (reg & 7) << 3));
		rec_b1(e, (uint8_t)(ss << 6 | idx << 3 | (base & 7)));
	}
	rec_b4(e, disp);
}

static const uint8_t rec_prologue[] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,	/* lea rsp, [rsp-128] */
	0x50,				/* push rax */
	0x52,				/* push rdx */
};
static const uint8_t rec_epilogue[] = {
	0x5a,				/* pop rdx */
	0x58,				/* pop rax */
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0,	/* lea rsp, [rsp+128] */
};
/* The store that may hit the guard page; the SIGSEGV handler looks for
 * exactly these bytes at the faulting rip. */
static const uint8_t rec_store_insn[] = { 0x48, 0x89, 0x02 }; /* mov [rdx], rax */

static void rec_store(rec_emit *e)
{
	rec_b(e, "\x64\x48\x8b\x14\x25", 5);	/* mov rdx, fs:[off] */
	rec_b4(e, (int32_t)R.cursor_off);
	rec_b(e, rec_store_insn, sizeof rec_store_insn);
	rec_b(e, "\x48\x8d\x52\x08", 4);	/* lea rdx, [rdx+8] */
	rec_b(e, "\x64\x48\x89\x14\x25", 5);	/* mov fs:[off], rdx */
	rec_b4(e, (int32_t)R.cursor_off);
}

/* rax = the program's value of GPR r at the probe frame. */
static void rec_get_reg(rec_emit *e, int r)
{
	if (r == SKEL_RAX)
		rec_b(e, "\x48\x8b\x44\x24\x08", 5);	/* mov rax, [rsp+8] */
	else if (r == SKEL_RDX)
		rec_b(e, "\x48\x8b\x04\x24", 4);	/* mov rax, [rsp] */
	else if (r == SKEL_RSP)
		rec_modrm_mem(e, 0x8d, 0, SKEL_RSP, -1, 0, REC_FRAME);
	else {
		rec_b1(e, (uint8_t)(0x48 | (r & 8 ? 4 : 0)));	/* mov rax, r */
		rec_b1(e, 0x89);
		rec_b1(e, (uint8_t)(0xc0 | (r & 7) << 3));
	}
}

static int rec_gpr(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return -1;
	if (ZydisRegisterGetClass(r) != ZYDIS_REGCLASS_GPR64)
		return -2;
	return ZydisRegisterGetId(r);
}

/* The k-th data memory operand of x: explicit ones first, then the hidden
 * ones, in Zydis operand order; agen (lea) and nop operands do not count. */
static const ZydisDecodedOperand *rec_memop(const rec_insn *x, uint32_t k)
{
	if (x->in.mnemonic == ZYDIS_MNEMONIC_NOP)
		return NULL;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < x->in.operand_count; i++) {
			const ZydisDecodedOperand *o = &x->op[i];
			int hidden = o->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT;
			if (hidden != pass || o->type != ZYDIS_OPERAND_TYPE_MEMORY ||
			    o->mem.type != ZYDIS_MEMOP_TYPE_MEM || !o->actions)
				continue;
			if (k-- == 0)
				return o;
		}
	return NULL;
}

/* rax = effective address of memory operand o of x, as the CPU computes
 * it when x executes (fs/gs base included). */
static int rec_get_addr(rec_emit *e, const rec_insn *x,
			const ZydisDecodedOperand *o)
{
	int64_t disp = o->mem.disp.value;
	if (x->in.address_width != 64)
		return -1;
	if (o->mem.base == ZYDIS_REGISTER_RIP) {
		uint64_t a = x->addr + x->in.length + disp;
		rec_b(e, "\x48\xb8", 2);		/* mov rax, imm64 */
		rec_b(e, &a, 8);
		return 0;
	}
	int base = rec_gpr(o->mem.base), index = rec_gpr(o->mem.index);
	if (base < -1 || index < -1)
		return -1;
	if (o->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN &&
	    base == SKEL_RSP && (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
		disp -= o->size / 8;	/* push, call: the slot below rsp */
	else if (x->in.mnemonic == ZYDIS_MNEMONIC_POP && base == SKEL_RSP &&
		 o->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
		disp += o->size / 8;	/* pop [rsp+d]: rsp after the pop */
	if (base == SKEL_RSP)
		disp += REC_FRAME;
	if (base == SKEL_RAX || index == SKEL_RAX)
		rec_b(e, "\x48\x8b\x44\x24\x08", 5);	/* mov rax, [rsp+8] */
	if (base == SKEL_RDX || index == SKEL_RDX)
		rec_b(e, "\x48\x8b\x14\x24", 4);	/* mov rdx, [rsp] */
	if (!rec_fits32(disp))
		return -1;
	rec_modrm_mem(e, 0x8d, SKEL_RAX, base, index,
		      index < 0 ? 0 : o->mem.scale, (int32_t)disp);
	if (o->mem.segment == ZYDIS_REGISTER_FS) {
		/* fs:0 holds the thread pointer itself (x86-64 TLS ABI) */
		rec_b(e, "\x64\x48\x8b\x14\x25\0\0\0\0", 9);
		rec_b(e, "\x48\x8d\x04\x10", 4);	/* lea rax, [rax+rdx] */
	} else if (o->mem.segment == ZYDIS_REGISTER_GS) {
		if (!R.have_gsbase)
			return -1;
		rec_b(e, "\xf3\x48\x0f\xae\xca", 5);	/* rdgsbase rdx */
		rec_b(e, "\x48\x8d\x04\x10", 4);
	}
	return 0;
}


static int rec_is_jrcxz(const rec_insn *x)
{
	return x->in.mnemonic == ZYDIS_MNEMONIC_JRCXZ ||
	       x->in.mnemonic == ZYDIS_MNEMONIC_JECXZ;
}

static int rec_value(rec_emit *e, const rec_insn *x, const patch_probe *p)
{
	const ZydisDecodedOperand *o;
	int cc;
	switch (p->what) {
	case PATCH_WORD:
		rec_b(e, "\x48\xb8", 2);
		rec_b(e, &p->word, 8);
		return 0;
	case PATCH_REG:
		rec_get_reg(e, p->reg);
		return 0;
	case PATCH_ADDR:
		o = rec_memop(x, p->k);
		return o ? rec_get_addr(e, x, o) : -1;
	case PATCH_TAKEN:
		if ((cc = rec_cond_code(x)) >= 0) {
			rec_b1(e, 0x0f);		/* setcc al */
			rec_b1(e, (uint8_t)(0x90 | cc));
			rec_b1(e, 0xc0);
			rec_b(e, "\x0f\xb6\xc0", 3);	/* movzx eax, al */
			return 0;
		}
		if (!rec_is_jrcxz(x))
			return -1;
		/* mov eax,1; j(e|r)cxz +5; mov eax,0 — no flag touched */
		rec_b(e, "\xb8\x01\0\0\0", 5);
		if (x->in.mnemonic == ZYDIS_MNEMONIC_JECXZ)
			rec_b1(e, 0x67);
		rec_b(e, "\xe3\x05\xb8\0\0\0\0", 7);
		return 0;
	case PATCH_TARGET:
		if ((x->in.meta.category != ZYDIS_CATEGORY_CALL &&
		     x->in.meta.category != ZYDIS_CATEGORY_UNCOND_BR) ||
		    (x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE &&
		     x->op[0].type != ZYDIS_OPERAND_TYPE_MEMORY))
			return -1;
		o = &x->op[0];
		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			int r = rec_gpr(o->reg.value);
			if (r < 0)
				return -1;
			rec_get_reg(e, r);
			return 0;
		}
		if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->size != 64 ||
		    rec_get_addr(e, x, o))
			return -1;
		rec_b(e, "\x48\x8b\x00", 3);		/* mov rax, [rax] */
		return 0;
	}
	return -1;
}

static const char *const rec_what_name[] = {
	"reg", "addr", "taken", "target", "word",
};

/* The probes of site st at x's address with the given `after`, in file
 * order with taken/target last, in one frame. */
static void rec_probes(rec_emit *e, const rec_insn *x, const rec_probe *pv,
		       size_t n, int after)
{
	size_t want = 0, first = 0;
	for (size_t i = n; i-- > 0;)
		if (pv[i].p.pc == x->addr && pv[i].p.after == after)
			want++, first = i;
	if (!want)
		return;
	if (after && rec_is_transfer(x))
		rec_die("patch line %u: 'after' probe on a control transfer",
			pv[first].p.line);
	uint64_t from = rec_here(e);
	rec_b(e, rec_prologue, sizeof rec_prologue);
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < n; i++) {
			const patch_probe *p = &pv[i].p;
			int ctl = p->what == PATCH_TAKEN || p->what == PATCH_TARGET;
			if (p->pc != x->addr || p->after != after || ctl != last)
				continue;
			if (rec_value(e, x, p))
				rec_die("patch line %u: cannot record '%s' at "
					"%" PRIx64 " (%s)", p->line,
					rec_what_name[p->what], p->pc - R.img.bias,
					ZydisMnemonicGetString(x->in.mnemonic));
			rec_store(e);
		}
	rec_b(e, rec_epilogue, sizeof rec_epilogue);
	rec_map(e, from, x->addr, VT_MAP_PROBE);
}

/* Copies x, RIP-relative displacement rebased to the new place. */
static int rec_copy(rec_emit *e, const rec_insn *x)
{
	uint8_t buf[16];
	size_t len = x->in.length;
	memcpy(buf, (const void *)x->addr, len);
	for (int i = 0; i < x->in.operand_count_visible; i++) {
		const ZydisDecodedOperand *o = &x->op[i];
		if (o->type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    o->mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (x->in.raw.disp.size != 32)
			return -1;
		uint64_t abs = x->addr + len + (uint64_t)o->mem.disp.value;
		int64_t d = (int64_t)(abs - (rec_here(e) + len));
		if (!rec_fits32(d))
			return -1;
		int32_t d32 = (int32_t)d;
		memcpy(buf + x->in.raw.disp.offset, &d32, 4);
	}
	rec_b(e, buf, len);
	return 0;
}

/* call: push the original return address, then jump.  The program sees
 * exactly what a call in place would have given it. */
static int rec_call(rec_emit *e, const rec_insn *x)
{
	uint64_t next = x->addr + x->in.length;
	const ZydisDecodedOperand *o = &x->op[0];
	uint64_t from = rec_here(e);
	if (o->type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    rec_gpr(o->reg.value) == SKEL_RSP)
		return -1;
	rec_riplit(e, (const uint8_t *)"\xff\x35", 2, next);	/* push [rip+lit] */
	rec_map(e, from, x->addr, VT_MAP_CALL_PUSH);
	from = rec_here(e);
	if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		uint64_t target;
		if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x->in, o, x->addr,
							   &target)))
			return -1;
		if (rec_fits32((int64_t)(target - (rec_here(e) + 5))))
			rec_jmp(e, target);
		else	/* jmp [rip+lit] */
			rec_riplit(e, (const uint8_t *)"\xff\x25", 2, target);
	} else if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		int r = rec_gpr(o->reg.value);
		if (r < 0)
			return -1;
		if (r & 8)
			rec_b1(e, 0x41);
		rec_b1(e, 0xff);				/* jmp r */
		rec_b1(e, (uint8_t)(0xe0 | (r & 7)));
	} else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->size == 64) {
		int base = rec_gpr(o->mem.base), index = rec_gpr(o->mem.index);
		if (base == SKEL_RSP) {
			/* after the push rsp is 8 lower: jmp [rsp+d+8] */
			if (o->mem.segment != ZYDIS_REGISTER_SS || index < -1 ||
			    !rec_fits32(o->mem.disp.value + 8))
				return -1;
			rec_modrm_mem(e, 0xff, 4, base, index,
				      index < 0 ? 0 : o->mem.scale,
				      (int32_t)(o->mem.disp.value + 8));
		} else {
			/* the same bytes with ModRM.reg 2 (call) -> 4 (jmp) */
			uint8_t *at = e->p + e->len;
			if (rec_copy(e, x))
				return -1;
			at[x->in.raw.modrm.offset] =
				(uint8_t)((at[x->in.raw.modrm.offset] & 0xc7) |
					  4 << 3);
		}
	} else {
		return -1;
	}
	rec_map(e, from, x->addr, VT_MAP_CALL_JMP);
	return 1;
}

/* Emits x relocated; 1 if control never falls through past it. */
static int rec_insn_emit(rec_emit *e, const rec_insn *x, uint64_t span_end)
{
	uint64_t from = rec_here(e), target;
	int cc = rec_cond_code(x);
	if (rec_is_call(x))
		return rec_call(e, x);
	int rel_imm = (x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		      x->op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	if (!rel_imm) {
		if (rec_copy(e, x))
			return -1;
		rec_map(e, from, x->addr, VT_MAP_DISPLACED);
		return x->in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		       x->in.meta.category == ZYDIS_CATEGORY_RET;
	}
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x->in, &x->op[0], x->addr,
						   &target)))
		return -1;
	if (x->in.meta.category == ZYDIS_CATEGORY_UNCOND_BR) {
		rec_jmp(e, target);
		rec_map(e, from, x->addr, VT_MAP_DISPLACED);
		return 1;
	}
	if (cc >= 0) {
		rec_b1(e, 0x0f);
		rec_b1(e, (uint8_t)(0x80 | cc));
		rec_rel32(e, target, 0);
		rec_map(e, from, x->addr, VT_MAP_DISPLACED);
		return 0;
	}
	if (x->in.meta.category != ZYDIS_CATEGORY_COND_BR &&
	    !rec_is_transfer(x))
		return -1;	/* xbegin and the like */
	/* rel8-only (jrcxz, loop*): branch over a jmp to the fall-through,
	 * onto a jmp to the target */
	size_t op_len = x->in.length - 1;
	rec_b(e, (const void *)x->addr, op_len);
	rec_b1(e, 5);
	rec_jmp(e, span_end);
	rec_map(e, from, x->addr, VT_MAP_DISPLACED);
	rec_jmp(e, target);
	return 1;
}

/* One trampoline: for each instruction of the span its before-probes, the
 * instruction, its after-probes; then back to the end of the span. */
static uint64_t rec_site_emit(rec_emit *e, const rec_site *st,
			      const rec_probe *pv)
{
	uint64_t entry = rec_here(e);
	int done = 0;
	for (uint64_t a = st->start; a < st->end;) {
		rec_insn x;
		if (rec_decode(a, st->bend, &x))
			rec_die("cannot decode %" PRIx64, a - R.img.bias);
		rec_probes(e, &x, pv + st->p0, st->np, 0);
		done = rec_insn_emit(e, &x, st->end);
		if (done < 0)
			rec_die("cannot relocate %s at %" PRIx64,
				ZydisMnemonicGetString(x.in.mnemonic),
				a - R.img.bias);
		rec_probes(e, &x, pv + st->p0, st->np, 1);
		a += x.in.length;
	}
	if (!done)
		rec_jmp(e, st->end);
	rec_lits_place(e);
	while (e->len % 16)
		rec_b1(e, 0xcc);
	return entry;
}

/* Pages for the trampolines, within rel32 reach of all the text: tried
 * below the image first (what worked for PIE and non-PIE, PLATFORM-NOTES),
 * then above it.  MAP_FIXED_NOREPLACE never clobbers a mapping. */
static void *rec_code_try(uint64_t at, size_t size)
{
	void *m = mmap((void *)at, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if ((uint64_t)m == at)
		return m;
	munmap(m, size);	/* a kernel that took it as a mere hint */
	return NULL;
}

static void *rec_code_map(size_t size)
{
	const uint64_t lo = R.img.lo, hi = R.img.hi, step = 2ul << 20;
	const uint64_t reach = (1ul << 31) - (16ul << 20);
	void *m;
	for (uint64_t k = 0; k < 1024; k++) {
		uint64_t at = ((lo - size) & ~(step - 1)) - k * step;
		if (at > lo || hi - at > reach)
			break;
		if ((m = rec_code_try(at, size)))
			return m;
	}
	for (uint64_t k = 0; k < 1024; k++) {
		uint64_t at = ((hi + step - 1) & ~(step - 1)) + k * step;
		if (at + size - lo > reach)
			break;
		if ((m = rec_code_try(at, size)))
			return m;
	}
	return NULL;
}

/* ------------------------------------------------------------- signals */

static struct sigaction rec_prog_act[NSIG];	/* the program's: owned and
						   wrapped signals */
static volatile sig_atomic_t rec_fatal_ours[NSIG];
static volatile sig_atomic_t rec_wrapped[NSIG];	/* rec_on_program runs first */
static const int rec_fatal_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGUSR1,
	SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS,
	SIGVTALRM, SIGPROF,
};

static int rec_owned(int sig)
{
	return sig == SIGSEGV || sig == SIGTRAP;
}

static int rec_is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof rec_fatal_sigs / sizeof *rec_fatal_sigs;
	     i++)
		if (rec_fatal_sigs[i] == sig)
			return 1;
	return 0;
}

/* Dies of `sig` the way the program would have: default action, raised
 * again (delivered on return from the handler, or at once with
 * SA_NODEFER). */
static void rec_die_by(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	rec_flush_all_dying();
	rec_sys_sigaction(sig, &dfl, NULL);
	raise(sig);
}

/* A fatal signal in this thread: flush its words and say where it died,
 * so that a replay stops at the faulting instruction. */
static void rec_note_crash(int sig, void *ucv)
{
	rec_thread *t = rec_self;
	if (!R.active || !t || rec_off() || getpid() != R.pid || !ucv)
		return;
	ucontext_t *uc = ucv;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	vt_crash c = { .signal = (uint32_t)sig };
	if (rip >= R.img.lo && rip < R.img.hi)
		c.pc = rip - R.img.bias;
	rec_flush_upto(t, *(uint64_t *volatile *)t->cursor, 1);
	rec_chunk(VT_CRASH, t->index, &c, sizeof c);
}

static void rec_note_signal(int sig, void *ucv);

/* A SIGSEGV/SIGTRAP that is not the recorder's: what the program asked
 * for.  Its sa_mask is not applied (documented). */
static void rec_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *a = &rec_prog_act[sig];
	if (a->sa_flags & SA_SIGINFO) {
		void (*fn)(int, siginfo_t *, void *) = a->sa_sigaction;
		if (a->sa_flags & SA_RESETHAND)
			a->sa_handler = SIG_DFL, a->sa_flags = 0;
		rec_note_signal(sig, uc);
		fn(sig, si, uc);
		return;
	}
	void (*h)(int) = a->sa_handler;
	if (h == SIG_IGN && si->si_code <= 0)
		return;	/* sent by kill(): ignored; a fault is fatal */
	if (h == SIG_DFL || h == SIG_IGN) {
		rec_note_crash(sig, uc);
		rec_die_by(sig);
		return;
	}
	if (a->sa_flags & SA_RESETHAND)
		a->sa_handler = SIG_DFL;
	rec_note_signal(sig, uc);
	h(sig);
}

static int rec_in_code(uint64_t pc)
{
	return pc >= (uint64_t)R.code && pc < (uint64_t)R.code + R.code_size;
}

static void rec_on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rip = (uint64_t)g[REG_RIP];
	if (R.active && rec_in_code(rip) &&
	    !memcmp((void *)rip, rec_store_insn, sizeof rec_store_insn)) {
		uint64_t *at = (uint64_t *)g[REG_RDX];
		rec_thread *t = rec_self;
		if (!t)		/* a thread we did not see start */
			t = rec_thread_open(0, VT_NO_PARENT, VT_START_UNKNOWN);
		if (at == t->guard || at == NULL) {
			if (at)
				rec_flush_upto(t, at, 1);
			rec_cursor = t->base;
			g[REG_RDX] = (greg_t)t->base;
			return;
		}
	}
	rec_chain(sig, si, ucv);
}

static const rec_int3 *rec_int3_find(uint64_t pc)
{
	size_t lo = 0, hi = R.nint3;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (R.int3[mid].pc == pc)
			return &R.int3[mid];
		if (R.int3[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* int3 sites: the kernel stops after the int3; continue in the
 * trampoline, which ends with a jmp behind the original instruction. */
static void rec_on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	const rec_int3 *s = R.active ? rec_int3_find((uint64_t)g[REG_RIP] - 1)
				     : NULL;
	if (s) {
		g[REG_RIP] = (greg_t)s->tramp;
		atomic_fetch_add_explicit(&R.int3_hits, 1, memory_order_relaxed);
		return;
	}
	rec_chain(sig, si, ucv);
}

/* A handler of the program, about to run: the words before it are
 * written and a SIGNAL chunk marks the place, so that the replay (which
 * does not model handlers yet) stops there and says so instead of
 * leaving the handler's accesses out silently.  No reset of the buffer:
 * the signal may have come in the middle of a probe's store. */
/* An event in the calling thread's stream, after the words recorded so
 * far: `word` (the payload's first u64) becomes their number.  No reset
 * of the buffer: a signal may have come in the middle of a probe's
 * store. */
static void rec_event(uint32_t type, void *payload, size_t n)
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

static void rec_note_signal(int sig, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t rip = uc ? (uint64_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
	vt_signal e = { .signal = (uint32_t)sig };
	if (rip >= R.img.lo && rip < R.img.hi)
		e.pc = rip - R.img.bias;
	rec_event(VT_SIGNAL, &e, sizeof e);
}

static void rec_on_program(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	rec_note_signal(sig, uc);
	struct sigaction a = rec_prog_act[sig];
	if (a.sa_flags & SA_RESETHAND) {	/* the kernel reset it already */
		rec_wrapped[sig] = 0;
		memset(&rec_prog_act[sig], 0, sizeof rec_prog_act[sig]);
	}
	errno = e;
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN)
		a.sa_handler(sig);
}

static void rec_on_fatal(int sig, siginfo_t *si, void *uc)
{
	rec_fatal_ours[sig] = 0;
	rec_note_crash(sig, uc);
	rec_die_by(sig);
}

static void rec_signals_install(void)
{
	struct sigaction a = { .sa_flags = SA_SIGINFO | SA_ONSTACK |
					   SA_NODEFER | SA_RESTART };
	sigemptyset(&a.sa_mask);
	a.sa_sigaction = rec_on_segv;
	if (rec_sys_sigaction(SIGSEGV, &a, &rec_prog_act[SIGSEGV]))
		rec_die("cannot install the SIGSEGV handler");
	a.sa_sigaction = rec_on_trap;
	if (rec_sys_sigaction(SIGTRAP, &a, &rec_prog_act[SIGTRAP]))
		rec_die("cannot install the SIGTRAP handler");
	struct sigaction f = { .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART };
	sigemptyset(&f.sa_mask);
	f.sa_sigaction = rec_on_fatal;
	for (size_t i = 0; i < sizeof rec_fatal_sigs / sizeof *rec_fatal_sigs;
	     i++) {
		int sig = rec_fatal_sigs[i];
		struct sigaction cur;
		if (rec_sys_sigaction(sig, NULL, &cur) == 0 &&
		    !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL &&
		    rec_sys_sigaction(sig, &f, NULL) == 0)
			rec_fatal_ours[sig] = 1;
	}
}

/* SIGTRAP (int3 sites) and SIGSEGV (buffer guard) out of a mask the
 * program asks for: blocked, a synchronous trap kills the process. */
static void rec_keep_deliverable(sigset_t *s)
{
	sigdelset(s, SIGTRAP);
	sigdelset(s, SIGSEGV);
}

/* The program keeps its view of its own dispositions: for SIGSEGV and
 * SIGTRAP the recorder's handler stays and chains to the program's; for
 * the fatal signals the recorder's flush handler stands for SIG_DFL and
 * yields to any handler the program installs. */
REC_EXPORT int sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	if (!R.active || sig <= 0 || sig >= NSIG)
		return rec_sys_sigaction(sig, act, old);
	if (rec_owned(sig)) {
		struct sigaction prev = rec_prog_act[sig];
		if (act)
			rec_prog_act[sig] = *act;
		if (old)
			*old = prev;
		return 0;
	}
	/* a handler that runs with SIGTRAP or SIGSEGV blocked would turn an
	 * int3 site or a buffer guard hit into a kill */
	struct sigaction mine, prev;
	int wrapped = rec_wrapped[sig];
	if (wrapped)
		prev = rec_prog_act[sig];
	if (act) {
		mine = *act;
		rec_keep_deliverable(&mine.sa_mask);
		act = &mine;
	}
	/* the program's handlers run behind rec_on_program, with the
	 * program's flags and mask; it reads back what it set */
	if (act && ((act->sa_flags & SA_SIGINFO) ||
		    (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN))) {
		struct sigaction w = mine, cur;
		w.sa_flags |= SA_SIGINFO;
		w.sa_sigaction = rec_on_program;
		rec_prog_act[sig] = *act;
		if (rec_sys_sigaction(sig, &w, &cur))
			return -1;
		if (old)
			*old = wrapped ? prev : rec_fatal_ours[sig] ?
				(struct sigaction){ .sa_handler = SIG_DFL } : cur;
		rec_wrapped[sig] = 1;
		rec_fatal_ours[sig] = 0;
		return 0;
	}
	if (act)
		rec_wrapped[sig] = 0;
	if (!rec_is_fatal(sig)) {
		if (rec_sys_sigaction(sig, act, old))
			return -1;
		if (old && wrapped)
			*old = prev;
		return 0;
	}
	struct sigaction dfl = { .sa_handler = SIG_DFL }, cur;
	int ours = rec_fatal_ours[sig];
	if (wrapped)
		dfl = prev, ours = 1;
	if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		struct sigaction f = { .sa_flags = SA_SIGINFO | SA_ONSTACK |
						   SA_RESTART };
		sigemptyset(&f.sa_mask);
		f.sa_sigaction = rec_on_fatal;
		if (rec_sys_sigaction(sig, &f, &cur))
			return -1;
		if (old)
			*old = ours ? dfl : cur;
		rec_fatal_ours[sig] = 1;
		return 0;
	}
	if (rec_sys_sigaction(sig, act, &cur))
		return -1;
	if (old)
		*old = ours ? dfl : cur;
	if (act)
		rec_fatal_ours[sig] = 0;
	return 0;
}

/* The program may block every signal (sigfillset): SIGTRAP and SIGSEGV
 * stay deliverable, since a synchronous trap that is blocked kills the
 * process.  The old mask the program reads back is the kernel's. */
static int rec_mask(rec_sigmask_fn fn, int how, const sigset_t *set, sigset_t *old)
{
	if (!R.active || !set || how == SIG_UNBLOCK)
		return fn(how, set, old);
	sigset_t mine = *set;
	rec_keep_deliverable(&mine);
	return fn(how, &mine, old);
}

REC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return rec_mask(rec_real_sigprocmask(), how, set, old);
}

REC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return rec_mask(rec_real_pthread_sigmask(), how, set, old);
}

/* glibc's signal() has BSD semantics and calls sigaction internally,
 * where the interposition above does not see it. */
REC_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
	struct sigaction a = { .sa_handler = h, .sa_flags = SA_RESTART }, o;
	sigemptyset(&a.sa_mask);
	if (sig > 0 && sig < NSIG)
		sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &o))
		return SIG_ERR;
	return o.sa_handler;
}

/* ------------------------------------------------- threads, exit, fork */

typedef struct rec_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t parent;
} rec_start;

static void *rec_thread_main(void *p)
{
	rec_start s = *(rec_start *)p;
	free(p);
	rec_thread_open((uint64_t)s.fn, s.parent, 0);
	return s.fn(s.arg);
}

REC_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg)
{
	rec_pthread_create_fn real = rec_real_pthread_create();
	if (!R.active || R.child)
		return real(th, attr, fn, arg);
	rec_start *s = malloc(sizeof *s);
	if (!s)
		return real(th, attr, fn, arg);
	rec_thread *me = rec_self;
	*s = (rec_start){ fn, arg,
			  me && me != &R.sink ? me->index : VT_NO_PARENT };
	int rc = real(th, attr, rec_thread_main, s);
	if (rc)
		free(s);
	return rc;
}

__attribute__((noreturn)) static void rec_exit_now(int status)
{
	if (R.active)
		rec_finish(VT_END_UNDERSCORE_EXIT);
	rec_exit_fn real = rec_real__exit();
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

REC_EXPORT void _exit(int status)
{
	rec_exit_now(status);
}

REC_EXPORT void _Exit(int status)
{
	rec_exit_now(status);
}

/* fork: the child records nothing (its probes store into a discard
 * buffer); it would otherwise share the parent's stream and file. */
static void rec_atfork_child(void)
{
	R.child = 1;
	if (R.fd >= 0)
		close(R.fd);
	R.fd = -1;
	rec_self = &R.sink;
	rec_cursor = R.sink.base;
}

/* exec: the image's words so far are written, then an EXEC chunk says
 * that what follows (the new image) is not in this trace; a failed exec
 * says so too, and recording goes on. */
static void rec_note_exec(const char *path, uint32_t stage)
{
	if (!R.active || rec_off() || getpid() != R.pid)
		return;
	if (stage == VT_EXEC_CALLED)
		rec_flush_all_dying();
	vt_exec e = { .stage = stage };
	if (path)
		strncpy(e.path, path, sizeof e.path - 1);
	rec_chunk(VT_EXEC, 0, &e, sizeof e);
}

#define REC_EXEC(call, path) \
	do { \
		int saved; \
		rec_note_exec(path, VT_EXEC_CALLED); \
		int rc = call; \
		saved = errno; \
		rec_note_exec(path, VT_EXEC_FAILED); \
		errno = saved; \
		return rc; \
	} while (0)

REC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_execve()(path, argv, envp), path);
}

REC_EXPORT int execv(const char *path, char *const argv[])
{
	REC_EXEC(rec_real_execv()(path, argv), path);
}

REC_EXPORT int execvp(const char *file, char *const argv[])
{
	REC_EXEC(rec_real_execvp()(file, argv), file);
}

REC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_execvpe()(file, argv, envp), file);
}

REC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_fexecve()(fd, argv, envp), "(a file descriptor)");
}

/* execl, execlp, execle: their arguments gathered, then the v forms above
 * (glibc's own would call its internal execve, unseen). */
#define REC_EXECL_ARGS(first, ap, argv) \
	do { \
		size_t n; \
		{ \
			va_list cp; \
			va_copy(cp, ap); \
			for (n = 1; va_arg(cp, char *); n++) \
				; \
			va_end(cp); \
		} \
		argv = alloca((n + 1) * sizeof *argv); \
		for (size_t i = 0; i < n; i++) \
			argv[i] = i ? va_arg(ap, char *) : (char *)(first); \
		argv[n] = NULL; \
		(void)va_arg(ap, char *);	/* the NULL */ \
	} while (0)

REC_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv;
	va_list ap;
	va_start(ap, arg);
	REC_EXECL_ARGS(arg, ap, argv);
	va_end(ap);
	return execv(path, argv);
}

REC_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	va_list ap;
	va_start(ap, arg);
	REC_EXECL_ARGS(arg, ap, argv);
	va_end(ap);
	return execvp(file, argv);
}

REC_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv;
	char *const *envp = NULL;
	va_list ap;
	va_start(ap, arg);
	REC_EXECL_ARGS(arg, ap, argv);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* fork: the child's work is not traced (rec_atfork_child); the parent's
 * stream says where it forked, and the replay says so. */
REC_EXPORT pid_t fork(void)
{
	pid_t pid = rec_real_fork()();
	if (pid > 0) {
		int e = errno;
		vt_fork f = { 0, (uint32_t)pid, 0 };
		rec_event(VT_FORK, &f, sizeof f);
		errno = e;
	}
	return pid;
}

__attribute__((destructor)) static void rec_fini(void)
{
	rec_finish(VT_END_EXIT);
}

/* ------------------------------------------------------------- set-up */

static void rec_text_write(const rec_site *sv, size_t ns, const uint64_t *tramp)
{
	for (int i = 0; i < R.img.nx; i++) {
		uint64_t lo = R.img.xlo[i] & ~(REC_PAGE - 1);
		if (mprotect((void *)lo, R.img.xhi[i] - lo,
			     PROT_READ | PROT_WRITE))
			rec_die("cannot make the text writable: %s",
				strerror(errno));
	}
	for (size_t i = 0; i < ns; i++) {
		uint8_t *p = (uint8_t *)sv[i].start;
		if (sv[i].int3) {
			p[0] = 0xcc;
			continue;
		}
		int32_t d = (int32_t)(tramp[i] - (sv[i].start + 5));
		p[0] = 0xe9;
		memcpy(p + 1, &d, 4);
		memset(p + 5, 0xcc, sv[i].end - sv[i].start - 5);
	}
	for (int i = 0; i < R.img.nx; i++) {
		uint64_t lo = R.img.xlo[i] & ~(REC_PAGE - 1);
		if (mprotect((void *)lo, R.img.xhi[i] - lo, R.img.xprot[i]))
			rec_die("cannot restore the text protection: %s",
				strerror(errno));
	}
}

static int rec_int3_cmp(const void *a, const void *b)
{
	const rec_int3 *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static rec_probe *rec_probes_load(void)
{
	size_t n = R.patch.nprobes;
	rec_probe *pv = calloc(n ? n : 1, sizeof *pv);
	if (!pv)
		rec_die("out of memory");
	for (size_t i = 0; i < n; i++) {
		patch_probe p = R.patch.probes[i];
		p.pc += R.img.bias;
		p.block_start += R.img.bias;
		p.block_end += R.img.bias;
		if (!rec_in_text(p.block_start, p.block_end))
			rec_die("patch line %u: block [%" PRIx64 ", %" PRIx64
				") is not in the executable's text", p.line,
				R.patch.probes[i].block_start,
				R.patch.probes[i].block_end);
		pv[i] = (rec_probe){ p, (uint32_t)i };
	}
	size_t sorted = 1;	/* skel gen writes them in order mostly */
	while (sorted < n && rec_probe_cmp(&pv[sorted - 1], &pv[sorted]) <= 0)
		sorted++;
	if (sorted < n)
		qsort(pv, n, sizeof *pv, rec_probe_cmp);
	return pv;
}

static void rec_emit_all(rec_probe *pv, rec_site *sv, size_t ns,
			 rec_emit *e, uint64_t *tramp)
{
	size_t bound = 64;
	for (size_t i = 0; i < ns; i++)
		bound += 2 * (sv[i].end - sv[i].start) + 96 * sv[i].np +
			 40 * (sv[i].end - sv[i].start) + 160;
	R.code_size = (bound + REC_PAGE - 1) & ~(REC_PAGE - 1);
	R.code = rec_code_map(R.code_size);
	if (!R.code)
		rec_die("no room for trampolines within 2 GiB of the text");
	*e = (rec_emit){ .p = R.code, .cap = R.code_size };
	R.int3 = calloc(ns ? ns : 1, sizeof *R.int3);
	if (!R.int3)
		rec_die("out of memory");
	for (size_t i = 0; i < ns; i++) {
		tramp[i] = rec_site_emit(e, &sv[i], pv);
		if (sv[i].int3) {
			R.int3[R.nint3++] = (rec_int3){ sv[i].start, tramp[i] };
			if (R.verbose)
				rec_say("int3 site at pc 0x%" PRIx64 " (block [0x%" PRIx64
					", 0x%" PRIx64 ")): no 5-byte span", sv[i].start - R.img.bias,
					sv[i].bstart - R.img.bias, sv[i].bend - R.img.bias);
		}
	}
	qsort(R.int3, R.nint3, sizeof *R.int3, rec_int3_cmp);
	/* code pages are never written again (self-modifying-code clears) */
	if (mprotect(R.code, R.code_size, PROT_READ | PROT_EXEC))
		rec_die("cannot protect the trampolines: %s", strerror(errno));
}

static void rec_header_write(const uint8_t *id, uint32_t id_len)
{
	vt_header h = { .version = VT_VERSION, .id_len = id_len,
			.id_kind = R.patch.id_kind,
			.patch_hash = patch_hash(&R.patch),
			.image_base = R.img.bias };
	memcpy(h.magic, VT_MAGIC, 8);
	memcpy(h.id, id, id_len);
	vt_header_seal(&h);
	if (write(R.fd, &h, sizeof h) != (ssize_t)sizeof h)
		rec_die("cannot write the value trace: %s", strerror(errno));
}

/* The value file, locked: a second process that inherits the environment
 * (fork+exec of the same program) finds it taken and records nothing. */
static int rec_file_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		rec_say("%s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (R.verbose)
			rec_say("%s: in use by another recorder; not recording",
				path);
		close(fd);
		return -1;
	}
	struct stat st;	/* a pipe or /dev/null is fine too */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0))
		rec_die("%s: %s", path, strerror(errno));
	R.pipe = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
	return fd;
}

static void rec_tls_offset(void)
{
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	R.cursor_off = (long)((uint64_t)&rec_cursor - tp);
	if (!rec_fits32(R.cursor_off))
		rec_die("TLS offset out of reach");
}

__attribute__((constructor)) static void rec_init(void)
{
	const char *ppath = getenv("SKEL_PATCH");
	const char *vpath = getenv("SKEL_VALUES");
	const char *verb = getenv("SKEL_VERBOSE");
	R.verbose = verb && !strcmp(verb, "1");
	/* testing: every site an int3 (tests/transparency.sh) */
	const char *i3 = getenv("SKEL_INT3");
	R.force_int3 = i3 && !strcmp(i3, "1");
	if (!ppath || !vpath || !*ppath || !*vpath)
		return;
	dl_iterate_phdr(rec_image_cb, &R.img);
	char err[FMT_ERR_LEN];
	if (patch_load(&R.patch, ppath, err)) {
		rec_say("%s: %s", ppath, err);
		return;
	}
	uint8_t id[SKEL_ID_MAX];
	uint32_t id_len;
	if (rec_identity(&R.patch, id, &id_len)) {
		if (R.verbose)
			rec_say("not the patched executable; not recording");
		patch_free(&R.patch);
		return;
	}
	ZydisDecoderInit(&rec_dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	R.have_gsbase = (getauxval(AT_HWCAP2) & 2) != 0; /* HWCAP2_FSGSBASE */
	rec_tls_offset();
	rec_probe *pv = rec_probes_load();
	rec_site *sv;
	size_t ns;
	rec_plan(pv, R.patch.nprobes, &sv, &ns);
	R.nsites = ns;
	uint64_t *tramp = calloc(ns ? ns : 1, sizeof *tramp);
	rec_emit e;
	if (!tramp)
		rec_die("out of memory");
	rec_emit_all(pv, sv, ns, &e, tramp);

	R.fd = rec_file_open(vpath);
	if (R.fd < 0) {
		/* the trampolines stay mapped but unused: nothing patched */
		free(tramp), free(sv), free(pv), free(e.map);
		R.fd = -1;
		return;
	}
	R.pid = getpid();
	if (rec_buffer_map(&R.sink) || pthread_key_create(&R.key,
							  rec_on_thread_exit))
		rec_die("out of memory");
	rec_header_write(id, id_len);
	rec_chunk(VT_TRAMPOLINE_MAP, 0, e.map, e.nmap * sizeof *e.map);
	rec_thread_open(0, VT_NO_PARENT, 0);
	pthread_atfork(NULL, NULL, rec_atfork_child);
	R.active = 1;
	rec_signals_install();
	rec_text_write(sv, ns, tramp);
	if (R.pipe)
		rec_flusher_start();
	rec_stats("start");
	free(tramp), free(sv), free(pv), free(e.map);
}
