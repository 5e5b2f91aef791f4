/* decode.c — x86-64 machine code into the arch-neutral instruction record
 * (analyzer.h).  The only file of the analysis that sees Zydis: everything
 * the later stages need — control kind, registers read and written with
 * their widths, flags, operands, and every data access with its kind, size
 * and address form, implicit ones included — is decided here, so x86
 * semantics live in one place.
 *
 * Zydis (4.0) already lists hidden operands: the stack slot of push/pop/
 * call/ret, the [rsi]/[rdi] of string ops, rsp/rcx/rflags updates.  This
 * file turns them into accesses and corrects the few places where Zydis'
 * operand is not the address the CPU uses (the stack slot of push and call
 * is rsp-size, not [rsp]; pop [rsp+d] addresses with the popped rsp). */
#include "analyzer/analyzer.h"

#include <Zydis/Zydis.h>
#include <pthread.h>
#include <string.h>

static ZydisDecoder decoder;
static ZydisFormatter formatter;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Text like objdump's: "mov rax, qword ptr [rbp-0x8]", lowercase hex, no
 * zero padding, sizes always written. */
static void init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&formatter, ZYDIS_FORMATTER_STYLE_INTEL);
	ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE);
	ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE);
	ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE,
				  ZYDIS_PADDING_DISABLED);
	ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_ADDR_PADDING_RELATIVE,
				  ZYDIS_PADDING_DISABLED);
	ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_DISP_PADDING,
				  ZYDIS_PADDING_DISABLED);
	ZydisFormatterSetProperty(&formatter, ZYDIS_FORMATTER_PROP_IMM_PADDING,
				  ZYDIS_PADDING_DISABLED);
}

/* ------------------------------------------------------------ mnemonics */

/* enum op per Zydis mnemonic; unlisted mnemonics are OP_OTHER (0).  `cc`
 * is meaningful only for OP_JCC, OP_CMOV and OP_SETCC. */
typedef struct mn_info {
	uint8_t op;
	uint8_t cc;
} mn_info;

#define MN(m, o) [ZYDIS_MNEMONIC_##m] = { o, 0 }
#define CC3(m, c) [ZYDIS_MNEMONIC_J##m] = { OP_JCC, c }, \
	[ZYDIS_MNEMONIC_CMOV##m] = { OP_CMOV, c }, [ZYDIS_MNEMONIC_SET##m] = { OP_SETCC, c }
#define STR4(m, o) MN(m##B, o), MN(m##W, o), MN(m##D, o), MN(m##Q, o)

static const mn_info mn_table[ZYDIS_MNEMONIC_MAX_VALUE + 1] = {
	MN(NOP, OP_NOP), MN(ENDBR64, OP_NOP), MN(ENDBR32, OP_NOP), MN(PAUSE, OP_NOP),
	MN(MOV, OP_MOV), MN(MOVZX, OP_MOVZX),
	/* cbw/cwde/cdqe sign-extend the low half of rax into rax; cwd/cdq/cqo
	 * write rdx and stay OP_OTHER */
	MN(MOVSX, OP_MOVSX), MN(MOVSXD, OP_MOVSX),
	MN(CBW, OP_MOVSX), MN(CWDE, OP_MOVSX), MN(CDQE, OP_MOVSX),
	MN(LEA, OP_LEA), MN(ADD, OP_ADD), MN(SUB, OP_SUB), MN(ADC, OP_ADC), MN(SBB, OP_SBB),
	MN(INC, OP_INC), MN(DEC, OP_DEC), MN(NEG, OP_NEG), MN(NOT, OP_NOT),
	MN(IMUL, OP_IMUL), MN(MUL, OP_MUL), MN(IDIV, OP_IDIV), MN(DIV, OP_DIV),
	MN(SHL, OP_SHL), MN(SHR, OP_SHR), MN(SAR, OP_SAR), MN(ROL, OP_ROL), MN(ROR, OP_ROR),
	MN(AND, OP_AND), MN(OR, OP_OR), MN(XOR, OP_XOR), MN(CMP, OP_CMP), MN(TEST, OP_TEST),
	/* pushf/popf move rsp like any push/pop */
	MN(PUSH, OP_PUSH), MN(PUSHF, OP_PUSH), MN(PUSHFQ, OP_PUSH),
	MN(POP, OP_POP), MN(POPF, OP_POP), MN(POPFQ, OP_POP),
	MN(LEAVE, OP_LEAVE), MN(ENTER, OP_ENTER),
	MN(CALL, OP_CALL), MN(RET, OP_RET), MN(JMP, OP_JMP),
	MN(XCHG, OP_XCHG), MN(CMPXCHG, OP_CMPXCHG), MN(XADD, OP_XADD),
	/* movsd/cmpsd are also SSE mnemonics: decode_insn checks the category */
	STR4(MOVS, OP_MOVS), STR4(STOS, OP_STOS), STR4(LODS, OP_LODS),
	STR4(CMPS, OP_CMPS), STR4(SCAS, OP_SCAS),
	MN(SYSCALL, OP_SYSCALL), MN(SYSENTER, OP_SYSCALL),
	MN(HLT, OP_HALT), MN(UD0, OP_HALT), MN(UD1, OP_HALT), MN(UD2, OP_HALT),
	MN(INT3, OP_HALT), MN(INT1, OP_HALT),
	CC3(O, CC_O), CC3(NO, CC_NO), CC3(B, CC_B), CC3(NB, CC_AE),
	CC3(Z, CC_E), CC3(NZ, CC_NE), CC3(BE, CC_BE), CC3(NBE, CC_A),
	CC3(S, CC_S), CC3(NS, CC_NS), CC3(P, CC_P), CC3(NP, CC_NP),
	CC3(L, CC_L), CC3(NL, CC_GE), CC3(LE, CC_LE), CC3(NLE, CC_G),
	[ZYDIS_MNEMONIC_JRCXZ] = { OP_JCC, CC_RCXZ }, [ZYDIS_MNEMONIC_JECXZ] = { OP_JCC, CC_RCXZ },
	/* loope/loopne also test ZF; enum cond has no code for that */
	[ZYDIS_MNEMONIC_LOOP] = { OP_JCC, CC_LOOP }, [ZYDIS_MNEMONIC_LOOPE] = { OP_JCC, CC_LOOP },
	[ZYDIS_MNEMONIC_LOOPNE] = { OP_JCC, CC_LOOP },
};

#undef MN
#undef CC3
#undef STR4

static void classify(insn *in, const ZydisDecodedInstruction *zi)
{
	mn_info m = zi->mnemonic <= ZYDIS_MNEMONIC_MAX_VALUE ? mn_table[zi->mnemonic]
							      : (mn_info){ OP_OTHER, 0 };
	if (m.op >= OP_MOVS && m.op <= OP_SCAS && zi->meta.category != ZYDIS_CATEGORY_STRINGOP)
		m.op = OP_OTHER;
	in->op = m.op;
	in->cond = m.op == OP_JCC || m.op == OP_CMOV || m.op == OP_SETCC ? m.cc : CC_NONE;
}

/* Cache-control instructions name a line, they do not read it (valgrind
 * reports no access either). */
static bool is_cache_control(ZydisMnemonic mn)
{
	return mn == ZYDIS_MNEMONIC_CLFLUSH || mn == ZYDIS_MNEMONIC_CLFLUSHOPT ||
	       mn == ZYDIS_MNEMONIC_CLWB || mn == ZYDIS_MNEMONIC_CLDEMOTE;
}

/* bt/bts/btr/btc with a register bit offset address memory beyond their
 * operand: the effective address moves by offset/8. */
static bool is_bit_test(ZydisMnemonic mn)
{
	return mn == ZYDIS_MNEMONIC_BT || mn == ZYDIS_MNEMONIC_BTS ||
	       mn == ZYDIS_MNEMONIC_BTR || mn == ZYDIS_MNEMONIC_BTC;
}

/* ------------------------------------------------------------ registers */

/* enum reg of a Zydis GPR of any width, or R_NONE; its width in bytes. */
static uint8_t gpr(ZydisRegister r, uint8_t *width, bool *high8)
{
	*high8 = false;
	switch (ZydisRegisterGetClass(r)) {
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

static uint8_t gpr_of(ZydisRegister r)
{
	uint8_t w;
	bool h;
	return gpr(r, &w, &h);
}

static bool is_flags(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_RFLAGS || r == ZYDIS_REGISTER_EFLAGS ||
	       r == ZYDIS_REGISTER_FLAGS;
}

static void note_read(insn *in, ZydisRegister r)
{
	uint8_t g = gpr_of(r);
	if (g != R_NONE)
		in->reads |= REG_BIT(g);
	else if (is_flags(r))
		in->reads |= REG_BIT(R_FLAGS);
}

static void note_write(insn *in, ZydisRegister r)
{
	uint8_t w;
	bool h;
	uint8_t g = gpr(r, &w, &h);
	if (g != R_NONE) {
		/* one register named twice (xchg ah, al): the widest write wins */
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

/* Registers and flags, hidden operands included; registers forming an
 * address are reads.  rip is recorded only when an address depends on it. */
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
			if (op->mem.base == ZYDIS_REGISTER_RIP || op->mem.base == ZYDIS_REGISTER_EIP)
				in->reads |= REG_BIT(R_RIP);
		}
	}
	const ZydisAccessedFlags *f = zi->cpu_flags;
	in->flags_read = flag_bits(f->tested);
	in->flags_written = flag_bits(f->modified | f->set_0 | f->set_1 | f->undefined);
	if (in->flags_read)
		in->reads |= REG_BIT(R_FLAGS);
	if (in->flags_written)
		in->writes |= REG_BIT(R_FLAGS);
}

/* What the kernel does at a system call, which Zydis does not describe:
 * it reads the number and the arguments and returns a 64-bit result in
 * rax (x86-64 syscall ABI; the int 0x80 ABI passes ebx, ecx, edx, esi,
 * edi, ebp). */
static void kernel_effects(insn *in, bool int80)
{
	static const uint8_t args64[] = { R_AX, R_DI, R_SI, R_DX, R_10, R_8, R_9 };
	static const uint8_t args32[] = { R_AX, R_BX, R_CX, R_DX, R_SI, R_DI, R_BP };
	const uint8_t *a = int80 ? args32 : args64;
	for (unsigned k = 0; k < 7; k++)
		in->reads |= REG_BIT(a[k]);
	in->writes |= REG_BIT(R_AX);
	in->wsize[R_AX] = 8;
}

/* ---------------------------------------------------------------- memory */

static uint8_t seg_of(ZydisRegister s)
{
	return s == ZYDIS_REGISTER_FS ? SEG_FS : s == ZYDIS_REGISTER_GS ? SEG_GS : SEG_NONE;
}

static mem_access mem_from(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *op,
			   uint64_t addr)
{
	mem_access m = { .base = R_NONE, .index = R_NONE, .scale = 1 };
	m.size = (uint16_t)(op->size / 8);
	m.seg = seg_of(op->mem.segment);
	m.addr32 = zi->address_width == 32;
	m.disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
	if (op->mem.base == ZYDIS_REGISTER_RIP || op->mem.base == ZYDIS_REGISTER_EIP) {
		uint64_t a = addr + zi->length + (uint64_t)m.disp;
		m.flags |= MEM_RIPREL;
		m.disp = (int64_t)(m.addr32 ? (uint32_t)a : a);
	} else {
		m.base = gpr_of(op->mem.base);
	}
	if (op->mem.type == ZYDIS_MEMOP_TYPE_VSIB) {
		m.flags |= MEM_INEXACT; /* the index is a vector register */
	} else if (op->mem.index != ZYDIS_REGISTER_NONE) {
		m.index = gpr_of(op->mem.index);
		m.scale = op->mem.scale ? op->mem.scale : 1;
	}
	if (op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
		m.flags |= MEM_IMPLICIT;
	return m;
}

/* Whether a memory operand is a data access.  lea and bndmk compute an
 * address; nops, prefetches and cache control name one without touching
 * it; ud* and hlt fault before any access. */
static bool is_access(const insn *in, const ZydisDecodedInstruction *zi,
		      const ZydisDecodedOperand *op)
{
	if (op->mem.type == ZYDIS_MEMOP_TYPE_AGEN || op->mem.type == ZYDIS_MEMOP_TYPE_MIB)
		return false;
	if (!(op->actions & (ZYDIS_OPERAND_ACTION_MASK_READ | ZYDIS_OPERAND_ACTION_MASK_WRITE)))
		return false;
	if (in->op == OP_NOP || in->op == OP_HALT)
		return false;
	return zi->meta.category != ZYDIS_CATEGORY_PREFETCH && !is_cache_control(zi->mnemonic);
}

static uint8_t kind_of(ZydisOperandActions a)
{
	uint8_t k = 0;
	if (a & ZYDIS_OPERAND_ACTION_MASK_READ)
		k |= ACC_R;
	/* cmpxchg writes its destination back even when the compare fails */
	if (a & ZYDIS_OPERAND_ACTION_MASK_WRITE)
		k |= ACC_W;
	return k;
}

/* Zydis gives the stack operand of push/call as [rsp]; the CPU writes
 * below it.  pop [rsp+d] computes its address after rsp has moved up
 * (Intel SDM, POP), which valgrind confirms. */
static void fix_stack_slot(const ZydisDecodedInstruction *zi, mem_access *m)
{
	if (m->base != R_SP || m->index != R_NONE)
		return;
	bool hidden = m->flags & MEM_IMPLICIT;
	if (hidden) /* a 0x67 prefix does not shrink the stack pointer */
		m->addr32 = false;
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_PUSH:
	case ZYDIS_CATEGORY_CALL:
		if (hidden && m->kind == ACC_W)
			m->disp -= m->size;
		break;
	case ZYDIS_CATEGORY_POP:
		if (!hidden)
			m->disp += zi->operand_width / 8;
		break;
	default:
		break;
	}
}

static void add_mem(insn *in, mem_access m)
{
	if (in->nmem < INSN_MAX_MEM)
		in->mem[in->nmem++] = m;
}

static mem_access stack_access(uint8_t kind, uint8_t base, int64_t disp)
{
	return (mem_access){ .kind = kind, .base = base, .index = R_NONE, .scale = 1,
			     .size = 8, .disp = disp, .flags = MEM_IMPLICIT,
			     .rk = MEM_RK_NONE };
}

/* enter imm16, L: push rbp, then for L > 0 copy L-1 outer frame pointers
 * from [rbp-8i] and push the new frame pointer (Intel SDM, ENTER).  Only
 * the first INSN_MAX_MEM accesses fit: exact for L <= 1, which is all
 * compilers emit. */
static void enter_accesses(insn *in, const ZydisDecodedOperand *ops)
{
	unsigned level = (unsigned)(ops[1].imm.value.u & 31);
	add_mem(in, stack_access(ACC_W, R_SP, -8));
	for (unsigned i = 1; i < level; i++) {
		add_mem(in, stack_access(ACC_R, R_BP, -8 * (int64_t)i));
		add_mem(in, stack_access(ACC_W, R_SP, -8 - 8 * (int64_t)i));
	}
	if (level)
		add_mem(in, stack_access(ACC_W, R_SP, -8 - 8 * (int64_t)level));
}

/* The number the recorder gives Zydis operand i (replay/rec_emit.c,
 * rec_memop): memory operands with an action, explicit ones first, then
 * hidden ones, each group in Zydis's order.  movs lists [rdi] before
 * [rsi], the reverse of the access order, so the two orders differ. */
static uint8_t recorder_rank(const ZydisDecodedInstruction *zi,
			     const ZydisDecodedOperand *ops, unsigned i)
{
	bool hidden = ops[i].visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT;
	unsigned n = 0;
	for (unsigned j = 0; j < zi->operand_count; j++) {
		const ZydisDecodedOperand *o = &ops[j];
		bool jh = o->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT;
		if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->mem.type != ZYDIS_MEMOP_TYPE_MEM ||
		    !o->actions)
			continue;
		if ((!jh && hidden) || (jh == hidden && j < i))
			n++;
	}
	return (uint8_t)n;
}

/* Every data access in the order the CPU makes it: reads (and
 * read-modify-writes) before pure writes, which is the order of push [m],
 * pop [m], call [m] and movs.  slot[i] receives the mem[] index of Zydis
 * operand i (INSN_MAX_MEM for an address that is not accessed). */
static void collect_mem(insn *in, const ZydisDecodedInstruction *zi,
			const ZydisDecodedOperand *ops, uint8_t *slot)
{
	bool rep = zi->meta.category == ZYDIS_CATEGORY_STRINGOP &&
		   (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
				      ZYDIS_ATTRIB_HAS_REPNE));
	bool inexact = zi->mnemonic == ZYDIS_MNEMONIC_XLAT ||
		       (is_bit_test(zi->mnemonic) && ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER);
	mem_access acc[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t src[ZYDIS_MAX_OPERAND_COUNT];
	unsigned n = 0;

	if (in->op == OP_ENTER) {
		enter_accesses(in, ops);
		return;
	}
	for (unsigned i = 0; i < zi->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		mem_access m = mem_from(zi, op, in->addr);
		if (!is_access(in, zi, op)) {
			in->mem[INSN_MAX_MEM] = m; /* kind 0: not counted in nmem */
			slot[i] = INSN_MAX_MEM;
			continue;
		}
		m.kind = kind_of(op->actions);
		/* Zydis has xsave's area read and written; the processor writes
		 * it (the loader's lazy binding saves the vector state so) */
		if (zi->mnemonic == ZYDIS_MNEMONIC_XSAVE || zi->mnemonic == ZYDIS_MNEMONIC_XSAVE64 ||
		    zi->mnemonic == ZYDIS_MNEMONIC_XSAVEOPT || zi->mnemonic == ZYDIS_MNEMONIC_XSAVEOPT64)
			m.kind = ACC_W;
		m.rk = recorder_rank(zi, ops, i);
		fix_stack_slot(zi, &m);
		if (rep)
			m.flags |= MEM_REP | MEM_COND;
		if (inexact)
			m.flags |= MEM_INEXACT;
		src[n] = (uint8_t)i;
		acc[n++] = m;
	}
	for (unsigned pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < n; k++)
			if (((acc[k].kind & ACC_R) != 0) == (pass == 0) && in->nmem < INSN_MAX_MEM) {
				slot[src[k]] = in->nmem;
				add_mem(in, acc[k]);
			}
	/* Two reads: valgrind's cmps loads [rdi] before [rsi]; follow the
	 * oracle, the SDM does not say. */
	if (in->op == OP_CMPS && in->nmem == 2 && in->mem[0].base == R_SI) {
		mem_access t = in->mem[0];
		in->mem[0] = in->mem[1];
		in->mem[1] = t;
	}
}

/* -------------------------------------------------------------- operands */

static void collect_operands(insn *in, const ZydisDecodedInstruction *zi,
			     const ZydisDecodedOperand *ops, const uint8_t *slot)
{
	for (unsigned i = 0; i < zi->operand_count_visible && in->nopd < INSN_MAX_OPD; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		operand *o = &in->opd[in->nopd++];
		unsigned bytes = op->size / 8;
		o->size = bytes > 255 ? 0 : (uint8_t)bytes; /* fxsave & co: see mem[].size */
		o->reg = R_NONE;
		switch (op->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER: {
			uint8_t w;
			o->reg = gpr(op->reg.value, &w, &o->high8);
			o->type = o->reg == R_NONE ? OPD_OTHER : OPD_REG;
			break;
		}
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			/* Zydis has already sign-extended signed immediates to 64
			 * bits (imm8 of add r/m64, imm32 of mov r/m64); unsigned
			 * ones (shift counts, enter, ret n) are small */
			o->type = OPD_IMM;
			o->imm = op->imm.is_signed ? op->imm.value.s : (int64_t)op->imm.value.u;
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			o->type = OPD_MEM;
			o->mem = slot[i];
			break;
		default: /* far pointers */
			o->type = OPD_OTHER;
			break;
		}
	}
}

/* ------------------------------------------------------------------ flow */

static void set_flow(insn *in, const ZydisDecodedInstruction *zi,
		     const ZydisDecodedOperand *ops)
{
	bool rel = zi->operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		   ops[0].imm.is_relative;
	uint64_t target = rel ? in->addr + zi->length + (uint64_t)ops[0].imm.value.s : 0;
	/* RTM: an abort, wherever it happens in the transaction, rolls back
	 * every write (the recorder's words and cursor too) and resumes at
	 * xbegin's fallback with eax set.  So xabort and xend are straight-line
	 * code, and an xbegin whose fallback is the next instruction (glibc's
	 * lock elision, the _xbegin() intrinsic) only defines eax.  Another
	 * fallback stays a conditional jump, which no probe can observe: the
	 * recorder refuses it by name. */
	if (zi->mnemonic == ZYDIS_MNEMONIC_XABORT || zi->mnemonic == ZYDIS_MNEMONIC_XEND ||
	    (zi->mnemonic == ZYDIS_MNEMONIC_XBEGIN && target == in->addr + zi->length)) {
		in->flow = FLOW_NEXT;
		return;
	}
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		in->flow = FLOW_CJUMP;
		in->target = target;
		return;
	case ZYDIS_CATEGORY_UNCOND_BR:
		in->flow = rel ? FLOW_JUMP : FLOW_IJUMP;
		in->target = target;
		return;
	case ZYDIS_CATEGORY_CALL:
		in->flow = rel ? FLOW_CALL : FLOW_ICALL;
		in->target = target;
		in->clobbers = ABI_CALL_CLOBBERS;
		return;
	case ZYDIS_CATEGORY_RET:
		in->flow = FLOW_RET;
		return;
	case ZYDIS_CATEGORY_SYSCALL:
		in->flow = FLOW_SYSCALL;
		kernel_effects(in, false);
		return;
	default:
		break;
	}
	if (zi->mnemonic == ZYDIS_MNEMONIC_INT && ops[0].imm.value.u == 0x80) {
		in->flow = FLOW_SYSCALL;
		in->op = OP_SYSCALL;
		kernel_effects(in, true);
	} else if (in->op == OP_HALT || zi->meta.category == ZYDIS_CATEGORY_INTERRUPT) {
		/* other int n, into: the kernel sends a signal */
		in->flow = FLOW_HALT;
		in->op = OP_HALT;
	}
}

/* -------------------------------------------------------------- entry */

static void clear(insn *in, uint64_t addr)
{
	memset(in, 0, sizeof *in);
	in->addr = addr;
	in->cond = CC_NONE;
	for (unsigned k = 0; k <= INSN_MAX_MEM; k++) {
		in->mem[k].base = in->mem[k].index = R_NONE;
		in->mem[k].scale = 1;
	}
}

static int bad(insn *in)
{
	in->len = 1;
	in->flow = FLOW_HALT;
	in->op = OP_HALT;
	strcpy(in->text, "(bad)");
	return -1;
}

static void format(insn *in, const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops)
{
	char buf[256]; /* AVX-512 text can outgrow insn.text: truncate it */
	if (ZYAN_FAILED(ZydisFormatterFormatInstruction(&formatter, zi, ops,
							 zi->operand_count_visible, buf,
							 sizeof buf, in->addr, ZYAN_NULL)))
		strcpy(buf, "?");
	size_t n = strlen(buf);
	if (n >= sizeof in->text)
		n = sizeof in->text - 1;
	memcpy(in->text, buf, n);
	in->text[n] = '\0';
}

int decode_insn(const uint8_t *code, size_t avail, uint64_t addr, insn *out)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t slot[ZYDIS_MAX_OPERAND_COUNT] = { 0 };

	pthread_once(&init_once, init);
	clear(out, addr);
	if (!avail || ZYAN_FAILED(ZydisDecoderDecodeFull(&decoder, code, avail, &zi, ops)))
		return bad(out);
	out->len = zi.length;
	classify(out, &zi);
	collect_regs(out, &zi, ops);
	collect_mem(out, &zi, ops, slot);
	collect_operands(out, &zi, ops, slot);
	set_flow(out, &zi, ops);
	if (out->op == OP_NOP) {
		/* multi-byte nops name registers they do not use */
		out->reads = out->writes = 0;
		memset(out->wsize, 0, sizeof out->wsize);
	}
	format(out, &zi, ops);
	return 0;
}

/* ------------------------------------------------------------------ names */

const char *reg_name(unsigned r)
{
	static const char *const names[R_NREGS] = {
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
	return cc < sizeof names / sizeof *names ? names[cc] : "";
}
