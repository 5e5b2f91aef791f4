/* movsptr: single (not rep) movs whose rsi and rdi come from pointers
 * loaded from memory, so the recorder must record both addresses.  It numbers the two hidden operands in Zydis's order
 * ([rdi] first for movs), the analysis in access order ([rsi] first):
 * perl's sort (a movsq loop) replayed its reads at the writes' addresses. */
#include <stdio.h>
#include <stdlib.h>
#define N 64
static long *src[N], *dst[N];
__attribute__((noinline)) static void copy(long *d, const long *s, int n)
{
	for (int i = 0; i < n; i++)
		__asm__ volatile("movsq" : "+S"(s), "+D"(d) : : "memory");
}
/* one movsq per pointer pair, in a loop entered in its middle too: an
 * irreducible loop, whose addresses skel records directly (daddr) */
__attribute__((noinline)) static void gather(long **d, long **s, int n, int mid)
{
	int i = 0;
	if (mid)
		goto half;
	for (; i < n; i++) {
		long *x = d[i], *y = s[(i * 7) % N];
		__asm__ volatile("movsq" : "+S"(y), "+D"(x) : : "memory");
	half:
		if (d[i][0] & 1)
			i++;
	}
}
__attribute__((noinline)) static void copyn(long *d, const long *s, unsigned long n)
{
	__asm__ volatile("rep movsq" : "+S"(s), "+D"(d), "+c"(n) : : "memory");
}
__attribute__((noinline)) static void copy1(char *d, const char *s)
{
	__asm__ volatile("movsb\n\tmovsw\n\tmovsl" : "+S"(s), "+D"(d) : : "memory");
}
int main(void)
{
	long sum = 0;
	for (int i = 0; i < N; i++) {
		src[i] = malloc(sizeof(long) * (1 + i % 7));
		dst[(i * 29) % N] = malloc(sizeof(long) * 8);
		for (int j = 0; j < 1 + i % 7; j++)
			src[i][j] = i * 100 + j;
	}
	for (int i = 0; i < N; i++) {
		copy(dst[i], src[(i * 13) % N], 1 + (i * 13) % N % 7);
		sum += dst[i][0];
		copy1((char *)dst[i] + 8, (const char *)src[(i * 3) % N]);
		sum += dst[i][1];
		copyn(dst[i] + 2, src[(i * 11) % N], 1 + (i * 11) % N % 7);
		sum += dst[i][2];
	}
	gather(dst, src, N, 0);
	gather(dst, src, N, 1);
	for (int i = 0; i < N; i++)
		sum += dst[i][0];
	printf("%ld\n", sum);
	return 0;
}
