/* behind: programs that fill the recorder's buffer many times over, so
 * that full buffers are handed to its flusher thread (docs/formats.md,
 * "Writing behind the program") while the program goes on, forks, starts
 * threads, execs or crashes.  Each pass walks a pseudo-random array with
 * a data-dependent branch per element (a recorded outcome each) and a
 * pointer chase (a recorded value each): about 3 words per element, some
 * 100,000 words (3 buffers) per pass.
 *   plain    four passes
 *   fork     a pass, fork; the child makes two passes and exits, the
 *            parent one and waits, then one more
 *   threads  four threads make two passes each, the main thread one
 *   exec     three passes, then exec /bin/true
 *   crash    three passes, then a write through a null pointer (SIGSEGV)
 *   quick    three passes, quick_exit(7), whose at_quick_exit handler
 *            makes one more
 *   rawexit  three passes, then the exit system call of its own (no libc
 *            exit path: the recorder does not see it)
 *   heap     a pass, then two that also allocate, write and free a block
 *            every 16 elements (5,000 heap events a pass, some 1,700 a
 *            buffer: the flusher writes them before each buffer's words)
 * Prints a checksum per process. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 40000

static unsigned key[N];
static unsigned next[N];

static void fill(void)
{
	unsigned s = 12345;
	for (unsigned i = 0; i < N; i++) {
		s = s * 1103515245u + 12345u;
		key[i] = s >> 8;
		next[i] = (s >> 3) % N;
	}
}

/* A pass; with `heap`, a block of 64 kept live is replaced (allocated,
 * written, the old one freed) every 16 elements. */
static unsigned long walk(unsigned seed, int heap)
{
	static unsigned *live[64];
	unsigned long sum = 0;
	unsigned p = seed % N;
	for (unsigned i = 0; i < N; i++) {
		if ((key[i] ^ seed) & 4)
			sum += key[i];
		else
			sum ^= key[i] << 1;
		p = next[p];
		sum += key[p];
		if (heap && i % 16 == 0) {
			unsigned k = i / 16 % 64;
			free(live[k]);
			live[k] = malloc(8 + key[i] % 64 * 4);
			if (!live[k])
				exit(2);
			live[k][1] = p;
			sum += live[k][1];
		}
	}
	return sum;
}

static unsigned long pass(unsigned seed)
{
	return walk(seed, 0);
}

/* no malloc: which arena a thread's block comes from follows the
 * scheduler, and the traces of two runs are compared */
static unsigned long result[4];

static void last_pass(void)
{
	printf("at_quick_exit %lx\n", pass(11));
	fflush(stdout);
}

static void *worker(void *arg)
{
	unsigned long id = (unsigned long)arg;
	result[id - 10] = pass((unsigned)id) + pass((unsigned)id * 7);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	fill();
	unsigned long sum = pass(1);
	if (!strcmp(mode, "plain")) {
		sum += pass(2) + pass(3) + pass(4);
	} else if (!strcmp(mode, "fork")) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			sum += pass(5) + pass(6);
			printf("child %lx\n", sum);
			fflush(stdout);
			_exit(0);
		}
		sum += pass(7);
		int st;
		waitpid(pid, &st, 0);
		sum += pass(8);
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[4];
		for (unsigned long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, (void *)(i + 10));
		sum += pass(9);
		for (int i = 0; i < 4; i++) {
			pthread_join(t[i], NULL);
			sum += result[i];
		}
	} else if (!strcmp(mode, "exec")) {
		sum += pass(2) + pass(3);
		printf("%lx\n", sum);
		fflush(stdout);
		execl("/bin/true", "true", (char *)NULL);
		return 3;
	} else if (!strcmp(mode, "quick")) {
		at_quick_exit(last_pass);
		sum += pass(2) + pass(3);
		printf("%lx\n", sum);
		fflush(stdout);
		quick_exit(7);
	} else if (!strcmp(mode, "heap")) {
		sum += walk(2, 1) + walk(3, 1);
	} else if (!strcmp(mode, "rawexit")) {
		sum += pass(2) + pass(3);
		printf("%lx\n", sum);
		fflush(stdout);
		syscall(SYS_exit, 5);
	} else if (!strcmp(mode, "crash")) {
		sum += pass(2) + pass(3);
		printf("%lx\n", sum);
		fflush(stdout);
		*(volatile unsigned long *)(sum & 0) = sum;
	}
	printf("%lx\n", sum);
	return 0;
}
