/* icall: an indirect call to a function with neither symbol nor CFI whose
 * address no instruction or data word holds (it is computed at run time:
 * another such function's address plus a multiple of 64).  The analysis
 * cannot find it, so `skel summary` reports code outside every known
 * function, and the skeleton checks the destination of each indirect call:
 * the first replay stops with a clear message instead of silently losing
 * the hidden function's accesses, the target is noted, and the next
 * analysis makes it a routine. */
#include <stdio.h>
#include <stdlib.h>

long buf[64];

/* rdi: array; adds 1 (first) or 2 (hidden) to its first 8 entries */
__asm__(".text\n"
	".p2align 6\n"
	".Lfirst:\n"
	"	mov $8, %ecx\n"
	"1:	addq $1, (%rdi)\n"
	"	add $8, %rdi\n"
	"	dec %ecx\n"
	"	jnz 1b\n"
	"	ret\n"
	".p2align 6\n"
	".Lhidden:\n"
	"	mov $8, %ecx\n"
	"1:	addq $2, (%rdi)\n"
	"	add $8, %rdi\n"
	"	dec %ecx\n"
	"	jnz 1b\n"
	"	ret\n");

typedef void fn(long *);

__attribute__((noinline)) static fn *pick(long k)
{
	fn *f;
	__asm__("lea .Lfirst(%%rip), %0\n\t"
		"imul $64, %1, %%rcx\n\t"
		"add %%rcx, %0" : "=&r"(f) : "r"(k) : "rcx");
	return f;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < n; i++)
		pick(i & 1)(buf + 8 * (i % 8));
	long s = 0;
	for (int i = 0; i < 64; i++)
		s += buf[i] * (i + 1);
	printf("%ld\n", s);
	return 0;
}
