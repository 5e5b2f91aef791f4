/* skel — the command-line driver.  Each subcommand parses its arguments,
 * calls the stages and prints; errors are "skel: FILE: what is wrong". */
#include "analyzer/analyzer.h"
#include "ivres/ivres.h"
#include "driver/run.h"
#include "skelgen/skelgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			return skel_unknown_option(argv[0], argv[i]), -1;
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
	uint64_t mem, probes, inner, direct, classes, accesses, gen;
	uint32_t routines, modeled;
} totals;

/* The pcs of the probes skel gen's patch has (the values the recorder
 * stores, control words aside, as skel gen counts them), sorted. */
typedef struct gen_pcs {
	uint64_t *pc;
	size_t n;
} gen_pcs;

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

static void gen_pcs_of(const patch *pt, gen_pcs *g)
{
	g->n = 0;
	g->pc = malloc((pt->nprobes ? pt->nprobes : 1) * sizeof *g->pc);
	if (!g->pc)
		return;
	for (size_t k = 0; k < pt->nprobes; k++) {
		patch_what w = pt->probes[k].what;
		if (w != PATCH_WORD && w != PATCH_SWORD && w != PATCH_VMMARK)
			g->pc[g->n++] = pt->probes[k].pc;
	}
	qsort(g->pc, g->n, sizeof *g->pc, cmp_u64);
}

/* Those at r's instructions: the analysis's probes after gen's planning
 * -- loops sliced away, loop exits recorded once, values computed or
 * merged at joins, outcomes in the byte's word.  A probe at an
 * instruction several routines share counts in each. */
static uint32_t gen_probes(const gen_pcs *g, const routine *r)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < r->ninsn; k++) {
		uint64_t pc = r->insns[k].addr;
		size_t lo = 0, hi = g->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (g->pc[mid] < pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < g->n && g->pc[lo] == pc; lo++)
			n++;
	}
	return n;
}

static void analyze_one(const program *p, const routine *r, const gen_pcs *pt, bool json,
			bool first, totals *t)
{
	analysis a;
	iv_analyze(&a, p, r, 0);
	uint32_t gen = pt ? gen_probes(pt, r) : 0;
	if (json) {
		iv_print_json(stdout, &a, first);
		if (pt)		/* inside the routine's object, after its totals */
			printf(",\"gen_probes\":%u", gen);
		fputc('}', stdout);
	} else {
		iv_print(stdout, &a);
		if (pt)
			printf("  skel gen: %u probes (its patch's, after slicing, loop exits, merges)\n",
			       gen);
	}
	t->gen += gen;
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
	/* skel gen's patch, for the probes it keeps (its skeleton dropped) */
	patch pt = {0};
	skel_stats st;
	skel_opts o = { .omega = 1, .chunk = 64 };
	char err[ERR_LEN];
	FILE *null = fopen("/dev/null", "w");
	bool gen = null && skel_generate(null, p, &o, &pt, &st, err) == 0;
	if (null)
		fclose(null);
	const char *why = null ? err : "cannot open /dev/null";
	gen_pcs pcs = { 0 };
	if (gen) {
		gen_pcs_of(&pt, &pcs);
		gen = pcs.pc != NULL;
		why = "out of memory";
	}
	patch_free(&pt);
	if (!gen)
		fprintf(stderr, "skel: analyze: skel gen's probes not known: %s\n", why);
	if (json)
		fputs("{\"routines\":[\n", stdout);
	for (uint32_t i = 0; i < p->nroutines; i++)
		if (!only || only == &p->routines[i])
			analyze_one(p, &p->routines[i], gen ? &pcs : NULL, json, t.routines == 0, &t);
	if (gen && !only)	/* the patch's, each once (shared code: the sum counts more) */
		t.gen = pcs.n;
	free(pcs.pc);
	double ratio = t.mem ? (double)t.probes / (double)t.mem : 0.0;
	double gratio = t.mem ? (double)t.gen / (double)t.mem : 0.0;
	if (json) {
		printf("],\n\"totals\":{\"routines\":%u,\"modeled\":%u,\"memory_instructions\":%llu,"
		       "\"accesses\":%llu,\"classes\":%llu,\"direct\":%llu,\"probes\":%llu,"
		       "\"inner_probes\":%llu,\"static_ratio\":%.4f",
		       t.routines, t.modeled, (unsigned long long)t.mem, (unsigned long long)t.accesses,
		       (unsigned long long)t.classes, (unsigned long long)t.direct,
		       (unsigned long long)t.probes, (unsigned long long)t.inner, ratio);
		if (gen)
			printf(",\"gen_probes\":%llu,\"gen_static_ratio\":%.4f",
			       (unsigned long long)t.gen, gratio);
		fputs("}}\n", stdout);
		return;
	}
	printf("total: %u routines (%u modeled), %llu memory instructions, %llu accesses, "
	       "%llu classes, %llu direct, %llu probes (%llu in innermost loops), static ratio %.3f\n",
	       t.routines, t.modeled, (unsigned long long)t.mem, (unsigned long long)t.accesses,
	       (unsigned long long)t.classes, (unsigned long long)t.direct,
	       (unsigned long long)t.probes, (unsigned long long)t.inner, ratio);
	if (gen)
		printf("skel gen: %llu probes, static ratio %.3f (its patch: after slicing, loop "
		       "exits recorded once, values computed or merged at joins)\n",
		       (unsigned long long)t.gen, gratio);
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
	if (argv[1][0] == '-')
		return skel_unknown_option("deps", argv[1]);
	if (argc > 2)
		return skel_usage_error("deps: too many arguments");
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

static int command(int argc, char **argv)
{
	if (argc < 2)
		return skel_usage_error("missing COMMAND");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		if (argc > 2 && help_command(argv[2]) == 0)	/* skel help CMD */
			return 0;
		help_all(stdout);
		return 0;
	}
	if (help_asked(argc - 1, argv + 1) && help_command(cmd) == 0)
		return 0;
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
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
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
