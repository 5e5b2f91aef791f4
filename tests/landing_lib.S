/* tests/landing_lib.S — the shape of glibc's mempcpy and memmove, for
 * tests/landing.sh: lb_copy_end jumps into lb_copy right after its first
 * instruction, so lb_copy's entry block is 3 bytes long and a branch
 * target ends it.  The recorder must give it a jump-patched span across
 * that target (no int3, no signal per call), and send lb_copy_end's jump
 * into the trampoline; lb_copy_odd's jumps there are in blocks with no
 * probe: each becomes a site of its own. */
	.text
	.globl	lb_copy_end
	.type	lb_copy_end, @function
	.p2align 4
lb_copy_end:			/* lb_copy_end(dst, src, n): dst + n */
	mov	%rdi, %rax
	add	%rdx, %rax
	jmp	.Lbody
	.size	lb_copy_end, .-lb_copy_end

	.globl	lb_copy_odd
	.type	lb_copy_odd, @function
	.p2align 4
lb_copy_odd:			/* lb_copy_odd(dst, src, n): dst + (n & 1) */
	test	$1, %dl
	jne	.Lodd
	mov	%rdi, %rax
	jmp	.Lbody
.Lodd:
	lea	1(%rdi), %rax
	jmp	.Lbody
	.size	lb_copy_odd, .-lb_copy_odd

	.globl	lb_copy
	.type	lb_copy, @function
	.p2align 4
lb_copy:			/* lb_copy(dst, src, n): dst; n <= 32 */
	mov	%rdi, %rax
.Lbody:
	cmp	$16, %rdx
	jb	.Lsmall
	movdqu	(%rsi), %xmm0
	movdqu	-16(%rsi,%rdx), %xmm1
	movdqu	%xmm0, (%rdi)
	movdqu	%xmm1, -16(%rdi,%rdx)
	ret
.Lsmall:
	test	%rdx, %rdx
	je	.Lret
.Lloop:
	movzbl	-1(%rsi,%rdx), %ecx
	movb	%cl, -1(%rdi,%rdx)
	dec	%rdx
	jne	.Lloop
.Lret:
	ret
	.size	lb_copy, .-lb_copy


	.globl	lb_walk
	.type	lb_walk, @function
	.p2align 4
lb_walk:			/* lb_walk(pp): the last node of the list at *pp (next at +0x2f8), 0 if none */
	push	%rbx
	mov	(%rdi), %rbx
	xor	%eax, %eax
	test	%rbx, %rbx
	jne	.Lfirst
	jmp	3f
.Lfirst:
	mov	%rbx, %rax
	nop
.Lwalk:
	mov	%rax, %rcx
	mov	0x2f8(%rax), %rax
	test	%rax, %rax
	jne	.Lwalk
	mov	%rcx, %rax
3:	pop	%rbx
	ret
	.size	lb_walk, .-lb_walk

	.section .note.GNU-stack,"",@progbits
