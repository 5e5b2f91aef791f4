/* heapobj — objects of known sizes touched by separate functions, for
 * tests/objects.sh: a = heap#1 (100 longs, written by touch_w), b =
 * heap#2 (50 longs, written by touch_w and read by touch_r), glob (16
 * longs, read and written by touch_glob), a freed, c = heap#3 (100 longs,
 * likely at a's address: reuse gets a new number) written, then c
 * realloc'ed = heap#4 (200 longs) written, and 10 of its longs read by
 * touch_r inside a region marked with skel_roi_begin/end; tcount (TLS)
 * read and written by touch_tls; then d = heap#5, 8 KiB of anonymous
 * mmap written by touch_w and unmapped, and e = heap#6, mapped again
 * (likely at d's place: a new number) and 10 longs written.  No stdio: nothing else allocates.  The
 * block addresses go to stderr, for the test to check the offsets. */
#include "skel_roi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

long glob[16];
static __thread long tcount;

__attribute__((noinline)) void touch_w(long *p, long n)
{
	for (long i = 0; i < n; i++)
		p[i] = i;
}

__attribute__((noinline)) long touch_r(const long *p, long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += p[i];
	return s;
}

__attribute__((noinline)) void touch_glob(void)
{
	for (int i = 0; i < 16; i++)
		glob[i] += i;
}

__attribute__((noinline)) void touch_tls(long n)
{
	tcount += n;
}

static void say(const char *what, const void *p)
{
	char buf[64];
	int n = snprintf(buf, sizeof buf, "%s=%lx\n", what, (unsigned long)p);
	if (write(2, buf, (size_t)n) < 0)
		_exit(1);
}

int main(void)
{
	long *a = malloc(100 * sizeof(long));
	long *b = malloc(50 * sizeof(long));
	if (!a || !b)
		return 1;
	say("heap#1", a);
	say("heap#2", b);
	touch_w(a, 100);
	touch_w(b, 50);
	long s = touch_r(b, 50);
	touch_glob();
	touch_tls(s);
	free(a);
	long *c = malloc(100 * sizeof(long));
	if (!c)
		return 1;
	say("heap#3", c);
	touch_w(c, 100);
	c = realloc(c, 200 * sizeof(long));
	if (!c)
		return 1;
	say("heap#4", c);
	touch_w(c, 200);
	skel_roi_begin("tail");
	s += touch_r(c, 10);
	skel_roi_end();
	free(c);
	free(b);
	long *d = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED)
		return 1;
	say("heap#5", d);
	touch_w(d, 1024);
	munmap(d, 8192);
	long *e = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e == MAP_FAILED)
		return 1;
	say("heap#6", e);
	touch_w(e, 10);
	munmap(e, 4096);
	return (int)(s & 1);
}
