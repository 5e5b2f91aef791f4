/* run.c — skel gen, record and replay, and what they share: finding the
 * runtime, compiling a skeleton (cached by content hash), running the
 * program under the recorder. */
#include "driver/run.h"
#include "analyzer/analyzer.h"
#include "analyzer/util.h"
#include "skelgen/skelgen.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "skel: FILE: what is wrong" on stderr; returns the exit status 1. */
int skel_fail(const char *file, const char *msg)
{
	fprintf(stderr, "skel: %s: %s\n", file, msg);
	return 1;
}

/* A usage mistake: the message and a pointer to --help; exit status 2. */
int skel_usage_error(const char *msg)
{
	fprintf(stderr, "skel: %s\nTry 'skel --help'.\n", msg);
	return 2;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The source tree skel runs from: $SKEL_HOME, else the first ancestor of
 * the executable's directory holding replay/skel_rt.h. */
const char *skel_home(void)
{
	static char home[PATH_MAX];
	if (home[0])
		return home;
	const char *env = getenv("SKEL_HOME");
	if (env) {
		snprintf(home, sizeof home, "%s", env);
		return home;
	}
	ssize_t n = readlink("/proc/self/exe", home, sizeof home - 1);
	if (n <= 0) {
		strcpy(home, ".");
		return home;
	}
	home[n] = 0;
	for (;;) {
		char *slash = strrchr(home, '/');
		if (!slash || slash == home) {
			strcpy(home, ".");
			return home;
		}
		*slash = 0;
		char rt_h[PATH_MAX + 32];
		snprintf(rt_h, sizeof rt_h, "%s/replay/skel_rt.h", home);
		if (exists(rt_h))
			return home;
	}
}

static bool executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* An empty element of $PATH is the current directory, as in a shell;
 * without $PATH, the system's default path (what execvp searches). */
int skel_find_app(const char *app, char path[PATH_MAX])
{
	if (strchr(app, '/')) {
		if (strlen(app) >= PATH_MAX)
			return skel_fail(app, strerror(ENAMETOOLONG)), -1;
		strcpy(path, app);
		return 0;
	}
	char defpath[256] = "/bin:/usr/bin";
	const char *dirs = getenv("PATH");
	if (!dirs) {
		confstr(_CS_PATH, defpath, sizeof defpath);
		dirs = defpath;
	}
	while (*app) {
		size_t n = strcspn(dirs, ":");
		if (n == 0)
			snprintf(path, PATH_MAX, "./%s", app);
		else
			snprintf(path, PATH_MAX, "%.*s/%s", (int)n, dirs, app);
		if (executable_file(path))
			return 0;
		if (!dirs[n])
			break;
		dirs += n + 1;
	}
	if (*app && exists(app))
		fprintf(stderr, "skel: %s: not found in PATH (./%s for the file in this "
			"directory)\n", app, app);
	else
		skel_fail(app, "not found in PATH");
	return -1;
}

char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	VEC(char) v = {0};
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		for (size_t i = 0; i < n; i++)
			vec_push(v, buf[i]);
	fclose(f);
	vec_push(v, 0);
	if (len)
		*len = v.n - 1;
	return v.a;
}

/* The identity a skeleton was generated for (its sk_binary_id). */
int skeleton_binary_id(const char *skel_path, const char *text, char *id, size_t len)
{
	const char *key = "const char sk_binary_id[] = \"";
	const char *p = strstr(text, key);
	if (!p)
		return -1;
	p += strlen(key);
	const char *q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= len)
		return -1;
	memcpy(id, p, (size_t)(q - p));
	id[q - p] = 0;
	(void)skel_path;
	return 0;
}

static const char *cache_dir(void);
/* Indirect-jump targets a replay found outside the skeleton are noted in
 * the cache beside the binary's identity; every later analysis of that
 * binary follows them (so the second run is never a dead end). */
static void targets_path(const char *id_hex, char *out, size_t n)
{
	snprintf(out, n, "%s/%s.targets", cache_dir(), id_hex);
}

static const char *cache_dir(void)
{
	static char dir[PATH_MAX];
	const char *x = getenv("XDG_CACHE_HOME");
	const char *h = getenv("HOME");
	if (x && *x)
		snprintf(dir, sizeof dir, "%s/skel", x);
	else
		snprintf(dir, sizeof dir, "%s/.cache/skel", h && *h ? h : "/tmp");
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", dir);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
	return dir;
}

int run_wait(char **argv, const char *out_path)
{
	pid_t pid = child_fork(false);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out_path && !freopen(out_path, "w", stdout))
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "skel: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return child_wait(pid);
}

char *compile_skeleton(const char *skel_path)
{
	size_t len;
	char *text = read_text(skel_path, &len);
	if (!text) {
		skel_fail(skel_path, strerror(errno));
		return NULL;
	}
	char id[160];
	if (skeleton_binary_id(skel_path, text, id, sizeof id) < 0) {
		skel_fail(skel_path, "not a skel skeleton (no sk_binary_id)");
		free(text);
		return NULL;
	}
	uint64_t h = skel_fnv1a64(SKEL_FNV1A64_INIT, text, len);
	h = skel_fnv1a64(h, SKEL_VERSION, strlen(SKEL_VERSION));
	free(text);
	const char *home = skel_home();
	char rt[PATH_MAX];
	snprintf(rt, sizeof rt, "%s/replay/replayer.c", home);
	size_t rlen;
	char *rtext = read_text(rt, &rlen);
	if (!rtext) {
		skel_fail(rt, "replay runtime not found (set SKEL_HOME to skel's source tree)");
		return NULL;
	}
	h = skel_fnv1a64(h, rtext, rlen);
	free(rtext);
	/* the runtime header and the trace reader are compiled in too */
	static const char *const also[] = { "replay/skel_rt.h", "replay/vtrace.c", "replay/format.h" };
	for (size_t i = 0; i < sizeof also / sizeof *also; i++) {
		snprintf(rt, sizeof rt, "%s/%s", home, also[i]);
		if ((rtext = read_text(rt, &rlen))) {
			h = skel_fnv1a64(h, rtext, rlen);
			free(rtext);
		}
	}
	snprintf(rt, sizeof rt, "%s/replay/replayer.c", home);

	char *out = xmalloc(PATH_MAX);
	snprintf(out, PATH_MAX, "%s/replay-%016" PRIx64, cache_dir(), h);
	if (exists(out))
		return out;
	char tmp[PATH_MAX + 16], inc1[PATH_MAX + 8], inc2[PATH_MAX + 8], vt[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s.%d", out, (int)getpid());
	snprintf(inc1, sizeof inc1, "-I%s/replay", home);
	snprintf(inc2, sizeof inc2, "-I%s", home);
	snprintf(vt, sizeof vt, "%s/replay/vtrace.c", home);
	char *cc = getenv("CC") ? getenv("CC") : "gcc";
	char *argv[] = { cc, "-O2", "-Wall", "-Werror", "-std=gnu11",
			 inc1, inc2, "-o", tmp, (char *)skel_path, rt, vt, "-lpthread", NULL };
	tmp_track(tmp);
	int rc = run_wait(argv, NULL);
	if (rc != 0 || rename(tmp, out) != 0) {
		skel_fail(skel_path, "the skeleton does not compile (see the compiler's messages above)");
		tmp_remove(tmp);
		free(out);
		return NULL;
	}
	tmp_untrack(tmp);
	return out;
}

/* ---------------------------------------------------------------- gen */

int load_analyzed(program *p, const char *app, const char *why, char err[ERR_LEN])
{
	binary b;
	if (elf_open(&b, app, err) < 0)
		return -1;
	char path[PATH_MAX];
	targets_path(b.id_hex, path, sizeof path);
	elf_close(&b);
	jump_hint *h = NULL;
	char herr[ERR_LEN];
	long n = access(path, F_OK) == 0 ? hints_read(path, &h, herr) : 0;
	if (n < 0) {
		fprintf(stderr, "skel: %s: %s (ignored)\n", path, herr);
		n = 0;
	} else if (n > 0) {
		fprintf(stderr, "skel: %s: following %ld indirect-jump target%s seen at run time (%s)\n",
			why, n, n == 1 ? "" : "s", path);
	}
	int rc = program_load_hints(p, app, h, (size_t)n, err);
	free(h);
	return rc;
}

int cmd_gen(int argc, char **argv)
{
	const char *app = NULL, *out = NULL, *patch_out = NULL;
	char app_path[PATH_MAX];
	skel_opts o = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--patch") && i + 1 < argc)
			patch_out = argv[++i];
		else if (!strcmp(argv[i], "--all-accesses"))
			o.all_accesses = true;
		else if (argv[i][0] == '-')
			return skel_usage_error("gen: unknown option");
		else if (!app)
			app = argv[i];
		else
			return skel_usage_error("gen: too many arguments");
	}
	if (!app)
		return skel_usage_error("gen: missing APP");
	if (skel_find_app(app, app_path) < 0)
		return 1;
	app = app_path;
	o.app = app;
	program p;
	char err[ERR_LEN];
	if (load_analyzed(&p, app, "gen", err) < 0)
		return skel_fail(app, err);
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		program_free(&p);
		return skel_fail(out, strerror(errno));
	}
	patch pt;
	skel_stats st;
	int rc = skel_generate(f, &p, &o, &pt, &st, err);
	if (out)
		fclose(f);
	if (rc == 0 && patch_out) {
		FILE *pf = fopen(patch_out, "w");
		if (!pf)
			rc = skel_fail(patch_out, strerror(errno));
		else {
			patch_write(pf, &pt);
			fclose(pf);
		}
	} else if (rc < 0) {
		rc = skel_fail(app, err);
	}
	if (rc == 0)
		fprintf(stderr, "skel: gen: %u routines, %" PRIu64 " memory instructions, %" PRIu64
			" probes (%" PRIu64 " direct accesses), static ratio %.3f\n", st.routines,
			st.mem_insns, st.probes, st.direct,
			st.mem_insns ? (double)st.probes / (double)st.mem_insns : 0.0);
	if (rc == 0 && st.shared_insns)
		fprintf(stderr, "skel: gen: warning: %u instructions belong to more than one "
			"routine; a replay through them may desynchronise (reported, never silent)\n",
			st.shared_insns);
	if (rc == 0 && st.inexact)
		fprintf(stderr, "skel: gen: warning: %u accesses (gather/scatter, bt mem,reg or "
			"xlat, first at pc 0x%" PRIx64 ") have no exact address form; they are "
			"traced at their base address, which skel check will show as a "
			"difference\n", st.inexact, st.first_inexact);
	patch_free(&pt);
	program_free(&p);
	return rc;
}

/* ------------------------------------------------------------- record */

/* Refuses a skeleton made for another binary. */
static int check_identity(const char *skel_path, const char *text, const char *app)
{
	char want[160];
	if (skeleton_binary_id(skel_path, text, want, sizeof want) < 0)
		return skel_fail(skel_path, "not a skel skeleton (no sk_binary_id)");
	binary b;
	char err[ERR_LEN];
	if (elf_open(&b, app, err) < 0)
		return skel_fail(app, err);
	int rc = 0;
	if (strcmp(b.id_hex, want)) {
		char msg[ERR_LEN + 200];
		snprintf(msg, sizeof msg, "this binary (%s) is not the one %s was generated for (%s)",
			 b.id_hex, skel_path, want);
		fprintf(stderr, "skel: %s: %s\n", app, msg);
		rc = 1;
	}
	elf_close(&b);
	return rc;
}

int record_run(const char *skel_path, const char *values, const char *app_path,
	       char **app_argv, const char *valgrind_log)
{
	char patch_path[PATH_MAX];
	pid_t pid = record_start(skel_path, values, app_path, app_argv, valgrind_log, patch_path);
	if (pid < 0)
		return -1;
	int rc = child_wait(pid);
	tmp_remove(patch_path);
	return rc;
}

pid_t record_start(const char *skel_path, const char *values, const char *app_path,
		   char **app_argv, const char *valgrind_log, char patch_out[PATH_MAX])
{
	size_t len;
	char *text = read_text(skel_path, &len);
	if (!text) {
		skel_fail(skel_path, strerror(errno));
		return -1;
	}
	if (check_identity(skel_path, text, app_path)) {
		free(text);
		return -1;
	}
	char *ptext = skel_extract_patch(text);
	free(text);
	if (!ptext) {
		skel_fail(skel_path, "no embedded patch (SKEL-PATCH-BEGIN missing)");
		return -1;
	}
	char *patch_path = patch_out;
	snprintf(patch_path, PATH_MAX, "%s/skel-patch-XXXXXX", tmp_dir());
	int fd = tmp_mkstemp(patch_path);
	if (fd < 0 || write(fd, ptext, strlen(ptext)) != (ssize_t)strlen(ptext)) {
		skel_fail(patch_path, fd < 0 ? strerror(errno) : "cannot write the patch");
		free(ptext);
		if (fd >= 0) {
			close(fd);
			tmp_remove(patch_path);
		}
		return -1;
	}
	close(fd);
	free(ptext);
	char lib[PATH_MAX];
	snprintf(lib, sizeof lib, "%s/build/libskelrec.so", skel_home());
	if (!exists(lib)) {
		skel_fail(lib, "recorder library not built (run make)");
		tmp_remove(patch_path);
		return -1;
	}
	struct stat vst;	/* skel run's FIFO stays */
	if (stat(values, &vst) == 0 && S_ISREG(vst.st_mode))
		unlink(values);
	/* the terminal is the program's while it runs (child.c): it may
	 * read it, and a ^C there is for it */
	pid_t pid = child_fork(true);
	if (pid == 0) {
		setenv("LD_PRELOAD", lib, 1);
		setenv("SKEL_PATCH", patch_path, 1);
		setenv("SKEL_VALUES", values, 1);
		if (valgrind_log) {
			char logopt[PATH_MAX + 16];
			snprintf(logopt, sizeof logopt, "--log-file=%s", valgrind_log);
			VEC(char *) av = {0};
			/* the recorder's guard-page flush and int3 sites read registers from the
			 * fault's context: valgrind must keep them all exact */
			char *pre[] = { "valgrind", "--tool=lackey", "--trace-mem=yes",
					"--vex-iropt-register-updates=allregs-at-each-insn", logopt };
			/* the file found; valgrind gives its client that path
			 * as argv[0] (it has no way to pass another) */
			for (size_t i = 0; i < 5; i++)
				vec_push(av, pre[i]);
			vec_push(av, (char *)app_path);
			for (char **a = app_argv + 1; *a; a++)
				vec_push(av, *a);
			vec_push(av, (char *)NULL);
			execvp("valgrind", av.a);
		} else {
			execv(app_path, app_argv);
		}
		fprintf(stderr, "skel: %s: %s\n", valgrind_log ? "valgrind" : app_path, strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		skel_fail(app_argv[0], strerror(errno));
		tmp_remove(patch_path);
	}
	return pid;
}

/* Splits "SKEL -o VALUES -- APP ARGS" style arguments: the app argv starts
 * after "--". */
static char **after_dashes(int argc, char **argv, int *nbefore)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			*nbefore = i;
			return i + 1 < argc ? argv + i + 1 : NULL;
		}
	*nbefore = argc;
	return NULL;
}

int cmd_record(int argc, char **argv)
{
	int n;
	char **app = after_dashes(argc, argv, &n);
	const char *skel = NULL, *out = NULL;
	for (int i = 1; i < n; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < n)
			out = argv[++i];
		else if (argv[i][0] == '-')
			return skel_usage_error("record: unknown option");
		else if (!skel)
			skel = argv[i];
		else
			return skel_usage_error("record: too many arguments before --");
	}
	if (!skel || !out || !app)
		return skel_usage_error("record: usage: skel record SKEL -o VALUES -- APP [ARGS...]");
	char app_path[PATH_MAX];
	if (skel_find_app(app[0], app_path) < 0)
		return 1;
	int rc = record_run(skel, out, app_path, app, NULL);
	if (rc < 0)
		return 1;
	if (rc >= 128)
		fprintf(stderr, "skel: %s: killed by signal %d; the values recorded up to then are in %s\n",
			app[0], rc - 128, out);
	return rc;
}

/* ------------------------------------------------------------- replay */

bool trace_format_ok(const char *f)
{
	static const char *const names[] = { "text", "bin", "lackey", "din", "csv", "count" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(f, names[i]))
			return true;
	return false;
}

int cmd_replay(int argc, char **argv)
{
	const char *skel = NULL, *values = NULL, *out = "-", *format = "text";
	bool stats = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			format = argv[++i];
		else if (!strcmp(argv[i], "--stats"))
			stats = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return skel_usage_error("replay: unknown option");
		else if (!skel)
			skel = argv[i];
		else if (!values)
			values = argv[i];
		else
			return skel_usage_error("replay: too many arguments");
	}
	if (!skel || !values)
		return skel_usage_error("replay: usage: skel replay SKEL VALUES [-o TRACE] [--format F] [--stats]");
	if (!trace_format_ok(format))
		return skel_usage_error("replay: --format must be text, bin, lackey, din, csv or count");
	if (!exists(values))
		return skel_fail(values, strerror(ENOENT));
	char *bin = compile_skeleton(skel);
	if (!bin)
		return 1;
	char *av[] = { bin, (char *)values, "-o", (char *)out, "--format", (char *)format,
		       stats ? "--stats" : NULL, NULL };
	int rc = run_wait(av, NULL);
	free(bin);
	return rc;
}
