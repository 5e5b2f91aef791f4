/* ijump: an indirect jump whose target is computed at run time (the
 * address of one case plus a multiple of 16), so no static analysis finds
 * the second case.  The first run of skel follows the recorded target into
 * code it does not know and stops; the target is noted, and the next
 * analysis of the binary includes it. */
#include <stdio.h>
#include <stdlib.h>

int counter[4];

__attribute__((noinline)) static void pick(long k)
{
	__asm__ volatile(
		"lea 1f(%%rip), %%rax\n\t"
		"imul $16, %0, %%rcx\n\t"
		"add %%rcx, %%rax\n\t"
		"jmp *%%rax\n\t"
		".p2align 4\n"
		"1: addl $1, counter(%%rip)\n\t"
		"jmp 3f\n\t"
		".p2align 4\n"
		"2: addl $2, counter+4(%%rip)\n\t"
		"jmp 3f\n\t"
		".p2align 4\n"
		"3:\n"
		: : "r"(k) : "rax", "rcx", "memory", "cc");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < n; i++)
		pick(i & 1);
	printf("%d %d\n", counter[0], counter[1]);
	return 0;
}
