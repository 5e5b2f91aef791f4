/* wp_libc.c — libc at work for test_recorder's whole-process test with
 * libc patched: strlen, memcpy, qsort (a callback into the program),
 * printf, malloc/free in a loop; `wp_libc threads N` does it in two
 * threads.  Its output depends only on N. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wp_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static long wp_work(long n, long seed)
{
	static const char *const words[] = { "skel", "whole", "process",
					     "recorder", "libc" };
	long acc = 0;
	for (long i = 0; i < n; i++) {
		size_t k = (size_t)(i + seed) % 5, len = strlen(words[k]);
		char *buf = malloc(len + 32);
		memcpy(buf, words[k], len + 1);
		long v[24];
		for (int j = 0; j < 24; j++)
			v[j] = (j * 7919 + i * 31 + seed) % 101;
		qsort(v, 24, sizeof *v, wp_cmp);
		acc += (long)strlen(buf) + v[0] + v[23];
		free(buf);
	}
	return acc;
}

static void *wp_thread(void *arg)
{
	long *n = arg;
	*n = wp_work(*n, 17);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100;
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		pthread_t th;
		long other = n;
		if (pthread_create(&th, NULL, wp_thread, &other))
			return 4;
		long mine = wp_work(n, 3);
		pthread_join(th, NULL);
		printf("threads %ld %ld\n", mine, other);
		return 0;
	}
	for (long i = 0; i < 4; i++)
		printf("round %ld: %ld\n", i, wp_work(n, i));
	return 7;
}
