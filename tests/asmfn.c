/* asmfn: a function in assembly with neither symbol nor CFI (a local
 * label), whose address a lea takes and which is called through a
 * pointer, as zstd calls its Huffman decoding loops in a stripped binary.
 * The analysis must make it a routine: else its accesses were missing
 * from the trace (the call looked like one into a library). */
#include <stdio.h>

long buf[512];

/* rdi: array, rsi: count (> 0); adds each entry into the next one, and
 * returns the last */
__asm__(".text\n"
	".Lscan:\n"
	"	mov (%rdi), %rax\n"
	"1:	add 8(%rdi), %rax\n"
	"	mov %rax, 8(%rdi)\n"
	"	add $8, %rdi\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"	ret\n");

typedef long scan_fn(long *, long);

__attribute__((noinline)) static scan_fn *pick(void)
{
	scan_fn *f;
	__asm__("lea .Lscan(%%rip), %0" : "=r"(f));
	return f;
}

int main(void)
{
	for (int i = 0; i < 512; i++)
		buf[i] = i % 7;
	scan_fn *f = pick();
	long s = 0;
	for (long n = 1; n < 500; n += 37)
		s += f(buf, n);
	printf("%ld\n", s);
	return 0;
}
