/* Whole-process tests: a program calling into tests/whole_lib.c (a shared
 * library) through the PLT, with a callback back into the program. */
#include <stdio.h>
#include <stdlib.h>

long wl_apply(long *a, size_t n, long (*f)(long));
long wl_sum(const long *a, size_t n);

static long twice(long x)
{
	return 2 * x + 1;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atoi(argv[1]) : 100;
	long *a = malloc(n * sizeof *a);
	if (!a)
		return 1;
	for (size_t i = 0; i < n; i++)
		a[i] = (long)(i * 7 % 13);
	long r = wl_apply(a, n, twice);
	r += wl_sum(a, n / 2);
	printf("%ld\n", r);
	free(a);
	return 0;
}
