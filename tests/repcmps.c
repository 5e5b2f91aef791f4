/* repcmps: repe cmpsb in a loop, each call stopping at a different byte;
 * the skeleton repeats it rcx - rcx_after times and must read rcx_after
 * before the accesses (it used the previous call's value: make -n replayed
 * forever). */
#include <stdio.h>
#include <string.h>
char a[4096], b[4096];
__attribute__((noinline)) int cmp(const char *x, const char *y, unsigned long n) {
	unsigned char r;
	__asm__ volatile("repe cmpsb\n\tsetne %0" : "=r"(r), "+S"(x), "+D"(y), "+c"(n) : : "memory", "cc");
	return r;
}
int main(void) {
	int s = 0;
	for (int i = 0; i < 200; i++) { memset(a, 'x', 4096); memset(b, 'x', 4096); b[(i * 37) % 4096] = 'y'; s += cmp(a, b, 4096 - i); }
	printf("%d\n", s);
	return 0;
}
