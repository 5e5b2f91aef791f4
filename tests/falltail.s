# f's conditional jump falls into the next routine, g, which tail-jumps
# out of the executable to qsort, whose comparator is the executable's:
# control comes back from main's call of f through qsort's ret
# (tests/falltail.sh).
	.text
	.globl main
	.type main, @function
main:
	push %rbx
	mov $5, %ebx
1:	mov %ebx, %edi
	call f
	addl %ebx, buf+12(%rip)
	dec %ebx
	jnz 1b
	xor %eax, %eax
	pop %rbx
	ret
	.size main, .-main

	.type f, @function
f:
	jmp 2f
3:	movl %edi, buf+4(%rip)
	ret
2:	movl %edi, buf(%rip)
	testl $1, %edi
	jnz 3b
	.size f, .-f

	.type g, @function
g:
	movl %edi, buf+8(%rip)
	lea arr(%rip), %rdi
	mov $4, %esi
	mov $4, %edx
	lea cmp(%rip), %rcx
	jmp qsort@PLT
	.size g, .-g

	.type cmp, @function
cmp:
	mov (%rdi), %eax
	sub (%rsi), %eax
	ret
	.size cmp, .-cmp

	.data
buf:	.long 0, 0, 0, 0
arr:	.long 4, 3, 2, 1
	.section .note.GNU-stack,"",@progbits
