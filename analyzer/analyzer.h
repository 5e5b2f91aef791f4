/* analyzer.h — the analyzer stage's public interface and the IR shared by
 * every later stage: the loaded binary, the arch-neutral instruction record,
 * routines with their blocks, dominators and loop nesting forest.
 *
 * Ownership: a `program` owns everything reachable from it; program_free()
 * releases it all.  Functions that can fail on bad input return a status
 * (0 = success, -1 = failure) and write a one-line message into the caller's
 * `err` buffer (ERR_LEN bytes), without the file name: the driver prints
 * "skel: FILE: message". */
#ifndef SKEL_ANALYZER_H
#define SKEL_ANALYZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ERR_LEN 256
#define SKEL_VERSION "0.1.0"

/* ------------------------------------------------------------------ ELF */

typedef struct elf_section {
	char *name;
	uint64_t addr;      /* virtual address (before load bias) */
	uint64_t size;
	const uint8_t *data; /* NULL for SHT_NOBITS */
	bool exec;          /* SHF_EXECINSTR */
	bool alloc;         /* SHF_ALLOC */
	bool write;         /* SHF_WRITE */
} elf_section;

typedef struct elf_symbol {
	char *name;
	uint64_t addr;
	uint64_t size;
} elf_symbol;

typedef struct elf_plt {
	uint64_t addr;      /* address of the stub */
	char *name;         /* imported symbol, without "@plt" */
	uint64_t slot;      /* the GOT slot it jumps through */
	bool jmprel;        /* slot is a JUMP_SLOT or IRELATIVE relocation's:
	                     * only PLT stubs read it (not a GLOB_DAT's,
	                     * which `&function` loads too) */
} elf_plt;

typedef struct binary {
	char *path;
	void *map;          /* the whole file, read into memory */
	size_t map_size;
	bool pie;
	/* a shared object: ET_DYN that is not a PIE — a library, a plugin,
	 * the loader; its entry (libc's and the loader's have one) may be 0 */
	bool shared;
	uint64_t entry;
	bool stripped;      /* no .symtab */
	/* identity: GNU build-id when present, else a content hash */
	bool has_build_id;
	uint8_t id[64];
	size_t id_len;
	char id_hex[129];
	elf_section *sections;
	size_t nsections;
	/* defined function symbols (STT_FUNC, and STT_GNU_IFUNC: its resolver)
	 * from .symtab and .dynsym, size may be 0, sorted by address, one per
	 * address (first name kept) */
	elf_symbol *funcs;
	size_t nfuncs;
	/* PLT stubs (.plt, .plt.sec, .plt.got), sorted by address */
	elf_plt *plts;
	size_t nplts;
	/* function starts from .eh_frame FDEs outside .plt*, sorted, unique */
	uint64_t *fde_starts;
	uint64_t *fde_ends; /* pc_begin + pc_range, parallel to fde_starts */
	size_t nfdes;
	/* C++ landing pads from the FDEs' LSDAs (.gcc_except_table): the
	 * call site (its range's start) and the landing pad an exception
	 * thrown from it goes to; sorted by call site; lp_ends: the end of
	 * the site's range (the unwinder looks up a call's return address
	 * less one in these ranges) */
	uint64_t *lp_sites, *lp_ends, *lp_pads;
	size_t nlp;
	/* code the loader calls: .init, .fini (DT_INIT, DT_FINI), the entries
	 * of .init_array, .fini_array, .preinit_array (routines a stripped
	 * binary has no FDE for) and the IFUNC resolvers IRELATIVE
	 * relocations name; sorted, unique */
	uint64_t *init_funcs;
	size_t ninit_funcs;
	/* what the loader writes into data words (RELATIVE and IRELATIVE
	 * addends, RELR slots, 64-bit, GLOB_DAT and JUMP_SLOT relocations to
	 * symbols defined here), sorted, unique.  In a shared object these are
	 * the only addresses its data can hold at run time. */
	uint64_t *reloc_values;
	size_t nreloc_values;
	/* functions other objects can call: defined FUNC and IFUNC symbols of
	 * .dynsym, global or weak, of default or protected visibility;
	 * sorted, unique */
	uint64_t *exports;
	size_t nexports;
	/* dynamic linking, as written (no $ORIGIN expansion); NULL and 0 when
	 * absent: PT_INTERP, DT_SONAME, DT_NEEDED in order, DT_RPATH,
	 * DT_RUNPATH */
	char *interp;
	char *soname;
	char **needed;
	size_t nneeded;
	char *rpath, *runpath;
	bool nodeflib;      /* DF_1_NODEFLIB: its needs skip the cache and default dirs */
} binary;

/* Loads an x86-64 ELF executable (ET_EXEC or PIE) or shared object.
 * Anything else — not an ELF, truncated, another class or machine, a core
 * or relocatable file — fails with a message saying what the file is. */
int elf_open(binary *b, const char *path, char err[ERR_LEN]);
void elf_close(binary *b);

/* The executable bytes at `addr`; *avail receives how many follow in the
 * same section.  NULL when addr is not in an executable section. */
const uint8_t *elf_code_at(const binary *b, uint64_t addr, size_t *avail);
/* Reads `size` bytes (1,2,4,8) of initialised allocated data (e.g. a jump
 * table in .rodata) little-endian; -1 when not entirely inside one section. */
int elf_read(const binary *b, uint64_t addr, unsigned size, uint64_t *out);
/* The function symbol that starts exactly at addr, or NULL. */
const char *elf_func_name(const binary *b, uint64_t addr);
/* The imported name of the PLT stub at addr, or NULL. */
const char *elf_plt_name(const binary *b, uint64_t addr);
/* The PLT stub starting at addr, or NULL. */
const elf_plt *elf_plt_at(const binary *b, uint64_t addr);
/* The section containing addr, or NULL. */
const elf_section *elf_section_at(const binary *b, uint64_t addr);

/* --------------------------------------------------------- dependencies */

/* One object the loader maps (deps.c). */
typedef struct deps_object {
	char *name;         /* as asked for: the program's path, a DT_NEEDED entry */
	char *path;         /* the file found, as the loader names it */
	char *soname;       /* DT_SONAME, or NULL */
	char *origin;       /* what $ORIGIN is for it */
	char id_hex[129];   /* identity, as binary.id_hex */
	bool has_build_id;
	bool interp;        /* the program's PT_INTERP */
	int32_t needed_by;  /* index of the object whose need loaded it; -1 */
} deps_object;

typedef struct deps_missing_lib {
	char *name;
	int32_t needed_by;
} deps_missing_lib;

typedef struct deps_list {
	deps_object *objs;  /* load order: the program first */
	size_t n;
	deps_missing_lib *missing;  /* needs no file was found for */
	size_t nmissing;
} deps_list;

/* Where to look; NULL fields take the system's: no LD_LIBRARY_PATH,
 * /etc/ld.so.cache, the x86-64 Debian default directories. */
typedef struct deps_env {
	const char *ld_library_path;
	const char *cache;
	const char *const *default_dirs;    /* NULL-terminated */
} deps_env;

/* The objects the dynamic loader would map for the program `prog`: its DT_NEEDED
 * closure resolved as ld.so resolves it, without running anything.  A
 * need that no file answers is listed in `missing` (not a failure); an
 * unreadable or corrupt object fails with err naming it. */
int deps_resolve(deps_list *out, const char *prog, const deps_env *env,
		 char err[ERR_LEN]);
void deps_free(deps_list *d);
/* Looks `soname` up in a glibc ld.so.cache: 1 and its path, 0 when the
 * cache (or the file) has no x86-64 entry for it, -1 with err set when
 * the file is not a cache. */
int deps_cache_lookup(const char *cache, const char *soname, char *path, size_t len,
		      char err[ERR_LEN]);

/* -------------------------------------------------------- instructions */

/* General-purpose registers in x86 encoding order, then flags and rip. */
enum reg {
	R_AX, R_CX, R_DX, R_BX, R_SP, R_BP, R_SI, R_DI,
	R_8, R_9, R_10, R_11, R_12, R_13, R_14, R_15,
	R_FLAGS = 16,
	R_RIP = 17,
	R_NREGS = 18,
	R_NONE = 0xff,
};
#define REG_BIT(r) (1u << (r))

enum flow {
	FLOW_NEXT,     /* falls through to the next instruction */
	FLOW_JUMP,     /* direct unconditional jump to `target` */
	FLOW_CJUMP,    /* direct conditional jump (jcc, jrcxz, loop*) */
	FLOW_CALL,     /* direct call to `target` */
	FLOW_RET,
	FLOW_IJUMP,    /* indirect jump (register or memory) */
	FLOW_ICALL,    /* indirect call */
	FLOW_SYSCALL,  /* syscall / int 0x80: falls through */
	FLOW_HALT,     /* hlt, ud2, int3, invalid: does not fall through */
};

/* Arch-neutral operation, enough for the semantics later stages need.
 * Anything not listed is OP_OTHER: its register effects are still exact in
 * `reads`/`writes`, it just has no linear meaning. */
enum op {
	OP_OTHER, OP_NOP,
	OP_MOV, OP_MOVZX, OP_MOVSX,     /* movsx, movsxd; cdqe/cwde/cbw are OP_MOVSX reg<-reg */
	OP_LEA, OP_ADD, OP_SUB, OP_ADC, OP_SBB, OP_INC, OP_DEC, OP_NEG, OP_NOT,
	OP_IMUL, OP_MUL, OP_IDIV, OP_DIV,
	OP_SHL, OP_SHR, OP_SAR, OP_ROL, OP_ROR,
	OP_AND, OP_OR, OP_XOR, OP_CMP, OP_TEST,
	OP_PUSH, OP_POP, OP_LEAVE, OP_ENTER,
	OP_CALL, OP_RET, OP_JMP, OP_JCC, OP_CMOV, OP_SETCC,
	OP_XCHG, OP_CMPXCHG, OP_XADD,
	OP_MOVS, OP_STOS, OP_LODS, OP_CMPS, OP_SCAS,
	OP_SYSCALL, OP_HALT,
	OP_COUNT
};

/* Condition codes in x86 encoding order (the low nibble of jcc). */
enum cond {
	CC_O, CC_NO, CC_B, CC_AE, CC_E, CC_NE, CC_BE, CC_A,
	CC_S, CC_NS, CC_P, CC_NP, CC_L, CC_GE, CC_LE, CC_G,
	CC_RCXZ = 16,  /* jrcxz/jecxz */
	CC_LOOP = 17,  /* loop: --rcx != 0 */
	CC_NONE = 0xff,
};

enum acc_kind { ACC_R = 1, ACC_W = 2, ACC_RW = 3 };

enum seg { SEG_NONE, SEG_FS, SEG_GS };

#define MEM_RIPREL   0x01 /* disp is the absolute (unbiased) address; base = R_NONE */
#define MEM_RK_NONE 0xff
#define MEM_IMPLICIT 0x02 /* not an explicit operand (push, ret, movs, ...) */
#define MEM_REP      0x04 /* string op under rep/repe/repne: repeats rcx times */
#define MEM_COND     0x08 /* may not happen (rep string op with rcx = 0) */
#define MEM_INEXACT  0x10 /* address is not seg+base+index*scale+disp: gather/
                             scatter (vector index, one access per element),
                             bt* mem,reg (bit offset moves the address), xlat
                             (index is al); the form given is the base only */

/* One data memory access an instruction makes.  address =
 * seg_base + base + index*scale + disp, with 64-bit wrap-around; a
 * 32-bit address size (0x67) is flagged by addr32. */
typedef struct mem_access {
	uint8_t kind;       /* enum acc_kind; read-modify-write is ACC_RW */
	uint8_t base;       /* enum reg or R_NONE */
	uint8_t index;      /* enum reg or R_NONE */
	uint8_t scale;      /* 1,2,4,8 (1 when no index) */
	uint8_t seg;        /* enum seg */
	uint8_t flags;      /* MEM_* */
	bool addr32;
	uint8_t rk;         /* the recorder's number of this operand (its
	                       PATCH_ADDR k), MEM_RK_NONE for accesses
	                       decode makes up (enter) */
	uint16_t size;      /* bytes per access (per element for rep strings) */
	int64_t disp;
} mem_access;

enum opd_type { OPD_NONE, OPD_REG, OPD_IMM, OPD_MEM, OPD_OTHER };

/* An explicit operand.  Non-GPR registers (xmm, x87, segment) have
 * type OPD_OTHER. */
typedef struct operand {
	uint8_t type;       /* enum opd_type */
	uint8_t size;       /* bytes */
	uint8_t reg;        /* OPD_REG: enum reg */
	bool high8;         /* OPD_REG: ah, ch, dh, bh */
	uint8_t mem;        /* OPD_MEM: index into insn.mem (for lea: an
	                       address computation with kind 0, not in nmem) */
	int64_t imm;        /* OPD_IMM: sign-extended to 64 bits */
} operand;

#define INSN_MAX_MEM 3
#define INSN_MAX_OPD 4

typedef struct insn {
	uint64_t addr;
	uint8_t len;
	uint8_t flow;       /* enum flow */
	uint8_t op;         /* enum op */
	uint8_t cond;       /* enum cond for jcc/cmovcc/setcc, else CC_NONE */
	uint64_t target;    /* FLOW_JUMP/CJUMP/CALL: destination */
	uint32_t reads;     /* REG_BIT mask of registers read (flags = R_FLAGS) */
	uint32_t writes;    /* REG_BIT mask of registers written */
	/* bytes written per GPR in `writes`: 8, 4 (zero-extends to 64),
	 * 2 or 1 (merge; high8 when the byte is ah..bh) */
	uint8_t wsize[16];
	uint8_t flags_read;    /* bit per CF,PF,AF,ZF,SF,OF (FL_*) */
	uint8_t flags_written;
	uint8_t nopd;
	operand opd[INSN_MAX_OPD];
	/* FLOW_CALL, FLOW_ICALL: the caller-saved GPRs the call may change
	 * (REG_BIT mask): ABI_CALL_CLOBBERS, narrowed for direct calls to
	 * analyzed routines by clobber_compute */
	uint32_t clobbers;
	uint8_t nmem;       /* data accesses, in the order the CPU makes them */
	mem_access mem[INSN_MAX_MEM + 1]; /* +1: lea's AGEN slot */
	char text[96];      /* Intel syntax, for printing */
} insn;

/* The registers a call may change under the SysV ABI (besides flags and
 * memory). */
#define ABI_CALL_CLOBBERS (REG_BIT(R_AX) | REG_BIT(R_CX) | REG_BIT(R_DX) | \
			   REG_BIT(R_SI) | REG_BIT(R_DI) | REG_BIT(R_8) | \
			   REG_BIT(R_9) | REG_BIT(R_10) | REG_BIT(R_11))

/* Whether the instruction is a string op under a rep prefix. */
/* movzx/movsx of a byte or a 16-bit word from memory into a register:
 * a value of 1 or 2 bytes in the value trace (skelgen's IN(), ivres's
 * record_rotated) */
static inline bool insn_is_narrow_load(const insn *in)
{
	return (in->op == OP_MOVZX || in->op == OP_MOVSX) && in->nmem == 1 && in->nopd == 2 &&
	       in->opd[0].type == OPD_REG && !in->opd[0].high8 && in->opd[1].type == OPD_MEM &&
	       in->opd[1].size <= 2;
}

static inline bool insn_is_rep(const insn *in)
{
	for (unsigned k = 0; k < in->nmem; k++)
		if (in->mem[k].flags & MEM_REP)
			return true;
	return false;
}

#define FL_CF 0x01
#define FL_PF 0x02
#define FL_AF 0x04
#define FL_ZF 0x08
#define FL_SF 0x10
#define FL_OF 0x20

/* Decodes one instruction at `addr`.  Returns 0, or -1 when the bytes are
 * not a valid instruction (the record is then a FLOW_HALT of length 1). */
int decode_insn(const uint8_t *code, size_t avail, uint64_t addr, insn *out);
const char *reg_name(unsigned r);  /* 64-bit name, "flags", "rip" */
const char *op_name(unsigned op);
const char *cond_name(unsigned cc);

/* ------------------------------------------------------------- the CFG */

#define BLK_RET         0x0001 /* ends with ret */
#define BLK_TAILCALL    0x0002 /* jump to another routine's start */
#define BLK_NORETURN    0x0004 /* ends with a call that never returns */
#define BLK_IJUMP       0x0008 /* ends with an unresolved indirect jump */
#define BLK_JUMPTABLE   0x0010 /* ends with a resolved jump table */
#define BLK_HALT        0x0020 /* hlt/ud2/int3/invalid bytes */
#define BLK_CALL        0x0040 /* ends with a (returning) call */
#define BLK_ENTRY       0x0080
#define BLK_SETJMP      0x0100 /* ends with a call to setjmp, whose return
                                * address (end) is a routine start: a
                                * longjmp comes back there */

typedef struct block {
	uint64_t start, end;        /* [start, end) */
	uint32_t first, ninsn;      /* range in routine.insns */
	uint32_t *succ, nsucc;      /* block indices; jump tables may have many */
	uint32_t *pred, npred;
	uint32_t flags;             /* BLK_* */
	int32_t idom;               /* -1 for the entry and unreachable blocks */
	int32_t loop;               /* innermost loop, or -1 */
	uint64_t call_target;       /* BLK_CALL/BLK_NORETURN/BLK_TAILCALL direct target, 0 if indirect */
	/* BLK_JUMPTABLE: the table's targets outside the routine (another
	 * routine's start, gcc's split-off cold part of a stripped binary
	 * among them, or not code), sorted: tail calls through the table */
	uint64_t *tails;
	uint32_t ntails;
	/* BLK_JUMPTABLE whose table is read-only data (cfg.c, table_shape):
	 * entry k, jt_size bytes at jt_base + k*jt_size (sign-extended when
	 * jt_signed), leads to jt_targets[k] = entry + jt_add; jt_count 0
	 * otherwise */
	uint64_t jt_base;
	int64_t jt_add;
	uint64_t *jt_targets;
	uint32_t jt_count;
	uint8_t jt_size;
	bool jt_signed;
} block;

typedef struct loop {
	uint32_t header;            /* block index */
	int32_t parent;             /* loop index or -1 */
	uint32_t depth;             /* 1 for outermost */
	bool irreducible;           /* more than one entry */
	uint32_t *blocks, nblocks;  /* all blocks, nested loops' included */
	uint32_t *entries, nentries;/* blocks entered from outside (header first) */
	/* exit edges: from block exit_from[i] (inside) to exit_to[i] (outside) */
	uint32_t *exit_from, *exit_to, nexits;
} loop;

typedef struct routine {
	char *name;                 /* symbol, or "sub_<hex>" */
	uint64_t start;
	insn *insns;                /* sorted by address */
	uint32_t ninsn;
	block *blocks;              /* block 0 is the entry, the rest sorted by start */
	uint32_t nblocks;
	loop *loops;                /* outer loops before inner ones */
	uint32_t nloops;
	bool partial;               /* an indirect jump could not be resolved */
	bool noreturn;
	bool irreducible;           /* has an irreducible loop */
	uint64_t *callees;          /* direct call targets (analyzed routines or PLT) */
	uint32_t ncallees;
	uint32_t nmem;              /* instructions with a data access */
} routine;

typedef struct program {
	binary bin;
	routine *routines;          /* sorted by start */
	uint32_t nroutines;
	/* every address control may enter from outside the routine that
	 * contains it: function symbols (cold parts included), FDE starts,
	 * the entry point and loader-called code, and code addresses taken
	 * as values (immediates, RIP-relative operands, pointer-sized data
	 * words; in a shared object relocated words and exported functions);
	 * sorted, unique.  Each is a block start, and no probe span crosses
	 * one. */
	uint64_t *entries;
	uint32_t nentries;
	/* the code addresses among them taken as values, sorted */
	uint64_t *taken;
	uint32_t ntaken;
	/* indirect-jump targets seen at run time that the analysis had not
	 * found (program_load_hints), sorted by `at` */
	struct jump_hint *hints;
	uint32_t nhints;
	/* program_unreached's count and first address, set by program_load */
	uint64_t unreached, unreached_first;
} program;

/* An indirect jump or call at `at` went to `to` (link-time addresses). */
typedef struct jump_hint {
	uint64_t at, to;
} jump_hint;

/* Loads `path` and builds every routine's CFG, dominators and loops. */
int program_load(program *p, const char *path, char err[ERR_LEN]);
/* The same, with targets of indirect jumps seen at run time: each becomes
 * a block of the jump's routine, so the skeleton follows it. */
int program_load_hints(program *p, const char *path, const jump_hint *h, size_t n,
		       char err[ERR_LEN]);
/* Reads a hints file ("0xAT 0xTO" per line); returns the count (*out
 * malloc'd), -1 with err set when the file is unreadable or malformed. */
long hints_read(const char *path, jump_hint **out, char err[ERR_LEN]);
void program_free(program *p);
routine *program_routine_at(const program *p, uint64_t start);
/* Narrows each direct call's `clobbers` to what the callee may write
 * (clobber.c); program_load runs it. */
void clobber_compute(program *p);
routine *program_routine_named(program *p, const char *name);
/* Code bytes no routine decoded, padding aside (program.c); the first at
 * *first.  Indirect calls may reach them unseen: skelgen checks targets. */
uint64_t program_unreached(const program *p, uint64_t *first);
/* Whether addr is in p->entries. */
bool program_is_entry(const program *p, uint64_t addr);

/* Passes (cfg.c, dom.c, loop.c), run by program_load. */
void cfg_build(program *p);
void dom_compute(routine *r);
void loop_find(routine *r);
/* Index of the block containing addr in r, or -1. */
int cfg_block_of(const routine *r, uint64_t addr);
void cfg_routine_free(routine *r);
bool dom_dominates(const routine *r, uint32_t a, uint32_t b);
/* Depth-first postorder from the entry: po[b] is b's number (-1 when
 * unreachable), order[] the blocks by number; returns how many. */
uint32_t cfg_postorder(const routine *r, int32_t *po, uint32_t *order);

/* Printing (print.c) */
#include <stdio.h>
void print_cfg(FILE *f, const program *p, const routine *r, bool dot);
void print_loops(FILE *f, const program *p, const routine *r);
void print_summary(FILE *f, const program *p);
void print_access(FILE *f, const mem_access *m);

#endif
