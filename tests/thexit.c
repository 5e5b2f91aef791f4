/* thexit.c — threads that end every way a pthread can, for the thread
 * exit tests (tests/whole.sh): returning from the start routine, calling
 * pthread_exit, detached, each with a key destructor of the program that
 * runs after the recorder's; rounds of three joined threads reuse the
 * stacks (and TLS) of the round before; main leaves by pthread_exit, so
 * the last thread to end runs exit(), after main has seen the others go.
 * Output depends only on N. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_key_t key;
static _Atomic int ndetached;
static _Atomic long detached_tid[2];

static void destructor(void *p)
{
	memset(p, 0, 32);
	free(p);
}

static void *work(void *arg)
{
	long n = (long)arg;
	char *b = malloc(64 + n);
	memset(b, (int)n, 64 + n);
	pthread_setspecific(key, malloc(32));
	long s = 0;
	for (long i = 0; i < 64 + n; i++)
		s += b[i];
	free(b);
	if (n % 3 == 0 && n < 1000)
		pthread_exit((void *)s);
	return (void *)s;
}

static void *detached(void *arg)
{
	detached_tid[(long)arg - 1000] = syscall(SYS_gettid);
	work(arg);
	ndetached++;
	return NULL;
}

/* Until the thread is gone (its exit system call made): a process that
 * exits while a thread is still in libc's exit code stops it somewhere
 * between two of its values, and its trace is then not exact (the replay
 * says so). */
static void gone(long tid)
{
	while (syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH)
		usleep(1000);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	pthread_key_create(&key, destructor);
	long total = 0;
	for (int i = 0; i < n; i++) {
		pthread_t t[3];
		for (int k = 0; k < 3; k++)
			pthread_create(&t[k], NULL, work, (void *)(long)(i * 3 + k));
		for (int k = 0; k < 3; k++) {
			void *r;
			pthread_join(t[k], &r);
			total += (long)r;
		}
	}
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < 2; i++) {
		pthread_t d;
		pthread_create(&d, &at, detached, (void *)(long)(1000 + i));
	}
	while (ndetached < 2)
		usleep(1000);
	gone(detached_tid[0]);
	gone(detached_tid[1]);
	printf("%ld\n", total);
	fflush(stdout);
	pthread_exit(NULL);
}
