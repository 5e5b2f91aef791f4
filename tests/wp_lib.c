/* wp_lib.c — a tiny shared library for test_recorder's whole-process
 * tests (built with gcc -shared -fPIC at test time).  wp_sum is written in
 * assembly so that the test knows its instructions: the patch puts an
 * entry `word` probe at wp_sum and a `reg after rax` probe at wp_sum_add,
 * one basic block [wp_sum, wp_sum_end). */
__asm__(".text\n"
	".globl wp_sum\n"
	".type wp_sum, @function\n"
	"wp_sum:\n"
	"	mov %rdi, %rax\n"
	".globl wp_sum_add\n"
	"wp_sum_add:\n"
	"	add %rsi, %rax\n"
	"	lea 1(%rax), %rax\n"
	"	ret\n"
	".globl wp_sum_end\n"
	"wp_sum_end:\n"
	".size wp_sum, .-wp_sum\n");
