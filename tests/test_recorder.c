/* test_recorder.c — the recorder (replay/rec.c, build/libskelrec.so), the
 * patch text format and the value-trace reader.
 *
 * A small C program (PROG_SRC below) is compiled at test time, -O1, PIE and
 * not.  Its probe points are global labels in inline asm, so `nm` gives
 * their addresses and each asm statement is a whole basic block whose
 * bounds are labels too.  The program prints every value it expects the
 * recorder to see ("V <hex>"); each test writes a patch by hand, runs the
 * program under LD_PRELOAD and compares the value trace with that output,
 * and the program's output and exit status with a native run. */
#include "tests/testutil.h"
#include "tests/vtutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay/format.h"

extern char **environ;

static const char PROG_SRC[] =
	"#include <pthread.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"#include <sys/wait.h>\n"
	"#include <unistd.h>\n"
	"\n"
	"long glob = 0x1234;\n"
	"long arr[64];\n"
	"\n"
	"__attribute__((noinline)) long loop(long n)\n"
	"{\n"
	"\tlong acc = 0;\n"
	"\tfor (long i = 0; i < n; i++) {\n"
	"\t\tregister long a asm(\"rbx\") = acc;\n"
	"\t\tregister long b asm(\"rcx\") = i * 3 + 1;\n"
	"\t\tasm volatile(\".globl loop_site\\nloop_site: add %1, %0\\n\\tnop\\n\\tnop\\n\"\n"
	"\t\t\t     \".globl loop_end\\nloop_end:\" : \"+r\"(a) : \"r\"(b));\n"
	"\t\tacc = a;\n"
	"\t\tprintf(\"V %lx\\n\", acc);\n"
	"\t}\n"
	"\treturn acc;\n"
	"}\n"
	"\n"
	"/* sh_site: a 3-byte block; en_blk: one entered from two 6-byte ones,\n"
	" * by a jmp and by falling through */\n"
	"__attribute__((noinline)) long shortsite(long n, int entered)\n"
	"{\n"
	"\tlong acc = 0;\n"
	"\tfor (long i = 0; i < n; i++) {\n"
	"\t\tregister long a asm(\"rbx\") = acc;\n"
	"\t\tregister long b asm(\"rcx\") = i + 5;\n"
	"\t\tif (!entered)\n"
	"\t\t\tasm volatile(\".globl sh_site\\nsh_site: add %1, %0\\n\"\n"
	"\t\t\t\t     \".globl sh_end\\nsh_end:\" : \"+r\"(a) : \"r\"(b));\n"
	"\t\telse\n"
	"\t\t\tasm volatile(\"test $1, %1\\n\\tjz en_p2\\n\"\n"
	"\t\t\t\t     \".globl en_p1\\nen_p1: lea 1(%1), %1\\n\\tjmp en_blk\\n\"\n"
	"\t\t\t\t     \".globl en_p2\\nen_p2: lea 2(%1), %1\\n\\tnop\\n\\tnop\\n\"\n"
	"\t\t\t\t     \".globl en_blk\\nen_blk: add %1, %0\\n\"\n"
	"\t\t\t\t     \".globl en_end\\nen_end:\" : \"+r\"(a), \"+r\"(b) : : \"cc\");\n"
	"\t\tacc = a;\n"
	"\t\tprintf(\"V %lx\\n\", acc);\n"
	"\t}\n"
	"\treturn acc;\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) void rsp(void)\n"
	"{\n"
	"\tlong x;\n"
	"\tasm volatile(\".globl rsp_site\\nrsp_site: mov %%rsp, %0\\n\\tnop\\n\\tnop\\n\"\n"
	"\t\t     \".globl rsp_end\\nrsp_end:\" : \"=a\"(x));\n"
	"\tprintf(\"V %lx\\n\", x);\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) void addr(long n)\n"
	"{\n"
	"\tfor (long i = 0; i < n; i++) {\n"
	"\t\tregister long *base asm(\"rbx\") = arr;\n"
	"\t\tregister long idx asm(\"rcx\") = i;\n"
	"\t\tlong v, g, sp;\n"
	"\t\tarr[i + 1] = i * i;\n"
	"\t\tasm volatile(\".globl addr_site\\naddr_site: mov 8(%1,%2,8), %0\\n\"\n"
	"\t\t\t     \".globl addr_end\\naddr_end:\"\n"
	"\t\t\t     : \"=a\"(v) : \"r\"(base), \"r\"(idx) : \"memory\");\n"
	"\t\tasm volatile(\".globl rip_site\\nrip_site: mov glob(%%rip), %0\\n\"\n"
	"\t\t\t     \".globl rip_end\\nrip_end:\" : \"=d\"(g) : : \"memory\");\n"
	"\t\tasm volatile(\"mov %%rsp, %0\\n\"\n"
	"\t\t\t     \".globl push_site\\npush_site: push %%rax\\n\\tpop %%rax\\n\"\n"
	"\t\t\t     \"\\tnop\\n\\tnop\\n\\tnop\\n.globl push_end\\npush_end:\"\n"
	"\t\t\t     : \"=r\"(sp) : : \"memory\");\n"
	"\t\tprintf(\"V %lx\\nV %lx\\nV %lx\\n\", (long)&arr[i + 1], (long)&glob,\n"
	"\t\t       sp - 8);\n"
	"\t\tprintf(\"got %ld %lx\\n\", v, g);\n"
	"\t}\n"
	"}\n"
	"\n"
	"/* addr32 call: the prefix leaves the stack's addressing alone */\n"
	"asm(\".globl a32_fn\\na32_fn: ret\\n\");\n"
	"__attribute__((noinline)) void a32(long n)\n"
	"{\n"
	"\tfor (long i = 0; i < n; i++) {\n"
	"\t\tlong sp;\n"
	"\t\tasm volatile(\"lea -128(%%rsp), %%rsp\\n\\tmov %%rsp, %0\\n\"\n"
	"\t\t\t     \".globl a32_site\\na32_site: .byte 0x67, 0xe8\\n\"\n"
	"\t\t\t     \"\\t.long a32_fn - 1f\\n1:\\tnop\\n\"\n"
	"\t\t\t     \".globl a32_end\\na32_end: lea 128(%%rsp), %%rsp\"\n"
	"\t\t\t     : \"=r\"(sp) : : \"memory\");\n"
	"\t\tprintf(\"V %lx\\n\", sp - 8);\n"
	"\t}\n"
	"}\n"
	"\n"
	"__attribute__((noinline)) void taken(long n)\n"
	"{\n"
	"\tunsigned long s = 12345;\n"
	"\tfor (long i = 0; i < n; i++) {\n"
	"\t\ts = s * 6364136223846793005ul + 1442695040888963407ul;\n"
	"\t\tregister long a asm(\"rbx\") = (long)((s >> 33) % 100);\n"
	"\t\tregister long b asm(\"rcx\") = 50;\n"
	"\t\tlong r;\n"
	"\t\tasm volatile(\".globl tk_blk\\ntk_blk: cmp %%rcx, %%rbx\\n\"\n"
	"\t\t\t     \".globl tk_site\\ntk_site: jl 1f\\n\"\n"
	"\t\t\t     \".globl tk_end\\ntk_end: mov $0, %0\\n\\tjmp 2f\\n\"\n"
	"\t\t\t     \"1: mov $1, %0\\n2:\"\n"
	"\t\t\t     : \"=r\"(r) : \"r\"(a), \"r\"(b) : \"cc\");\n"
	"\t\tprintf(\"V %lx\\n\", r);\n"
	"\t}\n"
	"}\n"
	"\n"
	"long fa(void) { return 11; }\n"
	"long fb(void) { return 22; }\n"
	"long fc(void) { return 33; }\n"
	"long (*fns[3])(void) = { fa, fb, fc };\n"
	"\n"
	"__attribute__((noinline)) void target(long n)\n"
	"{\n"
	"\tfor (long i = 0; i < n; i++) {\n"
	"\t\tlong (*fp)(void) = fns[(i * 7) % 3];\n"
	"\t\tregister long f asm(\"rax\") = (long)fp;\n"
	"\t\tasm volatile(\".globl tg_blk\\ntg_blk: mov %%rax, %%r11\\n\"\n"
	"\t\t\t     \".globl tg_site\\ntg_site: call *%%r11\\n\"\n"
	"\t\t\t     \".globl tg_end\\ntg_end:\"\n"
	"\t\t\t     : \"+r\"(f) : : \"rcx\", \"rdx\", \"rsi\", \"rdi\", \"r8\",\n"
	"\t\t\t       \"r9\", \"r10\", \"r11\", \"memory\", \"cc\");\n"
	"\t\tprintf(\"V %lx\\nresult %ld\\n\", (long)fp, f);\n"
	"\t}\n"
	"}\n"
	"\n"
	"/* A leaf keeping data in the red zone and flags live across the probe. */\n"
	"__attribute__((noinline)) long leaf(long x)\n"
	"{\n"
	"\tlong r;\n"
	"\tasm volatile(\"movq %1, -8(%%rsp)\\n\\tmovq $77, -128(%%rsp)\\n\"\n"
	"\t\t     \"\\tcmp $100, %1\\n\"\n"
	"\t\t     \".globl rz_site\\nrz_site: lea 1(%1), %0\\n\\tnop\\n\"\n"
	"\t\t     \".globl rz_end\\nrz_end:\\n\"\n"
	"\t\t     \"\\tjl 1f\\n\\tadd $1000, %0\\n1:\\n\"\n"
	"\t\t     \"\\tadd -8(%%rsp), %0\\n\\tadd -128(%%rsp), %0\\n\"\n"
	"\t\t     : \"=&r\"(r) : \"r\"(x) : \"cc\", \"memory\");\n"
	"\treturn r;\n"
	"}\n"
	"\n"
	"/* sl_blk: a block that is a loop of its own (its last instruction\n"
	" * jumps back to its start): its trampoline holds the whole loop */\n"
	"__attribute__((noinline)) long selfloop(long n)\n"
	"{\n"
	"\tregister long acc asm(\"rax\") = 0;\n"
	"\tregister long *p asm(\"rsi\") = arr;\n"
	"\tregister long c asm(\"rcx\") = n;\n"
	"\tfor (long i = 0; i < 64; i++)\n"
	"\t\tarr[i] = i * i;\n"
	"\tasm volatile(\".globl sl_blk\\nsl_blk: add (%1), %0\\n\\tadd $8, %1\\n\\tdec %2\\n\\tjnz sl_blk\\n\"\n"
	"\t\t     \".globl sl_end\\nsl_end:\" : \"+r\"(acc), \"+r\"(p), \"+r\"(c) : : \"cc\", \"memory\");\n"
	"\tfor (long i = 0; i < n; i++)\n"
	"\t\tprintf(\"V %lx\\n\", (long)(arr + i));\n"
	"\tprintf(\"sum %ld\\n\", acc);\n"
	"\treturn acc;\n"
	"}\n"
	"\n"
	"long tres[2][1000];\n"
	"\n"
	"__attribute__((noinline)) void work(long *out, long seed)\n"
	"{\n"
	"\tlong acc = seed;\n"
	"\tfor (long i = 0; i < 1000; i++) {\n"
	"\t\tregister long a asm(\"rbx\") = acc;\n"
	"\t\tregister long b asm(\"rcx\") = i;\n"
	"\t\tasm volatile(\".globl th_site\\nth_site: add %1, %0\\n\\tnop\\n\\tnop\\n\"\n"
	"\t\t\t     \".globl th_end\\nth_end:\" : \"+r\"(a) : \"r\"(b));\n"
	"\t\tacc = a;\n"
	"\t\tout[i] = acc;\n"
	"\t}\n"
	"}\n"
	"\n"
	"void *thr_a(void *p) { work(tres[0], 1); return p; }\n"
	"void *thr_b(void *p) { work(tres[1], 1000000); return p; }\n"
	"\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tconst char *m = argc > 1 ? argv[1] : \"loop\";\n"
	"\tlong n = argc > 2 ? atol(argv[2]) : 10;\n"
	"\tif (!strcmp(m, \"loop\"))\n"
	"\t\tloop(n);\n"
	"\telse if (!strcmp(m, \"short\"))\n"
	"\t\tshortsite(n, 0);\n"
	"\telse if (!strcmp(m, \"entered\"))\n"
	"\t\tshortsite(n, 1);\n"
	"\telse if (!strcmp(m, \"rsp\"))\n"
	"\t\trsp();\n"
	"\telse if (!strcmp(m, \"addr\"))\n"
	"\t\taddr(n);\n"
	"\telse if (!strcmp(m, \"a32\"))\n"
	"\t\ta32(n);\n"
	"\telse if (!strcmp(m, \"selfloop\"))\n"
	"\t\tselfloop(n);\n"
	"\telse if (!strcmp(m, \"taken\"))\n"
	"\t\ttaken(n);\n"
	"\telse if (!strcmp(m, \"target\"))\n"
	"\t\ttarget(n);\n"
	"\telse if (!strcmp(m, \"rz\")) {\n"
	"\t\tfor (long i = 95; i < 105; i++)\n"
	"\t\t\tprintf(\"rz %ld %ld\\n\", i, leaf(i));\n"
	"\t} else if (!strcmp(m, \"threads\")) {\n"
	"\t\tpthread_t a, b;\n"
	"\t\tpthread_create(&a, NULL, thr_a, NULL);\n"
	"\t\tpthread_create(&b, NULL, thr_b, NULL);\n"
	"\t\tpthread_join(a, NULL);\n"
	"\t\tpthread_join(b, NULL);\n"
	"\t\tfor (int t = 0; t < 2; t++)\n"
	"\t\t\tfor (int i = 0; i < 1000; i++)\n"
	"\t\t\t\tprintf(\"T%d %lx\\n\", t, tres[t][i]);\n"
	"\t} else if (!strcmp(m, \"crash\")) {\n"
	"\t\tloop(n);\n"
	"\t\tfflush(stdout);\n"
	"\t\t*(volatile int *)(long)argc = 1;\n"
	"\t} else if (!strcmp(m, \"_exit\")) {\n"
	"\t\tloop(n);\n"
	"\t\tfflush(stdout);\n"
	"\t\t_exit(5);\n"
	"\t} else if (!strcmp(m, \"fork\")) {\n"
	"\t\tpid_t pid = fork();\n"
	"\t\tif (pid == 0) {\n"
	"\t\t\tloop(n);\n"
	"\t\t\texit(0);\n"
	"\t\t}\n"
	"\t\tint st;\n"
	"\t\twaitpid(pid, &st, 0);\n"
	"\t\tfflush(stdout);\n"
	"\t\tloop(n);\n"
	"\t}\n"
	"\treturn 3;\n"
	"}\n"
	"\n";

static char tdir[64];
static char lib[PATH_MAX];
static char prog_np[128], prog_pie[128];

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap + 1);
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* A cache of the test's own (the recorder keeps plans there). */
static void own_cache(const char *name)
{
	char dir[160];
	snprintf(dir, sizeof dir, "%s/%s", tdir, name);
	setenv("XDG_CACHE_HOME", dir, 1);
}

static int setup(void **state)
{
	strcpy(tdir, "/tmp/skel-rec-XXXXXX");
	if (!mkdtemp(tdir) || !realpath("build/libskelrec.so", lib))
		return -1;
	own_cache("cache");
	char path[128], cmd[1024];
	snprintf(path, sizeof path, "%s/prog.c", tdir);
	FILE *f = fopen(path, "w");
	fputs(PROG_SRC, f);
	fclose(f);
	snprintf(prog_np, sizeof prog_np, "%s/prog-nopie", tdir);
	snprintf(prog_pie, sizeof prog_pie, "%s/prog-pie", tdir);
	snprintf(cmd, sizeof cmd,
		 "gcc -O1 -no-pie -o %s %s -lpthread && "
		 "gcc -O1 -fPIE -pie -o %s %s -lpthread",
		 prog_np, path, prog_pie, path);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Link-time address of a symbol of prog. */
static uint64_t sym(const char *prog, const char *name)
{
	char cmd[256], line[256];
	snprintf(cmd, sizeof cmd, "nm %s", prog);
	FILE *p = popen(cmd, "r");
	uint64_t a = 0;
	while (p && fgets(line, sizeof line, p)) {
		char n[128], t;
		unsigned long long v;
		if (sscanf(line, "%llx %c %127s", &v, &t, n) == 3 &&
		    !strcmp(n, name))
			a = v;
	}
	pclose(p);
	assert_true(a != 0);
	return a;
}

static void buildid(const char *prog, char out[130])
{
	char cmd[256];
	snprintf(cmd, sizeof cmd,
		 "readelf -n %s | sed -n 's/.*Build ID: //p'", prog);
	FILE *p = popen(cmd, "r");
	out[0] = 0;
	assert_non_null(fgets(out, 130, p));
	pclose(p);
	out[strcspn(out, "\n")] = 0;
	assert_true(strlen(out) >= 16);
}

/* A patch for prog: the header and the probe lines in `probes`, where
 * each line is "SITE BLKSTART BLKEND rest" with symbol names. */
static const char *make_patch(const char *prog, const char *const *probes)
{
	static char path[128];
	char id[130];
	buildid(prog, id);
	snprintf(path, sizeof path, "%s/patch", tdir);
	FILE *f = fopen(path, "w");
	fprintf(f, "skel-patch 1\n# written by test_recorder\nbinary %s buildid\n",
		id);
	for (; *probes; probes++) {
		char s[64], b[64], e[64], rest[128];
		if (sscanf(*probes, "enter %63s %63s %63s", b, s, e) == 3) {
			fprintf(f, "enter %" PRIx64 " %" PRIx64 " %" PRIx64 "\n",
				sym(prog, b), sym(prog, s), sym(prog, e));
			continue;
		}
		assert_int_equal(sscanf(*probes, "%63s %63s %63s %127[^\n]", s, b,
					e, rest), 4);
		fprintf(f, "probe %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n",
			sym(prog, s), sym(prog, b), sym(prog, e), rest);
	}
	fclose(f);
	return path;
}

typedef struct run {
	char *out;		/* stdout */
	char *err;		/* stderr */
	int status;		/* from waitpid */
	int have_trace;
	vt_streams s;
} run;

/* Runs prog ARGS with stdout/stderr to files; with the recorder preloaded
 * when patch is not NULL.  `extra` adds one environment entry. */
static void run_prog(run *r, const char *prog, const char *patchpath,
		     const char *a1, const char *a2, const char *extra)
{
	char outp[128], errp[128], valp[128], e1[PATH_MAX + 16], e2[160],
		e3[160];
	memset(r, 0, sizeof *r);
	snprintf(outp, sizeof outp, "%s/out", tdir);
	snprintf(errp, sizeof errp, "%s/err", tdir);
	snprintf(valp, sizeof valp, "%s/vals", tdir);
	unlink(valp);
	char *env[512];
	int n = 0;
	for (char **e = environ; *e && n < 500; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "SKEL_", 5))
			env[n++] = *e;
	if (patchpath) {
		snprintf(e1, sizeof e1, "LD_PRELOAD=%s", lib);
		snprintf(e2, sizeof e2, "SKEL_PATCH=%s", patchpath);
		snprintf(e3, sizeof e3, "SKEL_VALUES=%s", valp);
		/* the trampoline maps too (only skel check asks for them) */
		env[n++] = e1, env[n++] = e2, env[n++] = e3, env[n++] = "SKEL_MAPS=1";
	}
	if (extra)
		env[n++] = (char *)extra;
	env[n] = NULL;
	char *argv[] = { (char *)prog, (char *)a1, (char *)a2, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, outp,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, errp,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, prog, &fa, NULL, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
	r->out = slurp(outp, NULL);
	r->err = slurp(errp, NULL);
	char err[FMT_ERR_LEN];
	struct stat st;
	if (stat(valp, &st) == 0) {
		r->have_trace = 1;
		assert_int_equal(vtrace_load_streams(valp, &r->s, err), 0);
		/* a kept plan's map is named, not copied (MAP_REF) */
		assert_int_equal(vt_maps_resolve(&r->s, err), 0);
	}
}

static void run_free(run *r)
{
	free(r->out);
	free(r->err);
	vtrace_streams_free(&r->s);
}

/* The words the program printed as "<tag> <hex>" lines, in order. */
static size_t expected(const char *out, const char *tag, uint64_t **v)
{
	size_t n = 0, cap = 1024, tl = strlen(tag);
	*v = malloc(cap * sizeof **v);
	for (const char *p = out; p && *p;) {
		if (!strncmp(p, tag, tl) && p[tl] == ' ') {
			if (n == cap)
				*v = realloc(*v, (cap *= 2) * sizeof **v);
			(*v)[n++] = strtoull(p + tl + 1, NULL, 16);
		}
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

static void assert_words(const vt_stream *st, const uint64_t *want, size_t n)
{
	assert_non_null(st);
	assert_int_equal(st->nvalues, n);
	for (size_t i = 0; i < n; i++)
		if (st->values[i] != want[i])
			fail_msg("word %zu: recorded %" PRIx64 ", program %" PRIx64,
				 i, st->values[i], want[i]);
}

/* out without the "V" lines, which hold addresses that ASLR moves. */
static char *without_addresses(const char *out)
{
	char *s = malloc(strlen(out) + 1), *d = s;
	for (const char *p = out; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
		if (strncmp(p, "V ", 2)) {
			memcpy(d, p, n);
			d += n;
		}
		p += n;
	}
	*d = 0;
	return s;
}

/* Recorded run vs native run: same output, same exit status. */
static void assert_same_as_native(const run *r, const char *prog,
				  const char *a1, const char *a2)
{
	run nat;
	run_prog(&nat, prog, NULL, a1, a2, NULL);
	assert_false(nat.have_trace);
	assert_int_equal(nat.status, r->status);
	char *x = without_addresses(nat.out), *y = without_addresses(r->out);
	assert_string_equal(x, y);
	free(x);
	free(y);
	if (prog == prog_np && strcmp(a1, "rsp") && strcmp(a1, "addr") &&
	    strcmp(a1, "a32"))
		assert_string_equal(nat.out, r->out);
	run_free(&nat);
}

/* Runs mode with the probes, checks the main stream against "V" lines. */
static void check_main_stream(const char *prog, const char *const *probes,
			      const char *mode, const char *n)
{
	run r;
	uint64_t *want;
	run_prog(&r, prog, make_patch(prog, probes), mode, n, NULL);
	assert_true(r.have_trace);
	assert_string_equal(r.s.error, "");
	assert_true(r.s.complete);
	size_t nw = expected(r.out, "V", &want);
	assert_words(vtrace_stream(&r.s, 0), want, nw);
	assert_same_as_native(&r, prog, mode, n);
	free(want);
	run_free(&r);
}

/* ------------------------------------------------------------- probes */

/* 40000 iterations, two words each: > 2 buffers of 32768 words, so the
 * guard-page flush runs; word before and reg after at the same pc. */
static void test_reg_after_add_every_iteration(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end before word abc",
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	uint64_t *v;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "loop", "40000",
		 NULL);
	size_t n = expected(r.out, "V", &v);
	assert_int_equal(n, 40000);
	uint64_t *want = malloc(2 * n * sizeof *want);
	for (size_t i = 0; i < n; i++)
		want[2 * i] = 0xabc, want[2 * i + 1] = v[i];
	assert_true(r.s.complete);
	assert_int_equal(r.s.end.values, 2 * n);
	assert_words(vtrace_stream(&r.s, 0), want, 2 * n);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
	assert_same_as_native(&r, prog_np, "loop", "40000");
	free(v);
	free(want);
	run_free(&r);
}

static void test_pie_bias_applied(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	run_prog(&r, prog_pie, make_patch(prog_pie, probes), "loop", "100",
		 NULL);
	uint64_t *want;
	size_t n = expected(r.out, "V", &want);
	assert_int_equal(n, 100);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	run_free(&r);
	free(want);
	/* the header's image_base is the bias the trampoline map assumes */
	const char *p2[] = { "tg_site tg_blk tg_end before target", NULL };
	check_main_stream(prog_pie, p2, "target", "20");
}

static void test_reg_rsp_is_the_programs_rsp(void **state)
{
	const char *probes[] = {
		"rsp_site rsp_site rsp_end before reg rsp", NULL };
	check_main_stream(prog_np, probes, "rsp", "1");
	check_main_stream(prog_pie, probes, "rsp", "1");
}

/* SIB operand, RIP-relative operand (relocated into the trampoline: the
 * program checks the value loaded), implicit push store at rsp-8. */
static void test_addr_is_effective_address(void **state)
{
	const char *probes[] = {
		"addr_site addr_site addr_end before addr 0",
		"rip_site rip_site rip_end before addr 0",
		"push_site push_site push_end before addr 0", NULL };
	check_main_stream(prog_np, probes, "addr", "20");
	check_main_stream(prog_pie, probes, "addr", "20");
}

/* The return address's store of `addr32 call` (libcrypt has them): at
 * rsp-8, as for any call; the recorder refused it (0x67) and stopped. */
static void test_addr_of_addr32_call(void **state)
{
	(void)state;
	const char *probes[] = { "a32_site a32_site a32_end before addr 0", NULL };
	check_main_stream(prog_np, probes, "a32", "20");
	check_main_stream(prog_pie, probes, "a32", "20");
}

/* jl of 2 bytes: the span takes the cmp before it (neighbours). */
static void test_taken_follows_branch_outcomes(void **state)
{
	const char *probes[] = {
		"tk_site tk_blk tk_end before taken", NULL };
	check_main_stream(prog_np, probes, "taken", "500");
	check_main_stream(prog_pie, probes, "taken", "500");
}

/* call *%r11, 3 bytes, displaced with the mov before it: emulated as
 * push of the original return address + jmp. */
static void test_target_of_indirect_call(void **state)
{
	const char *probes[] = { "tg_site tg_blk tg_end before target", NULL };
	check_main_stream(prog_np, probes, "target", "30");
}

/* ---------------------------------------------- value probes */

/* Every probe records one word (format.h: packing is the flush's, and
 * the reader's unpacking is tested in test_vtrace); these check what the
 * word is for each kind of probe, from the description in format.h. */
typedef struct dec {
	const vt_stream *st;
	size_t i;
	uint64_t lastsp, dslot[PATCH_DSLOTS];
} dec;

static uint64_t dec_word(dec *d)
{
	if (d->i >= d->st->nvalues)
		fail_msg("stream ends at word %zu", d->i);
	return d->st->values[d->i++];
}

static unsigned dec_bit(dec *d)
{
	uint64_t b = dec_word(d);
	if (b > 1)
		fail_msg("branch outcome %zu is %" PRIx64 ", not 0 or 1", d->i - 1, b);
	return (unsigned)b;
}

static uint64_t dec_short(dec *d)
{
	return dec_word(d);
}

enum { DEC_BIT, DEC_SHORT, DEC_DSP, DEC_DELTA };

/* Runs prog in mode with the probes; the main stream, decoded as `kind`
 * for each of the "V" lines, must give them all and nothing more.
 * DEC_DELTA: the probes' delta slot is `minus`, or each "V" line's probe
 * has its own slot, 1 + its index in the V lines modulo nslot, when
 * minus is PATCH_DSLOTS + nslot. */
static void check_words(const char *prog, const char *const *probes,
			 const char *mode, const char *n, int kind, uint64_t minus)
{
	run r;
	uint64_t *want;
	run_prog(&r, prog, make_patch(prog, probes), mode, n, NULL);
	assert_true(r.have_trace);
	assert_string_equal(r.s.error, "");
	assert_true(r.s.complete);
	size_t nw = expected(r.out, "V", &want);
	assert_true(nw > 0);
	dec d = { .st = vtrace_stream(&r.s, 0) };
	assert_non_null(d.st);
	for (size_t k = 0; k < nw; k++) {
		unsigned slot = minus < PATCH_DSLOTS ? (unsigned)minus
				: 1 + (unsigned)(k % (minus - PATCH_DSLOTS));
		uint64_t got = kind == DEC_BIT ? dec_bit(&d)
			       : kind == DEC_SHORT ? dec_short(&d) + minus
			       : kind == DEC_DELTA ? (d.dslot[slot] += dec_short(&d))
			       : (d.lastsp += dec_short(&d));
		if (got != want[k])
			fail_msg("value %zu: decoded %" PRIx64 ", program %" PRIx64,
				 k, got, want[k]);
	}
	/* nothing after the last value */
	assert_int_equal(d.i, d.st->nvalues);
	assert_same_as_native(&r, prog, mode, n);
	free(want);
	run_free(&r);
}

/* 500 outcomes; 70000: the buffer is written out (guard page) on the
 * way. */
static void test_tbit_records_outcomes(void **state)
{
	const char *probes[] = { "tk_site tk_blk tk_end before tbit", NULL };
	check_words(prog_np, probes, "taken", "500", DEC_BIT, 0);
	check_words(prog_pie, probes, "taken", "70000", DEC_BIT, 0);
}

/* Probes on the ways of a jump (format.h, PATCH_ON_TAKEN/PATCH_ON_FALL):
 * a word on each way gives the outcomes, and the program goes where the
 * jump sends it (its output as native); 70000 cross buffers.  On the
 * taken way alone: a word per taken jump, none for the others (the
 * fall-through runs on in line, the taken way through the site's tail). */
static void test_probes_on_jump_ways(void **state)
{
	const char *both[] = { "tk_site tk_blk tk_end taken word 1",
			       "tk_site tk_blk tk_end fallthru word 0", NULL };
	check_words(prog_np, both, "taken", "500", DEC_BIT, 0);
	check_words(prog_pie, both, "taken", "70000", DEC_BIT, 0);
	const char *one[] = { "tk_site tk_blk tk_end taken word 5", NULL };
	run r;
	uint64_t *v;
	run_prog(&r, prog_pie, make_patch(prog_pie, one), "taken", "3000", NULL);
	assert_true(r.have_trace);
	assert_string_equal(r.s.error, "");
	size_t n = expected(r.out, "V", &v), taken = 0;
	assert_int_equal(n, 3000);
	for (size_t i = 0; i < n; i++)
		taken += v[i] == 1;
	assert_true(taken > 1000 && taken < 2000);	/* (s >> 33) % 100 < 50 */
	const vt_stream *st = vtrace_stream(&r.s, 0);
	assert_non_null(st);
	assert_int_equal(st->nvalues, taken);
	for (size_t i = 0; i < st->nvalues; i++)
		assert_int_equal(st->values[i], 5);
	assert_same_as_native(&r, prog_pie, "taken", "3000");
	free(v);
	run_free(&r);
}

/* rbx after the add: 1, 5, 12, ... small at first, then large; 40000
 * iterations cross buffers. */
static void test_sreg_small_and_large_values(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after sreg rbx", NULL };
	check_words(prog_np, probes, "loop", "300", DEC_SHORT, 0);
	check_words(prog_pie, probes, "loop", "40000", DEC_SHORT, 0);
}

/* The destination less the call's own pc (non-PIE: link-time is run
 * time); rsp as its change since the previous dsp probe. */
static void test_starget_and_dsp(void **state)
{
	const char *tg[] = { "tg_site tg_blk tg_end before starget", NULL };
	check_words(prog_np, tg, "target", "30", DEC_SHORT, sym(prog_np, "tg_site"));
	const char *sp[] = { "rsp_site rsp_site rsp_end before dsp", NULL };
	check_words(prog_np, sp, "rsp", "1", DEC_DSP, 0);
	check_words(prog_pie, sp, "rsp", "1", DEC_DSP, 0);
}

/* Delta slots: rbx after the add (1, 5, 12, ...: differences small,
 * then large; 40000 iterations cross buffers); three direct
 * addresses (array walk, a global, the stack) in three slots, each the
 * difference from its own previous one. */
static void test_dreg_and_daddr_record_differences(void **state)
{
	const char *reg[] = {
		"loop_site loop_site loop_end after dreg rbx 7", NULL };
	check_words(prog_np, reg, "loop", "300", DEC_DELTA, 7);
	check_words(prog_pie, reg, "loop", "40000", DEC_DELTA, 7);
	const char *addr[] = {
		"addr_site addr_site addr_end before daddr 0 1",
		"rip_site rip_site rip_end before daddr 0 2",
		"push_site push_site push_end before daddr 0 3", NULL };
	check_words(prog_np, addr, "addr", "20", DEC_DELTA, PATCH_DSLOTS + 3);
	check_words(prog_pie, addr, "addr", "60", DEC_DELTA, PATCH_DSLOTS + 3);
}

/* A 3-byte block: no room for a jmp, so int3 (counted in STATS). */
/* ------------------------------------------------------------ plans */

/* The one plan file of prog in the current cache. */
static void plan_file(const char *prog, char out[PATH_MAX])
{
	char id[130], cmd[PATH_MAX + 256];
	buildid(prog, id);
	snprintf(cmd, sizeof cmd, "ls %s/skel/plan-%s-*.bin",
		 getenv("XDG_CACHE_HOME"), id);
	FILE *p = popen(cmd, "r");
	out[0] = 0;
	assert_non_null(fgets(out, PATH_MAX, p));
	char more[16];
	assert_null(fgets(more, sizeof more, p));	/* exactly one */
	pclose(p);
	out[strcspn(out, "\n")] = 0;
}

static const char *const plan_probes[] = {
	"loop_site loop_site loop_end before word e7e7000000000003",
	"loop_site loop_site loop_end after reg rbx", NULL };
static const char *const plan_probes2[] = {
	"rip_site rip_site rip_end before addr 0",
	"tk_site tk_blk tk_end before taken", NULL };

/* The main stream is the "V" lines of mode `loop`. */
static void plan_run(run *r, const char *patchp, const char *extra)
{
	uint64_t *v;
	run_prog(r, prog_pie, patchp, "loop", "30", extra);
	assert_true(r->have_trace);
	assert_string_equal(r->s.error, "");
	assert_true(r->s.complete);
	size_t n = expected(r->out, "V", &v);
	assert_int_equal(n, 30);
	const vt_stream *st = vtrace_stream(&r->s, 0);
	assert_non_null(st);
	assert_int_equal(st->nvalues, 2 * n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(st->values[2 * i], 0xe7e7000000000003ull);
		assert_int_equal(st->values[2 * i + 1], v[i]);
	}
	assert_same_as_native(r, prog_pie, "loop", "30");
	free(v);
}

/* A plan file damaged (a byte changed, then cut short) is not used: the
 * run is what it was, and the plan is made and kept again. */
static void test_damaged_plan_is_rebuilt(void **state)
{
	own_cache("cache-damage");
	const char *patchp = make_patch(prog_pie, plan_probes);
	char plan[PATH_MAX];
	run r;
	plan_run(&r, patchp, NULL);	/* plans, keeps */
	run_free(&r);
	plan_file(prog_pie, plan);
	struct stat st;
	assert_int_equal(stat(plan, &st), 0);
	int fd = open(plan, O_RDWR);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, st.st_size / 2), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, st.st_size / 2), 1);
	close(fd);
	plan_run(&r, patchp, "SKEL_VERBOSE=1");
	assert_non_null(strstr(r.err, "not a plan for this process"));
	run_free(&r);
	plan_run(&r, patchp, "SKEL_PLAN_CHECK=1");	/* made again, good */
	assert_non_null(strstr(r.err, "object 0: same as a fresh plan"));
	run_free(&r);
	assert_int_equal(truncate(plan, 100), 0);
	plan_run(&r, patchp, "SKEL_VERBOSE=1");
	assert_non_null(strstr(r.err, "not a plan for this process"));
	run_free(&r);
	plan_run(&r, patchp, "SKEL_VERBOSE=1");	/* read, nothing said */
	assert_null(strstr(r.err, "not a plan for this process"));
	run_free(&r);
	own_cache("cache");
}

/* Words, map and exit of a run from a kept plan (PIE: another bias and
 * other trampoline pages each run) are those of a run planned afresh;
 * and the plan file moved to a fresh plan's place is that plan, byte for
 * byte (code, text writes, map). */
static void test_cached_plan_gives_the_same_trace(void **state)
{
	own_cache("cache-same");
	run fresh, kept, r;
	run_prog(&fresh, prog_np, make_patch(prog_np, plan_probes2), "taken",
		 "200", "SKEL_PLAN_CACHE=0");
	run_prog(&r, prog_np, make_patch(prog_np, plan_probes2), "taken",
		 "200", NULL);	/* plans, keeps */
	run_free(&r);
	run_prog(&kept, prog_np, make_patch(prog_np, plan_probes2), "taken",
		 "200", "SKEL_VERBOSE=1");
	assert_null(strstr(kept.err, "planning again"));
	assert_int_equal(fresh.status, kept.status);
	assert_string_equal(fresh.out, kept.out);
	const vt_stream *a = vtrace_stream(&fresh.s, 0), *b = vtrace_stream(&kept.s, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->nvalues, 200);
	assert_int_equal(a->nvalues, b->nvalues);
	assert_memory_equal(a->values, b->values, a->nvalues * 8);
	assert_int_equal(fresh.s.nmap, kept.s.nmap);
	for (size_t i = 0; i < fresh.s.nmap; i++) {
		const vt_map_entry *x = &fresh.s.map[i], *y = &kept.s.map[i];
		assert_int_equal(x->pc, y->pc);
		assert_int_equal(x->len, y->len);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->tramp - fresh.s.map[0].tramp,
				 y->tramp - kept.s.map[0].tramp);
	}
	run_free(&fresh);
	run_free(&kept);
	/* PIE (make_patch rewrites the one patch file) */
	const char *patchp = make_patch(prog_pie, plan_probes2);
	run_prog(&r, prog_pie, patchp, "taken", "50", NULL);
	run_free(&r);
	run_prog(&r, prog_pie, patchp, "taken", "50", "SKEL_PLAN_CHECK=1");
	if (!strstr(r.err, "object 0: same as a fresh plan"))
		fail_msg("plan check: %s", r.err);
	assert_same_as_native(&r, prog_pie, "taken", "50");
	run_free(&r);
	own_cache("cache");
}

/* A cache that cannot be written: planned in memory each time, the same
 * words. */
static void test_unwritable_cache_still_records(void **state)
{
	char dir[160];	/* a file: no directory under it, even for root */
	snprintf(dir, sizeof dir, "%s/no-cache", tdir);
	FILE *f = fopen(dir, "w");
	fclose(f);
	setenv("XDG_CACHE_HOME", dir, 1);
	run r;
	plan_run(&r, make_patch(prog_pie, plan_probes), "SKEL_VERBOSE=1");
	assert_non_null(strstr(r.err, "cannot keep it"));
	run_free(&r);
	plan_run(&r, make_patch(prog_pie, plan_probes), NULL);
	run_free(&r);
	own_cache("cache");
}

static void test_short_block_falls_back_to_int3(void **state)
{
	const char *probes[] = { "sh_site sh_site sh_end after reg rbx", NULL };
	run r;
	uint64_t *want;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "short", "50",
		 "SKEL_VERBOSE=1");
	size_t n = expected(r.out, "V", &want);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	assert_non_null(strstr(r.err, "int3_sites=1"));
	assert_non_null(strstr(r.err, "int3_hits=50"));
	assert_int_equal(r.s.end.int3_sites, 1);
	assert_same_as_native(&r, prog_np, "short", "50");
	free(want);
	run_free(&r);
}

/* A block that jumps back to its own start is one site, the whole loop
 * in its trampoline: each iteration's probe runs there, the branch back
 * goes to the trampoline's start, the loop's exit back to the text. */
static void test_self_loop_runs_in_its_trampoline(void **state)
{
	const char *probes[] = { "sl_blk sl_blk sl_end before reg rsi", NULL };
	run r;
	uint64_t *want;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "selfloop", "40",
		 "SKEL_VERBOSE=1");
	size_t n = expected(r.out, "V", &want);
	assert_int_equal(n, 40);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	assert_non_null(strstr(r.err, "loop_sites=1"));
	assert_non_null(strstr(r.err, "int3_sites=0"));
	assert_same_as_native(&r, prog_np, "selfloop", "40");
	free(want);
	run_free(&r);
}

/* The same block, with `enter` lines for its two predecessors: they
 * enter its trampoline themselves, and the int3 is never hit. */
static void test_short_block_entered_from_predecessors(void **state)
{
	const char *probes[] = { "en_blk en_blk en_end after reg rbx",
		"enter en_blk en_p1 en_p2", "enter en_blk en_p2 en_blk", NULL };
	run r;
	uint64_t *want;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "entered", "50",
		 "SKEL_VERBOSE=1");
	size_t n = expected(r.out, "V", &want);
	assert_int_equal(n, 50);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	assert_non_null(strstr(r.err, "int3_sites=1"));
	assert_non_null(strstr(r.err, "int3_hits=0"));
	assert_non_null(strstr(r.err, "int3_entered=2"));
	assert_same_as_native(&r, prog_np, "entered", "50");
	free(want);
	run_free(&r);
	/* without them, each iteration is an int3 */
	const char *plain[] = { "en_blk en_blk en_end after reg rbx", NULL };
	run_prog(&r, prog_np, make_patch(prog_np, plain), "entered", "50",
		 "SKEL_VERBOSE=1");
	assert_non_null(strstr(r.err, "int3_hits=50"));
	run_free(&r);
}

/* A leaf keeps data at -8 and -128 below rsp and a compare result live
 * across the probed lea: the output must not change. */
static void test_red_zone_and_flags_preserved(void **state)
{
	const char *probes[] = {
		"rz_site rz_site rz_end before reg rsp",
		"rz_site rz_site rz_end after reg rax", NULL };
	run r;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "rz", NULL, NULL);
	assert_true(r.have_trace);
	vt_stream *st = vtrace_stream(&r.s, 0);
	assert_int_equal(st->nvalues, 20);
	for (int i = 0; i < 10; i++)	/* after lea 1(%rdi),%rax */
		assert_int_equal(st->values[2 * i + 1], 95 + i + 1);
	/* flags: jl taken for 99, not for 100; red zone: +x +77 */
	assert_non_null(strstr(r.out, "rz 99 276\nrz 100 1278\n"));
	assert_same_as_native(&r, prog_np, "rz", NULL);
	run_free(&r);
}

static void test_threads_get_tagged_streams(void **state)
{
	const char *probes[] = { "th_site th_site th_end after reg rbx", NULL };
	const char *progs[] = { prog_np, prog_pie };
	for (int k = 0; k < 2; k++) {
		const char *prog = progs[k];
		run r;
		run_prog(&r, prog, make_patch(prog, probes), "threads", NULL,
			 NULL);
		assert_true(r.s.complete);
		assert_int_equal(r.s.n, 3);
		const char *tags[2] = { "T0", "T1" };
		uint64_t starts[2] = { sym(prog, "thr_a"), sym(prog, "thr_b") };
		for (int t = 0; t < 2; t++) {
			vt_stream *st = NULL;
			for (size_t i = 0; i < r.s.n; i++)
				if (r.s.s[i].start.start == starts[t] &&
				    (r.s.s[i].start.flags & VT_START_IN_IMAGE))
					st = &r.s.s[i];
			assert_non_null(st);
			assert_true(st->ended);
			assert_int_equal(st->start.parent, 0);
			uint64_t *want;
			size_t n = expected(r.out, tags[t], &want);
			assert_words(st, want, n);
			free(want);
		}
		assert_int_equal(vtrace_stream(&r.s, 0)->nvalues, 0);
		run_free(&r);
	}
}

/* ------------------------------------------------ exits, crash, fork */

static void test_crash_keeps_valid_prefix(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	uint64_t *want;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "crash", "10", NULL);
	assert_true(WIFSIGNALED(r.status));
	assert_int_equal(WTERMSIG(r.status), SIGSEGV);
	assert_true(r.have_trace);
	assert_false(r.s.complete);	/* no END chunk: not a clean exit */
	assert_string_equal(r.s.error, "");
	size_t n = expected(r.out, "V", &want);
	assert_int_equal(n, 10);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	free(want);
	run_free(&r);
}

static void test_underscore_exit_flushes(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	uint64_t *want;
	run_prog(&r, prog_pie, make_patch(prog_pie, probes), "_exit", "10",
		 NULL);
	assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 5);
	assert_true(r.s.complete);
	assert_int_equal(r.s.end.how, VT_END_UNDERSCORE_EXIT);
	size_t n = expected(r.out, "V", &want);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	free(want);
	run_free(&r);
}

/* The child of fork() records into a file of its own, VALUES.<pid>:
 * the parent's file has the parent's words and a FORK chunk naming the
 * child; the child's, a PROCESS chunk that says where its thread 0
 * branched off the parent's, and the child's words. */
static void test_fork_child_records_its_own_file(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	uint64_t *want;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "fork", "7", NULL);
	size_t n = expected(r.out, "V", &want);
	assert_int_equal(n, 14);	/* child's 7 lines, then the parent's */
	assert_true(r.s.complete);
	assert_int_equal(r.s.n, 1);
	assert_words(vtrace_stream(&r.s, 0), want + 7, 7);
	assert_int_equal(r.s.nforks, 1);
	assert_int_equal(r.s.forks[0].thread, 0);
	assert_int_equal(r.s.forks[0].f.word, 0);	/* forked before its loop */
	assert_true(r.s.process.pid != 0 && !(r.s.process.flags & VT_PROC_FORKED));
	char path[160], err[FMT_ERR_LEN];
	snprintf(path, sizeof path, "%s/vals.%u", tdir, r.s.forks[0].f.pid);
	vt_streams c;
	assert_int_equal(vtrace_load_streams(path, &c, err), 0);
	assert_string_equal(c.error, "");
	assert_true(c.complete);
	assert_int_equal(c.process.pid, r.s.forks[0].f.pid);
	assert_int_equal(c.process.parent, r.s.process.pid);
	assert_int_equal(c.process.flags & VT_PROC_FORKED, VT_PROC_FORKED);
	assert_int_equal(c.process.word, 0);
	assert_int_equal(c.n, 1);
	assert_true(vtrace_stream(&c, 0)->start.flags & VT_START_FORKED);
	assert_words(vtrace_stream(&c, 0), want, 7);
	vtrace_streams_free(&c);
	unlink(path);
	free(want);
	run_free(&r);
}

/* ----------------------------------------------------------- identity */

static void test_other_binary_is_left_alone(void **state)
{
	char path[128];
	snprintf(path, sizeof path, "%s/patch-other", tdir);
	FILE *f = fopen(path, "w");
	fprintf(f, "skel-patch 1\nbinary 0123456789abcdef0123456789abcdef01234567 buildid\n"
		"probe %" PRIx64 " %" PRIx64 " %" PRIx64 " after reg rbx\n",
		sym(prog_np, "loop_site"), sym(prog_np, "loop_site"),
		sym(prog_np, "loop_end"));
	fclose(f);
	run r;
	run_prog(&r, prog_np, path, "loop", "5", "SKEL_VERBOSE=1");
	assert_false(r.have_trace);
	assert_same_as_native(&r, prog_np, "loop", "5");
	run_free(&r);
}

/* `binary <fnv1a64> hash` identifies the file by content. */
static void test_content_hash_identity(void **state)
{
	size_t len;
	char *bytes = slurp(prog_pie, &len);
	uint64_t h = skel_fnv1a64(SKEL_FNV1A64_INIT, bytes, len);
	free(bytes);
	char path[128];
	snprintf(path, sizeof path, "%s/patch-hash", tdir);
	FILE *f = fopen(path, "w");
	fprintf(f, "skel-patch 1\nbinary %016" PRIx64 " hash\n"
		"probe %" PRIx64 " %" PRIx64 " %" PRIx64 " after reg rbx\n", h,
		sym(prog_pie, "loop_site"), sym(prog_pie, "loop_site"),
		sym(prog_pie, "loop_end"));
	fclose(f);
	run r;
	uint64_t *want;
	run_prog(&r, prog_pie, path, "loop", "5", NULL);
	assert_true(r.have_trace);
	assert_int_equal(r.s.n, 1);
	size_t n = expected(r.out, "V", &want);
	assert_words(vtrace_stream(&r.s, 0), want, n);
	free(want);
	run_free(&r);
}

/* ------------------------------------------------------------ formats */

static void test_patch_roundtrip_and_errors(void **state)
{
	const char *text =
		"skel-patch 1  # comment\n\nbinary 00ff buildid\n"
		"probe 0x10 10 20 after reg r12\n"
		"probe 12 10 20 before addr 1\n"
		"probe 1e 10 20 before taken\n"
		"probe 1e 10 20 before word DEADbeef\n"
		"probe 1e 10 20 fallthru dreg rsi 3\n"
		"probe 1e 10 20 taken sword 2\n";
	patch p, q;
	char err[FMT_ERR_LEN];
	assert_int_equal(patch_parse(&p, text, strlen(text), err), 0);
	assert_int_equal(p.nprobes, 6);
	assert_int_equal(p.probes[0].reg, SKEL_R12);
	assert_int_equal(p.probes[0].after, PATCH_AFTER);
	assert_int_equal(p.probes[4].after, PATCH_ON_FALL);
	assert_int_equal(p.probes[5].after, PATCH_ON_TAKEN);
	assert_int_equal(p.probes[3].word, 0xdeadbeef);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	patch_write(f, &p);
	fclose(f);
	assert_int_equal(patch_parse(&q, buf, len, err), 0);
	assert_int_equal(patch_hash(&p), patch_hash(&q));
	q.probes[1].k = 0;	/* another operand: another patch */
	assert_true(patch_hash(&p) != patch_hash(&q));
	q.probes[1].k = p.probes[1].k;
	q.probes[5].after = PATCH_ON_FALL;	/* the other way: another patch */
	assert_true(patch_hash(&p) != patch_hash(&q));
	assert_true(strstr(buf, "probe 1e 10 20 fallthru dreg rsi 3\n") != NULL);
	free(buf);
	patch_free(&p);
	patch_free(&q);

	static const struct { const char *text, *msg; } bad[] = {
		{ "skel-patch 2\n", "line 1: unsupported patch version '2'" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 30 10 20 before taken\n",
		  "line 3: pc 30 is outside its block [10, 20)" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 after taken\n",
		  "line 3: only 'reg', 'sreg', 'dreg', 'dsp' and 'vmmark' probes may be 'after'" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 before vmmark 38\n",
		  "line 3: a 'vmmark' probe is 'after' its system call" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 after vmmark 39\n",
		  "line 3: 'vmmark' wants the system call's number in hex: 38 (clone) or "
		  "1b3 (clone3)" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 taken tbit\n",
		  "line 3: only 'reg', 'dreg', 'word' and 'sword' probes may be on a "
		  "jump's way ('taken', 'fallthru')" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 aside reg rax\n",
		  "line 3: want 'before', 'after', 'taken' or 'fallthru', not 'aside'" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 before reg eax\n",
		  "line 3: 'reg' wants a 64-bit register name (rax..r15)" },
		{ "skel-patch 1\nprobe 10 10 20 before taken\n",
		  "line 2: 'probe' before the 'binary' line" },
		{ "skel-patch 1\nbinary 0g buildid\n", "line 2: bad identity '0g'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(patch_parse(&p, bad[i].text, strlen(bad[i].text),
					     err), -1);
		assert_string_equal(err, bad[i].msg);
	}

	/* vmmark: written back as read; its number is part of the hash */
	const char *vm = "skel-patch 1\nbinary 00 buildid\nprobe 12 10 20 after vmmark 1b3\n";
	assert_int_equal(patch_parse(&p, vm, strlen(vm), err), 0);
	assert_int_equal(p.probes[0].what, PATCH_VMMARK);
	assert_int_equal(p.probes[0].word, 435);
	f = open_memstream(&buf, &len);
	patch_write(f, &p);
	fclose(f);
	assert_true(strstr(buf, "probe 12 10 20 after vmmark 1b3\n") != NULL);
	free(buf);
	assert_int_equal(patch_parse(&q, vm, strlen(vm), err), 0);
	q.probes[0].word = 56;
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&p);
	patch_free(&q);

	/* treg: its register and way read, written back, in the hash;
	 * rsp, another way's name, or 'after' refused */
	const char *tr = "skel-patch 1\nbinary 00 buildid\nprobe 14 10 20 before treg r9 fallthru\n";
	assert_int_equal(patch_parse(&p, tr, strlen(tr), err), 0);
	assert_int_equal(p.probes[0].what, PATCH_TREG);
	assert_int_equal(p.probes[0].reg, SKEL_R9);
	assert_int_equal(p.probes[0].word, PATCH_ON_FALL);
	f = open_memstream(&buf, &len);
	patch_write(f, &p);
	fclose(f);
	assert_true(strstr(buf, "probe 14 10 20 before treg r9 fallthru\n") != NULL);
	free(buf);
	assert_int_equal(patch_parse(&q, tr, strlen(tr), err), 0);
	q.probes[0].word = PATCH_ON_TAKEN;
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&q);
	assert_int_equal(patch_parse(&q, tr, strlen(tr), err), 0);
	q.probes[0].reg = SKEL_R8;
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&p);
	patch_free(&q);
	static const char *const bad_tr[] = {
		"probe 14 10 20 before treg rsp taken\n",
		"probe 14 10 20 before treg rax sideways\n",
		"probe 14 10 20 before treg rax\n",
		"probe 14 10 20 after treg rax taken\n",
	};
	for (size_t k = 0; k < sizeof bad_tr / sizeof *bad_tr; k++) {
		char t[160];
		snprintf(t, sizeof t, "skel-patch 1\nbinary 00 buildid\n%s", bad_tr[k]);
		assert_int_equal(patch_parse(&p, t, strlen(t), err), -1);
		assert_non_null(strstr(err, k < 3 ? "'treg' wants" : "may be 'after'"));
	}

	/* edsp and link lines: read, written back, in the hash (a link's
	 * number is its place: another slot or order is another patch) */
	const char *lk = "skel-patch 1\nbinary 00 buildid\n"
			 "probe 10 10 20 before sword e7e7000000000003\n"
			 "probe 10 10 20 before edsp\n"
			 "link 1030 4000\nlink 1040 4008\n";
	assert_int_equal(patch_parse(&p, lk, strlen(lk), err), 0);
	assert_int_equal(p.probes[1].what, PATCH_EDSP);
	assert_int_equal(p.nlinks, 2);
	assert_int_equal(p.links[1].stub, 0x1040);
	assert_int_equal(p.links[1].slot, 0x4008);
	f = open_memstream(&buf, &len);
	patch_write(f, &p);
	fclose(f);
	assert_true(strstr(buf, "probe 10 10 20 before edsp\nlink 1030 4000\nlink 1040 4008\n"));
	assert_int_equal(patch_parse(&q, buf, len, err), 0);
	free(buf);
	assert_true(patch_hash(&p) == patch_hash(&q));
	q.links[0].slot = 0x4010;
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&q);
	assert_int_equal(patch_parse(&q, lk, strlen(lk), err), 0);
	q.probes[1].what = PATCH_DSP;	/* not skippable: another patch */
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&p);
	patch_free(&q);
	/* qret and closed lines: read, written back after the links, in
	 * the hash (a qret names a link that exists) */
	const char *qr = "skel-patch 1\nbinary 00 buildid\n"
			 "probe 10 10 20 before sword e7e6ffffffffffff\n"
			 "link 1030 4000\nlink 1040 4008\nqret 10 1\nclosed 1200\n";
	assert_int_equal(patch_parse(&p, qr, strlen(qr), err), 0);
	assert_int_equal(p.nqrets, 1);
	assert_int_equal(p.qrets[0].ret, 0x10);
	assert_int_equal(p.qrets[0].link, 1);
	assert_int_equal(p.nclosed, 1);
	assert_int_equal(p.closed[0], 0x1200);
	f = open_memstream(&buf, &len);
	patch_write(f, &p);
	fclose(f);
	assert_true(strstr(buf, "link 1040 4008\nqret 10 1\nclosed 1200\n"));
	assert_int_equal(patch_parse(&q, buf, len, err), 0);
	free(buf);
	assert_true(patch_hash(&p) == patch_hash(&q));
	q.qrets[0].link = 0;
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&q);
	assert_int_equal(patch_parse(&q, qr, strlen(qr), err), 0);
	q.nclosed = 0;
	assert_true(patch_hash(&p) != patch_hash(&q));
	q.nclosed = 1;
	patch_free(&q);
	assert_int_equal(patch_parse(&q, lk, strlen(lk), err), 0);
	assert_true(patch_hash(&p) != patch_hash(&q));
	patch_free(&p);
	patch_free(&q);
	static const struct { const char *text, *msg; } badlk[] = {
		{ "skel-patch 1\nbinary 00 buildid\nlink 10 4000\nqret 20 1\n",
		  "line 4: qret names link 1 of 1" },
		{ "skel-patch 1\nbinary 00 buildid\nclosed\n",
		  "line 3: closed wants: <routine-entry>" },
		{ "skel-patch 1\nbinary 00 buildid\nlink 10 4001\n",
		  "line 3: GOT slot 4001 is not 8-byte aligned" },
		{ "skel-patch 1\nbinary 00 buildid\nlink 10\n",
		  "line 3: link wants: <stub> <got-slot>" },
		{ "skel-patch 1\nlink 10 4000\n", "line 2: 'link' before the 'binary' line" },
		{ "skel-patch 1\nbinary 00 buildid\nprobe 10 10 20 taken edsp\n",
		  "line 3: an 'edsp' probe is 'before' its instruction" },
	};
	for (size_t i = 0; i < sizeof badlk / sizeof *badlk; i++) {
		assert_int_equal(patch_parse(&p, badlk[i].text, strlen(badlk[i].text), err), -1);
		assert_string_equal(err, badlk[i].msg);
	}
}

/* A whole-process patch: sections split at each magic line, each parsed
 * as its own patch, errors naming the line of the whole text; entry words
 * of object k get k in bits 32..47, other words stay. */
static void test_patch_set_sections(void **state)
{
	const char *text =
		"skel-patch 1\nbinary 01 buildid\nprobe 10 10 20 before taken\n"
		"skel-patch 1\n# libfoo\nbinary 0200000000000001 hash\n"
		"probe 30 30 40 before word e7e7000000000005\n"
		"probe 31 30 40 before word 17\n";
	patch_set s;
	char err[FMT_ERR_LEN];
	assert_int_equal(patch_set_parse(&s, text, strlen(text), err), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.obj[0].nprobes, 1);
	assert_int_equal(s.obj[1].nprobes, 2);
	assert_int_equal(s.obj[1].id_kind, SKEL_ID_HASH);
	assert_int_equal(s.obj[1].id[0], 2);
	assert_int_equal(patch_entry_word(s.obj[1].probes[0].word, 3),
			 0xe7e7000300000005ull);
	assert_int_equal(patch_entry_word(s.obj[1].probes[1].word, 3), 0x17);
	patch one;
	assert_int_equal(patch_parse(&one, text, 59, err), 0);	/* section 0 */
	assert_int_equal(patch_hash(&one), patch_hash(&s.obj[0]));
	patch_free(&one);
	patch_set_free(&s);

	const char *bad = "skel-patch 1\nbinary 01 buildid\n"
			  "skel-patch 1\nbinary 02 buildid\nprobe 50 10 20 before taken\n";
	assert_int_equal(patch_set_parse(&s, bad, strlen(bad), err), -1);
	assert_string_equal(err, "line 5: pc 50 is outside its block [10, 20)");
	assert_int_equal(s.n, 0);
	/* comments before the first magic line belong to section 0 */
	const char *lead = "# made by hand\n\nskel-patch 1\nbinary 01 buildid\n";
	assert_int_equal(patch_set_parse(&s, lead, strlen(lead), err), 0);
	assert_int_equal(s.n, 1);
	patch_set_free(&s);
	assert_int_equal(patch_set_parse(&s, "", 0, err), -1);
	assert_string_equal(err, "empty patch");
}

/* A real trace, then cut and damaged copies of it. */
static void test_vtrace_reader_rejects_damage(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "loop", "10", NULL);
	run_free(&r);
	char valp[128];
	snprintf(valp, sizeof valp, "%s/vals", tdir);
	size_t len;
	char *data = slurp(valp, &len);
	char err[FMT_ERR_LEN];
	vtrace t;
	vt_streams s;

	/* last chunk is END (24 + 24 bytes): cut into its payload */
	assert_int_equal(vtrace_open_mem(&t, data, len - 5, err), 0);
	vtrace_streams_from(&t, &s);
	vtrace_close(&t);
	char want[FMT_ERR_LEN];
	snprintf(want, sizeof want, "truncated chunk at offset %zu "
		 "(payload of 24 bytes, 19 left)", len - 48);
	assert_string_equal(s.error, want);
	assert_false(s.complete);
	assert_int_equal(vtrace_stream(&s, 0)->nvalues, 10);	/* prefix */
	vtrace_streams_free(&s);

	/* a damaged chunk magic: the END chunk */
	data[len - 48] ^= 0x55;
	assert_int_equal(vtrace_open_mem(&t, data, len, err), 0);
	vtrace_streams_from(&t, &s);
	vtrace_close(&t);
	snprintf(want, sizeof want, "bad chunk magic at offset %zu", len - 48);
	assert_string_equal(s.error, want);
	assert_int_equal(vtrace_stream(&s, 0)->nvalues, 10);
	vtrace_streams_free(&s);

	data[0] = 'X';
	assert_int_equal(vtrace_open_mem(&t, data, len, err), -1);
	assert_string_equal(err, "bad magic: not a skel value trace");
	assert_int_equal(vtrace_open_mem(&t, VT_MAGIC, 8, err), -1);
	assert_string_equal(err, "truncated header (8 of 104 bytes)");
	free(data);
}

/* The mapped file read in place (replay) gives the words the copying
 * reader gives, in the same order, split at chunk boundaries only. */
static void test_vtrace_ref_equals_copy(void **state)
{
	const char *probes[] = {
		"loop_site loop_site loop_end after reg rbx", NULL };
	run r;
	run_prog(&r, prog_np, make_patch(prog_np, probes), "loop", "3000", NULL);
	run_free(&r);
	char valp[128];
	snprintf(valp, sizeof valp, "%s/vals", tdir);
	char err[FMT_ERR_LEN];
	vt_streams c, m;
	assert_int_equal(vtrace_load_streams(valp, &c, err), 0);
	vtrace t;
	assert_int_equal(vtrace_open(&t, valp, err), 0);
	assert_true(t.mapped);
	vtrace_streams_ref(&t, &m);
	assert_string_equal(m.error, "");
	assert_true(m.complete);
	assert_int_equal(c.n, m.n);
	vt_stream *a = vtrace_stream(&c, 0), *b = vtrace_stream(&m, 0);
	assert_int_equal(a->nvalues, 3000);
	assert_int_equal(b->nvalues, 3000);
	assert_null(b->values);
	size_t k = 0;
	for (size_t i = 0; i < b->nruns; i++) {
		uint64_t *w = malloc((b->runs[i].n + VT_UNPACK_SLACK) * 8);
		assert_int_equal(vt_run_words(&b->runs[i], w), 0);
		for (size_t j = 0; j < b->runs[i].n; j++, k++)
			assert_int_equal(w[j], a->values[k]);
		free(w);
	}
	assert_int_equal(k, 3000);
	vtrace_streams_free(&m);
	vtrace_close(&t);
	vtrace_streams_free(&c);
}

/* Many threads, named out of order and interleaved (thread ids that
 * collide in a small hash table among them): each chunk lands in its own
 * thread's stream, and the streams stay in order of first appearance. */
static void test_vtrace_many_threads_keep_their_streams(void **state)
{
	enum { NT = 5000 };
	size_t size = VT_HEADER_SIZE + NT * (VT_CHUNK_HEADER_SIZE + sizeof(vt_thread_start)) +
		      2 * NT * (VT_CHUNK_HEADER_SIZE + sizeof(vt_packed) + 8);	/* one word packed */
	uint8_t *buf = calloc(1, size);
	size_t at = vt_put_header(buf);
	/* round 0 names thread 64*i (mod 2^32, descending), round 1 again */
	for (uint32_t i = 0; i < NT; i++)
		at = vt_put_start(buf, at, 0u - 64u * i);
	for (int round = 0; round < 2; round++)
		for (uint32_t i = 0; i < NT; i++) {
			uint32_t thread = 0u - 64u * i;
			uint64_t word = (uint64_t)thread << 1 | (uint64_t)round;
			at = vt_put_chunk(buf, at, VT_VALUES, thread, (uint64_t)round, &word, 8);
		}
	assert_int_equal(at, size);
	char err[FMT_ERR_LEN];
	vtrace t;
	assert_int_equal(vtrace_open_mem(&t, buf, size, err), 0);
	vt_streams s;
	vtrace_streams_from(&t, &s);
	assert_string_equal(s.error, "");
	assert_int_equal(s.n, NT);
	for (uint32_t i = 0; i < NT; i++) {
		const vt_stream *st = &s.s[i];
		assert_int_equal(st->thread, 0u - 64u * i);
		assert_int_equal(st->nvalues, 2);
		assert_int_equal(st->values[0], (uint64_t)st->thread << 1);
		assert_int_equal(st->values[1], (uint64_t)st->thread << 1 | 1);
	}
	assert_ptr_equal(vtrace_stream(&s, 0u - 64u * 77), &s.s[77]);
	vtrace_streams_free(&s);
	vtrace_close(&t);
	free(buf);
}

/* ------------------------------------------------------ whole process */

/* tests/wp_lib.c as libwp.so, tests/wp_prog.c linked with it (wp_prog)
 * and not (wp_dl, which dlopens it), and a two-section patch: the
 * program's (no probe), then the library's with an entry word at wp_sum
 * and rax after the add at wp_sum_add. */
static char wp_lib[160], wp_prog[160], wp_dl[160];

static void wp_setup(void)
{
	char cmd[1024];
	snprintf(wp_lib, sizeof wp_lib, "%s/libwp.so", tdir);
	snprintf(wp_prog, sizeof wp_prog, "%s/wp_prog", tdir);
	snprintf(wp_dl, sizeof wp_dl, "%s/wp_dl", tdir);
	snprintf(cmd, sizeof cmd,
		 "gcc -O1 -shared -fPIC -o %s tests/wp_lib.c && "
		 "gcc -O1 -o %s tests/wp_prog.c -Wl,--no-as-needed -L%s -lwp "
		 "-Wl,-rpath,%s -ldl && gcc -O1 -o %s tests/wp_prog.c -ldl",
		 wp_lib, wp_prog, tdir, tdir, wp_dl);
	assert_int_equal(system(cmd), 0);
}

/* The patch set for program prog (no probe of its own) and libwp. */
static const char *wp_patch(const char *prog)
{
	static char patchp[160];
	char pid[130], lid[130];
	buildid(prog, pid);
	buildid(wp_lib, lid);
	uint64_t entry = sym(wp_lib, "wp_sum"), add = sym(wp_lib, "wp_sum_add"),
		 end = sym(wp_lib, "wp_sum_end");
	snprintf(patchp, sizeof patchp, "%s/wp.patch", tdir);
	FILE *f = fopen(patchp, "w");
	fprintf(f, "skel-patch 1\nbinary %s buildid\n", pid);
	fprintf(f, "skel-patch 1\nbinary %s buildid\n", lid);
	fprintf(f, "probe %" PRIx64 " %" PRIx64 " %" PRIx64 " before word "
		"e7e7000000000005\n", entry, entry, end);
	fprintf(f, "probe %" PRIx64 " %" PRIx64 " %" PRIx64 " after reg rax\n",
		add, entry, end);
	fclose(f);
	return patchp;
}

static const vt_object *wp_object(const vt_streams *s, const char *name)
{
	for (size_t i = 0; i < s->objects.n; i++)
		if (strstr(s->objects.v[i].path, name))
			return &s->objects.v[i];
	return NULL;
}

/* The words, the library's object and bias, its map entries. */
static void wp_check(const run *r, uint32_t late)
{
	uint64_t *want, *bias;
	assert_true(r->have_trace);
	assert_string_equal(r->s.error, "");
	assert_true(r->s.complete);
	assert_int_equal(r->status, 0);
	size_t nw = expected(r->out, "V", &want);
	assert_int_equal(nw, 10);
	assert_words(vtrace_stream((vt_streams *)&r->s, 0), want, nw);
	assert_int_equal(expected(r->out, "BIAS", &bias), 1);
	const vt_object *lo = wp_object(&r->s, "libwp.so");
	assert_non_null(lo);
	assert_int_equal(lo->flags, VT_OBJ_COVERED | late);
	assert_int_equal(lo->index, 1);
	assert_int_equal(lo->bias, bias[0]);
	const vt_object *libc = wp_object(&r->s, "libc.so.6");
	assert_non_null(libc);
	assert_int_equal(libc->flags & VT_OBJ_COVERED, 0);
	assert_int_equal(libc->index, VT_NO_OBJECT);
	assert_int_equal(r->s.objects.v[0].flags, VT_OBJ_MAIN | VT_OBJ_COVERED);
	assert_int_equal(r->s.objects.v[0].index, 0);
	const vt_object *me = wp_object(&r->s, "libskelrec.so");
	assert_non_null(me);
	assert_true(me->flags & VT_OBJ_RECORDER);
	assert_true(r->s.objects.marker >= me->lo && r->s.objects.marker < me->hi);
	size_t lib_entries = 0;
	for (size_t i = 0; i < r->s.nmap; i++)
		if (VT_MAP_OBJECT(r->s.map[i].kind) == 1) {
			uint64_t pc = r->s.map[i].pc;
			assert_true(pc == sym(wp_lib, "wp_sum") ||
				    pc == sym(wp_lib, "wp_sum_add"));
			lib_entries++;
		}
	assert_true(lib_entries >= 3);
	free(want);
	free(bias);
}

static void test_library_section_records_words_of_object_1(void **state)
{
	wp_setup();
	run r;
	run_prog(&r, wp_prog, wp_patch(wp_prog), "link", "5", NULL);
	wp_check(&r, 0);
	assert_non_null(strstr(r.out, "total 45\n"));
	run_free(&r);
}

/* run_prog takes two arguments: the third (the library) through a shell */
static void test_dlopened_library_is_patched_when_mapped(void **state)
{
	wp_setup();
	run r = { 0 };
	char outp[128], valp[128], shell[1024], err[FMT_ERR_LEN];
	snprintf(outp, sizeof outp, "%s/out", tdir);
	snprintf(valp, sizeof valp, "%s/vals", tdir);
	snprintf(shell, sizeof shell,
		 "rm -f %s; LD_PRELOAD=%s SKEL_MAPS=1 SKEL_PATCH=%s SKEL_VALUES=%s %s dlopen 5 %s > %s",
		 valp, lib, wp_patch(wp_dl), valp, wp_dl, wp_lib, outp);
	int st = system(shell);
	assert_true(WIFEXITED(st));
	r.status = WEXITSTATUS(st);
	r.out = slurp(outp, NULL);
	assert_int_equal(vtrace_load_streams(valp, &r.s, err), 0);
	assert_int_equal(vt_maps_resolve(&r.s, err), 0);
	r.have_trace = 1;
	wp_check(&r, VT_OBJ_LATE);
	/* the library is not among the objects of the start */
	for (size_t i = 0; i < r.s.objects.n; i++)
		if (strstr(r.s.objects.v[i].path, "libwp.so"))
			assert_true(r.s.objects.v[i].flags & VT_OBJ_LATE);
	run_free(&r);
}

/* libc patched for real, with its whole skeleton's patch as section 1:
 * the program behaves as natively and the trace reads back whole, with
 * entry words of object 1.  The libc patch is made once (about 6 s). */
static void wp_libc_mode(const char *mode, const char *n)
{
	static char setp[160], prog[160];
	char cmd[1024];
	if (!setp[0]) {
		snprintf(prog, sizeof prog, "%s/wp_libc", tdir);
		snprintf(setp, sizeof setp, "%s/libc-set.patch", tdir);
		snprintf(cmd, sizeof cmd,
			 "gcc -O1 -o %s tests/wp_libc.c -lpthread && "
			 "./skel gen %s -o /dev/null --patch %s/p0 2>/dev/null && "
			 "./skel gen /lib/x86_64-linux-gnu/libc.so.6 -o /dev/null "
			 "--patch %s/p1 2>/dev/null && cat %s/p0 %s/p1 > %s",
			 prog, prog, tdir, tdir, tdir, tdir, setp);
		assert_int_equal(system(cmd), 0);
	}
	run r, nat;
	run_prog(&r, prog, setp, mode, n, NULL);
	run_prog(&nat, prog, NULL, mode, n, NULL);
	if (!strcmp(mode, "loop")) {	/* libc's plan kept, read back */
		run c;
		run_prog(&c, prog, setp, mode, n, "SKEL_PLAN_CHECK=1");
		assert_non_null(strstr(c.err, "object 1: same as a fresh plan"));
		assert_string_equal(c.out, nat.out);
		run_free(&c);
	}
	assert_int_equal(r.status, nat.status);
	assert_string_equal(r.out, nat.out);
	assert_true(r.have_trace);
	assert_string_equal(r.s.error, "");
	assert_true(r.s.complete);
	size_t libc_entries = 0;
	for (size_t t = 0; t < r.s.n; t++)
		for (size_t i = 0; i < r.s.s[t].nvalues; i++) {
			/* an entry of object 1 is recorded less
			 * PATCH_CTL_BASE (PATCH_SWORD): (1 << 32) + id + 1 */
			uint64_t w = r.s.s[t].values[i];
			libc_entries += (w >> 32) == 1;
		}
	assert_true(libc_entries > 100);
	const vt_object *libc = wp_object(&r.s, "libc.so.6");
	assert_non_null(libc);
	assert_int_equal(libc->flags, VT_OBJ_COVERED);
	assert_int_equal(libc->index, 1);
	run_free(&r);
	run_free(&nat);
}

static void test_libc_patched_program_runs_as_natively(void **state)
{
	wp_libc_mode("loop", "50");
}

static void test_libc_patched_two_threads(void **state)
{
	wp_libc_mode("threads", "200");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reg_after_add_every_iteration),
		cmocka_unit_test(test_vtrace_ref_equals_copy),
		cmocka_unit_test(test_pie_bias_applied),
		cmocka_unit_test(test_reg_rsp_is_the_programs_rsp),
		cmocka_unit_test(test_addr_is_effective_address),
		cmocka_unit_test(test_taken_follows_branch_outcomes),
		cmocka_unit_test(test_tbit_records_outcomes),
		cmocka_unit_test(test_probes_on_jump_ways),
		cmocka_unit_test(test_sreg_small_and_large_values),
		cmocka_unit_test(test_starget_and_dsp),
		cmocka_unit_test(test_dreg_and_daddr_record_differences),
		cmocka_unit_test(test_addr_of_addr32_call),
		cmocka_unit_test(test_target_of_indirect_call),
		cmocka_unit_test(test_short_block_falls_back_to_int3),
		cmocka_unit_test(test_self_loop_runs_in_its_trampoline),
		cmocka_unit_test(test_short_block_entered_from_predecessors),
		cmocka_unit_test(test_damaged_plan_is_rebuilt),
		cmocka_unit_test(test_cached_plan_gives_the_same_trace),
		cmocka_unit_test(test_unwritable_cache_still_records),
		cmocka_unit_test(test_red_zone_and_flags_preserved),
		cmocka_unit_test(test_threads_get_tagged_streams),
		cmocka_unit_test(test_crash_keeps_valid_prefix),
		cmocka_unit_test(test_underscore_exit_flushes),
		cmocka_unit_test(test_fork_child_records_its_own_file),
		cmocka_unit_test(test_other_binary_is_left_alone),
		cmocka_unit_test(test_content_hash_identity),
		cmocka_unit_test(test_patch_roundtrip_and_errors),
		cmocka_unit_test(test_patch_set_sections),
		cmocka_unit_test(test_vtrace_reader_rejects_damage),
		cmocka_unit_test(test_vtrace_many_threads_keep_their_streams),
		cmocka_unit_test(test_library_section_records_words_of_object_1),
		cmocka_unit_test(test_dlopened_library_is_patched_when_mapped),
		cmocka_unit_test(test_libc_patched_program_runs_as_natively),
		cmocka_unit_test(test_libc_patched_two_threads),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
