/* spin: three threads loop for ever over their arrays (for (;;), nothing
 * recorded in the loop: every address is computed), a fourth works a
 * while and calls exit(4), killing them in their loops.  Their replays
 * must end (at the last word of their streams), not loop for ever. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long a[4][1 << 14];

static void *busy(void *p)
{
	long id = (long)p;
	for (long r = 0;; r++)
		for (int i = 0; i < (1 << 14); i++)
			a[id][i] += r ^ i;
	return NULL;
}

static void *quitter(void *p)
{
	long s = 0;
	(void)p;
	for (int r = 0; r < 200; r++)
		for (int i = 0; i < (1 << 14); i++)
			s += a[3][i] += i;
	printf("bye %ld\n", s);
	fflush(stdout);
	exit(4);
}

int main(void)
{
	pthread_t t;
	for (long i = 0; i < 3; i++)
		pthread_create(&t, NULL, busy, (void *)i);
	pthread_create(&t, NULL, quitter, NULL);
	pthread_join(t, NULL);
	return 0;
}
