/* Tests for analyzer/elf.c.  The inputs are compiled here from a small C
 * program; nm, readelf and objdump (binutils, which share no code with
 * libelf or our readers) are the oracles for symbols, FDEs, PLT stub names
 * and build-ids. */
#include "tests/testutil.h"
#include "analyzer/analyzer.h"

#include <elf.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"long skel_t_data = 0x1122334455667788;\n"
	"long skel_t_bss;\n"
	"int skel_t_square(int x) { return x * x; }\n"
	"static __attribute__((noinline)) int skel_t_local(int x) { return x + (int)skel_t_bss; }\n"
	"int main(int argc, char **argv) {\n"
	"	char *p = malloc(strlen(argv[0]) + 1);\n"
	"	strcpy(p, argv[0]);\n"
	"	printf(\"%d %s %ld\\n\", skel_t_square(argc) + skel_t_local(argc), p, skel_t_data);\n"
	"	puts(\"done\");\n"
	"	free(p);\n"
	"	return 0;\n"
	"}\n";

/* A shared object: exported and static functions, a static function
 * whose address only a data word holds (a RELATIVE relocation), a data
 * word that holds a code address without a relocation (a plain number to
 * the loader: SKEL_T_NUMBER is set to skel_t_plain's address in a second
 * build), a constructor, IFUNCs — one local, called through an
 * IRELATIVE PLT slot, one exported — and a global function of hidden
 * visibility. */
static const char so_src[] =
	"#ifndef SKEL_T_NUMBER\n"
	"#define SKEL_T_NUMBER 1\n"
	"#endif\n"
	"static __attribute__((noinline)) int skel_t_hidden_cb(int x) { return x * 3 + 1; }\n"
	"static __attribute__((noinline)) int skel_t_plain(int x) { return x ^ 0x55; }\n"
	"int (*skel_t_ptr)(int) = skel_t_hidden_cb;\n"
	"long skel_t_number = SKEL_T_NUMBER;\n"
	"int skel_t_seen;\n"
	"static __attribute__((constructor)) void skel_t_ctor(void) { skel_t_seen = 1; }\n"
	"static int skel_t_impl(int x) { return x + 7; }\n"
	"static void *skel_t_resolver(void) { return (void *)skel_t_impl; }\n"
	"static int skel_t_pick(int) __attribute__((ifunc(\"skel_t_resolver\")));\n"
	"int skel_t_exported_ifunc(int) __attribute__((ifunc(\"skel_t_resolver\")));\n"
	"__attribute__((visibility(\"hidden\"), noinline)) int skel_t_hidden_vis(int x) { return x - 2; }\n"
	"int skel_t_exported(int x) { return skel_t_ptr(x) + skel_t_plain(x) + skel_t_pick(x) +\n"
	"	skel_t_hidden_vis(x); }\n";

static char dir[64];
static char pie[128], nopie[128], stripped[128], now[128], noplt[128], ibt[128],
	nobid[128], shlib[128], object[128], so[128], so_stripped[128], so_runpath[128];

/* --------------------------------------------------------------- helpers */

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	return system(cmd);
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Address of `name` according to nm, 0 when nm does not list it. */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[512], line[512], sym[256], type;
	unsigned long addr;
	uint64_t found = 0;
	snprintf(cmd, sizeof cmd, "nm --defined-only %s 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p))
		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) == 3 && strcmp(sym, name) == 0)
			found = addr;
	pclose(p);
	return found;
}

/* Whether nm lists a code symbol (type T, t, W or w) at addr. */
static bool nm_has_code_at(const char *path, uint64_t at)
{
	char cmd[512], line[512], type;
	unsigned long addr;
	bool found = false;
	snprintf(cmd, sizeof cmd, "nm --defined-only %s 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p))
		if (sscanf(line, "%lx %c", &addr, &type) == 2 && addr == at && strchr("TtWw", type))
			found = true;
	pclose(p);
	return found;
}

typedef struct range { uint64_t lo, hi; } range;

/* Address ranges of the .plt* sections, from readelf -S. */
static size_t readelf_plt_ranges(const char *path, range *out, size_t max)
{
	char cmd[512], line[512];
	size_t n = 0;
	snprintf(cmd, sizeof cmd, "readelf -SW %s", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		char name[64], type[64];
		unsigned long addr, off, size;
		const char *q = strchr(line, ']');
		if (q && sscanf(q + 1, "%63s %63s %lx %lx %lx", name, type, &addr, &off, &size) == 5 &&
		    strncmp(name, ".plt", 4) == 0 && n < max)
			out[n++] = (range){ addr, addr + size };
	}
	pclose(p);
	return n;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* FDE starts outside .plt* according to readelf's .eh_frame dump, sorted
 * and unique; returns how many (malloc'd into *out). */
static size_t readelf_fde_starts(const char *path, uint64_t **out)
{
	range plt[8];
	size_t nplt = readelf_plt_ranges(path, plt, 8);
	char cmd[512], line[512];
	size_t n = 0, cap = 1024;
	uint64_t *v = malloc(cap * sizeof *v);
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames %s 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		unsigned long lo, hi;
		const char *q = strstr(line, " FDE ");
		q = q ? strstr(q, "pc=") : NULL;
		if (!q || sscanf(q, "pc=%lx..%lx", &lo, &hi) != 2)
			continue;
		bool in_plt = false;
		for (size_t i = 0; i < nplt; i++)
			in_plt |= lo >= plt[i].lo && lo < plt[i].hi;
		if (in_plt)
			continue;
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[n++] = lo;
	}
	pclose(p);
	qsort(v, n, sizeof *v, cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*out = v;
	return u;
}

/* Asserts that our PLT stubs are exactly objdump's "<name@plt>" labels in
 * the .plt* sections; returns the number of stubs. */
static size_t check_plts_against_objdump(const binary *b)
{
	char cmd[512], line[512], name[256];
	unsigned long addr;
	size_t n = 0;
	snprintf(cmd, sizeof cmd,
		 "objdump -d -j .plt -j .plt.sec -j .plt.got %s 2>/dev/null", b->path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		if (sscanf(line, "%lx <%255[^>]>:", &addr, name) != 2)
			continue;
		char *at = strstr(name, "@plt");
		if (!at || at[4])       /* "x@plt-0x10" is PLT0 */
			continue;
		*at = 0;
		const char *ours = elf_plt_name(b, addr);
		if (!ours || strcmp(ours, name) != 0)
			fail_msg("stub %#lx: objdump says %s, we say %s", addr, name, ours ? ours : "nothing");
		n++;
	}
	pclose(p);
	assert_int_equal(n, b->nplts);
	return n;
}

static bool has_plt(const binary *b, const char *name)
{
	for (size_t i = 0; i < b->nplts; i++)
		if (strcmp(b->plts[i].name, name) == 0)
			return true;
	return false;
}

static void open_ok(binary *b, const char *path)
{
	char err[ERR_LEN];
	if (elf_open(b, path, err) != 0)
		fail_msg("%s: %s", path, err);
}

/* elf_open must fail with a message containing `keyword`, leaving the
 * struct zeroed so elf_close is harmless. */
static void expect_error(const char *path, const char *keyword)
{
	binary b;
	char err[ERR_LEN] = "";
	assert_int_equal(elf_open(&b, path, err), -1);
	if (!strstr(err, keyword))
		fail_msg("%s: expected \"%s\" in \"%s\"", path, keyword, err);
	assert_null(b.map);
	assert_null(b.sections);
	elf_close(&b);
}

static void expect_error_bytes(const void *data, size_t len, const char *keyword)
{
	const char *path = temp_file(data, len);
	assert_non_null(path);
	expect_error(path, keyword);
	unlink(path);
}

/* --------------------------------------------------------------- set-up */


static uint64_t nm_addr(const char *path, const char *name);

/* so, so_stripped, so_runpath from so_src; the second build of so puts
 * skel_t_plain's address into skel_t_number (the layout does not move: the
 * word only changes value). */
static int build_shared_objects(void)
{
	char src[128];
	snprintf(src, sizeof src, "%s/so.c", dir);
	snprintf(so, sizeof so, "%s/libskelt.so", dir);
	snprintf(so_stripped, sizeof so_stripped, "%s/libskelt-stripped.so", dir);
	snprintf(so_runpath, sizeof so_runpath, "%s/libskelt-runpath.so", dir);
	FILE *f = fopen(src, "w");
	if (!f)
		return -1;
	fputs(so_src, f);
	fclose(f);
	const char *cc = "gcc -O1 -shared -fPIC -Wl,--build-id -Wl,-soname,libskelt.so.1";
	int rc = sh("%s -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/rp' -o %s %s", cc, so, src);
	uint64_t plain = rc ? 0 : nm_addr(so, "skel_t_plain");
	rc |= !plain;
	rc |= sh("%s -DSKEL_T_NUMBER=%#lx -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/rp' -o %s %s",
		 cc, (unsigned long)plain, so, src);
	rc |= plain != nm_addr(so, "skel_t_plain");
	rc |= sh("strip -o %s %s", so_stripped, so);
	rc |= sh("%s -Wl,--enable-new-dtags -Wl,-rpath,/skel/rp -o %s %s -Wl,--no-as-needed -lm",
		 cc, so_runpath, src);
	return rc;
}

static int build_inputs(void **state)
{
	strcpy(dir, "/tmp/skel-elf-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char src[128];
	snprintf(src, sizeof src, "%s/prog.c", dir);
	FILE *f = fopen(src, "w");
	if (!f)
		return -1;
	fputs(prog_src, f);
	fclose(f);
	snprintf(pie, sizeof pie, "%s/pie", dir);
	snprintf(nopie, sizeof nopie, "%s/nopie", dir);
	snprintf(stripped, sizeof stripped, "%s/pie-stripped", dir);
	snprintf(now, sizeof now, "%s/now", dir);
	snprintf(noplt, sizeof noplt, "%s/noplt", dir);
	snprintf(ibt, sizeof ibt, "%s/ibt", dir);
	snprintf(nobid, sizeof nobid, "%s/nobid", dir);
	snprintf(shlib, sizeof shlib, "%s/lib.so", dir);
	snprintf(object, sizeof object, "%s/prog.o", dir);
	const char *cc = "gcc -O1 -Wl,--build-id";
	int rc = 0;
	rc |= sh("%s -fPIE -pie -o %s %s", cc, pie, src);
	rc |= sh("%s -fno-PIE -no-pie -o %s %s", cc, nopie, src);
	rc |= sh("strip -o %s %s", stripped, pie);
	rc |= sh("%s -Wl,-z,now -o %s %s", cc, now, src);
	rc |= sh("%s -fno-plt -o %s %s", cc, noplt, src);
	rc |= sh("%s -fcf-protection=full -Wl,-z,ibt -o %s %s", cc, ibt, src);
	rc |= sh("gcc -O1 -Wl,--build-id=none -o %s %s", nobid, src);
	rc |= sh("%s -shared -fPIC -o %s %s", cc, shlib, src);
	rc |= sh("gcc -O1 -c -o %s %s", object, src);
	rc |= build_shared_objects();
	return rc ? -1 : 0;
}

static int remove_inputs(void **state)
{
	return sh("rm -rf %s", dir) ? -1 : 0;
}

/* ------------------------------------------------------------- symbols */

static void check_symbols(const char *path)
{
	binary b;
	open_ok(&b, path);
	assert_false(b.stripped);
	static const char *const names[] = { "main", "skel_t_square", "skel_t_local" };
	for (size_t i = 0; i < 3; i++) {
		uint64_t addr = nm_addr(path, names[i]);
		assert_true(addr != 0);
		assert_string_equal(elf_func_name(&b, addr), names[i]);
	}
	for (size_t i = 0; i < b.nfuncs; i++) {
		if (i)
			assert_true(b.funcs[i - 1].addr < b.funcs[i].addr);
		if (!nm_has_code_at(path, b.funcs[i].addr))
			fail_msg("%s at %#lx is not a code symbol for nm", b.funcs[i].name,
				 (unsigned long)b.funcs[i].addr);
	}
	elf_close(&b);
}

static void symbols_match_nm_in_pie(void **state)
{
	check_symbols(pie);
}

static void symbols_match_nm_in_non_pie(void **state)
{
	check_symbols(nopie);
}

static void stripped_binary_has_no_symtab_functions(void **state)
{
	binary b;
	open_ok(&b, stripped);
	assert_true(b.stripped);
	assert_null(elf_func_name(&b, nm_addr(pie, "skel_t_square")));
	elf_close(&b);
}

/* ----------------------------------------------------------------- FDEs */

static void check_fdes_against_readelf(const char *path)
{
	binary b;
	open_ok(&b, path);
	uint64_t *want;
	size_t n = readelf_fde_starts(path, &want);
	assert_true(n > 0);
	assert_int_equal(b.nfdes, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(b.fde_starts[i], want[i]);
		assert_true(b.fde_ends[i] > b.fde_starts[i]);
	}
	free(want);
	elf_close(&b);
}

static void fde_starts_match_readelf(void **state)
{
	check_fdes_against_readelf(pie);
	check_fdes_against_readelf(nopie);
	check_fdes_against_readelf(ibt);
	check_fdes_against_readelf("/usr/bin/ls");
}

static bool has_fde_start(const binary *b, uint64_t addr)
{
	return bsearch(&addr, b->fde_starts, b->nfdes, sizeof addr, cmp_u64) != NULL;
}

static void stripped_copy_has_same_fde_starts(void **state)
{
	binary full, bare;
	open_ok(&full, pie);
	open_ok(&bare, stripped);
	assert_int_equal(full.nfdes, bare.nfdes);
	assert_memory_equal(full.fde_starts, bare.fde_starts, full.nfdes * sizeof(uint64_t));
	assert_memory_equal(full.fde_ends, bare.fde_ends, full.nfdes * sizeof(uint64_t));
	assert_true(has_fde_start(&bare, nm_addr(pie, "main")));
	assert_true(has_fde_start(&bare, nm_addr(pie, "skel_t_square")));
	assert_true(has_fde_start(&bare, nm_addr(pie, "skel_t_local")));
	/* every function symbol that begins an FDE range is an FDE start;
	 * crt routines such as frame_dummy have no FDE at all */
	for (size_t i = 0; i < full.nfuncs; i++) {
		uint64_t a = full.funcs[i].addr;
		for (size_t k = 0; k < full.nfdes; k++)
			if (a >= full.fde_starts[k] && a < full.fde_ends[k])
				assert_int_equal(full.fde_starts[k], a);
	}
	elf_close(&full);
	elf_close(&bare);
}

/* ------------------------------------------------------------------ PLT */

static void plt_names_match_objdump(const char *path, bool expect_stubs)
{
	binary b;
	open_ok(&b, path);
	size_t n = check_plts_against_objdump(&b);
	if (expect_stubs) {
		assert_true(n > 0);
		assert_true(has_plt(&b, "malloc"));
		assert_true(has_plt(&b, "puts") || has_plt(&b, "printf"));
	}
	elf_close(&b);
}

static void plt_names_for_lazy_binding(void **state)
{
	plt_names_match_objdump(pie, true);
	plt_names_match_objdump(nopie, true);
}

static void plt_names_for_immediate_binding(void **state)
{
	plt_names_match_objdump(now, true);
}

static void plt_names_for_ibt_plt_sec(void **state)
{
	plt_names_match_objdump(ibt, true);
}

static void plt_names_survive_stripping(void **state)
{
	plt_names_match_objdump(stripped, true);
}

/* -fno-plt calls through the GOT directly: whatever stubs remain (from crt
 * objects) are still named correctly, and the program's imports have none. */
static void no_plt_binary_has_no_stubs_for_its_calls(void **state)
{
	binary b;
	open_ok(&b, noplt);
	check_plts_against_objdump(&b);
	assert_false(has_plt(&b, "malloc"));
	elf_close(&b);
}

static void usr_bin_ls_loads(void **state)
{
	binary b;
	open_ok(&b, "/usr/bin/ls");
	assert_true(b.pie);
	assert_true(b.stripped);
	assert_true(b.nfdes > 100);
	assert_true(has_plt(&b, "malloc"));
	check_plts_against_objdump(&b);
	elf_close(&b);
}

/* ------------------------------------------------------------- identity */

/* The build-id as readelf -n prints it. */
static void readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[512], line[512];
	out[0] = 0;
	snprintf(cmd, sizeof cmd, "readelf -n %s", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		const char *q = strstr(line, "Build ID: ");
		if (q)
			snprintf(out, len, "%.*s", (int)strcspn(q + 10, "\n"), q + 10);
	}
	pclose(p);
}

static void build_id_is_kept_by_strip(void **state)
{
	binary full, bare;
	char want[160];
	open_ok(&full, pie);
	open_ok(&bare, stripped);
	assert_true(full.has_build_id);
	assert_true(bare.has_build_id);
	readelf_build_id(pie, want, sizeof want);
	assert_string_equal(full.id_hex, want);
	assert_int_equal(full.id_len, strlen(want) / 2);
	assert_string_equal(bare.id_hex, full.id_hex);
	assert_memory_equal(bare.id, full.id, full.id_len);
	elf_close(&full);
	elf_close(&bare);
}

static void content_hash_identifies_binary_without_build_id(void **state)
{
	binary a, again, other;
	open_ok(&a, nobid);
	open_ok(&again, nobid);
	assert_false(a.has_build_id);
	assert_int_equal(a.id_len, 8);
	assert_int_equal(strlen(a.id_hex), 16);
	assert_string_equal(a.id_hex, again.id_hex);
	{
		/* FNV-1a 64 of the file, as the recorder computes it */
		size_t n;
		unsigned char *all = (unsigned char *)read_all(nobid, &n);
		unsigned long long h = 0xcbf29ce484222325ull;
		for (size_t i = 0; i < n; i++)
			h = (h ^ all[i]) * 0x100000001b3ull;
		free(all);
		char hex[17];
		snprintf(hex, sizeof hex, "%016llx", h);
		assert_string_equal(a.id_hex, hex);
	}
	/* one extra byte past everything the loader reads changes the id */
	size_t len;
	char *bytes = read_all(nobid, &len);
	assert_non_null(bytes);
	bytes[len] = 0;
	const char *copy = temp_file(bytes, len + 1);
	free(bytes);
	open_ok(&other, copy);
	assert_false(other.has_build_id);
	assert_string_not_equal(other.id_hex, a.id_hex);
	unlink(copy);
	elf_close(&a);
	elf_close(&again);
	elf_close(&other);
}

/* ------------------------------------------------------ pie, entry, queries */

static void pie_flag_and_entry_follow_the_link_mode(void **state)
{
	binary p, n;
	open_ok(&p, pie);
	open_ok(&n, nopie);
	assert_true(p.pie);
	assert_false(n.pie);
	assert_int_equal(p.entry, nm_addr(pie, "_start"));
	assert_int_equal(n.entry, nm_addr(nopie, "_start"));
	elf_close(&p);
	elf_close(&n);
}

static void queries_find_code_data_and_sections(void **state)
{
	binary b;
	open_ok(&b, nopie);
	uint64_t main_at = nm_addr(nopie, "main");
	uint64_t data_at = nm_addr(nopie, "skel_t_data");
	uint64_t bss_at = nm_addr(nopie, "skel_t_bss");
	size_t avail = 0;
	const uint8_t *code = elf_code_at(&b, main_at, &avail);
	assert_non_null(code);
	assert_true(avail > 0);
	const elf_section *text = elf_section_at(&b, main_at);
	assert_non_null(text);
	assert_string_equal(text->name, ".text");
	assert_true(text->exec && text->alloc && !text->write);
	assert_int_equal(avail, text->addr + text->size - main_at);
	assert_ptr_equal(code, text->data + (main_at - text->addr));

	uint64_t v = 0;
	assert_int_equal(elf_read(&b, data_at, 8, &v), 0);
	assert_int_equal(v, 0x1122334455667788ull);
	assert_int_equal(elf_read(&b, data_at, 4, &v), 0);
	assert_int_equal(v, 0x55667788);
	assert_int_equal(elf_read(&b, data_at + 7, 1, &v), 0);
	assert_int_equal(v, 0x11);
	assert_int_equal(elf_read(&b, data_at, 3, &v), -1);
	assert_int_equal(elf_read(&b, bss_at, 8, &v), -1);     /* no file bytes */
	assert_string_equal(elf_section_at(&b, bss_at)->name, ".bss");
	assert_null(elf_code_at(&b, data_at, &avail));
	assert_null(elf_section_at(&b, 0));

	const elf_section *data = elf_section_at(&b, data_at);
	assert_true(data->write && data->alloc && !data->exec);
	assert_int_equal(elf_read(&b, data->addr + data->size - 4, 8, &v), -1);

	assert_null(elf_func_name(&b, main_at + 1));
	assert_null(elf_plt_name(&b, main_at));
	elf_close(&b);
}

/* --------------------------------------------------------------- errors */

static void text_file_is_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\necho hello\n";
	expect_error_bytes(text, sizeof text - 1, "not an ELF");
}

static void empty_file_is_reported(void **state)
{
	expect_error_bytes("", 0, "empty");
}

static void missing_file_is_reported(void **state)
{
	expect_error("/nonexistent/skel-test", "cannot open");
	expect_error("/tmp", "not a regular file");
}

/* A named pipe as APP: opening it for reading used to wait for a writer
 * forever (`skel summary FIFO` hung).  The alarm turns a hang into a
 * failure instead of a stuck `make check`. */
static void named_pipe_is_refused_without_waiting(void **state)
{
	char fifo[160];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(20);
	expect_error(fifo, "not a regular file (a named pipe)");
	alarm(0);
	unlink(fifo);
	expect_error("/tmp", "(a directory)");
	expect_error("/dev/null", "(a device)");
}

/* e_ident[EI_VERSION] other than EV_CURRENT: libelf declines the file
 * without setting an error, which printed "libelf: no error". */
static void bad_identification_version_is_named(void **state)
{
	size_t len;
	char *bytes = read_all(pie, &len);
	assert_non_null(bytes);
	bytes[EI_VERSION] = 0;
	expect_error_bytes(bytes, len, "identification version 0");
	bytes[EI_VERSION] = 7;
	expect_error_bytes(bytes, len, "identification version 7");
	expect_error_bytes(bytes, EI_VERSION, "truncated");
	free(bytes);
}

static void truncated_header_region_is_reported(void **state)
{
	size_t len;
	char *bytes = read_all(pie, &len);
	assert_non_null(bytes);
	expect_error_bytes(bytes, 100, "truncated");
	expect_error_bytes(bytes, 40, "truncated");
	free(bytes);
}

static void cut_in_section_headers_is_reported(void **state)
{
	size_t len;
	char *bytes = read_all(pie, &len);
	assert_non_null(bytes);
	Elf64_Ehdr eh;
	memcpy(&eh, bytes, sizeof eh);
	size_t cut = eh.e_shoff + eh.e_shnum / 2 * sizeof(Elf64_Shdr) + 10;
	assert_true(cut < len);
	expect_error_bytes(bytes, cut, "section headers");
	expect_error_bytes(bytes, cut, "truncated");
	free(bytes);
}

static Elf64_Ehdr header64(unsigned type, unsigned machine)
{
	Elf64_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = type;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof eh;
	return eh;
}

static void thirty_two_bit_elf_is_refused(void **state)
{
	Elf32_Ehdr eh = { 0 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_386;
	eh.e_ehsize = sizeof eh;
	expect_error_bytes(&eh, sizeof eh, "32-bit");
}

static void aarch64_elf_is_refused(void **state)
{
	Elf64_Ehdr eh = header64(ET_EXEC, EM_AARCH64);
	expect_error_bytes(&eh, sizeof eh, "AArch64");
	eh.e_machine = 0x1234;
	expect_error_bytes(&eh, sizeof eh, "machine 4660");
}

static void core_file_is_refused(void **state)
{
	Elf64_Ehdr eh = header64(ET_CORE, EM_X86_64);
	expect_error_bytes(&eh, sizeof eh, "core");
}


/* ------------------------------------------------------ shared objects */

static void shared_objects_load_as_shared(void **state)
{
	binary b, e;
	open_ok(&b, shlib);
	assert_true(b.shared);
	assert_false(b.pie);
	elf_close(&b);
	open_ok(&e, pie);
	assert_false(e.shared);
	elf_close(&e);
	/* glibc's libc.so.6 has a PT_INTERP (it runs) but is a library; the
	 * loader has neither an interpreter nor a zero entry */
	open_ok(&b, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_true(b.shared);
	assert_false(b.pie);
	assert_non_null(b.interp);
	assert_string_equal(b.soname, "libc.so.6");
	assert_true(b.has_build_id);
	elf_close(&b);
	open_ok(&b, "/lib64/ld-linux-x86-64.so.2");
	assert_true(b.shared);
	assert_null(b.interp);
	assert_true(b.entry != 0);
	assert_int_equal(b.nneeded, 0);
	elf_close(&b);
}

/* The DT_NEEDED entries readelf -d lists, in order, joined by spaces. */
static void readelf_needed(const char *path, char *out, size_t len)
{
	char cmd[512], line[512];
	out[0] = 0;
	snprintf(cmd, sizeof cmd, "readelf -dW %s", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof line, p)) {
		const char *q = strstr(line, "(NEEDED)");
		q = q ? strstr(q, "Shared library: [") : NULL;
		if (q)
			snprintf(out + strlen(out), len - strlen(out), "%s%.*s", *out ? " " : "",
				 (int)strcspn(q + 17, "]"), q + 17);
	}
	pclose(p);
}

static void dynamic_section_gives_soname_needs_and_search_paths(void **state)
{
	binary b;
	open_ok(&b, so);
	assert_string_equal(b.soname, "libskelt.so.1");
	assert_string_equal(b.rpath, "$ORIGIN/rp");
	assert_null(b.runpath);
	assert_null(b.interp);
	elf_close(&b);
	open_ok(&b, so_runpath);
	assert_null(b.rpath);
	assert_string_equal(b.runpath, "/skel/rp");
	char want[512], got[512] = "";
	readelf_needed(so_runpath, want, sizeof want);
	assert_non_null(strstr(want, "libm.so.6"));
	for (size_t i = 0; i < b.nneeded; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", b.needed[i]);
	assert_string_equal(got, want);
	elf_close(&b);
	const char *ls = "/usr/bin/ls";
	open_ok(&b, ls);
	assert_string_equal(b.interp, "/lib64/ld-linux-x86-64.so.2");
	readelf_needed(ls, want, sizeof want);
	got[0] = 0;
	for (size_t i = 0; i < b.nneeded; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", b.needed[i]);
	assert_string_equal(got, want);
	elf_close(&b);
}

static bool in_sorted(const uint64_t *v, size_t n, uint64_t a)
{
	return n && bsearch(&a, v, n, sizeof a, cmp_u64) != NULL;
}

/* Routine starts and entries of a shared object, with and without its
 * .symtab (the addresses come from nm on the unstripped copy). */
static void check_shared_routines(const char *path)
{
	program p;
	char err[ERR_LEN];
	if (program_load(&p, path, err) != 0)
		fail_msg("%s: %s", path, err);
	uint64_t exported = nm_addr(so, "skel_t_exported");
	uint64_t cb = nm_addr(so, "skel_t_hidden_cb");
	uint64_t plain = nm_addr(so, "skel_t_plain");
	uint64_t ctor = nm_addr(so, "skel_t_ctor");
	uint64_t resolver = nm_addr(so, "skel_t_resolver");
	assert_true(exported && cb && plain && ctor && resolver);
	assert_true(in_sorted(p.bin.exports, p.bin.nexports, resolver));   /* the exported IFUNC */
	/* exported: a routine other objects enter, its address theirs */
	assert_non_null(program_routine_at(&p, exported));
	assert_true(program_is_entry(&p, exported));
	assert_true(in_sorted(p.taken, p.ntaken, exported));
	/* global but hidden: not exported, only called */
	uint64_t hidden = nm_addr(so, "skel_t_hidden_vis");
	assert_non_null(program_routine_at(&p, hidden));
	assert_false(in_sorted(p.taken, p.ntaken, hidden));
	assert_false(in_sorted(p.bin.exports, p.bin.nexports, hidden));
	assert_true(in_sorted(p.bin.exports, p.bin.nexports, exported));
	/* static, its address in a relocated data word: taken, an entry */
	assert_non_null(program_routine_at(&p, cb));
	assert_true(program_is_entry(&p, cb));
	assert_true(in_sorted(p.taken, p.ntaken, cb));
	/* static, only called; skel_t_number holds its address, but no
	 * relocation makes that word a pointer */
	assert_non_null(program_routine_at(&p, plain));
	assert_false(in_sorted(p.taken, p.ntaken, plain));
	/* the loader calls the constructor and the IFUNC resolver (IRELATIVE) */
	assert_true(in_sorted(p.bin.init_funcs, p.bin.ninit_funcs, ctor));
	assert_true(in_sorted(p.bin.init_funcs, p.bin.ninit_funcs, resolver));
	assert_non_null(program_routine_at(&p, ctor));
	assert_non_null(program_routine_at(&p, resolver));
	assert_true(program_is_entry(&p, resolver));
	program_free(&p);
}

static void shared_object_routines_and_entries(void **state)
{
	check_shared_routines(so);
	check_shared_routines(so_stripped);
}

/* The local IFUNC's calls go through a PLT stub filled by an IRELATIVE
 * relocation: the stub is named after its resolver's symbol (objdump says
 * "*ABS*+0x...@plt", so it is no oracle here). */
static void irelative_plt_stub_is_named_after_its_resolver(void **state)
{
	binary b;
	open_ok(&b, so);
	const char *name = NULL;
	for (size_t i = 0; i < b.nplts && !name; i++)
		name = b.plts[i].name;
	assert_non_null(name);
	assert_int_equal(nm_addr(so, name), nm_addr(so, "skel_t_resolver"));
	elf_close(&b);
	/* libc's own calls to memcpy and strlen */
	open_ok(&b, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_true(has_plt(&b, "memcpy"));
	assert_true(has_plt(&b, "strlen"));
	elf_close(&b);
}

static void relocatable_object_is_refused(void **state)
{
	expect_error(object, "relocatable");
}

/* Corrupt copies of a real binary: random bytes in the headers and tables,
 * bogus offsets, truncation everywhere.  Each must load or fail with a
 * message; nothing may crash or leak (the sanitizers watch). */
static void corrupt_binaries_fail_cleanly(void **state)
{
	size_t len;
	char *orig = read_all(pie, &len);
	assert_non_null(orig);
	char *bytes = malloc(len);
	Elf64_Ehdr eh;
	memcpy(&eh, orig, sizeof eh);
	unsigned seed = 12345;
	for (int round = 0; round < 400; round++) {
		memcpy(bytes, orig, len);
		size_t cut = len;
		for (int k = 0; k < 1 + round % 8; k++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 8;
			size_t where;
			switch (r % 4) {
			case 0: where = r % sizeof eh; break;
			case 1: where = eh.e_shoff + r % (eh.e_shnum * sizeof(Elf64_Shdr)); break;
			case 2: where = eh.e_phoff + r % (eh.e_phnum * sizeof(Elf64_Phdr)); break;
			default: where = r % len; break;
			}
			bytes[where] = (char)(seed >> 3);
		}
		if (round % 5 == 0)
			cut = (seed >> 4) % len;
		const char *path = temp_file(bytes, cut);
		binary b;
		char err[ERR_LEN] = "";
		if (elf_open(&b, path, err) == 0) {
			size_t avail;
			for (size_t i = 0; i < b.nfdes; i++)
				elf_code_at(&b, b.fde_starts[i], &avail);
			uint64_t v;
			elf_read(&b, b.entry, 8, &v);
			elf_close(&b);
		} else {
			assert_true(err[0] != 0);
			elf_close(&b);
		}
		unlink(path);
	}
	free(bytes);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbols_match_nm_in_pie),
		cmocka_unit_test(symbols_match_nm_in_non_pie),
		cmocka_unit_test(stripped_binary_has_no_symtab_functions),
		cmocka_unit_test(fde_starts_match_readelf),
		cmocka_unit_test(stripped_copy_has_same_fde_starts),
		cmocka_unit_test(plt_names_for_lazy_binding),
		cmocka_unit_test(plt_names_for_immediate_binding),
		cmocka_unit_test(plt_names_for_ibt_plt_sec),
		cmocka_unit_test(plt_names_survive_stripping),
		cmocka_unit_test(no_plt_binary_has_no_stubs_for_its_calls),
		cmocka_unit_test(usr_bin_ls_loads),
		cmocka_unit_test(build_id_is_kept_by_strip),
		cmocka_unit_test(content_hash_identifies_binary_without_build_id),
		cmocka_unit_test(pie_flag_and_entry_follow_the_link_mode),
		cmocka_unit_test(queries_find_code_data_and_sections),
		cmocka_unit_test(text_file_is_not_elf),
		cmocka_unit_test(empty_file_is_reported),
		cmocka_unit_test(missing_file_is_reported),
		cmocka_unit_test(named_pipe_is_refused_without_waiting),
		cmocka_unit_test(bad_identification_version_is_named),
		cmocka_unit_test(truncated_header_region_is_reported),
		cmocka_unit_test(cut_in_section_headers_is_reported),
		cmocka_unit_test(thirty_two_bit_elf_is_refused),
		cmocka_unit_test(aarch64_elf_is_refused),
		cmocka_unit_test(core_file_is_refused),
		cmocka_unit_test(shared_objects_load_as_shared),
		cmocka_unit_test(dynamic_section_gives_soname_needs_and_search_paths),
		cmocka_unit_test(shared_object_routines_and_entries),
		cmocka_unit_test(irelative_plt_stub_is_named_after_its_resolver),
		cmocka_unit_test(relocatable_object_is_refused),
		cmocka_unit_test(corrupt_binaries_fail_cleanly),
	};
	return cmocka_run_group_tests(tests, build_inputs, remove_inputs);
}
