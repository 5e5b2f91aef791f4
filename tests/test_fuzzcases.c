/* Regression cases for what fuzzing found (tests/fuzz/, `make fuzz`): each
 * test rebuilds the smallest input that crashed, hung or misled, and
 * checks the behaviour the fix gives.  Binaries are sample builds with a
 * few bytes changed, or tiny programs assembled at test time. */
#include "tests/testutil.h"
#include "tests/vtutil.h"
#include "analyzer/analyzer.h"
#include "skelgen/skelgen.h"
#include "replay/format.h"

#include <elf.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(n > 0 ? (size_t)n : 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A copy of `path` with `n` bytes replaced at file offset `off`. */
static const char *patched_copy(const char *path, size_t off, const void *bytes, size_t n)
{
	size_t len;
	char *buf = read_all(path, &len);
	assert_non_null(buf);
	assert_true(off + n <= len);
	memcpy(buf + off, bytes, n);
	const char *out = temp_file(buf, len);
	free(buf);
	assert_non_null(out);
	return out;
}

/* Assembles `src` (AT&T) into a non-PIE executable; returns its path. */
static const char *assemble(const char *src)
{
	static char exe[64];
	const char *s = temp_file(src, strlen(src));
	assert_non_null(s);
	char asm_path[80], cmd[512];
	snprintf(asm_path, sizeof asm_path, "%s.s", s);
	assert_int_equal(rename(s, asm_path), 0);
	snprintf(exe, sizeof exe, "%s.exe", s);
	snprintf(cmd, sizeof cmd, "gcc -no-pie -nostartfiles -o %s %s", exe, asm_path);
	assert_int_equal(system(cmd), 0);
	unlink(asm_path);
	return exe;
}

/* What the skeleton generator relies on in every routine: each
 * instruction's block is the block that holds it, and a direct jump or a
 * fall-through that stays in the routine has its target block as a
 * successor. */
static void assert_cfg_linked(const routine *r)
{
	for (uint32_t bi = 0; bi < r->nblocks; bi++) {
		const block *b = &r->blocks[bi];
		for (uint32_t i = b->first; i < b->first + b->ninsn; i++)
			assert_int_equal(cfg_block_of(r, r->insns[i].addr), (int)bi);
		const insn *last = &r->insns[b->first + b->ninsn - 1];
		uint64_t to;
		if (last->flow == FLOW_JUMP)
			to = last->target;
		else if (last->flow == FLOW_NEXT && b->end != r->start)
			to = b->end;
		else
			continue;
		if (b->flags & BLK_TAILCALL)
			continue;
		if (b->nsucc != 1 || r->blocks[b->succ[0]].start != to)
			fail_msg("%s: block 0x%llx ends in a jump or fall-through to 0x%llx "
				 "but has %u successors", r->name, (unsigned long long)b->start,
				 (unsigned long long)to, b->nsucc);
	}
}

/* program_load + skel_generate to /dev/null, as `skel gen` runs them. */
static void gen_ok(const char *path, program *p)
{
	char err[ERR_LEN];
	if (program_load(p, path, err) < 0)
		fail_msg("%s: %s", path, err);
	for (uint32_t i = 0; i < p->nroutines; i++)
		assert_cfg_linked(&p->routines[i]);
	FILE *f = fopen("/dev/null", "w");
	skel_opts o = { .app = path };
	patch pt;
	skel_stats st;
	assert_int_equal(skel_generate(f, p, &o, &pt, &st, err), 0);
	fclose(f);
	patch_free(&pt);
}

/* ------------------------------------------------ jumps into instructions */

/* A jmp into the middle of a movabs: the 8-byte immediate holds
 * `xor rax, rax; ret`.  The blocks [movabs] and [xor, ret] overlap, so
 * block ends are no longer sorted; looking blocks up by end lost the jump's
 * successor and `skel gen` read succ[0] of an empty list (SIGSEGV). */
static void jump_into_an_instruction_keeps_its_successor(void **state)
{
	const char *exe = assemble(
		"\t.text\n\t.globl _start\n_start:\n"
		"\tcmp $1, %edi\n"
		"\tjg 2f\n"
		"1:\tmovabs $0xc3c03148, %rax\n"     /* 48 b8 | 48 31 c0 c3 00 00 00 00 */
		"\tmov $60, %eax\n"
		"\tsyscall\n"
		"2:\tjmp 1b + 2\n");
	program p;
	gen_ok(exe, &p);
	const routine *r = program_routine_at(&p, p.bin.entry);
	assert_non_null(r);
	assert_true(r->partial);                /* overlapping instructions */
	/* cmp (3 bytes), jg (2), movabs at +5 (10), its immediate at +7 */
	int mov = cfg_block_of(r, p.bin.entry + 5);
	int inner = cfg_block_of(r, p.bin.entry + 7);
	assert_true(mov >= 0 && inner >= 0 && mov != inner);
	assert_int_equal(r->blocks[mov].end, p.bin.entry + 15);
	assert_int_equal(r->blocks[inner].start, p.bin.entry + 7);
	assert_int_equal(r->blocks[inner].end, p.bin.entry + 11);
	program_free(&p);
	unlink(exe);
}

/* A lea of code outside every function in a program that reads no data
 * rip-relative: the search among data operands ran bsearch on an empty,
 * NULL array (UBSan: null pointer argument; fuzzing found it in a mutated
 * sample).  The lea's target, unreached by any routine, becomes one. */
static void lea_of_code_without_rip_data(void **state)
{
	const char *exe = assemble(
		"\t.text\n\t.globl _start\n_start:\n"
		"\tlea 1f(%rip), %rax\n"
		"\tcall *%rax\n"
		"\tmov $60, %eax\n"
		"\tsyscall\n"
		"\thlt\n"
		"1:\tret\n");
	program p;
	gen_ok(exe, &p);
	/* lea (7 bytes), call *rax (2), mov (5), syscall (2), hlt (1) */
	assert_non_null(program_routine_at(&p, p.bin.entry + 17));
	program_free(&p);
	unlink(exe);
}

/* The case fuzzing reported first: one byte 0xeb at file offset 0x11b5 of
 * switch-O2-nopie turns `add rsp, 0x10` at the end of main into a
 * `jmp` back into the middle of an instruction. */
static void patched_switch_sample_generates(void **state)
{
	const char *path = patched_copy(sample_path("switch", "O2", "nopie", 0), 0x11b5,
					"\xeb", 1);
	program p;
	gen_ok(path, &p);
	program_free(&p);
	unlink(path);
}

/* ------------------------------------------------------- value traces */

/* A VALUES and a TRAMPOLINE_MAP chunk with no payload (a flush of an empty
 * buffer) came first for their stream: the reader copied zero bytes to a
 * NULL array (UBSan: null pointer arithmetic). */
static void empty_chunks_read_as_nothing(void **state)
{
	uint8_t buf[512] = { 0 };
	uint64_t word = 42;
	size_t n = vt_put_header(buf);
	n = vt_put_chunk(buf, n, VT_TRAMPOLINE_MAP, 0, 0, NULL, 0);
	n = vt_put_start(buf, n, 3);
	n = vt_put_chunk(buf, n, VT_VALUES, 3, 0, NULL, 0);
	n = vt_put_chunk(buf, n, VT_VALUES, 3, 0, &word, 8);
	n = vt_put_chunk(buf, n, VT_VALUES, 3, 1, NULL, 0);
	for (int ref = 0; ref < 2; ref++) {
		vtrace t;
		char err[FMT_ERR_LEN];
		assert_int_equal(vtrace_open_mem(&t, buf, n, err), 0);
		vt_streams s;
		if (ref)
			vtrace_streams_ref(&t, &s);
		else
			vtrace_streams_from(&t, &s);
		assert_string_equal(s.error, "");
		assert_int_equal(s.nmap, 0);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.s[0].thread, 3);
		assert_int_equal(s.s[0].nvalues, 1);
		uint64_t w[1 + VT_UNPACK_SLACK] = { 0 };
		if (ref)
			assert_int_equal(vt_run_words(&s.s[0].runs[0], w), 0);
		assert_int_equal(ref ? w[0] : s.s[0].values[0], 42);
		vtrace_streams_free(&s);
		vtrace_close(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jump_into_an_instruction_keeps_its_successor),
		cmocka_unit_test(lea_of_code_without_rip_data),
		cmocka_unit_test(patched_switch_sample_generates),
		cmocka_unit_test(empty_chunks_read_as_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
