/* Signal handlers replayed where they ran (tests/signals.sh): each case
 * prints what its handlers did, the same with and without skel. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#define N 64
static double a[N][N];
static volatile sig_atomic_t ticks;
static volatile long marks[256];
static volatile int nmarks;
static sigjmp_buf env;

static void mark(long v)
{
	marks[nmarks++ & 255] = v;
}

static void on_alarm(int sig)
{
	ticks++;
	for (int i = 0; i < 16; i++)
		marks[(ticks * 16 + i) & 255] += sig + i;
}

static int fds[2];

static void on_alarm_write(int sig)
{
	char c = (char)('a' + sig % 26);
	ticks++;
	if (write(fds[1], &c, 1) != 1)
		_exit(3);
}

static void on_usr1(int sig)
{
	mark(sig * 100 + nmarks);
}

static void on_usr2_nested(int sig)
{
	mark(sig);
	raise(SIGUSR1);		/* a handler interrupted by another */
	mark(-sig);
}

static void on_segv(int sig)
{
	mark(sig);
	siglongjmp(env, 1);
}

/* overflow: a recursion that ends only by overflowing the stack (the
 * skeleton's function recurses without a base case too: gcc must not
 * refuse it, -Winfinite-recursion).  No probe in it: a probe's
 * trampoline stores below rsp, and where the stack's end fell there, the
 * fault came in the recorder's code (the replay stops there, loud), one
 * run in ten at -O0 */
static long deeper(long d)
{
	volatile char buf[512];
	buf[0] = (char)d;
	buf[511] = (char)(d >> 8);
	return deeper(d + 1) + buf[511];
}

static char *guard;	/* scanfix: the page its handler opens */

static void on_segv_open(int sig)
{
	mark(sig);
	mprotect(guard, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE);
}

/* an integer division the compiler keeps (idiv of a register) */
static __attribute__((noinline)) int divide(int x, volatile int *by)
{
	int d = *by;
	return x / d;
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	mark(sig * 1000 + si->si_value.sival_int);
	for (int i = 0; i < si->si_value.sival_int % 8; i++)
		marks[i] += i;
}

/* tkill: a thread that chases indices (a value recorded per step) until
 * main stops it, signalled by main */
static volatile int chase_stop;
static int chase_next[256];

static void *chase(void *arg)
{
	long i = 0, n = 0;
	(void)arg;
	while (!chase_stop) {
		i = chase_next[i];
		n++;
	}
	return (void *)(n > 0 ? i : -1);
}

/* newthread: each new thread is signalled at once by main, mostly while
 * it is still in libc's start-up code; its handler works on the
 * thread's own array, and the thread waits for it */
static __thread long tl_work[16];
static __thread volatile sig_atomic_t tl_got;
static _Atomic int new_handled;

static void on_usr2_new(int sig)
{
	for (int i = 0; i < 16; i++)
		tl_work[i] += sig * i;
	tl_got = 1;
	new_handled++;
}

static void *newborn(void *arg)
{
	long s = (long)arg;
	while (!tl_got)
		usleep(50);
	for (int i = 0; i < 16; i++)
		s += tl_work[i];
	return (void *)s;
}

/* trapskip: a SIGILL handler that returns past the ud2 */
static void on_ill_skip(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)si;
	mark(sig);
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static void handle(int sig, void (*h)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* an exit-value loop (skelgen): its exit register recorded once */
__attribute__((noinline)) static long scan(const char *p)
{
	const char *s = p;
	while (*p)
		p++;
	return p - s;
}

static double sweep(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			a[i][j] += i * 0.5 + j;
			s += a[i][j];
		}
	return s;
}

static long summary(void)
{
	long s = 0;
	for (int i = 0; i < 256; i++)
		s += marks[i] != 0;
	return s;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "alarm";
	double s = 0;
	if (!strcmp(what, "alarm") || !strcmp(what, "storm")) {
		/* storm: many more deliveries, for the loop of recorded runs.
		 * alarm is slow enough for skel check: under valgrind each
		 * delivery costs the recorder milliseconds, and a timer that
		 * comes back before the handler is over starves the program */
		int storm = !strcmp(what, "storm");
		handle(SIGALRM, on_alarm, SA_RESTART);
		struct itimerval it = { { 0, storm ? 100 : 20000 }, { 0, 2000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		while (ticks < (storm ? 60 : 2))
			s += sweep(storm ? 8 : N);
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
		printf("%s: handlers ran, marks set %d\n", what, summary() > 0);
	} else if (!strcmp(what, "scan")) {
		/* nearly all the time in scan's loop: the timer's signals
		 * come there */
		static char str[1 << 18];	/* 256 k accesses a scan: one
						 * under valgrind has the ticks */
		memset(str, 'x', sizeof str - 1);
		handle(SIGALRM, on_alarm, SA_RESTART);
		struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		long n = 0;
		while (ticks < 2)
			n += scan(str);
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
		printf("scan: %d\n", n > 0);
	} else if (!strcmp(what, "resethand")) {
		/* SA_RESETHAND: the handler runs once (held to the next
		 * probe), and the program sees SIG_DFL after it */
		handle(SIGALRM, on_alarm, SA_RESETHAND);
		struct itimerval it = { { 0, 0 }, { 0, 20000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		while (!ticks)
			s += sweep(16);
		struct sigaction now;
		sigaction(SIGALRM, NULL, &now);
		printf("resethand: %d handler, then default %d\n", (int)ticks,
		       now.sa_handler == SIG_DFL);
	} else if (!strcmp(what, "pipe")) {
		/* a read that SA_RESTART restarts, which only the handler
		 * can end: the signal comes in libc, its handler must run
		 * there */
		if (pipe(fds))
			return 2;
		handle(SIGALRM, on_alarm_write, SA_RESTART);
		struct itimerval it = { { 0, 0 }, { 0, 20000 } };
		setitimer(ITIMER_REAL, &it, NULL);
		char c = 0;
		long n = read(fds[0], &c, 1);
		printf("pipe: read %ld '%c', %d handler\n", n, c, (int)ticks);
	} else if (!strcmp(what, "raise")) {
		handle(SIGUSR1, on_usr1, 0);
		for (int i = 0; i < 40; i++) {
			a[i][0] = i;
			if (i % 10 == 3)
				raise(SIGUSR1);
			a[i][1] = a[i][0] + 1;
		}
		printf("raise: %ld marks, last %ld\n", summary(), marks[(nmarks - 1) & 255]);
	} else if (!strcmp(what, "segv")) {
		handle(SIGSEGV, on_segv, SA_NODEFER);
		volatile int *bad = (volatile int *)(uintptr_t)(argc > 2 ? 0 : 16);
		for (int k = 0; k < 3; k++)
			if (!sigsetjmp(env, 1)) {
				a[k][0] = k;
				*bad = k;	/* faults: the handler jumps back */
				a[k][1] = -1;
			}
		printf("segv: %ld marks, a %g %g\n", summary(), a[2][0], a[2][1]);
	} else if (!strcmp(what, "overflow")) {
		/* into a SIGSEGV handler on sigaltstack, which jumps back */
		stack_t st = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };
		sigaltstack(&st, NULL);
		handle(SIGSEGV, on_segv, SA_NODEFER | SA_ONSTACK);
		struct rlimit rl = { 1 << 20, 1 << 20 };
		setrlimit(RLIMIT_STACK, &rl);
		for (int k = 0; k < 2; k++)
			if (!sigsetjmp(env, 1))
				s += deeper(0);
		printf("overflow: %ld marks\n", summary());
	} else if (!strcmp(what, "scanfault")) {
		/* a scan (an exit-value loop at -O2) that runs into a page it
		 * cannot read: the handler jumps back out of the loop */
		handle(SIGSEGV, on_segv, SA_NODEFER);
		long pg = sysconf(_SC_PAGESIZE);
		char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED || mprotect(m + pg, pg, PROT_NONE))
			return 2;
		memset(m, 'x', pg);
		volatile long n = 0;
		for (int k = 0; k < 3; k++)
			if (!sigsetjmp(env, 1))
				n += scan(m + pg - 100 * (k + 1));	/* faults */
		printf("scanfault: %ld marks, %ld\n", summary(), (long)n);
	} else if (!strcmp(what, "scanfix")) {
		/* the same scan, whose handler opens the page and returns:
		 * the load runs again and finds its zeros */
		handle(SIGSEGV, on_segv_open, 0);
		long pg = sysconf(_SC_PAGESIZE);
		char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		guard = m + pg;
		if (m == MAP_FAILED || mprotect(guard, pg, PROT_NONE))
			return 2;
		memset(m, 'x', pg);
		printf("scanfix: %ld\n", scan(guard - 100));
	} else if (!strcmp(what, "segvload") || !strcmp(what, "crashload")) {
		/* the faulting load's value is an address the skeleton
		 * needs: recorded after the load, which the recorder displaced
		 * into its trampoline, where it faults (crashload: the
		 * program dies of it) */
		if (!strcmp(what, "segvload"))
			handle(SIGSEGV, on_segv, SA_NODEFER);
		double *volatile *bad = (double *volatile *)(uintptr_t)(argc > 2 ? 0 : 16);
		for (int k = 0; k < 3; k++)
			if (!sigsetjmp(env, 1)) {
				a[k][0] = k;
				double *p = *bad;	/* faults: the handler jumps back */
				*p = -1;
			}
		printf("segvload: %ld marks, a %g %g\n", summary(), a[2][0], a[2][1]);
	} else if (!strcmp(what, "tkill")) {
		/* pthread_kill from main to a thread in analyzed code: the
		 * process's own pid, but not sent by the thread itself (the
		 * recorder took it for one it sent itself, and ran it at
		 * once: under valgrind in its trampolines, unplaced) */
		for (int i = 0; i < 256; i++)
			chase_next[i] = (i * 37 + 11) & 255;
		handle(SIGUSR1, on_usr1, 0);
		pthread_t th;
		pthread_create(&th, NULL, chase, NULL);
		for (int k = 0; k < 5; k++) {
			while (nmarks < k)
				usleep(100);
			usleep(3000);
			pthread_kill(th, SIGUSR1);
		}
		while (nmarks < 5)
			usleep(100);
		chase_stop = 1;
		pthread_join(th, NULL);
		printf("tkill: %ld marks\n", summary());
	} else if (!strcmp(what, "newthread")) {
		handle(SIGUSR2, on_usr2_new, 0);
		long sum = 0;
		for (long k = 0; k < 24; k++) {
			pthread_t th;
			void *r;
			pthread_create(&th, NULL, newborn, (void *)k);
			pthread_kill(th, SIGUSR2);
			pthread_join(th, &r);
			sum += (long)r;
		}
		printf("newthread: %d handled, %ld\n", (int)new_handled, sum);
	} else if (!strcmp(what, "trapskip")) {
		struct sigaction sa = { .sa_sigaction = on_ill_skip, .sa_flags = SA_SIGINFO };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGILL, &sa, NULL);
		s += sweep(4);
		__asm__ volatile("ud2" ::: "memory");
		s += sweep(4);
		printf("trapskip: %ld marks\n", summary());
	} else if (!strcmp(what, "waitflag")) {
		/* a loop that waits for the handler itself, recording
		 * nothing until it exits: a timer's signal held for the
		 * loop's probe would wait for ever */
		handle(SIGALRM, on_alarm, 0);
		ualarm(20000, 0);
		long spins = 0;
		while (!ticks)
			spins++;
		printf("waitflag: %d %d\n", (int)ticks, spins > 0);
	} else if (!strcmp(what, "trap")) {
		/* faults at instructions without a data access: idiv by
		 * zero (SIGFPE) and ud2 (SIGILL); the handler jumps back */
		handle(SIGFPE, on_segv, SA_NODEFER);
		handle(SIGILL, on_segv, SA_NODEFER);
		volatile int zero = 0, one = 1;
		volatile long q = 0;	/* kept across siglongjmp */
		for (int k = 0; k < 6; k++)
			if (!sigsetjmp(env, 1)) {
				a[k][0] = k;
				q += divide(k + 7, &one);
				if (k % 3 == 1)
					__builtin_trap();
				q += divide(k, k % 3 == 2 ? &zero : &one);
				a[k][1] = -1;
			}
		printf("trap: %ld marks, a %g %g, %ld\n", summary(), a[5][0], a[5][1], (long)q);
	} else if (!strcmp(what, "pending")) {
		/* real-time signals queued to itself while blocked: the
		 * kernel runs their handlers one after the other when
		 * sigprocmask unblocks them, all at the pc after its system
		 * call (in libc: whole process) */
		struct sigaction sa = { .sa_sigaction = on_rt, .sa_flags = SA_SIGINFO };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGRTMIN, &sa, NULL);
		sigaction(SIGRTMIN + 1, &sa, NULL);
		sigset_t rt, old;
		sigemptyset(&rt);
		sigaddset(&rt, SIGRTMIN);
		sigaddset(&rt, SIGRTMIN + 1);
		for (int round = 0; round < 10; round++) {
			sigprocmask(SIG_BLOCK, &rt, &old);
			for (int k = 0; k < 5; k++)
				sigqueue(getpid(), SIGRTMIN + (k & 1),
					 (union sigval){ .sival_int = round * 5 + k });
			sigprocmask(SIG_SETMASK, &old, NULL);
			s += sweep(2);
		}
		printf("pending: %ld marks\n", summary());
	} else if (!strcmp(what, "altstack")) {
		stack_t st = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };
		sigaltstack(&st, NULL);
		handle(SIGUSR1, on_usr1, SA_ONSTACK);
		for (int i = 0; i < 5; i++) {
			s += sweep(8);
			raise(SIGUSR1);
		}
		printf("altstack: %ld marks\n", summary());
	} else if (!strcmp(what, "nested")) {
		handle(SIGUSR1, on_usr1, 0);
		handle(SIGUSR2, on_usr2_nested, 0);
		for (int i = 0; i < 3; i++) {
			s += sweep(4);
			raise(SIGUSR2);
		}
		printf("nested: %ld marks\n", summary());
	} else {
		return 2;
	}
	return s < 0;
}
