/* longjmp: non-local control the skeleton must follow (issue 13).
 *   loop     a longjmp out of a loop nest, two calls deep, back to a
 *            setjmp in main; the loop nest runs again after it
 *   nested   two setjmp frames live at once (an outer and an inner
 *            function); longjmps to the inner one, then to the outer one
 *            past the inner frame
 *   recurse  a recursive function with a setjmp in each frame, longjmp
 *            from the deepest to a middle frame, which then returns
 *   sig      sigsetjmp/siglongjmp with the signal mask saved
 *   again    setjmp in a loop: each iteration sets it again and a callee
 *            longjmps back every other time
 * Each prints a checksum; every access goes through arrays so the trace
 * is not trivial. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long grid[64][64];
static jmp_buf outer, inner;
static sigjmp_buf sjb;
static jmp_buf frames[16];

__attribute__((noinline)) static void deep(int i, int j, int stop)
{
	grid[i][j] += i * j;
	if (i * 64 + j == stop)
		longjmp(outer, 7);
}

__attribute__((noinline)) static void row(int i, int stop)
{
	for (int j = 0; j < 64; j++)
		deep(i, j, stop);
}

static int case_loop(int n)
{
	volatile int rounds = 0;
	int r = setjmp(outer);
	rounds++;
	if (rounds <= n) {
		for (int i = 0; i < 64; i++)
			row(i, r ? 64 * 64 - r : 64 * (10 + rounds) + rounds);
	}
	long s = 0;
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < 64; j++)
			s += grid[i][j];
	printf("loop %d %ld\n", rounds, s);
	return 0;
}

__attribute__((noinline)) static int in_fn(int k)
{
	if (setjmp(inner) == 0) {
		for (int i = 0; i < 8; i++) {
			grid[k][i] = i;
			if (i == 5)
				longjmp(inner, 1);
		}
	}
	grid[k][63] += 3;
	if (k == 2)
		longjmp(outer, 2);
	return (int)grid[k][63];
}

static int case_nested(void)
{
	volatile int seen = 0;
	if (setjmp(outer) == 0) {
		for (int k = 0; k < 4; k++)
			seen += in_fn(k);
	}
	printf("nested %d %ld\n", seen, grid[2][63]);
	return 0;
}

__attribute__((noinline)) static long rec(int d, int target)
{
	long local[4] = { d, d * 2, d * 3, d * 4 };
	if (setjmp(frames[d]) != 0) {
		grid[d][1] += local[1];
		return local[2];
	}
	if (d == 9)
		longjmp(frames[target], 1);
	long v = rec(d + 1, target);
	grid[d][2] += v + local[3];
	return v + local[0];
}

static int case_recurse(void)
{
	long v = rec(0, 4);
	printf("recurse %ld %ld %ld\n", v, grid[4][1], grid[3][2]);
	return 0;
}

static int case_sig(void)
{
	volatile int n = 0;
	if (sigsetjmp(sjb, 1) < 3) {
		grid[n][n] += n;
		n++;
		siglongjmp(sjb, n);
	}
	printf("sig %d %ld\n", n, grid[2][2]);
	return 0;
}

__attribute__((noinline)) static void maybe(int i)
{
	grid[i & 63][7] += i;
	if (i & 1)
		longjmp(outer, i);
}

static int case_again(int n)
{
	volatile long s = 0;
	for (volatile int i = 0; i < n; i++) {
		if (setjmp(outer) == 0)
			maybe(i);
		else
			s += grid[i & 63][7];
	}
	printf("again %ld\n", (long)s);
	return 0;
}

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "loop";
	int n = argc > 2 ? atoi(argv[2]) : 3;
	if (!strcmp(w, "loop"))
		return case_loop(n);
	if (!strcmp(w, "nested"))
		return case_nested();
	if (!strcmp(w, "recurse"))
		return case_recurse();
	if (!strcmp(w, "sig"))
		return case_sig();
	if (!strcmp(w, "again"))
		return case_again(n);
	fprintf(stderr, "usage: longjmp loop|nested|recurse|sig|again [N]\n");
	return 2;
}
