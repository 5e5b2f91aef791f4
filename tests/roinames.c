/* roinames — regions of interest named by skel_roi_begin (tests/objects.sh).
 * Worked by hand: region "fill" (two pairs of markers passing the same
 * literal) writes a[0..99] (100 writes), then reads and writes each again
 * (100 reads, 100 writes): 300 accesses of a; region "sum" reads b[0..49]
 * (50 reads of b); a name the skeleton cannot know (a string built on the
 * stack) leaves its region unnamed ("markers"): 10 reads of b.  Nothing
 * touches a or b outside the regions but the final print's read of
 * a[99] and b[0]. */
#include <stdio.h>
#include <string.h>
#include "skel_roi.h"

long a[100], b[50];

__attribute__((noinline)) void fill(long k)
{
	for (long i = 0; i < 100; i++)
		a[i] = i * k;
}

__attribute__((noinline)) void bump(void)
{
	for (long i = 0; i < 100; i++)
		a[i] += 1;
}

__attribute__((noinline)) long sum(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += b[i];
	return s;
}

int main(int argc, char **argv)
{
	char dyn[16];
	(void)argv;
	snprintf(dyn, sizeof dyn, "d%d", argc);
	skel_roi_begin("fill");
	fill(3);
	skel_roi_end();
	skel_roi_begin("sum");
	long s = sum(50);
	skel_roi_end();
	skel_roi_begin("fill");
	bump();
	skel_roi_end();
	skel_roi_begin(dyn);
	s += sum(10);
	skel_roi_end();
	printf("%ld %ld\n", s + a[99], b[0]);
	return 0;
}
