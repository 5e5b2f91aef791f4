/* run.c — skel gen, record and replay, and what they share: finding the
 * runtime, compiling a skeleton (cached by content hash), running the
 * program under the recorder. */
#include "driver/run.h"
#include "analyzer/analyzer.h"
#include "analyzer/util.h"
#include "replay/format.h"
#include "skelgen/skelgen.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
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

bool skel_scope_default(void)
{
	const char *e = getenv("SKEL_SCOPE");
	return !(e && !strcmp(e, "main"));
}

int skel_scope_arg(const char *arg, bool *whole)
{
	if (!strcmp(arg, "--whole-process") || !strcmp(arg, "--main-only")) {
		*whole = arg[2] == 'w';
		return 1;
	}
	return 0;
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
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* the size known: one buffer and large reads (libc's module
	 * skeleton is 30 MB; a byte at a time cost each replay 50 ms) */
	struct stat st;
	size_t cap = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
	char *a = xmalloc(cap);
	size_t n = 0;
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			a = xrealloc(a, cap);
		}
		ssize_t got = read(fd, a + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			free(a);
			close(fd);
			errno = e;
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	a[n] = 0;
	if (len)
		*len = n;
	return a;
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

/* Indirect-jump targets a replay found outside the skeleton are noted in
 * the cache beside the binary's identity; every later analysis of that
 * binary follows them (so the second run is never a dead end). */
static void targets_path(const char *id_hex, char *out, size_t n)
{
	snprintf(out, n, "%s/%s.targets", cache_dir(), id_hex);
}

const char *cache_dir(void)
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
	return run_wait_bounded(argv, out_path, 0);
}

int run_wait_bounded(char **argv, const char *out_path, unsigned long long max_file)
{
	pid_t pid = child_fork(false);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (out_path && !freopen(out_path, "w", stdout))
			_exit(127);
		if (max_file) {
			struct rlimit rl = { (rlim_t)max_file, (rlim_t)max_file };
			setrlimit(RLIMIT_FSIZE, &rl);
			signal(SIGXFSZ, SIG_DFL);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "skel: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return child_wait(pid);
}

/* ------------------------------------------------- compiling a skeleton
 *
 * gcc -O2 takes 10-15 s over the 2.5 MB skeleton of a program like grep,
 * spread evenly over its routines and passes.  So the skeleton is compiled
 * in parts (skelgen marks them, see skelgen.h): hot parts, the small and
 * loop-bearing routines where a replay spends its time, optimized; cold
 * parts at -O0, about four times cheaper per line.  The parts go into
 * about one unit per processor, compiled side by side; the replay runtime
 * is compiled once and cached by its own content hash.  SKEL_OPT=N
 * compiles every unit at -ON instead. */

/* Hot units: -O1 and global CSE, which hoists the sink's counters out of
 * loops; the samples replay as fast as at -O2 (stencil, matmul, csr,
 * tree, bubble, recursion, hash), for two thirds of -O2's compile time. */
static char *const hot_flags[] = { "-O1", "-fgcse" };
/* per byte of skeleton, a hot unit costs gcc about four times a cold one */
#define HOT_COST 4

typedef struct part {
	const char *text;
	size_t len;
	unsigned line;          /* of its first line in the skeleton */
	bool hot;
} part;

typedef struct unit {
	bool hot;
	VEC(size_t) parts;      /* indices, in skeleton order */
	char src[PATH_MAX], obj[PATH_MAX];
} unit;

/* 1 for a SKEL-UNIT line of class hot, 0 for cold, -1 for any other. */
static int unit_mark(const char *line, const char *end)
{
	size_t m = strlen(SKEL_UNIT_MARK), left = (size_t)(end - line);
	if (left < m + 7 || memcmp(line, SKEL_UNIT_MARK, m))
		return -1;
	if (!memcmp(line + m, "hot */\n", 7))
		return 1;
	return left >= m + 8 && !memcmp(line + m, "cold */\n", 8) ? 0 : -1;
}

/* Cuts the skeleton at its SKEL-UNIT lines; *prelude is the length of the
 * text before the first.  A skeleton without them (older skel) is one hot
 * part with no prelude. */
static size_t split_parts(const char *text, size_t len, size_t *prelude, part **out)
{
	VEC(part) v = {0};
	const char *end = text + len;
	unsigned line = 1;
	*prelude = 0;
	for (const char *p = text; p < end; line++) {
		int c = unit_mark(p, end);
		if (c >= 0) {
			if (v.n)
				v.a[v.n - 1].len = (size_t)(p - v.a[v.n - 1].text);
			else
				*prelude = (size_t)(p - text);
			part x = { .text = p, .line = line, .hot = c == 1 };
			vec_push(v, x);
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	if (v.n) {
		v.a[v.n - 1].len = (size_t)(end - v.a[v.n - 1].text);
	} else {
		part x = { .text = text, .len = len, .line = 1, .hot = true };
		vec_push(v, x);
	}
	*out = v.a;
	return v.n;
}

static size_t part_cost(const part *x)
{
	return x->len * (x->hot ? HOT_COST : 1);
}

/* Deals the parts into about `jobs` units of equal cost, hot and cold in
 * units of their own, each class's parts in order. */
static size_t plan_units(const part *parts, size_t nparts, unsigned jobs, unit **out)
{
	size_t total = 0, cls[2] = { 0, 0 };
	for (size_t i = 0; i < nparts; i++) {
		total += part_cost(&parts[i]);
		cls[parts[i].hot] += part_cost(&parts[i]);
	}
	VEC(unit) v = {0};
	for (int hot = 0; hot < 2; hot++) {
		if (!cls[hot])
			continue;
		size_t k = (jobs * cls[hot] + total / 2) / total, first = v.n, done = 0;
		k = k ? k : 1;
		for (size_t j = 0; j < k; j++) {
			unit u = { .hot = hot };
			vec_push(v, u);
		}
		for (size_t i = 0; i < nparts; i++) {
			if (parts[i].hot != hot)
				continue;
			unit *u = &v.a[first + done * k / cls[hot]];
			vec_push(u->parts, i);
			done += part_cost(&parts[i]);
		}
	}
	size_t n = 0;
	for (size_t i = 0; i < v.n; i++)
		if (v.a[i].parts.n)
			v.a[n++] = v.a[i];
	*out = v.a;
	return n;
}

/* `s` as a C string literal's contents (for #line). */
static void put_c_string(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* Writes a unit's source: the prelude and its parts, each under a #line
 * naming the skeleton, so that the compiler's messages point into it. */
static int write_unit(const unit *u, const part *parts, const char *text, size_t prelude,
		      const char *skel_path)
{
	FILE *f = fopen(u->src, "w");
	if (!f)
		return -1;
	fputs("#line 1 \"", f);
	put_c_string(f, skel_path);
	fputs("\"\n", f);
	fwrite(text, 1, prelude, f);
	for (size_t k = 0; k < u->parts.n; k++) {
		const part *x = &parts[u->parts.a[k]];
		fprintf(f, "#line %u \"", x->line);
		put_c_string(f, skel_path);
		fputs("\"\n", f);
		fwrite(x->text, 1, x->len, f);
	}
	return fclose(f);
}

static pid_t spawn(char **argv)
{
	pid_t pid = child_fork(false);
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "skel: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* The runtime a replayer is linked with, and the headers it includes. */
static const char *const runtime_src[] = { "replay/replayer.c", "replay/vtrace.c", "replay/sim.c",
					   "replay/symbolize.c", "replay/report.c" };
static const char *const runtime_hdr[] = { "replay/skel_rt.h", "replay/format.h", "replay/vpack.h", "replay/sim.h",
					   "replay/symbolize.h", "replay/report.h" };
#define NRUNTIME (sizeof runtime_src / sizeof *runtime_src)
#define NRUNTIME_HDR (sizeof runtime_hdr / sizeof *runtime_hdr)

/* One replayer being built: the compilers running, the objects to link. */
typedef struct build {
	const char *cc, *home, *cache, *skel_path;
	char inc1[PATH_MAX + 16], inc2[PATH_MAX + 16];
	char dir[PATH_MAX];                     /* the units' sources and objects */
	char rt_obj[NRUNTIME][PATH_MAX];
	char rt_tmp[NRUNTIME][PATH_MAX + 16];   /* "" when cached already */
	VEC(pid_t) pids;
	VEC(char *) link;                       /* the link's argv */
	bool ok;
	bool module;                            /* a shared object's skeleton:
						   -fPIC, no runtime, -shared */
} build;

/* Skeletons compiled from now on call FETCH() (instruction fetches):
 * another replayer, cached under another hash. */
static bool with_fetches;

void compile_set_fetches(bool on)
{
	with_fetches = on;
}

static const char *fetch_define(void)
{
	return with_fetches ? "-DSK_FETCHES=1" : "-DSK_FETCHES=0";
}

/* The same for the routine hooks of --roi: another replayer. */
static bool with_roi;

void compile_set_roi(bool on)
{
	with_roi = on;
}

static const char *roi_define(void)
{
	return with_roi ? "-DSK_ROI=1" : "-DSK_ROI=0";
}

/* cc [flags] -c -o obj src, in the background. */
static void build_compile(build *b, char *const flags[2], char *obj, char *src)
{
	char *av[] = { (char *)b->cc, "-pipe", "-Wall", "-Werror", "-Wno-infinite-recursion", "-std=gnu11",
		       "-DSK_ROUTINE=",
		       (char *)fetch_define(), (char *)roi_define(), b->inc1, b->inc2, "-c", "-o",
		       obj, src, flags[0], flags[1], NULL, NULL };
	if (b->module)	/* after the flags: they may end early (NULL) */
		av[flags[0] ? flags[1] ? 17 : 16 : 15] = "-fPIC";
	pid_t pid = spawn(av);
	vec_push(b->pids, pid);
	b->ok &= pid > 0;
}

/* Waits for every compiler; b->ok stays true if all of them succeeded. */
static void build_wait(build *b)
{
	for (size_t i = 0; i < b->pids.n; i++) {
		int st;
		if (b->pids.a[i] <= 0)
			continue;
		st = child_wait(b->pids.a[i]);
		b->ok &= st == 0;
	}
	b->pids.n = 0;
}

/* Adds the runtime's files to the hash h; -1 if one is missing. */
static int hash_runtime(const char *home, uint64_t *h)
{
	char path[PATH_MAX];
	for (size_t i = 0; i < NRUNTIME + NRUNTIME_HDR; i++) {
		const char *rel = i < NRUNTIME ? runtime_src[i] : runtime_hdr[i - NRUNTIME];
		snprintf(path, sizeof path, "%s/%s", home, rel);
		size_t len;
		char *t = read_text(path, &len);
		if (!t) {
			skel_fail(path, "replay runtime not found (set SKEL_HOME to skel's source tree)");
			return -1;
		}
		*h = skel_fnv1a64(*h, t, len);
		free(t);
	}
	return 0;
}

/* The runtime's objects, rt-<rh>-NAME.o in the cache: compiled (to a
 * temporary name, renamed once all went well) unless there already. */
static void build_runtime(build *b, uint64_t rh)
{
	static char *const o2[2] = { "-O2", NULL };
	for (size_t i = 0; i < NRUNTIME; i++) {
		const char *base = strrchr(runtime_src[i], '/') + 1;
		snprintf(b->rt_obj[i], sizeof b->rt_obj[i], "%s/rt-%016" PRIx64 "-%.*s.o", b->cache, rh,
			 (int)(strlen(base) - 2), base);
		vec_push(b->link, b->rt_obj[i]);
		if (exists(b->rt_obj[i]))
			continue;
		char src[PATH_MAX];
		snprintf(src, sizeof src, "%s/%s", b->home, runtime_src[i]);
		snprintf(b->rt_tmp[i], sizeof b->rt_tmp[i], "%s.%d", b->rt_obj[i], (int)getpid());
		tmp_track(b->rt_tmp[i]);
		build_compile(b, o2, b->rt_tmp[i], src);
	}
}

/* Writes each unit's source into b->dir and starts its compiler. */
static void build_units(build *b, unit *units, size_t nunits, const part *parts,
			const char *text, size_t prelude, char *const hot[2], char *const cold[2])
{
	for (size_t i = 0; i < nunits && b->ok; i++) {
		unit *u = &units[i];
		snprintf(u->src, sizeof u->src, "%s/unit%zu.c", b->dir, i);
		snprintf(u->obj, sizeof u->obj, "%s/unit%zu.o", b->dir, i);
		tmp_track(u->src);
		tmp_track(u->obj);
		if (write_unit(u, parts, text, prelude, b->skel_path) != 0) {
			skel_fail(u->src, strerror(errno));
			b->ok = false;
			break;
		}
		build_compile(b, u->hot ? hot : cold, u->obj, u->src);
		vec_push(b->link, u->obj);
	}
}

/* The flags of hot and cold units (two each, NULL when unused). */
static void opt_flags(char *hot[2], char *cold[2], char buf[8])
{
	const char *o = getenv("SKEL_OPT");
	if (o && *o && strlen(o) < 4) {
		snprintf(buf, 8, "-O%s", o);
		hot[0] = cold[0] = buf;
		hot[1] = cold[1] = NULL;
	} else {
		hot[0] = hot_flags[0];
		hot[1] = hot_flags[1];
		cold[0] = "-O0";
		cold[1] = NULL;
	}
}

static unsigned compile_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

/* Builds the replayer `out` from the skeleton's text: units and runtime
 * compiled side by side, then linked.  Returns 0, or -1 after saying why. */
static int build_replayer(build *b, const char *text, size_t len, uint64_t rh,
			  char *const hot[2], char *const cold[2], const char *out)
{
	part *parts;
	size_t prelude, nparts = split_parts(text, len, &prelude, &parts);
	unit *units;
	size_t nunits = plan_units(parts, nparts, compile_jobs(), &units);
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof tmp, "%s.%d", out, (int)getpid());
	vec_push(b->link, (char *)b->cc);
	vec_push(b->link, "-o");
	vec_push(b->link, tmp);
	if (b->module) {
		/* its own routines bind inside it, whatever the replayer
		 * (linked -rdynamic) or other modules define */
		vec_push(b->link, "-shared");
		vec_push(b->link, "-Wl,-Bsymbolic");
	}
	tmp_track(tmp);
	snprintf(b->dir, sizeof b->dir, "%s/build-XXXXXX", b->cache);
	b->ok = tmp_mkdtemp(b->dir) != NULL;
	if (!b->ok)
		skel_fail(b->dir, strerror(errno));
	else
		build_units(b, units, nunits, parts, text, prelude, hot, cold);
	if (b->ok && !b->module)
		build_runtime(b, rh);
	build_wait(b);
	for (size_t i = 0; i < NRUNTIME; i++)
		if (b->rt_tmp[i][0] && (!b->ok || rename(b->rt_tmp[i], b->rt_obj[i]) != 0))
			tmp_remove(b->rt_tmp[i]);
		else if (b->rt_tmp[i][0])
			tmp_untrack(b->rt_tmp[i]);
	if (!b->module) {
		vec_push(b->link, "-rdynamic");	/* for the modules (SKEL_MODULES) */
		vec_push(b->link, "-lpthread");
		vec_push(b->link, "-lzstd");	/* compressed VALUES (vtrace.c) */
	}
	vec_push(b->link, NULL);
	if (b->ok)
		b->ok = run_wait(b->link.a, NULL) == 0 && rename(tmp, out) == 0;
	if (!b->ok) {
		skel_fail(b->skel_path, "the skeleton does not compile (see the compiler's messages above)");
		tmp_remove(tmp);
	} else {
		tmp_untrack(tmp);
	}
	for (size_t i = 0; i < nunits; i++) {
		if (units[i].src[0]) {
			tmp_remove(units[i].src);
			tmp_remove(units[i].obj);
		}
		free(units[i].parts.a);
	}
	if (b->dir[0])
		tmp_remove(b->dir);
	free(units);
	free(parts);
	free(b->pids.a);
	free(b->link.a);
	return b->ok ? 0 : -1;
}

static char *compile_one(const char *skel_path, bool module);

char *compile_skeleton(const char *skel_path)
{
	char *out = compile_one(skel_path, false);
	if (out && objects_compile(skel_path) < 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *compile_module(const char *skel_path)
{
	return compile_one(skel_path, true);
}

/* A module skeleton's hash (of its text after `seed`) is kept beside it,
 * in FILE.hash with the file's device, inode, size and modification
 * time: libc's skeleton is 30 MB, and reading and hashing it cost every
 * replay, run and check 60 ms.  The file changed (a new skel gen, by
 * rename: a new inode) is hashed again. */
static void hash_key(const struct stat *st, uint64_t seed, char *key, size_t n)
{
	snprintf(key, n, "%" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 ".%09ld %016" PRIx64 " ",
		 (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
		 (uint64_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec, seed);
}

static bool hash_kept(const char *path, const struct stat *st, uint64_t seed, uint64_t *h)
{
	char side[PATH_MAX + 8], key[200], line[240];
	if (snprintf(side, sizeof side, "%s.hash", path) >= (int)sizeof side)
		return false;
	hash_key(st, seed, key, sizeof key);
	FILE *f = fopen(side, "r");
	if (!f)
		return false;
	bool ok = fgets(line, sizeof line, f) && !strncmp(line, key, strlen(key)) &&
		sscanf(line + strlen(key), "%" SCNx64, h) == 1;
	fclose(f);
	return ok;
}

/* st: the file as it was before it was read; nothing kept if it changed
 * since */
static void hash_keep(const char *path, const struct stat *st, uint64_t seed, uint64_t h)
{
	struct stat now;
	char side[PATH_MAX + 8], tmp[PATH_MAX + 32], key[200], knew[200];
	hash_key(st, seed, key, sizeof key);
	if (stat(path, &now) < 0 || (hash_key(&now, seed, knew, sizeof knew), strcmp(key, knew)))
		return;
	snprintf(side, sizeof side, "%s.hash", path);
	snprintf(tmp, sizeof tmp, "%s.%d", side, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;		/* a read-only cache: hashed each time */
	bool ok = fprintf(f, "%s%016" PRIx64 "\n", key, h) > 0;
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, side) != 0)
		unlink(tmp);
}

/* The skeleton's text, checked to be one; NULL (said) if not */
static char *skeleton_text(const char *skel_path, size_t *len)
{
	char *text = read_text(skel_path, len);
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
	return text;
}

static char *compile_one(const char *skel_path, bool module)
{
	build b = { .cc = getenv("CC") ? getenv("CC") : "gcc", .home = skel_home(),
		    .cache = cache_dir(), .skel_path = skel_path, .module = module };
	snprintf(b.inc1, sizeof b.inc1, "-I%s/replay", b.home);
	snprintf(b.inc2, sizeof b.inc2, "-I%s", b.home);
	char *hot[2], *cold[2], obuf[8];
	opt_flags(hot, cold, obuf);
	/* the runtime's objects: by its sources, the compiler and skel */
	uint64_t rh = skel_fnv1a64(SKEL_FNV1A64_INIT, SKEL_VERSION, strlen(SKEL_VERSION));
	rh = skel_fnv1a64(rh, b.cc, strlen(b.cc) + 1);
	if (hash_runtime(b.home, &rh) < 0)
		return NULL;
	/* the replayer: by the skeleton, the runtime and the flags */
	size_t len = 0;
	char *text = NULL;
	uint64_t h;
	struct stat st;
	bool known = module && stat(skel_path, &st) == 0;
	if (!known || !hash_kept(skel_path, &st, rh, &h)) {
		if (!(text = skeleton_text(skel_path, &len)))
			return NULL;
		h = skel_fnv1a64(rh, text, len);
		if (known)
			hash_keep(skel_path, &st, rh, h);
	}
	for (int i = 0; i < 4; i++) {
		const char *f = i < 2 ? hot[i] : cold[i - 2];
		h = skel_fnv1a64(h, f ? f : "", f ? strlen(f) + 1 : 1);
	}
	if (with_fetches)
		h = skel_fnv1a64(h, fetch_define(), strlen(fetch_define()) + 1);
	if (with_roi)
		h = skel_fnv1a64(h, roi_define(), strlen(roi_define()) + 1);
	char *out = xmalloc(PATH_MAX);
	if (module)
		snprintf(out, PATH_MAX, "%s/mod-%016" PRIx64 ".so", b.cache, h);
	else
		snprintf(out, PATH_MAX, "%s/replay-%016" PRIx64, b.cache, h);
	if (!exists(out) && ((!text && !(text = skeleton_text(skel_path, &len))) ||
			     build_replayer(&b, text, len, rh, hot, cold, out) < 0)) {
		free(out);
		out = NULL;
	}
	free(text);
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
		fprintf(stderr, "skel: %s: following %ld indirect jump or call target%s seen at run time (%s)\n",
			why, n, n == 1 ? "" : "s", path);
	}
	int rc = program_load_hints(p, app, h, (size_t)n, err);
	free(h);
	return rc;
}

/* What the approximate mode chose: the paper's static MA and AIA over
 * the expressions it weighed (equations 4 and 5, summed over blocks,
 * not weighted by executions: skel check --accuracy measures those). */
static void gen_report_approx(const skel_opts *o, const skel_stats *st)
{
	double n = st->bid_exprs ? (double)st->bid_exprs : 1;
	fprintf(stderr, "skel: gen: APPROXIMATE, omega %g, chunk %" PRIu64 ": of %" PRIu64
		" accesses whose addresses cost recorded values, %" PRIu64 " keep them, %"
		PRIu64 " are attributed, %" PRIu64 " absent; static MA %.3f, AIA %.3f\n",
		o->omega, o->chunk, st->bid_exprs,
		st->bid_exprs - st->bid_attributed - st->bid_absent, st->bid_attributed,
		st->bid_absent, (double)st->bid_kept / n, (double)st->bid_aia / n);
}

/* --omega W: a number in [0, 1] (issue 15's ω) */
static int parse_omega(const char *arg, double *w)
{
	char *end;
	errno = 0;
	*w = strtod(arg, &end);
	if (errno || end == arg || *end || !(*w >= 0 && *w <= 1))
		return skel_usage_error("gen: --omega takes a number from 0 to 1");
	return 0;
}

/* --chunk C: bytes, a power of two (the paper's chunk size) */
static int parse_chunk(const char *arg, uint64_t *c)
{
	char *end;
	errno = 0;
	*c = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || !*c || (*c & (*c - 1)))
		return skel_usage_error("gen: --chunk takes a power of two (bytes), not 0");
	return 0;
}

int cmd_gen(int argc, char **argv)
{
	const char *app = NULL, *out = NULL, *patch_out = NULL;
	char app_path[PATH_MAX];
	skel_opts o = { .omega = 1, .chunk = 64 };
	bool whole = skel_scope_default(), scope_arg = false;
	VEC(char *) only = {0};
	VEC(char *) plugins = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--patch") && i + 1 < argc)
			patch_out = argv[++i];
		else if (!strcmp(argv[i], "--all-accesses"))
			o.all_accesses = true;
		else if (!strcmp(argv[i], "--no-slice"))
			skeleton_cache_unsliced(o.no_slice = true);
		else if (!strcmp(argv[i], "--omega") && i + 1 < argc) {
			if (parse_omega(argv[++i], &o.omega))
				return 2;
		} else if (!strcmp(argv[i], "--chunk") && i + 1 < argc) {
			if (parse_chunk(argv[++i], &o.chunk))
				return 2;
		} else if (skel_scope_arg(argv[i], &whole))
			scope_arg = true;
		else if (!strcmp(argv[i], "--object") && i + 1 < argc) {
			whole = true;
			vec_push(only, argv[++i]);
		} else if (!strcmp(argv[i], "--plugin") && i + 1 < argc) {
			whole = true;
			vec_push(plugins, argv[++i]);
		}
		else if (argv[i][0] == '-')
			return skel_unknown_option("gen", argv[i]);
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
	o.approx = o.omega < 1;
	if (o.approx && o.all_accesses)
		return skel_usage_error("gen: --omega and --all-accesses do not go together");
	program p;
	char err[ERR_LEN];
	if (load_analyzed(&p, app, "gen", err) < 0)
		return skel_fail(app, err);
	/* a library's skeleton is its own (a module): the objects it loads
	 * come in with the program's */
	if (p.bin.shared && !scope_arg && !only.n)
		whole = false;
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		program_free(&p);
		return skel_fail(out, strerror(errno));
	}
	patch pt;
	skel_stats st;
	int rc = skel_generate(f, &p, &o, &pt, &st, err);
	if (only.n)
		vec_push(only, NULL);
	if (plugins.n)
		vec_push(plugins, NULL);
	if (rc == 0 && whole && objects_gen(f, app, only.a, plugins.a, err) < 0)
		rc = -1;
	free(only.a);
	free(plugins.a);
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
	if (rc == 0 && o.approx)
		gen_report_approx(&o, &st);
	if (rc == 0 && p.unreached)
		fprintf(stderr, "skel: gen: %" PRIu64 " code bytes outside every known function "
			"(first at 0x%" PRIx64 "): indirect calls record their destination, "
			"and the replay stops at one into code not analyzed\n", p.unreached,
			p.unreached_first);
	if (rc == 0 && st.sliced_loops)
		fprintf(stderr, "skel: gen: %u loops without data accesses are not replayed "
			"(their branches not recorded; --no-slice keeps them)\n", st.sliced_loops);
	if (rc == 0 && st.elided_branches)
		fprintf(stderr, "skel: gen: %u conditional jumps whose two ways meet without a "
			"data access are not replayed (not recorded; --no-slice keeps them)\n",
			st.elided_branches);
	if (rc == 0 && st.exit_loops)
		fprintf(stderr, "skel: gen: %u loops record their exit once, not a branch "
			"outcome per iteration\n", st.exit_loops);
	if (rc == 0 && st.carried)
		fprintf(stderr, "skel: gen: %u values are computed by the skeleton from others "
			"instead of recorded (merged at joins, masked, shifted)\n", st.carried);
	if (rc == 0 && st.tables)
		fprintf(stderr, "skel: gen: %u jump tables' destinations are read by the skeleton "
			"from the table instead of recorded\n", st.tables);
	if (rc == 0 && st.tbytes)
		fprintf(stderr, "skel: gen: %u conditional jumps record their outcome in the word "
			"of the byte they test, not a word of their own\n", st.tbytes);
	if (rc == 0 && st.phi_edges)
		fprintf(stderr, "skel: gen: %u values are recorded on the ways into a join that "
			"need them, instead of at the join\n", st.phi_edges);
	if (rc == 0 && st.rotated)
		fprintf(stderr, "skel: gen: %u loops record the value each iteration loads for "
			"the next where it is loaded, instead of at the loop's head with the "
			"outcomes of the branches on it\n", st.rotated);
	if (rc == 0 && st.stack_switches)
		fprintf(stderr, "skel: gen: warning: %u indirect jumps load the stack pointer from "
			"memory first (__builtin_longjmp, or a context switch of the program's own): "
			"not followed; a replay that comes to one stops there, said\n",
			st.stack_switches);
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

int skel_refuse_library(const binary *b, const char *app)
{
	if (!b->shared)
		return 0;
	return skel_fail(app, "a shared library, not a program: skel gen analyzes it; record, "
			 "run, trace and check take a program that loads it");
}

/* Refuses a skeleton made for another binary, and a library to run. */
static int check_identity(const char *skel_path, const char *text, const char *app)
{
	char want[160];
	if (skeleton_binary_id(skel_path, text, want, sizeof want) < 0)
		return skel_fail(skel_path, "not a skel skeleton (no sk_binary_id)");
	binary b;
	char err[ERR_LEN];
	if (elf_open(&b, app, err) < 0)
		return skel_fail(app, err);
	int rc = skel_refuse_library(&b, app);
	if (!rc && strcmp(b.id_hex, want)) {
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

/* The program valgrind runs as.  Debian's `valgrind` is a /bin/sh script
 * that execs valgrind.bin beside it: started with the recorder preloaded,
 * that shell is a process of its own, and when the program traced is
 * /bin/sh (dash) it is the patched executable and records its own run of
 * the script.  So valgrind.bin itself when there is one (the script's
 * exports, /usr/lib/debug in LD_LIBRARY_PATH and libstdc++'s
 * GLIBCXX_FORCE_NEW, would only make the run differ from a native one). */
static const char *valgrind_program(void)
{
	static char bin[PATH_MAX];
	if (!bin[0]) {
		char path[PATH_MAX];
		if (skel_find_app("valgrind", path) == 0 &&
		    snprintf(bin, sizeof bin, "%s.bin", path) < (int)sizeof bin &&
		    access(bin, X_OK) == 0)
			return bin;
		snprintf(bin, sizeof bin, "valgrind");
	}
	return bin;
}

/* Execs valgrind with the options PRE (N of them), then APP_PATH with
 * APP_ARGV's arguments; valgrind gives its client that path as argv[0]
 * (it has no way to pass another).  Returns only if the exec failed. */
static void exec_valgrind(char *const *pre, size_t n, const char *app_path, char **app_argv)
{
	VEC(char *) av = {0};
	vec_push(av, (char *)valgrind_program());
	for (size_t i = 0; i < n; i++)
		vec_push(av, pre[i]);
	vec_push(av, (char *)app_path);
	for (char **a = app_argv + 1; *a; a++)
		vec_push(av, *a);
	vec_push(av, (char *)NULL);
	execvp(av.a[0], av.a);
	free(av.a);
}

/* Before a run under lackey: the recorder plans the patched objects
 * under valgrind's lightest tool and keeps the plans in the cache
 * (SKEL_PLAN_ONLY: it leaves before the program's own code runs;
 * constructors of the libraries loaded before it do run).  Under lackey,
 * which logs every access the recorder makes (planning libc decodes its
 * whole text: gigabytes of log, tens of minutes), it then only reads them.
 * Not natively: a plan names the conditions it was made under, and
 * valgrind's differ (its CPU has no RTM, its signal trampoline is not
 * libc's).  A failure here costs only that: the run under lackey plans
 * itself. */
static bool plan_under_valgrind(const char *lib, const char *patch_path, const char *phash,
				const char *app_path, char **app_argv, bool bind_now)
{
	pid_t pid = child_fork(false);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		setenv("LD_PRELOAD", lib, 1);
		setenv("SKEL_PATCH", patch_path, 1);
		setenv("SKEL_PATCH_HASH", phash, 1);
		setenv("SKEL_VALUES", "/dev/null", 1);
		setenv("SKEL_PLAN_ONLY", "1", 1);
		if (bind_now)
			setenv("LD_BIND_NOW", "1", 1);
		char *pre[] = { "--tool=none", "-q", "--trace-children=no", "--vgdb=no" };
		exec_valgrind(pre, sizeof pre / sizeof *pre, app_path, app_argv);
		_exit(127);
	}
	return pid > 0 && child_wait(pid) == 0;
}

/* The recorder comes in by LD_PRELOAD, which only the dynamic loader
 * honours: a static executable (no PT_INTERP) is refused before it runs,
 * rather than run untraced.  0 when app is dynamic (or not an ELF file we
 * can read: the run says what is wrong with it). */
int skel_refuse_static(const char *app)
{
	int fd = open(app, O_RDONLY);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	bool elf = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
		   !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
		   eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0;
	bool interp = false, pie = false;
	for (unsigned i = 0; elf && i < eh.e_phnum && !interp; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			elf = false;
		else if (ph.p_type == PT_INTERP)
			interp = true;
		else if (ph.p_type == PT_DYNAMIC)	/* a static PIE: DF_1_PIE */
			for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= ph.p_filesz && o < (1u << 20);
			     o += sizeof(Elf64_Dyn)) {
				Elf64_Dyn d;
				if (pread(fd, &d, sizeof d, (off_t)(ph.p_offset + o)) != (ssize_t)sizeof d ||
				    d.d_tag == DT_NULL)
					break;
				pie |= d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE);
			}
	}
	close(fd);
	/* an ET_DYN without PT_INTERP nor DF_1_PIE is a shared library,
	 * refused elsewhere as no program */
	if (!elf || interp || (eh.e_type != ET_EXEC && !(eh.e_type == ET_DYN && pie)))
		return 0;
	skel_fail(app, "a static executable (no PT_INTERP): skel's recorder is loaded by the "
		  "dynamic loader (LD_PRELOAD), which a static executable does not have, so it "
		  "cannot be traced; link it dynamically to trace it. Not run");
	return -1;
}

pid_t record_start(const char *skel_path, const char *values, const char *app_path,
		   char **app_argv, const char *valgrind_log, char patch_out[PATH_MAX])
{
	if (skel_refuse_static(app_path))
		return -1;
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
	char *more = ptext ? objects_patches(skel_path, text) : NULL;
	free(text);
	if (!ptext) {
		skel_fail(skel_path, "no embedded patch (SKEL-PATCH-BEGIN missing)");
		return -1;
	}
	if (!more) {
		free(ptext);
		return -1;
	}
	/* the loader binds every PLT slot at the start only when a slot
	 * may lead into another covered object (rec.c, rec_links_plan):
	 * the executable alone, binding is lazy as natively (under lackey,
	 * binding all of them is a quarter of a small check's log) */
	bool bind_now = *more != 0;
	if (*more) {	/* the modules' sections after the executable's */
		size_t a = strlen(ptext), b = strlen(more);
		ptext = xrealloc(ptext, a + b + 1);
		memcpy(ptext + a, more, b + 1);
	}
	free(more);
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
	/* the recorder's name for the text (its plan cache's index), so
	 * that a run under lackey need not hash it (format.h); with the
	 * file's identity, which the recorder checks before trusting it */
	struct stat pst;
	char phash[128] = "";
	if (fstat(fd, &pst) == 0)
		snprintf(phash, sizeof phash, "%016" PRIx64 ":%ju:%jd:%jd.%09ld",
			 skel_hash4(0, ptext, strlen(ptext)), (uintmax_t)pst.st_ino,
			 (intmax_t)pst.st_size, (intmax_t)pst.st_mtim.tv_sec,
			 (long)pst.st_mtim.tv_nsec);
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
	bool planned = valgrind_log &&
		       plan_under_valgrind(lib, patch_path, phash, app_path, app_argv, bind_now);
	/* the terminal is the program's while it runs (child.c): it may
	 * read it, and a ^C there is for it */
	pid_t pid = child_fork(true);
	if (pid == 0) {
		setenv("LD_PRELOAD", lib, 1);
		setenv("SKEL_PATCH", patch_path, 1);
		setenv("SKEL_PATCH_HASH", phash, 1);
		if (planned)	/* it read the plans: checked */
			setenv("SKEL_PLANS_CHECKED", "1", 1);
		/* every PLT slot bound before the recorder starts, which then
		 * links those whose callee is covered (format.h, patch_link):
		 * their calls record no entry word */
		if (bind_now)
			setenv("LD_BIND_NOW", "1", 1);
		setenv("SKEL_VALUES", values, 1);
		/* the first image; an exec of a recorded one counts up (the
		 * value file and the lackey log of each image: formats.md) */
		setenv("SKEL_EXEC", "0", 1);
		/* skel check replays its own file, unless it is kept
		 * (SKEL_KEEP) for other replays and reports */
		if (valgrind_log && !getenv("SKEL_KEEP"))
			setenv("SKEL_UNSUMMED", "1", 1);
		if (valgrind_log) {
			/* the trampoline maps, for the comparison (rec.c) */
			setenv("SKEL_MAPS", "1", 1);
			char logopt[PATH_MAX + 16];
			snprintf(logopt, sizeof logopt, "--log-file=%s", valgrind_log);
			/* the recorder's guard-page flush and int3 sites read registers from the
			 * fault's context: valgrind must keep them all exact.  Without
			 * chasing: a block that went on through a trampoline's jump back
			 * gave a fault after it the jump's rip (the program's handler
			 * was unplaced), and lackey lost the block's accesses before
			 * the fault (tests/signals.c segv) */
			/* --fair-sched: with valgrind's default lock, a thread
			 * that spins (for (;;) over an array) kept it, and one
			 * that would call exit() never ran: the check never
			 * ended (tests/spin.c's shape, tests/behind.sh) */
			char *pre[] = { "--tool=lackey", "--trace-mem=yes",
					"--vex-iropt-register-updates=allregs-at-each-insn",
					"--vex-guest-chase=no", "--trace-children=yes",
					"--fair-sched=yes",
					"--vgdb=no", logopt };	/* no FIFOs left in /tmp */
			exec_valgrind(pre, sizeof pre / sizeof *pre, app_path, app_argv);
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
			return skel_unknown_option("record", argv[i]);
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
	/* the recorder refused (it said why): the program ran, unrecorded */
	if (access(out, F_OK) != 0) {
		fprintf(stderr, "skel: %s: nothing was recorded (see the recorder's message above)\n",
			out);
		return rc ? rc : 1;
	}
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
	const char *skel = NULL, *values = NULL, *out = "-", *format = "text", *pid = NULL;
	bool stats = false, salvage = false;
	sim_opts so = SIM_OPTS_INIT;
	roi_opts ro = { 0 };
	for (int i = 1, r; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			format = argv[++i];
		else if (!strcmp(argv[i], "--stats"))
			stats = true;
		else if (!strcmp(argv[i], "--salvage"))
			salvage = true;
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = argv[++i];
		else if ((r = sim_opts_arg(argc, argv, &i, &so)) != 0 ||
			 (r = roi_opts_arg(argc, argv, &i, &ro, true)) != 0) {
			if (r < 0)
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1])
			return skel_unknown_option(argv[0], argv[i]);
		else if (!skel)
			skel = argv[i];
		else if (!values)
			values = argv[i];
		else
			return skel_usage_error("replay: too many arguments");
	}
	if (!skel || !values)
		return skel_usage_error(ro.report ? "report: usage: skel report SKEL VALUES [-o FILE] "
					"[--csv DIR] [--plot FILE.png]" : "replay: usage: skel replay "
					"SKEL VALUES [--pid PID] [-o TRACE] [--format F] [--stats] [--salvage]");
	if (pid && strspn(pid, "0123456789") != strlen(pid))
		return skel_usage_error("replay: --pid takes a process id");
	if (!trace_format_ok(format))
		return skel_usage_error("replay: --format must be text, bin, lackey, din, csv or count");
	if (sim_opts_check(&so) < 0 || roi_opts_check(&ro, format, &so) < 0)
		return 2;
	if (!exists(values))
		return skel_fail(values, strerror(ENOENT));
	if (ro.binary && access(ro.binary, R_OK) != 0)
		return skel_fail(ro.binary, strerror(errno));
	compile_set_fetches(sim_opts_fetches(&so, format));
	compile_set_roi(roi_opts_any(&ro));
	char *bin = compile_skeleton(skel);
	char raw[PATH_MAX];
	if (!bin || sim_raw_path(&so, raw) || report_heat_path(&ro)) {
		free(bin);
		return 1;
	}
	char *av[11 + SIM_OPTS_MAXARGS + ROI_OPTS_MAXARGS] = { bin, (char *)values, "-o", (char *)out,
							      "--format", (char *)format };
	size_t n = 6;
	char exe[PATH_MAX];
	if (stats)
		av[n++] = "--stats";
	if (salvage)
		av[n++] = "--salvage";
	if (pid) {
		av[n++] = "--pid";
		av[n++] = (char *)pid;
	}
	n += sim_opts_argv(&so, format, raw[0] ? raw : NULL, av + n);
	n += roi_opts_argv(&ro, skel, NULL, av + n, exe);
	av[n] = NULL;
	int rc = run_wait(av, NULL);
	free(bin);
	if (raw[0]) {
		char *cmd[] = { "skel", "replay", (char *)skel, (char *)values, NULL };
		if (rc == 0 || rc == 3 || rc == 4)
			rc = sim_out_write(raw, so.sim_out, cmd) ? 1 : rc;
		tmp_remove(raw);
	}
	return report_plot_finish(&ro, rc);
}

/* skel report: a replay with --report */
int cmd_report(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 2, sizeof *av);
	if (!av)
		return skel_fail("report", strerror(ENOMEM));
	memcpy(av, argv, (size_t)argc * sizeof *av);
	av[argc] = "--report";
	int rc = cmd_replay(argc + 1, av);
	free(av);
	return rc;
}
