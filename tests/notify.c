/* notify — functions of the program run on threads that libc starts
 * itself, never through pthread_create (tests/notify.sh):
 *   timer: a SIGEV_THREAD timer (timer_create), armed 8 times while
 *          main works; each expiry runs tick() on a new thread;
 *   mq:    mq_notify with SIGEV_THREAD: a message arriving on an empty
 *          queue runs on_msg() on a new thread, which reads it;
 *   aio:   aio_read whose completion notification is SIGEV_THREAD: the
 *          recorder does not wrap it, so the callback's accesses are
 *          lost, which the replay must say (status 3), never hide;
 *   aiothen: the same, then a thread started by pthread_create: its
 *          start must not hide that the callback's accesses are lost.
 * argv[1]: the case. */
#include <aio.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long arr[4096];
static volatile long fired, done;
static volatile int got;
static char buf[64];

static void work(int k)
{
	for (int i = 0; i < 4096; i++)
		arr[i] += (long)i * k;
}

static void tick(union sigval v)
{
	long n = __atomic_add_fetch(&fired, 1, __ATOMIC_SEQ_CST);
	arr[(n * (long)v.sival_int) & 4095]++;
	__atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
}

static void on_msg(union sigval v)
{
	char m[64];
	ssize_t n = mq_receive((mqd_t)v.sival_int, m, sizeof m, NULL);
	for (ssize_t i = 0; i < n; i++)
		arr[(unsigned char)m[i]] += i;
	__atomic_store_n(&got, 1, __ATOMIC_SEQ_CST);
}

static void on_aio(union sigval v)
{
	struct aiocb *cb = v.sival_ptr;
	for (int i = 0; i < (int)aio_return(cb); i++)
		arr[(unsigned char)buf[i]]++;
	__atomic_store_n(&got, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *p)
{
	work((int)(long)p);
	return NULL;
}

static void wait_got(void)
{
	for (int i = 0; i < 2000 && !__atomic_load_n(&got, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "timer";
	work(1);
	if (!strcmp(c, "timer")) {
		struct sigevent se;
		memset(&se, 0, sizeof se);
		se.sigev_notify = SIGEV_THREAD;
		se.sigev_notify_function = tick;
		se.sigev_value.sival_int = 7;
		timer_t t;
		if (timer_create(CLOCK_MONOTONIC, &se, &t))
			return 2;
		/* one expiry at a time, each thread's tick waited for: none is
		 * under way when the process exits (one killed by the exit
		 * inside tick would have recorded its block's values, and the
		 * replay would show the block: the recorder sees blocks, not
		 * single accesses) */
		for (int r = 0; r < 8; r++) {
			struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };
			timer_settime(t, 0, &its, NULL);
			work(r);
			for (int i = 0; i < 5000 && done <= r; i++)
				usleep(1000);
		}
		timer_delete(t);
		printf("timer fired\n");
	} else if (!strcmp(c, "mq")) {
		char name[64];
		snprintf(name, sizeof name, "/skel-notify-%d", (int)getpid());
		struct mq_attr at = { .mq_maxmsg = 4, .mq_msgsize = 64 };
		mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &at);
		if (q == (mqd_t)-1)
			return 2;
		mq_unlink(name);
		struct sigevent se;
		memset(&se, 0, sizeof se);
		se.sigev_notify = SIGEV_THREAD;
		se.sigev_notify_function = on_msg;
		se.sigev_value.sival_int = (int)q;
		if (mq_notify(q, &se))
			return 2;
		mq_send(q, "hello, queue", 12, 0);
		wait_got();
		work(2);
		printf("mq %d\n", got);
	} else if (!strcmp(c, "aio") || !strcmp(c, "aiothen")) {
		int fd = open(argv[0], O_RDONLY);
		static struct aiocb cb;
		cb.aio_fildes = fd;
		cb.aio_buf = buf;
		cb.aio_nbytes = sizeof buf;
		cb.aio_sigevent.sigev_notify = SIGEV_THREAD;
		cb.aio_sigevent.sigev_notify_function = on_aio;
		cb.aio_sigevent.sigev_value.sival_ptr = &cb;
		if (fd < 0 || aio_read(&cb))
			return 2;
		wait_got();
		work(3);
		if (!strcmp(c, "aiothen")) {
			pthread_t th;
			if (pthread_create(&th, NULL, worker, (void *)4L) ||
			    pthread_join(th, NULL))
				return 2;
		}
		printf("aio %d\n", got);
	} else {
		return 1;
	}
	return 0;
}
