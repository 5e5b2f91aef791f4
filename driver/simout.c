/* simout.c — the replayer's simulation options (--sim, --sim-out, --I1,
 * --D1, --LL, --fetches), and the cachegrind.out file made from the costs
 * per instruction the replayer writes (replay/sim.h: sim_write_pcs).
 *
 * The replayer knows pcs, not names: here each pc is given its object (the
 * recording's OBJECTS), its function (ELF symbols, PLT stubs) and its
 * source line (DWARF line tables through libdw, when the object has
 * them), and costs are summed per file, function and line, as cachegrind
 * writes them (cg_annotate and KCachegrind read the file). */
#include "driver/run.h"
#include "analyzer/analyzer.h"
#include "analyzer/util.h"
#include "replay/sim.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sim_opts_arg(int argc, char **argv, int *i, sim_opts *o)
{
	const char *a = argv[*i];
	char err[SIM_ERR_LEN];
	sim_level l;
	for (int k = 0; k < 3; k++) {
		static const char *const pre[3] = { "--I1=", "--D1=", "--LL=" };
		if (strncmp(a, pre[k], 5))
			continue;
		if (sim_parse_level(a + 5, &l, err) < 0 || sim_check_level(a + 2, &l, err) < 0) {
			fprintf(stderr, "skel: %.2s: %s\n", a + 2, err);
			return -1;
		}
		o->level[k] = a;
		return 1;
	}
	if (!strcmp(a, "--fetches") || !strcmp(a, "--no-fetches")) {
		o->fetches = a[2] != 'n';
		return 1;
	}
	if (!strcmp(a, "--sim") && *i + 1 < argc) {
		o->sim = argv[++*i];
		if (strcmp(o->sim, "cache") && strcmp(o->sim, "reuse")) {
			fprintf(stderr, "skel: --sim %s: the simulations are: cache, reuse\n", o->sim);
			return -1;
		}
		return 1;
	}
	if (!strcmp(a, "--l1-per-thread")) {
		o->l1_per_thread = true;
		return 1;
	}
	if (!strcmp(a, "--sim-out") && *i + 1 < argc) {
		o->sim_out = argv[++*i];
		return 1;
	}
	return 0;
}

bool sim_opts_fetches(const sim_opts *o, const char *format)
{
	if (o->fetches >= 0)
		return o->fetches;
	return (o->sim && !strcmp(o->sim, "cache")) || !strcmp(format, "lackey");
}

int sim_opts_check(const sim_opts *o)
{
	if (!o->sim && (o->sim_out || o->level[0] || o->level[1] || o->level[2] ||
			o->l1_per_thread)) {
		skel_usage_error("--sim-out, --I1, --D1, --LL and --l1-per-thread go with --sim cache");
		return -1;
	}
	if (o->sim && strcmp(o->sim, "cache") && o->sim_out) {
		skel_usage_error("--sim-out goes with --sim cache");
		return -1;
	}
	return 0;
}

size_t sim_opts_argv(const sim_opts *o, const char *format, const char *raw_out, char **av)
{
	size_t n = 0;
	if (sim_opts_fetches(o, format))
		av[n++] = "--fetches";
	if (!o->sim)
		return n;
	av[n++] = "--sim";
	av[n++] = (char *)o->sim;
	for (int k = 0; k < 3; k++)
		if (o->level[k])
			av[n++] = (char *)o->level[k];
	if (o->l1_per_thread)
		av[n++] = "--l1-per-thread";
	if (raw_out) {
		av[n++] = "--sim-out";
		av[n++] = (char *)raw_out;
	}
	return n;
}

int sim_raw_path(const sim_opts *o, char path[PATH_MAX])
{
	path[0] = 0;
	if (!o->sim || !o->sim_out)
		return 0;
	snprintf(path, PATH_MAX, "%s/skel-sim-XXXXXX", tmp_dir());
	int fd = mkstemp(path);
	if (fd < 0)
		return skel_fail(path, strerror(errno));
	close(fd);
	tmp_track(path);
	return 0;
}

/* ------------------------------------------------------ cachegrind.out */

typedef struct sim_object {
	uint64_t lo, hi, bias;
	char *path;
	binary b;
	bool open;
	Dwarf *dw;
	int fd;
	const char *last_file, *last_joined;	/* line_of's last join */
} sim_object;

typedef struct sim_row {
	const char *file, *fn;  /* owned by the object or the name pool */
	uint64_t line;
	uint64_t ev[SIM_NEVENTS];
} sim_row;

static int row_cmp(const void *a, const void *b)
{
	const sim_row *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (!c)
		c = strcmp(x->fn, y->fn);
	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

static void object_open(sim_object *o)
{
	char err[ERR_LEN];
	if (o->open)
		return;
	o->open = true;
	o->fd = -1;
	if (elf_open(&o->b, o->path, err) < 0) {
		o->b.nfuncs = 0;
		o->b.nplts = 0;
		o->b.path = NULL;
		return;
	}
	o->fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (o->fd >= 0)
		o->dw = dwarf_begin(o->fd, DWARF_C_READ);
}

static void object_close(sim_object *o)
{
	if (o->dw)
		dwarf_end(o->dw);
	if (o->fd >= 0)
		close(o->fd);
	if (o->open && o->b.path)
		elf_close(&o->b);
	free(o->path);
}

/* The function holding link-time pc a: the last symbol at or below it. */
static const char *func_of(const binary *b, uint64_t a)
{
	const char *plt = elf_plt_name(b, a);
	if (plt)
		return plt;
	size_t lo = 0, hi = b->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->funcs[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const elf_symbol *s = &b->funcs[lo - 1];
	return !s->size || a < s->addr + s->size ? s->name : NULL;
}

typedef VEC(char *) name_pool;

static char *pool_add(name_pool *p, char *s)
{
	vec_push(*p, s);
	return s;
}

static char *pool_name(name_pool *p, const char *fmt, uint64_t v)
{
	char buf[64];
	snprintf(buf, sizeof buf, fmt, v);
	return pool_add(p, xstrdup(buf));
}

/* Source file and line of link-time pc a, from the DWARF line table; a
 * relative name is joined to its unit's directory, as valgrind names
 * files (so that cg_annotate finds the source). */
static const char *line_of(sim_object *o, uint64_t a, uint64_t *line, name_pool *pool)
{
	Dwarf_Die cu;
	*line = 0;
	if (!o->dw || !dwarf_addrdie(o->dw, a, &cu))
		return NULL;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, a);
	int n;
	if (!l || dwarf_lineno(l, &n) != 0)
		return NULL;
	*line = (uint64_t)n;
	const char *file = dwarf_linesrc(l, NULL, NULL);
	Dwarf_Attribute at;
	const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
	if (!file || file[0] == '/' || !dir)
		return file;
	/* the same unit gives the same names: keep the last one joined */
	if (o->last_file == file)
		return o->last_joined;
	char *j = xmalloc(strlen(dir) + strlen(file) + 2);
	sprintf(j, "%s/%s", dir, file);
	o->last_file = file;
	return o->last_joined = pool_add(pool, j);
}

int sim_out_write(const char *raw, const char *out, char **cmd)
{
	size_t len;
	char *text = read_text(raw, &len);
	if (!text)
		return skel_fail(raw, strerror(errno));
	VEC(sim_object) objs = {0};
	VEC(sim_row) rows = {0};
	VEC(char *) descs = {0};
	name_pool pool = {0};
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		sim_object o = {0};
		int pos = 0;
		if (!strncmp(l, "desc: ", 6))
			vec_push(descs, l);
		else if (sscanf(l, "object %" SCNx64 " %" SCNx64 " %" SCNx64 " %n", &o.lo, &o.hi,
				&o.bias, &pos) == 3 && pos) {
			o.path = xstrdup(l + pos);
			vec_push(objs, o);
		} else if (strchr("0123456789abcdef", l[0])) {
			sim_row r = {0};
			uint64_t pc;
			char *p = l;
			pc = strtoull(p, &p, 16);
			for (int k = 0; k < SIM_NEVENTS; k++)
				r.ev[k] = strtoull(p, &p, 10);
			r.line = pc;	/* the pc until named */
			vec_push(rows, r);
		}
	}
	/* name each pc: its object, function, file and line */
	for (size_t i = 0; i < rows.n; i++) {
		sim_row *r = &rows.a[i];
		uint64_t pc = r->line;
		sim_object *o = NULL;
		for (size_t k = 0; k < objs.n && !o; k++)
			if (pc >= objs.a[k].lo && pc < objs.a[k].hi)
				o = &objs.a[k];
		r->file = "???";
		r->line = 0;
		if (!o) {
			r->fn = pool_name(&pool, "0x%" PRIx64, pc);
			continue;
		}
		object_open(o);
		uint64_t a = pc - o->bias;
		const char *fn = func_of(&o->b, a);
		r->fn = fn ? fn : pool_name(&pool, "0x%" PRIx64, a);
		const char *file = line_of(o, a, &r->line, &pool);
		if (file)
			r->file = file;
	}
	/* one row per file, function and line */
	if (rows.n)
		qsort(rows.a, rows.n, sizeof *rows.a, row_cmp);
	size_t m = 0;
	for (size_t i = 0; i < rows.n; i++) {
		if (m && !row_cmp(&rows.a[m - 1], &rows.a[i])) {
			for (int k = 0; k < SIM_NEVENTS; k++)
				rows.a[m - 1].ev[k] += rows.a[i].ev[k];
		} else {
			rows.a[m++] = rows.a[i];
		}
	}
	FILE *f = fopen(out, "w");
	int rc = 0;
	if (!f) {
		rc = skel_fail(out, strerror(errno));
	} else {
		bool fetch = false;
		uint64_t tot[SIM_NEVENTS] = {0};
		for (size_t i = 0; i < m; i++)
			for (int k = 0; k < SIM_NEVENTS; k++)
				tot[k] += rows.a[i].ev[k];
		fetch = tot[SIM_IR] != 0;
		for (size_t i = 0; i < descs.n; i++)
			fprintf(f, "%s\n", descs.a[i]);
		fputs("cmd:", f);
		for (size_t i = 0; cmd && cmd[i]; i++)
			fprintf(f, " %s", cmd[i]);
		fputs("\nevents:", f);
		for (int k = fetch ? 0 : SIM_DR; k < SIM_NEVENTS; k++)
			fprintf(f, " %s", sim_event_names[k]);
		fputc('\n', f);
		const char *fl = NULL, *fn = NULL;
		for (size_t i = 0; i < m; i++) {
			const sim_row *r = &rows.a[i];
			if (!fl || strcmp(fl, r->file)) {
				fprintf(f, "fl=%s\n", r->file);
				fn = NULL;
			}
			if (!fn || strcmp(fn, r->fn))
				fprintf(f, "fn=%s\n", r->fn);
			fl = r->file;
			fn = r->fn;
			fprintf(f, "%" PRIu64, r->line);
			for (int k = fetch ? 0 : SIM_DR; k < SIM_NEVENTS; k++)
				fprintf(f, " %" PRIu64, r->ev[k]);
			fputc('\n', f);
		}
		fputs("summary:", f);
		for (int k = fetch ? 0 : SIM_DR; k < SIM_NEVENTS; k++)
			fprintf(f, " %" PRIu64, tot[k]);
		fputc('\n', f);
		if (fclose(f) != 0)
			rc = skel_fail(out, "write error");
	}
	for (size_t k = 0; k < objs.n; k++)
		object_close(&objs.a[k]);
	for (size_t k = 0; k < pool.n; k++)
		free(pool.a[k]);
	free(pool.a);
	free(objs.a);
	free(rows.a);
	free(descs.a);
	free(text);
	return rc;
}
