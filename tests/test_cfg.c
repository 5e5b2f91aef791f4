/* Tests of routines, CFGs, dominators and loop nests on the samples. */
#include "tests/testutil.h"
#include <inttypes.h>
#include <unistd.h>
#include "analyzer/analyzer.h"

static program *load(const char *path)
{
	static program p;
	char err[ERR_LEN];
	if (program_load(&p, path, err) < 0)
		fail_msg("%s: %s", path, err);
	return &p;
}

/* Function symbols in executable sections, from readelf (independent of
 * our ELF reader); .cold parts belong to their parent. */
static size_t readelf_funcs(const char *path, uint64_t *out, size_t max)
{
	char cmd[512], line[1024];
	size_t n = 0;
	snprintf(cmd, sizeof cmd, "readelf -sW %s | awk '$4==\"FUNC\" && $7!=\"UND\" && $2!~/^0+$/ {print $2, $8}'", path);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) && n < max) {
		char name[512];
		unsigned long long a;
		if (sscanf(line, "%llx %511s", &a, name) == 2 && !strstr(name, ".cold")) {
			size_t k;
			for (k = 0; k < n && out[k] != a; k++)
				;
			if (k == n)
				out[n++] = a;
		}
	}
	pclose(f);
	return n;
}

static const char *const sample_names[] = {
	"matmul", "stencil", "triangular", "csr", "list", "tree", "hash", "switch",
	"funcptr", "recursion", "earlyexit", "irreducible", "strings", "qsort_cb",
	"threads", "bubble",
};
#define NSAMPLES (sizeof sample_names / sizeof *sample_names)

static void test_routines_equal_func_symbols(void **state)
{
	(void)state;
	for (size_t s = 0; s < NSAMPLES; s++) {
		const char *path = sample_path(sample_names[s], "O2", "pie", 0);
		uint64_t syms[1024];
		size_t n = readelf_funcs(path, syms, 1024);
		program *p = load(path);
		assert_true(n > 0);
		for (size_t i = 0; i < n; i++)
			if (!program_routine_at(p, syms[i]))
				fail_msg("%s: function symbol at 0x%llx has no routine", path,
					 (unsigned long long)syms[i]);
		for (uint32_t i = 0; i < p->nroutines; i++) {
			size_t k;
			for (k = 0; k < n && syms[k] != p->routines[i].start; k++)
				;
			if (k == n)
				fail_msg("%s: routine %s at 0x%llx is not a function symbol", path,
					 p->routines[i].name, (unsigned long long)p->routines[i].start);
		}
		program_free(p);
	}
}

/* The stripped copy finds its routines through .eh_frame and calls: every
 * routine it finds is a real function, and every function with code that
 * our unstripped analysis reaches from main or an FDE is found. */
static void test_stripped_routines_via_eh_frame(void **state)
{
	(void)state;
	static const char *const kernels[] = { "main", "matmul" };
	for (int pie = 0; pie < 2; pie++) {
		const char *full = sample_path("matmul", "O2", pie ? "pie" : "nopie", 0);
		const char *strip = sample_path("matmul", "O2", pie ? "pie" : "nopie", 1);
		program full_p, strip_p;
		char err[ERR_LEN];
		assert_int_equal(program_load(&full_p, full, err), 0);
		assert_int_equal(program_load(&strip_p, strip, err), 0);
		assert_true(strip_p.bin.stripped);
		for (uint32_t i = 0; i < strip_p.nroutines; i++)
			if (!program_routine_at(&full_p, strip_p.routines[i].start))
				fail_msg("%s: routine at 0x%llx is not a function", strip,
					 (unsigned long long)strip_p.routines[i].start);
		for (size_t k = 0; k < 2; k++) {
			routine *r = program_routine_named(&full_p, kernels[k]);
			assert_non_null(r);
			routine *q = program_routine_at(&strip_p, r->start);
			if (!q)
				fail_msg("%s: %s not found when stripped", strip, kernels[k]);
			assert_int_equal(q->nblocks, r->nblocks);
			assert_int_equal(q->nloops, r->nloops);
		}
		program_free(&full_p);
		program_free(&strip_p);
	}
}

static void check_routine_structure(const char *path, const routine *r)
{
	uint32_t covered = 0;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		const block *bl = &r->blocks[b];
		assert_true(bl->ninsn > 0);
		if (bl->start != r->insns[bl->first].addr)
			fail_msg("%s %s: block 0x%llx does not start at its first instruction",
				 path, r->name, (unsigned long long)bl->start);
		/* consecutive instructions inside a block */
		for (uint32_t i = bl->first + 1; i < bl->first + bl->ninsn; i++)
			assert_int_equal(r->insns[i - 1].addr + r->insns[i - 1].len, r->insns[i].addr);
		covered += bl->ninsn;
		for (uint32_t k = 0; k < bl->nsucc; k++) {
			const block *s = &r->blocks[bl->succ[k]];
			if (cfg_block_of(r, s->start) != (int)bl->succ[k])
				fail_msg("%s %s: edge to a non-start", path, r->name);
			/* the edge is mirrored */
			bool found = false;
			for (uint32_t m = 0; m < s->npred; m++)
				found |= s->pred[m] == b;
			assert_true(found);
		}
		/* a block whose last instruction falls through has exactly its
		 * successor at the next address */
		const insn *last = &r->insns[bl->first + bl->ninsn - 1];
		if (last->flow == FLOW_CJUMP && !(bl->flags & BLK_TAILCALL)) {
			int t = cfg_block_of(r, last->target);
			assert_true(t >= 0);
		}
	}
	/* every instruction is in exactly one block */
	if (covered != r->ninsn)
		fail_msg("%s %s: blocks cover %u of %u instructions", path, r->name, covered,
			 r->ninsn);
	for (uint32_t i = 0; i < r->ninsn; i++) {
		int b = cfg_block_of(r, r->insns[i].addr);
		assert_true(b >= 0);
		assert_true(i >= r->blocks[b].first && i < r->blocks[b].first + r->blocks[b].ninsn);
	}
	/* the entry dominates every reachable block */
	for (uint32_t b = 1; b < r->nblocks; b++)
		if (r->blocks[b].idom >= 0)
			assert_true(dom_dominates(r, 0, b));
}

static void test_blocks_cover_instructions_once(void **state)
{
	(void)state;
	static const char *const opts[] = { "O0", "O2", "O3" };
	for (size_t s = 0; s < NSAMPLES; s++)
		for (int o = 0; o < 3; o++) {
			const char *path = sample_path(sample_names[s], opts[o], o == 1 ? "nopie" : "pie", 0);
			program *p = load(path);
			for (uint32_t i = 0; i < p->nroutines; i++)
				check_routine_structure(path, &p->routines[i]);
			program_free(p);
		}
}

static uint32_t max_depth(const routine *r)
{
	uint32_t d = 0;
	for (uint32_t i = 0; i < r->nloops; i++)
		if (r->loops[i].depth > d)
			d = r->loops[i].depth;
	return d;
}

static void expect_depth(const char *sample, const char *opt, const char *func, uint32_t depth)
{
	program *p = load(sample_path(sample, opt, "pie", 0));
	routine *r = program_routine_named(p, func);
	if (!r)
		fail_msg("%s: no routine %s", sample, func);
	if (max_depth(r) != depth)
		fail_msg("%s -%s %s: loop depth %u, expected %u", sample, opt, func, max_depth(r), depth);
	for (uint32_t i = 0; i < r->nloops; i++)
		assert_false(r->loops[i].irreducible);
	program_free(p);
}

static void test_loop_nest_depths_match_source(void **state)
{
	(void)state;
	expect_depth("matmul", "O2", "matmul", 3);
	expect_depth("matmul", "O0", "matmul", 3);
	expect_depth("stencil", "O2", "stencil", 3);
	expect_depth("stencil", "O0", "stencil", 3);
	expect_depth("list", "O2", "list_sum", 1);
}

static void test_irreducible_sample_flagged(void **state)
{
	(void)state;
	static const char *const opts[] = { "O0", "O2" };
	for (int o = 0; o < 2; o++) {
		program *p = load(sample_path("irreducible", opts[o], "pie", 0));
		routine *r = program_routine_named(p, "irreducible");
		assert_non_null(r);
		if (!r->irreducible)
			fail_msg("irreducible -%s: not flagged", opts[o]);
		routine *m = program_routine_named(p, "matmul");
		assert_null(m);
		program_free(p);
		p = load(sample_path("matmul", opts[o], "pie", 0));
		for (uint32_t i = 0; i < p->nroutines; i++)
			assert_false(p->routines[i].irreducible);
		program_free(p);
	}
}

/* Targets of the switch's jump table, read independently with objdump:
 * the case labels are the blocks the table points at. */
static void test_switch_jump_table_targets(void **state)
{
	(void)state;
	static const char *const pies[] = { "pie", "nopie" };
	for (int k = 0; k < 2; k++) {
		program *p = load(sample_path("switch", "O2", pies[k], 0));
		routine *r = program_routine_named(p, "dispatch");
		assert_non_null(r);
		int tables = 0;
		for (uint32_t b = 0; b < r->nblocks; b++) {
			const block *bl = &r->blocks[b];
			assert_false(bl->flags & BLK_IJUMP);
			if (!(bl->flags & BLK_JUMPTABLE))
				continue;
			tables++;
			/* dispatch() has ten cases (0-9) with distinct bodies; samples/README.md */
			assert_int_equal(bl->nsucc, 10);
		}
		assert_int_equal(tables, 1);
		program_free(p);
	}
}

/* jumptab's switches have their table bases set before their loops (in
 * r10 across a call, in rcx), outside the jump's straight-line window:
 * resolved from the constants that reach the jump (samples/README.md). */
static void test_table_base_from_reaching_constants(void **state)
{
	(void)state;
	static const char *const opts[] = { "O0", "O2", "O3" };
	static const char *const pies[] = { "pie", "nopie" };
	for (int o = 0; o < 3; o++)
		for (int k = 0; k < 2; k++) {
			const char *path = sample_path("jumptab", opts[o], pies[k], 0);
			program *p = load(path);
			int tables = 0;
			for (uint32_t i = 0; i < p->nroutines; i++) {
				const routine *r = &p->routines[i];
				bool crt = strstr(r->name, "tm_clones") != NULL;
				for (uint32_t b = 0; b < r->nblocks; b++) {
					const block *bl = &r->blocks[b];
					if ((bl->flags & BLK_IJUMP) && !crt)
						fail_msg("%s: %s: indirect jump at block 0x%llx unresolved",
							 path, r->name, (unsigned long long)bl->start);
					if (!(bl->flags & BLK_JUMPTABLE))
						continue;
					tables++;
					/* 16 distinct bodies in options(), 12 in classify() */
					if (bl->nsucc < 10)
						fail_msg("%s: table at 0x%llx has %u targets", path,
							 (unsigned long long)bl->start, bl->nsucc);
				}
			}
			if (tables != 2)
				fail_msg("%s: %d jump tables resolved, expected 2", path, tables);
			program_free(p);
		}
}

/* The PIE shape `movsxd r, [b + i*4]; add r, b; jmp r` is a relative
 * jump table; on Debian's binaries none such may stay unresolved. */
static void test_debian_relative_tables_resolved(void **state)
{
	(void)state;
	static const char *const bins[] = { "/usr/bin/gzip", "/usr/bin/ls", "/usr/bin/sed",
					    "/usr/bin/grep", "/usr/bin/xz", "/usr/bin/uniq",
					    "/usr/bin/head", "/usr/bin/find", "/usr/bin/sort" };
	for (size_t k = 0; k < sizeof bins / sizeof *bins; k++) {
		program *p = load(bins[k]);
		for (uint32_t i = 0; i < p->nroutines; i++) {
			const routine *r = &p->routines[i];
			for (uint32_t b = 0; b < r->nblocks; b++) {
				const block *bl = &r->blocks[b];
				if (!(bl->flags & BLK_IJUMP) || bl->ninsn < 3)
					continue;
				const insn *j = &r->insns[bl->first + bl->ninsn - 1];
				const insn *add = j - 1, *ld = j - 2;
				if (j->opd[0].type == OPD_REG && add->op == OP_ADD &&
				    add->opd[0].reg == j->opd[0].reg && ld->op == OP_MOVSX &&
				    ld->nmem == 1 && ld->mem[0].scale == 4 &&
				    add->opd[1].type == OPD_REG && ld->mem[0].base == add->opd[1].reg)
					fail_msg("%s: relative jump table at 0x%llx unresolved", bins[k],
						 (unsigned long long)j->addr);
			}
		}
		program_free(p);
	}
}

/* Every possible entry (symbol, FDE start, address taken) that a routine
 * decodes is one of its block starts, so no probe span covers it.  In
 * stripped find, an FDE start whose address is taken used to be merged
 * into the routine that falls into it (after `call error`, which does not
 * return for a non-zero status). */
static void test_possible_entries_start_blocks(void **state)
{
	(void)state;
	static const char *const bins[] = { "/usr/bin/find", "/usr/bin/ls" };
	for (size_t k = 0; k < 2; k++) {
		program *p = load(bins[k]);
		assert_true(p->nentries > 0);
		for (uint32_t i = 0; i < p->nroutines; i++) {
			const routine *r = &p->routines[i];
			for (uint32_t n = 0; n < r->ninsn; n++) {
				uint64_t a = r->insns[n].addr;
				if (!program_is_entry(p, a))
					continue;
				int b = cfg_block_of(r, a);
				if (b < 0 || r->blocks[b].start != a)
					fail_msg("%s: %s: entry 0x%llx inside a block", bins[k], r->name,
						 (unsigned long long)a);
			}
		}
		program_free(p);
	}
}

/* A non-PIE routine with an indirect jump the analysis cannot resolve and
 * an immediate that looks like an address inside one of its instructions
 * (python3's PyObject_Free had one): the constant is no label, and no
 * instruction may be decoded from it (patching such overlapping code
 * broke python3 with SIGSEGV). */
/* Compiles the C source src with gcc and `flags` into a temporary
 * program and loads it; cpath and bin receive the files' names
 * (drop_program removes them). */
static program *build_and_load(const char *src, size_t n, const char *flags,
			       char cpath[80], char bin[80])
{
	const char *c = temp_file(src, n);
	char cmd[400];
	snprintf(cpath, 80, "%s.c", c);
	snprintf(bin, 80, "%s.bin", c);
	assert_int_equal(rename(c, cpath), 0);
	snprintf(cmd, sizeof cmd, "gcc %s -o %s %s", flags, bin, cpath);
	assert_int_equal(system(cmd), 0);
	return load(bin);
}

static void drop_program(program *p, const char *cpath, const char *bin)
{
	program_free(p);
	unlink(cpath);
	unlink(bin);
}

/* A function nobody calls or references, right after a function whose
 * last instruction calls a local function that never returns: the first
 * round of the analysis takes every callee to return, falls through into
 * the orphan and took it for a cold part of the caller; once the callee is
 * known not to return, the orphan must be a routine again (its accesses
 * were in no routine, and an indirect call to it would have been lost).
 * Every FDE start is a routine or a block of one, and no code byte lies
 * outside every known function. */
static void test_orphan_after_noreturn_call_is_a_routine(void **state)
{
	(void)state;
	static const char src[] =
		"#include <stdio.h>\n#include <stdlib.h>\n"
		"__attribute__((noinline)) static void die(const char *m)\n"
		"{ fputs(m, stderr); exit(2); }\n"
		"__attribute__((noinline)) int checked(int x) { if (x < 0) die(\"neg\"); return x * 3; }\n"
		"__attribute__((noinline, used)) static int orphan(int *p) { return p[0] + p[1]; }\n"
		"int main(int argc, char **argv) { (void)argv; return checked(argc); }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O2 -s -fno-toplevel-reorder "
				    "-fno-reorder-blocks-and-partition", cpath, bin);
	assert_true(p->bin.nfdes >= 4);
	for (size_t i = 0; i < p->bin.nfdes; i++) {
		uint64_t a = p->bin.fde_starts[i];
		bool found = program_routine_at(p, a) != NULL;
		for (uint32_t k = 0; k < p->nroutines && !found; k++) {
			int b = cfg_block_of(&p->routines[k], a);
			found = b >= 0 && p->routines[k].blocks[b].start == a;
		}
		if (!found)
			fail_msg("FDE start 0x%" PRIx64 " is in no routine", a);
	}
	assert_int_equal(p->unreached, 0);
	drop_program(p, cpath, bin);
}

static void test_constant_inside_insn_no_label(void **state)
{
	(void)state;
	static const char src[] =
		"int main(int argc, char **argv) { (void)argv;\n"
		"  long r; __asm__ volatile(\n"
		"  \"  mov $1f, %%rax\\n\"\n"
		"  \"  cmp $2, %1\\n\"\n"
		"  \"  jne 2f\\n\"\n"
		"  \"  mov $(2f + 2), %%rax\\n\"\n"	/* inside the movabs at 2: */
		"  \"  jmp *%%rax\\n\"\n"
		"  \"2: movabs $0x1122334455667788, %%rdx\\n\"\n"
		"  \"1: mov %1, %0\\n\"\n"
		"  : \"=r\"(r) : \"r\"((long)argc) : \"rax\", \"rdx\", \"cc\");\n"
		"  return (int)r; }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O1 -no-pie -fno-pie", cpath, bin);
	bool found = false;
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		if (strcmp(r->name, "main"))
			continue;
		found = true;
		for (uint32_t n = 1; n < r->ninsn; n++)
			if (r->insns[n - 1].addr + r->insns[n - 1].len > r->insns[n].addr)
				fail_msg("main: instruction 0x%llx decoded inside 0x%llx",
					 (unsigned long long)r->insns[n].addr,
					 (unsigned long long)r->insns[n - 1].addr);
	}
	assert_true(found);
	drop_program(p, cpath, bin);
}

/* exit(2) ends a thread (cfg.c thread_exit_syscall): the block ends at
 * the syscall, with no successor, when rax is 60 on the straight line
 * before it (through a register move, as glibc's start_thread does it);
 * a syscall whose number is something else (39, getpid), or comes from
 * memory, falls through as before. */
static void test_exit_syscall_ends_the_thread(void **state)
{
	(void)state;
	static const char src[] =
		"__attribute__((noinline)) void thr_exit(void) {\n"
		"  __asm__ volatile(\"mov $60, %%edx\\n1: xor %%edi, %%edi\\n\"\n"
		"    \"mov %%edx, %%eax\\nsyscall\\njmp 1b\\n\" ::: \"memory\"); }\n"
		"__attribute__((noinline)) long pid(long *p) { long r;\n"
		"  __asm__ volatile(\"mov $39, %%eax\\nsyscall\\nmov (%1), %%rdx\\n\"\n"
		"    \"mov %%rdx, %%rax\\nsyscall\" : \"=a\"(r) : \"r\"(p) : \"rcx\", \"r11\", \"rdx\", \"memory\");\n"
		"  return r; }\n"
		"int main(int argc, char **argv) { long x = 39; (void)argv;\n"
		"  if (argc > 5) thr_exit(); return (int)pid(&x) & 0; }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O1 -no-pie -fno-pie", cpath, bin);
	int seen = 0;
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		bool ex = !strcmp(r->name, "thr_exit"), pd = !strcmp(r->name, "pid");
		if (!ex && !pd)
			continue;
		seen++;
		unsigned exits = 0, falls = 0;
		for (uint32_t b = 0; b < r->nblocks; b++) {
			const block *bl = &r->blocks[b];
			for (uint32_t k = bl->first; k < bl->first + bl->ninsn; k++) {
				const insn *in = &r->insns[k];
				if (in->op != OP_SYSCALL)
					continue;
				if (in->flow == FLOW_HALT) {
					exits++;
					assert_true(k == bl->first + bl->ninsn - 1);
					assert_int_equal(bl->nsucc, 0);
				} else {
					falls++;
				}
			}
		}
		if (ex && (exits != 1 || falls != 0))
			fail_msg("thr_exit: %u exit syscalls, %u others (want 1, 0)", exits, falls);
		if (pd && (exits != 0 || falls != 2))
			fail_msg("pid: %u exit syscalls, %u others (want 0, 2)", exits, falls);
	}
	assert_int_equal(seen, 2);
	drop_program(p, cpath, bin);
}

/* The registers a direct call may change (clobber.c): only what the
 * callee writes, through its own calls too (a fixed point over a cycle),
 * of the ABI's caller-saved set; a callee that calls out of the program
 * or through a pointer may change them all. */
static void test_call_clobbers_what_the_callee_writes(void **state)
{
	(void)state;
	static const char src[] =
		"#include <stdlib.h>\n"
		"__asm__(\n"
		"\".text\\n .type only_rax,@function\\n .type ping,@function\\n\"\n"
		"\" .type pong,@function\\n .type calls_out,@function\\n\"\n"
		"\" .type through_ptr,@function\\n .type caller,@function\\n\"\n"
		"\"only_rax: mov $1, %eax\\n ret\\n\"\n"
		"\"ping: mov $2, %edx\\n test %edi, %edi\\n je 1f\\n dec %edi\\n call pong\\n1: ret\\n\"\n"
		"\"pong: mov $3, %r9d\\n call ping\\n ret\\n\"\n"
		"\"calls_out: sub $8, %rsp\\n call abs@PLT\\n add $8, %rsp\\n ret\\n\"\n"
		"\"through_ptr: jmp *%rsi\\n\"\n"
		"\".globl caller\\ncaller: push %rbx\\n call only_rax\\n call ping\\n"
		" call calls_out\\n call through_ptr\\n pop %rbx\\n ret\\n\");\n"
		"void caller(void);\n"
		"int main(int argc, char **argv) { (void)argv; if (argc > 5) caller(); return 0; }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O1", cpath, bin);
	const routine *r = NULL;
	for (uint32_t i = 0; i < p->nroutines; i++)
		if (!strcmp(p->routines[i].name, "caller"))
			r = &p->routines[i];
	assert_non_null(r);
	uint32_t want[] = {
		REG_BIT(R_AX),				/* only_rax */
		REG_BIT(R_DX) | REG_BIT(R_DI) | REG_BIT(R_9),	/* ping <-> pong */
		ABI_CALL_CLOBBERS,			/* abs@PLT */
		ABI_CALL_CLOBBERS,			/* jmp *rsi */
	};
	unsigned n = 0;
	for (uint32_t i = 0; i < r->ninsn; i++)
		if (r->insns[i].flow == FLOW_CALL) {
			assert_true(n < 4);
			if (r->insns[i].clobbers != want[n])
				fail_msg("call %u at 0x%llx: clobbers 0x%x, want 0x%x", n,
					 (unsigned long long)r->insns[i].addr,
					 r->insns[i].clobbers, want[n]);
			n++;
		}
	assert_int_equal(n, 4);
	drop_program(p, cpath, bin);
}

/* The address of symbol `name` in `bin`, from readelf; 0 if none. */
static uint64_t readelf_symbol(const char *bin, const char *name)
{
	char cmd[512];
	unsigned long long a = 0;
	snprintf(cmd, sizeof cmd, "readelf -sW %s | awk '$8==\"%s\" {print $2; exit}'", bin, name);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	if (fscanf(f, "%llx", &a) != 1)
		a = 0;
	pclose(f);
	return a;
}

/* tests/coldsplit.c, stripped: set_member's jump table goes to the first
 * instruction of its cold part, which is known only by its FDE.  Non-PIE
 * (absolute table in .rodata, so the cold start is a code address in data)
 * it stays a routine and the table's jump to it is a tail call, kept with
 * the block (python3's PyMember_SetOne); PIE (offsets) the cold part is
 * merged into set_member, the one routine that jumps to it. */
static void test_jump_table_into_cold_part(void **state)
{
	(void)state;
	static const char *const flags[] = { "-fno-pie -no-pie", "-fpie -pie" };
	for (int k = 0; k < 2; k++) {
		const char *t = temp_file("", 0);
		char bin[80], strip[80], cmd[400];
		snprintf(bin, sizeof bin, "%s.bin", t);
		snprintf(strip, sizeof strip, "%s.stripped", t);
		snprintf(cmd, sizeof cmd, "gcc -O2 %s -o %s tests/coldsplit.c && strip -o %s %s",
			 flags[k], bin, strip, bin);
		assert_int_equal(system(cmd), 0);
		uint64_t cold = readelf_symbol(bin, "set_member.cold");
		uint64_t hot = readelf_symbol(bin, "set_member");
		assert_true(cold && hot);
		program *p = load(strip);
		const routine *r = program_routine_at(p, hot);
		assert_non_null(r);
		const block *jt = NULL;
		for (uint32_t b = 0; b < r->nblocks; b++)
			if (r->blocks[b].flags & BLK_JUMPTABLE)
				jt = &r->blocks[b];
		assert_non_null(jt);
		bool succ = false;
		for (uint32_t i = 0; i < jt->nsucc; i++)
			succ |= r->blocks[jt->succ[i]].start == cold;
		if (k == 0) {
			const routine *c = program_routine_at(p, cold);
			assert_non_null(c);
			assert_int_equal(jt->ntails, 1);
			assert_true(jt->tails[0] == cold);
			assert_false(succ);
		} else {
			assert_true(succ);
			assert_int_equal(jt->ntails, 0);
			assert_true(program_routine_at(p, cold) == NULL);
		}
		program_free(p);
		unlink(t);
		unlink(bin);
		unlink(strip);
	}
}

/* Routine `name` of p has `tables` resolved jump tables of `nsucc` cases
 * each, and no unresolved indirect jump. */
static routine *expect_tables(program *p, const char *name, int tables, unsigned nsucc)
{
	routine *r = program_routine_named(p, name);
	assert_non_null(r);
	int found = 0;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		const block *bl = &r->blocks[b];
		if (bl->flags & BLK_IJUMP)
			fail_msg("%s: indirect jump at block 0x%llx unresolved", name,
				 (unsigned long long)bl->start);
		if (bl->flags & BLK_JUMPTABLE) {
			found++;
			if (bl->nsucc != nsucc)
				fail_msg("%s: the table at block 0x%llx has %u targets, "
					 "expected %u", name, (unsigned long long)bl->start,
					 bl->nsucc, nsucc);
		}
	}
	assert_int_equal(found, tables);
	return r;
}

/* Two switches whose bounds are checked on the taken side of a jump into
 * the table's block (`cmp $7, %rdi; jbe L`, L the only way into the table's
 * block), with their tables side by side (zstd's bit readers, perl's
 * Perl_scalar): each table is resolved with its eight cases.  Unbounded,
 * the first table's scan ran into the second, whose entries made a case
 * inside an instruction (a `loope` the recorder refused to patch). */
static void test_table_bound_on_taken_jump(void **state)
{
	(void)state;
	static const char src[] =
		"__asm__(\".text\\n .globl twotab\\n .type twotab, @function\\n\"\n"
		"\"twotab: test %rsi, %rsi\\n jnz 3f\\n cmp $7, %rdi\\n jbe 1f\\n\"\n"
		"\"0: xor %eax, %eax\\n ret\\n\"\n"
		"\"3: cmp $7, %rdi\\n jbe 2f\\n jmp 0b\\n\"\n"
		"\"1: lea T1(%rip), %rdx\\n movslq (%rdx,%rdi,4), %rax\\n add %rdx, %rax\\n jmp *%rax\\n\"\n"
		"\"2: lea T2(%rip), %rdx\\n movslq (%rdx,%rdi,4), %rax\\n add %rdx, %rax\\n jmp *%rax\\n\"\n"
		"\"c0: mov $10, %eax\\n ret\\n\"\n"
		"\"c1: mov $11, %eax\\n ret\\n\"\n"
		"\"c2: mov $12, %eax\\n ret\\n\"\n"
		"\"c3: mov $13, %eax\\n ret\\n\"\n"
		"\"c4: mov $14, %eax\\n ret\\n\"\n"
		"\"c5: mov $15, %eax\\n ret\\n\"\n"
		"\"c6: mov $16, %eax\\n ret\\n\"\n"
		"\"c7: mov $17, %eax\\n ret\\n\"\n"
		"\"d0: mov $20, %eax\\n ret\\n\"\n"
		"\"d1: mov $21, %eax\\n ret\\n\"\n"
		"\"d2: mov $22, %eax\\n ret\\n\"\n"
		"\"d3: mov $23, %eax\\n ret\\n\"\n"
		"\"d4: mov $24, %eax\\n ret\\n\"\n"
		"\"d5: mov $25, %eax\\n ret\\n\"\n"
		"\"d6: mov $26, %eax\\n ret\\n\"\n"
		"\"d7: mov $27, %eax\\n ret\\n\"\n"
		"\" .size twotab, . - twotab\\n .section .rodata\\n .p2align 2\\n\"\n"
		"\"T1: .long c0 - T1, c1 - T1, c2 - T1, c3 - T1, c4 - T1, c5 - T1, c6 - T1, c7 - T1\\n\"\n"
		"\"T2: .long d0 - T2, d1 - T2, d2 - T2, d3 - T2, d4 - T2, d5 - T2, d6 - T2, d7 - T2\\n\"\n"
		"\" .text\\n\");\n"
		"long twotab(long, long);\n"
		"int main(int argc, char **argv) { (void)argv; return (int)twotab(argc, argc & 1); }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O1", cpath, bin);
	routine *r = expect_tables(p, "twotab", 2, 8);
	for (uint32_t n = 1; n < r->ninsn; n++)
		if (r->insns[n - 1].addr + r->insns[n - 1].len > r->insns[n].addr)
			fail_msg("twotab: instruction 0x%llx decoded inside 0x%llx",
				 (unsigned long long)r->insns[n].addr,
				 (unsigned long long)r->insns[n - 1].addr);
	drop_program(p, cpath, bin);
}

/* A switch whose index comes in as an argument (no bound in the routine)
 * and whose table entry goes through a stack slot before the jump (perl's
 * code around setjmp): the cases are guessed from the table, as far as
 * they are code of the function; without the slot they were none, and
 * the replay stopped at the first case it met. */
static void test_table_entry_through_stack_slot(void **state)
{
	(void)state;
	static const char src[] =
		"__asm__(\".text\\n .globl spilled\\n .type spilled, @function\\n\"\n"
		"\"spilled: sub $24, %rsp\\n lea T3(%rip), %rdx\\n movslq (%rdx,%rdi,4), %rax\\n\"\n"
		"\" mov %rax, 8(%rsp)\\n mov $0, %rax\\n mov 8(%rsp), %rsi\\n\"\n"
		"\" lea T3(%rip), %rax\\n add %rsi, %rax\\n add $24, %rsp\\n jmp *%rax\\n\"\n"
		"\"e0: mov $30, %eax\\n ret\\n\"\n"
		"\"e1: mov $31, %eax\\n ret\\n\"\n"
		"\"e2: mov $32, %eax\\n ret\\n\"\n"
		"\"e3: mov $33, %eax\\n ret\\n\"\n"
		"\" .size spilled, . - spilled\\n .section .rodata\\n .p2align 2\\n\"\n"
		"\"T3: .long e0 - T3, e1 - T3, e2 - T3, e3 - T3\\n .text\\n\");\n"
		"long spilled(long);\n"
		"int main(int argc, char **argv) { (void)argv; return (int)spilled(argc & 3); }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O1", cpath, bin);
	routine *r = program_routine_named(p, "spilled");
	assert_non_null(r);
	int jumps = 0;
	for (uint32_t b = 0; b < r->nblocks; b++) {
		const block *bl = &r->blocks[b];
		if (!(bl->flags & (BLK_IJUMP | BLK_JUMPTABLE)))
			continue;
		jumps++;
		if (bl->nsucc != 4)
			fail_msg("spilled: the jump at block 0x%llx has %u targets, expected 4",
				 (unsigned long long)bl->start, bl->nsucc);
	}
	assert_int_equal(jumps, 1);
	drop_program(p, cpath, bin);
}

/* The index is a case number loaded from a first table (not bounded:
 * its own index comes in as an argument), rebased and then bounded by
 * `cmp; ja` (sqlite3Parser: movzx eax, word [tab1+rax*2]; lea r12d,
 * [rax-0x4df]; mov rax, r12; cmp eax, 0x155; ja): the table has exactly
 * the bound's four cases, not what a scan runs into after it (a second
 * table here); unresolved, sqlite3's replay stopped at its first case. */
static void test_table_index_loaded_then_bounded(void **state)
{
	(void)state;
	static const char src[] =
		"__asm__(\".text\\n .globl loaded\\n .type loaded, @function\\n\"\n"
		"\"loaded: lea W(%rip), %rdx\\n movzwl (%rdx,%rdi,2), %eax\\n\"\n"
		"\" lea -0x40(%rax), %ecx\\n mov %rcx, %rax\\n cmp $3, %eax\\n ja 9f\\n\"\n"
		"\" lea T5(%rip), %rdx\\n movslq (%rdx,%rcx,4), %rax\\n add %rdx, %rax\\n jmp *%rax\\n\"\n"
		"\"9: xor %eax, %eax\\n ret\\n\"\n"
		"\"f0: mov $40, %eax\\n ret\\n\"\n"
		"\"f1: mov $41, %eax\\n ret\\n\"\n"
		"\"f2: mov $42, %eax\\n ret\\n\"\n"
		"\"f3: mov $43, %eax\\n ret\\n\"\n"
		"\"g0: mov $50, %eax\\n ret\\n\"\n"
		"\"g1: mov $51, %eax\\n ret\\n\"\n"
		"\" .size loaded, . - loaded\\n .section .rodata\\n .p2align 2\\n\"\n"
		"\"W: .short 0x40, 0x41, 0x42, 0x43, 0x44, 0\\n .p2align 2\\n\"\n"
		"\"T5: .long f0 - T5, f1 - T5, f2 - T5, f3 - T5\\n\"\n"
		"\"T6: .long g0 - T6, g1 - T6, g0 - T6, g1 - T6\\n .text\\n\");\n"
		"long loaded(long);\n"
		"int main(int argc, char **argv) { (void)argv; return (int)loaded(argc % 6); }\n";
	char cpath[80], bin[80];
	program *p = build_and_load(src, sizeof src - 1, "-O1", cpath, bin);
	expect_tables(p, "loaded", 1, 4);
	drop_program(p, cpath, bin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routines_equal_func_symbols),
		cmocka_unit_test(test_stripped_routines_via_eh_frame),
		cmocka_unit_test(test_blocks_cover_instructions_once),
		cmocka_unit_test(test_loop_nest_depths_match_source),
		cmocka_unit_test(test_irreducible_sample_flagged),
		cmocka_unit_test(test_switch_jump_table_targets),
		cmocka_unit_test(test_table_base_from_reaching_constants),
		cmocka_unit_test(test_debian_relative_tables_resolved),
		cmocka_unit_test(test_possible_entries_start_blocks),
		cmocka_unit_test(test_orphan_after_noreturn_call_is_a_routine),
		cmocka_unit_test(test_constant_inside_insn_no_label),
		cmocka_unit_test(test_exit_syscall_ends_the_thread),
		cmocka_unit_test(test_call_clobbers_what_the_callee_writes),
		cmocka_unit_test(test_jump_table_into_cold_part),
		cmocka_unit_test(test_table_bound_on_taken_jump),
		cmocka_unit_test(test_table_entry_through_stack_slot),
		cmocka_unit_test(test_table_index_loaded_then_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
