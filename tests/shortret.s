# A call's return site too short for the recorder's jmp rel32: `call
# strlen; lea 1(%rax), %r12` (4 bytes), then a join that a jump over the
# call also reaches (grep's `call memrchr; lea 0x1(%rax), %r15`).  The
# RETURNED word is read where the join starts (skelgen.c, returned_site),
# not trapped on at every return (tests/shortret.sh).
	.text
	.globl main
	.type main, @function
main:
	push %rbx
	push %r12
	push %r13
	mov $7, %ebx
	xor %r12d, %r12d
.Lloop:
	lea str(%rip), %rdi
	testl $1, %ebx
	jz shortret_join
	call strlen@PLT
	lea 1(%rax), %r12
	.globl shortret_join
shortret_join:
	movl %ebx, buf(%rip)
	lea buf(%rip), %r13
	movl %r12d, 4(%r13)
	dec %ebx
	jnz .Lloop
	xor %eax, %eax
	pop %r13
	pop %r12
	pop %rbx
	ret
	.size main, .-main

	.data
str:	.asciz "a string of some length"
buf:	.long 0, 0
	.section .note.GNU-stack,"",@progbits
