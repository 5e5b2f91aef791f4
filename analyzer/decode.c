/* decode.c — x86-64 machine code into the arch-neutral instruction record
 * (analyzer.h).  The only file of the analysis that sees Zydis: everything
 * the later stages need — control kind, registers read and written with
 * their widths, flags, operands, and every data access with its kind, size
 * and address form, implicit ones included — is decided here. */
#include "analyzer/analyzer.h"

#include <Zydis/Zydis.h>
#include <string.h>

static ZydisDecoder decoder;
static ZydisFormatter formatter;
static bool ready;

static void init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&formatter, ZYDIS_FORMATTER_STYLE_INTEL);
	ready = true;
}

/* ------------------------------------------------------------ tables */

typedef struct mn_op {
	ZydisMnemonic mn;
	uint8_t op;
	uint8_t cc;
} mn_op;

static const mn_op mn_table[] = {
	{ ZYDIS_MNEMONIC_NOP, OP_NOP, CC_NONE }, { ZYDIS_MNEMONIC_ENDBR64, OP_NOP, CC_NONE },
	{ ZYDIS_MNEMONIC_ENDBR32, OP_NOP, CC_NONE }, { ZYDIS_MNEMONIC_PAUSE, OP_NOP, CC_NONE },
	{ ZYDIS_MNEMONIC_MOV, OP_MOV, CC_NONE }, { ZYDIS_MNEMONIC_MOVZX, OP_MOVZX, CC_NONE },
	{ ZYDIS_MNEMONIC_MOVSX, OP_MOVSX, CC_NONE }, { ZYDIS_MNEMONIC_MOVSXD, OP_MOVSX, CC_NONE },
	{ ZYDIS_MNEMONIC_CDQE, OP_MOVSX, CC_NONE }, { ZYDIS_MNEMONIC_CWDE, OP_MOVSX, CC_NONE },
	{ ZYDIS_MNEMONIC_CBW, OP_MOVSX, CC_NONE },
	{ ZYDIS_MNEMONIC_LEA, OP_LEA, CC_NONE }, { ZYDIS_MNEMONIC_ADD, OP_ADD, CC_NONE },
	{ ZYDIS_MNEMONIC_SUB, OP_SUB, CC_NONE }, { ZYDIS_MNEMONIC_ADC, OP_ADC, CC_NONE },
	{ ZYDIS_MNEMONIC_SBB, OP_SBB, CC_NONE }, { ZYDIS_MNEMONIC_INC, OP_INC, CC_NONE },
	{ ZYDIS_MNEMONIC_DEC, OP_DEC, CC_NONE }, { ZYDIS_MNEMONIC_NEG, OP_NEG, CC_NONE },
	{ ZYDIS_MNEMONIC_NOT, OP_NOT, CC_NONE }, { ZYDIS_MNEMONIC_IMUL, OP_IMUL, CC_NONE },
	{ ZYDIS_MNEMONIC_MUL, OP_MUL, CC_NONE }, { ZYDIS_MNEMONIC_IDIV, OP_IDIV, CC_NONE },
	{ ZYDIS_MNEMONIC_DIV, OP_DIV, CC_NONE }, { ZYDIS_MNEMONIC_SHL, OP_SHL, CC_NONE },
	{ ZYDIS_MNEMONIC_SHR, OP_SHR, CC_NONE }, { ZYDIS_MNEMONIC_SAR, OP_SAR, CC_NONE },
	{ ZYDIS_MNEMONIC_ROL, OP_ROL, CC_NONE }, { ZYDIS_MNEMONIC_ROR, OP_ROR, CC_NONE },
	{ ZYDIS_MNEMONIC_AND, OP_AND, CC_NONE }, { ZYDIS_MNEMONIC_OR, OP_OR, CC_NONE },
	{ ZYDIS_MNEMONIC_XOR, OP_XOR, CC_NONE }, { ZYDIS_MNEMONIC_CMP, OP_CMP, CC_NONE },
	{ ZYDIS_MNEMONIC_TEST, OP_TEST, CC_NONE }, { ZYDIS_MNEMONIC_PUSH, OP_PUSH, CC_NONE },
	{ ZYDIS_MNEMONIC_POP, OP_POP, CC_NONE }, { ZYDIS_MNEMONIC_LEAVE, OP_LEAVE, CC_NONE },
	{ ZYDIS_MNEMONIC_ENTER, OP_ENTER, CC_NONE }, { ZYDIS_MNEMONIC_CALL, OP_CALL, CC_NONE },
	{ ZYDIS_MNEMONIC_RET, OP_RET, CC_NONE }, { ZYDIS_MNEMONIC_JMP, OP_JMP, CC_NONE },
	{ ZYDIS_MNEMONIC_XCHG, OP_XCHG, CC_NONE }, { ZYDIS_MNEMONIC_CMPXCHG, OP_CMPXCHG, CC_NONE },
	{ ZYDIS_MNEMONIC_XADD, OP_XADD, CC_NONE },
	{ ZYDIS_MNEMONIC_MOVSB, OP_MOVS, CC_NONE }, { ZYDIS_MNEMONIC_MOVSW, OP_MOVS, CC_NONE },
	{ ZYDIS_MNEMONIC_MOVSD, OP_MOVS, CC_NONE }, { ZYDIS_MNEMONIC_MOVSQ, OP_MOVS, CC_NONE },
	{ ZYDIS_MNEMONIC_STOSB, OP_STOS, CC_NONE }, { ZYDIS_MNEMONIC_STOSW, OP_STOS, CC_NONE },
	{ ZYDIS_MNEMONIC_STOSD, OP_STOS, CC_NONE }, { ZYDIS_MNEMONIC_STOSQ, OP_STOS, CC_NONE },
	{ ZYDIS_MNEMONIC_LODSB, OP_LODS, CC_NONE }, { ZYDIS_MNEMONIC_LODSW, OP_LODS, CC_NONE },
	{ ZYDIS_MNEMONIC_LODSD, OP_LODS, CC_NONE }, { ZYDIS_MNEMONIC_LODSQ, OP_LODS, CC_NONE },
	{ ZYDIS_MNEMONIC_CMPSB, OP_CMPS, CC_NONE }, { ZYDIS_MNEMONIC_CMPSW, OP_CMPS, CC_NONE },
	{ ZYDIS_MNEMONIC_CMPSD, OP_CMPS, CC_NONE }, { ZYDIS_MNEMONIC_CMPSQ, OP_CMPS, CC_NONE },
	{ ZYDIS_MNEMONIC_SCASB, OP_SCAS, CC_NONE }, { ZYDIS_MNEMONIC_SCASW, OP_SCAS, CC_NONE },
	{ ZYDIS_MNEMONIC_SCASD, OP_SCAS, CC_NONE }, { ZYDIS_MNEMONIC_SCASQ, OP_SCAS, CC_NONE },
	{ ZYDIS_MNEMONIC_SYSCALL, OP_SYSCALL, CC_NONE }, { ZYDIS_MNEMONIC_SYSENTER, OP_SYSCALL, CC_NONE },
	{ ZYDIS_MNEMONIC_HLT, OP_HALT, CC_NONE }, { ZYDIS_MNEMONIC_UD0, OP_HALT, CC_NONE },
	{ ZYDIS_MNEMONIC_UD1, OP_HALT, CC_NONE }, { ZYDIS_MNEMONIC_UD2, OP_HALT, CC_NONE },
	{ ZYDIS_MNEMONIC_INT3, OP_HALT, CC_NONE },
#define CC3(M, c) { ZYDIS_MNEMONIC_J##M, OP_JCC, c }, { ZYDIS_MNEMONIC_CMOV##M, OP_CMOV, c }, \
	{ ZYDIS_MNEMONIC_SET##M, OP_SETCC, c }
	CC3(O, CC_O), CC3(NO, CC_NO), CC3(B, CC_B), CC3(NB, CC_AE), CC3(Z, CC_E),
	CC3(NZ, CC_NE), CC3(BE, CC_BE), CC3(NBE, CC_A), CC3(S, CC_S), CC3(NS, CC_NS),
	CC3(P, CC_P), CC3(NP, CC_NP), CC3(L, CC_L), CC3(NL, CC_GE), CC3(LE, CC_LE),
	CC3(NLE, CC_G),
#undef CC3
	{ ZYDIS_MNEMONIC_JRCXZ, OP_JCC, CC_RCXZ }, { ZYDIS_MNEMONIC_JECXZ, OP_JCC, CC_RCXZ },
	{ ZYDIS_MNEMONIC_LOOP, OP_JCC, CC_LOOP },
};

static const mn_op *lookup(ZydisMnemonic mn)
{
	static uint8_t op_of[ZYDIS_MNEMONIC_MAX_VALUE + 1];
	static uint8_t cc_of[ZYDIS_MNEMONIC_MAX_VALUE + 1];
	static bool built;
	static mn_op result;
	if (!built) {
		memset(cc_of, CC_NONE, sizeof cc_of);
		for (size_t i = 0; i < sizeof mn_table / sizeof *mn_table; i++) {
			op_of[mn_table[i].mn] = mn_table[i].op;
			cc_of[mn_table[i].mn] = mn_table[i].cc;
		}
		built = true;
	}
	result.op = mn <= ZYDIS_MNEMONIC_MAX_VALUE ? op_of[mn] : OP_OTHER;
	result.cc = mn <= ZYDIS_MNEMONIC_MAX_VALUE ? cc_of[mn] : CC_NONE;
	return &result;
}

/* ---------------------------------------------------------- registers */

/* enum reg of a Zydis GPR (any width), or R_NONE. */
static uint8_t gpr(ZydisRegister r, uint8_t *width, bool *high8)
{
	ZydisRegisterClass c = ZydisRegisterGetClass(r);
	*high8 = false;
	switch (c) {
	case ZYDIS_REGCLASS_GPR8:
		*width = 1;
		*high8 = r == ZYDIS_REGISTER_AH || r == ZYDIS_REGISTER_CH ||
			 r == ZYDIS_REGISTER_DH || r == ZYDIS_REGISTER_BH;
		break;
	case ZYDIS_REGCLASS_GPR16: *width = 2; break;
	case ZYDIS_REGCLASS_GPR32: *width = 4; break;
	case ZYDIS_REGCLASS_GPR64: *width = 8; break;
	default: return R_NONE;
	}
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (big < ZYDIS_REGISTER_RAX || big > ZYDIS_REGISTER_R15)
		return R_NONE;
	return (uint8_t)(big - ZYDIS_REGISTER_RAX);
}

static bool is_flags(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_RFLAGS || r == ZYDIS_REGISTER_EFLAGS ||
	       r == ZYDIS_REGISTER_FLAGS;
}

static void note_read(insn *in, ZydisRegister r)
{
	uint8_t w;
	bool h;
	uint8_t g = gpr(r, &w, &h);
	if (g != R_NONE)
		in->reads |= REG_BIT(g);
	else if (is_flags(r))
		in->reads |= REG_BIT(R_FLAGS);
	else if (r == ZYDIS_REGISTER_RIP || r == ZYDIS_REGISTER_EIP)
		in->reads |= REG_BIT(R_RIP);
}

static void note_write(insn *in, ZydisRegister r)
{
	uint8_t w;
	bool h;
	uint8_t g = gpr(r, &w, &h);
	if (g != R_NONE) {
		/* the widest write wins (e.g. mul writes rdx and rax) */
		if (!(in->writes & REG_BIT(g)) || w > in->wsize[g])
			in->wsize[g] = w;
		in->writes |= REG_BIT(g);
	} else if (is_flags(r)) {
		in->writes |= REG_BIT(R_FLAGS);
	}
}

static uint8_t flag_bits(ZydisAccessedFlagsMask m)
{
	uint8_t f = 0;
	if (m & ZYDIS_CPUFLAG_CF) f |= FL_CF;
	if (m & ZYDIS_CPUFLAG_PF) f |= FL_PF;
	if (m & ZYDIS_CPUFLAG_AF) f |= FL_AF;
	if (m & ZYDIS_CPUFLAG_ZF) f |= FL_ZF;
	if (m & ZYDIS_CPUFLAG_SF) f |= FL_SF;
	if (m & ZYDIS_CPUFLAG_OF) f |= FL_OF;
	return f;
}

/* ----------------------------------------------------------- memory */

static uint8_t seg_of(ZydisRegister s)
{
	return s == ZYDIS_REGISTER_FS ? SEG_FS : s == ZYDIS_REGISTER_GS ? SEG_GS : SEG_NONE;
}

static mem_access mem_from(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *op,
			   uint64_t addr)
{
	mem_access m = { .base = R_NONE, .index = R_NONE, .scale = 1 };
	uint8_t w;
	bool h;
	m.size = (uint16_t)(op->size / 8);
	m.seg = seg_of(op->mem.segment);
	m.addr32 = zi->address_width == 32;
	m.disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	if (op->mem.base == ZYDIS_REGISTER_RIP || op->mem.base == ZYDIS_REGISTER_EIP) {
		m.flags |= MEM_RIPREL;
		m.disp = (int64_t)(addr + zi->length + (uint64_t)m.disp);
	} else if (op->mem.base != ZYDIS_REGISTER_NONE) {
		m.base = gpr(op->mem.base, &w, &h);
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE) {
		m.index = gpr(op->mem.index, &w, &h);
		m.scale = op->mem.scale ? op->mem.scale : 1;
	}
	if (op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
		m.flags |= MEM_IMPLICIT;
	return m;
}

static uint8_t kind_of(ZydisOperandActions a)
{
	uint8_t k = 0;
	if (a & ZYDIS_OPERAND_ACTION_MASK_READ)
		k |= ACC_R;
	if (a & ZYDIS_OPERAND_ACTION_MASK_WRITE)
		k |= ACC_W;
	return k;
}

static void add_mem(insn *in, mem_access m)
{
	if (in->nmem < INSN_MAX_MEM)
		in->mem[in->nmem++] = m;
}

static mem_access stack_slot(uint8_t kind, uint8_t base, int64_t disp, uint16_t size)
{
	return (mem_access){ .kind = kind, .base = base, .index = R_NONE, .scale = 1,
			     .disp = disp, .size = size, .flags = MEM_IMPLICIT };
}

static mem_access string_slot(uint8_t kind, uint8_t base, uint16_t size, bool rep)
{
	mem_access m = stack_slot(kind, base, 0, size);
	if (rep)
		m.flags |= MEM_REP | MEM_COND;
	return m;
}

/* Data accesses in the order the CPU makes them. */
static void collect_mem(insn *in, const ZydisDecodedInstruction *zi,
			const ZydisDecodedOperand *ops)
{
	bool rep = zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
				     ZYDIS_ATTRIB_HAS_REPNE);
	uint16_t esz = (uint16_t)(zi->operand_width / 8);
	const ZydisDecodedOperand *explicit_mem = NULL;
	for (unsigned i = 0; i < zi->operand_count_visible; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[i].mem.type == ZYDIS_MEMOP_TYPE_MEM)
			explicit_mem = &ops[i];

	switch (in->op) {
	case OP_PUSH:
		if (explicit_mem) {
			mem_access m = mem_from(zi, explicit_mem, in->addr);
			m.kind = ACC_R;
			add_mem(in, m);
		}
		add_mem(in, stack_slot(ACC_W, R_SP, -(int64_t)esz, esz));
		return;
	case OP_POP:
		add_mem(in, stack_slot(ACC_R, R_SP, 0, esz));
		if (explicit_mem) {
			mem_access m = mem_from(zi, explicit_mem, in->addr);
			m.kind = ACC_W;
			add_mem(in, m);
		}
		return;
	case OP_CALL:
		if (explicit_mem) {
			mem_access m = mem_from(zi, explicit_mem, in->addr);
			m.kind = ACC_R;
			add_mem(in, m);
		}
		add_mem(in, stack_slot(ACC_W, R_SP, -8, 8));
		return;
	case OP_RET:
		add_mem(in, stack_slot(ACC_R, R_SP, 0, 8));
		return;
	case OP_LEAVE:
		add_mem(in, stack_slot(ACC_R, R_BP, 0, 8));
		return;
	case OP_MOVS:
		add_mem(in, string_slot(ACC_R, R_SI, esz, rep));
		add_mem(in, string_slot(ACC_W, R_DI, esz, rep));
		return;
	case OP_STOS:
		add_mem(in, string_slot(ACC_W, R_DI, esz, rep));
		return;
	case OP_LODS:
		add_mem(in, string_slot(ACC_R, R_SI, esz, rep));
		return;
	case OP_CMPS:
		add_mem(in, string_slot(ACC_R, R_SI, esz, rep));
		add_mem(in, string_slot(ACC_R, R_DI, esz, rep));
		return;
	case OP_SCAS:
		add_mem(in, string_slot(ACC_R, R_DI, esz, rep));
		return;
	case OP_NOP:
		return;
	default:
		break;
	}
	if (zi->meta.category == ZYDIS_CATEGORY_PREFETCH)
		return;
	for (unsigned i = 0; i < zi->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		if (op->mem.type == ZYDIS_MEMOP_TYPE_AGEN) {
			/* lea: an address computation, kept past the counted ones */
			mem_access m = mem_from(zi, op, in->addr);
			m.kind = 0;
			in->mem[INSN_MAX_MEM] = m;
			continue;
		}
		uint8_t k = kind_of(op->actions);
		if (!k || op->mem.type == ZYDIS_MEMOP_TYPE_MIB)
			continue;
		mem_access m = mem_from(zi, op, in->addr);
		m.kind = k;
		add_mem(in, m);
	}
}

/* ---------------------------------------------------------- operands */

static void collect_operands(insn *in, const ZydisDecodedInstruction *zi,
			     const ZydisDecodedOperand *ops)
{
	for (unsigned i = 0; i < zi->operand_count_visible && in->nopd < INSN_MAX_OPD; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		operand *o = &in->opd[in->nopd++];
		o->size = (uint8_t)(op->size / 8);
		switch (op->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER: {
			uint8_t w;
			o->reg = gpr(op->reg.value, &w, &o->high8);
			o->type = o->reg == R_NONE ? OPD_OTHER : OPD_REG;
			break;
		}
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			o->type = OPD_IMM;
			o->imm = op->imm.is_signed ? op->imm.value.s : (int64_t)op->imm.value.u;
			/* unsigned immediates narrower than 64 bits stay as encoded */
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			o->type = OPD_MEM;
			if (op->mem.type == ZYDIS_MEMOP_TYPE_AGEN) {
				o->mem = INSN_MAX_MEM;
			} else {
				/* at most one explicit memory operand */
				for (unsigned k = 0; k < in->nmem; k++)
					if (!(in->mem[k].flags & MEM_IMPLICIT)) {
						o->mem = (uint8_t)k;
						break;
					}
			}
			break;
		default:
			o->type = OPD_OTHER;
			break;
		}
	}
}

static void collect_regs(insn *in, const ZydisDecodedInstruction *zi,
			 const ZydisDecodedOperand *ops)
{
	for (unsigned i = 0; i < zi->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				note_read(in, op->reg.value);
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				note_write(in, op->reg.value);
		} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			note_read(in, op->mem.base);
			note_read(in, op->mem.index);
		}
	}
	if (zi->cpu_flags) {
		in->flags_read = flag_bits(zi->cpu_flags->tested);
		in->flags_written = flag_bits(zi->cpu_flags->modified | zi->cpu_flags->set_0 |
					      zi->cpu_flags->set_1 | zi->cpu_flags->undefined);
	}
	if (in->flags_read)
		in->reads |= REG_BIT(R_FLAGS);
	if (in->flags_written)
		in->writes |= REG_BIT(R_FLAGS);
}

/* ------------------------------------------------------------- flow */

static void set_flow(insn *in, const ZydisDecodedInstruction *zi,
		     const ZydisDecodedOperand *ops)
{
	bool rel = zi->operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		   ops[0].imm.is_relative;
	uint64_t target = 0;
	if (rel)
		target = in->addr + zi->length + (uint64_t)ops[0].imm.value.s;
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		in->flow = FLOW_CJUMP;
		in->target = target;
		if (in->op != OP_JCC) {
			/* loope/loopne and friends */
			in->op = OP_JCC;
			in->cond = CC_LOOP;
		}
		return;
	case ZYDIS_CATEGORY_UNCOND_BR:
		in->flow = rel ? FLOW_JUMP : FLOW_IJUMP;
		in->target = target;
		return;
	case ZYDIS_CATEGORY_CALL:
		in->flow = rel ? FLOW_CALL : FLOW_ICALL;
		in->target = target;
		return;
	case ZYDIS_CATEGORY_RET:
		in->flow = FLOW_RET;
		return;
	case ZYDIS_CATEGORY_SYSCALL:
		in->flow = FLOW_SYSCALL;
		return;
	default:
		break;
	}
	if (in->op == OP_HALT || zi->mnemonic == ZYDIS_MNEMONIC_INT1 ||
	    zi->mnemonic == ZYDIS_MNEMONIC_IRETQ || zi->mnemonic == ZYDIS_MNEMONIC_IRETD)
		in->flow = FLOW_HALT;
	else if (zi->mnemonic == ZYDIS_MNEMONIC_INT)
		in->flow = FLOW_SYSCALL;
}

int decode_insn(const uint8_t *code, size_t avail, uint64_t addr, insn *out)
{
	if (!ready)
		init();
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	memset(out, 0, sizeof *out);
	out->addr = addr;
	out->cond = CC_NONE;
	for (unsigned k = 0; k <= INSN_MAX_MEM; k++)
		out->mem[k].base = out->mem[k].index = R_NONE;
	if (!avail || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, code, avail, &zi, ops))) {
		out->len = 1;
		out->flow = FLOW_HALT;
		out->op = OP_HALT;
		strcpy(out->text, "(bad)");
		return -1;
	}
	out->len = zi.length;
	const mn_op *m = lookup(zi.mnemonic);
	out->op = m->op;
	out->cond = m->cc;
	/* movsd/cmpsd are also SSE instructions */
	if (out->op >= OP_MOVS && out->op <= OP_SCAS && zi.meta.category != ZYDIS_CATEGORY_STRINGOP)
		out->op = OP_OTHER;
	collect_regs(out, &zi, ops);
	collect_mem(out, &zi, ops);
	collect_operands(out, &zi, ops);
	set_flow(out, &zi, ops);
	if (out->op == OP_PUSH || out->op == OP_POP || out->op == OP_CALL || out->op == OP_RET) {
		out->reads |= REG_BIT(R_SP);
		out->writes |= REG_BIT(R_SP);
		out->wsize[R_SP] = 8;
	}
	if (ZYAN_FAILED(ZydisFormatterFormatInstruction(&formatter, &zi, ops, zi.operand_count_visible,
							 out->text, sizeof out->text, addr, ZYAN_NULL)))
		strcpy(out->text, "?");
	return 0;
}

const char *reg_name(unsigned r)
{
	static const char *const names[] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "flags", "rip",
	};
	return r < R_NREGS ? names[r] : "?";
}

const char *op_name(unsigned op)
{
	static const char *const names[OP_COUNT] = {
		"other", "nop", "mov", "movzx", "movsx", "lea", "add", "sub", "adc", "sbb",
		"inc", "dec", "neg", "not", "imul", "mul", "idiv", "div", "shl", "shr", "sar",
		"rol", "ror", "and", "or", "xor", "cmp", "test", "push", "pop", "leave",
		"enter", "call", "ret", "jmp", "jcc", "cmov", "setcc", "xchg", "cmpxchg",
		"xadd", "movs", "stos", "lods", "cmps", "scas", "syscall", "halt",
	};
	return op < OP_COUNT ? names[op] : "?";
}

const char *cond_name(unsigned cc)
{
	static const char *const names[] = {
		"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np",
		"l", "ge", "le", "g", "rcxz", "loop",
	};
	return cc < 18 ? names[cc] : "";
}
