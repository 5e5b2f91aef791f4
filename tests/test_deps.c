/* Tests for analyzer/deps.c.  ldconfig (glibc's own cache writer and
 * reader, no code shared with ours) is the oracle for ld.so.cache lookups;
 * the closure is checked on libraries built here, with facts the loader's
 * rules fix (tests/deps.sh compares whole closures with ldd). */
#include "tests/testutil.h"
#include "analyzer/analyzer.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return system(cmd);
}


/* dir/lib/libb.so; dir/lib/liba.so needing it, no search path of its
 * own; dir/lib/libr.so and libq.so needing libb.so with DT_RUNPATH $ORIGIN
 * and /nonexistent; programs needing liba: prog-rpath (DT_RPATH
 * $ORIGIN/lib), prog-runpath (DT_RUNPATH $ORIGIN/lib); prog-runpath-r
 * needing libr, prog-rpath-q (DT_RPATH $ORIGIN/lib) needing libq;
 * cache/libc6.so.9 and a cache listing it. */
static int make_inputs(void **state)
{
	strcpy(dir, "/tmp/skel-deps-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	int rc = sh("mkdir -p %s/lib %s/cache", dir, dir);
	rc |= sh("printf 'int b_fn(int x) { return x + 1; }\\n' > %s/b.c", dir);
	rc |= sh("printf 'int b_fn(int); int a_fn(int x) { return b_fn(x); }\\n' > %s/a.c", dir);
	rc |= sh("printf 'int a_fn(int); int main(void) { return a_fn(0) - 1; }\\n' > %s/main.c", dir);
	rc |= sh("printf 'int b_fn(int); int main(void) { return b_fn(0) - 1; }\\n' > %s/mainr.c", dir);
	const char *so = "gcc -O1 -shared -fPIC -Wl,--no-as-needed";
	rc |= sh("%s -Wl,-soname,libb.so -o %s/lib/libb.so %s/b.c", so, dir, dir);
	rc |= sh("%s -Wl,-soname,liba.so -o %s/lib/liba.so %s/a.c -L%s/lib -lb", so, dir, dir, dir);
	rc |= sh("%s -Wl,-soname,libr.so -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' "
		 "-o %s/lib/libr.so %s/b.c -L%s/lib -lb", so, dir, dir, dir);
	rc |= sh("%s -Wl,-soname,libq.so -Wl,--enable-new-dtags -Wl,-rpath,/nonexistent "
		 "-o %s/lib/libq.so %s/b.c -L%s/lib -lb", so, dir, dir, dir);
	char cc[256];
	snprintf(cc, sizeof cc, "gcc -O1 -Wl,--no-as-needed -Wl,-rpath-link,%s/lib", dir);
	rc |= sh("%s -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o %s/prog-rpath "
		 "%s/main.c -L%s/lib -la", cc, dir, dir, dir);
	rc |= sh("%s -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o %s/prog-runpath "
		 "%s/main.c -L%s/lib -la", cc, dir, dir, dir);
	rc |= sh("%s -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o %s/prog-runpath-r "
		 "%s/mainr.c -L%s/lib -lr", cc, dir, dir, dir);
	rc |= sh("%s -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib' -o %s/prog-rpath-q "
		 "%s/mainr.c -L%s/lib -lq", cc, dir, dir, dir);
	rc |= sh("%s -Wl,-soname,libc6.so.9 -o %s/cache/libc6.so.9 %s/b.c", so, dir, dir);
	rc |= sh("echo %s/cache > %s/ld.so.conf && ldconfig -X -f %s/ld.so.conf -C %s/ld.so.cache",
		 dir, dir, dir, dir);
	return rc ? -1 : 0;
}

static int remove_inputs(void **state)
{
	return sh("rm -rf %s", dir) ? -1 : 0;
}

/* --------------------------------------------------------- ld.so.cache */

/* Every x86-64 entry `ldconfig -p` lists for the cache is what our reader
 * finds for its soname (the first one when a soname is listed twice). */
static void check_cache_against_ldconfig(const char *cache)
{
	char cmd[512], line[1024];
	snprintf(cmd, sizeof cmd, "ldconfig -p -C %s", cache);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t n = 0;
	char seen[4096] = " ";
	while (fgets(line, sizeof line, p)) {
		char soname[256], path[512];
		if (!strstr(line, "(libc6,x86-64") || strstr(line, "hwcap") ||
		    sscanf(line, " %255s (%*[^)]) => %511s", soname, path) != 2)
			continue;
		char key[260];
		snprintf(key, sizeof key, " %s ", soname);
		if (strstr(seen, key) || strlen(seen) + strlen(key) >= sizeof seen)
			continue;
		strcat(seen, key + 1);
		char got[512], err[ERR_LEN];
		assert_int_equal(deps_cache_lookup(cache, soname, got, sizeof got, err), 1);
		assert_string_equal(got, path);
		n++;
	}
	pclose(p);
	assert_true(n > 10);
}

static void cache_lookups_match_ldconfig(void **state)
{
	char cache[128];
	snprintf(cache, sizeof cache, "%s/ld.so.cache", dir);
	check_cache_against_ldconfig(cache);
	check_cache_against_ldconfig("/etc/ld.so.cache");
	char got[512], want[256], err[ERR_LEN];
	snprintf(want, sizeof want, "%s/cache/libc6.so.9", dir);
	assert_int_equal(deps_cache_lookup(cache, "libc6.so.9", got, sizeof got, err), 1);
	assert_string_equal(got, want);
	assert_int_equal(deps_cache_lookup(cache, "libskel-none.so.1", got, sizeof got, err), 0);
	assert_int_equal(deps_cache_lookup("/etc/ld.so.cache", "libc6.so.9", got, sizeof got, err), 0);
}

static void a_file_that_is_not_a_cache_is_an_error(void **state)
{
	char got[512], err[ERR_LEN] = "", path[128];
	snprintf(path, sizeof path, "%s/a.c", dir);
	assert_int_equal(deps_cache_lookup(path, "libc.so.6", got, sizeof got, err), -1);
	assert_non_null(strstr(err, "not a glibc ld.so.cache"));
	/* a cache cut short: the header's count runs past the end */
	snprintf(path, sizeof path, "%s/short.cache", dir);
	assert_int_equal(sh("head -c 200 %s/ld.so.cache > %s", dir, path), 0);
	err[0] = 0;
	assert_int_equal(deps_cache_lookup(path, "libc.so.6", got, sizeof got, err), -1);
	assert_non_null(strstr(err, "truncated"));
	/* no cache at all is no error: the loader goes on to the default dirs */
	assert_int_equal(deps_cache_lookup("/nonexistent/ld.so.cache", "libc.so.6", got, sizeof got,
					   err), 0);
}

/* ---------------------------------------------------------- the closure */

static const deps_object *find_obj(const deps_list *d, const char *soname)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->objs[i].soname && !strcmp(d->objs[i].soname, soname))
			return &d->objs[i];
	return NULL;
}

static void resolve_ok(deps_list *d, const char *prog)
{
	char path[128], err[ERR_LEN];
	snprintf(path, sizeof path, "%s/%s", dir, prog);
	if (deps_resolve(d, path, NULL, err) != 0)
		fail_msg("%s: %s", path, err);
}

/* DT_RPATH serves the needs of the objects the program loads too: libb,
 * needed by liba (which has no search path), comes from the program's
 * $ORIGIN/lib.  Load order: program, its needs, theirs. */
static void rpath_serves_the_whole_closure(void **state)
{
	deps_list d;
	resolve_ok(&d, "prog-rpath");
	const deps_object *a = find_obj(&d, "liba.so"), *b = find_obj(&d, "libb.so");
	assert_non_null(a);
	assert_non_null(b);
	char want[128];
	snprintf(want, sizeof want, "%s/lib/libb.so", dir);
	assert_string_equal(b->path, want);
	assert_string_equal(d.objs[b->needed_by].soname, "liba.so");
	assert_int_equal(a->needed_by, 0);
	assert_true(a < b);
	assert_int_equal(d.nmissing, 0);
	/* libc needs the loader, which the kernel mapped first: it is the
	 * program's PT_INTERP path, after libc, the last object */
	const deps_object *libc = find_obj(&d, "libc.so.6");
	assert_non_null(libc);
	const deps_object *ld = &d.objs[d.n - 1];
	assert_true(ld->interp);
	assert_string_equal(ld->path, "/lib64/ld-linux-x86-64.so.2");
	assert_true(libc < ld);
	for (size_t i = 0; i < d.n; i++)
		assert_true(d.objs[i].has_build_id && strlen(d.objs[i].id_hex) == 40);
	deps_free(&d);
}

/* DT_RUNPATH serves only the object's own needs: liba is found, libb
 * (liba's need) is not, and is listed as missing, needed by liba. */
static void runpath_serves_only_direct_needs(void **state)
{
	deps_list d;
	resolve_ok(&d, "prog-runpath");
	assert_non_null(find_obj(&d, "liba.so"));
	assert_null(find_obj(&d, "libb.so"));
	assert_int_equal(d.nmissing, 1);
	assert_string_equal(d.missing[0].name, "libb.so");
	assert_string_equal(d.objs[d.missing[0].needed_by].soname, "liba.so");
	deps_free(&d);
	/* libr's own DT_RUNPATH $ORIGIN finds libb beside it */
	resolve_ok(&d, "prog-runpath-r");
	const deps_object *b = find_obj(&d, "libb.so");
	assert_non_null(b);
	assert_string_equal(d.objs[b->needed_by].soname, "libr.so");
	assert_int_equal(d.nmissing, 0);
	deps_free(&d);
	/* an object with a DT_RUNPATH turns off the DT_RPATHs of the objects
	 * that loaded it: the program's $ORIGIN/lib does not serve libq */
	resolve_ok(&d, "prog-rpath-q");
	assert_non_null(find_obj(&d, "libq.so"));
	assert_int_equal(d.nmissing, 1);
	assert_string_equal(d.missing[0].name, "libb.so");
	deps_free(&d);
}

/* LD_LIBRARY_PATH comes after DT_RPATH and before DT_RUNPATH. */
static void ld_library_path_sits_between_rpath_and_runpath(void **state)
{
	char other[128], err[ERR_LEN], path[128], want[160];
	snprintf(other, sizeof other, "%s/other", dir);
	assert_int_equal(sh("mkdir -p %s && cp %s/lib/liba.so %s/lib/libb.so %s/", other, dir, dir,
			    other), 0);
	deps_env env = { .ld_library_path = other };
	deps_list d;
	snprintf(path, sizeof path, "%s/prog-rpath", dir);
	assert_int_equal(deps_resolve(&d, path, &env, err), 0);
	snprintf(want, sizeof want, "%s/lib/liba.so", dir);
	assert_string_equal(find_obj(&d, "liba.so")->path, want);
	deps_free(&d);
	snprintf(path, sizeof path, "%s/prog-runpath", dir);
	assert_int_equal(deps_resolve(&d, path, &env, err), 0);
	snprintf(want, sizeof want, "%s/liba.so", other);
	assert_string_equal(find_obj(&d, "liba.so")->path, want);
	/* and it serves libb, which liba's loader's RUNPATH did not */
	assert_int_equal(d.nmissing, 0);
	deps_free(&d);
}

static void unreadable_program_is_an_error(void **state)
{
	deps_list d;
	char err[ERR_LEN] = "", path[128];
	assert_int_equal(deps_resolve(&d, "/nonexistent/prog", NULL, err), -1);
	assert_non_null(strstr(err, "/nonexistent/prog"));
	snprintf(path, sizeof path, "%s/a.c", dir);
	assert_int_equal(deps_resolve(&d, path, NULL, err), -1);
	assert_non_null(strstr(err, "not an ELF"));
	assert_int_equal(d.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cache_lookups_match_ldconfig),
		cmocka_unit_test(a_file_that_is_not_a_cache_is_an_error),
		cmocka_unit_test(rpath_serves_the_whole_closure),
		cmocka_unit_test(runpath_serves_only_direct_needs),
		cmocka_unit_test(ld_library_path_sits_between_rpath_and_runpath),
		cmocka_unit_test(unreadable_program_is_an_error),
	};
	return cmocka_run_group_tests(tests, make_inputs, remove_inputs);
}
