/* Threads handing work over through a contended mutex and two condition
 * variables (a bounded queue), with per-thread sums in TLS and a table
 * filled once by pthread_once: several threads run libc's lock code on
 * the same lock word at once, so lackey's one sequence can be matched
 * against the replay's per-thread streams in more than one way near each
 * hand-over (tests/threads.sh, whole process). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define QLEN 8
#define NCONS 3

static __thread long mine[32];
static __thread int taken;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static long table[128];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER, nonfull = PTHREAD_COND_INITIALIZER;
static int queue[QLEN], head, tail, closed;
static long total;

static void fill(void)
{
	for (int i = 0; i < 128; i++)
		table[i] = (long)i * 7 % 127;
}

static void *consume(void *arg)
{
	(void)arg;
	pthread_once(&once, fill);
	for (;;) {
		pthread_mutex_lock(&mu);
		while (head == tail && !closed)
			pthread_cond_wait(&nonempty, &mu);
		if (head == tail) {
			pthread_mutex_unlock(&mu);
			break;
		}
		int v = queue[head++ % QLEN];
		pthread_cond_signal(&nonfull);
		pthread_mutex_unlock(&mu);
		mine[v & 31] += table[v & 127];
		taken++;
	}
	long s = taken;
	for (int i = 0; i < 32; i++)
		s += mine[i];
	pthread_mutex_lock(&mu);
	total += s;
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_t t[NCONS];
	for (int i = 0; i < NCONS; i++)
		pthread_create(&t[i], NULL, consume, NULL);
	pthread_once(&once, fill);
	for (int v = 0; v < n; v++) {
		pthread_mutex_lock(&mu);
		while (tail - head >= QLEN)
			pthread_cond_wait(&nonfull, &mu);
		queue[tail++ % QLEN] = v;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	closed = 1;
	pthread_cond_broadcast(&nonempty);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < NCONS; i++)
		pthread_join(t[i], NULL);
	/* the sum of table[v & 127] over v, plus n: the same for any split */
	printf("total %ld\n", total);
	return 0;
}
