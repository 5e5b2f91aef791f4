/* alive.c — threads still running when main returns (tests/events.sh).
 * spin goes round a loop with a probe in it (its sleep's return): the
 * recorder stops it there before the process exits, and its trace is
 * exact.  With an argument, a second thread spins in a loop that records
 * nothing until it ends (`while (!stop)`), which never comes: it cannot
 * be stopped at a probe, its trace ends somewhere between two of its
 * values, and the replay must say so. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile long sink[64];
static volatile int stop;

static void *spin(void *arg)
{
	for (long i = 0;; i++) {
		sink[i % 64] += i;
		if (i % 1000 == 0)
			usleep(100);
	}
	return arg;
}

static void *hold(void *arg)
{
	long n = 0;
	while (!stop)
		n++;
	sink[0] = n;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	(void)argv;
	pthread_create(&t, NULL, spin, NULL);
	if (argc > 1)
		pthread_create(&t, NULL, hold, NULL);
	usleep(20000);
	puts("bye");
	return 0;
}
