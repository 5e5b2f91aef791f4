/* cancel — signals that come while a thread waits in a system call of
 * libc (tests/cancel.sh), the whole process traced:
 *   pause:  threads blocked in pause() cancelled (pthread_cancel: glibc
 *           installs its SIGCANCEL handler itself, through
 *           __libc_sigaction, and the thread unwinds from it);
 *   read:   a thread blocked in read() on an empty pipe cancelled (the
 *           handler has SA_RESTART: the read would be restarted);
 *   test:   threads cancelled at pthread_testcancel (cancellation
 *           disabled while they work, until the request was made);
 *   alarm:  the program's own SIGALRM handler, touching memory, run while
 *           the main thread sleeps in nanosleep;
 *   rawexit: a thread that leaves by syscall(SYS_exit), past its key
 *           destructors (its stream was left open: "still running when
 *           the process exited").
 * argv[1]: the case, "all" by default. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long sink[64];
static int fds[2];
static volatile int ready;

static void work(long id)
{
	for (int i = 0; i < 500; i++)
		sink[id] += i;
}

static void *in_pause(void *arg)
{
	work((long)arg);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	pause();
	return NULL;
}

static void *in_read(void *arg)
{
	char c;
	work((long)arg);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	(void)!read(fds[0], &c, 1);
	return NULL;
}

static int go[2];

/* cancellation disabled while it works and waits for the request to be
 * made, then taken at pthread_testcancel */
static void *in_test(void *arg)
{
	char c;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	work((long)arg);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	(void)!read(go[0], &c, 1);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	for (;;)
		pthread_testcancel();
	return NULL;
}

/* asynchronous cancellation in a loop without exit that records
 * nothing but its tick (not in "all": tests/cancel.sh checks it apart) */
static void *in_spin(void *arg)
{
	long id = (long)arg;
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		sink[id]++;
	return NULL;
}

static void cancel_all(void *(*fn)(void *), int n)
{
	pthread_t t[4];
	ready = 0;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (void *)(i * 8));
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < n)
		usleep(1000);
	usleep(20000);		/* into the system call */
	for (int i = 0; i < n; i++)
		pthread_cancel(t[i]);
	if (fn == in_test)
		(void)!write(go[1], "gogo", (size_t)n);
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		printf("%s", r == PTHREAD_CANCELED ? "c" : "?");
	}
	printf("\n");
}

static void *raw_exit(void *arg)
{
	work((long)arg);
	syscall(SYS_exit, 0);
	return NULL;
}

static volatile long alarms;
static void on_alarm(int sig)
{
	(void)sig;
	sink[63] += alarms++;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "all";
	int all = !strcmp(m, "all");
	if (all || !strcmp(m, "pause"))
		cancel_all(in_pause, 3);
	if (all || !strcmp(m, "read")) {
		if (pipe(fds))
			return 1;
		cancel_all(in_read, 2);
	}
	if (all || !strcmp(m, "test")) {
		if (pipe(go))
			return 1;
		cancel_all(in_test, 2);
	}
	if (!strcmp(m, "spin"))
		cancel_all(in_spin, 1);
	if (all || !strcmp(m, "rawexit")) {
		pthread_t t;
		if (pthread_create(&t, NULL, raw_exit, (void *)30L) || pthread_join(t, NULL))
			return 1;
	}
	if (all || !strcmp(m, "alarm")) {
		struct sigaction a;
		memset(&a, 0, sizeof a);
		a.sa_handler = on_alarm;
		sigaction(SIGALRM, &a, NULL);
		for (int k = 0; k < 3; k++) {
			struct timespec ts = { 0, 200000000 };
			ualarm(20000, 0);
			while (nanosleep(&ts, &ts))
				;
			work(40 + k);
		}
		printf("alarms %ld\n", alarms);
	}
	return 0;
}
