/* Code the analysis decodes in more than one routine, and a code address
 * in data that points into the middle of an instruction.
 *
 * chase_a and chase_b both jump into one loop (the tail of chase_b): the
 * loop is a block of both routines.  chase_a's trip count is loaded, so
 * its replay needs the count recorded at the loop; chase_b's is its
 * argument.  The recorder writes one word per probe line, so the two
 * routines must share one set of probes there and each skeleton must
 * read all of them (glibc's memmove variants share their loops like
 * this; python3's eval loop its cold parts).
 *
 * bump jumps through a pointer loaded from memory (not resolvable): its
 * code is found only from code addresses in data.  `bump_bad`, found
 * first, points two bytes into `mov [rdi+0x34], ax`: decoded from there
 * it overlaps the real instructions (`xor al, 0x66`, then half of
 * `test ax, ax`) and must be rejected as a target, not allowed to cut
 * the real block short (python3's eval loop has such a word). */
#include <stdio.h>
#include <stdlib.h>

long chase_a(long *p, long *count);
long chase_b(long *p, long n);
long bump(char *obj, long k);

__asm__(
	".text\n"
	".globl chase_a\n"
	".type chase_a, @function\n"
	"chase_a:\n"
	".cfi_startproc\n"
	"	mov (%rsi), %rsi\n"
	"	mov %rdi, %rax\n"
	"	jmp .Lchase_loop\n"
	".cfi_endproc\n"
	".size chase_a, .-chase_a\n"
	".globl chase_b\n"
	".type chase_b, @function\n"
	"chase_b:\n"
	".cfi_startproc\n"
	"	mov %rdi, %rax\n"
	"	add $1, %rsi\n"
	".Lchase_loop:\n"
	"	mov (%rax), %rax\n"
	"	sub $1, %rsi\n"
	"	jg .Lchase_loop\n"
	"	mov 8(%rax), %rax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size chase_b, .-chase_b\n"
	".globl bump\n"
	".type bump, @function\n"
	"bump:\n"
	".cfi_startproc\n"
	"	mov bump_next(%rip), %rdx\n"
	"	jmp *%rdx\n"
	".Lbump_case:\n"
	"	movzwl 0x34(%rdi), %eax\n"
	"	add $1, %eax\n"
	".Lbump_store:\n"
	"	mov %ax, 0x34(%rdi)\n"
	"	test %ax, %ax\n"
	"	je .Lbump_zero\n"
	".Lbump_done:\n"
	"	mov 0x34(%rdi), %ax\n"
	"	add %rsi, %rax\n"
	"	ret\n"
	".Lbump_zero:\n"
	"	movq $7, 0x38(%rdi)\n"
	"	jmp .Lbump_done\n"
	".cfi_endproc\n"
	".size bump, .-bump\n"
	".data\n"
	".align 8\n"
	"bump_bad: .quad .Lbump_store + 2\n"
	"bump_next: .quad .Lbump_case\n"
	".text\n");

int main(int argc, char **argv)
{
	enum { N = 64 };
	long *node = calloc(2 * N, sizeof *node);
	long sum = 0, count;
	char *obj = calloc(1, 64);
	for (int i = 0; i < N; i++) {	/* one cycle through the nodes */
		node[2 * i] = (long)&node[2 * ((i * 5 + 1) % N)];
		node[2 * i + 1] = i * 3;
	}
	for (int r = 0; r < 40 + argc; r++) {
		count = r % 9;
		sum += chase_a(&node[2 * (r % N)], &count);
		sum += chase_b(&node[2 * ((r * 7) % N)], r % 5);
		*(unsigned short *)(obj + 0x34) = (unsigned short)(r == 20 ? 0xffff : r);
		sum += bump(obj, r);
	}
	printf("%ld %ld\n", sum, *(long *)(obj + 0x38));
	free(node);
	free(obj);
	return 0;
}
