/* tests/jtread.sh: two byte-code loops that dispatch through a jump
 * table, as gcc compiles a switch.  ro_loop's table is in .rodata: the
 * skeleton reads the destination from the table, at the address the
 * table's load computes from the byte (recorded anyway), and records no
 * word for the jump.  rw_loop's table is in .data, which the program may
 * change: its destination stays recorded.  With NOPIE, abs_loop jumps
 * through an absolute table in .rodata (jmp *table(,%rax,8)), read too,
 * and spill_loop loads from one into a register it spills and reloads
 * before the jump: recorded.
 * main runs each loop over the same 64 bytes of code 0..4 (4 takes the
 * bound check's way, past the table). */
	.text
	.globl	main
	.type	main, @function
main:
	push	%rbx
	lea	code(%rip), %rdi
	mov	$64, %esi
	call	ro_loop
	lea	code(%rip), %rdi
	mov	$64, %esi
	call	rw_loop
#ifdef NOPIE
	lea	code(%rip), %rdi
	mov	$64, %esi
	call	abs_loop
	lea	code(%rip), %rdi
	mov	$64, %esi
	call	spill_loop
#endif
	xor	%eax, %eax
	pop	%rbx
	ret
	.size	main, .-main

/* ro_loop(const uint8_t *code, long n): per byte, the case adds to one
 * of four counters */
	.type	ro_loop, @function
ro_loop:
	xor	%eax, %eax
	lea	ro_table(%rip), %r8
	lea	counts(%rip), %r9
1:	cmpb	$3, (%rdi,%rax)
	ja	6f
	movzbl	(%rdi,%rax), %edx
	movslq	(%r8,%rdx,4), %rdx
	add	%r8, %rdx
	jmp	*%rdx
ro_c0:	addq	$1, (%r9)
	jmp	6f
ro_c1:	addq	$2, 8(%r9)
	jmp	6f
ro_c2:	addq	$3, 16(%r9)
	jmp	6f
ro_c3:	addq	$4, 24(%r9)
6:	add	$1, %rax
	cmp	%rsi, %rax
	jne	1b
	ret
	.size	ro_loop, .-ro_loop

	.type	rw_loop, @function
rw_loop:
	xor	%eax, %eax
	lea	rw_table(%rip), %r8
	lea	counts(%rip), %r9
1:	cmpb	$3, (%rdi,%rax)
	ja	6f
	movzbl	(%rdi,%rax), %edx
	movslq	(%r8,%rdx,4), %rdx
	add	%r8, %rdx
	jmp	*%rdx
rw_c0:	addq	$1, (%r9)
	jmp	6f
rw_c1:	addq	$2, 8(%r9)
	jmp	6f
rw_c2:	addq	$3, 16(%r9)
	jmp	6f
rw_c3:	addq	$4, 24(%r9)
6:	add	$1, %rax
	cmp	%rsi, %rax
	jne	1b
	ret
	.size	rw_loop, .-rw_loop

#ifdef NOPIE
	.type	abs_loop, @function
abs_loop:
	xor	%eax, %eax
	lea	counts(%rip), %r9
1:	cmpb	$3, (%rdi,%rax)
	ja	6f
	movzbl	(%rdi,%rax), %edx
	jmp	*abs_table(,%rdx,8)
abs_c0:	addq	$1, (%r9)
	jmp	6f
abs_c1:	addq	$2, 8(%r9)
	jmp	6f
abs_c2:	addq	$3, 16(%r9)
	jmp	6f
abs_c3:	addq	$4, 24(%r9)
6:	add	$1, %rax
	cmp	%rsi, %rax
	jne	1b
	ret
	.size	abs_loop, .-abs_loop

/* the entry loaded, spilled to the stack and loaded back before the
 * jump: the jump's register is the reload, not the table's load, so
 * the destination stays recorded (the reload's address is no entry's) */
	.type	spill_loop, @function
spill_loop:
	xor	%eax, %eax
	lea	counts(%rip), %r9
1:	cmpb	$3, (%rdi,%rax)
	ja	6f
	movzbl	(%rdi,%rax), %edx
	mov	sp_table(,%rdx,8), %rdx
	mov	%rdx, -8(%rsp)
	mov	-8(%rsp), %rdx
	jmp	*%rdx
sp_c0:	addq	$1, (%r9)
	jmp	6f
sp_c1:	addq	$2, 8(%r9)
	jmp	6f
sp_c2:	addq	$3, 16(%r9)
	jmp	6f
sp_c3:	addq	$4, 24(%r9)
6:	add	$1, %rax
	cmp	%rsi, %rax
	jne	1b
	ret
	.size	spill_loop, .-spill_loop
#endif

	.section .rodata
	.align 4
ro_table:
	.long	ro_c0 - ro_table
	.long	ro_c1 - ro_table
	.long	ro_c2 - ro_table
	.long	ro_c3 - ro_table
#ifdef NOPIE
	.align 8
abs_table:
	.quad	abs_c0, abs_c1, abs_c2, abs_c3
sp_table:
	.quad	sp_c0, sp_c1, sp_c2, sp_c3
#endif
code:
	.byte	0, 1, 2, 3, 4, 3, 2, 1, 0, 0, 1, 1, 2, 2, 3, 3
	.byte	4, 4, 0, 3, 1, 2, 0, 3, 2, 1, 4, 0, 1, 2, 3, 0
	.byte	3, 3, 3, 0, 0, 0, 1, 4, 2, 1, 0, 3, 2, 2, 1, 0
	.byte	1, 0, 3, 2, 4, 1, 0, 2, 3, 1, 2, 0, 0, 3, 1, 2

	.data
	.align 4
rw_table:
	.long	rw_c0 - rw_table
	.long	rw_c1 - rw_table
	.long	rw_c2 - rw_table
	.long	rw_c3 - rw_table
counts:
	.quad	0, 0, 0, 0
	.section .note.GNU-stack,"",@progbits
