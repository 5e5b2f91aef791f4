/* loopcc: loopne and loope whose ZF comes from loaded data, so the
 * skeleton cannot compute their outcome and the recorder must record it
 * (the loop* instructions only branch by rel8, and decrement rcx). */
#include <stdio.h>

int data[1000];

/* the index of the first zero in data[0..n), scanning with loopne */
__attribute__((noinline)) static long first_zero(long n)
{
	long left;
	__asm__ volatile(
		"lea data(%%rip), %%rsi\n\t"
		"1: mov (%%rsi), %%eax\n\t"
		"add $4, %%rsi\n\t"
		"test %%eax, %%eax\n\t"
		"loopne 1b\n\t"
		: "=c"(left) : "0"(n) : "rax", "rsi", "memory", "cc");
	return n - left;
}

/* how many equal entries data[k..] starts with, scanning with loope */
__attribute__((noinline)) static long run_from(long k, long n)
{
	long left;
	__asm__ volatile(
		"lea data(%%rip), %%rsi\n\t"
		"lea (%%rsi,%2,4), %%rsi\n\t"
		"mov (%%rsi), %%edx\n\t"
		"1: mov (%%rsi), %%eax\n\t"
		"add $4, %%rsi\n\t"
		"cmp %%edx, %%eax\n\t"
		"loope 1b\n\t"
		: "=c"(left) : "0"(n - k), "r"(k) : "rax", "rdx", "rsi", "memory", "cc");
	return n - k - left;
}

int main(void)
{
	unsigned x = 7;
	for (int i = 0; i < 1000; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (x >> 16) % 5 == 0 ? 0 : (int)((x >> 20) % 3) + 1;
	}
	long s = 0;
	for (long n = 10; n <= 1000; n += 10)
		s += first_zero(n);
	for (long k = 0; k < 990; k += 7)
		s += run_from(k, 1000);
	printf("%ld\n", s);
	return 0;
}
