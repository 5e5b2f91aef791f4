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
	# the same with a register an address needs, known on the jump's
	# way (0) and not on the call's (`mov %rax, %r12`, 3 bytes): its
	# value may not be recorded between the return and the word
	mov $7, %ebx
.Lloop2:
	lea str(%rip), %rdi
	xor %r12d, %r12d
	testl $1, %ebx
	jz shortret_join2
	call strlen@PLT
	mov %rax, %r12
	.globl shortret_join2
shortret_join2:
	lea big(%rip), %r13
	movl %ebx, (%r13,%r12,4)
	dec %ebx
	jnz .Lloop2
	xor %eax, %eax
	pop %r13
	pop %r12
	pop %rbx
	ret
	.size main, .-main

	.data
str:	.asciz "a string of some length"
buf:	.long 0, 0
big:	.space 128
	.section .note.GNU-stack,"",@progbits
