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
	p->unreached = program_unreached(p, &p->unreached_first);
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

/* Code bytes of the executable sections (PLT stubs aside) that no routine
 * decoded, outside every function the binary describes (FDE ranges,
 * sized function symbols; code inside one is reached through its
 * function's own jumps, which the skeleton checks), and that are not
 * padding (zero bytes, int3, nops).  Control can reach them only through
 * a pointer the analysis did not see; the first such address goes to
 * *first (0 when none). */
static void mark_seen(uint8_t *seen, const elf_section *sec, uint64_t lo, uint64_t hi)
{
	lo = lo > sec->addr ? lo : sec->addr;
	hi = hi < sec->addr + sec->size ? hi : sec->addr + sec->size;
	if (lo < hi)
		memset(seen + (lo - sec->addr), 1, hi - lo);
}

uint64_t program_unreached(const program *p, uint64_t *first)
{
	uint64_t n = 0;
	*first = 0;
	for (size_t s = 0; s < p->bin.nsections; s++) {
		const elf_section *sec = &p->bin.sections[s];
		if (!sec->exec || !sec->data || !sec->size || !strncmp(sec->name, ".plt", 4))
			continue;
		uint8_t *seen = xcalloc(sec->size, 1);
		for (size_t i = 0; i < p->bin.nfdes; i++)
			mark_seen(seen, sec, p->bin.fde_starts[i], p->bin.fde_ends[i]);
		for (size_t i = 0; i < p->bin.nfuncs; i++)
			mark_seen(seen, sec, p->bin.funcs[i].addr,
				  p->bin.funcs[i].addr + p->bin.funcs[i].size);
		for (uint32_t i = 0; i < p->nroutines; i++) {
			const routine *r = &p->routines[i];
			for (uint32_t k = 0; k < r->ninsn; k++)
				mark_seen(seen, sec, r->insns[k].addr,
					  r->insns[k].addr + r->insns[k].len);
		}
		for (uint64_t o = 0; o < sec->size;) {
			uint8_t b = sec->data[o];
			if (seen[o] || b == 0x00 || b == 0xcc) {
				o++;
				continue;
			}
			insn in;
			bool ok = !decode_insn(sec->data + o, sec->size - o, sec->addr + o, &in);
			uint64_t len = ok ? in.len : 1;
			if (!ok || in.op != OP_NOP) {
				for (uint64_t a = o; a < o + len && a < sec->size && !seen[a]; a++)
					n++;
				if (!*first)
					*first = sec->addr + o;
			}
			o += len;
		}
		free(seen);
	}
	return n;
}
