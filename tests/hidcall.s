# A call to puts@PLT from code no analysis reaches (entered by a computed
# pointer): tests/whole.sh checks that skel gen links putchar's PLT slot but
# not puts's (a quiet entry there would shift the replay's stream).
	.intel_syntax noprefix
	.text
	.globl main
	.type main, @function
main:
	push rbx
	mov edi, 65
	call putchar@PLT
	lea rdi, [rip + msg]
	call puts@PLT
	lea rax, [rip + .Lhidden - 16]
	add rax, 16
	call rax
	xor eax, eax
	pop rbx
	ret
	.size main, .-main
	.fill 16, 1, 0xcc
.Lhidden:
	sub rsp, 8
	lea rdi, [rip + msg]
	call puts@PLT
	add rsp, 8
	ret
	.section .rodata
msg:	.asciz "hi"
	.section .note.GNU-stack,"",@progbits
