/* Tests of the instruction record (analyzer/decode.c): control kinds,
 * registers with write widths, flags, operands, and every data access with
 * kind, size and address form, implicit ones included.  Each byte sequence
 * has its assembly (Intel syntax, as GNU as prints it) beside it.  Every
 * instruction is decoded at ADDR. */
#include "tests/testutil.h"
#include "analyzer/analyzer.h"

#define ADDR 0x401000u

static void dec(insn *in, const uint8_t *b, size_t n)
{
	assert_int_equal(decode_insn(b, n, ADDR, in), 0);
	assert_int_equal(in->len, n);
}

/* DEC(&in, bytes...): decodes exactly those bytes as one instruction. */
#define BYTES(...) ((const uint8_t[]){ __VA_ARGS__ })
#define DEC(in, ...) dec(in, BYTES(__VA_ARGS__), sizeof BYTES(__VA_ARGS__))

static void expect_mem(const insn *in, unsigned k, unsigned kind, unsigned size,
		       unsigned base, unsigned index, unsigned scale, int64_t disp)
{
	assert_true(k < in->nmem);
	const mem_access *m = &in->mem[k];
	assert_int_equal(m->kind, kind);
	assert_int_equal(m->size, size);
	assert_int_equal(m->base, base);
	assert_int_equal(m->index, index);
	assert_int_equal(m->scale, scale);
	assert_int_equal(m->disp, disp);
}

static bool reads(const insn *in, unsigned r) { return in->reads & REG_BIT(r); }
static bool writes(const insn *in, unsigned r) { return in->writes & REG_BIT(r); }

/* ------------------------------------------------------------- the stack */

static void test_push_writes_below_rsp(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x53); /* push rbx */
	assert_int_equal(in.op, OP_PUSH);
	assert_int_equal(in.flow, FLOW_NEXT);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_int_equal(in.mem[0].flags, MEM_IMPLICIT);
	assert_int_equal(in.reads, REG_BIT(R_SP) | REG_BIT(R_BX));
	assert_int_equal(in.writes, REG_BIT(R_SP));
	assert_int_equal(in.wsize[R_SP], 8);
	assert_int_equal(in.nopd, 1);
	assert_int_equal(in.opd[0].type, OPD_REG);
	assert_int_equal(in.opd[0].reg, R_BX);

	DEC(&in, 0x6a, 0x10); /* push 0x10 */
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_int_equal(in.opd[0].type, OPD_IMM);
	assert_int_equal(in.opd[0].imm, 0x10);

	DEC(&in, 0x9c); /* pushfq */
	assert_int_equal(in.op, OP_PUSH);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_true(reads(&in, R_FLAGS));
}

static void test_push_mem_reads_then_writes_the_stack(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xff, 0x30); /* push qword ptr [rax] */
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_R, 8, R_AX, R_NONE, 1, 0);
	assert_false(in.mem[0].flags & MEM_IMPLICIT);
	expect_mem(&in, 1, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_true(in.mem[1].flags & MEM_IMPLICIT);
	assert_int_equal(in.opd[0].type, OPD_MEM);
	assert_int_equal(in.opd[0].mem, 0);
}

static void test_pop_reads_the_top(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x5d); /* pop rbp */
	assert_int_equal(in.op, OP_POP);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	assert_true(in.mem[0].flags & MEM_IMPLICIT);
	assert_true(reads(&in, R_SP));
	assert_int_equal(in.writes, REG_BIT(R_SP) | REG_BIT(R_BP));
	assert_int_equal(in.wsize[R_BP], 8);
	assert_int_equal(in.wsize[R_SP], 8);
}

static void test_pop_mem_reads_the_stack_then_writes(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x8f, 0x47, 0x08); /* pop qword ptr [rdi+0x8] */
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_W, 8, R_DI, R_NONE, 1, 8);
	assert_int_equal(in.opd[0].mem, 1);
	/* the destination address uses rsp after the pop (valgrind agrees) */
	DEC(&in, 0x8f, 0x44, 0x24, 0x08); /* pop qword ptr [rsp+0x8] */
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_W, 8, R_SP, R_NONE, 1, 16);
	assert_false(in.mem[1].flags & MEM_IMPLICIT);
}

static void test_call_rel_pushes_the_return_address(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xe8, 0x10, 0x00, 0x00, 0x00); /* call 0x401015 */
	assert_int_equal(in.op, OP_CALL);
	assert_int_equal(in.flow, FLOW_CALL);
	assert_int_equal(in.target, ADDR + 5 + 0x10);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_true(in.mem[0].flags & MEM_IMPLICIT);
	assert_true(reads(&in, R_SP));
	assert_true(writes(&in, R_SP));
	assert_int_equal(in.wsize[R_SP], 8);

	DEC(&in, 0xe8, 0xfb, 0xff, 0xff, 0xff); /* call 0x401000 (itself) */
	assert_int_equal(in.target, ADDR);
}

static void test_call_through_rip_slot_reads_it_then_pushes(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xff, 0x15, 0x00, 0x10, 0x00, 0x00); /* call qword ptr [rip+0x1000] */
	assert_int_equal(in.flow, FLOW_ICALL);
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_R, 8, R_NONE, R_NONE, 1, ADDR + 6 + 0x1000);
	assert_int_equal(in.mem[0].flags, MEM_RIPREL);
	expect_mem(&in, 1, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_int_equal(in.opd[0].type, OPD_MEM);
	assert_int_equal(in.opd[0].mem, 0);

	DEC(&in, 0xff, 0xd0); /* call rax */
	assert_int_equal(in.flow, FLOW_ICALL);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_true(reads(&in, R_AX));
}

static void test_ret_reads_the_return_address(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xc3); /* ret */
	assert_int_equal(in.op, OP_RET);
	assert_int_equal(in.flow, FLOW_RET);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	assert_true(in.mem[0].flags & MEM_IMPLICIT);
	assert_int_equal(in.writes, REG_BIT(R_SP));
	assert_int_equal(in.wsize[R_SP], 8);

	DEC(&in, 0xc2, 0x10, 0x00); /* ret 0x10 */
	assert_int_equal(in.flow, FLOW_RET);
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	assert_int_equal(in.opd[0].imm, 0x10);
}

static void test_leave_reads_the_saved_frame_pointer(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xc9); /* leave */
	assert_int_equal(in.op, OP_LEAVE);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_BP, R_NONE, 1, 0);
	assert_true(in.mem[0].flags & MEM_IMPLICIT);
	assert_int_equal(in.writes, REG_BIT(R_SP) | REG_BIT(R_BP));
	assert_int_equal(in.wsize[R_SP], 8);
	assert_int_equal(in.wsize[R_BP], 8);
	assert_true(reads(&in, R_BP));
}

static void test_enter_pushes_the_frame_pointer(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xc8, 0x20, 0x00, 0x00); /* enter 0x20, 0x0 */
	assert_int_equal(in.op, OP_ENTER);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	assert_true(writes(&in, R_SP));
	assert_true(writes(&in, R_BP));
	DEC(&in, 0xc8, 0x20, 0x00, 0x01); /* enter 0x20, 0x1: also pushes the new rbp */
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_W, 8, R_SP, R_NONE, 1, -8);
	expect_mem(&in, 1, ACC_W, 8, R_SP, R_NONE, 1, -16);
}

/* ---------------------------------------------------------- string ops */

static void test_rep_movs_reads_rsi_then_writes_rdi(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xf3, 0xa4); /* rep movsb */
	assert_int_equal(in.op, OP_MOVS);
	assert_int_equal(in.nmem, 2);
	expect_mem(&in, 0, ACC_R, 1, R_SI, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_W, 1, R_DI, R_NONE, 1, 0);
	for (unsigned k = 0; k < 2; k++)
		assert_int_equal(in.mem[k].flags, MEM_IMPLICIT | MEM_REP | MEM_COND);
	assert_int_equal(in.reads & 0xffff, REG_BIT(R_CX) | REG_BIT(R_SI) | REG_BIT(R_DI));
	assert_int_equal(in.writes & 0xffff, REG_BIT(R_CX) | REG_BIT(R_SI) | REG_BIT(R_DI));
	assert_true(reads(&in, R_FLAGS)); /* the direction flag */

	DEC(&in, 0xf3, 0x48, 0xa5); /* rep movsq */
	expect_mem(&in, 0, ACC_R, 8, R_SI, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_W, 8, R_DI, R_NONE, 1, 0);
	assert_true(in.mem[1].flags & MEM_REP);

	DEC(&in, 0xa4); /* movsb, no rep: happens exactly once */
	assert_int_equal(in.mem[0].flags, MEM_IMPLICIT);
	assert_false(reads(&in, R_CX));
}

/* The recorder numbers memory operands explicit first, then hidden, each
 * in Zydis's order (rec_emit.c, rec_memop); movs lists [rdi] first.  A
 * daddr probe of the read named the write's operand: perl's sort replayed
 * its reads at the writes' addresses. */
static void test_recorder_numbers_of_memory_operands(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0xa5); /* movsq */
	expect_mem(&in, 0, ACC_R, 8, R_SI, R_NONE, 1, 0);
	assert_int_equal(in.mem[0].rk, 1);
	assert_int_equal(in.mem[1].rk, 0);
	DEC(&in, 0xff, 0x30); /* push qword ptr [rax]: explicit first */
	assert_int_equal(in.mem[0].rk, 0);
	assert_int_equal(in.mem[1].rk, 1);
	DEC(&in, 0x8f, 0x47, 0x08); /* pop qword ptr [rdi+0x8]: the stack read
				       is hidden, so second to the recorder */
	expect_mem(&in, 0, ACC_R, 8, R_SP, R_NONE, 1, 0);
	assert_int_equal(in.mem[0].rk, 1);
	assert_int_equal(in.mem[1].rk, 0);
	DEC(&in, 0xc8, 0x10, 0x00, 0x00); /* enter 0x10, 0: made up by decode */
	assert_int_equal(in.mem[0].rk, MEM_RK_NONE);
}

static void test_rep_stos_writes_rdi(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xf3, 0x48, 0xab); /* rep stosq */
	assert_int_equal(in.op, OP_STOS);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_W, 8, R_DI, R_NONE, 1, 0);
	assert_int_equal(in.mem[0].flags, MEM_IMPLICIT | MEM_REP | MEM_COND);
	assert_true(reads(&in, R_AX));
	DEC(&in, 0xaa); /* stosb */
	expect_mem(&in, 0, ACC_W, 1, R_DI, R_NONE, 1, 0);
}

static void test_cmps_scas_lods_read(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xf3, 0xa6); /* repe cmpsb */
	assert_int_equal(in.op, OP_CMPS);
	assert_int_equal(in.nmem, 2);
	/* valgrind loads [rdi] first */
	expect_mem(&in, 0, ACC_R, 1, R_DI, R_NONE, 1, 0);
	expect_mem(&in, 1, ACC_R, 1, R_SI, R_NONE, 1, 0);
	assert_true(in.mem[0].flags & MEM_REP);
	assert_true(in.mem[1].flags & MEM_COND);
	assert_true(in.flags_written & FL_ZF);

	DEC(&in, 0xae); /* scasb */
	assert_int_equal(in.op, OP_SCAS);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 1, R_DI, R_NONE, 1, 0);
	assert_false(in.mem[0].flags & (MEM_REP | MEM_COND));

	DEC(&in, 0xf2, 0xae); /* repne scasb */
	assert_true(in.mem[0].flags & MEM_REP);

	DEC(&in, 0x48, 0xad); /* lodsq */
	assert_int_equal(in.op, OP_LODS);
	expect_mem(&in, 0, ACC_R, 8, R_SI, R_NONE, 1, 0);
	assert_int_equal(in.wsize[R_AX], 8);
}

static void test_string_op_prefixes(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x67, 0xa4); /* movsb with 32-bit addresses: [esi], [edi] */
	assert_true(in.mem[0].addr32);
	assert_true(in.mem[1].addr32);
	assert_int_equal(in.mem[0].base, R_SI);
	assert_int_equal(in.wsize[R_SI], 4);
	DEC(&in, 0x64, 0xa4); /* movsb with fs: on the source */
	assert_int_equal(in.mem[0].seg, SEG_FS);
	assert_int_equal(in.mem[1].seg, SEG_NONE);
}

static void test_sse_movsd_is_not_a_string_op(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xf2, 0x0f, 0x10, 0x07); /* movsd xmm0, qword ptr [rdi] */
	assert_int_equal(in.op, OP_OTHER);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_DI, R_NONE, 1, 0);
	assert_int_equal(in.mem[0].flags, 0);
	assert_int_equal(in.opd[0].type, OPD_OTHER);
	assert_int_equal(in.opd[0].size, 16);
}

/* ----------------------------------------------- read-modify-write, atomics */

static void test_read_modify_write_is_one_rw_access(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0x83, 0x44, 0xd8, 0x10, 0x01); /* add qword ptr [rax+rbx*8+0x10], 0x1 */
	assert_int_equal(in.op, OP_ADD);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_RW, 8, R_AX, R_BX, 8, 0x10);
	assert_int_equal(in.mem[0].flags, 0);
	assert_int_equal(in.reads, REG_BIT(R_AX) | REG_BIT(R_BX));
	assert_int_equal(in.writes, REG_BIT(R_FLAGS));
	assert_int_equal(in.opd[0].type, OPD_MEM);
	assert_int_equal(in.opd[0].size, 8);
	assert_int_equal(in.opd[1].imm, 1);
}

static void test_xchg_cmpxchg_xadd_with_memory_are_rw(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x87, 0x07); /* xchg dword ptr [rdi], eax */
	assert_int_equal(in.op, OP_XCHG);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_RW, 4, R_DI, R_NONE, 1, 0);
	assert_int_equal(in.wsize[R_AX], 4);

	DEC(&in, 0xf0, 0x48, 0x0f, 0xb1, 0x0f); /* lock cmpxchg qword ptr [rdi], rcx */
	assert_int_equal(in.op, OP_CMPXCHG);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_RW, 8, R_DI, R_NONE, 1, 0);
	assert_true(reads(&in, R_AX));
	assert_true(reads(&in, R_CX));
	assert_true(writes(&in, R_AX));
	assert_true(in.flags_written & FL_ZF);

	DEC(&in, 0xf0, 0x0f, 0xc1, 0x07); /* lock xadd dword ptr [rdi], eax */
	assert_int_equal(in.op, OP_XADD);
	expect_mem(&in, 0, ACC_RW, 4, R_DI, R_NONE, 1, 0);
	assert_int_equal(in.wsize[R_AX], 4);

	DEC(&in, 0x48, 0x0f, 0xc7, 0x0e); /* cmpxchg16b xmmword ptr [rsi] */
	expect_mem(&in, 0, ACC_RW, 16, R_SI, R_NONE, 1, 0);
}

/* ------------------------------------------------------ registers, widths */

static void test_write_widths(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x89, 0xd8); /* mov eax, ebx */
	assert_int_equal(in.op, OP_MOV);
	assert_int_equal(in.writes, REG_BIT(R_AX));
	assert_int_equal(in.wsize[R_AX], 4);
	assert_int_equal(in.reads, REG_BIT(R_BX));
	assert_int_equal(in.opd[0].size, 4);

	DEC(&in, 0xb0, 0x01); /* mov al, 0x1 */
	assert_int_equal(in.wsize[R_AX], 1);
	assert_false(in.opd[0].high8);

	DEC(&in, 0xb4, 0x01); /* mov ah, 0x1 */
	assert_int_equal(in.wsize[R_AX], 1);
	assert_int_equal(in.opd[0].reg, R_AX);
	assert_true(in.opd[0].high8);

	DEC(&in, 0x66, 0xb8, 0x01, 0x00); /* mov ax, 0x1 */
	assert_int_equal(in.wsize[R_AX], 2);

	DEC(&in, 0x0f, 0xb6, 0xcc); /* movzx ecx, ah */
	assert_int_equal(in.op, OP_MOVZX);
	assert_int_equal(in.wsize[R_CX], 4);
	assert_true(in.opd[1].high8);
	assert_int_equal(in.opd[1].size, 1);

	DEC(&in, 0x41, 0x89, 0xc0); /* mov r8d, eax */
	assert_int_equal(in.writes, REG_BIT(R_8));
	assert_int_equal(in.wsize[R_8], 4);
}

static void test_sign_extensions(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0x63, 0xc7); /* movsxd rax, edi */
	assert_int_equal(in.op, OP_MOVSX);
	assert_int_equal(in.wsize[R_AX], 8);
	assert_int_equal(in.opd[1].reg, R_DI);
	assert_int_equal(in.opd[1].size, 4);

	/* cdqe/cwde/cbw: OP_MOVSX of rax into itself, no explicit operand;
	 * the source is half the written width */
	DEC(&in, 0x48, 0x98); /* cdqe */
	assert_int_equal(in.op, OP_MOVSX);
	assert_int_equal(in.nopd, 0);
	assert_int_equal(in.reads, REG_BIT(R_AX));
	assert_int_equal(in.writes, REG_BIT(R_AX));
	assert_int_equal(in.wsize[R_AX], 8);
	DEC(&in, 0x98); /* cwde */
	assert_int_equal(in.op, OP_MOVSX);
	assert_int_equal(in.wsize[R_AX], 4);
	DEC(&in, 0x66, 0x98); /* cbw */
	assert_int_equal(in.wsize[R_AX], 2);

	/* cdq/cqo: OP_OTHER, writing rdx from rax */
	DEC(&in, 0x99); /* cdq */
	assert_int_equal(in.op, OP_OTHER);
	assert_int_equal(in.reads, REG_BIT(R_AX));
	assert_int_equal(in.writes, REG_BIT(R_DX));
	assert_int_equal(in.wsize[R_DX], 4);
	DEC(&in, 0x48, 0x99); /* cqo */
	assert_int_equal(in.wsize[R_DX], 8);
}

static void test_implicit_register_effects(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0xf7, 0xe1); /* mul rcx: rdx:rax = rax * rcx */
	assert_int_equal(in.op, OP_MUL);
	assert_int_equal(in.reads, REG_BIT(R_AX) | REG_BIT(R_CX));
	assert_int_equal(in.writes, REG_BIT(R_AX) | REG_BIT(R_DX) | REG_BIT(R_FLAGS));
	assert_int_equal(in.wsize[R_AX], 8);
	assert_int_equal(in.wsize[R_DX], 8);

	DEC(&in, 0x48, 0xf7, 0xf9); /* idiv rcx */
	assert_int_equal(in.op, OP_IDIV);
	assert_true(reads(&in, R_DX));
	assert_true(writes(&in, R_DX));

	DEC(&in, 0x0f, 0xa2); /* cpuid */
	assert_int_equal(in.writes, REG_BIT(R_AX) | REG_BIT(R_BX) | REG_BIT(R_CX) | REG_BIT(R_DX));

	DEC(&in, 0x0f, 0x31); /* rdtsc */
	assert_int_equal(in.writes, REG_BIT(R_AX) | REG_BIT(R_DX));
	assert_int_equal(in.wsize[R_DX], 4);

	DEC(&in, 0x48, 0xd3, 0xe0); /* shl rax, cl */
	assert_int_equal(in.op, OP_SHL);
	assert_int_equal(in.reads, REG_BIT(R_AX) | REG_BIT(R_CX));
}

static void test_xor_self_still_reads(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x31, 0xc0); /* xor eax, eax */
	assert_int_equal(in.op, OP_XOR);
	assert_true(reads(&in, R_AX));
	assert_int_equal(in.wsize[R_AX], 4);
	assert_int_equal(in.nopd, 2);
	assert_int_equal(in.opd[0].reg, R_AX);
	assert_int_equal(in.opd[1].reg, R_AX);
	DEC(&in, 0x48, 0x29, 0xd2); /* sub rdx, rdx */
	assert_int_equal(in.op, OP_SUB);
	assert_true(reads(&in, R_DX));
}

/* ----------------------------------------------------- operands, addresses */

static void test_lea_computes_an_address_without_access(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0x8d, 0x44, 0xb7, 0x08); /* lea rax, [rdi+rsi*4+0x8] */
	assert_int_equal(in.op, OP_LEA);
	assert_int_equal(in.nmem, 0);
	assert_int_equal(in.nopd, 2);
	assert_int_equal(in.opd[1].type, OPD_MEM);
	assert_int_equal(in.opd[1].mem, INSN_MAX_MEM);
	const mem_access *m = &in.mem[in.opd[1].mem];
	assert_int_equal(m->kind, 0);
	assert_int_equal(m->base, R_DI);
	assert_int_equal(m->index, R_SI);
	assert_int_equal(m->scale, 4);
	assert_int_equal(m->disp, 8);
	assert_int_equal(in.reads, REG_BIT(R_DI) | REG_BIT(R_SI));
	assert_int_equal(in.writes, REG_BIT(R_AX));
	assert_int_equal(in.flags_written, 0);

	DEC(&in, 0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00); /* lea rax, [rip+0x10] */
	m = &in.mem[in.opd[1].mem];
	assert_int_equal(m->flags, MEM_RIPREL);
	assert_int_equal(m->base, R_NONE);
	assert_int_equal(m->disp, ADDR + 7 + 0x10);
}

static void test_immediates_are_sign_extended(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0x83, 0xc0, 0xff); /* add rax, -1 (imm8) */
	assert_int_equal(in.opd[1].type, OPD_IMM);
	assert_int_equal(in.opd[1].imm, -1);
	DEC(&in, 0x48, 0xc7, 0xc0, 0x00, 0x00, 0x00, 0x80); /* mov rax, 0xffffffff80000000 */
	assert_int_equal(in.opd[1].imm, (int64_t)0xffffffff80000000ull);
	assert_int_equal(in.wsize[R_AX], 8);
	DEC(&in, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0x80); /* movabs rax, 0x8000000000000000 */
	assert_int_equal(in.opd[1].imm, INT64_MIN);
	DEC(&in, 0x83, 0xe0, 0xf0); /* and eax, 0xfffffff0 (imm8 -16) */
	assert_int_equal(in.opd[1].imm, -16);
	DEC(&in, 0x48, 0x6b, 0xc2, 0x18); /* imul rax, rdx, 0x18 */
	assert_int_equal(in.op, OP_IMUL);
	assert_int_equal(in.nopd, 3);
	assert_int_equal(in.opd[2].imm, 24);
	assert_false(reads(&in, R_AX));
}

static void test_rip_relative_is_resolved(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0x8b, 0x05, 0xf0, 0xff, 0xff, 0xff); /* mov rax, qword ptr [rip-0x10] */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_NONE, R_NONE, 1, ADDR + 7 - 0x10);
	assert_int_equal(in.mem[0].flags, MEM_RIPREL);
	assert_false(in.reads & 0xffff);
}

static void test_segment_and_absolute_addresses(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00); /* mov rax, qword ptr fs:[0x28] */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_NONE, R_NONE, 1, 0x28);
	assert_int_equal(in.mem[0].seg, SEG_FS);
	assert_int_equal(in.mem[0].flags, 0);
	DEC(&in, 0x65, 0x89, 0x08); /* mov dword ptr gs:[rax], ecx */
	expect_mem(&in, 0, ACC_W, 4, R_AX, R_NONE, 1, 0);
	assert_int_equal(in.mem[0].seg, SEG_GS);
	DEC(&in, 0x67, 0x8b, 0x40, 0x10); /* mov eax, dword ptr [eax+0x10] */
	expect_mem(&in, 0, ACC_R, 4, R_AX, R_NONE, 1, 0x10);
	assert_true(in.mem[0].addr32);
}

static void test_vector_and_x87_accesses_have_their_size(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x0f, 0x28, 0x07); /* movaps xmm0, xmmword ptr [rdi] */
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 16, R_DI, R_NONE, 1, 0);
	DEC(&in, 0xc5, 0xfe, 0x7f, 0x07); /* vmovdqu ymmword ptr [rdi], ymm0 */
	expect_mem(&in, 0, ACC_W, 32, R_DI, R_NONE, 1, 0);
	assert_int_equal(in.opd[1].type, OPD_OTHER);
	assert_int_equal(in.opd[1].size, 32);
	DEC(&in, 0xdd, 0x07); /* fld qword ptr [rdi] */
	expect_mem(&in, 0, ACC_R, 8, R_DI, R_NONE, 1, 0);
	DEC(&in, 0xdb, 0x2f); /* fld tbyte ptr [rdi] */
	expect_mem(&in, 0, ACC_R, 10, R_DI, R_NONE, 1, 0);
	DEC(&in, 0x0f, 0xae, 0x07); /* fxsave [rdi] */
	expect_mem(&in, 0, ACC_W, 512, R_DI, R_NONE, 1, 0);
	/* the loader's lazy-binding resolver: the area is written by xsave
	 * and xsavec (Zydis has xsave's read too), read by xrstor */
	DEC(&in, 0x0f, 0xae, 0x27); /* xsave [rdi] */
	expect_mem(&in, 0, ACC_W, 576, R_DI, R_NONE, 1, 0);
	DEC(&in, 0x0f, 0xc7, 0x27); /* xsavec [rdi] */
	expect_mem(&in, 0, ACC_W, 576, R_DI, R_NONE, 1, 0);
	DEC(&in, 0x0f, 0xae, 0x2f); /* xrstor [rdi] */
	expect_mem(&in, 0, ACC_R, 576, R_DI, R_NONE, 1, 0);
	DEC(&in, 0x0f, 0x10, 0x44, 0x24, 0x10); /* movups xmm0, xmmword ptr [rsp+0x10] */
	expect_mem(&in, 0, ACC_R, 16, R_SP, R_NONE, 1, 0x10);
}

static void test_gather_is_marked_inexact(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xc4, 0xe2, 0x6d, 0x90, 0x44, 0x8f, 0x08); /* vpgatherdd ymm0, dword ptr [rdi+ymm1*4+0x8], ymm2 */
	assert_int_equal(in.op, OP_OTHER);
	assert_int_equal(in.nmem, 1);
	assert_int_equal(in.mem[0].kind, ACC_R);
	assert_int_equal(in.mem[0].base, R_DI);
	assert_int_equal(in.mem[0].index, R_NONE);
	assert_true(in.mem[0].flags & MEM_INEXACT);
	DEC(&in, 0x48, 0x0f, 0xa3, 0x0f); /* bt qword ptr [rdi], rcx: rcx moves the address */
	assert_true(in.mem[0].flags & MEM_INEXACT);
	DEC(&in, 0x48, 0x0f, 0xba, 0x27, 0x05); /* bt qword ptr [rdi], 0x5: inside the operand */
	assert_false(in.mem[0].flags & MEM_INEXACT);
}

static void test_no_access_for_nops_prefetch_and_cmov(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0); /* nop word ptr cs:[rax+rax*1+0x0] */
	assert_int_equal(in.op, OP_NOP);
	assert_int_equal(in.nmem, 0);
	assert_int_equal(in.reads, 0);
	assert_int_equal(in.writes, 0);
	assert_int_equal(in.opd[0].type, OPD_MEM);
	assert_int_equal(in.opd[0].mem, INSN_MAX_MEM);
	DEC(&in, 0x90); /* nop */
	assert_int_equal(in.op, OP_NOP);
	DEC(&in, 0xf3, 0x0f, 0x1e, 0xfa); /* endbr64 */
	assert_int_equal(in.op, OP_NOP);
	assert_int_equal(in.nmem, 0);
	assert_int_equal(in.flow, FLOW_NEXT);
	DEC(&in, 0x0f, 0x18, 0x0f); /* prefetcht0 byte ptr [rdi]: valgrind reports nothing */
	assert_int_equal(in.nmem, 0);
	DEC(&in, 0x0f, 0xae, 0x3f); /* clflush byte ptr [rdi] */
	assert_int_equal(in.nmem, 0);

	/* cmov always reads its source, whatever the condition */
	DEC(&in, 0x48, 0x0f, 0x44, 0x07); /* cmove rax, qword ptr [rdi] */
	assert_int_equal(in.op, OP_CMOV);
	assert_int_equal(in.cond, CC_E);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_DI, R_NONE, 1, 0);
	assert_int_equal(in.mem[0].flags, 0);
	assert_true(in.flags_read & FL_ZF);
}

/* ------------------------------------------------------------- control */

static void test_jumps_and_conditions(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x74, 0x05); /* je 0x401007 */
	assert_int_equal(in.op, OP_JCC);
	assert_int_equal(in.flow, FLOW_CJUMP);
	assert_int_equal(in.cond, CC_E);
	assert_int_equal(in.target, ADDR + 7);
	assert_int_equal(in.flags_read, FL_ZF);
	assert_true(reads(&in, R_FLAGS));
	assert_int_equal(in.flags_written, 0);

	DEC(&in, 0x0f, 0x8f, 0x00, 0x01, 0x00, 0x00); /* jg 0x401106 */
	assert_int_equal(in.cond, CC_G);
	assert_int_equal(in.target, ADDR + 6 + 0x100);
	assert_int_equal(in.flags_read, FL_ZF | FL_SF | FL_OF);

	DEC(&in, 0x72, 0xfe); /* jb 0x401000 */
	assert_int_equal(in.cond, CC_B);
	assert_int_equal(in.flags_read, FL_CF);

	DEC(&in, 0xe3, 0xfe); /* jrcxz 0x401000 */
	assert_int_equal(in.flow, FLOW_CJUMP);
	assert_int_equal(in.cond, CC_RCXZ);
	assert_true(reads(&in, R_CX));

	DEC(&in, 0xe2, 0xfe); /* loop 0x401000 */
	assert_int_equal(in.flow, FLOW_CJUMP);
	assert_int_equal(in.cond, CC_LOOP);
	assert_int_equal(in.target, ADDR);
	assert_true(writes(&in, R_CX));

	DEC(&in, 0xeb, 0xfe); /* jmp 0x401000 */
	assert_int_equal(in.op, OP_JMP);
	assert_int_equal(in.flow, FLOW_JUMP);
	assert_int_equal(in.target, ADDR);
	assert_int_equal(in.cond, CC_NONE);

	DEC(&in, 0x0f, 0x94, 0xc0); /* sete al */
	assert_int_equal(in.op, OP_SETCC);
	assert_int_equal(in.cond, CC_E);
	assert_int_equal(in.wsize[R_AX], 1);
}

static void test_indirect_jump_through_table(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00); /* jmp qword ptr [rax*8+0x402000] */
	assert_int_equal(in.op, OP_JMP);
	assert_int_equal(in.flow, FLOW_IJUMP);
	assert_int_equal(in.nmem, 1);
	expect_mem(&in, 0, ACC_R, 8, R_NONE, R_AX, 8, 0x402000);
	assert_int_equal(in.reads, REG_BIT(R_AX));
	DEC(&in, 0xff, 0xe0); /* jmp rax */
	assert_int_equal(in.flow, FLOW_IJUMP);
	assert_int_equal(in.nmem, 0);
}

static void test_flags_of_compare_and_arithmetic(void **state)
{
	(void)state;
	insn in;
	const unsigned all = FL_CF | FL_PF | FL_AF | FL_ZF | FL_SF | FL_OF;
	DEC(&in, 0x48, 0x39, 0xd8); /* cmp rax, rbx */
	assert_int_equal(in.op, OP_CMP);
	assert_int_equal(in.flags_written, all);
	assert_int_equal(in.flags_read, 0);
	assert_int_equal(in.writes, REG_BIT(R_FLAGS));
	DEC(&in, 0x48, 0x11, 0xd8); /* adc rax, rbx */
	assert_int_equal(in.flags_read, FL_CF);
	DEC(&in, 0x48, 0xff, 0xc0); /* inc rax: CF untouched */
	assert_int_equal(in.flags_written, all & ~FL_CF);
	DEC(&in, 0x48, 0x89, 0xd8); /* mov rax, rbx */
	assert_int_equal(in.flags_written, 0);
	assert_false(writes(&in, R_FLAGS));
}

static void test_system_calls_fall_through(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x0f, 0x05); /* syscall */
	assert_int_equal(in.op, OP_SYSCALL);
	assert_int_equal(in.flow, FLOW_SYSCALL);
	/* the kernel returns in rax; the CPU clobbers rcx and r11 */
	assert_true(writes(&in, R_AX));
	assert_int_equal(in.wsize[R_AX], 8);
	assert_true(writes(&in, R_CX));
	assert_true(writes(&in, R_11));
	assert_true(reads(&in, R_AX));
	assert_true(reads(&in, R_DI));
	DEC(&in, 0xcd, 0x80); /* int 0x80 */
	assert_int_equal(in.flow, FLOW_SYSCALL);
	assert_true(writes(&in, R_AX));
	assert_true(reads(&in, R_BX));
	DEC(&in, 0x0f, 0x34); /* sysenter */
	assert_int_equal(in.flow, FLOW_SYSCALL);
}

static void test_rtm_is_straight_line(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00); /* xbegin .+6 */
	assert_int_equal(in.flow, FLOW_NEXT);
	assert_true(writes(&in, R_AX));		/* the abort status */
	DEC(&in, 0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00); /* xbegin .+0x16 */
	assert_int_equal(in.flow, FLOW_CJUMP);
	assert_int_equal(in.target, ADDR + 0x16);
	DEC(&in, 0xc6, 0xf8, 0xff); /* xabort 0xff */
	assert_int_equal(in.flow, FLOW_NEXT);
	DEC(&in, 0x0f, 0x01, 0xd5); /* xend */
	assert_int_equal(in.flow, FLOW_NEXT);
}

static void test_halts(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x0f, 0x0b); /* ud2 */
	assert_int_equal(in.flow, FLOW_HALT);
	assert_int_equal(in.op, OP_HALT);
	DEC(&in, 0xcc); /* int3 */
	assert_int_equal(in.flow, FLOW_HALT);
	DEC(&in, 0xcd, 0x03); /* int 0x3 */
	assert_int_equal(in.flow, FLOW_HALT);
	DEC(&in, 0xf4); /* hlt */
	assert_int_equal(in.flow, FLOW_HALT);
	DEC(&in, 0x0f, 0xb9, 0x00); /* ud1 eax, dword ptr [rax]: faults, accesses nothing */
	assert_int_equal(in.flow, FLOW_HALT);
	assert_int_equal(in.nmem, 0);
}

static void test_invalid_bytes_are_a_halt(void **state)
{
	(void)state;
	insn in;
	assert_int_equal(decode_insn(BYTES(0x0f, 0xff), 1, ADDR, &in), -1); /* truncated */
	assert_int_equal(in.flow, FLOW_HALT);
	assert_int_equal(in.len, 1);
	assert_int_equal(in.addr, ADDR);
	assert_int_equal(in.nmem, 0);
	assert_string_equal(in.text, "(bad)");
	assert_int_equal(decode_insn(BYTES(0x06), 1, ADDR, &in), -1); /* push es: not in 64-bit mode */
	assert_int_equal(in.flow, FLOW_HALT);
	assert_int_equal(decode_insn(BYTES(0x90), 0, ADDR, &in), -1); /* nothing to decode */
	assert_int_equal(in.len, 1);
}

/* -------------------------------------------------------------- printing */

static void test_text_is_intel_syntax(void **state)
{
	(void)state;
	insn in;
	DEC(&in, 0x48, 0x8b, 0x45, 0xf8);
	assert_string_equal(in.text, "mov rax, qword ptr [rbp-0x8]");
	DEC(&in, 0xe8, 0x10, 0x00, 0x00, 0x00);
	assert_string_equal(in.text, "call 0x401015");
	DEC(&in, 0x48, 0x83, 0xc0, 0xff);
	assert_string_equal(in.text, "add rax, 0xffffffffffffffff");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(reg_name(R_AX), "rax");
	assert_string_equal(reg_name(R_SP), "rsp");
	assert_string_equal(reg_name(R_8), "r8");
	assert_string_equal(reg_name(R_15), "r15");
	assert_string_equal(reg_name(R_FLAGS), "flags");
	assert_string_equal(reg_name(R_RIP), "rip");
	assert_string_equal(op_name(OP_OTHER), "other");
	assert_string_equal(op_name(OP_MOVSX), "movsx");
	assert_string_equal(op_name(OP_CMPXCHG), "cmpxchg");
	assert_string_equal(op_name(OP_HALT), "halt");
	assert_string_equal(cond_name(CC_O), "o");
	assert_string_equal(cond_name(CC_AE), "ae");
	assert_string_equal(cond_name(CC_G), "g");
	assert_string_equal(cond_name(CC_RCXZ), "rcxz");
	assert_string_equal(cond_name(CC_LOOP), "loop");
	for (unsigned op = 0; op < OP_COUNT; op++)
		assert_non_null(op_name(op));
}

/* Arbitrary bytes never break the record's invariants (run under ASan). */
static void test_random_bytes_keep_the_record_consistent(void **state)
{
	(void)state;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t b[15];
	insn in;
	for (unsigned n = 0; n < 50000; n++) {
		for (unsigned k = 0; k < sizeof b; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[k] = (uint8_t)x;
		}
		int rc = decode_insn(b, sizeof b, ADDR, &in);
		assert_true(rc == 0 || rc == -1);
		assert_true(in.len >= 1 && in.len <= 15);
		assert_true(in.nmem <= INSN_MAX_MEM);
		assert_true(in.nopd <= INSN_MAX_OPD);
		assert_true(in.op < OP_COUNT);
		assert_true(in.flow <= FLOW_HALT);
		assert_true(strlen(in.text) < sizeof in.text);
		for (unsigned k = 0; k < in.nmem; k++) {
			assert_true(in.mem[k].kind >= ACC_R && in.mem[k].kind <= ACC_RW);
			assert_true(in.mem[k].base < 16 || in.mem[k].base == R_NONE);
			assert_true(in.mem[k].index < 16 || in.mem[k].index == R_NONE);
		}
		for (unsigned k = 0; k < in.nopd; k++)
			if (in.opd[k].type == OPD_MEM)
				assert_true(in.opd[k].mem < in.nmem || in.opd[k].mem == INSN_MAX_MEM);
		for (unsigned r = 0; r < 16; r++)
			assert_true(!(in.writes & REG_BIT(r)) ? in.wsize[r] == 0
				    : (in.wsize[r] == 1 || in.wsize[r] == 2 ||
				       in.wsize[r] == 4 || in.wsize[r] == 8));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_writes_below_rsp),
		cmocka_unit_test(test_push_mem_reads_then_writes_the_stack),
		cmocka_unit_test(test_pop_reads_the_top),
		cmocka_unit_test(test_pop_mem_reads_the_stack_then_writes),
		cmocka_unit_test(test_call_rel_pushes_the_return_address),
		cmocka_unit_test(test_call_through_rip_slot_reads_it_then_pushes),
		cmocka_unit_test(test_ret_reads_the_return_address),
		cmocka_unit_test(test_leave_reads_the_saved_frame_pointer),
		cmocka_unit_test(test_enter_pushes_the_frame_pointer),
		cmocka_unit_test(test_rep_movs_reads_rsi_then_writes_rdi),
		cmocka_unit_test(test_recorder_numbers_of_memory_operands),
		cmocka_unit_test(test_rep_stos_writes_rdi),
		cmocka_unit_test(test_cmps_scas_lods_read),
		cmocka_unit_test(test_string_op_prefixes),
		cmocka_unit_test(test_sse_movsd_is_not_a_string_op),
		cmocka_unit_test(test_read_modify_write_is_one_rw_access),
		cmocka_unit_test(test_xchg_cmpxchg_xadd_with_memory_are_rw),
		cmocka_unit_test(test_write_widths),
		cmocka_unit_test(test_sign_extensions),
		cmocka_unit_test(test_implicit_register_effects),
		cmocka_unit_test(test_xor_self_still_reads),
		cmocka_unit_test(test_lea_computes_an_address_without_access),
		cmocka_unit_test(test_immediates_are_sign_extended),
		cmocka_unit_test(test_rip_relative_is_resolved),
		cmocka_unit_test(test_segment_and_absolute_addresses),
		cmocka_unit_test(test_vector_and_x87_accesses_have_their_size),
		cmocka_unit_test(test_gather_is_marked_inexact),
		cmocka_unit_test(test_no_access_for_nops_prefetch_and_cmov),
		cmocka_unit_test(test_jumps_and_conditions),
		cmocka_unit_test(test_indirect_jump_through_table),
		cmocka_unit_test(test_flags_of_compare_and_arithmetic),
		cmocka_unit_test(test_system_calls_fall_through),
		cmocka_unit_test(test_rtm_is_straight_line),
		cmocka_unit_test(test_halts),
		cmocka_unit_test(test_invalid_bytes_are_a_halt),
		cmocka_unit_test(test_text_is_intel_syntax),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_random_bytes_keep_the_record_consistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
