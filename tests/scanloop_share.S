/* share2(a, b): the length of a plus that of b, or -1 if either holds a
 * '#' (tests/scanloop.c, mode share).  Written by hand: two scan loops
 * whose early exits jump to one block, which gcc does not emit for C
 * (it gives each loop an exit block of its own). */
	.text
	.globl	share2
	.type	share2, @function
share2:
	.cfi_startproc
	mov	%rdi, %rax
1:	movzbl	(%rax), %edx
	test	%dl, %dl
	je	2f
	cmp	$0x23, %dl
	je	9f
	add	$1, %rax
	jmp	1b
2:	mov	%rsi, %rcx
3:	movzbl	(%rcx), %edx
	test	%dl, %dl
	je	4f
	cmp	$0x23, %dl
	je	9f
	add	$1, %rcx
	jmp	3b
4:	sub	%rdi, %rax
	sub	%rsi, %rcx
	add	%rcx, %rax
	ret
9:	mov	$-1, %rax
	ret
	.cfi_endproc
	.size	share2, .-share2
	.section	.note.GNU-stack,"",@progbits
