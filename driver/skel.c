/* skel — the command-line driver.  Each subcommand parses its arguments,
 * calls the stages and prints; errors are "skel: FILE: what is wrong". */
#include "analyzer/analyzer.h"
#include "ivres/ivres.h"
#include "driver/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
"usage: skel COMMAND [ARGS]\n"
"\n"
"skel traces the data addresses an x86-64 program touches, by program\n"
"skeletonization: the binary is analyzed once, most addresses are computed\n"
"by a generated C skeleton, and only the few register values it cannot\n"
"compute are recorded at run time.\n"
"\n"
"Tracing:\n"
"  skel gen APP [-o SKEL.c] [--patch FILE] [--all-accesses] [--no-slice]\n"
"          [--whole-process] [--object LIB]... [--omega W [--chunk C]]\n"
"                                the C skeleton of APP (stdout by default); it embeds\n"
"                                the patch and APP's identity.  --all-accesses: the\n"
"                                full-tracing baseline (every address recorded).\n"
"                                --no-slice: replay loops without data accesses too\n"
"                                (else skipped: their instruction fetches are then\n"
"                                not in --fetches/--sim traces)\n"
"                                --whole-process: also the shared objects APP loads\n"
"                                (libc included, not the loader), each a skeleton of\n"
"                                its own made once into the cache; --object LIB: only\n"
"                                that one (file name, soname or path), repeatable.\n"
"                                record, replay, run and check then trace them too\n"
"                                --omega W (0..1, default 1: exact): approximate\n"
"                                mode (selective BID instrumentation, docs/bid.md):\n"
"                                per block, only ceil(W*m) of the m classes of\n"
"                                accesses whose addresses cost recorded values keep\n"
"                                their probes; the others are traced at a kept\n"
"                                access's address when within --chunk C bytes of it\n"
"                                (C a power of two, default 64), else without an\n"
"                                address, and marked so in the trace\n"
"  skel record SKEL.c -o VALUES -- APP [ARGS...]\n"
"                                run APP, storing the recorded values in VALUES;\n"
"                                also malloc and its family (interposed: each call's\n"
"                                block, size and caller) and each thread's stack and\n"
"                                TLS block, for --symbolize\n"
"  skel replay SKEL.c VALUES [-o TRACE] [--format F] [--stats] [--salvage]\n"
"          [--symbolize [--binary APP]] [--roi FUNC]... [--roi-markers]\n"
"                                regenerate the trace (stdout, or TRACE; '-' is\n"
"                                stdout).  F: text (default: 'PC R|W SIZE ADDR' in\n"
"                                hex, one access per line, per thread), bin (32-byte\n"
"                                records), lackey (' L|S|M addr,size'), din (Dinero\n"
"                                IV: '0|1 addr'), csv (thread,pc,kind,size,addr),\n"
"                                count (totals only); docs/formats.md.  --stats:\n"
"                                accesses, bytes, distinct cache lines and pages per\n"
"                                thread, routine and loop, on stderr\n"
"                                --fetches / --no-fetches: instruction fetches too\n"
"                                (I events; default: on with lackey and --sim)\n"
"                                --sim cache: cachegrind's cache model instead of a\n"
"                                trace, its summary to TRACE; --I1=SIZE,ASSOC,LINE,\n"
"                                --D1=..., --LL=... (default: as cachegrind picks);\n"
"                                --sim-out FILE: a cachegrind.out file (cg_annotate).\n"
"                                --l1-per-thread: each thread its own I1 and D1, one\n"
"                                LL for all (default: one cache, as cachegrind)\n"
"                                --sim reuse: reuse distances of the data accesses\n"
"                                (distinct lines between two accesses to a line)\n"
"                                --symbolize (text, csv): each access gets the object\n"
"                                it touches, a last field: SYMBOL+0xOFF (static data,\n"
"                                by the symbol tables; the section when no symbol\n"
"                                covers it; LIB!SYMBOL+0xOFF in a shared object),\n"
"                                heap#N+0xOFF (the N-th allocation of the run: malloc,\n"
"                                calloc, realloc, aligned allocations; realloc and a\n"
"                                reused address make a new N), stack#T, tls#T (thread\n"
"                                T's stack, its TLS block), ? (none of these).  The\n"
"                                executable's symbols: --binary APP, else the file the\n"
"                                skeleton was made from\n"
"                                --roi FUNC (repeatable): only the accesses made while\n"
"                                FUNC runs (callees included, recursion once; from its\n"
"                                first instruction to its return);  --roi-markers: only\n"
"                                those between the return of skel_roi_begin(name) and\n"
"                                the call of skel_roi_end() (replay/skel_roi.h: weak\n"
"                                no-ops, the program runs the same without skel).\n"
"                                Counts, --stats and --sim see the regions only\n"
"                                run and trace take these options as well\n"
"                                A damaged VALUES file is refused (status 4, nothing\n"
"                                written); --salvage replays what precedes the damage.\n"
"                                A file cut short is replayed up to the cut, status 4\n"
"  skel run SKEL.c [-o TRACE] [--format F] [--stats] -- APP [ARGS...]\n"
"                                online: run APP under the recorder and replay in\n"
"                                parallel (same trace as record + replay); APP's\n"
"                                stdin/stdout/stderr pass through; exits with APP's\n"
"                                status (128+N when killed by signal N)\n"
"  skel trace [-o TRACE] [--format F] [--stats] [--whole-process] -- APP [ARGS...]\n"
"                                gen + run in one step; the skeleton is cached by\n"
"                                APP's identity in $XDG_CACHE_HOME/skel (~/.cache/skel)\n"
"  skel check [--whole-process] [SKEL.c] -- APP [ARGS...]\n"
"                                run APP once under valgrind lackey and the recorder,\n"
"                                replay, and compare access by access (exit 0 only\n"
"                                on a full match); with a whole-process skeleton,\n"
"                                every covered object, and the others are named\n"
"  skel check --accuracy [--stats] [--omega W] [--chunk C] [SKEL.c] -- APP [ARGS...]\n"
"                                the same run, an approximate skeleton's (SKEL.c, or\n"
"                                made with --omega W --chunk C) accuracy at chunk C:\n"
"                                MA (accesses traced exactly) and AIA (exactly or\n"
"                                at a fulcrum's address), per block against lackey,\n"
"                                blocks weighted by executions (docs/bid.md);\n"
"                                --stats: per routine too.  Exit 0 unless an access\n"
"                                marked exact is wrong or the replay failed\n"
"\n"
"Looking inside the analysis:\n"
"  skel cfg APP [FUNC] [--dot]   routines, blocks, instructions and their memory\n"
"                                accesses, edges; Graphviz with --dot (needs FUNC)\n"
"  skel loops APP [FUNC]         the loop nesting forest, indented\n"
"  skel analyze APP [FUNC] [--json]\n"
"                                per loop its counter and IVs, per access its\n"
"                                address in counters and leaves (or direct), per\n"
"                                branch computed or recorded, the probes, totals\n"
"  skel summary APP              one line: routines, blocks, instructions,\n"
"                                memory instructions, loops, irreducible loops,\n"
"                                unresolved indirect jumps, partial routines\n"
"  skel deps APP                 the objects the dynamic loader maps for APP, in\n"
"                                load order, one per line: soname ('-' if none),\n"
"                                path and identity (build-id:HEX or hash:HEX),\n"
"                                tab-separated.  Found as ld.so finds them, without\n"
"                                running anything: DT_RPATH, LD_LIBRARY_PATH,\n"
"                                DT_RUNPATH, /etc/ld.so.cache, the default\n"
"                                directories, $ORIGIN, PT_INTERP; a library not\n"
"                                found is an error naming the object that needs it\n"
"\n"
"Options:\n"
"  -h, --help                    this text\n"
"  --version                     the version\n"
"\n"
"APP is found as a shell finds it: a name without '/' in $PATH (so `skel trace\n"
"-- ls` works), a name with '/' as it is.  Temporary files go to $TMPDIR (/tmp\n"
"by default); on SIGINT, SIGTERM or SIGHUP skel stops what it started, removes\n"
"them and dies by that signal.\n"
"\n"
"Scope: the main executable's code by default; accesses made inside shared\n"
"libraries are not traced.  With --whole-process (experimental), the shared\n"
"objects of APP's DT_NEEDED closure too, from the moment the recorder is in\n"
"place (after the loader and the constructors of libraries initialized before\n"
"it); outside stay the loader (ld.so: lazy binding), objects loaded by dlopen,\n"
"and the kernel's writes during system calls (lackey does not show those\n"
"either); replay and check name every object not covered.\n"
"APP must be an x86-64 ELF executable (PIE or not, stripped or not);\n"
"gen, cfg, loops, analyze, summary and deps also take a shared library.\n";

typedef struct view_args {
	const char *app, *func;
	bool dot, json;
} view_args;

static int parse_view(int argc, char **argv, view_args *a)
{
	memset(a, 0, sizeof *a);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dot"))
			a->dot = true;
		else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return skel_usage_error("unknown option"), -1;
		else if (!a->app)
			a->app = argv[i];
		else if (!a->func)
			a->func = argv[i];
		else
			return skel_usage_error("too many arguments"), -1;
	}
	if (!a->app)
		return skel_usage_error("missing APP"), -1;
	return 0;
}

static int load(program *p, const char *path)
{
	char err[ERR_LEN];
	if (program_load(p, path, err) < 0)
		return skel_fail(path, err);
	return 0;
}

enum view { V_CFG, V_LOOPS, V_SUMMARY, V_ANALYZE };

typedef struct totals {
	uint64_t mem, probes, inner, direct, classes, accesses;
	uint32_t routines, modeled;
} totals;

static void analyze_one(const program *p, const routine *r, bool json, bool first, totals *t)
{
	analysis a;
	iv_analyze(&a, p, r, 0);
	if (json)
		iv_print_json(stdout, &a, first);
	else
		iv_print(stdout, &a);
	t->mem += a.nmem_insns;
	t->probes += a.nprobes;
	t->inner += a.ninner_probes;
	t->direct += a.ndirect;
	t->classes += a.ncls;
	t->accesses += a.nacc;
	t->routines++;
	t->modeled += a.modeled;
	iv_free(&a);
}

static void analyze(const program *p, const routine *only, bool json)
{
	totals t = {0};
	if (json)
		fputs("{\"routines\":[\n", stdout);
	for (uint32_t i = 0; i < p->nroutines; i++)
		if (!only || only == &p->routines[i])
			analyze_one(p, &p->routines[i], json, t.routines == 0, &t);
	double ratio = t.mem ? (double)t.probes / (double)t.mem : 0.0;
	if (json) {
		printf("],\n\"totals\":{\"routines\":%u,\"modeled\":%u,\"memory_instructions\":%llu,"
		       "\"accesses\":%llu,\"classes\":%llu,\"direct\":%llu,\"probes\":%llu,"
		       "\"inner_probes\":%llu,\"static_ratio\":%.4f}}\n",
		       t.routines, t.modeled, (unsigned long long)t.mem, (unsigned long long)t.accesses,
		       (unsigned long long)t.classes, (unsigned long long)t.direct,
		       (unsigned long long)t.probes, (unsigned long long)t.inner, ratio);
		return;
	}
	printf("total: %u routines (%u modeled), %llu memory instructions, %llu accesses, "
	       "%llu classes, %llu direct, %llu probes (%llu in innermost loops), static ratio %.3f\n",
	       t.routines, t.modeled, (unsigned long long)t.mem, (unsigned long long)t.accesses,
	       (unsigned long long)t.classes, (unsigned long long)t.direct,
	       (unsigned long long)t.probes, (unsigned long long)t.inner, ratio);
}

static int cmd_view(int argc, char **argv, enum view v)
{
	view_args a;
	program p;
	if (parse_view(argc, argv, &a) < 0)
		return 2;
	if (a.dot && !a.func)
		return skel_usage_error("--dot needs FUNC");
	char app_path[PATH_MAX];
	if (skel_find_app(a.app, app_path) < 0)
		return 1;
	a.app = app_path;
	if (load(&p, a.app))
		return 1;
	int rc = 0;
	if (v == V_ANALYZE) {
		routine *r = a.func ? program_routine_named(&p, a.func) : NULL;
		if (a.func && !r) {
			char msg[ERR_LEN];
			snprintf(msg, sizeof msg, "no routine named '%s'", a.func);
			rc = skel_fail(a.app, msg);
		} else {
			analyze(&p, r, a.json);
		}
	} else if (a.func) {
		routine *r = program_routine_named(&p, a.func);
		if (!r) {
			char msg[ERR_LEN];
			snprintf(msg, sizeof msg, "no routine named '%s'", a.func);
			rc = skel_fail(a.app, msg);
		} else if (v == V_CFG) {
			print_cfg(stdout, &p, r, a.dot);
		} else {
			print_loops(stdout, &p, r);
		}
	} else {
		for (uint32_t i = 0; i < p.nroutines && v != V_SUMMARY; i++) {
			if (v == V_CFG)
				print_cfg(stdout, &p, &p.routines[i], false);
			else if (p.routines[i].nloops)
				print_loops(stdout, &p, &p.routines[i]);
		}
		print_summary(stdout, &p);
	}
	program_free(&p);
	return rc;
}

static int cmd_deps(int argc, char **argv)
{
	if (argc < 2)
		return skel_usage_error("deps: missing APP");
	if (argc > 2 || argv[1][0] == '-')
		return skel_usage_error(argv[argc - 1][0] == '-' ? "deps: unknown option"
					: "deps: too many arguments");
	char app[PATH_MAX], err[ERR_LEN];
	if (skel_find_app(argv[1], app) < 0)
		return 1;
	deps_env env = { .ld_library_path = getenv("LD_LIBRARY_PATH") };
	deps_list d;
	if (deps_resolve(&d, app, &env, err) < 0) {
		fprintf(stderr, "skel: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < d.n; i++) {
		const deps_object *o = &d.objs[i];
		printf("%s\t%s\t%s:%s\n", o->soname ? o->soname : "-", o->path,
		       o->has_build_id ? "build-id" : "hash", o->id_hex);
	}
	for (size_t i = 0; i < d.nmissing; i++)
		fprintf(stderr, "skel: %s: %s: not found (needed by %s; searched its DT_RPATH, "
			"LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache and the default "
			"directories)\n", app, d.missing[i].name, d.objs[d.missing[i].needed_by].path);
	int rc = d.nmissing ? 1 : 0;
	deps_free(&d);
	return rc;
}

/* `skel COMMAND --help` (before any `--`): the usage too */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") ||
		    (i == 1 && !strcmp(argv[i], "help")))
			return true;
	return false;
}

static int command(int argc, char **argv)
{
	if (argc < 2)
		return skel_usage_error("missing COMMAND");
	const char *cmd = argv[1];
	if (wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("skel %s\n", SKEL_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "cfg"))
		return cmd_view(argc - 1, argv + 1, V_CFG);
	if (!strcmp(cmd, "loops"))
		return cmd_view(argc - 1, argv + 1, V_LOOPS);
	if (!strcmp(cmd, "gen"))
		return cmd_gen(argc - 1, argv + 1);
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "replay"))
		return cmd_replay(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "trace"))
		return cmd_trace(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "analyze"))
		return cmd_view(argc - 1, argv + 1, V_ANALYZE);
	if (!strcmp(cmd, "summary"))
		return cmd_view(argc - 1, argv + 1, V_SUMMARY);
	if (!strcmp(cmd, "deps"))
		return cmd_deps(argc - 1, argv + 1);
	char msg[128];
	snprintf(msg, sizeof msg, "unknown command '%s'", cmd);
	return skel_usage_error(msg);
}

int main(int argc, char **argv)
{
	child_signals_init();
	return child_exit(command(argc, argv));
}
