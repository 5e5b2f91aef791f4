/* objects.c — whole-process skeletons: the shared objects a program loads
 * each get a skeleton of their own ("module"), generated once per object
 * identity into the cache and compiled once into a shared object the
 * replayer loads (replay/replayer.c, SKEL_MODULES).  The executable's
 * skeleton names its modules in a SKEL-OBJECTS block at its end:
 *
 *     SKEL-OBJECTS
 *     object KEY PATH
 *     SKEL-OBJECTS-END
 *
 * KEY names the module's skeleton in the cache, KEY.c: the object's
 * identity ID-HEX, or ID-HEX-noslice (skel gen --no-slice, and skel trace
 * with instruction fetches)
 *
 * (inside a C comment), in the loader's order.  The recorder gets one patch
 * of several sections (format.h, patch_set): the executable's, then each
 * module's; it patches those it finds loaded, by identity. */
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
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define OBJ_BEGIN "/* SKEL-OBJECTS\n"
#define OBJ_END "SKEL-OBJECTS-END */"

/* skeletons with every loop and jump replayed (skel gen --no-slice) */
static bool cache_unsliced;

void skeleton_cache_unsliced(bool on)
{
	cache_unsliced = on;
}

int skeleton_cached(const char *bin, const char *id_hex, const char *why,
		    char *path, size_t n)
{
	char name[200];
	snprintf(name, sizeof name, "%s/%s%s.c", cache_dir(), id_hex,
		 cache_unsliced ? "-noslice" : "");
	snprintf(path, n, "%s", name);
	char targets[PATH_MAX];
	snprintf(targets, sizeof targets, "%s/%s.targets", cache_dir(), id_hex);
	struct stat cs, ss, ts;
	if (stat(path, &cs) == 0 &&
	    (stat("/proc/self/exe", &ss) < 0 || ss.st_mtime <= cs.st_mtime) &&
	    (stat(targets, &ts) < 0 || ts.st_mtime < cs.st_mtime))
		return 0;
	program p;
	char err[ERR_LEN];
	if (load_analyzed(&p, bin, why, err) < 0)
		return skel_fail(bin, err);
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
	tmp_track(tmp);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		program_free(&p);
		tmp_untrack(tmp);
		return skel_fail(tmp, strerror(errno));
	}
	skel_opts o = { .app = bin, .no_slice = cache_unsliced };
	patch pt;
	skel_stats st;
	int rc = skel_generate(f, &p, &o, &pt, &st, err);
	if (fclose(f) != 0 && rc == 0) {
		rc = -1;
		snprintf(err, sizeof err, "%s: write error", tmp);
	}
	patch_free(&pt);
	program_free(&p);
	if (rc < 0 || rename(tmp, path) != 0) {
		tmp_remove(tmp);
		return skel_fail(bin, rc < 0 ? err : strerror(errno));
	}
	tmp_untrack(tmp);
	fprintf(stderr, "skel: %s: skeleton of %s generated: %u routines, %" PRIu64
		" probes, cached as %s\n", why, bin, st.routines, st.probes, path);
	return 0;
}

/* The SKEL-OBJECTS line of an object whose skeleton is the cached file
 * `cached`: its name there less ".c" (<id>, or <id>-noslice: the readers,
 * record and replay, find the module by it, whatever options they have). */
static void object_line(FILE *out, const char *cached, const char *path)
{
	const char *base = strrchr(cached, '/');
	base = base ? base + 1 : cached;
	size_t n = strlen(base);
	fprintf(out, "object %.*s %s\n", (int)(n > 2 ? n - 2 : n), base, path);
}

static bool wanted(const deps_object *o, char *const *only)
{
	if (!only || !*only)
		return true;
	const char *base = strrchr(o->path, '/');
	base = base ? base + 1 : o->path;
	for (; *only; only++)
		if (!strcmp(*only, base) || !strcmp(*only, o->name) ||
		    (o->soname && !strcmp(*only, o->soname)) || !strcmp(*only, o->path))
			return true;
	return false;
}

int objects_gen(FILE *out, const char *app, char *const *only, char *const *plugins,
		char err[ERR_LEN])
{
	deps_env env = { .ld_library_path = getenv("LD_LIBRARY_PATH") };
	deps_list d;
	if (deps_resolve(&d, app, &env, err) < 0)
		return -1;
	int rc = 0;
	fputs("\n" OBJ_BEGIN, out);
	/* the loader (interp) too: the recorder patches it when the program
	 * starts (replay/rec.c, __libc_start_main) */
	for (size_t i = 1; i < d.n && rc == 0; i++) {
		const deps_object *o = &d.objs[i];
		if (!wanted(o, only))
			continue;
		char path[PATH_MAX];
		if (skeleton_cached(o->path, o->id_hex, "gen", path, sizeof path))
			rc = -1;
		else
			object_line(out, path, o->path);
	}
	/* --plugin PATH: an object the program loads with dlopen gets its
	 * own skeleton too; the recorder patches it when it is mapped */
	for (char *const *w = plugins; rc == 0 && w && *w; w++) {
		deps_list pl;
		char path[PATH_MAX];
		if (deps_resolve(&pl, *w, &env, err) < 0) {
			deps_free(&d);
			return -1;
		}
		if (skeleton_cached(pl.objs[0].path, pl.objs[0].id_hex, "gen", path, sizeof path))
			rc = -1;
		else
			object_line(out, path, pl.objs[0].path);
		deps_free(&pl);
	}
	fputs(OBJ_END "\n", out);
	for (size_t i = 0; i < d.nmissing; i++)
		fprintf(stderr, "skel: gen: warning: %s: no file found for the library %s "
			"(not traced)\n", app, d.missing[i].name);
	deps_free(&d);
	if (rc)
		snprintf(err, ERR_LEN, "a shared object's skeleton could not be made");
	return rc;
}

/* Calls fn for each object the skeleton text names; stops at a non-zero
 * return. */
static int objects_each(const char *text, int (*fn)(const char *id, const char *path,
						   void *arg), void *arg)
{
	const char *b = strstr(text, OBJ_BEGIN);
	if (!b)
		return 0;
	b += strlen(OBJ_BEGIN);
	const char *e = strstr(b, OBJ_END);
	if (!e)
		return -1;
	while (b < e) {
		const char *nl = memchr(b, '\n', (size_t)(e - b));
		if (!nl)
			break;
		char line[PATH_MAX + 256], id[160];
		size_t len = (size_t)(nl - b);
		if (len >= sizeof line)
			return -1;
		memcpy(line, b, len);
		line[len] = 0;
		int at = 0;
		if (sscanf(line, "object %159s %n", id, &at) != 1 || !at)
			return -1;
		int rc = fn(id, line + at, arg);
		if (rc)
			return rc;
		b = nl + 1;
	}
	return 0;
}

typedef struct gather {
	const char *skel_path;
	VEC(char) text;
	VEC(char) modules;
} gather;

static void put(gather *g, const char *s)
{
	size_t n = strlen(s);
	if (g->text.n + n > g->text.cap) {
		size_t cap = 2 * (g->text.n + n) + 16;
		g->text.a = xrealloc(g->text.a, cap);
		g->text.cap = cap;
	}
	memcpy(g->text.a + g->text.n, s, n);
	g->text.n += n;
}

/* The module's cached skeleton's file name; fails when it is missing (the
 * cache was emptied since `skel gen`). */
static int module_file(const char *id, const char *path, char file[PATH_MAX])
{
	snprintf(file, PATH_MAX, "%s/%s.c", cache_dir(), id);
	if (access(file, R_OK) == 0)
		return 0;
	fprintf(stderr, "skel: %s: the skeleton of %s is not in the cache (%s); "
		"run skel gen --whole-process again\n", file, path, strerror(errno));
	return -1;
}

/* The patch embedded at the end of a module's cached skeleton, the end
 * alone read: libc's skeleton is 27 MB of C, its patch the last 3 MB, and
 * reading it all cost each recorded run 40 ms of page faults.  -1 (errno
 * set) when the file cannot be read; *out NULL when it has none. */
static int module_patch(const char *file, char **out)
{
	static const char begin[] = "/* SKEL-PATCH-BEGIN\n";
	*out = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	size_t len = (size_t)st.st_size, n = sizeof begin - 1;
	const char *m = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	const char *b = NULL;
	for (size_t k = len; !b && k > 0;) {
		const char *q = memrchr(m, '/', k);
		if (!q)
			break;
		k = (size_t)(q - m);
		if (len - k >= n && !memcmp(q, begin, n))
			b = q;
	}
	if (b) {
		size_t tl = (size_t)(m + len - b);
		char *tail = xmalloc(tl + 1);
		memcpy(tail, b, tl);
		tail[tl] = 0;
		*out = skel_extract_patch(tail);
		free(tail);
	}
	munmap((void *)m, len);
	return 0;
}

static int add_patch(const char *id, const char *path, void *arg)
{
	gather *g = arg;
	char file[PATH_MAX], *p;
	snprintf(file, PATH_MAX, "%s/%s.c", cache_dir(), id);
	if (module_patch(file, &p) < 0) {
		fprintf(stderr, "skel: %s: the skeleton of %s is not in the cache (%s); "
			"run skel gen --whole-process again\n", file, path, strerror(errno));
		return -1;
	}
	if (!p)
		return skel_fail(file, "no embedded patch (SKEL-PATCH-BEGIN missing)");
	put(g, p);
	free(p);
	return 0;
}

char *objects_patches(const char *skel_path, const char *text)
{
	gather g = { .skel_path = skel_path };
	if (objects_each(text, add_patch, &g)) {
		skel_fail(skel_path, "bad SKEL-OBJECTS block, or a module is missing");
		free(g.text.a);
		return NULL;
	}
	vec_push(g.text, 0);
	return g.text.a;
}

static int add_module(const char *id, const char *path, void *arg)
{
	gather *g = arg;
	char file[PATH_MAX];
	if (module_file(id, path, file) < 0)
		return -1;
	char *so = compile_module(file);
	if (!so)
		return -1;
	if (g->modules.n)
		vec_push(g->modules, ':');
	for (const char *s = so; *s; s++)
		vec_push(g->modules, *s);
	free(so);
	return 0;
}

int objects_compile(const char *skel_path)
{
	size_t len;
	char *text = read_text(skel_path, &len);
	if (!text)
		return skel_fail(skel_path, strerror(errno)), -1;
	gather g = { .skel_path = skel_path };
	int rc = objects_each(text, add_module, &g);
	free(text);
	if (rc) {
		skel_fail(skel_path, "bad SKEL-OBJECTS block, or a module does not compile");
		free(g.modules.a);
		return -1;
	}
	vec_push(g.modules, 0);
	if (g.modules.n > 1)
		setenv("SKEL_MODULES", g.modules.a, 1);
	else
		unsetenv("SKEL_MODULES");
	free(g.modules.a);
	return 0;
}
