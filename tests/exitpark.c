/* exitpark — a thread calls exit() while the others still run: one spins
 * in `for (;;)` over an array (nothing recorded but the loop's tick),
 * one waits in read() on a pipe, one in pthread_cond_wait, and main in
 * pthread_join.  The recorder stops each where its stream can end exactly
 * (its next probe, or the system call it waits in) before the process
 * ends; before, their streams ended at whatever the last flush had seen,
 * and the replay said that what they did after it was missing
 * (tests/behind.sh, exitpark: exact under skel check). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static long a[4][256];
static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int started;
static void *spinner(void *p)
{
	long id = (long)p;
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (long r = 0;; r++)
		for (int i = 0; i < 256; i++)
			a[id][i] += r ^ i;
	return NULL;
}
static void *reader(void *p)
{
	char c;
	(void)p;
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	(void)!read(fds[0], &c, 1);
	return NULL;
}
static void *waiter(void *p)
{
	(void)p;
	pthread_mutex_lock(&mu);
	__atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}
static void *quitter(void *p)
{
	long s = 0;
	(void)p;
	while (started < 3)
		usleep(1000);
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 256; i++)
			s += a[3][i] += i;
	printf("bye %ld\n", s);
	fflush(stdout);
	exit(3);
}
int main(void)
{
	pthread_t t;
	if (pipe(fds))
		return 1;
	for (long i = 0; i < 1; i++)
		pthread_create(&t, NULL, spinner, (void *)i);
	pthread_create(&t, NULL, reader, NULL);
	pthread_create(&t, NULL, waiter, NULL);
	pthread_create(&t, NULL, quitter, NULL);
	pthread_join(t, NULL);
	return 0;
}
