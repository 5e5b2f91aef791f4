/* alive.c — a thread still running when main returns (tests/events.sh):
 * the process exits while it spins, somewhere between two of its values,
 * which the replay must say. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile long sink[64];

static void *spin(void *arg)
{
	for (long i = 0;; i++) {
		sink[i % 64] += i;
		if (i % 1000 == 0)
			usleep(100);
	}
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, spin, NULL);
	usleep(20000);
	puts("bye");
	return 0;
}
