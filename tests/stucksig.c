/* stucksig — a periodic timer (every 3 ms) whose handler siglongjmps out
 * of `for (;;)` around a loop nest every third time.  The nest records
 * nothing: a signal held for the thread's next probe waited for one that
 * never came and ran where the replay cannot place it (loud), and under
 * skel check, whole process, the program once never ended (2 h, a 66 GB
 * lackey log).  The loop has a tick at its header now, where the held
 * signal runs: exact (tests/signals.sh, stucksig).
 * Size: argv[1] = rounds (three signals each; default 2); argv[2] =
 * "posix": the timer is a POSIX one (timer_create, timer_settime). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static sigjmp_buf back;
static volatile sig_atomic_t hits;
static long table[256];
static double a[200][200];

static void on_alarm(int sig)
{
	(void)sig;
	for (int i = 0; i < 256; i++)
		table[i] += i;
	if (++hits % 3 == 0)
		siglongjmp(back, hits);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 3000 }, { 0, 3000 } };
	int posix = argc > 2 && !strcmp(argv[2], "posix");
	timer_t tm;
	struct sigevent se = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM };
	struct itimerspec ts = { { 0, 3000000 }, { 0, 3000000 } }, ts0 = { { 0, 0 }, { 0, 0 } };
	if (posix && (timer_create(CLOCK_MONOTONIC, &se, &tm) || timer_settime(tm, 0, &ts, NULL)))
		return 2;
	if (!posix)
		setitimer(ITIMER_REAL, &it, NULL);
	double s = 0;
	int done = 0;
	while (done < rounds) {
		if (sigsetjmp(back, 1)) {
			done++;
			continue;
		}
		for (;;)
			for (int i = 0; i < 200; i++)
				for (int j = 0; j < 200; j++) {
					a[i][j] = a[j][i] * 0.5 + i;
					s += a[i][j];
				}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	if (posix)
		timer_settime(tm, 0, &ts0, NULL);
	else
		setitimer(ITIMER_REAL, &off, NULL);
	long t = 0;
	for (int i = 0; i < 256; i++)
		t += table[i];
	printf("%d rounds, table %s\n", done, t > 0 ? "touched" : "untouched");
	return 0;
}
