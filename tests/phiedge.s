# A loop whose pointer is known on two of the three ways into its header
# (it starts at a constant, steps by one) and loaded on the third (a jump
# to the next string at each "/"): the pointer is recorded where it is
# loaded, not at the header every iteration (skelgen.c, plan_phi_edges;
# tests/phiedge.sh).
	.text
	.globl main
	.type main, @function
main:
	push %rbx
	push %r12
	lea text(%rip), %rbx
	lea ptrs(%rip), %r12
	xor %ecx, %ecx
.Lloop:
	movzbl (%rbx), %eax
	test %al, %al
	jz .Ldone
	cmp $0x2f, %al
	je .Ljump
	add %eax, %ecx
	add $1, %rbx
	jmp .Lloop
.Ljump:
	mov (%r12), %rbx
	add $8, %r12
	jmp .Lloop
.Ldone:
	mov %ecx, sum(%rip)
	xor %eax, %eax
	pop %r12
	pop %rbx
	ret
	.size main, .-main

	.data
text:	.ascii "abcdefghij/"
t2:	.ascii "klmnopqrstuvwxyz/"
t3:	.asciz "0123456789"
	.balign 8
ptrs:	.quad t2, t3
sum:	.long 0
	.section .note.GNU-stack,"",@progbits
