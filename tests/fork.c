/* fork: processes the recorder follows (issue 13 item 3).  Each case
 * works on arrays in the parent before the fork and in both processes
 * after it, with data-dependent branches (recorded bits, so that a bit
 * group is open at the fork) and a pointer walk (recorded values).
 *   basic    fork, the child works and exits, the parent works and waits
 *   loop     forks inside a loop nest, a child per outer iteration,
 *            each works and _exits; the loop goes on in the parent
 *   func     fork in a called function; the child returns through it and
 *            from main, as the parent does
 *   nested   the child forks a grandchild
 *   thread   a thread other than the main one forks
 *   vfork    vfork, then the child execs /bin/true or _exits
 *   exec     the child execs /bin/echo after working
 *   pathexec execvp searches PATH: first in vain (the parent goes on),
 *            then in a child, past a missing directory and an empty
 *            entry (the current one) to /bin/echo
 *   sigchld  a SIGCHLD handler that works on an array; three children
 *            one after the other, each reaped: the later ones' parent
 *            words (their replay's prefix) hold the handler's runs
 *   sysexit  syscall(SYS_exit_group, 3) after working
 *   sysexec  syscall(SYS_execve) of /bin/echo after working
 *   sysfork  children made by syscall(SYS_fork) and syscall(SYS_clone)
 *   sigfork  a SIGCHLD handler reaps four children forked one after
 *            the other: under valgrind a SIGCHLD comes in the next fork
 *   system   system() and popen() (glibc starts their shells with
 *            clone(CLONE_VM|CLONE_VFORK), no fork)
 *   clone    clone() without CLONE_VM: a process running a function of
 *            the program on a stack of its own
 *   _Fork    glibc's fork without the pthread_atfork handlers
 *   forkpty  a fork made inside libc (the child's pid found by its file)
 *   reexec   the program execs itself (reexec2), which forks a child
 *            that execs the program again (reexec3)
 * Each prints checksums, the child's before the parent's (the parent
 * waits). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <pty.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long a[512];
static struct node {
	struct node *next;
	long v;
} nodes[64];

/* data-dependent branches and a list walk: bits and values recorded */
__attribute__((noinline)) static long work(int n, int salt)
{
	long s = 0;
	for (int i = 0; i < n; i++) {
		long *p = &a[(i * 7 + salt) & 511];
		if ((*p + i) & 1)
			*p += i;
		else
			*p -= salt;
		s += *p;
	}
	for (struct node *x = &nodes[salt & 63]; x; x = x->next)
		s += x->v++;
	return s;
}

static void setup(void)
{
	for (int i = 0; i < 512; i++)
		a[i] = (i * 2654435761u) % 1000;
	for (int i = 0; i < 64; i++) {
		nodes[i].v = i;
		nodes[i].next = i + 7 < 64 ? &nodes[(i * 5 + 7) % 64] : NULL;
		if (nodes[i].next <= &nodes[i])
			nodes[i].next = NULL;
	}
}

static int reap(pid_t p)
{
	int st;
	if (waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int case_basic(void)
{
	long s = work(300, 1);
	pid_t p = fork();
	if (p == 0) {
		s += work(200, 2);
		printf("child %ld\n", s);
		exit(3);
	}
	int st = reap(p);
	s += work(250, 3);
	printf("parent %ld child status %d\n", s, st);
	return 0;
}

static int case_loop(void)
{
	long s = 0;
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 4; j++) {
			s += work(40 + j, i * 4 + j);
			if (j == 2) {
				pid_t p = fork();
				if (p == 0) {
					s += work(60, i);
					printf("child %d %ld\n", i, s);
					fflush(stdout);
					_exit(i);
				}
				printf("reaped %d\n", reap(p));
			}
		}
	}
	printf("parent %ld\n", s);
	return 0;
}

__attribute__((noinline)) static pid_t fork_here(long *s)
{
	*s += work(100, 5);
	pid_t p = fork();
	*s += work(p ? 30 : 70, 6);
	return p;
}

static int case_func(void)
{
	long s = 0;
	pid_t p = fork_here(&s);
	s += work(50, 7);
	if (p == 0) {
		printf("child %ld\n", s);
		return 5;
	}
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", s);
	return 0;
}

static int case_nested(void)
{
	long s = work(100, 8);
	pid_t p = fork();
	if (p == 0) {
		s += work(100, 9);
		pid_t q = fork();
		if (q == 0) {
			s += work(100, 10);
			printf("grandchild %ld\n", s);
			exit(0);
		}
		printf("child reaped %d\n", reap(q));
		s += work(50, 11);
		printf("child %ld\n", s);
		exit(0);
	}
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", s + work(30, 12));
	return 0;
}

static void *forker(void *arg)
{
	long s = work(120, 13);
	pid_t p = fork();
	if (p == 0) {
		s += work(80, 14);
		printf("child %ld\n", s);
		exit(0);
	}
	printf("reaped %d\n", reap(p));
	*(long *)arg = s + work(20, 15);
	return NULL;
}

static int case_thread(void)
{
	long s = work(50, 16), t = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, forker, &t) || pthread_join(th, NULL))
		return 1;
	printf("parent %ld %ld\n", s, t);
	return 0;
}

static int case_vfork(void)
{
	long s = work(100, 17);
	pid_t p = vfork();
	if (p == 0)
		execl("/bin/true", "true", (char *)NULL);
	printf("reaped %d\n", reap(p));
	s += work(40, 18);
	p = vfork();
	if (p == 0)
		_exit(7);
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", s + work(40, 19));
	return 0;
}

static int case_exec(void)
{
	long s = work(100, 20);
	pid_t p = fork();
	if (p == 0) {
		s += work(100, 21);
		printf("child %ld\n", s);
		fflush(stdout);
		execl("/bin/echo", "echo", "exec'd", (char *)NULL);
		_exit(127);
	}
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", s + work(30, 22));
	return 0;
}

/* sysexit, sysexec: the image ends through syscall(2), not libc's
 * _exit or execve (the recorder wrote nothing: an empty trace) */
static int case_sysexit(void)
{
	printf("parent %ld\n", work(200, 60));
	fflush(stdout);
	syscall(SYS_exit_group, 3);
	return 1;
}

/* sysfork: a child made by syscall(SYS_fork), then one by a clone that
 * is a fork (SIGCHLD, no stack): both were untraced and unnamed */
static int case_sysfork(void)
{
	long s = work(100, 62);
	for (int k = 0; k < 2; k++) {
		fflush(stdout);
		pid_t p = k ? (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0) : (pid_t)syscall(SYS_fork);
		if (p == 0) {
			s += work(80, 63 + k);
			printf("child %d %ld\n", k, s);
			fflush(stdout);
			_exit(k);
		}
		printf("reaped %d\n", reap(p));
	}
	printf("parent %ld\n", s + work(30, 65));
	return 0;
}

static int case_sysexec(void)
{
	char *const argv[] = { "echo", "exec'd by syscall", NULL };
	printf("parent %ld\n", work(200, 61));
	fflush(stdout);
	syscall(SYS_execve, "/bin/echo", argv, environ);
	return 1;
}

static int case_pathexec(void)
{
	long s = work(60, 34);
	char *const argv[] = { "echo", "found on PATH", NULL };
	setenv("PATH", "/nonexistent-skel-test", 1);
	int rc = execvp("echo", argv);
	printf("failed search: %d %s\n", rc, errno == ENOENT ? "ENOENT" : "other");
	s += work(40, 35);
	setenv("PATH", "/nonexistent-skel-test::/usr/bin:/bin", 1);
	pid_t p = fork();
	if (p == 0) {
		s += work(60, 36);
		printf("child %ld\n", s);
		fflush(stdout);
		execvp("echo", argv);
		_exit(127);
	}
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", s + work(30, 37));
	return 0;
}

static volatile long chld_seen[8];
static volatile int nchld;

static void on_chld(int sig)
{
	for (int i = 0; i < 8; i++)
		chld_seen[i] += sig + i * nchld;
	nchld++;
}

static void on_sigchld(void (*h)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

static int case_sigchld(void)
{
	on_sigchld(on_chld);
	long s = work(60, 38);
	for (int k = 0; k < 3; k++) {
		pid_t p = fork();
		if (p == 0) {
			s += work(40, 39 + k);
			printf("child %d %ld %d\n", k, s, nchld);
			fflush(stdout);
			_exit(k);
		}
		printf("reaped %d\n", reap(p));
		while (nchld <= k)	/* the handler ran (after the wait, in it) */
			usleep(100);
		s += work(30, 42 + k);
	}
	printf("parent %ld %d %ld\n", s, nchld, chld_seen[3]);
	return 0;
}

/* sigfork: children forked one after the other, not waited for until
 * the end; each one's SIGCHLD comes while the parent works (no system
 * call there): natively at once, under valgrind at the parent's next
 * system call, the next fork's, between the fork's word and its system
 * call (the handler's words were then the child's too, without its run:
 * the child's replay read them as its own code's) */
static volatile int nreaped;
static double grid[200][200];

static void on_chld_reap(int sig)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		chld_seen[p & 7] += sig, nreaped++;
}

static int case_sigfork(void)
{
	on_sigchld(on_chld_reap);
	for (int k = 0; k < 4; k++) {
		if (fork() == 0) {
			double d = 0;
			for (int i = 0; i < 200; i++)
				d += grid[i][i] + i;
			_exit((int)d & 1);
		}
		for (int i = 0; i < 200; i++)
			for (int j = 0; j < 200; j++)
				grid[i][j] += i * j + k;
	}
	while (nreaped < 4)
		usleep(1000);
	printf("reaped %d grid %g\n", nreaped, grid[199][199]);
	return 0;
}

static int case_system(void)
{
	long s = work(100, 23);
	fflush(stdout);
	int st = system("echo from system");
	s += work(50, 24);
	FILE *f = popen("echo from popen", "r");
	char line[64] = "";
	if (!f || !fgets(line, sizeof line, f))
		return 1;
	int pst = pclose(f);
	printf("system %d popen %d %s", st, pst, line);
	printf("parent %ld\n", s + work(30, 25));
	return 0;
}

static long clone_sum;

static int cloned(void *arg)
{
	clone_sum += work(90, 26) + *(int *)arg;
	printf("cloned %ld\n", clone_sum);
	fflush(stdout);
	return 4;
}

static int case_clone(void)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int k = 3;
	clone_sum = work(60, 27);
	pid_t p = clone(cloned, stack + sizeof stack, SIGCHLD, &k);
	if (p < 0)
		return 1;
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", clone_sum + work(30, 28));
	return 0;
}

pid_t _Fork(void);

static int case_ufork(void)
{
	long s = work(90, 34);
	pid_t p = _Fork();
	if (p == 0) {
		printf("child %ld\n", s + work(60, 35));
		exit(0);
	}
	printf("reaped %d\n", reap(p));
	printf("parent %ld\n", s + work(20, 36));
	return 0;
}

static int case_forkpty(void)
{
	long s = work(70, 37);
	int m;
	pid_t p = forkpty(&m, NULL, NULL, NULL);
	if (p == 0) {
		printf("child %ld\n", s + work(50, 38));
		fflush(stdout);
		/* wait for the parent to have read the line: a pty's master
		 * may see EIO instead of the data once the slave is closed */
		char c;
		ssize_t r = read(0, &c, 1);
		_exit(r == 1 ? 0 : 1);
	}
	char buf[64];
	ssize_t n = 0, r;
	while (n < (ssize_t)sizeof buf &&
	       (r = read(m, buf + n, sizeof buf - (size_t)n)) > 0) {
		n += r;
		if (memchr(buf, '\n', (size_t)n))
			break;
	}
	if (write(m, "\n", 1) != 1)
		return 1;
	printf("reaped %d, %zd bytes from the child\n", reap(p), n);
	printf("parent %ld\n", s + work(20, 39));
	return 0;
}

static const char *self;

static int case_reexec(void)
{
	printf("first %ld\n", work(80, 29));
	fflush(stdout);
	execl(self, self, "reexec2", (char *)NULL);
	return 127;
}

static int case_reexec2(void)
{
	long s = work(70, 30);
	pid_t p = fork();
	if (p == 0) {
		printf("second's child %ld\n", s + work(40, 31));
		fflush(stdout);
		execl(self, self, "reexec3", (char *)NULL);
		_exit(127);
	}
	printf("reaped %d\n", reap(p));
	printf("second %ld\n", s + work(20, 32));
	return 0;
}

static int case_reexec3(void)
{
	printf("third %ld\n", work(50, 33));
	return 6;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} cases[] = { { "basic", case_basic }, { "loop", case_loop }, { "func", case_func },
		      { "nested", case_nested }, { "thread", case_thread },
		      { "vfork", case_vfork }, { "exec", case_exec }, { "pathexec", case_pathexec },
		      { "sigchld", case_sigchld },
		      { "sigfork", case_sigfork },
		      { "sysexit", case_sysexit },
		      { "sysexec", case_sysexec },
		      { "sysfork", case_sysfork },
		      { "system", case_system },
		      { "clone", case_clone }, { "_Fork", case_ufork }, { "forkpty", case_forkpty },
		      { "reexec", case_reexec },
		      { "reexec2", case_reexec2 }, { "reexec3", case_reexec3 } };
	self = argv[0];
	setup();
	for (size_t i = 0; argc > 1 && i < sizeof cases / sizeof *cases; i++)
		if (!strcmp(argv[1], cases[i].name))
			return cases[i].fn();
	fprintf(stderr, "usage: fork basic|loop|func|nested|thread|vfork|exec|pathexec|sigchld|system|clone|"
		"_Fork|forkpty|reexec\n");
	return 2;
}
