/* bjmp: __builtin_setjmp/__builtin_longjmp out of a recursion: no libc
 * call, an indirect jump after rsp is loaded from the buffer.  skel does
 * not follow it: skel gen warns, and the replay must stop at the first
 * one, say so, and have emitted nothing wrong before it. */
#include <stdio.h>

static void *jb[5];
static int data[4096];
static int depth_hit;

__attribute__((noinline)) static int dive(int d, int lim)
{
	data[(d * 37) & 4095] += d;
	if (d == lim) {
		depth_hit += d;
		__builtin_longjmp(jb, 1);
	}
	return dive(d + 1, lim) + data[d & 4095];
}

__attribute__((noinline)) static int attempt(int lim)
{
	if (__builtin_setjmp(jb) == 0)
		return dive(0, lim);
	return -1;
}

int main(void)
{
	long s = 0;
	for (int r = 0; r < 50; r++) {
		s += attempt(5 + r % 20);
		for (int i = 0; i < 4096; i += 7)
			s += data[i];
	}
	printf("s=%ld hit=%d\n", s, depth_hit);
	return 0;
}
