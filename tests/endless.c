/* endless — a loop that never ends at run time, though its exit is in
 * the code (taken while depth > 0, one less each time), left by a timer's
 * handler that siglongjmps out.  It records nothing while it goes round:
 * the handler cannot be placed, and the replay, which never asks for a
 * word again, went round for ever (tests/signals.sh, endless).
 * Size: argv[1] = rounds of the timer (default 3). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static sigjmp_buf back;
static volatile sig_atomic_t alarms;
static double grid[128][128];

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
	siglongjmp(back, 1);
}

__attribute__((noinline)) static long sweep(int depth)
{
	long n = 0;
	for (;;) {
		for (int i = 0; i < 128; i++)
			for (int j = 0; j < 128; j++) {
				grid[i][j] += 1.0 / (1 + i + j + depth);
				n++;
			}
		if (depth > 0)
			return n + sweep(depth - 1);
		if (depth < 0)
			return n;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3, done = 0;
	signal(SIGALRM, on_alarm);
	while (done < rounds) {
		if (sigsetjmp(back, 1) == 0) {
			struct itimerval it = { { 0, 0 }, { 0, 5000 } };
			setitimer(ITIMER_REAL, &it, NULL);
			sweep(done % 3);
		} else {
			done++;
		}
	}
	printf("%d rounds, %d alarms\n", done, (int)alarms);
	return 0;
}
