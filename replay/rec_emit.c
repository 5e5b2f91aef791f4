/* rec_emit.c — trampoline code: for each site, the probes' stores into
 * the thread's buffer and the span's instructions relocated, in pages
 * mapped within rel32 reach of the text; and the map from trampoline code
 * back to original pcs (VT_TRAMPOLINE_MAP). */
#include "replay/rec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------------------ emitting */

static void rec_b(rec_emit *e, const void *bytes, size_t n)
{
	if (e->len + n > e->cap)
		rec_die("trampoline space exhausted");
	memcpy(e->p + e->len, bytes, n);
	e->len += n;
}

static void rec_b1(rec_emit *e, uint8_t b)
{
	rec_b(e, &b, 1);
}

static void rec_b4(rec_emit *e, int32_t v)
{
	rec_b(e, &v, 4);
}

static uint64_t rec_here(const rec_emit *e)
{
	return (uint64_t)(e->p + e->len);
}

static void rec_map(rec_emit *e, uint64_t from, uint64_t pc, uint32_t kind)
{
	if (e->nmap == e->capmap) {
		e->capmap = e->capmap ? 2 * e->capmap : 64;
		e->map = realloc(e->map, e->capmap * sizeof *e->map);
		if (!e->map)
			rec_die("out of memory");
	}
	e->map[e->nmap++] = (vt_map_entry){ from, pc - R.cur->img.bias,
		(uint32_t)(rec_here(e) - from), kind | R.cur->index << 16 };
}

/* A field at offset `at` of the code that depends on where the object or
 * the trampolines are (rec_cache.c moves a plan to another process by
 * these).  `target` is the address of the object it points at, if any: one
 * outside the object's image would not move with it, so such a plan is
 * not kept. */
static void rec_reloc(rec_emit *e, int kind, size_t at, uint64_t target)
{
	rec_relocs *r = &e->rel[kind];
	if ((kind == REC_REL32 || kind == REC_ABS64) &&
	    (target < R.cur->img.lo || target >= R.cur->img.hi))
		e->nocache = 1;
	if (at > UINT32_MAX)
		e->nocache = 1;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->off = realloc(r->off, r->cap * sizeof *r->off);
		if (!r->off)
			rec_die("out of memory");
	}
	r->off[r->n++] = (uint32_t)at;
}

/* A rel32 whose base is the end of a `len`-byte instruction at here(). */
static void rec_rel32(rec_emit *e, uint64_t target, size_t rest)
{
	int64_t d = (int64_t)(target - (rec_here(e) + 4 + rest));
	if (!rec_fits32(d))
		rec_die("target %" PRIx64 " out of rel32 reach of the "
			"trampolines", target);
	rec_reloc(e, REC_REL32, e->len, target);
	rec_b4(e, (int32_t)d);
}

static void rec_jmp(rec_emit *e, uint64_t target)
{
	rec_b1(e, 0xe9);
	rec_rel32(e, target, 0);
}

/* A rel32 to `target` from a relocated branch of the span: into the
 * trampolines where the site enters an int3 site's block there
 * (rec_plan_enters), or where a span holds the target (rec_site.land);
 * code to code, which no relocation moves. */
/* The index of landing point pc in e->land_pc, or e->nland. */
static size_t rec_land_index(const rec_emit *e, uint64_t pc)
{
	size_t lo = 0, hi = e->nland;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (e->land_pc[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->nland && e->land_pc[lo] == pc ? lo : e->nland;
}

static void rec_branch_rel32(rec_emit *e, uint64_t target)
{
	size_t lo = rec_land_index(e, target);
	if (lo < e->nland) {
		if (e->nfix == e->capfix) {
			e->capfix = e->capfix ? 2 * e->capfix : 64;
			e->fix = realloc(e->fix, e->capfix * sizeof *e->fix);
			if (!e->fix)
				rec_die("out of memory");
		}
		e->fix[e->nfix++] = (rec_fixup){ e->len, lo };
		rec_b4(e, 0);
		return;
	}
	if (!e->redir_from || target != e->redir_from) {
		rec_rel32(e, target, 0);
		return;
	}
	rec_b4(e, (int32_t)((int64_t)e->redir_to - (int64_t)(rec_here(e) + 4)));
}

static void rec_branch_jmp(rec_emit *e, uint64_t target)
{
	rec_b1(e, 0xe9);
	rec_branch_rel32(e, target);
}

/* `opcode [rip+lit]` where lit holds `value`: rel32 fixed up later. */
static void rec_riplit(rec_emit *e, const uint8_t *op, size_t n,
		       uint64_t value)
{
	if (e->nlit == 64)
		rec_die("too many literals in one trampoline");
	rec_b(e, op, n);
	e->lit[e->nlit++] = (rec_lit){ e->len, e->len + 4, value };
	rec_b4(e, 0);
}

static void rec_lits_place(rec_emit *e)
{
	while (e->len % 8)
		rec_b1(e, 0xcc);
	for (int i = 0; i < e->nlit; i++) {
		int32_t d = (int32_t)(e->len - e->lit[i].next);
		memcpy(e->p + e->lit[i].disp_at, &d, 4);
		rec_reloc(e, REC_ABS64, e->len, e->lit[i].value);
		rec_b(e, &e->lit[i].value, 8);
	}
	e->nlit = 0;
}

/* `opcode reg, [base + index*scale + disp32]`, REX.W, always SIB form.
 * base/index are GPR numbers, -1 for none (index never rsp). */
static void rec_modrm_mem(rec_emit *e, uint8_t opcode, int reg, int base,
			  int index, int scale, int32_t disp)
{
	uint8_t rex = 0x48 | (reg & 8 ? 4 : 0) | (index >= 8 ? 2 : 0) |
		      (base >= 8 ? 1 : 0);
	int ss = scale == 8 ? 3 : scale == 4 ? 2 : scale == 2 ? 1 : 0;
	uint8_t idx = index < 0 ? 4 : (uint8_t)(index & 7);
	rec_b1(e, rex);
	rec_b1(e, opcode);
	if (base < 0) {
		rec_b1(e, (uint8_t)(0x04 | (reg & 7) << 3));
		rec_b1(e, (uint8_t)(ss << 6 | idx << 3 | 5));
	} else {
		rec_b1(e, (uint8_t)(0x84 | (reg & 7) << 3));
		rec_b1(e, (uint8_t)(ss << 6 | idx << 3 | (base & 7)));
	}
	rec_b4(e, disp);
}

static const uint8_t rec_prologue[] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,	/* lea rsp, [rsp-128] */
	0x50,				/* push rax */
	0x52,				/* push rdx */
};
static const uint8_t rec_epilogue[] = {
	0x5a,				/* pop rdx */
	0x58,				/* pop rax */
	0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0,	/* lea rsp, [rsp+128] */
};
const uint8_t rec_store_insn[3] = { 0x48, 0x89, 0x02 }; /* mov [rdx], rax */

/* The store of a probe's word at the thread's cursor: `insn` (three
 * bytes, then imm32 if `imm`) between the cursor's load into rdx and its
 * move on. */
static void rec_store_by(rec_emit *e, const uint8_t insn[3], const int32_t *imm)
{
	rec_b(e, "\x64\x48\x8b\x14\x25", 5);	/* mov rdx, fs:[off] */
	rec_reloc(e, REC_CURSOR32, e->len, 0);
	rec_b4(e, (int32_t)R.cursor_off);
	rec_b(e, insn, 3);
	if (imm)
		rec_b4(e, *imm);
	rec_b(e, "\x48\x8d\x52\x08", 4);	/* lea rdx, [rdx+8] */
	rec_b(e, "\x64\x48\x89\x14\x25", 5);	/* mov fs:[off], rdx */
	rec_reloc(e, REC_CURSOR32, e->len, 0);
	rec_b4(e, (int32_t)R.cursor_off);
}

static void rec_store(rec_emit *e)
{
	rec_store_by(e, rec_store_insn, NULL);
}

/* A probe frame that stores the constant v (a conditional jump's outcome
 * on one of its ways, rec_tbit_split; a lone small word): rdx alone is
 * saved, no rax, no setcc.  Its store is the second form rec_at_store
 * knows. */
const uint8_t rec_store_imm_insn[3] = { 0x48, 0xc7, 0x02 }; /* mov qword [rdx], imm32 */

static void rec_store_const(rec_emit *e, const rec_insn *x, int32_t v)
{
	uint64_t from = rec_here(e);
	rec_b(e, rec_prologue, 5);		/* lea rsp, [rsp-128] */
	rec_b1(e, 0x52);			/* push rdx */
	rec_store_by(e, rec_store_imm_insn, &v);
	rec_b1(e, 0x5a);			/* pop rdx */
	rec_b(e, rec_epilogue + 2, sizeof rec_epilogue - 2);	/* lea rsp, [rsp+128] */
	rec_map(e, from, x->addr, VT_MAP_PROBE);
}

/* `op reg, fs:[rec_t + field]` (REX.W; op 8b load, 89 store). */
static void rec_fs(rec_emit *e, uint8_t op, int reg, int field)
{
	rec_b(e, "\x64\x48", 2);
	rec_b1(e, op);
	rec_b1(e, (uint8_t)(0x04 | reg << 3));
	rec_b1(e, 0x25);
	rec_reloc(e, REC_CURSOR32, e->len, 0);
	rec_b4(e, (int32_t)(R.cursor_off + field));
}

enum { REC_RAX = 0, REC_RDX = 2 };	/* register numbers */

/* rsp less the thread's previous one (PATCH_DSP); a value less delta
 * slot s (PATCH_DREG, PATCH_DADDR).  Runtime addresses are never this
 * small. */
#define REC_MINUS_LASTSP 1
#define REC_MINUS_DSLOT(s) (2 + (uint64_t)(s))

/* The value in rax less `minus` (a runtime address, or the thread's
 * previous rsp or delta slot, which then takes the value), recorded as a
 * word: the flush packs the small differences (format.h, vt_pack).
 * Flag-free; rdx, saved by the frame and reloaded by the store, is the
 * scratch. */
static void rec_minus(rec_emit *e, uint64_t minus)
{
	if (minus >= REC_MINUS_LASTSP && minus < REC_MINUS_DSLOT(PATCH_DSLOTS)) {
		int32_t at = minus == REC_MINUS_LASTSP ? REC_TLS_LASTSP :
			     REC_TLS_DSLOT + 8 * (int32_t)(minus - REC_MINUS_DSLOT(0));
		rec_fs(e, 0x8b, REC_RDX, at);
		rec_fs(e, 0x89, REC_RAX, at);
	} else {
		rec_b(e, "\x48\xba", 2);		/* mov rdx, imm64 */
		rec_reloc(e, REC_ABS64, e->len, minus);
		rec_b(e, &minus, 8);
	}
	/* rax - rdx, flag-free */
	rec_b(e, "\x48\xf7\xd2", 3);			/* not rdx */
	rec_b(e, "\x48\x8d\x44\x10\x01", 5);	/* lea rax, [rax+rdx+1] */
	rec_store(e);
}

/* rax = the program's value of GPR r at the probe frame. */
static void rec_get_reg(rec_emit *e, int r)
{
	if (r == SKEL_RAX)
		rec_b(e, "\x48\x8b\x44\x24\x08", 5);	/* mov rax, [rsp+8] */
	else if (r == SKEL_RDX)
		rec_b(e, "\x48\x8b\x04\x24", 4);	/* mov rax, [rsp] */
	else if (r == SKEL_RSP)
		rec_modrm_mem(e, 0x8d, 0, SKEL_RSP, -1, 0, REC_FRAME);
	else {
		rec_b1(e, (uint8_t)(0x48 | (r & 8 ? 4 : 0)));	/* mov rax, r */
		rec_b1(e, 0x89);
		rec_b1(e, (uint8_t)(0xc0 | (r & 7) << 3));
	}
}

static int rec_gpr(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return -1;
	if (ZydisRegisterGetClass(r) != ZYDIS_REGCLASS_GPR64)
		return -2;
	return ZydisRegisterGetId(r);
}

/* The k-th data memory operand of x: explicit ones first, then the hidden
 * ones, in Zydis operand order; agen (lea) and nop operands do not count. */
static const ZydisDecodedOperand *rec_memop(const rec_insn *x, uint32_t k)
{
	if (x->in.mnemonic == ZYDIS_MNEMONIC_NOP)
		return NULL;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < x->in.operand_count; i++) {
			const ZydisDecodedOperand *o = &x->op[i];
			int hidden = o->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT;
			if (hidden != pass || o->type != ZYDIS_OPERAND_TYPE_MEMORY ||
			    o->mem.type != ZYDIS_MEMOP_TYPE_MEM || !o->actions)
				continue;
			if (k-- == 0)
				return o;
		}
	return NULL;
}

/* rax = effective address of memory operand o of x, as the CPU computes
 * it when x executes (fs/gs base included). */
static int rec_get_addr(rec_emit *e, const rec_insn *x,
			const ZydisDecodedOperand *o)
{
	int64_t disp = o->mem.disp.value;
	/* 0x67 leaves the stack alone: `addr32 call` (libcrypt) pushes at
	 * rsp-8, as any call does */
	int stack = o->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN &&
		    (o->mem.base == ZYDIS_REGISTER_RSP ||
		     o->mem.base == ZYDIS_REGISTER_ESP) &&
		    o->mem.index == ZYDIS_REGISTER_NONE;
	if (x->in.address_width != 64 && !stack)
		return -1;
	if (o->mem.base == ZYDIS_REGISTER_RIP) {
		uint64_t a = x->addr + x->in.length + disp;
		rec_b(e, "\x48\xb8", 2);		/* mov rax, imm64 */
		rec_reloc(e, REC_ABS64, e->len, a);
		rec_b(e, &a, 8);
		return 0;
	}
	int base = stack ? SKEL_RSP : rec_gpr(o->mem.base);
	int index = rec_gpr(o->mem.index);
	if (base < -1 || index < -1)
		return -1;
	if (o->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN &&
	    base == SKEL_RSP && (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
		disp -= o->size / 8;	/* push, call: the slot below rsp */
	else if (x->in.mnemonic == ZYDIS_MNEMONIC_POP && base == SKEL_RSP &&
		 o->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
		disp += o->size / 8;	/* pop [rsp+d]: rsp after the pop */
	if (base == SKEL_RSP)
		disp += REC_FRAME;
	if (base == SKEL_RAX || index == SKEL_RAX)
		rec_b(e, "\x48\x8b\x44\x24\x08", 5);	/* mov rax, [rsp+8] */
	if (base == SKEL_RDX || index == SKEL_RDX)
		rec_b(e, "\x48\x8b\x14\x24", 4);	/* mov rdx, [rsp] */
	if (!rec_fits32(disp))
		return -1;
	rec_modrm_mem(e, 0x8d, SKEL_RAX, base, index,
		      index < 0 ? 0 : o->mem.scale, (int32_t)disp);
	if (o->mem.segment == ZYDIS_REGISTER_FS) {
		/* fs:0 holds the thread pointer itself (x86-64 TLS ABI) */
		rec_b(e, "\x64\x48\x8b\x14\x25\0\0\0\0", 9);
		rec_b(e, "\x48\x8d\x04\x10", 4);	/* lea rax, [rax+rdx] */
	} else if (o->mem.segment == ZYDIS_REGISTER_GS) {
		if (!R.have_gsbase)
			return -1;
		rec_b(e, "\xf3\x48\x0f\xae\xca", 5);	/* rdgsbase rdx */
		rec_b(e, "\x48\x8d\x04\x10", 4);
	}
	return 0;
}


static int rec_is_jrcxz(const rec_insn *x)
{
	return x->in.mnemonic == ZYDIS_MNEMONIC_JRCXZ ||
	       x->in.mnemonic == ZYDIS_MNEMONIC_JECXZ;
}

static int rec_is_loop(const rec_insn *x)
{
	return x->in.mnemonic == ZYDIS_MNEMONIC_LOOP ||
	       x->in.mnemonic == ZYDIS_MNEMONIC_LOOPE ||
	       x->in.mnemonic == ZYDIS_MNEMONIC_LOOPNE;
}

static int rec_value(rec_emit *e, const rec_insn *x, const patch_probe *p)
{
	const ZydisDecodedOperand *o;
	int cc;
	switch (p->what) {
	case PATCH_WORD:
	case PATCH_SWORD: {
		/* an entry word names its object: the replay enters that
		 * object's skeleton */
		uint64_t w = patch_entry_word(p->word, R.cur->index);
		if (p->what == PATCH_SWORD)	/* the object moves it alike */
			w -= PATCH_CTL_BASE;
		rec_b(e, "\x48\xb8", 2);
		if (w != p->word || (p->word & PATCH_ENTRY_MASK) == PATCH_ENTRY_TOP)
			rec_reloc(e, REC_ENTRY64, e->len, 0);
		rec_b(e, &w, 8);
		return 0;
	}
	case PATCH_REG:
	case PATCH_SREG:
	case PATCH_DSP:
	case PATCH_EDSP:
	case PATCH_DREG:
		rec_get_reg(e, p->reg);
		return 0;
	case PATCH_ADDR:
	case PATCH_DADDR:
		o = rec_memop(x, p->k);
		return o ? rec_get_addr(e, x, o) : -1;
	case PATCH_TAKEN:
	case PATCH_TBIT:
		if ((cc = rec_cond_code(x)) >= 0) {
			rec_b1(e, 0x0f);		/* setcc al */
			rec_b1(e, (uint8_t)(0x90 | cc));
			rec_b1(e, 0xc0);
			rec_b(e, "\x0f\xb6\xc0", 3);	/* movzx eax, al */
			return 0;
		}
		if (rec_is_loop(x)) {
			/* mov eax,1; loop(|e|ne) +5; mov eax,0; lea rcx,[rcx+1]:
			 * the loop itself decides, on a copy of rcx it then
			 * puts back, and no flag is touched.  With ecx as the
			 * counter (0x67) rcx's upper half is not restored so. */
			if (x->in.address_width != 64)
				return -1;
			rec_b(e, "\xb8\x01\0\0\0", 5);
			rec_b1(e, x->in.opcode);	/* e0 loopne, e1 loope, e2 loop */
			rec_b(e, "\x05\xb8\0\0\0\0", 6);
			rec_b(e, "\x48\x8d\x49\x01", 4);
			return 0;
		}
		if (!rec_is_jrcxz(x))
			return -1;
		/* mov eax,1; j(e|r)cxz +5; mov eax,0 — no flag touched */
		rec_b(e, "\xb8\x01\0\0\0", 5);
		if (x->in.mnemonic == ZYDIS_MNEMONIC_JECXZ)
			rec_b1(e, 0x67);
		rec_b(e, "\xe3\x05\xb8\0\0\0\0", 7);
		return 0;
	case PATCH_TARGET:
	case PATCH_STARGET:
		if ((x->in.meta.category != ZYDIS_CATEGORY_CALL &&
		     x->in.meta.category != ZYDIS_CATEGORY_UNCOND_BR) ||
		    (x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE &&
		     x->op[0].type != ZYDIS_OPERAND_TYPE_MEMORY))
			return -1;
		o = &x->op[0];
		if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			int r = rec_gpr(o->reg.value);
			if (r < 0)
				return -1;
			rec_get_reg(e, r);
			return 0;
		}
		if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || o->size != 64 ||
		    rec_get_addr(e, x, o))
			return -1;
		rec_b(e, "\x48\x8b\x00", 3);		/* mov rax, [rax] */
		return 0;
	case PATCH_TREG:
		/* where its jump's ways cannot each store their own word
		 * (rec_store_way): rax = the outcome's mark (setcc, then
		 * times 8^5 * 2 = PATCH_TREG_MARK by lea), plus the register */
		if ((cc = rec_cond_code(x)) < 0 || p->reg == SKEL_RSP)
			return -1;
		if (p->word == PATCH_ON_FALL)
			cc ^= 1;		/* the inverse condition */
		rec_b1(e, 0x0f);		/* setcc al */
		rec_b1(e, (uint8_t)(0x90 | cc));
		rec_b1(e, 0xc0);
		rec_b(e, "\x0f\xb6\xc0", 3);	/* movzx eax, al */
		for (int k = 0; k < 5; k++)
			rec_b(e, "\x48\x8d\x04\xc5\0\0\0\0", 8);	/* lea rax, [rax*8] */
		rec_b(e, "\x48\x8d\x04\x00", 4);	/* lea rax, [rax+rax] */
		if (p->reg == SKEL_RAX)
			rec_b(e, "\x48\x8b\x54\x24\x08", 5);	/* mov rdx, [rsp+8] */
		else if (p->reg == SKEL_RDX)
			rec_b(e, "\x48\x8b\x14\x24", 4);	/* mov rdx, [rsp] */
		else {
			rec_b1(e, (uint8_t)(0x48 | (p->reg & 8 ? 4 : 0)));	/* mov rdx, r */
			rec_b1(e, 0x89);
			rec_b1(e, (uint8_t)(0xc2 | (p->reg & 7) << 3));
		}
		rec_b(e, "\x48\x8d\x04\x10", 4);	/* lea rax, [rax+rdx] */
		return 0;
	case PATCH_VMMARK:	/* records nothing (rec_vmmark) */
		break;
	}
	return -1;
}

static const char *const rec_what_name[] = {
	"reg", "addr", "taken", "target", "word", "tbit", "sreg", "starget",
	"dsp", "sword", "dreg", "daddr", "vmmark", "edsp", "treg",
};

/* PATCH_VMMARK: the system call's number pushed, then a call of
 * rec_vm_mark_stub through rec_t.vmmark (fs-relative: the plan is moved
 * to other processes by its REC_CURSOR32 fields alone). */
static void rec_vmmark(rec_emit *e, uint64_t nr)
{
	rec_b1(e, 0x68);			/* push imm32 */
	rec_b4(e, (int32_t)nr);
	rec_b(e, "\x64\xff\x14\x25", 4);	/* call qword fs:[off] */
	rec_reloc(e, REC_CURSOR32, e->len, 0);
	rec_b4(e, (int32_t)(R.cursor_off + REC_TLS_VMMARK));
	rec_b(e, "\x48\x8d\x64\x24\x08", 5);	/* lea rsp, [rsp+8] */
}

/* Whether probe p records a constant that needs no relocation and fits
 * a sign-extended imm32 (a return's control word, PATCH_SWORD less
 * PATCH_CTL_BASE): *c, stored by rec_store_const. */
static int rec_const_word(const patch_probe *p, int32_t *c)
{
	if (p->what != PATCH_WORD && p->what != PATCH_SWORD)
		return 0;
	uint64_t w = patch_entry_word(p->word, R.cur->index);
	if (w != p->word || (p->word & PATCH_ENTRY_MASK) == PATCH_ENTRY_TOP)
		return 0;
	if (p->what == PATCH_SWORD)
		w -= PATCH_CTL_BASE;
	if (!rec_fits32((int64_t)w))
		return 0;
	*c = (int32_t)w;
	return 1;
}

/* The probes of site st at x's address with the given `after` (but its
 * tbit if no_tbit), in file order with taken/target last, in one frame;
 * each records one word. */
static void rec_probes_but(rec_emit *e, const rec_insn *x, const rec_probe *pv,
			   size_t n, int after, int no_tbit)
{
	size_t want = 0, first = 0;
	int skip = e->quiet_pc == x->addr && after == PATCH_BEFORE;
	for (size_t i = n; i-- > 0;)
		if (pv[i].p.pc == x->addr && pv[i].p.after == after &&
		    !(no_tbit && (pv[i].p.what == PATCH_TBIT || pv[i].p.what == PATCH_TREG)) &&
		    !(skip && (i == e->q0 || i == e->q1)))
			want++, first = i;
	if (!want)
		return;
	if (after == PATCH_AFTER && rec_is_transfer(x))
		rec_die("patch line %u: 'after' probe on a control transfer",
			pv[first].p.line);
	int32_t c;
	if (want == 1 && rec_const_word(&pv[first].p, &c)) {
		rec_store_const(e, x, c);
		return;
	}
	uint64_t from = rec_here(e);
	rec_b(e, rec_prologue, sizeof rec_prologue);
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < n; i++) {
			const patch_probe *p = &pv[i].p;
			int ctl = p->what == PATCH_TAKEN || p->what == PATCH_TARGET ||
				  p->what == PATCH_TBIT || p->what == PATCH_STARGET ||
				  p->what == PATCH_TREG;
			if (p->pc != x->addr || p->after != after || ctl != last ||
			    (no_tbit && (p->what == PATCH_TBIT || p->what == PATCH_TREG)) ||
			    (skip && (i == e->q0 || i == e->q1)))
				continue;
			if (p->what == PATCH_VMMARK) {
				rec_vmmark(e, p->word);
				continue;
			}
			if (rec_value(e, x, p))
				rec_die("patch line %u: cannot record '%s' at "
					"%" PRIx64 " (%s)", p->line,
					rec_what_name[p->what], p->pc - R.cur->img.bias,
					ZydisMnemonicGetString(x->in.mnemonic));
			if (p->what == PATCH_DREG || p->what == PATCH_DADDR)
				rec_minus(e, REC_MINUS_DSLOT(p->word));
			else if (p->what == PATCH_STARGET)
				rec_minus(e, x->addr);
			else if (p->what == PATCH_DSP || p->what == PATCH_EDSP)
				rec_minus(e, REC_MINUS_LASTSP);
			else
				rec_store(e);
		}
	rec_b(e, rec_epilogue, sizeof rec_epilogue);
	rec_map(e, from, x->addr, VT_MAP_PROBE);
}

static void rec_probes(rec_emit *e, const rec_insn *x, const rec_probe *pv,
		       size_t n, int after)
{
	rec_probes_but(e, x, pv, n, after, 0);
}

/* Copies x, RIP-relative displacement rebased to the new place. */
static int rec_copy(rec_emit *e, const rec_insn *x)
{
	uint8_t buf[16];
	size_t len = x->in.length;
	memcpy(buf, (const void *)x->addr, len);
	for (int i = 0; i < x->in.operand_count_visible; i++) {
		const ZydisDecodedOperand *o = &x->op[i];
		if (o->type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    o->mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (x->in.raw.disp.size != 32)
			return -1;
		uint64_t abs = x->addr + len + (uint64_t)o->mem.disp.value;
		int64_t d = (int64_t)(abs - (rec_here(e) + len));
		if (!rec_fits32(d))
			return -1;
		int32_t d32 = (int32_t)d;
		memcpy(buf + x->in.raw.disp.offset, &d32, 4);
		rec_reloc(e, REC_REL32, e->len + x->in.raw.disp.offset, abs);
	}
	rec_b(e, buf, len);
	return 0;
}

/* call: push the original return address, then jump.  The program sees
 * exactly what a call in place would have given it. */
static int rec_call(rec_emit *e, const rec_insn *x)
{
	uint64_t next = x->addr + x->in.length;
	const ZydisDecodedOperand *o = &x->op[0];
	uint64_t from = rec_here(e);
	if (o->type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    rec_gpr(o->reg.value) == SKEL_RSP)
		return -1;
	rec_riplit(e, (const uint8_t *)"\xff\x35", 2, next);	/* push [rip+lit] */
	rec_map(e, from, x->addr, VT_MAP_CALL_PUSH);
	from = rec_here(e);
	if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		uint64_t target;
		if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x->in, o, x->addr,
							   &target)))
			return -1;
		if (rec_fits32((int64_t)(target - (rec_here(e) + 5))))
			rec_jmp(e, target);
		else	/* jmp [rip+lit] */
			rec_riplit(e, (const uint8_t *)"\xff\x25", 2, target);
	} else if (o->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		int r = rec_gpr(o->reg.value);
		if (r < 0)
			return -1;
		if (r & 8)
			rec_b1(e, 0x41);
		rec_b1(e, 0xff);				/* jmp r */
		rec_b1(e, (uint8_t)(0xe0 | (r & 7)));
	} else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->size == 64) {
		int base = rec_gpr(o->mem.base), index = rec_gpr(o->mem.index);
		if (base == SKEL_RSP) {
			/* after the push rsp is 8 lower: jmp [rsp+d+8] */
			if (o->mem.segment != ZYDIS_REGISTER_SS || index < -1 ||
			    !rec_fits32(o->mem.disp.value + 8))
				return -1;
			rec_modrm_mem(e, 0xff, 4, base, index,
				      index < 0 ? 0 : o->mem.scale,
				      (int32_t)(o->mem.disp.value + 8));
		} else {
			/* the same bytes with ModRM.reg 2 (call) -> 4 (jmp) */
			uint8_t *at = e->p + e->len;
			if (rec_copy(e, x))
				return -1;
			at[x->in.raw.modrm.offset] =
				(uint8_t)((at[x->in.raw.modrm.offset] & 0xc7) |
					  4 << 3);
		}
	} else {
		return -1;
	}
	rec_map(e, from, x->addr, VT_MAP_CALL_JMP);
	return 1;
}

/* Emits x relocated; 1 if control never falls through past it. */
static int rec_insn_emit(rec_emit *e, const rec_insn *x, uint64_t span_end)
{
	uint64_t from = rec_here(e), target;
	int cc = rec_cond_code(x);
	if (rec_is_call(x))
		return rec_call(e, x);
	int rel_imm = (x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		      x->op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	if (!rel_imm) {
		if (rec_copy(e, x))
			return -1;
		rec_map(e, from, x->addr, VT_MAP_DISPLACED);
		return x->in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
		       x->in.meta.category == ZYDIS_CATEGORY_RET;
	}
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x->in, &x->op[0], x->addr,
						   &target)))
		return -1;
	if (x->in.meta.category == ZYDIS_CATEGORY_UNCOND_BR) {
		rec_branch_jmp(e, target);
		rec_map(e, from, x->addr, VT_MAP_DISPLACED);
		return 1;
	}
	if (cc >= 0) {
		rec_b1(e, 0x0f);
		rec_b1(e, (uint8_t)(0x80 | cc));
		rec_branch_rel32(e, target);
		rec_map(e, from, x->addr, VT_MAP_DISPLACED);
		return 0;
	}
	if (x->in.meta.category != ZYDIS_CATEGORY_COND_BR &&
	    !rec_is_transfer(x))
		return -1;	/* xbegin and the like */
	/* rel8-only (jrcxz, loop*): branch over a jmp to the fall-through,
	 * onto a jmp to the target */
	size_t op_len = x->in.length - 1;
	rec_b(e, (const void *)x->addr, op_len);
	rec_b1(e, 5);
	rec_branch_jmp(e, span_end);
	rec_map(e, from, x->addr, VT_MAP_DISPLACED);
	rec_branch_jmp(e, target);
	return 1;
}

/* Whether site probes pv[0..n) have one at pc recording at `pos`. */
static int rec_probes_at(const rec_probe *pv, size_t n, uint64_t pc, int pos)
{
	for (size_t i = 0; i < n; i++)
		if (pv[i].p.pc == pc && pv[i].p.after == pos)
			return 1;
	return 0;
}

/* A conditional jump with probes on its ways (PATCH_ON_TAKEN,
 * PATCH_ON_FALL): the fall-through's right after it, in line; a taken
 * jump goes to the site's tail (rec_site_emit), which records and goes
 * on to the target.  *tail: where the jump's rel32 is, 0 if it has none. */
/* x (a jcc) relocated: its rel32 left to fill (*tail: where it is) when
 * `to_tail`, else to its target. */
static void rec_jcc_emit(rec_emit *e, const rec_insn *x, int to_tail, size_t *tail,
			 uint64_t *target)
{
	uint64_t from = rec_here(e);
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x->in, &x->op[0], x->addr, target)))
		rec_die("cannot relocate %s at %" PRIx64,
			ZydisMnemonicGetString(x->in.mnemonic), x->addr - R.cur->img.bias);
	rec_b1(e, 0x0f);
	rec_b1(e, (uint8_t)(0x80 | rec_cond_code(x)));
	*tail = 0;
	if (to_tail) {
		*tail = e->len;
		rec_b4(e, 0);
	} else {
		rec_branch_rel32(e, *target);
	}
	rec_map(e, from, x->addr, VT_MAP_DISPLACED);
}

static void rec_jcc_ways(rec_emit *e, const rec_insn *x, const rec_probe *pv,
			 size_t n, size_t *tail, uint64_t *target)
{
	rec_jcc_emit(e, x, rec_probes_at(pv, n, x->addr, PATCH_ON_TAKEN), tail, target);
	rec_probes(e, x, pv, n, PATCH_ON_FALL);
}

/* Whether x is a conditional jump (jcc rel) whose outcome one TBIT probe
 * records and no probe waits on its ways: then each way stores its
 * constant (rec_store_const) instead of a setcc in the frame before it,
 * some 40 % less code on the path of every outcome. */
static int rec_tbit_split(const rec_insn *x, const rec_probe *pv, size_t n)
{
	int tbit = 0;
	if (rec_cond_code(x) < 0 || !(x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
	    x->op[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const patch_probe *p = &pv[i].p;
		if (p->pc != x->addr)
			continue;
		if (p->after == PATCH_ON_TAKEN || p->after == PATCH_ON_FALL)
			return 0;
		if (p->what == PATCH_TBIT || p->what == PATCH_TREG)
			tbit++;
		else if (p->what == PATCH_TAKEN || p->what == PATCH_TARGET ||
			 p->what == PATCH_STARGET)
			return 0;
	}
	return tbit == 1;
}

/* On way `taken` (1: taken) of x, whose outcome rec_tbit_split found its
 * ways can store: a tbit's constant (rec_store_const), or a treg's
 * register plus PATCH_TREG_MARK on the way its word names. */
static void rec_store_way(rec_emit *e, const rec_insn *x, const rec_probe *pv, size_t n,
			  int taken)
{
	const patch_probe *p = NULL;
	for (size_t i = 0; i < n && !p; i++)
		if (pv[i].p.pc == x->addr && pv[i].p.after == PATCH_BEFORE &&
		    (pv[i].p.what == PATCH_TBIT || pv[i].p.what == PATCH_TREG))
			p = &pv[i].p;
	if (!p || p->what == PATCH_TBIT) {
		rec_store_const(e, x, taken);
		return;
	}
	uint64_t from = rec_here(e);
	int mark = (p->word == PATCH_ON_TAKEN) == !!taken;
	rec_b(e, rec_prologue, sizeof rec_prologue);
	if (p->reg == SKEL_RAX)
		rec_b(e, "\x48\x8b\x44\x24\x08", 5);	/* mov rax, [rsp+8] */
	else if (p->reg == SKEL_RDX)
		rec_b(e, "\x48\x8b\x14\x24", 4);	/* mov rdx, [rsp] */
	/* lea rax, [reg + mark] */
	rec_modrm_mem(e, 0x8d, SKEL_RAX, p->reg, -1, 0, mark ? (int32_t)PATCH_TREG_MARK : 0);
	rec_store(e);
	rec_b(e, rec_epilogue, sizeof rec_epilogue);
	rec_map(e, from, x->addr, VT_MAP_PROBE);
}

/* One trampoline: for each instruction of the span its before-probes, the
 * instruction, its after-probes; then back to the end of the span; then
 * the taken ways of jumps with probes there. */
static uint64_t rec_site_emit(rec_emit *e, const rec_site *st,
			      const rec_probe *pv)
{
	uint64_t entry = rec_here(e);
	int done = 0;
	struct { size_t at; uint64_t pc, target; int tbit; } tail[8];
	size_t ntail = 0;
	for (uint64_t a = st->start; a < st->end;) {
		rec_insn x;
		if (rec_decode(a, st->bend, &x))
			rec_die("cannot decode %" PRIx64, a - R.cur->img.bias);
		if ((a == st->land || (st->loop && a == st->start)) && !e->quiet_pc)
			e->land_at[rec_land_index(e, a)] = rec_here(e);
		int split = ntail < sizeof tail / sizeof *tail &&
			    rec_tbit_split(&x, pv + st->p0, st->np);
		rec_probes_but(e, &x, pv + st->p0, st->np, PATCH_BEFORE, split);
		if (split) {
			rec_jcc_emit(e, &x, 1, &tail[ntail].at, &tail[ntail].target);
			rec_store_way(e, &x, pv + st->p0, st->np, 0);
			tail[ntail].pc = a;
			tail[ntail++].tbit = 1;
			done = 0;
		} else if (rec_probes_at(pv + st->p0, st->np, a, PATCH_ON_TAKEN) ||
		    rec_probes_at(pv + st->p0, st->np, a, PATCH_ON_FALL)) {
			if (rec_cond_code(&x) < 0 || ntail == sizeof tail / sizeof *tail)
				rec_die("cannot record on the ways of %s at %" PRIx64,
					ZydisMnemonicGetString(x.in.mnemonic),
					a - R.cur->img.bias);
			rec_jcc_ways(e, &x, pv + st->p0, st->np, &tail[ntail].at,
				     &tail[ntail].target);
			tail[ntail].pc = a;
			tail[ntail].tbit = 0;
			ntail += tail[ntail].at != 0;
			done = 0;
		} else {
			done = rec_insn_emit(e, &x, st->end);
		}
		if (done < 0)
			rec_die("cannot relocate %s at %" PRIx64,
				ZydisMnemonicGetString(x.in.mnemonic),
				a - R.cur->img.bias);
		rec_probes(e, &x, pv + st->p0, st->np, PATCH_AFTER);
		a += x.in.length;
	}
	if (!done)
		rec_branch_jmp(e, st->end);
	for (size_t k = 0; k < ntail; k++) {
		rec_insn x;
		if (rec_decode(tail[k].pc, st->bend, &x))
			rec_die("cannot decode %" PRIx64, tail[k].pc - R.cur->img.bias);
		int32_t d = (int32_t)(e->len - (tail[k].at + 4));
		memcpy(e->p + tail[k].at, &d, 4);
		if (tail[k].tbit)
			rec_store_way(e, &x, pv + st->p0, st->np, 1);
		else
			rec_probes(e, &x, pv + st->p0, st->np, PATCH_ON_TAKEN);
		rec_branch_jmp(e, tail[k].target);
	}
	rec_lits_place(e);
	while (e->len % 16)
		rec_b1(e, 0xcc);
	return entry;
}

/* Pages for the trampolines, within rel32 reach of all the text: tried
 * below the image first (what worked for PIE and non-PIE, PLATFORM-NOTES),
 * then above it.  MAP_FIXED_NOREPLACE never clobbers a mapping. */
static void *rec_code_try(uint64_t at, size_t size)
{
	void *m = mmap((void *)at, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if ((uint64_t)m == at)
		return m;
	munmap(m, size);	/* a kernel that took it as a mere hint */
	return NULL;
}

void *rec_code_map(size_t size)
{
	const uint64_t lo = R.cur->img.lo, hi = R.cur->img.hi, step = 2ul << 20;
	const uint64_t reach = (1ul << 31) - (16ul << 20);
	void *m;
	for (uint64_t k = 0; k < 1024; k++) {
		uint64_t at = ((lo - size) & ~(step - 1)) - k * step;
		if (at > lo || hi - at > reach)
			break;
		if ((m = rec_code_try(at, size)))
			return m;
	}
	for (uint64_t k = 0; k < 1024; k++) {
		uint64_t at = ((hi + step - 1) & ~(step - 1)) + k * step;
		if (at + size - lo > reach)
			break;
		if ((m = rec_code_try(at, size)))
			return m;
	}
	return NULL;
}
/* At `want` if it is free and within reach, else as rec_code_map. */
void *rec_code_map_near(size_t size, uint64_t want)
{
	const uint64_t lo = R.cur->img.lo, hi = R.cur->img.hi;
	const uint64_t reach = (1ul << 31) - (16ul << 20);
	void *m;
	if (!(want & (REC_PAGE - 1)) && (want + size <= lo || want >= hi) &&
	    (want < lo ? hi - want : want + size - lo) <= reach &&
	    (m = rec_code_try(want, size)))
		return m;
	return rec_code_map(size);
}

/* In the trampolines of some covered object.  Objects are only added
 * (dlopen), each filled in before nobj counts it. */
int rec_in_code(uint64_t pc)
{
	uint32_t n = atomic_load_explicit(&R.nobj, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (pc >= R.obj[i].code_lo && pc < R.obj[i].code_hi)
			return 1;
	return 0;
}

/* In front of int3 site t's trampoline, for the sites that enter its
 * block: the block's instructions before the site (rec_stub_ok). */
static uint64_t rec_stub_emit(rec_emit *e, const rec_site *t, uint64_t tramp)
{
	uint64_t entry = rec_here(e);
	if (t->start == t->bstart)
		return tramp;
	for (uint64_t a = t->bstart; a < t->start;) {
		rec_insn x;
		if (rec_decode(a, t->start, &x) || rec_insn_emit(e, &x, t->start))
			rec_die("cannot relocate the block at %" PRIx64,
				t->bstart - R.cur->img.bias);
		a += x.in.length;
	}
	rec_b1(e, 0xe9);
	rec_b4(e, (int32_t)((int64_t)tramp - (int64_t)(rec_here(e) + 4)));
	while (e->len % 16)
		rec_b1(e, 0xcc);
	return entry;
}

int rec_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void rec_lands_init(rec_emit *e, const rec_site *sv, size_t ns)
{
	for (size_t i = 0; i < ns; i++)
		e->nland += (sv[i].land != 0) + sv[i].loop;
	if (!e->nland)
		return;
	e->land_pc = malloc(e->nland * sizeof *e->land_pc);
	e->land_at = calloc(e->nland, sizeof *e->land_at);
	if (!e->land_pc || !e->land_at)
		rec_die("out of memory");
	size_t k = 0;
	for (size_t i = 0; i < ns; i++) {
		if (sv[i].land)
			e->land_pc[k++] = sv[i].land;
		if (sv[i].loop)
			e->land_pc[k++] = sv[i].start;
	}
	qsort(e->land_pc, k, sizeof *e->land_pc, rec_u64_cmp);
}

static void rec_lands_fix(rec_emit *e)
{
	for (size_t i = 0; i < e->nfix; i++) {
		uint64_t to = e->land_at[e->fix[i].land];
		if (!to)
			rec_die("branch target %" PRIx64 " has no place in the "
				"trampolines", e->land_pc[e->fix[i].land] -
				R.cur->img.bias);
		int32_t d = (int32_t)((int64_t)to - (int64_t)(e->p + e->fix[i].at + 4));
		memcpy(e->p + e->fix[i].at, &d, 4);
	}
	free(e->land_pc), free(e->land_at), free(e->fix);
	e->land_pc = e->land_at = NULL;
	e->fix = NULL;
	e->nland = e->nfix = 0;
}

/* Whether site st starts at a routine's entry whose first two probes
 * are its entry word and edsp (skelgen: patch_link): their indices in
 * the site's probes, and its entry word (without object bits). */
static int rec_quiet_of(const rec_probe *pv, const rec_site *st, size_t *q0, size_t *q1,
			uint64_t *word)
{
	size_t k = 0, at[2] = { 0, 0 };
	for (size_t i = 0; i < st->np && k < 2; i++) {
		const patch_probe *p = &pv[st->p0 + i].p;
		if (p->pc == st->start && p->after == PATCH_BEFORE)
			at[k++] = i;
	}
	if (k < 2)
		return 0;
	const patch_probe *w = &pv[st->p0 + at[0]].p, *d = &pv[st->p0 + at[1]].p;
	if (w->what != PATCH_SWORD || (w->word & PATCH_ENTRY_MASK) != PATCH_ENTRY_TOP ||
	    d->what != PATCH_EDSP)
		return 0;
	*q0 = at[0];
	*q1 = at[1];
	*word = w->word;
	return 1;
}

/* The return sites of the object's qret lines (patch_qret), link-time,
 * sorted; malloc'd. */
static uint64_t *rec_qret_sites(const patch *pt, size_t *n)
{
	*n = 0;
	if (!pt || !pt->nqrets)
		return NULL;
	uint64_t *v = malloc(pt->nqrets * sizeof *v);
	if (!v)
		rec_die("out of memory");
	for (size_t k = 0; k < pt->nqrets; k++)
		v[k] = pt->qrets[k].ret;
	qsort(v, pt->nqrets, sizeof *v, rec_u64_cmp);
	*n = pt->nqrets;
	return v;
}

/* Whether site st is a qret line's return site (qs: rec_qret_sites)
 * whose first probe is the RETURNED word: its index in the site's
 * probes.  Its quiet copy leaves that word out; rec_links_plan points
 * the site there when the call's link returns quietly. */
static int rec_qret_of(const rec_probe *pv, const rec_site *st, const uint64_t *qs, size_t nq,
		       size_t *q0)
{
	uint64_t at = st->start - R.cur->img.bias;
	if (!nq || st->int3 || st->redirect || st->loop ||
	    !bsearch(&at, qs, nq, sizeof *qs, rec_u64_cmp))
		return 0;
	for (size_t i = 0; i < st->np; i++) {
		const patch_probe *p = &pv[st->p0 + i].p;
		if (p->pc != st->start || p->after != PATCH_BEFORE)
			continue;
		if ((p->what != PATCH_SWORD && p->what != PATCH_WORD) || p->word != PATCH_CTL_BASE)
			return 0;
		*q0 = i;
		return 1;
	}
	return 0;
}

void rec_emit_all(rec_probe *pv, rec_site *sv, size_t ns,
		  rec_emit *e, uint64_t *tramp, rec_int3 *i3, size_t *ni3, rec_write *w)
{
	rec_object *o = R.cur;
	size_t bound = 64, nq;
	uint64_t *qs = rec_qret_sites(o->patch, &nq);
	for (size_t i = 0; i < ns; i++) {
		size_t q0, q1, one = 2 * (sv[i].end - sv[i].start) + 256 * sv[i].np +
			 40 * (sv[i].end - sv[i].start) + 160 +
			 (sv[i].redirect ? 48 * (sv[sv[i].to].start -
						 sv[sv[i].to].bstart) + 32 : 0);
		uint64_t w0;
		bound += rec_quiet_of(pv, &sv[i], &q0, &q1, &w0) ||
			 rec_qret_of(pv, &sv[i], qs, nq, &q0) ? 2 * one : one;
	}
	size_t size = (bound + REC_PAGE - 1) & ~(REC_PAGE - 1);
	uint8_t *code = rec_code_map(size);
	if (!code)
		rec_die("no room for trampolines within 2 GiB of %s",
			o->index ? o->img.path : "the executable");
	*e = (rec_emit){ .p = code, .cap = size };
	rec_lands_init(e, sv, ns);
	uint64_t *stub = calloc(ns ? ns : 1, sizeof *stub);
	if (!stub)
		rec_die("out of memory");
	/* the sites that enter an int3 site's block after it and its stub */
	for (int pass = 0; pass < 2; pass++)
	for (size_t i = 0; i < ns; i++) {
		if (!sv[i].redirect != !pass)
			continue;
		if (sv[i].redirect) {
			size_t t = sv[i].to;
			if (!stub[t])
				stub[t] = rec_stub_emit(e, &sv[t], tramp[t]);
			e->redir_from = sv[i].redirect;
			e->redir_to = stub[t];
		}
		tramp[i] = rec_site_emit(e, &sv[i], pv);
		w[i] = (rec_write){ sv[i].start, sv[i].end, tramp[i], sv[i].int3, 0, 0 };
		if (rec_quiet_of(pv, &sv[i], &e->q0, &e->q1, &w[i].word)) {
			/* where a linked PLT slot enters: the same code but
			 * for those two probes */
			e->quiet_pc = sv[i].start;
			w[i].quiet = rec_site_emit(e, &sv[i], pv);
			e->quiet_pc = 0;
		} else if (rec_qret_of(pv, &sv[i], qs, nq, &e->q0)) {
			/* a return site: the same code but for its RETURNED
			 * word (rec_links_plan chooses) */
			e->q1 = e->q0;
			e->quiet_pc = sv[i].start;
			w[i].quiet = rec_site_emit(e, &sv[i], pv);
			w[i].word = PATCH_CTL_BASE;
			e->quiet_pc = 0;
		}
		e->redir_from = 0;
		if (sv[i].int3) {
			i3[(*ni3)++] = (rec_int3){ sv[i].start, tramp[i], 0 };
			if (R.verbose)
				rec_say("int3 site at pc 0x%" PRIx64 " (block [0x%" PRIx64
					", 0x%" PRIx64 ")) of object %u: no 5-byte span",
					sv[i].start - o->img.bias, sv[i].bstart - o->img.bias,
					sv[i].bend - o->img.bias, o->index);
		}
	}
	free(stub);
	free(qs);
	rec_lands_fix(e);
	/* code pages are never written again (self-modifying-code clears) */
	if (mprotect(code, size, PROT_READ | PROT_EXEC))
		rec_die("cannot protect the trampolines: %s", strerror(errno));
	o->code_lo = (uint64_t)code;
	o->code_hi = (uint64_t)code + size;
	R.code_size += size;
}
