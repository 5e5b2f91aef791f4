/* report.c — per region and object figures of a replay (report.h).
 *
 * The skeleton stores the accesses into its thread's batch (sk_batch_add,
 * skel_rt.h); the loop over a batch (report_batch) finds each access's
 * row — its object group in the current region — in a four-entry MRU of
 * object ranges, then in a direct-mapped table by cache line (many small
 * heap blocks), and only then asks symbolize.h; both caches are dropped
 * at once (a generation number) when the thread passes a heap event or
 * changes region.  Lines are bits in 4096-line chunks (bset; a page is a
 * word of those bits), found through a directory by index when they lie
 * close together: a line seen before costs a compare and a bit test.
 * Bytes per clock bin (REP_BINS bins whose width doubles when the clock
 * outgrows them) come from each row's running total when a bin ends; the
 * heat map keeps per row a HEAT_Y x HEAT_X grid whose address window
 * doubles the same way.  Everything is turned into times and merged over
 * threads at the end (report_write). */
#include "replay/report.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REP_BINS 1024		/* clock bins per thread */
#define HEAT_X 256		/* heat columns per thread: 4 bins each */
#define HEAT_Y 64		/* heat rows per object and thread */
#define HEAT_BIN_SHIFT 2	/* log2(REP_BINS / HEAT_X) */
#define MRU_N 8
/* The line cache of a thread's lookups: LINE_CACHE entries at first, 4
 * times as many each time it has missed 4 times its size, up to
 * LINE_CACHE_MAX (8 MiB): a program over a large heap of small blocks
 * (tree: 300,000 nodes) went to the slow path at nearly every access. */
#define LINE_CACHE 1024
#define LINE_CACHE_MAX (1u << 18)
#define SERIES_N 100		/* intervals of the time series */
#define PLOT_BANDS 8		/* objects in the heat map */
#define BAND_ROWS 32		/* heat map rows per object */

static void *rep_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fprintf(stderr, "skel: replay: out of memory (report)\n");
		exit(2);
	}
	return p;
}

static uint64_t rep_hash(uint64_t k)
{
	k *= 0x9e3779b97f4a7c15ull;
	return k ^ (k >> 29);
}

/* ------------------------------------------------ sets of lines, pages */

/* A chunk holds 4096 cache lines, 64 pages: a page is one word of bits,
 * touched when the word is not 0. */
typedef struct bchunk {
	uint64_t key;		/* key >> 12 */
	uint64_t bits[64];
} bchunk;

typedef struct bset {
	bchunk **a;
	size_t cap, n;
	bchunk *last;
	uint64_t count;		/* distinct keys */
	/* the chunks of [dbase, dbase + dn) by index, when they lie close
	 * enough together (an object's lines): random lines of a large
	 * block find theirs without hashing */
	bchunk **dir;
	uint64_t dbase;
	size_t dn;
} bset;

#define DIR_MAX 65536		/* chunks a directory spans: 16 GiB */

static bchunk **bset_slot(bchunk **a, size_t cap, uint64_t key)
{
	size_t j = (size_t)rep_hash(key) & (cap - 1);
	while (a[j] && a[j]->key != key)
		j = (j + 1) & (cap - 1);
	return &a[j];
}

static __attribute__((noinline)) bchunk *bset_chunk(bset *s, uint64_t key)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		bchunk **a = rep_calloc(cap, sizeof *a);
		for (size_t i = 0; i < s->cap; i++)
			if (s->a[i])
				*bset_slot(a, cap, s->a[i]->key) = s->a[i];
		free(s->a);
		s->a = a;
		s->cap = cap;
	}
	bchunk **p = bset_slot(s->a, s->cap, key);
	if (!*p) {
		*p = rep_calloc(1, sizeof **p);
		(*p)->key = key;
		s->n++;
	}
	return *p;
}

/* A new chunk joins the directory, which grows to hold it unless the
 * span would pass DIR_MAX (the hash table serves then). */
static void dir_add(bset *s, bchunk *c)
{
	uint64_t lo = s->dn ? (c->key < s->dbase ? c->key : s->dbase) : c->key;
	uint64_t hi = s->dn ? (c->key >= s->dbase + s->dn ? c->key + 1 : s->dbase + s->dn)
			    : c->key + 1;
	if (hi - lo > DIR_MAX)
		return;
	if (lo != s->dbase || hi - lo != s->dn) {
		bchunk **d = rep_calloc((size_t)(hi - lo), sizeof *d);
		if (s->dn)
			memcpy(d + (s->dbase - lo), s->dir, s->dn * sizeof *d);
		free(s->dir);
		s->dir = d;
		s->dbase = lo;
		s->dn = (size_t)(hi - lo);
	}
	s->dir[c->key - lo] = c;
}

static __attribute__((noinline)) bchunk *bset_find(bset *s, uint64_t key)
{
	size_t n = s->n;
	bchunk *c = bset_chunk(s, key);
	if (s->n != n)
		dir_add(s, c);
	return c;
}

static inline void bset_add(bset *s, uint64_t k)
{
	bchunk *c = s->last;
	if (!c || c->key != k >> 12) {
		uint64_t d = (k >> 12) - s->dbase;
		c = d < s->dn ? s->dir[d] : NULL;
		s->last = c = c ? c : bset_find(s, k >> 12);
	}
	uint64_t m = 1ull << (k & 63), *w = &c->bits[(k >> 6) & 63];
	if (!(*w & m)) {
		*w |= m;
		s->count++;
	}
}

/* the lines of [lo, hi], a wide access (xsave: 512 bytes and more) */
static __attribute__((noinline)) void bset_span(bset *s, uint64_t lo, uint64_t hi)
{
	for (uint64_t k = lo >> 6; k <= hi >> 6; k++)
		bset_add(s, k);
}

static void bset_merge(bset *into, const bset *from)
{
	for (size_t i = 0; i < from->cap; i++) {
		const bchunk *f = from->a[i];
		if (!f)
			continue;
		bchunk *c = bset_find(into, f->key);
		for (int k = 0; k < 64; k++) {
			into->count += (uint64_t)__builtin_popcountll(f->bits[k] & ~c->bits[k]);
			c->bits[k] |= f->bits[k];
		}
	}
}

/* the pages of a set of lines */
static uint64_t bset_pages(const bset *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->cap; i++)
		for (int k = 0; s->a[i] && k < 64; k++)
			n += s->a[i]->bits[k] != 0;
	return n;
}

static void bset_free(bset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->a[i]);
	free(s->a);
	free(s->dir);
	memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------ thread tables */

typedef struct rep_row {
	uint32_t group;		/* name, in the thread's names */
	int roi;
	uint64_t count[2], bytes[2];
	uint64_t first, last;	/* clock */
	uint64_t amin, amax;	/* first and last byte of the lines touched */
	uint64_t line;		/* of the last access (+1): seen already */
	bset lines;		/* cache lines; pages are their words */
	uint64_t *bins;		/* bytes per clock bin */
	uint64_t mark;		/* its bytes when the current bin began */
	uint32_t *heat;		/* [HEAT_Y][HEAT_X] accesses, or NULL */
	uint64_t ylo;		/* heat rows: [ylo, ylo + HEAT_Y << yshift) */
	unsigned yshift;
} rep_row;

typedef struct rep_range {
	uint64_t lo, hi;
	rep_row *row;
	uint32_t gen;
} rep_range;

typedef struct rep_anchor {
	uint64_t clock, ns;
} rep_anchor;

struct rep_thread {
	uint32_t thread;
	char **names;		/* object groups */
	size_t nnames, capnames;
	uint32_t *nidx;		/* names by hash: index + 1 */
	size_t capnidx;
	uint64_t *skey;		/* heap groups by allocation site: site + 1 */
	uint32_t *sgrp;		/* its group */
	size_t nsite, capsite;
	rep_row **rows;
	size_t nrows, caprows;
	rep_row **ridx;		/* rows by (group, region) */
	size_t capridx;
	rep_range mru[MRU_N];
	unsigned mnext;
	rep_range *lc;		/* lcmask + 1 pairs by cache line */
	size_t lcmask, nslow;
	uint32_t gen;		/* the caches' entries of other generations are void */
	uint64_t seq;		/* the view's heap events the caches are for */
	size_t chgpos;		/* sym_changes taken */
	sym_chg *pend;		/* those taken of a seq not passed yet: a heap by seq */
	size_t npend, cappend;
	bool nopend;		/* too many held: every pass empties the caches */
	int roi;		/* current region, -1: none */
	unsigned cshift;	/* clock bin width: 2^cshift accesses */
	uint64_t bin;		/* the current one */
	rep_anchor *anch;
	size_t nanch, capanch;
	uint64_t *ticks;	/* per region: clock ticks in it since the last stamp */
	uint64_t *roi_ns;	/* per region: time in it */
	uint64_t since;		/* clock at which the current region's ticks start */
	uint64_t end;		/* clock at the end of the replay */
	rep_thread *next;
};

static rep_config cfg;
static int nregions;		/* regions the rows may have */
/* --roi-markers: region nroi is the markers' whose name is not known,
 * nroi + 1 + j the j-th name skel_roi_begin passed (report_marker) */
#define MARK_MAX 32
static char *mark_names[MARK_MAX];
static int nmarks;
static pthread_mutex_t mark_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rep_mu = PTHREAD_MUTEX_INITIALIZER;
static rep_thread *threads;	/* all, newest first */

void report_setup(const rep_config *c)
{
	cfg = *c;
	nregions = cfg.nroi + (cfg.markers ? 1 + MARK_MAX : 0);
	if (!nregions)
		nregions = 1;
}

static bool have_regions(void)
{
	return cfg.nroi || cfg.markers;
}

rep_thread *report_thread_new(uint32_t thread)
{
	rep_thread *r = rep_calloc(1, sizeof *r);
	r->thread = thread;
	r->lc = rep_calloc(LINE_CACHE, sizeof *r->lc);
	r->lcmask = LINE_CACHE / 2 - 1;
	r->gen = 1;
	r->roi = have_regions() ? -1 : 0;
	r->ticks = rep_calloc((size_t)nregions, sizeof *r->ticks);
	r->roi_ns = rep_calloc((size_t)nregions, sizeof *r->roi_ns);
	pthread_mutex_lock(&rep_mu);
	r->next = threads;
	threads = r;
	pthread_mutex_unlock(&rep_mu);
	return r;
}

static uint64_t str_hash(const char *s)
{
	return skel_fnv1a64(SKEL_FNV1A64_INIT, s, strlen(s));
}

static uint32_t name_intern(rep_thread *r, const char *name)
{
	if (2 * (r->nnames + 1) > r->capnidx) {
		size_t cap = r->capnidx ? 2 * r->capnidx : 64;
		uint32_t *a = rep_calloc(cap, sizeof *a);
		for (size_t i = 0; i < r->nnames; i++) {
			size_t j = (size_t)str_hash(r->names[i]) & (cap - 1);
			while (a[j])
				j = (j + 1) & (cap - 1);
			a[j] = (uint32_t)i + 1;
		}
		free(r->nidx);
		r->nidx = a;
		r->capnidx = cap;
	}
	size_t j = (size_t)str_hash(name) & (r->capnidx - 1);
	for (; r->nidx[j]; j = (j + 1) & (r->capnidx - 1))
		if (!strcmp(r->names[r->nidx[j] - 1], name))
			return r->nidx[j] - 1;
	r->names = sym_grow(r->names, &r->capnames, r->nnames + 1, sizeof *r->names);
	r->names[r->nnames] = strdup(name);
	if (!r->names[r->nnames]) {
		fprintf(stderr, "skel: replay: out of memory (report)\n");
		exit(2);
	}
	r->nidx[j] = (uint32_t)r->nnames + 1;
	return (uint32_t)r->nnames++;
}

static rep_row **row_slot(rep_row **a, size_t cap, uint32_t group, int roi)
{
	size_t j = (size_t)rep_hash(((uint64_t)group << 8) | (uint64_t)roi) & (cap - 1);
	while (a[j] && (a[j]->group != group || a[j]->roi != roi))
		j = (j + 1) & (cap - 1);
	return &a[j];
}

static rep_row *row_new(rep_thread *r, uint32_t group, uint64_t clock, uint64_t addr)
{
	rep_row *w = rep_calloc(1, sizeof *w);
	w->group = group;
	w->roi = r->roi;
	w->first = clock;
	w->amin = UINT64_MAX;
	w->bins = rep_calloc(REP_BINS, sizeof *w->bins);
	if (cfg.heat_out) {
		w->heat = rep_calloc(HEAT_X * HEAT_Y, sizeof *w->heat);
		w->ylo = addr & ~(uint64_t)(HEAT_Y - 1);
	}
	r->rows = sym_grow(r->rows, &r->caprows, r->nrows + 1, sizeof *r->rows);
	r->rows[r->nrows++] = w;
	return w;
}

static rep_row *row_get(rep_thread *r, uint32_t group, uint64_t clock, uint64_t addr)
{
	if (2 * (r->nrows + 1) > r->capridx) {
		size_t cap = r->capridx ? 2 * r->capridx : 64;
		rep_row **a = rep_calloc(cap, sizeof *a);
		for (size_t i = 0; i < r->nrows; i++)
			*row_slot(a, cap, r->rows[i]->group, r->rows[i]->roi) = r->rows[i];
		free(r->ridx);
		r->ridx = a;
		r->capridx = cap;
	}
	rep_row **p = row_slot(r->ridx, r->capridx, group, r->roi);
	if (!*p)
		*p = row_new(r, group, clock, addr);
	return *p;
}

/* The group of the heap blocks allocated at `site`: heap@SITE, its name
 * made once. */
static uint32_t site_group(rep_thread *r, uint64_t site)
{
	if (2 * (r->nsite + 1) > r->capsite) {
		size_t cap = r->capsite ? 2 * r->capsite : 64;
		uint64_t *k = rep_calloc(cap, sizeof *k);
		uint32_t *g = rep_calloc(cap, sizeof *g);
		for (size_t i = 0; i < r->capsite; i++) {
			if (!r->skey[i])
				continue;
			size_t j = (size_t)rep_hash(r->skey[i]) & (cap - 1);
			while (k[j])
				j = (j + 1) & (cap - 1);
			k[j] = r->skey[i];
			g[j] = r->sgrp[i];
		}
		free(r->skey);
		free(r->sgrp);
		r->skey = k;
		r->sgrp = g;
		r->capsite = cap;
	}
	size_t j = (size_t)rep_hash(site + 1) & (r->capsite - 1);
	for (; r->skey[j]; j = (j + 1) & (r->capsite - 1))
		if (r->skey[j] == site + 1)
			return r->sgrp[j];
	char name[SYM_NAME_MAX + 8];
	strcpy(name, "heap@");
	sym_code_name(site, name + 5, sizeof name - 5);
	r->skey[j] = site + 1;
	r->nsite++;
	return r->sgrp[j] = name_intern(r, name);
}

/* The slow path: the object at addr, its group's row, the range it
 * holds for. */
static __attribute__((noinline)) rep_row *row_lookup(rep_thread *r, sym_view *v,
						      uint64_t clock, uint64_t addr, rep_range *out)
{
	out->lo = addr;
	out->hi = addr + 1;
	uint32_t group;
	if (!sym_find(v, addr))
		group = name_intern(r, "?");
	else if (v->heap)
		group = site_group(r, v->site);
	else
		group = name_intern(r, v->name);
	if (v->hi) {
		out->lo = v->lo;
		out->hi = v->hi;
	}
	out->row = row_get(r, group, clock, addr);
	out->gen = r->gen;
	return out->row;
}

static inline bool range_holds(const rep_range *e, uint32_t gen, uint64_t addr)
{
	return e->gen == gen && addr - e->lo < e->hi - e->lo;
}

static void pend_push(rep_thread *r, sym_chg c)
{
	r->pend = sym_grow(r->pend, &r->cappend, r->npend + 1, sizeof *r->pend);
	size_t i = r->npend++;
	while (i && r->pend[(i - 1) / 2].seq > c.seq) {
		r->pend[i] = r->pend[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->pend[i] = c;
}

static sym_chg pend_pop(rep_thread *r)
{
	sym_chg top = r->pend[0], last = r->pend[--r->npend];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= r->npend)
			break;
		if (c + 1 < r->npend && r->pend[c + 1].seq < r->pend[c].seq)
			c++;
		if (r->pend[c].seq >= last.seq)
			break;
		r->pend[i] = r->pend[c];
		i = c;
	}
	if (r->npend)
		r->pend[i] = last;
	return top;
}

/* A new generation: the MRU is emptied, the line table's entries of
 * older generations no longer match. */
static void gen_next(rep_thread *r)
{
	r->gen++;
	memset(r->mru, 0, sizeof r->mru);
}

/* The line cache forgets what it holds for the lines of [lo, hi) (all
 * of it for a range of many lines); 1 if all. */
static int lc_forget(rep_thread *r, uint64_t lo, uint64_t hi)
{
	uint64_t first = lo >> 6, last = (hi - 1) >> 6;
	if (hi <= lo || last - first >= 64) {
		gen_next(r);
		return 1;
	}
	for (uint64_t l = first; l <= last; l++) {
		rep_range *e = &r->lc[2 * (l & r->lcmask)];
		e[0].gen = e[1].gen = 0;
	}
	return 0;
}

/* The view passed heap events up to seq s: what their ranges hold is
 * looked up again (a lookup is as of the view's seq), as is what the
 * events added since the last time hold (another thread's block, a
 * thread's region take effect when they are known).  Where nothing
 * changed the caches stay: a tree's 300,000 inserts and frees emptied
 * them at each. */
/* Changes held at most per thread (24 bytes each): a replay from a file
 * knows every thread's events from the start, each thread holds those of
 * all the others until its own view passes them. */
#define PEND_MAX (4u << 20)

static void caches_pass(rep_thread *r, uint64_t s)
{
	memset(r->mru, 0, sizeof r->mru);
	int all = r->nopend;
	if (all)
		gen_next(r);
	sym_chg buf[256];
	size_t k;
	while ((k = sym_changes(r->chgpos, buf, 256)) > 0) {
		r->chgpos += k;
		for (size_t i = 0; i < k; i++) {
			if (!all)
				all = lc_forget(r, buf[i].lo, buf[i].hi);
			if (buf[i].seq > s && !r->nopend)
				pend_push(r, buf[i]);
		}
		if (r->npend > PEND_MAX) {	/* as before: all forgotten at each pass */
			r->nopend = true;
			free(r->pend);
			r->pend = NULL;
			r->npend = r->cappend = 0;
			all = 1;
			gen_next(r);
		}
	}
	while (r->npend && r->pend[0].seq <= s) {
		sym_chg c = pend_pop(r);
		if (!all)
			all = lc_forget(r, c.lo, c.hi);
	}
}

/* The line cache 4 times as large, empty (its entries are placed by
 * the line accessed, which a larger one tells apart); e, which was in the
 * old one, in its place there. */
static __attribute__((noinline)) rep_range *lc_grow(rep_thread *r, rep_range *e,
						    uint64_t addr)
{
	size_t mask = 4 * (r->lcmask + 1) - 1;
	rep_range *lc = rep_calloc(2 * (mask + 1), sizeof *lc);
	rep_range *at = &lc[2 * ((addr >> 6) & mask)];
	*at = *e;
	free(r->lc);
	r->lc = lc;
	r->lcmask = mask;
	r->nslow = 0;
	return at;
}

static inline rep_row *row_of(rep_thread *r, sym_view *v, uint64_t clock, uint64_t addr)
{
#pragma GCC unroll 8
	for (int i = 0; i < MRU_N; i++)
		if (addr - r->mru[i].lo < r->mru[i].hi - r->mru[i].lo)
			return r->mru[i].row;
	/* two ways a line: a line holds parts of two small blocks */
	rep_range *e = &r->lc[2 * ((addr >> 6) & r->lcmask)];
	if (__builtin_expect(!range_holds(e, r->gen, addr), 0)) {
		rep_range x = e[1];
		e[1] = e[0];
		if (range_holds(&x, r->gen, addr)) {
			e[0] = x;
		} else {
			row_lookup(r, v, clock, addr, e);
			if (++r->nslow > 8 * (r->lcmask + 1) && 2 * (r->lcmask + 1) < LINE_CACHE_MAX)
				e = lc_grow(r, e, addr);
		}
	}
	r->mru[r->mnext++ % MRU_N] = *e;
	return e->row;
}

/* The current bin is over: each row's bytes since it began go there. */
static void bins_close(rep_thread *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		rep_row *w = r->rows[i];
		uint64_t t = w->bytes[0] + w->bytes[1];
		w->bins[r->bin] += t - w->mark;
		w->mark = t;
	}
}

/* The clock outgrew the bins: each bin (and heat column) takes two. */
static __attribute__((noinline)) void bins_coarsen(rep_thread *r)
{
	r->cshift++;
	r->bin >>= 1;
	for (size_t i = 0; i < r->nrows; i++) {
		rep_row *w = r->rows[i];
		for (int b = 0; b < REP_BINS / 2; b++)
			w->bins[b] = w->bins[2 * b] + w->bins[2 * b + 1];
		memset(w->bins + REP_BINS / 2, 0, REP_BINS / 2 * sizeof *w->bins);
		for (int y = 0; w->heat && y < HEAT_Y; y++) {
			uint32_t *h = w->heat + y * HEAT_X;
			for (int x = 0; x < HEAT_X / 2; x++)
				h[x] = h[2 * x] + h[2 * x + 1];
			memset(h + HEAT_X / 2, 0, HEAT_X / 2 * sizeof *h);
		}
	}
}

/* addr lies outside the row's heat window: the window doubles (aligned
 * to its size) until it holds it. */
static __attribute__((noinline)) void heat_widen(rep_row *w, uint64_t addr)
{
	while (addr < w->ylo || addr - w->ylo >= (uint64_t)HEAT_Y << w->yshift) {
		unsigned s = w->yshift + 1;
		uint64_t lo = w->ylo & ~(((uint64_t)HEAT_Y << s) - 1);
		uint32_t *h = w->heat;
		uint32_t tmp[HEAT_Y][HEAT_X];
		memset(tmp, 0, sizeof tmp);
		for (int y = 0; y < HEAT_Y; y++) {
			uint64_t a = w->ylo + ((uint64_t)y << w->yshift);
			uint32_t *to = tmp[(a - lo) >> s];
			for (int x = 0; x < HEAT_X; x++)
				to[x] += h[y * HEAT_X + x];
		}
		memcpy(h, tmp, sizeof tmp);
		w->ylo = lo;
		w->yshift = s;
	}
}

/* One access, in bin b (its bytes reach the bin when it closes). */
static inline void access_one(rep_thread *r, sym_view *v, uint64_t clock, uint64_t b, int kind,
			      unsigned size, uint64_t addr)
{
	rep_row *w = row_of(r, v, clock, addr);
	uint64_t last = addr + (size ? size - 1 : 0);
	w->count[kind]++;
	w->bytes[kind] += size;
	w->last = clock;
	/* most accesses stay on their row's last line, the others touch
	 * one or two */
	uint64_t la = addr >> 6, lb = last >> 6;
	if (la + 1 != w->line || lb != la) {
		if (__builtin_expect(lb > la + 1, 0))
			bset_span(&w->lines, addr, last);
		bset_add(&w->lines, la);
		if (lb != la)
			bset_add(&w->lines, lb);
		w->line = lb + 1;
		if ((addr & ~63ull) < w->amin)
			w->amin = addr & ~63ull;
		if ((last | 63) > w->amax)
			w->amax = last | 63;
	}
	if (w->heat) {
		if (addr < w->ylo || addr - w->ylo >= (uint64_t)HEAT_Y << w->yshift)
			heat_widen(w, addr);
		w->heat[((addr - w->ylo) >> w->yshift) * HEAT_X + (b >> HEAT_BIN_SHIFT)]++;
	}
}

void report_batch(rep_thread *r, sym_view *v, uint64_t clock, const sk_rec *a, size_t n)
{
	if (r->roi < 0)
		return;
	if (v->seq != r->seq) {	/* heap events passed: blocks may differ */
		r->seq = v->seq;
		caches_pass(r, v->seq);
	}
	/* in runs of one clock bin each */
	for (size_t i = 0; i < n;) {
		uint64_t b = (clock + i) >> r->cshift;
		if (b != r->bin) {
			bins_close(r);
			while (b >= REP_BINS) {
				bins_coarsen(r);
				b = (clock + i) >> r->cshift;
			}
			r->bin = b;
		}
		uint64_t end = ((b + 1) << r->cshift) - clock;
		for (size_t j = end < n ? (size_t)end : n; i < j; i++)
			access_one(r, v, clock + i, b, (int)a[i].kind, a[i].size, a[i].addr);
	}
}

/* -------------------------------------------------------------- time */

void report_stamp(rep_thread *r, uint64_t clock, uint64_t ns)
{
	if (r->roi >= 0) {
		r->ticks[r->roi] += clock - r->since;
		r->since = clock;
	}
	if (r->nanch) {	/* the segment since the last stamp is over */
		const rep_anchor *p = &r->anch[r->nanch - 1];
		for (int k = 0; k < nregions && clock > p->clock; k++)
			r->roi_ns[k] += (uint64_t)((double)r->ticks[k] * (double)(ns - p->ns) /
						   (double)(clock - p->clock));
	}
	memset(r->ticks, 0, (size_t)nregions * sizeof *r->ticks);
	r->anch = sym_grow(r->anch, &r->capanch, r->nanch + 1, sizeof *r->anch);
	r->anch[r->nanch++] = (rep_anchor){ clock, ns };
}

void report_region(rep_thread *r, uint64_t clock, int roi)
{
	if (r->roi >= 0)
		r->ticks[r->roi] += clock - r->since;
	r->roi = roi < nregions ? roi : -1;
	r->since = clock;
	gen_next(r);
}

void report_thread_end(rep_thread *r, uint64_t clock)
{
	r->end = clock;
	bins_close(r);
}

/* The time of clock c: between the stamps around it, by clock; at the
 * last stamp's time after it. */
static double time_of(const rep_thread *r, double c)
{
	size_t lo = 0, hi = r->nanch;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((double)r->anch[mid].clock <= c)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return (double)r->anch[0].ns;
	const rep_anchor *a = &r->anch[lo - 1];
	if (lo == r->nanch)
		return (double)a->ns;
	const rep_anchor *b = &r->anch[lo];
	return (double)a->ns + (c - (double)a->clock) * (double)(b->ns - a->ns) /
			       (double)(b->clock - a->clock);
}

/* ------------------------------------------------------------ merging */

/* The x axis of the series and the heat map: time in ns when every
 * thread has stamps, else the thread's clock (threads overlaid). */
typedef struct rep_axis {
	bool time;
	double x0, x1;
} rep_axis;

static double axis_of(const rep_axis *ax, const rep_thread *r, double c)
{
	return ax->time ? time_of(r, c) : c;
}

typedef struct rep_sum {
	const char *name;
	int roi;
	uint64_t count[2], bytes[2];
	double first, last;	/* on the axis */
	uint64_t amin, amax;
	bset lines;
	uint64_t pages;		/* of lines, once merged */
	double series[SERIES_N];
} rep_sum;

typedef struct rep_all {
	rep_axis ax;
	rep_sum *s;
	size_t n, cap;
} rep_all;

static rep_sum *sum_get(rep_all *all, const char *name, int roi)
{
	for (size_t i = 0; i < all->n; i++)	/* few objects: a scan */
		if (all->s[i].roi == roi && !strcmp(all->s[i].name, name))
			return &all->s[i];
	all->s = sym_grow(all->s, &all->cap, all->n + 1, sizeof *all->s);
	rep_sum *x = &all->s[all->n++];
	memset(x, 0, sizeof *x);
	x->name = name;
	x->roi = roi;
	x->first = 1e300;
	x->last = -1e300;
	x->amin = UINT64_MAX;
	return x;
}

/* Adds `v` spread evenly over [a, b) of the axis into SERIES_N intervals. */
static void series_add(double *series, const rep_axis *ax, double a, double b, double v)
{
	double w = (ax->x1 - ax->x0) / SERIES_N;
	if (w <= 0) {
		series[0] += v;
		return;
	}
	double fa = (a - ax->x0) / w, fb = (b - ax->x0) / w;
	if (fb <= fa) {
		int k = (int)fa;
		series[k < 0 ? 0 : k >= SERIES_N ? SERIES_N - 1 : k] += v;
		return;
	}
	for (int k = fa < 0 ? 0 : (int)fa; k < SERIES_N && k < fb; k++) {
		double lo = fa > k ? fa : k, hi = fb < k + 1 ? fb : k + 1;
		if (hi > lo)
			series[k] += v * (hi - lo) / (fb - fa);
	}
}

static void row_merge(rep_all *all, const rep_thread *r, const rep_row *w)
{
	rep_sum *x = sum_get(all, r->names[w->group], w->roi);
	for (int k = 0; k < 2; k++) {
		x->count[k] += w->count[k];
		x->bytes[k] += w->bytes[k];
	}
	double f = axis_of(&all->ax, r, (double)w->first);
	double l = axis_of(&all->ax, r, (double)w->last + 1);
	x->first = f < x->first ? f : x->first;
	x->last = l > x->last ? l : x->last;
	x->amin = w->amin < x->amin ? w->amin : x->amin;
	x->amax = w->amax > x->amax ? w->amax : x->amax;
	bset_merge(&x->lines, &w->lines);
	for (uint64_t b = 0; b < REP_BINS; b++)
		if (w->bins[b])
			series_add(x->series, &all->ax, axis_of(&all->ax, r, (double)(b << r->cshift)),
				   axis_of(&all->ax, r, (double)((b + 1) << r->cshift)),
				   (double)w->bins[b]);
}

static void axis_setup(rep_axis *ax)
{
	ax->time = threads != NULL;
	ax->x0 = 1e300;
	ax->x1 = 0;
	for (const rep_thread *r = threads; r; r = r->next) {
		ax->time &= r->nanch > 0;
		if ((double)r->end > ax->x1)
			ax->x1 = (double)r->end;
	}
	if (!ax->time) {
		ax->x0 = 0;
		return;
	}
	ax->x1 = 0;
	for (const rep_thread *r = threads; r; r = r->next) {
		if ((double)r->anch[0].ns < ax->x0)
			ax->x0 = (double)r->anch[0].ns;
		if ((double)r->anch[r->nanch - 1].ns > ax->x1)
			ax->x1 = (double)r->anch[r->nanch - 1].ns;
	}
}

/* ------------------------------------------------------------ writing */

static const char *region_name(int roi)
{
	if (!have_regions())
		return "all";
	if (roi < cfg.nroi)
		return cfg.roi[roi];
	return roi > cfg.nroi ? mark_names[roi - cfg.nroi - 1] : "markers";
}

int report_marker(const char *name)
{
	int k = cfg.nroi;	/* no name, or more names than MARK_MAX */
	if (!name || !cfg.markers)
		return k;
	pthread_mutex_lock(&mark_mu);
	int j = 0;
	while (j < nmarks && strcmp(mark_names[j], name))
		j++;
	if (j == nmarks && nmarks < MARK_MAX && (mark_names[j] = strdup(name)))
		nmarks++;
	if (j < nmarks)
		k = cfg.nroi + 1 + j;
	pthread_mutex_unlock(&mark_mu);
	return k;
}


/* a point of the axis as text: seconds since the first stamp, or the
 * clock */
static void put_x(char *out, size_t n, const rep_axis *ax, double x)
{
	if (ax->time)
		snprintf(out, n, "%.6f", (x - ax->x0) / 1e9);
	else
		snprintf(out, n, "%.0f", x);
}

typedef struct rep_region {
	uint64_t count[2], bytes[2];
	double first, last;
	double wall;		/* seconds, < 0: unknown */
	bset lines;
	uint64_t pages;
} rep_region;

/* Whether region k is written: the markers' without a name is left out
 * when every marked region had one. */
static bool region_shown(int k, const rep_region *g)
{
	return !(nmarks && k == cfg.nroi && !(g->count[0] + g->count[1]));
}

static void region_sum(const rep_all *all, int roi, rep_region *g)
{
	memset(g, 0, sizeof *g);
	g->first = 1e300;
	g->last = -1e300;
	for (size_t i = 0; i < all->n; i++) {
		const rep_sum *x = &all->s[i];
		if (x->roi != roi)
			continue;
		for (int k = 0; k < 2; k++) {
			g->count[k] += x->count[k];
			g->bytes[k] += x->bytes[k];
		}
		g->first = x->first < g->first ? x->first : g->first;
		g->last = x->last > g->last ? x->last : g->last;
		bset_merge(&g->lines, &x->lines);
	}
	g->pages = bset_pages(&g->lines);
	g->wall = -1;
	if (!all->ax.time)
		return;
	if (!have_regions()) {
		g->wall = (all->ax.x1 - all->ax.x0) / 1e9;
		return;
	}
	uint64_t ns = 0;
	for (const rep_thread *r = threads; r; r = r->next)
		ns += r->roi_ns[roi];
	g->wall = (double)ns / 1e9;
}

static int sum_cmp(const void *a, const void *b)
{
	const rep_sum *x = a, *y = b;
	if (x->roi != y->roi)
		return x->roi < y->roi ? -1 : 1;
	uint64_t cx = x->count[0] + x->count[1], cy = y->count[0] + y->count[1];
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void write_tables(FILE *out, const rep_all *all, rep_region *regs)
{
	int width = 6;
	for (size_t i = 0; i < all->n; i++)
		if ((int)strlen(all->s[i].name) > width)
			width = (int)strlen(all->s[i].name);
	fprintf(out, "# skel report: %s\n", all->ax.time ?
		"times in seconds since the recording started (CLOCK_MONOTONIC at each buffer "
		"flush, interpolated by access count in between)" :
		"no timestamps in this recording (an older skel): first/last are access counts");
	for (int k = 0; k < nregions; k++) {
		rep_region *g = &regs[k];
		char f[32] = "-", l[32] = "-";
		if (!region_shown(k, g))
			continue;
		if (g->count[0] + g->count[1]) {
			put_x(f, sizeof f, &all->ax, g->first);
			put_x(l, sizeof l, &all->ax, g->last);
		}
		fprintf(out, "\nregion %s: %" PRIu64 " accesses, %" PRIu64 " bytes read, %" PRIu64
			" bytes written, %" PRIu64 " cache lines, %" PRIu64 " pages, first %s, last %s",
			region_name(k), g->count[0] + g->count[1], g->bytes[0], g->bytes[1],
			g->lines.count, g->pages, f, l);
		if (g->wall >= 0)
			fprintf(out, ", wall %.6f s, %.4g bytes/s", g->wall, g->wall > 0 ?
				(double)(g->bytes[0] + g->bytes[1]) / g->wall : 0.0);
		fprintf(out, "\n  %-*s %12s %14s %14s %10s %8s %12s %12s\n", width, "object",
			"accesses", "bytes_read", "bytes_written", "lines", "pages", "first", "last");
		for (size_t i = 0; i < all->n; i++) {
			const rep_sum *x = &all->s[i];
			if (x->roi != k)
				continue;
			put_x(f, sizeof f, &all->ax, x->first);
			put_x(l, sizeof l, &all->ax, x->last);
			fprintf(out, "  %-*s %12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu64
				" %8" PRIu64 " %12s %12s\n", width, x->name, x->count[0] + x->count[1],
				x->bytes[0], x->bytes[1], x->lines.count, x->pages, f, l);
		}
	}
}

static FILE *csv_open(const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", cfg.csv_dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "skel: %s: %s\n", path, strerror(errno));
	return f;
}

static int csv_close(FILE *f, const char *name)
{
	if (fclose(f) != 0) {
		fprintf(stderr, "skel: %s/%s: write error\n", cfg.csv_dir, name);
		return -1;
	}
	return 0;
}

/* Object names are symbols, heap@SITE, stack#T: no commas or quotes,
 * but a C++ symbol may have both; such a field is quoted. */
static void csv_name(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int write_csv(const rep_all *all, const rep_region *regs)
{
	if (mkdir(cfg.csv_dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "skel: %s: %s\n", cfg.csv_dir, strerror(errno));
		return -1;
	}
	const char *unit = all->ax.time ? "s" : "accesses";
	char f[32], l[32];
	FILE *o = csv_open("regions.csv");
	if (!o)
		return -1;
	fprintf(o, "region,accesses,reads,writes,bytes_read,bytes_written,lines,pages,"
		"first_%s,last_%s,wall_s,bytes_per_s\n", unit, unit);
	for (int k = 0; k < nregions; k++) {
		const rep_region *g = &regs[k];
		if (!region_shown(k, g))
			continue;
		put_x(f, sizeof f, &all->ax, g->count[0] + g->count[1] ? g->first : all->ax.x0);
		put_x(l, sizeof l, &all->ax, g->count[0] + g->count[1] ? g->last : all->ax.x0);
		csv_name(o, region_name(k));
		fprintf(o, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%s,%s,", g->count[0] + g->count[1], g->count[0], g->count[1],
			g->bytes[0], g->bytes[1], g->lines.count, g->pages, f, l);
		if (g->wall >= 0)
			fprintf(o, "%.6f,%.6g\n", g->wall, g->wall > 0 ?
				(double)(g->bytes[0] + g->bytes[1]) / g->wall : 0.0);
		else
			fputs(",\n", o);
	}
	if (csv_close(o, "regions.csv") || !(o = csv_open("objects.csv")))
		return -1;
	fprintf(o, "region,object,accesses,reads,writes,bytes_read,bytes_written,lines,pages,"
		"first_%s,last_%s\n", unit, unit);
	for (size_t i = 0; i < all->n; i++) {
		const rep_sum *x = &all->s[i];
		put_x(f, sizeof f, &all->ax, x->first);
		put_x(l, sizeof l, &all->ax, x->last);
		csv_name(o, region_name(x->roi));
		fputc(',', o);
		csv_name(o, x->name);
		fprintf(o, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%s,%s\n", x->count[0] + x->count[1], x->count[0], x->count[1],
			x->bytes[0], x->bytes[1], x->lines.count, x->pages, f, l);
	}
	if (csv_close(o, "objects.csv") || !(o = csv_open("series.csv")))
		return -1;
	fprintf(o, "region,object,interval,start_%s,end_%s,bytes\n", unit, unit);
	double w = (all->ax.x1 - all->ax.x0) / SERIES_N;
	for (size_t i = 0; i < all->n; i++)
		for (int k = 0; k < SERIES_N; k++) {
			const rep_sum *x = &all->s[i];
			put_x(f, sizeof f, &all->ax, all->ax.x0 + k * w);
			put_x(l, sizeof l, &all->ax, all->ax.x0 + (k + 1) * w);
			csv_name(o, region_name(x->roi));
			fputc(',', o);
			csv_name(o, x->name);
			fprintf(o, ",%d,%s,%s,%.0f\n", k, f, l, x->series[k]);
		}
	return csv_close(o, "series.csv");
}

/* ----------------------------------------------------------- heat map */

typedef struct band {
	const char *name;
	uint64_t lo, hi;	/* addresses [lo, hi] */
	uint64_t accesses;
} band;

/* The busiest objects over all regions, at most PLOT_BANDS. */
static int bands_pick(const rep_all *all, band *b)
{
	int n = 0;
	for (size_t i = 0; i < all->n; i++) {
		const rep_sum *x = &all->s[i];
		int k;
		for (k = 0; k < n && strcmp(b[k].name, x->name); k++)
			;
		if (k == n) {
			if (n == PLOT_BANDS * 4)
				continue;
			b[n++] = (band){ x->name, x->amin, x->amax, 0 };
		}
		b[k].lo = x->amin < b[k].lo ? x->amin : b[k].lo;
		b[k].hi = x->amax > b[k].hi ? x->amax : b[k].hi;
		b[k].accesses += x->count[0] + x->count[1];
	}
	for (int i = 1; i < n; i++)	/* by accesses, most first */
		for (int j = i; j > 0 && b[j].accesses > b[j - 1].accesses; j--) {
			band t = b[j];
			b[j] = b[j - 1];
			b[j - 1] = t;
		}
	return n < PLOT_BANDS ? n : PLOT_BANDS;
}

/* [a, b) of a scale of n steps from lo with width w: the first step and
 * one past the last, within [0, n). */
static void steps_of(double a, double b, double lo, double w, int n, int *s0, int *s1)
{
	double f0 = w > 0 ? (a - lo) / w : 0, f1 = w > 0 ? (b - lo) / w : 0;
	*s0 = f0 < 0 ? 0 : f0 >= n ? n - 1 : (int)f0;
	*s1 = f1 <= *s0 + 1 ? *s0 + 1 : f1 > n ? n : (int)(f1 + 0.999999);
}

/* A thread's row into the plot's cells: each heat cell's accesses spread
 * evenly over the plot cells its address range and its clock range
 * (placed on the axis) cover. */
static void heat_merge(double *cells, const rep_axis *ax, const rep_thread *r,
		       const rep_row *w, const band *b, int k)
{
	double cw = (double)((uint64_t)1 << (r->cshift + HEAT_BIN_SHIFT));
	double aw = ((double)(b->hi - b->lo) + 1) / BAND_ROWS;
	for (int y = 0; y < HEAT_Y; y++) {
		double a0 = (double)(w->ylo + ((uint64_t)y << w->yshift));
		int r0, r1;
		steps_of(a0, a0 + (double)((uint64_t)1 << w->yshift), (double)b->lo, aw, BAND_ROWS,
			 &r0, &r1);
		for (int x = 0; x < HEAT_X; x++) {
			uint32_t v = w->heat[y * HEAT_X + x];
			if (!v)
				continue;
			int c0, c1;
			steps_of(axis_of(ax, r, x * cw), axis_of(ax, r, (x + 1) * cw), ax->x0,
				 (ax->x1 - ax->x0) / HEAT_X, HEAT_X, &c0, &c1);
			double share = v / ((double)(r1 - r0) * (c1 - c0));
			for (int row = r0; row < r1; row++)	/* low addresses below */
				for (int col = c0; col < c1; col++)
					cells[(k * BAND_ROWS + BAND_ROWS - 1 - row) * HEAT_X + col] += share;
		}
	}
}

static int write_heat(const rep_all *all)
{
	band b[PLOT_BANDS * 4];
	int n = bands_pick(all, b);
	double *cells = rep_calloc((size_t)(n ? n : 1) * BAND_ROWS * HEAT_X, sizeof *cells);
	for (const rep_thread *r = threads; r; r = r->next)
		for (size_t i = 0; i < r->nrows; i++)
			for (int k = 0; k < n; k++)
				if (!strcmp(r->names[r->rows[i]->group], b[k].name))
					heat_merge(cells, &all->ax, r, r->rows[i], &b[k], k);
	FILE *f = fopen(cfg.heat_out, "w");
	if (!f) {
		fprintf(stderr, "skel: %s: %s\n", cfg.heat_out, strerror(errno));
		free(cells);
		return -1;
	}
	char x0[32], x1[32];
	put_x(x0, sizeof x0, &all->ax, all->ax.x0);
	put_x(x1, sizeof x1, &all->ax, all->ax.x1);
	fprintf(f, "skel-heat 1\naxis %s %s %s\ngrid %d %d\n", all->ax.time ? "seconds" : "accesses",
		x0, x1, HEAT_X, n * BAND_ROWS);
	for (int k = 0; k < n; k++)
		fprintf(f, "band %d %d 0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64 " %s\n", k * BAND_ROWS,
			BAND_ROWS, b[k].lo, b[k].hi, b[k].accesses, b[k].name);
	for (int y = 0; y < n * BAND_ROWS; y++)
		for (int x = 0; x < HEAT_X; x++)
			fprintf(f, "%.6g%c", cells[y * HEAT_X + x], x == HEAT_X - 1 ? '\n' : ' ');
	free(cells);
	if (fclose(f) != 0) {
		fprintf(stderr, "skel: %s: write error\n", cfg.heat_out);
		return -1;
	}
	return 0;
}

static void threads_free(void)
{
	while (threads) {
		rep_thread *r = threads;
		threads = r->next;
		for (size_t i = 0; i < r->nrows; i++) {
			bset_free(&r->rows[i]->lines);
			free(r->rows[i]->bins);
			free(r->rows[i]->heat);
			free(r->rows[i]);
		}
		for (size_t i = 0; i < r->nnames; i++)
			free(r->names[i]);
		free(r->names);
		free(r->nidx);
		free(r->skey);
		free(r->sgrp);
		free(r->rows);
		free(r->ridx);
		free(r->anch);
		free(r->lc);
		free(r->pend);
		free(r->ticks);
		free(r->roi_ns);
		free(r);
	}
}

int report_write(FILE *out)
{
	rep_all all = { .n = 0 };
	axis_setup(&all.ax);
	for (const rep_thread *r = threads; r; r = r->next)
		for (size_t i = 0; i < r->nrows; i++)
			row_merge(&all, r, r->rows[i]);
	for (size_t i = 0; i < all.n; i++)
		all.s[i].pages = bset_pages(&all.s[i].lines);
	if (all.n)
		qsort(all.s, all.n, sizeof *all.s, sum_cmp);
	/* the regions that can have rows: the marker names seen */
	if (cfg.markers)
		nregions = cfg.nroi + 1 + nmarks;
	rep_region *regs = rep_calloc((size_t)nregions, sizeof *regs);
	for (int k = 0; k < nregions; k++)
		region_sum(&all, k, &regs[k]);
	write_tables(out, &all, regs);
	int rc = 0;
	if (cfg.csv_dir && write_csv(&all, regs) < 0)
		rc = -1;
	if (cfg.heat_out && write_heat(&all) < 0)
		rc = -1;
	for (int k = 0; k < nregions; k++) {
		bset_free(&regs[k].lines);
	}
	free(regs);
	for (size_t i = 0; i < all.n; i++) {
		bset_free(&all.s[i].lines);
	}
	free(all.s);
	threads_free();
	return rc;
}
