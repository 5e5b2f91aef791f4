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

/* tally(s): a scan to the NUL that adds 1 for each byte up to 0x60 and 2
 * for each above (tests/scanloop.c, mode tally).  Both ways of that jump
 * go straight back to the loop's header, with no access on either: the
 * jump is not replayed (a way may end at a header it enters as the other
 * does), and the loop then records its exit once. */
	.globl	tally
	.type	tally, @function
tally:
	.cfi_startproc
	xor	%eax, %eax
1:	movzbl	(%rdi), %edx
	test	%edx, %edx
	je	3f
	add	$1, %rdi
	cmp	$0x60, %edx
	ja	2f
	add	$1, %rax
	jmp	1b
2:	add	$2, %rax
	jmp	1b
3:	ret
	.cfi_endproc
	.size	tally, .-tally
	.section	.note.GNU-stack,"",@progbits
