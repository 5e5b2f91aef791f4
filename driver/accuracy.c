/* accuracy.c — skel check --accuracy: how much of the true trace an
 * approximate skeleton (skel gen --omega) gives, as the paper measures it.
 *
 * Economo et al. (seeds/), §III-E: per basic block b, the minimal accuracy
 * MA_b is the share of b's accesses traced exactly, the alignment-
 * independent accuracy AIA_b the share traced exactly or counted on a
 * zero-distance fulcrum; a run's accuracy is the sum over blocks weighted
 * by their executions.  The paper states them for its static choice;
 * here they are measured, at chunk granularity, against the oracle of the
 * same run: per block and C-byte chunk, the accesses the replay puts
 * there (exact; exact or attributed) are matched with those lackey saw
 * there, min(replayed, true), and MA_b, AIA_b are the matched counts over
 * the block's true accesses.  An attributed access counted on a chunk
 * its own access missed (the paper's false positive) matches nothing. */
#include "driver/run.h"
#include "analyzer/analyzer.h"
#include "analyzer/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One (block, chunk) pair's accesses. */
typedef struct cell {
	uint32_t block;         /* UINT32_MAX: empty slot */
	uint64_t chunk;
	uint64_t truth, exact, attr;
} cell;

typedef struct blk {
	uint64_t start, end;    /* link-time */
	uint32_t routine;
	uint64_t runs;          /* executions: fetches of its first instruction */
	uint64_t truth, replayed, ma, aia;
} blk;

struct accuracy {
	program p;
	uint64_t bias, chunk;
	blk *b;
	uint32_t nb;
	cell *c;
	size_t cap, n;
	uint64_t outside;       /* accesses of code outside every block */
};

static int blk_cmp(const void *x, const void *y)
{
	const blk *a = x, *b = y;
	return (a->start > b->start) - (a->start < b->start);
}

accuracy *accuracy_new(const char *app, uint64_t bias, uint64_t chunk, char err[ERR_LEN])
{
	accuracy *x = xcalloc(1, sizeof *x);
	if (load_analyzed(&x->p, app, "check", err) < 0) {
		free(x);
		return NULL;
	}
	x->bias = bias;
	x->chunk = chunk;
	for (uint32_t r = 0; r < x->p.nroutines; r++)
		x->nb += x->p.routines[r].nblocks;
	x->b = xcalloc(x->nb ? x->nb : 1, sizeof *x->b);
	uint32_t k = 0;
	for (uint32_t r = 0; r < x->p.nroutines; r++)
		for (uint32_t i = 0; i < x->p.routines[r].nblocks; i++)
			x->b[k++] = (blk){ .start = x->p.routines[r].blocks[i].start,
					   .end = x->p.routines[r].blocks[i].end, .routine = r };
	qsort(x->b, x->nb, sizeof *x->b, blk_cmp);
	x->cap = 1024;
	x->c = xmalloc(x->cap * sizeof *x->c);
	for (size_t i = 0; i < x->cap; i++)
		x->c[i].block = UINT32_MAX;
	return x;
}

void accuracy_free(accuracy *x)
{
	if (!x)
		return;
	program_free(&x->p);
	free(x->b);
	free(x->c);
	free(x);
}

/* The block holding runtime pc (shared code: one of them), or -1. */
static int64_t block_at(const accuracy *x, uint64_t pc)
{
	uint64_t a = pc - x->bias;
	size_t lo = 0, hi = x->nb;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->b[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < x->b[lo - 1].end ? (int64_t)lo - 1 : -1;
}

void accuracy_fetch(accuracy *x, uint64_t pc)
{
	int64_t b = block_at(x, pc);
	if (b >= 0 && x->b[b].start == pc - x->bias)
		x->b[b].runs++;
}

static size_t cell_slot(const cell *c, size_t cap, uint32_t b, uint64_t chunk)
{
	uint64_t h = (chunk * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h >> 17) & (cap - 1);
	while (c[i].block != UINT32_MAX && (c[i].block != b || c[i].chunk != chunk))
		i = (i + 1) & (cap - 1);
	return i;
}

static void grow(accuracy *x)
{
	size_t ncap = 2 * x->cap;
	cell *nc = xmalloc(ncap * sizeof *nc);
	for (size_t i = 0; i < ncap; i++)
		nc[i].block = UINT32_MAX;
	for (size_t i = 0; i < x->cap; i++)
		if (x->c[i].block != UINT32_MAX)
			nc[cell_slot(nc, ncap, x->c[i].block, x->c[i].chunk)] = x->c[i];
	free(x->c);
	x->c = nc;
	x->cap = ncap;
}

static cell *cell_of(accuracy *x, uint32_t b, uint64_t addr)
{
	if (2 * (x->n + 1) > x->cap)
		grow(x);
	uint64_t chunk = addr / x->chunk;
	size_t i = cell_slot(x->c, x->cap, b, chunk);
	if (x->c[i].block == UINT32_MAX) {
		x->c[i] = (cell){ .block = b, .chunk = chunk };
		x->n++;
	}
	return &x->c[i];
}

void accuracy_oracle(accuracy *x, uint64_t pc, uint64_t addr)
{
	int64_t b = block_at(x, pc);
	if (b < 0) {
		x->outside++;
		return;
	}
	x->b[b].truth++;
	cell_of(x, (uint32_t)b, addr)->truth++;
}

/* The replayed text trace: "PC K SIZE ADDR [exact|attr|absent]" (an
 * exact skeleton's lines have no mark). */
int accuracy_replayed(accuracy *x, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		unsigned long long pc, size, addr;
		char k, mark[16] = "exact";
		if (line[0] == '#' ||
		    sscanf(line, "%llx %c %llx %llx %15s", &pc, &k, &size, &addr, mark) < 4 ||
		    k == 'I')
			continue;
		int64_t b = block_at(x, pc);
		if (b < 0)
			continue;
		x->b[b].replayed++;
		if (!strcmp(mark, "exact"))
			cell_of(x, (uint32_t)b, addr)->exact++;
		else if (!strcmp(mark, "attr"))
			cell_of(x, (uint32_t)b, addr)->attr++;
	}
	fclose(f);
	return 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Matches the cells; the exact accesses the oracle does not have (a
 * wrong trace, not an approximation). */
static uint64_t match(accuracy *x)
{
	uint64_t wrong = 0;
	for (size_t i = 0; i < x->cap; i++) {
		const cell *c = &x->c[i];
		if (c->block == UINT32_MAX)
			continue;
		x->b[c->block].ma += min_u64(c->exact, c->truth);
		x->b[c->block].aia += min_u64(c->exact + c->attr, c->truth);
		wrong += c->exact > c->truth ? c->exact - c->truth : 0;
	}
	return wrong;
}

typedef struct sums {
	double runs, ma, aia;           /* Σ x_b, Σ x_b·MA_b, Σ x_b·AIA_b */
	uint64_t truth, ma_n, aia_n;    /* the same by accesses */
} sums;

static void add_block(sums *s, const blk *b)
{
	if (!b->truth)
		return;		/* no access: no accuracy to weigh */
	/* a block entered only by a jump into its middle has no fetch of
	 * its start: weighed as run once */
	double runs = b->runs ? (double)b->runs : 1;
	s->runs += runs;
	s->ma += runs * (double)b->ma / (double)b->truth;
	s->aia += runs * (double)b->aia / (double)b->truth;
	s->truth += b->truth;
	s->ma_n += b->ma;
	s->aia_n += b->aia;
}

static void print_sums(const char *who, const sums *s)
{
	double t = s->truth ? (double)s->truth : 1;
	fprintf(stderr, "%sMA=%.3f AIA=%.3f (blocks weighted by executions; by accesses MA=%.3f AIA=%.3f, "
	       "%" PRIu64 " accesses)\n", who, s->runs ? s->ma / s->runs : 1.0,
	       s->runs ? s->aia / s->runs : 1.0, (double)s->ma_n / t, (double)s->aia_n / t,
	       s->truth);
}

static void print_routines(const accuracy *x)
{
	for (uint32_t r = 0; r < x->p.nroutines; r++) {
		sums s = {0};
		for (uint32_t i = 0; i < x->nb; i++)
			if (x->b[i].routine == r)
				add_block(&s, &x->b[i]);
		if (!s.truth)
			continue;
		char who[300];
		snprintf(who, sizeof who, "  %s: ", x->p.routines[r].name);
		print_sums(who, &s);
	}
}

int accuracy_print(accuracy *x, bool per_routine)
{
	uint64_t wrong = match(x), lost = 0;
	sums s = {0};
	for (uint32_t i = 0; i < x->nb; i++) {
		add_block(&s, &x->b[i]);
		lost += x->b[i].replayed != x->b[i].truth;
	}
	fprintf(stderr, "check: accuracy at chunk %" PRIu64 ": ", x->chunk);
	print_sums("", &s);
	if (per_routine)
		print_routines(x);
	if (x->outside)
		fprintf(stderr, "  (%" PRIu64 " accesses of code outside the executable's blocks not counted)\n",
		       x->outside);
	if (wrong)
		fprintf(stderr, "skel check: %" PRIu64 " accesses marked exact are not in the "
			"oracle: the trace is wrong, not approximate\n", wrong);
	if (lost)
		fprintf(stderr, "skel check: %" PRIu64 " blocks have another number of accesses "
			"in the replay than in the oracle\n", lost);
	return wrong || lost ? 1 : 0;
}
