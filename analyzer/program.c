/* program.c — load a binary and run the analyzer's passes over it. */
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_hint(const void *x, const void *y)
{
	const jump_hint *a = x, *b = y;
	return a->at != b->at ? (a->at > b->at) - (a->at < b->at) : (a->to > b->to) - (a->to < b->to);
}

int program_load(program *p, const char *path, char err[ERR_LEN])
{
	return program_load_hints(p, path, NULL, 0, err);
}

int program_load_hints(program *p, const char *path, const jump_hint *h, size_t n,
		       char err[ERR_LEN])
{
	memset(p, 0, sizeof *p);
	if (elf_open(&p->bin, path, err) < 0)
		return -1;
	if (n) {
		p->hints = xmalloc(n * sizeof *p->hints);
		memcpy(p->hints, h, n * sizeof *h);
		qsort(p->hints, n, sizeof *p->hints, cmp_hint);
		p->nhints = (uint32_t)n;
	}
	cfg_build(p);
	for (uint32_t i = 0; i < p->nroutines; i++) {
		dom_compute(&p->routines[i]);
		loop_find(&p->routines[i]);
	}
	clobber_compute(p);
	return 0;
}

void program_free(program *p)
{
	for (uint32_t i = 0; i < p->nroutines; i++)
		cfg_routine_free(&p->routines[i]);
	free(p->routines);
	free(p->entries);
	free(p->taken);
	free(p->hints);
	elf_close(&p->bin);
	memset(p, 0, sizeof *p);
}

routine *program_routine_at(const program *p, uint64_t start)
{
	uint32_t lo = 0, hi = p->nroutines;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->routines[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nroutines && p->routines[lo].start == start ? &p->routines[lo] : NULL;
}

long hints_read(const char *path, jump_hint **out, char err[ERR_LEN])
{
	FILE *f = fopen(path, "r");
	*out = NULL;
	if (!f) {
		snprintf(err, ERR_LEN, "%s", strerror(errno));
		return -1;
	}
	VEC(jump_hint) v = {0};
	char line[256];
	long lineno = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long at, to;
		char extra;
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%llx %llx %c", &at, &to, &extra) != 2) {
			snprintf(err, ERR_LEN, "line %ld: expected '0xFROM 0xTO'", lineno);
			free(v.a);
			fclose(f);
			return -1;
		}
		jump_hint h = { at, to };
		vec_push(v, h);
	}
	fclose(f);
	*out = v.a;
	return (long)v.n;
}

bool program_is_entry(const program *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nentries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->entries[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nentries && p->entries[lo] == addr;
}

routine *program_routine_named(program *p, const char *name)
{
	for (uint32_t i = 0; i < p->nroutines; i++)
		if (!strcmp(p->routines[i].name, name))
			return &p->routines[i];
	return NULL;
}
