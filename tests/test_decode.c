/* Tests of the instruction record: control kinds, registers, and every data
 * access with kind, size and address form, implicit ones included.  Each
 * byte sequence has its assembly beside it. */
#include "tests/testutil.h"
#include "analyzer/analyzer.h"

static insn dec(const uint8_t *b, size_t n)
{
	insn in;
	assert_int_equal(decode_insn(b, n, 0x401000, &in), 0);
	assert_int_equal(in.len, n);
	return in;
}

#define DEC(...) ({ static const uint8_t b_[] = { __VA_ARGS__ }; dec(b_, sizeof b_); })

static void expect_mem(const insn *in, unsigned k, unsigned kind, unsigned size,
		       unsigned base, unsigned index, unsigned scale, int64_t disp)
{
	assert_true(k < in->nmem);
	const mem_access *m = &in->mem[k];
	assert_int_equal(m->kind, kind);
	assert_int_equal(m->size, size);
	assert_int_equal(m->base, base);
	assert_int_equal(m->index, index);
	if (index != R_NONE)
		assert_int_equal(m->scale, scale);
	assert_int_equal(m->disp, disp);
}

static void test_push_pop_write_and_read_the_stack(void **state)
{
	(void)state;
	insn in = DEC(0x53); /* push rbx */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_true(in.mem[0].flags & MEM_IMPLICIT);
	assert_true(in.reads & REG_BIT(R_BX));
	assert_true(in.writes & REG_BIT(R_SP));
	in = DEC(0x5d); /* pop rbp */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	assert_true(in.writes & REG_BIT(R_BP));
	in = DEC(0xff, 0x30); /* push qword [rax] */
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_R, 8, R_AX, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_W, 8, R_SP, R_NONE, 1, -8);
}

static void test_call_ret_leave_implicit_accesses(void **state)
{
	(void)state;
	insn in = DEC(0xe8, 0x10, 0x00, 0x00, 0x00); /* call 0x401015 */
	assert_int_equal(in.flow, FLOW_CALL);
	assert_int_equal(in.target, 0x401015);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	in = DEC(0xff, 0x15, 0x00, 0x10, 0x00, 0x00); /* call [rip+0x1000] */
	assert_int_equal(in.flow, FLOW_ICALL);
	assert_int_equal(in.nmem, 2);
	assert_int_equal(in.mem[0].kind, ACC_R);
	assert_true(in.mem[0].flags & MEM_RIPREL);
	assert_int_equal(in.mem[0].disp, 0x401000 + 6 + 0x1000);
	expect_mem(&in, 1, ACC_W, 8, R_SP, R_NONE, 1, -8);
	in = DEC(0xc3); /* ret */
	assert_int_equal(in.flow, FLOW_RET);
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	in = DEC(0xc9); /* leave */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_BP, R_NONE, 1, 0);
	assert_true(in.writes & REG_BIT(R_SP));
	assert_true(in.writes & REG_BIT(R_BP));
}

static void test_rep_string_ops(void **state)
{
	(void)state;
	insn in = DEC(0xf3, 0xa4); /* rep movsb */
	assert_int_equal(in.op, OP_MOVS);
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_R, 1, R_SI, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_W, 1, R_DI, R_NONE, 1, 0);
	assert_true(in.mem[0].flags & MEM_REP);
	assert_true(in.reads & REG_BIT(R_CX));
	in = DEC(0xf3, 0x48, 0xab); /* rep stosq */
	assert_int_equal(in.op, OP_STOS);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_DI, R_NONE, 1, 0);
	assert_true(in.mem[0].flags & MEM_REP);
	in = DEC(0xf3, 0xa6); /* repe cmpsb */
	assert_int_equal(in.op, OP_CMPS);
	expect_mem(&in, 0, ACC_R, 1, R_SI, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_R, 1, R_DI, R_NONE, 1, 0);
	in = DEC(0xae); /* scasb, no rep */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 1, R_DI, R_NONE, 1, 0);
	assert_false(in.mem[0].flags & MEM_REP);
	in = DEC(0xf2, 0x0f, 0x10, 0x07); /* movsd xmm0, [rdi]: SSE, not a string op */
	assert_int_equal(in.op, OP_OTHER);
	expect_mem(&in, 0, ACC_R, 8, R_DI, R_NONE, 1, 0);
}

static void test_read_modify_write_and_atomics(void **state)
{
	(void)state;
	insn in = DEC(0x48, 0x83, 0x44, 0xd8, 0x10, 0x01); /* add qword [rax+rbx*8+0x10], 1 */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_RW, 8, R_AX, R_BX, 8, 0x10);
	in = DEC(0x87, 0x07); /* xchg [rdi], eax */
	expect_mem(&in, 0, ACC_RW, 4, R_DI, R_NONE, 1, 0);
	in = DEC(0xf0, 0x48, 0x0f, 0xb1, 0x0f); /* lock cmpxchg [rdi], rcx */
	assert_int_equal(in.op, OP_CMPXCHG);
	assert_int_equal(in.mem[0].size, 8);
	assert_true(in.mem[0].kind & ACC_R);
}

static void test_register_widths_and_operands(void **state)
{
	(void)state;
	insn in = DEC(0x89, 0xd8); /* mov eax, ebx */
	assert_int_equal(in.wsize[R_AX], 4);
	assert_true(in.reads & REG_BIT(R_BX));
	in = DEC(0xb0, 0x01); /* mov al, 1 */
	assert_int_equal(in.wsize[R_AX], 1);
	in = DEC(0xb4, 0x01); /* mov ah, 1 */
	assert_true(in.opd[0].high8);
	in = DEC(0x48, 0x63, 0xc7); /* movsxd rax, edi */
	assert_int_equal(in.op, OP_MOVSX);
	assert_int_equal(in.wsize[R_AX], 8);
	in = DEC(0x48, 0x98); /* cdqe */
	assert_int_equal(in.op, OP_MOVSX);
	in = DEC(0x48, 0x8d, 0x44, 0xb7, 0x08); /* lea rax, [rdi+rsi*4+8] */
	assert_int_equal(in.op, OP_LEA);
	assert_int_equal(in.nmem, 0);
	assert_int_equal(in.opd[1].type, OPD_MEM);
	const mem_access *m = &in.mem[in.opd[1].mem];
	assert_int_equal(m->base, R_DI);
	assert_int_equal(m->index, R_SI);
	assert_int_equal(m->scale, 4);
	assert_int_equal(m->disp, 8);
	in = DEC(0x48, 0x83, 0xc0, 0xff); /* add rax, -1 */
	assert_int_equal(in.opd[1].type, OPD_IMM);
	assert_int_equal(in.opd[1].imm, -1);
}

static void test_control_kinds_and_flags(void **state)
{
	(void)state;
	insn in = DEC(0x74, 0x05); /* jz +5 */
	assert_int_equal(in.flow, FLOW_CJUMP);
	assert_int_equal(in.cond, CC_E);
	assert_int_equal(in.target, 0x401007);
	assert_true(in.flags_read & FL_ZF);
	in = DEC(0x48, 0x39, 0xd8); /* cmp rax, rbx */
	assert_int_equal(in.op, OP_CMP);
	assert_true((in.flags_written & (FL_ZF | FL_CF | FL_SF | FL_OF)) == (FL_ZF | FL_CF | FL_SF | FL_OF));
	in = DEC(0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00); /* jmp [rax*8+0x402000] */
	assert_int_equal(in.flow, FLOW_IJUMP);
	expect_mem(&in, 0, ACC_R, 8, R_NONE, R_AX, 8, 0x402000);
	in = DEC(0x0f, 0x05); /* syscall */
	assert_int_equal(in.flow, FLOW_SYSCALL);
	in = DEC(0x0f, 0x0b); /* ud2 */
	assert_int_equal(in.flow, FLOW_HALT);
	in = DEC(0xf3, 0x0f, 0x1e, 0xfa); /* endbr64 */
	assert_int_equal(in.op, OP_NOP);
	assert_int_equal(in.nmem, 0);
	in = DEC(0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00); /* mov rax, fs:[0x28] */
	assert_int_equal(in.mem[0].seg, SEG_FS);
	assert_int_equal(in.mem[0].disp, 0x28);
	in = DEC(0x0f, 0x28, 0x07); /* movaps xmm0, [rdi] */
	expect_mem(&in, 0, ACC_R, 16, R_DI, R_NONE, 1, 0);
	in = DEC(0xc5, 0xfe, 0x7f, 0x07); /* vmovdqu [rdi], ymm0 */
	expect_mem(&in, 0, ACC_W, 32, R_DI, R_NONE, 1, 0);
}

static void test_invalid_bytes_are_a_halt(void **state)
{
	(void)state;
	static const uint8_t bad[] = { 0x0f, 0xff }; /* ud0 without modrm: truncated */
	insn in;
	int rc = decode_insn(bad, 1, 0x1000, &in);
	assert_int_equal(rc, -1);
	assert_int_equal(in.flow, FLOW_HALT);
	assert_int_equal(in.len, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_pop_write_and_read_the_stack),
		cmocka_unit_test(test_call_ret_leave_implicit_accesses),
		cmocka_unit_test(test_rep_string_ops),
		cmocka_unit_test(test_read_modify_write_and_atomics),
		cmocka_unit_test(test_register_widths_and_operands),
		cmocka_unit_test(test_control_kinds_and_flags),
		cmocka_unit_test(test_invalid_bytes_are_a_halt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
