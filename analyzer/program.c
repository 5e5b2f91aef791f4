/* program.c — load a binary and run the analyzer's passes over it. */
#include "analyzer/analyzer.h"

#include <stdlib.h>
#include <string.h>

int program_load(program *p, const char *path, char err[ERR_LEN])
{
	memset(p, 0, sizeof *p);
	if (elf_open(&p->bin, path, err) < 0)
		return -1;
	cfg_build(p);
	for (uint32_t i = 0; i < p->nroutines; i++) {
		dom_compute(&p->routines[i]);
		loop_find(&p->routines[i]);
	}
	return 0;
}

void program_free(program *p)
{
	for (uint32_t i = 0; i < p->nroutines; i++)
		cfg_routine_free(&p->routines[i]);
	free(p->routines);
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

routine *program_routine_named(program *p, const char *name)
{
	for (uint32_t i = 0; i < p->nroutines; i++)
		if (!strcmp(p->routines[i].name, name))
			return &p->routines[i];
	return NULL;
}
