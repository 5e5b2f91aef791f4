/* Tests of SSA construction and symbolic expressions.  Inputs are built at
 * test time: hand-written assembly (exact instruction sequences) and small
 * C functions compiled with gcc at -O0 and -O2. */
#include "tests/testutil.h"
#include "ssa/ssa.h"
#include "ivres/ivres.h"

#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static char tmpdir[64];

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Compiles `src` (".s" or ".c" after `ext`) plus an optional C main into
 * an executable; returns its path (static). */
static const char *build(const char *name, const char *ext, const char *src,
			 const char *main_c, const char *opt)
{
	static char exe[8][256];
	static int k;
	char *out = exe[k++ & 7];
	char s[256], m[256], cmd[1024];
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/skel-ssa-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	snprintf(s, sizeof s, "%s/%s%s", tmpdir, name, ext);
	snprintf(m, sizeof m, "%s/%s-main.c", tmpdir, name);
	snprintf(out, 256, "%s/%s%s", tmpdir, name, opt);
	write_text(s, src);
	write_text(m, main_c ? main_c : "int main(void) { return 0; }\n");
	snprintf(cmd, sizeof cmd, "gcc %s -fno-inline -o %s %s %s 2>&1", opt, out, s, m);
	if (system(cmd) != 0)
		fail_msg("cannot build %s: %s", name, cmd);
	return out;
}

typedef struct fixture {
	program p;
	routine *r;
	ssa s;
	expr_ctx *c;
} fixture;

static fixture *open_routine(const char *path, const char *fn)
{
	fixture *f = calloc(1, sizeof *f);
	char err[ERR_LEN];
	assert_non_null(f);
	if (program_load(&f->p, path, err) < 0)
		fail_msg("%s: %s", path, err);
	f->r = program_routine_named(&f->p, fn);
	if (!f->r)
		fail_msg("%s: no routine %s", path, fn);
	ssa_build(&f->s, f->r);
	f->c = expr_ctx_new(&f->s);
	return f;
}

static void close_routine(fixture *f)
{
	expr_ctx_free(f->c);
	ssa_free(&f->s);
	program_free(&f->p);
	free(f);
}

/* The expression of register `reg` just after instruction i. */
static expr *after(fixture *f, uint32_t i, unsigned reg)
{
	return expr_of_value(f->c, ssa_after(&f->s, i, reg));
}

static expr *entry(fixture *f, unsigned reg)
{
	return expr_leaf(f->c, reg); /* entry values are values 0..17 */
}

static void assert_prints(fixture *f, const expr *e, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	expr_print(m, &f->s, e);
	fclose(m);
	if (strcmp(buf, want))
		fail_msg("printed \"%s\", expected \"%s\"", buf, want);
	free(buf);
}

/* The instruction at index i has operation op (guards the indices below
 * against a different decoding). */
static void assert_op(fixture *f, uint32_t i, unsigned op)
{
	assert_true(i < f->r->ninsn);
	if (f->r->insns[i].op != op)
		fail_msg("%s: insn %u is \"%s\" (op %s), expected op %s", f->r->name, i,
			 f->r->insns[i].text, op_name(f->r->insns[i].op), op_name(op));
}

static unsigned popcount(uint32_t x)
{
	return (unsigned)__builtin_popcount(x);
}

#define ASM_HEAD ".intel_syntax noprefix\n.text\n"
#define FUNC(name) ".globl " name "\n.type " name ", @function\n" name ":\n"
#define END(name) ".size " name ", .-" name "\n" \
	".section .note.GNU-stack,\"\",@progbits\n.text\n"

/* -------------------------------------------------------------- SSA */

static const char loop_asm[] = ASM_HEAD
	FUNC("f_loop")             /* long f_loop(long *a, long n) */
	"	xor eax, eax\n"        /* 0 */
	"	xor ecx, ecx\n"        /* 1 */
	".Lhead:\n"
	"	cmp rcx, rsi\n"        /* 2 */
	"	jge .Ldone\n"          /* 3 */
	"	add rax, [rdi + rcx*8]\n" /* 4 */
	"	add rcx, 1\n"          /* 5 */
	"	jmp .Lhead\n"          /* 6 */
	".Ldone:\n"
	"	ret\n"                 /* 7 */
	END("f_loop");

static void test_loop_header_gets_phis_for_changed_registers(void **state)
{
	(void)state;
	fixture *f = open_routine(build("loop", ".s", loop_asm, NULL, "-O0"), "f_loop");
	const routine *r = f->r;
	assert_int_equal(r->ninsn, 8);
	assert_int_equal(r->nloops, 1);
	uint32_t h = r->loops[0].header;
	assert_int_equal(r->blocks[h].start, r->insns[2].addr);
	/* rax, rcx and flags change in the loop; nothing else does */
	uint32_t nphi = 0;
	for (uint32_t v = 0; v < f->s.nvals; v++)
		nphi += f->s.vals[v].kind == V_PHI;
	assert_int_equal(nphi, 3);
	for (unsigned var = 0; var < SSA_NVARS; var++) {
		const ssa_value *sv = &f->s.vals[f->s.at_start[h][var]];
		bool changed = var == R_AX || var == R_CX || var == VAR_FLAGS;
		assert_int_equal(sv->kind == V_PHI, changed);
		if (!changed)
			assert_int_equal(f->s.at_start[h][var], var); /* the entry value */
	}
	/* rcx = φ(0 from the entry block, rcx + 1 from the body) */
	const ssa_value *phi = &f->s.vals[f->s.at_start[h][R_CX]];
	assert_int_equal(phi->block, h);
	assert_int_equal(phi->nargs, r->blocks[h].npred);
	for (uint32_t k = 0; k < phi->nargs; k++) {
		uint32_t p = r->blocks[h].pred[k];
		uint32_t want = p == 0 ? ssa_after(&f->s, 1, R_CX) : ssa_after(&f->s, 5, R_CX);
		assert_int_equal(phi->args[k], want);
	}
	assert_ptr_equal(expr_of_value(f->c, phi->args[0] == ssa_after(&f->s, 1, R_CX) ?
					 phi->args[0] : phi->args[1]),
			 expr_const(f->c, 0));
	assert_ptr_equal(after(f, 5, R_CX),
			 expr_add(f->c, expr_leaf(f->c, f->s.at_start[h][R_CX]), expr_const(f->c, 1)));
	/* one value per definition, owned by its instruction */
	for (uint32_t i = 0; i < r->ninsn; i++) {
		uint32_t n = 0;
		for (uint32_t v = 0; v < f->s.nvals; v++)
			n += f->s.vals[v].kind == V_DEF && f->s.vals[v].insn == i;
		const insn *in = &r->insns[i];
		uint32_t want = popcount(in->writes & 0xffff) + !!(in->writes & REG_BIT(R_FLAGS));
		if (n != want)
			fail_msg("insn %u (%s): %u values for %u definitions", i, in->text, n, want);
	}
	/* the load walks a + 8*rcx */
	assert_op(f, 4, OP_ADD);
	assert_ptr_equal(expr_of_access(f->c, 4, 0),
			 expr_add(f->c, entry(f, R_DI),
				  expr_mul(f->c, expr_leaf(f->c, f->s.at_start[h][R_CX]), 8)));
	char buf[32], want[32];
	snprintf(want, sizeof want, "rcx.%u", f->s.at_start[h][R_CX]);
	assert_string_equal(ssa_value_name(&f->s, f->s.at_start[h][R_CX], buf, sizeof buf), want);
	assert_string_equal(ssa_var_name(VAR_FLAGS), "flags");
	assert_string_equal(ssa_var_name(VAR_MEM), "M");
	close_routine(f);
}

static const char call_asm[] = ASM_HEAD
	FUNC("f_call")
	"	push rbx\n"            /* 0 */
	"	mov rbx, rdi\n"        /* 1 */
	"	mov rdi, rsi\n"        /* 2 */
	"	call g_leaf\n"         /* 3 */
	"	mov rdx, rbx\n"        /* 4 */
	"	pop rbx\n"             /* 5 */
	"	ret\n"                 /* 6 */
	END("f_call")
	FUNC("g_leaf")
	"	lea rax, [rdi + 1]\n"
	"	ret\n"
	END("g_leaf")
	FUNC("f_icall")
	"	push rbx\n"            /* 0 */
	"	mov rbx, rdi\n"        /* 1 */
	"	mov rdi, rsi\n"        /* 2 */
	"	call rsi\n"            /* 3 */
	"	mov rdx, rbx\n"        /* 4 */
	"	pop rbx\n"             /* 5 */
	"	ret\n"                 /* 6 */
	END("f_icall");

/* A call through a pointer may change every caller-saved register; a
 * direct call to g_leaf only what g_leaf writes (rax: clobber.c), and
 * rcx..r11 keep their values across it.  Flags and memory always change. */
static void check_call_clobbers(const char *routine_name, bool direct)
{
	static const unsigned abi[] = { R_AX, R_CX, R_DX, R_SI, R_DI, R_8, R_9,
					R_10, R_11, VAR_FLAGS, VAR_MEM };
	fixture *f = open_routine(build("call", ".s", call_asm, NULL, "-O0"), routine_name);
	for (size_t k = 0; k < sizeof abi / sizeof *abi; k++) {
		const ssa_value *v = &f->s.vals[f->s.before[4][abi[k]]];
		if (direct && abi[k] != R_AX && abi[k] < VAR_FLAGS) {
			assert_int_equal(f->s.before[4][abi[k]], f->s.before[3][abi[k]]);
			continue;
		}
		assert_int_equal(v->kind, V_CLOBBER);
		assert_int_equal(v->insn, 3);
		assert_int_equal(v->var, abi[k]);
	}
	close_routine(f);
}

static void test_call_clobbers_caller_saved_and_keeps_rsp(void **state)
{
	(void)state;
	check_call_clobbers("f_icall", false);
	check_call_clobbers("f_call", true);
	fixture *f = open_routine(build("call", ".s", call_asm, NULL, "-O0"), "f_call");
	assert_op(f, 3, OP_CALL);
	assert_int_equal(f->s.before[4][R_SP], f->s.before[3][R_SP]);
	for (unsigned reg = R_BX; reg <= R_15; reg++)
		if (reg == R_BX || reg == R_BP || reg >= R_12)
			assert_int_equal(f->s.before[4][reg], f->s.before[3][reg]);
	/* rbx survives the call: rdx = the entry rdi */
	assert_ptr_equal(after(f, 4, R_DX), entry(f, R_DI));
	/* push moved rsp by 8, pop moves it back */
	assert_ptr_equal(after(f, 0, R_SP), expr_add(f->c, entry(f, R_SP), expr_const(f->c, -8)));
	assert_ptr_equal(after(f, 5, R_SP), entry(f, R_SP));
	assert_ptr_equal(expr_of_value(f->c, f->s.before[4][R_AX]),
			 expr_leaf(f->c, f->s.before[4][R_AX]));
	close_routine(f);
}

static const char selfloop_asm[] = ASM_HEAD
	FUNC("f_selfloop")
	"	dec rdi\n"
	"	jnz f_selfloop\n"
	"	ret\n"
	END("f_selfloop");

/* A jump back to the routine's first instruction: block 0 gets φs whose
 * extra (implicit) incoming edge is the routine entry. */
static void test_back_edge_to_entry_block(void **state)
{
	(void)state;
	fixture *f = open_routine(build("selfloop", ".s", selfloop_asm, NULL, "-O0"), "f_selfloop");
	const routine *r = f->r;
	if (r->blocks[0].npred == 0)
		skip(); /* the CFG treats the jump as a tail call */
	const ssa_value *phi = &f->s.vals[f->s.at_start[0][R_DI]];
	assert_int_equal(phi->kind, V_PHI);
	assert_int_equal(phi->nargs, r->blocks[0].npred);
	assert_int_equal(phi->args[0], ssa_after(&f->s, 0, R_DI));
	assert_int_equal(f->s.at_start[0][R_SI], R_SI);
	assert_ptr_equal(after(f, 0, R_DI),
			 expr_add(f->c, expr_leaf(f->c, f->s.at_start[0][R_DI]), expr_const(f->c, -1)));
	close_routine(f);
}

/* ------------------------------------------------- machine widths */

static const char width_asm[] = ASM_HEAD
	FUNC("f_width")
	"	add edi, esi\n"              /* 0: (u32)(rdi + rsi) */
	"	movsxd rax, edi\n"           /* 1: (s32)(rdi + rsi) */
	"	xor ecx, ecx\n"              /* 2: 0 */
	"	movzx edx, sil\n"            /* 3: (u8)(rsi) */
	"	movsx r8, si\n"              /* 4: (s16)(rsi) */
	"	mov al, 1\n"                 /* 5: merge: a leaf */
	"	lea r9d, [rdi + rsi*4 + 3]\n"/* 6: (u32)(rdi + 5*rsi + 3) */
	"	imul r10, rsi, 24\n"         /* 7: 24*rsi */
	"	shl r11, 3\n"                /* 8: 8*r11 */
	"	neg rsi\n"                   /* 9: -rsi */
	"	mov r8d, -1\n"               /* 10: 0xffffffff */
	"	sub rdx, rdx\n"              /* 11: 0 */
	"	mov r9d, r9d\n"              /* 12: r9 unchanged */
	"	cdqe\n"                      /* 13: (s32)(rax) */
	"	imul r10, qword ptr [rdi]\n"         /* 14: a load: leaf */
	"	inc r11d\n"                  /* 15: (u32)(8*r11 + 1) */
	"	ret\n"
	END("f_width");

static void test_widths_are_exact(void **state)
{
	(void)state;
	fixture *f = open_routine(build("width", ".s", width_asm, NULL, "-O0"), "f_width");
	expr_ctx *c = f->c;
	expr *di = entry(f, R_DI), *si = entry(f, R_SI);
	expr *sum = expr_add(c, di, si);
	assert_op(f, 0, OP_ADD);
	assert_ptr_equal(after(f, 0, R_DI), expr_zext(c, sum, 32));
	assert_int_equal(after(f, 0, R_DI)->kind, E_ZEXT);
	assert_op(f, 1, OP_MOVSX);
	assert_ptr_equal(after(f, 1, R_AX), expr_sext(c, sum, 32));
	assert_int_equal(after(f, 1, R_AX)->kind, E_SEXT);
	assert_prints(f, after(f, 1, R_AX), "(s32)(rsi.6 + rdi.7)");
	assert_ptr_equal(after(f, 2, R_CX), expr_const(c, 0));
	assert_op(f, 3, OP_MOVZX);
	assert_ptr_equal(after(f, 3, R_DX), expr_zext(c, si, 8));
	assert_op(f, 4, OP_MOVSX);
	assert_ptr_equal(after(f, 4, R_8), expr_sext(c, si, 16));
	assert_prints(f, after(f, 4, R_8), "(s16)(rsi.6)");
	uint32_t al = ssa_after(&f->s, 5, R_AX);
	assert_ptr_equal(expr_of_value(c, al), expr_leaf(c, al));
	assert_op(f, 6, OP_LEA);
	assert_ptr_equal(after(f, 6, R_9),
			 expr_zext(c, expr_add(c, expr_add(c, di, expr_mul(c, si, 5)),
					       expr_const(c, 3)), 32));
	assert_prints(f, after(f, 6, R_9), "(u32)(0x3 + 5*rsi.6 + rdi.7)");
	assert_ptr_equal(after(f, 7, R_10), expr_mul(c, si, 24));
	assert_ptr_equal(after(f, 8, R_11), expr_mul(c, entry(f, R_11), 8));
	assert_ptr_equal(after(f, 9, R_SI), expr_mul(c, si, -1));
	assert_prints(f, after(f, 9, R_SI), "-rsi.6");
	assert_ptr_equal(after(f, 10, R_8), expr_const(c, 0xffffffff));
	assert_ptr_equal(after(f, 11, R_DX), expr_const(c, 0));
	assert_ptr_equal(after(f, 12, R_9), after(f, 6, R_9));
	assert_op(f, 13, OP_MOVSX);
	assert_ptr_equal(after(f, 13, R_AX), expr_sext(c, expr_leaf(c, al), 32));
	uint32_t ld = ssa_after(&f->s, 14, R_10);
	assert_ptr_equal(expr_of_value(c, ld), expr_leaf(c, ld));
	assert_ptr_equal(after(f, 15, R_11),
			 expr_zext(c, expr_add(c, expr_mul(c, entry(f, R_11), 8), expr_const(c, 1)), 32));
	close_routine(f);
}

/* ------------------------------------------------------ accesses */

static const char access_asm[] = ASM_HEAD
	FUNC("f_access")
	"	mov rax, [rdi + 8]\n"
	"	mov rdx, [rdi + 16]\n"
	"	mov ecx, dword ptr [rip + table]\n"
	"	mov r8, qword ptr fs:[0x28]\n"
	"	mov r9d, dword ptr [edi + esi*2 + 4]\n"
	"	mov r10, qword ptr gs:[0x10]\n"
	"	ret\n"
	END("f_access")
	".data\ntable: .long 1\n";

static void test_same_base_accesses_split_to_offsets(void **state)
{
	(void)state;
	fixture *f = open_routine(build("access", ".s", access_asm, NULL, "-O0"), "f_access");
	expr_ctx *c = f->c;
	int64_t o1, o2;
	expr *b1 = expr_split_const(c, expr_of_access(c, 0, 0), &o1);
	expr *b2 = expr_split_const(c, expr_of_access(c, 1, 0), &o2);
	assert_ptr_equal(b1, b2);
	assert_ptr_equal(b1, entry(f, R_DI));
	assert_int_equal(o1, 8);
	assert_int_equal(o2, 16);
	/* RIP-relative: the link-time address of `table` plus the load bias */
	const insn *in = &f->r->insns[2];
	assert_true(in->mem[0].flags & MEM_RIPREL);
	expr *t = expr_of_access(c, 2, 0);
	assert_ptr_equal(expr_split_const(c, t, &o1), expr_leaf(c, SSA_BIAS));
	const elf_section *sec = elf_section_at(&f->p.bin, (uint64_t)o1);
	assert_non_null(sec);
	assert_string_equal(sec->name, ".data");
	/* fs: the thread pointer, which the replay knows per thread (its
	 * START chunk), plus the address */
	assert_ptr_equal(expr_split_const(c, expr_of_access(c, 3, 0), &o1),
			 expr_leaf(c, SSA_FSBASE));
	assert_int_equal(o1, 0x28);
	/* gs: a base the analysis cannot see, recorded */
	assert_null(expr_of_access(c, 5, 0));
	/* 32-bit addressing wraps at 4 GiB */
	assert_true(f->r->insns[4].mem[0].addr32);
	assert_ptr_equal(expr_of_access(c, 4, 0),
			 expr_zext(c, expr_add(c, expr_add(c, entry(f, R_DI), expr_mul(c, entry(f, R_SI), 2)),
					       expr_const(c, 4)), 32));
	close_routine(f);
}

/* Two ways into a join with the same frame (one moves rsp and puts it
 * back): the join's rsp φ is the entry rsp less 8, not a recorded value
 * (ivres.c, resolve_sp_phis), so the access there needs no probe. */
static const char spjoin_asm[] = ASM_HEAD
	FUNC("f_spjoin")
	"	push rbx\n"
	"	test edi, edi\n"
	"	je 1f\n"
	"	sub rsp, 16\n"
	"	mov qword ptr [rsp], rdi\n"
	"	add rsp, 16\n"
	"	jmp 2f\n"
	"1:	mov qword ptr [rsp], rsi\n"
	"2:	mov rax, qword ptr [rsp]\n"
	"	pop rbx\n"
	"	ret\n"
	END("f_spjoin");

static void test_rsp_phi_of_equal_frames_is_computed(void **state)
{
	(void)state;
	fixture *f = open_routine(build("spjoin", ".s", spjoin_asm, NULL, "-O0"), "f_spjoin");
	assert_op(f, 8, OP_MOV);
	/* the SSA has a φ there: the two ways define rsp differently */
	uint32_t phi = f->s.before[8][R_SP];
	assert_int_equal(f->s.vals[phi].kind, V_PHI);
	analysis a;
	iv_analyze(&a, &f->p, f->r, 0);
	bool seen = false;
	for (uint32_t k = 0; k < a.nacc; k++) {
		if (a.acc[k].insn != 8)
			continue;
		int64_t off;
		assert_non_null(a.acc[k].addr);
		assert_ptr_equal(expr_split_const(a.ec, a.acc[k].addr, &off), expr_leaf(a.ec, R_SP));
		assert_int_equal(off, -8);
		seen = true;
	}
	assert_true(seen);
	for (uint32_t k = 0; k < a.nprobes; k++)
		assert_false(a.probes[k].insn == 8 && a.probes[k].kind == PR_REG_BEFORE);
	iv_free(&a);
	close_routine(f);
}

static const char frame_c[] =
	"int frame(int a, int b) { int x = a * 3; int y = b + x; return x ^ y; }\n";

/* At -O0 gcc keeps locals at [rbp-k] after push rbp; mov rbp, rsp: every
 * such access is rsp_entry - 8 - k. */
static void test_frame_accesses_relative_to_entry_rsp(void **state)
{
	(void)state;
	fixture *f = open_routine(build("frame", ".c", frame_c, NULL, "-O0"), "frame");
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->r->ninsn; i++) {
		const insn *in = &f->r->insns[i];
		for (unsigned k = 0; k < in->nmem; k++) {
			const mem_access *m = &in->mem[k];
			int64_t off;
			expr *e = expr_of_access(f->c, i, k);
			assert_non_null(e);
			assert_ptr_equal(expr_split_const(f->c, e, &off), entry(f, R_SP));
			if (m->base == R_BP) {
				assert_int_equal(off, m->disp - 8);
				n++;
			}
		}
	}
	assert_true(n >= 4);
	/* e.g. the first store [rbp-0x14] prints as rsp.4 - 0x1c */
	for (uint32_t i = 0; i < f->r->ninsn; i++)
		if (f->r->insns[i].nmem && f->r->insns[i].mem[0].base == R_BP &&
		    f->r->insns[i].mem[0].disp == -0x14) {
			assert_prints(f, expr_of_access(f->c, i, 0), "rsp.4 - 0x1c");
			break;
		}
	close_routine(f);
}

static const char sum_c[] =
	"long sum(const long *a, long n) { long s = 0;\n"
	"  for (long i = 0; i < n; i++) s += a[i]; return s; }\n";

/* At -O2 the load in the loop is based on a φ of the loop header and
 * entry values only. */
typedef struct phi_hit {
	const ssa *s;
	uint32_t header;
	bool phi, other;
} phi_hit;

static void note_leaf(uint32_t v, void *arg)
{
	phi_hit *h = arg;
	const ssa_value *sv = &h->s->vals[v];
	if (sv->kind == V_PHI && sv->block == h->header)
		h->phi = true;
	else if (sv->kind != V_ENTRY)
		h->other = true;
}

static void test_loop_load_based_on_header_phi(void **state)
{
	(void)state;
	fixture *f = open_routine(build("sum", ".c", sum_c, NULL, "-O2"), "sum");
	const routine *r = f->r;
	assert_int_equal(r->nloops, 1);
	uint32_t h = r->loops[0].header, seen = 0;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		if (r->blocks[f->s.block_of[i]].loop != 0)
			continue;
		for (unsigned k = 0; k < r->insns[i].nmem; k++) {
			phi_hit hit = { &f->s, h, false, false };
			expr *e = expr_of_access(f->c, i, k);
			assert_non_null(e);
			expr_leaves(e, note_leaf, &hit);
			assert_true(hit.phi);
			assert_false(hit.other);
			seen++;
		}
	}
	assert_true(seen >= 1);
	close_routine(f);
}

/* ------------------------------------------------ canonical pool */

static void test_hash_consing_makes_equal_sums_identical(void **state)
{
	(void)state;
	fixture *f = open_routine(build("loop", ".s", loop_asm, NULL, "-O0"), "f_loop");
	expr_ctx *c = f->c;
	expr *di = entry(f, R_DI), *si = entry(f, R_SI), *ax = entry(f, R_AX);
	expr *k16 = expr_const(c, 16);
	/* rdi + 8*rsi + 16 == (rdi + 16) + rsi*8 */
	expr *x = expr_add(c, expr_add(c, di, expr_mul(c, si, 8)), k16);
	expr *y = expr_add(c, expr_add(c, di, k16), expr_mul(c, si, 8));
	assert_ptr_equal(x, y);
	assert_ptr_equal(expr_add(c, di, si), expr_add(c, si, di));
	assert_ptr_equal(expr_mul(c, expr_add(c, di, expr_const(c, 2)), 4),
			 expr_add(c, expr_mul(c, di, 4), expr_const(c, 8)));
	assert_ptr_equal(expr_mul(c, expr_mul(c, di, 3), 5), expr_mul(c, di, 15));
	assert_ptr_equal(expr_mul(c, di, 1), di);
	assert_ptr_equal(expr_add(c, di, expr_mul(c, di, -1)), expr_const(c, 0));
	assert_ptr_equal(expr_add(c, expr_const(c, 3), expr_const(c, 4)), expr_const(c, 7));
	/* wrap-around, not overflow */
	assert_ptr_equal(expr_add(c, expr_const(c, INT64_MAX), expr_const(c, 1)),
			 expr_const(c, INT64_MIN));
	/* extensions */
	expr *z = expr_zext(c, expr_add(c, di, si), 32);
	assert_ptr_equal(expr_zext(c, z, 32), z);
	assert_ptr_equal(expr_zext(c, expr_const(c, 0x1ffffffffll), 32), expr_const(c, 0xffffffff));
	assert_ptr_equal(expr_sext(c, expr_const(c, 0x80000000ll), 32), expr_const(c, -0x80000000ll));
	assert_ptr_equal(expr_zext(c, expr_add(c, z, expr_const(c, 1)), 32),
			 expr_zext(c, expr_add(c, expr_add(c, di, si), expr_const(c, 1)), 32));
	assert_ptr_equal(expr_zext(c, expr_add(c, di, expr_const(c, 0xffffffff)), 32),
			 expr_zext(c, expr_add(c, di, expr_const(c, -1)), 32));
	assert_ptr_equal(expr_zext(c, expr_zext(c, di, 8), 32), expr_zext(c, di, 8));
	assert_ptr_equal(expr_sext(c, expr_zext(c, di, 8), 32), expr_zext(c, di, 8));
	assert_ptr_equal(expr_sext(c, z, 32), expr_sext(c, expr_add(c, di, si), 32));
	assert_true(expr_zext(c, expr_sext(c, di, 8), 32) != expr_sext(c, di, 8));
	/* products of non-constants distribute and commute */
	expr *I = expr_counter(c, 0);
	assert_ptr_equal(expr_mulv(c, expr_add(c, ax, expr_const(c, 2)), I),
			 expr_add(c, expr_mulv(c, I, ax), expr_mul(c, I, 2)));
	assert_true(expr_has_counter(expr_add(c, di, expr_mulv(c, ax, I))));
	assert_false(expr_has_counter(x));
	assert_prints(f, expr_add(c, expr_add(c, expr_const(c, 0x4040a0), expr_mul(c, si, 8)),
				  expr_mul(c, I, 2048)),
		      "0x4040a0 + 8*rsi.6 + 2048*I0");
	assert_prints(f, expr_add(c, di, expr_mul(c, si, -8)), "-8*rsi.6 + rdi.7");
	close_routine(f);
}

static void count_leaf(uint32_t v, void *arg)
{
	uint32_t *seen = arg;
	seen[v < 32 ? v : 31]++;
}

static void test_leaves_listed_once(void **state)
{
	(void)state;
	fixture *f = open_routine(build("loop", ".s", loop_asm, NULL, "-O0"), "f_loop");
	expr_ctx *c = f->c;
	expr *di = entry(f, R_DI), *si = entry(f, R_SI);
	expr *e = expr_add(c, expr_zext(c, expr_add(c, di, si), 32), expr_mulv(c, di, si));
	uint32_t seen[32] = {0};
	expr_leaves(e, count_leaf, seen);
	assert_int_equal(seen[R_DI], 1);
	assert_int_equal(seen[R_SI], 1);
	assert_int_equal(seen[R_AX], 0);
	close_routine(f);
}

/* ------------------------------------------------------ evaluation */

/* The same arithmetic as a real function: its result, computed by the
 * CPU, must equal expr_eval of the expression of rax at its ret. */
static const char arith_asm[] = ASM_HEAD
	FUNC("f_arith")
	"	lea eax, [rdi + rsi*2 + 5]\n"
	"	movsxd rdx, eax\n"
	"	imul rdx, rdx, -3\n"
	"	mov ecx, esi\n"
	"	shl rcx, 4\n"
	"	add rdx, rcx\n"
	"	sub rdx, rdi\n"
	"	movzx r8d, dil\n"
	"	add rdx, r8\n"
	"	movsx r9, si\n"
	"	lea rax, [rdx + r9*8 - 0x40]\n"
	"	add eax, 0x7ffffff0\n"
	"	cdqe\n"
	"	neg rax\n"
	"	inc rax\n"
	"	not rax\n"
	"	and eax, 0xffff\n"
	"	lea rax, [rax + rdx*2]\n"
	"	ret\n"
	END("f_arith");

static const char arith_main[] =
	"#include <stdio.h>\n#include <stdlib.h>\n"
	"unsigned long f_arith(unsigned long, unsigned long);\n"
	"int main(int argc, char **argv) {\n"
	"  for (int i = 1; i + 1 < argc; i += 2)\n"
	"    printf(\"%lu\\n\", f_arith(strtoul(argv[i], 0, 0), strtoul(argv[i + 1], 0, 0)));\n"
	"  return 0; }\n";

typedef struct inputs {
	uint64_t di, si;
} inputs;

static uint64_t eval_leaf(uint32_t v, void *arg)
{
	const inputs *in = arg;
	if (v == R_DI)
		return in->di;
	if (v == R_SI)
		return in->si;
	fail_msg("unexpected leaf %u", v);
	return 0;
}

static uint64_t eval_counter(uint32_t l, void *arg)
{
	fail_msg("unexpected counter %u", l);
	return 0;
}

/* Runs exe on every case (its main prints fn(di, si) per pair) and
 * fails on the first result other than want(case). */
static void compare_with_cpu(const char *exe, const char *fn, const inputs *cases, size_t n,
			     uint64_t (*want)(const inputs *in, void *ctx), void *ctx)
{
	char cmd[2048];
	int len = snprintf(cmd, sizeof cmd, "%s", exe);
	for (size_t k = 0; k < n; k++)
		len += snprintf(cmd + len, sizeof cmd - (size_t)len, " %llu %llu",
				(unsigned long long)cases[k].di, (unsigned long long)cases[k].si);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	for (size_t k = 0; k < n; k++) {
		unsigned long long got;
		assert_int_equal(fscanf(p, "%llu", &got), 1);
		uint64_t w = want(&cases[k], ctx);
		if (got != w)
			fail_msg("%s(0x%llx, 0x%llx): cpu 0x%llx, expression 0x%llx", fn,
				 (unsigned long long)cases[k].di, (unsigned long long)cases[k].si,
				 got, (unsigned long long)w);
	}
	pclose(p);
}

static uint64_t arith_want(const inputs *in, void *e)
{
	return expr_eval(e, eval_leaf, eval_counter, (void *)in);
}

static void test_eval_matches_execution(void **state)
{
	(void)state;
	static const inputs cases[] = {
		{ 0, 0 }, { 1, 2 }, { 0xfffffffff0000000ull, 0x80000001ull },
		{ 0x7fffffffull, 0xffffffffffffffffull }, { 0x123456789abcdefull, 0xfedcba987654321ull },
		{ 0x80, 0x8000 }, { 0xffffffffffffff7full, 0x7fff },
	};
	const char *exe = build("arith", ".s", arith_asm, arith_main, "-O0");
	fixture *f = open_routine(exe, "f_arith");
	uint32_t ret = f->r->ninsn - 1;
	assert_op(f, ret, OP_RET);
	expr *e = expr_of_value(f->c, f->s.before[ret][R_AX]);
	/* only the entry rdi and rsi remain */
	uint32_t seen[32] = {0};
	expr_leaves(e, count_leaf, seen);
	for (unsigned v = 0; v < 32; v++)
		assert_int_equal(seen[v], v == R_DI || v == R_SI);
	compare_with_cpu(exe, "f_arith", cases, sizeof cases / sizeof *cases, arith_want, e);
	close_routine(f);
}

/* and, shr and sar by a constant are not linear: expr_of_value stops at
 * their results (leaves), and expr_of_def_bits gives each as an
 * expression over its operands, which the skeleton computes.  The chain
 * below, evaluated through those expressions down to the entry rdi and
 * rsi, must give what the processor gives (widths, sign fill, negative
 * immediates). */
static const char bits_asm[] = ASM_HEAD
	FUNC("f_bits")
	"	mov rax, rdi\n"
	"	shr rax, 20\n"
	"	and rax, rsi\n"
	"	lea rdx, [rax + 1]\n"
	"	and edx, 0x7ff1\n"
	"	mov rcx, rdi\n"
	"	sar rcx, 7\n"
	"	mov r8, rsi\n"
	"	sar r8d, 3\n"
	"	mov r9, rdi\n"
	"	shr r9, cl\n"
	"	shr esi, 5\n"
	"	and rdi, -64\n"
	"	lea rax, [rax + rdx*2]\n"
	"	add rax, rcx\n"
	"	add rax, r8\n"
	"	add rax, rsi\n"
	"	add rax, rdi\n"
	"	ret\n"
	END("f_bits");

static const char bits_main[] =
	"#include <stdio.h>\n#include <stdlib.h>\n"
	"unsigned long f_bits(unsigned long, unsigned long);\n"
	"int main(int argc, char **argv) {\n"
	"  for (int i = 1; i + 1 < argc; i += 2)\n"
	"    printf(\"%lu\\n\", f_bits(strtoul(argv[i], 0, 0), strtoul(argv[i + 1], 0, 0)));\n"
	"  return 0; }\n";

typedef struct bits_env {
	fixture *f;
	inputs in;
} bits_env;

static uint64_t bits_leaf(uint32_t v, void *arg)
{
	bits_env *b = arg;
	if (v == R_DI || v == R_SI)
		return eval_leaf(v, &b->in);
	expr *e = expr_of_def_bits(b->f->c, v);
	if (!e)
		fail_msg("leaf %u is not an and/shr/sar result", v);
	return expr_eval(e, bits_leaf, eval_counter, b);
}

typedef struct bits_want_ctx {
	fixture *f;
	expr *e;
} bits_want_ctx;

static uint64_t bits_want(const inputs *in, void *ctx)
{
	bits_want_ctx *x = ctx;
	bits_env b = { x->f, *in };
	return expr_eval(x->e, bits_leaf, eval_counter, &b);
}

static void test_bits_eval_matches_execution(void **state)
{
	(void)state;
	static const inputs cases[] = {
		{ 0, 0 }, { 0xffffffffffffffffull, 0xffffffffffffffffull },
		{ 0x123456789abcdefull, 0xfedcba987654321ull }, { 0x8000000000000000ull, 0x80000000ull },
		{ 0x7fffffffffffffffull, 0x7fffffffull }, { 0xfffffffff0000000ull, 0xfffffffe00000007ull },
	};
	const char *exe = build("bits", ".s", bits_asm, bits_main, "-O0");
	fixture *f = open_routine(exe, "f_bits");
	uint32_t ret = f->r->ninsn - 1;
	assert_op(f, ret, OP_RET);
	expr *e = expr_of_value(f->c, f->s.before[ret][R_AX]);
	/* a shift by cl is not computed; a load or an entry value neither */
	assert_op(f, 10, OP_SHR);
	assert_null(expr_of_def_bits(f->c, ssa_after(&f->s, 10, R_9)));
	assert_null(expr_of_def_bits(f->c, R_DI));
	bits_want_ctx x = { f, e };
	compare_with_cpu(exe, "f_bits", cases, sizeof cases / sizeof *cases, bits_want, &x);
	close_routine(f);
}

static void test_eval_by_hand(void **state)
{
	(void)state;
	fixture *f = open_routine(build("loop", ".s", loop_asm, NULL, "-O0"), "f_loop");
	expr_ctx *c = f->c;
	inputs in = { 0x1000, 0xffffffffffffffffull };
	expr *di = entry(f, R_DI), *si = entry(f, R_SI);
	/* 0x1000 + 8*(-1) + 16 */
	assert_int_equal(expr_eval(expr_add(c, expr_add(c, di, expr_mul(c, si, 8)), expr_const(c, 16)),
				   eval_leaf, eval_counter, &in), 0x1008);
	assert_int_equal(expr_eval(expr_zext(c, expr_add(c, di, si), 32), eval_leaf, eval_counter, &in),
			 0xfff);
	assert_int_equal(expr_eval(expr_sext(c, expr_add(c, si, si), 32), eval_leaf, eval_counter, &in),
			 0xfffffffffffffffeull);
	/* sign extension from bit 15 */
	inputs in2 = { 0, 0 };
	assert_int_equal(expr_eval(expr_sext(c, expr_add(c, di, expr_const(c, 0x8000)), 16),
				   eval_leaf, eval_counter, &in2), 0xffffffffffff8000ull);
	close_routine(f);
}

/* expr_set_value replaces a φ by a closed form; reset forgets the old
 * expressions built on the φ. */
static void test_set_value_replaces_phi(void **state)
{
	(void)state;
	fixture *f = open_routine(build("loop", ".s", loop_asm, NULL, "-O0"), "f_loop");
	expr_ctx *c = f->c;
	uint32_t h = f->r->loops[0].header;
	uint32_t phi = f->s.at_start[h][R_CX];
	expr *I = expr_counter(c, 0);
	expr *before = expr_of_access(c, 4, 0);
	expr_set_value(c, phi, I);
	expr_reset_memo(c);
	expr *now = expr_of_access(c, 4, 0);
	assert_true(before != now);
	assert_ptr_equal(now, expr_add(c, entry(f, R_DI), expr_mul(c, I, 8)));
	assert_ptr_equal(after(f, 5, R_CX), expr_add(c, I, expr_const(c, 1)));
	assert_prints(f, now, "rdi.7 + 8*I0");
	close_routine(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_header_gets_phis_for_changed_registers),
		cmocka_unit_test(test_call_clobbers_caller_saved_and_keeps_rsp),
		cmocka_unit_test(test_back_edge_to_entry_block),
		cmocka_unit_test(test_widths_are_exact),
		cmocka_unit_test(test_same_base_accesses_split_to_offsets),
		cmocka_unit_test(test_rsp_phi_of_equal_frames_is_computed),
		cmocka_unit_test(test_frame_accesses_relative_to_entry_rsp),
		cmocka_unit_test(test_loop_load_based_on_header_phi),
		cmocka_unit_test(test_hash_consing_makes_equal_sums_identical),
		cmocka_unit_test(test_leaves_listed_once),
		cmocka_unit_test(test_eval_matches_execution),
		cmocka_unit_test(test_bits_eval_matches_execution),
		cmocka_unit_test(test_eval_by_hand),
		cmocka_unit_test(test_set_value_replaces_phi),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
		if (system(cmd) != 0)
			rc = rc ? rc : 1;
	}
	return rc;
}
