/* A small shared library for whole-process tests: a loop, a callback and
 * a call into another exported function through the PLT. */
#include <stddef.h>
long wl_table[64];

__attribute__((noinline)) long wl_sum(const long *a, size_t n)
{
	long s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i] * (long)(i + 1);
	return s;
}

long wl_apply(long *a, size_t n, long (*f)(long))
{
	for (size_t i = 0; i < n; i++) {
		a[i] = f(a[i]);
		wl_table[a[i] & 63]++;
	}
	return wl_sum(a, n);
}
