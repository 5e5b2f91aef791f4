/* What the skeleton does not model yet must be said, never left out
 * silently (tests/events.sh): a signal handler that touches memory, a
 * fork whose child works, an exec.  The program also checks that it
 * sees its own signal dispositions under the recorder.
 *   events signal | fork | exec | sigaction */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long hits, buf[64];
static long a[4096];

static void on_alrm(int s)
{
	(void)s;
	hits++;
	for (int i = 0; i < 64; i++)
		buf[i] += i;
}

static long work(int rounds)
{
	long s = 0;
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < 4096; i++)
			s += a[i] += i ^ r;
	return s;
}

static void on_usr1(int s) { (void)s; }

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (!strcmp(what, "signal")) {
		struct sigaction sa = { 0 };
		sa.sa_handler = on_alrm;
		sigaction(SIGALRM, &sa, 0);
		/* 20 ms: under skel check's valgrind each delivery costs the
		 * recorder milliseconds; a faster timer starves the program */
		struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
		setitimer(ITIMER_REAL, &it, 0);
		long s = 0;
		while (!hits)
			s += work(10);
		it = (struct itimerval){ { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &it, 0);
		printf("handled %d\n", hits > 0 && s != 1);
	} else if (!strcmp(what, "fork")) {
		pid_t p = fork();
		long s = work(p == 0 ? 3 : 2);
		if (p == 0)
			_exit(s == 1);
		int st;
		waitpid(p, &st, 0);
		printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else if (!strcmp(what, "exec")) {
		printf("before %ld\n", work(2) != 1);
		fflush(stdout);
		execl("/bin/echo", "echo", "after exec", (char *)0);
		return 1;
	} else if (!strcmp(what, "sigaction")) {
		/* the program reads back what it set, whatever the recorder
		 * installed; SA_RESETHAND is honoured */
		struct sigaction sa = { 0 }, old;
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESETHAND;
		sigaction(SIGUSR1, &sa, 0);
		sigaction(SIGUSR1, 0, &old);
		printf("readback %d %d\n", old.sa_handler == on_usr1,
		       (old.sa_flags & SA_RESETHAND) != 0);
		raise(SIGUSR1);
		sigaction(SIGUSR1, 0, &old);
		printf("after reset %d\n", old.sa_handler == SIG_DFL);
		sa.sa_flags = 0;
		sigaction(SIGUSR2, &sa, 0);
		struct sigaction dfl = { 0 };
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGUSR2, &dfl, &old);
		printf("replaced %d\n", old.sa_handler == on_usr1);
		printf("work %d\n", work(1) != 1);
	}
	return 0;
}
