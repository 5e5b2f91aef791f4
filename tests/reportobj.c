/* reportobj — objects of known sizes for tests/report.sh, none freed
 * before the end (no address is reused), no stdio (nothing else
 * allocates):
 *   a    1000 longs, one malloc site: written by fill (8000 bytes), read
 *        by sum (8000 bytes) at the end
 *   b    300 longs, another site: written by fill (2400 bytes)
 *   c    5000 bytes, a third site: written byte by byte by fill_bytes
 *   d    four blocks of 8 longs from one site (a loop): written by fill,
 *        4 x 64 = 256 bytes for the site
 *   glob 64 longs: read and written by bump (512 bytes each way)
 * The blocks' addresses go to stderr ("a=HEX", "d0=HEX", ...), for the
 * test's oracle. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long glob[64];

__attribute__((noinline)) void fill(long *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i] = i;
}

__attribute__((noinline)) void fill_bytes(char *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i] = (char)i;
}

__attribute__((noinline)) long sum(const long *p, long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += p[i];
	return s;
}

__attribute__((noinline)) void bump(void)
{
	for (int i = 0; i < 64; i++)
		glob[i] += i;
}

static void say(const char *what, int k, const void *p)
{
	char buf[64];
	int n = k < 0 ? snprintf(buf, sizeof buf, "%s=%lx\n", what, (unsigned long)p)
		      : snprintf(buf, sizeof buf, "%s%d=%lx\n", what, k, (unsigned long)p);
	if (write(2, buf, (size_t)n) < 0)
		_exit(1);
}

int main(void)
{
	long *a = malloc(1000 * sizeof(long));
	long *b = malloc(300 * sizeof(long));
	char *c = malloc(5000);
	long *d[4];
	if (!a || !b || !c)
		return 1;
	for (int k = 0; k < 4; k++)
		if (!(d[k] = malloc(8 * sizeof(long))))
			return 1;
	say("a", -1, a);
	say("b", -1, b);
	say("c", -1, c);
	for (int k = 0; k < 4; k++)
		say("d", k, d[k]);
	fill(a, 1000);
	fill(b, 300);
	fill_bytes(c, 5000);
	for (int k = 0; k < 4; k++)
		fill(d[k], 8);
	bump();
	long s = sum(a, 1000);
	for (int k = 0; k < 4; k++)
		free(d[k]);
	free(c);
	free(b);
	free(a);
	return (int)(s & 1);
}
