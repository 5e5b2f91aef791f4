/* deps.c — the objects the dynamic loader maps for a program, found
 * without running anything: the DT_NEEDED closure, breadth-first, each
 * object once, searched the way glibc's ld.so searches (elf/dl-load.c,
 * _dl_map_object; ld.so(8)):
 *
 *   a name with a '/' is a path ($ORIGIN expanded);
 *   else, unless the needing object has a DT_RUNPATH, the DT_RPATH of the
 *   needing object, then of the object that needed it, up to the program;
 *   then LD_LIBRARY_PATH; then the needing object's own DT_RUNPATH; then
 *   /etc/ld.so.cache; then the default directories (these two not when the
 *   needing object is linked -z nodeflib).
 *
 * A name already loaded (as asked for, or as a soname) is not searched
 * again, and a file found under a second name (same device and inode) is
 * the object already loaded.  The interpreter (PT_INTERP) is loaded first
 * of all by the kernel, so libc's need of ld-linux-x86-64.so.2 finds it.
 * A candidate file that is not a 64-bit x86-64 ELF shared object is
 * skipped, as the loader skips it.  Not modelled: glibc-hwcaps
 * subdirectories, $LIB and $PLATFORM, secure (setuid) mode, preloading. */
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const deps_default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib", NULL,
};

typedef struct deps_obj_state {
	binary bin;             /* open while the closure is computed */
	dev_t dev;
	ino_t ino;
	int32_t loader;         /* the object whose need loaded this one, -1 */
	VEC(char *) names;      /* names it answers to (asked for, soname) */
} deps_obj_state;

typedef struct deps_ctx {
	const deps_env *env;
	deps_list *out;
	VEC(deps_obj_state) st;  /* parallel to out->objs */
	/* the program's interpreter, until it takes its place */
	const char *interp, *interp_soname;
	dev_t interp_dev;
	ino_t interp_ino;
	bool interp_placed;
	char *err;
} deps_ctx;

static int deps_fail(char *err, const char *fmt, const char *a, const char *b)
{
	snprintf(err, ERR_LEN, fmt, a, b);
	return -1;
}

/* --------------------------------------------------------- ld.so.cache */

/* glibc's "new format" cache (elf/cache.c, sysdeps/generic/dl-cache.h):
 * a 48-byte header — magic "glibc-ld.so.cache", version "1.1", nlibs,
 * len_strings, flags, padding, extension_offset, three unused words —
 * then nlibs entries of 24 bytes — int32 flags, uint32 key (the soname),
 * uint32 value (the path), uint32 osversion, uint64 hwcap — then the
 * strings.  String offsets count from the header.  An older ldconfig
 * wrote the "ld.so-1.7.0" format first and the new one after it. */
#define CACHE_MAGIC_NEW "glibc-ld.so.cache1.1"
#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_HEADER 48
#define CACHE_ENTRY 24
#define CACHE_OLD_HEADER 16
#define CACHE_OLD_ENTRY 12
/* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64, and plain FLAG_ELF (1); entries
 * with a hwcap (glibc-hwcaps subdirectories, legacy platform directories)
 * are not read: their choice depends on the CPU */
#define CACHE_FLAGS_X8664 0x0303
#define CACHE_FLAGS_ELF 0x0001

static uint32_t deps_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The offset of the new-format header in a cache of `size` bytes, or -1. */
static long deps_cache_start(const uint8_t *p, size_t size)
{
	size_t m = strlen(CACHE_MAGIC_NEW);
	if (size >= CACHE_HEADER && !memcmp(p, CACHE_MAGIC_NEW, m))
		return 0;
	m = strlen(CACHE_MAGIC_OLD);
	if (size < CACHE_OLD_HEADER || memcmp(p, CACHE_MAGIC_OLD, m))
		return -1;
	uint64_t off = CACHE_OLD_HEADER + (uint64_t)deps_u32(p + 12) * CACHE_OLD_ENTRY;
	off = (off + 7) & ~(uint64_t)7;
	if (off > size || size - off < CACHE_HEADER ||
	    memcmp(p + off, CACHE_MAGIC_NEW, strlen(CACHE_MAGIC_NEW)))
		return -1;
	return (long)off;
}

/* The NUL-terminated string at `off` of the new-format area [p, p+size). */
static const char *deps_cache_string(const uint8_t *p, size_t size, uint32_t off)
{
	if (off >= size || !memchr(p + off, 0, size - off))
		return NULL;
	return (const char *)p + off;
}

int deps_cache_lookup(const char *cache, const char *soname, char *path, size_t len,
		      char err[ERR_LEN])
{
	int fd = open(cache, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : deps_fail(err, "%s: %s", cache, strerror(errno));
	struct stat st;
	uint8_t *p = NULL;
	size_t size = 0;
	int rc = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		size = (size_t)st.st_size;
		p = xmalloc(size + 1);
		size_t got = 0;
		ssize_t n;
		while (got < size && (n = read(fd, p + got, size - got)) > 0)
			got += (size_t)n;
		size = got;
	}
	close(fd);
	long start = p ? deps_cache_start(p, size) : -1;
	if (start < 0) {
		free(p);
		return deps_fail(err, "%s: %s", cache, "not a glibc ld.so.cache (format 1.1)");
	}
	const uint8_t *h = p + start;
	size_t hsize = size - (size_t)start;
	uint64_t nlibs = deps_u32(h + 20);
	if (nlibs > (hsize - CACHE_HEADER) / CACHE_ENTRY) {
		free(p);
		return deps_fail(err, "%s: %s", cache, "truncated ld.so.cache");
	}
	for (uint64_t i = 0; i < nlibs && !rc; i++) {
		const uint8_t *e = h + CACHE_HEADER + i * CACHE_ENTRY;
		int32_t flags;
		uint64_t hwcap;
		memcpy(&flags, e, 4);
		memcpy(&hwcap, e + 16, 8);
		if ((flags != CACHE_FLAGS_X8664 && flags != CACHE_FLAGS_ELF) || hwcap)
			continue;
		const char *key = deps_cache_string(h, hsize, deps_u32(e + 4));
		const char *value = deps_cache_string(h, hsize, deps_u32(e + 8));
		if (key && value && !strcmp(key, soname) && strlen(value) < len) {
			strcpy(path, value);
			rc = 1;
		}
	}
	free(p);
	return rc;
}

/* -------------------------------------------------------- search paths */

/* A character that continues a $NAME token ($ORIGINX is not $ORIGIN). */
static bool deps_name_char(char ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

/* Copies `in` to `out` with $ORIGIN and ${ORIGIN} replaced by `origin`;
 * false when the result does not fit. */
static bool deps_expand(const char *in, size_t n, const char *origin, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t skip = 0;
		if (i + 7 <= n && !strncmp(in + i, "$ORIGIN", 7) &&
		    (i + 7 == n || !deps_name_char(in[i + 7])))
			skip = 7;
		else if (i + 9 <= n && !strncmp(in + i, "${ORIGIN}", 9))
			skip = 9;
		const char *piece = skip ? origin : in + i;
		size_t plen = skip ? strlen(origin) : 1;
		if (o + plen >= len)
			return false;
		memcpy(out + o, piece, plen);
		o += plen;
		i += skip ? skip : 1;
	}
	out[o] = 0;
	return true;
}

/* Whether `path` is a 64-bit little-endian x86-64 ELF shared object (or
 * PIE): what the loader accepts as a library. */
static bool deps_usable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	Elf64_Ehdr eh;
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		  read(fd, &eh, sizeof eh) == (ssize_t)sizeof eh &&
		  !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
		  eh.e_ident[EI_DATA] == ELFDATA2LSB && eh.e_machine == EM_X86_64 &&
		  eh.e_type == ET_DYN;
	close(fd);
	return ok;
}

/* Looks for `name` in each directory of the ':'-separated list (';' too
 * for LD_LIBRARY_PATH, as glibc accepts); an empty entry is the current
 * directory.  Fills `path` and returns true on the first usable file. */
static bool deps_search_list(const char *list, const char *origin, const char *name,
			     char *path, size_t len)
{
	if (!list)
		return false;
	for (const char *p = list;;) {
		size_t n = strcspn(p, ":;");
		char dir[PATH_MAX];
		if (deps_expand(p, n, origin, dir, sizeof dir) &&
		    snprintf(path, len, "%s%s%s", dir, *dir ? "/" : "", name) < (int)len &&
		    deps_usable(path))
			return true;
		if (!p[n])
			return false;
		p += n + 1;
	}
}

static bool deps_search_dirs(const char *const *dirs, const char *name, char *path, size_t len)
{
	for (size_t i = 0; dirs[i]; i++)
		if (snprintf(path, len, "%s/%s", dirs[i], name) < (int)len && deps_usable(path))
			return true;
	return false;
}

/* ---------------------------------------------------------- the closure */

/* The directory of an object's file: of the program's real path (the
 * loader takes it from /proc/self/exe), of a library's path as found. */
static void deps_origin(const char *path, bool is_program, char *out, size_t len)
{
	char real[PATH_MAX];
	const char *p = path;
	if (is_program && realpath(path, real))
		p = real;
	char abs[PATH_MAX];
	if (p[0] != '/' && getcwd(abs, sizeof abs) &&
	    strlen(abs) + 1 + strlen(p) < sizeof abs) {
		strcat(abs, "/");
		strcat(abs, p);
		p = abs;
	}
	const char *slash = strrchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : 0;
	snprintf(out, len, "%.*s", (int)(n ? n : 1), n ? p : "/");
}

static int32_t deps_loaded_as(const deps_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->st.n; i++)
		for (size_t k = 0; k < c->st.a[i].names.n; k++)
			if (!strcmp(c->st.a[i].names.a[k], name))
				return (int32_t)i;
	return -1;
}

/* The DT_RPATH the loader follows: none when the object has a DT_RUNPATH
 * (glibc drops the RPATH of such an object when it reads it). */
static const char *deps_rpath(const binary *b)
{
	return b->runpath ? NULL : b->rpath;
}

/* Finds the file for `name` needed by object `by`; 1 found, 0 not. */
static int deps_find(deps_ctx *c, int32_t by, const char *name, char *path, size_t len)
{
	const deps_obj_state *need = &c->st.a[by];
	const char *origin = c->out->objs[by].origin;
	if (strchr(name, '/')) {
		if (!deps_expand(name, strlen(name), origin, path, len))
			return 0;
		return deps_usable(path);
	}
	if (!need->bin.runpath)
		for (int32_t l = by; l >= 0; l = c->st.a[l].loader)
			if (deps_search_list(deps_rpath(&c->st.a[l].bin), c->out->objs[l].origin,
					     name, path, len))
				return 1;
	/* $ORIGIN in LD_LIBRARY_PATH is the program's */
	if (deps_search_list(c->env->ld_library_path, c->out->objs[0].origin, name, path, len) ||
	    deps_search_list(need->bin.runpath, origin, name, path, len))
		return 1;
	if (need->bin.nodeflib)
		return 0;
	/* a cache the loader cannot read it ignores: so do we */
	char err[ERR_LEN];
	const char *cache = c->env->cache ? c->env->cache : "/etc/ld.so.cache";
	if (deps_cache_lookup(cache, name, path, len, err) > 0 && deps_usable(path))
		return 1;
	const char *const *dirs = c->env->default_dirs ? c->env->default_dirs : deps_default_dirs;
	return deps_search_dirs(dirs, name, path, len);
}

/* Opens the object at `path`, needed by `loader` under `name`; returns
 * its index (an existing one when the file is loaded already), or -1. */
static int32_t deps_add(deps_ctx *c, const char *path, const char *name, int32_t loader,
			bool is_program)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return deps_fail(c->err, "%s: %s", path, strerror(errno));
	for (size_t i = 0; i < c->st.n; i++)
		if (c->st.a[i].dev == st.st_dev && c->st.a[i].ino == st.st_ino) {
			vec_push(c->st.a[i].names, xstrdup(name));
			return (int32_t)i;
		}
	bool interp = c->interp && st.st_dev == c->interp_dev && st.st_ino == c->interp_ino;
	if (interp)
		path = c->interp;   /* the loader is known by the program's name for it */
	deps_obj_state s = { .dev = st.st_dev, .ino = st.st_ino, .loader = loader };
	char err[ERR_LEN];
	if (elf_open(&s.bin, path, err) < 0) {
		snprintf(c->err, ERR_LEN, "%.*s: %s", (int)(ERR_LEN / 2), path, err);
		return -1;
	}
	vec_push(s.names, xstrdup(name));
	vec_push(s.names, xstrdup(path));
	if (s.bin.soname)
		vec_push(s.names, xstrdup(s.bin.soname));
	deps_object o = { .name = xstrdup(name), .path = xstrdup(path), .needed_by = loader,
			  .interp = interp, .has_build_id = s.bin.has_build_id };
	o.soname = s.bin.soname ? xstrdup(s.bin.soname) : NULL;
	snprintf(o.id_hex, sizeof o.id_hex, "%s", s.bin.id_hex);
	char origin[PATH_MAX];
	deps_origin(path, is_program, origin, sizeof origin);
	o.origin = xstrdup(origin);
	deps_list *d = c->out;
	d->objs = xrealloc(d->objs, (d->n + 1) * sizeof *d->objs);
	d->objs[d->n++] = o;
	vec_push(c->st, s);
	return (int32_t)(d->n - 1);
}

static void deps_missing(deps_ctx *c, const char *name, int32_t by)
{
	deps_list *d = c->out;
	d->missing = xrealloc(d->missing, (d->nmissing + 1) * sizeof *d->missing);
	d->missing[d->nmissing++] = (deps_missing_lib){ xstrdup(name), by };
}

/* Whether `name` is the interpreter (by its path or soname) and it has
 * not taken its place in the load order yet. */
static bool deps_names_interp(const deps_ctx *c, const char *name)
{
	return c->interp && !c->interp_placed &&
	       (!strcmp(name, c->interp) || (c->interp_soname && !strcmp(name, c->interp_soname)));
}

/* Breadth-first over the needs, in DT_NEEDED order, as ld.so's
 * _dl_map_object_deps builds the search list. */
static int deps_closure(deps_ctx *c)
{
	for (size_t i = 0; i < c->st.n; i++) {
		for (size_t k = 0; k < c->st.a[i].bin.nneeded; k++) {
			const char *name = c->st.a[i].bin.needed[k];
			char path[PATH_MAX];
			if (deps_loaded_as(c, name) >= 0)
				continue;
			if (deps_names_interp(c, name))
				snprintf(path, sizeof path, "%s", c->interp);
			else if (!deps_find(c, (int32_t)i, name, path, sizeof path)) {
				deps_missing(c, name, (int32_t)i);
				continue;
			}
			int32_t at = deps_add(c, path, name, (int32_t)i, false);
			if (at < 0)
				return -1;
			c->interp_placed |= c->out->objs[at].interp;
		}
	}
	return 0;
}

/* The kernel maps the interpreter before the loader runs: a need of its
 * path or soname (libc needs ld-linux-x86-64.so.2) finds it without a
 * search, and it takes its place in the load order there, or last. */
static int deps_open_interp(deps_ctx *c, const char *interp, char **soname)
{
	struct stat st;
	binary b;
	char err[ERR_LEN];
	if (stat(interp, &st) != 0)
		return deps_fail(c->err, "%s: %s", interp, strerror(errno));
	if (elf_open(&b, interp, err) < 0) {
		snprintf(c->err, ERR_LEN, "%.*s: %s", (int)(ERR_LEN / 2), interp, err);
		return -1;
	}
	*soname = b.soname ? xstrdup(b.soname) : NULL;
	elf_close(&b);
	c->interp = interp;
	c->interp_soname = *soname;
	c->interp_dev = st.st_dev;
	c->interp_ino = st.st_ino;
	return 0;
}

int deps_resolve(deps_list *out, const char *prog, const deps_env *env,
		 char err[ERR_LEN])
{
	static const deps_env none;
	memset(out, 0, sizeof *out);
	deps_ctx c = { .env = env ? env : &none, .out = out, .err = err };
	err[0] = 0;
	char *interp = NULL, *isoname = NULL;
	int rc = deps_add(&c, prog, prog, -1, true) < 0 ? -1 : 0;
	if (rc == 0 && c.st.a[0].bin.interp) {
		interp = xstrdup(c.st.a[0].bin.interp);
		rc = deps_open_interp(&c, interp, &isoname);
	}
	if (rc == 0)
		rc = deps_closure(&c);
	if (rc == 0 && interp && !c.interp_placed)
		rc = deps_add(&c, interp, interp, -1, false) < 0 ? -1 : 0;
	for (size_t i = 0; i < c.st.n; i++) {
		elf_close(&c.st.a[i].bin);
		for (size_t k = 0; k < c.st.a[i].names.n; k++)
			free(c.st.a[i].names.a[k]);
		free(c.st.a[i].names.a);
	}
	free(c.st.a);
	free(interp);
	free(isoname);
	if (rc < 0)
		deps_free(out);
	return rc;
}

void deps_free(deps_list *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->objs[i].name);
		free(d->objs[i].path);
		free(d->objs[i].soname);
		free(d->objs[i].origin);
	}
	for (size_t i = 0; i < d->nmissing; i++)
		free(d->missing[i].name);
	free(d->objs);
	free(d->missing);
	memset(d, 0, sizeof *d);
}
