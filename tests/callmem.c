/* An indirect call through memory that starts its block, with a value
 * recorded right before it (du's fts walk: `call *0x40(%r12)` reached by
 * a jump and by the loop): the recorder runs the call in a trampoline
 * (push the return address, jmp [mem]), so valgrind sees the store
 * before the load; skel check puts them back in the processor's order. */
#include <stdio.h>
#include <stdlib.h>

struct node {
	long v;
	struct node *next;
};

struct ops {
	long pad[8];
	void (*visit)(long);
};

static long sum;

__attribute__((noinline)) static void visit(long v) { sum += v; }

/* walk(list, ops): the loop rotated as gcc does, the call its own block */
void walk(struct node *n, const struct ops *o);
__asm__(".text\n.globl walk\n.type walk, @function\nwalk:\n"
	"	push %r12\n	push %rbx\n	sub $8, %rsp\n"
	"	mov %rdi, %rbx\n	mov %rsi, %r12\n"
	"	test %rbx, %rbx\n	je 3f\n"
	"	mov (%rbx), %rdi\n	jmp 2f\n"
	"1:	mov (%rbx), %rdi\n"
	"2:	call *0x40(%r12)\n"
	"	mov 8(%rbx), %rbx\n	test %rbx, %rbx\n	jne 1b\n"
	"3:	add $8, %rsp\n	pop %rbx\n	pop %r12\n	ret\n"
	".size walk, .-walk\n");

int main(void)
{
	static struct ops o = { .visit = visit };
	struct node *head = NULL;
	for (long i = 0; i < 50; i++) {
		struct node *n = malloc(sizeof *n);
		n->v = i * 3;
		n->next = head;
		head = n;
	}
	walk(head, &o);
	printf("%ld\n", sum);
	return 0;
}
