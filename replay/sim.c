/* sim.c — cachegrind's cache model over the replayed accesses (sim.h).
 *
 * The model is the one valgrind's cachegrind documents and implements
 * (Nethercote, "Dynamic binary analysis and instrumentation", PhD thesis,
 * 2004, ch. 3): per level a tag array, LRU by moving the hit way to the
 * front of its set, write-allocate, LL consulted on L1 misses only. */
#include "sim.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

const char *const sim_event_names[SIM_NEVENTS] = {
	"Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"
};

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

int sim_parse_level(const char *arg, sim_level *l, char err[SIM_ERR_LEN])
{
	unsigned long long v[3];
	const char *p = arg;
	for (int k = 0; k < 3; k++) {
		char *end;
		if (*p < '0' || *p > '9')
			goto bad;
		v[k] = strtoull(p, &end, 10);
		if (end == p || *end != (k < 2 ? ',' : '\0') || v[k] == 0 || v[k] > (1ull << 40))
			goto bad;
		p = end + 1;
	}
	if (v[1] > 1u << 20 || v[2] > 1u << 20)
		goto bad;
	l->size = v[0];
	l->assoc = (unsigned)v[1];
	l->line = (unsigned)v[2];
	return 0;
bad:
	snprintf(err, SIM_ERR_LEN, "'%s' is not SIZE,ASSOC,LINE (three positive decimal numbers)",
		 arg);
	return -1;
}

int sim_check_level(const char *name, const sim_level *l, char err[SIM_ERR_LEN])
{
	if (!l->size || !l->assoc || !l->line) {
		snprintf(err, SIM_ERR_LEN, "%s: size, associativity and line size must be positive",
			 name);
		return -1;
	}
	if (!pow2(l->line) || l->line < SIM_MAX_ACCESS) {
		snprintf(err, SIM_ERR_LEN, "%s: line size %u is not a power of two of at least %d",
			 name, l->line, SIM_MAX_ACCESS);
		return -1;
	}
	uint64_t way = (uint64_t)l->assoc * l->line;
	if (l->size % way) {
		snprintf(err, SIM_ERR_LEN, "%s: size %" PRIu64 " is not a multiple of "
			 "associativity × line size (%" PRIu64 ")", name, l->size, way);
		return -1;
	}
	if (!pow2(l->size / way)) {
		snprintf(err, SIM_ERR_LEN, "%s: %" PRIu64 " sets: the set count must be a power of two",
			 name, l->size / way);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------- configuration */

/* What cachegrind does with a last level whose set count is not a power of
 * two (CPUID reports such sizes): keep the largest power of two below it
 * as the set count and raise the associativity until the sets hold at
 * least the reported size. */
static void tweak_ll(sim_level *l)
{
	if (!l->size || !l->assoc || !l->line)
		return;
	uint64_t sets = l->size / ((uint64_t)l->assoc * l->line);
	if (!sets)
		return;
	if (!pow2(sets)) {
		uint64_t p = (uint64_t)1 << log2u(sets);
		uint64_t lines = sets * l->assoc;
		l->assoc = (unsigned)((lines + p - 1) / p);
		sets = p;
	}
	l->size = sets * l->assoc * l->line;
}

#if defined(__x86_64__) || defined(__i386__)
/* AMD's associativity field of CPUID 0x80000006 (L2 and L3).  Codes
 * without a fixed meaning (9: "see leaf 0x8000001D") read as direct
 * mapped, as cachegrind reads them; tweak_ll then fixes the set count. */
static unsigned amd_assoc(unsigned code, uint64_t size, unsigned line)
{
	static const unsigned ways[16] = { 0, 1, 2, 1, 4, 1, 8, 1, 16, 1, 32, 48, 64, 96, 128, 0 };
	if (code == 15)
		return line ? (unsigned)(size / line) : 0;
	return ways[code & 15];
}

static bool amd_config(sim_config *c)
{
	unsigned a, b, cx, d;
	if (!__get_cpuid(0x80000000, &a, &b, &cx, &d) || a < 0x80000006)
		return false;
	__cpuid(0x80000005, a, b, cx, d);
	c->d1 = (sim_level){ (uint64_t)(cx >> 24) << 10, (cx >> 16) & 0xff, cx & 0xff };
	c->i1 = (sim_level){ (uint64_t)(d >> 24) << 10, (d >> 16) & 0xff, d & 0xff };
	__cpuid(0x80000006, a, b, cx, d);
	sim_level l2 = { (uint64_t)(cx >> 16) << 10, 0, cx & 0xff };
	l2.assoc = amd_assoc((cx >> 12) & 15, l2.size, l2.line);
	sim_level l3 = { (uint64_t)(d >> 18) << 19, 0, d & 0xff };
	l3.assoc = amd_assoc((d >> 12) & 15, l3.size, l3.line);
	c->ll = l3.size && l3.line ? l3 : l2;
	return c->d1.size && c->i1.size && c->ll.size;
}

/* Intel: the deterministic cache parameters of leaf 4. */
static bool intel_config(sim_config *c)
{
	unsigned a, b, cx, d, max = __get_cpuid_max(0, NULL);
	if (max < 4)
		return false;
	sim_level l2 = { 0, 0, 0 }, l3 = { 0, 0, 0 };
	for (unsigned i = 0; i < 16; i++) {
		__cpuid_count(4, i, a, b, cx, d);
		unsigned type = a & 31, level = (a >> 5) & 7;
		if (!type)
			break;
		sim_level l = { 0, (b >> 22) + 1, (b & 0xfff) + 1 };
		l.size = (uint64_t)l.assoc * l.line * (((b >> 12) & 0x3ff) + 1) * ((uint64_t)cx + 1);
		if (level == 1 && type == 1)
			c->d1 = l;
		else if (level == 1 && type == 2)
			c->i1 = l;
		else if (level == 2)
			l2 = l;
		else if (level == 3)
			l3 = l;
	}
	c->ll = l3.size ? l3 : l2;
	return c->d1.size && c->i1.size && c->ll.size;
}
#endif

void sim_default_config(sim_config *c)
{
	/* cachegrind's fallback when CPUID says nothing usable */
	sim_config fallback = { { 65536, 2, 64 }, { 65536, 2, 64 }, { 262144, 8, 64 } };
	sim_config got = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
	bool ok = false;
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, cx, d;
	char vendor[13] = "";
	if (__get_cpuid(0, &a, &b, &cx, &d)) {
		memcpy(vendor, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &cx, 4);
	}
	if (!strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine"))
		ok = amd_config(&got);
	else if (!strcmp(vendor, "GenuineIntel"))
		ok = intel_config(&got);
#endif
	*c = ok ? got : fallback;
	tweak_ll(&c->ll);
	char err[SIM_ERR_LEN];
	if (sim_check_level("I1", &c->i1, err) < 0 || sim_check_level("D1", &c->d1, err) < 0 ||
	    sim_check_level("LL", &c->ll, err) < 0)
		*c = fallback;
}

/* -------------------------------------------------------------- caches */

int sim_cache_init(sim_cache *c, const sim_level *l, char err[SIM_ERR_LEN])
{
	memset(c, 0, sizeof *c);
	c->l = *l;
	c->sets = l->size / ((uint64_t)l->assoc * l->line);
	c->set_mask = c->sets - 1;
	c->line_bits = log2u(l->line);
	c->tags = calloc(c->sets * l->assoc, sizeof *c->tags);
	if (!c->tags) {
		snprintf(err, SIM_ERR_LEN, "out of memory for a cache of %" PRIu64 " bytes", l->size);
		return -1;
	}
	return 0;
}

void sim_cache_free(sim_cache *c)
{
	free(c->tags);
	c->tags = NULL;
}

static inline bool cache_ref(sim_cache *c, uint64_t addr, unsigned size)
{
	uint64_t first = addr >> c->line_bits;
	uint64_t last = (addr + (size ? size - 1 : 0)) >> c->line_bits;
	if (first == last)
		return sim_line_miss(c, first);
	/* both lines are looked up: each lookup updates its set */
	bool m1 = sim_line_miss(c, first);
	bool m2 = sim_line_miss(c, first + 1);
	return m1 || m2;
}

bool sim_cache_ref(sim_cache *c, uint64_t addr, unsigned size)
{
	return cache_ref(c, addr, size);
}

/* ----------------------------------------------------------- simulator */

int sim_init(sim *s, const sim_config *c, bool per_pc, char err[SIM_ERR_LEN])
{
	memset(s, 0, sizeof *s);
	s->cfg = *c;
	s->per_pc = per_pc;
	if (sim_check_level("I1", &c->i1, err) < 0 || sim_check_level("D1", &c->d1, err) < 0 ||
	    sim_check_level("LL", &c->ll, err) < 0)
		return -1;
	if (sim_cache_init(&s->i1, &c->i1, err) < 0 || sim_cache_init(&s->d1, &c->d1, err) < 0 ||
	    sim_cache_init(&s->ll, &c->ll, err) < 0) {
		sim_free(s);
		return -1;
	}
	s->last_pc = UINT64_MAX;
	return 0;
}

int sim_init_reuse(sim *s, const sim_config *c, char err[SIM_ERR_LEN])
{
	memset(s, 0, sizeof *s);
	s->cfg = *c;
	s->reuse = true;
	if (sim_check_level("D1", &c->d1, err) < 0)
		return -1;
	sim_reuse_init(&s->ru, c->d1.line);
	return 0;
}

void sim_free(sim *s)
{
	sim_reuse_free(&s->ru);
	sim_cache_free(&s->i1);
	sim_cache_free(&s->d1);
	sim_cache_free(&s->ll);
	free(s->pcs.pc);
	free(s->pcs.cost);
	memset(&s->pcs, 0, sizeof s->pcs);
}

static size_t pc_slot(const sim_pcs *p, uint64_t key)
{
	size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (p->cap - 1);
	while (p->pc[j] && p->pc[j] != key)
		j = (j + 1) & (p->cap - 1);
	return j;
}

static void pcs_grow(sim *s)
{
	sim_pcs old = s->pcs, *p = &s->pcs;
	p->cap = old.cap ? 2 * old.cap : 4096;
	p->pc = calloc(p->cap, sizeof *p->pc);
	p->cost = calloc(p->cap, sizeof *p->cost);
	if (!p->pc || !p->cost) {
		fprintf(stderr, "skel: sim: out of memory (costs per instruction)\n");
		exit(2);
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.pc[i]) {
			size_t j = pc_slot(p, old.pc[i]);
			p->pc[j] = old.pc[i];
			p->cost[j] = old.cost[i];
		}
	free(old.pc);
	free(old.cost);
	s->last_pc = UINT64_MAX;
}

static sim_cost *cost_of(sim *s, uint64_t pc)
{
	if (pc == s->last_pc)
		return s->last;
	if (2 * (s->pcs.n + 1) > s->pcs.cap)
		pcs_grow(s);
	size_t j = pc_slot(&s->pcs, pc + 1);
	if (!s->pcs.pc[j]) {
		s->pcs.pc[j] = pc + 1;
		s->pcs.n++;
	}
	s->last_pc = pc;
	return s->last = &s->pcs.cost[j];
}

static inline void add_cost(sim_cost *c, int ev, int miss)
{
	c->ev[ev]++;
	if (miss)
		c->ev[ev + 1]++;
	if (miss == 2)
		c->ev[ev + 2]++;
}

/* One reference, event ev (SIM_IR, SIM_DR or SIM_DW): then the L1 miss,
 * then the LL miss (the two events after it). */
void sim_feed_ref_slow(sim_feed *f, sim_cache *l1, uint64_t pc, int ev, uint64_t addr,
		       unsigned size)
{
	int miss = 0;
	if (cache_ref(l1, addr, size))
		miss = cache_ref(&f->s->ll, addr, size) ? 2 : 1;
	add_cost(&f->cost, ev, miss);
	if (f->per_pc)
		add_cost(cost_of(f->s, pc), ev, miss);
}

void sim_feed_l1_miss(sim_feed *f, int ev, uint64_t addr, unsigned size)
{
	f->cost.ev[ev + 1]++;
	if (cache_ref(&f->s->ll, addr, size))
		f->cost.ev[ev + 2]++;
}

void sim_feed_init(sim_feed *f, sim *s, sim_thread *t)
{
	memset(f, 0, sizeof *f);
	f->s = s;
	f->i1 = t && t->own ? &t->i1 : &s->i1;
	f->d1 = t && t->own ? &t->d1 : &s->d1;
	f->per_pc = s->per_pc;
}

void sim_feed_flush(sim_feed *f, sim_thread *t)
{
	for (int k = 0; k < SIM_NEVENTS; k++) {
		f->s->total.ev[k] += f->cost.ev[k];
		if (t)
			t->total.ev[k] += f->cost.ev[k];
	}
	memset(&f->cost, 0, sizeof f->cost);
}

void sim_fetch_hits(sim *s, uint64_t n)
{
	s->total.ev[SIM_IR] += n;
}

/* ------------------------------------------------------ reuse distance
 *
 * The reuse distance of an access is the number of distinct lines
 * touched since the last access to its line (Mattson et al., "Evaluation
 * techniques for storage hierarchies", 1970: a fully associative LRU cache
 * of C lines hits exactly the accesses at distance < C).  Counted as in
 * Bennett and Kruskal ("LRU stack processing", 1975): each line's last
 * access time is marked in a Fenwick tree over time, and the distance is
 * the number of marks after it.  Times are renumbered (compacted) when
 * the tree is full, so it stays a few times the number of lines. */

static size_t reuse_slot(const sim_reuse *r, uint64_t key)
{
	size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (r->cap - 1);
	while (r->keys[j] && r->keys[j] != key)
		j = (j + 1) & (r->cap - 1);
	return j;
}

static void bit_add(sim_reuse *r, uint64_t t, int64_t v)
{
	for (uint64_t i = t + 1; i <= r->span; i += i & -i)
		r->bit[i - 1] += v;
}

/* marks at times < t */
static uint64_t bit_below(const sim_reuse *r, uint64_t t)
{
	uint64_t sum = 0;
	for (uint64_t i = t; i > 0; i -= i & -i)
		sum += r->bit[i - 1];
	return sum;
}

static void *reuse_alloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "skel: sim: out of memory (reuse distances)\n");
		exit(2);
	}
	return p;
}

typedef struct reuse_mark {
	uint64_t time;
	size_t slot;
} reuse_mark;

static int mark_cmp(const void *a, const void *b)
{
	const reuse_mark *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* Renumbers the lines' last times 0..n-1 in their order (distances only
 * count marks between times, so order is all that matters), in a tree
 * with room for a few times as many accesses more. */
static void reuse_compact(sim_reuse *r)
{
	reuse_mark *m = reuse_alloc(r->n + 1, sizeof *m);
	size_t k = 0;
	for (size_t j = 0; j < r->cap; j++)
		if (r->keys[j])
			m[k++] = (reuse_mark){ r->times[j], j };
	qsort(m, k, sizeof *m, mark_cmp);
	free(r->bit);
	r->span = 4 * (uint64_t)k > (1u << 20) ? 4 * (uint64_t)k : (1u << 20);
	r->bit = reuse_alloc(r->span, sizeof *r->bit);
	for (size_t i = 0; i < k; i++) {
		r->times[m[i].slot] = i;
		bit_add(r, i, 1);
	}
	r->now = k;
	free(m);
}

static void reuse_grow(sim_reuse *r)
{
	sim_reuse old = *r;
	r->cap = old.cap ? 2 * old.cap : 4096;
	r->keys = reuse_alloc(r->cap, sizeof *r->keys);
	r->times = reuse_alloc(r->cap, sizeof *r->times);
	for (size_t j = 0; j < old.cap; j++)
		if (old.keys[j]) {
			size_t i = reuse_slot(r, old.keys[j]);
			r->keys[i] = old.keys[j];
			r->times[i] = old.times[j];
		}
	free(old.keys);
	free(old.times);
}

void sim_reuse_init(sim_reuse *r, unsigned line)
{
	memset(r, 0, sizeof *r);
	r->line_bits = log2u(line);
}

void sim_reuse_free(sim_reuse *r)
{
	free(r->keys);
	free(r->times);
	free(r->bit);
	memset(r, 0, sizeof *r);
}

static unsigned log2_bucket(uint64_t d)
{
	return d ? 1 + log2u(d) : 0;
}

void sim_reuse_line(sim_reuse *r, uint64_t line)
{
	if (r->now == r->span)
		reuse_compact(r);
	if (2 * (r->n + 1) > r->cap)
		reuse_grow(r);
	size_t j = reuse_slot(r, line + 1);
	if (!r->keys[j]) {
		r->keys[j] = line + 1;
		r->n++;
		r->cold++;
	} else {
		uint64_t t = r->times[j];
		r->hist[log2_bucket(bit_below(r, r->now) - bit_below(r, t + 1))]++;
		bit_add(r, t, -1);
	}
	r->times[j] = r->now;
	bit_add(r, r->now, 1);
	r->now++;
}

static size_t batch(sim *s, sim_thread *t, const sim_rec *r, size_t n, bool last);

size_t sim_batch(sim *s, const sim_rec *r, size_t n, bool last)
{
	return batch(s, NULL, r, n, last);
}

int sim_thread_init(sim_thread *t, const sim *s, bool own, char err[SIM_ERR_LEN])
{
	memset(t, 0, sizeof *t);
	t->own = own && !s->reuse;
	if (t->own && (sim_cache_init(&t->i1, &s->cfg.i1, err) < 0 ||
		       sim_cache_init(&t->d1, &s->cfg.d1, err) < 0)) {
		sim_thread_free(t);
		return -1;
	}
	return 0;
}

void sim_thread_free(sim_thread *t)
{
	sim_cache_free(&t->i1);
	sim_cache_free(&t->d1);
}

size_t sim_batch_thread(sim *s, sim_thread *t, const sim_rec *r, size_t n, bool last,
			uint64_t fetch_hits)
{
	size_t done = batch(s, t, r, n, last);
	sim_fetch_hits(s, fetch_hits);
	t->total.ev[SIM_IR] += fetch_hits;
	return done;
}

static size_t batch(sim *s, sim_thread *t, const sim_rec *r, size_t n, bool last)
{
	if (s->reuse) {
		for (size_t i = 0; i < n; i++) {
			if (r[i].kind == SIM_FETCH)
				continue;
			unsigned b = s->ru.line_bits;
			uint64_t last_line = (r[i].addr + (r[i].size ? r[i].size - 1 : 0)) >> b;
			for (uint64_t l = r[i].addr >> b; l <= last_line; l++)
				sim_reuse_line(&s->ru, l);
		}
		return n;
	}
	if (!last && n && r[n - 1].kind == SIM_READ)
		n--;
	sim_feed f;
	sim_feed_init(&f, s, t);
	for (size_t i = 0; i < n; i++) {
		const sim_rec *x = &r[i];
		if (x->kind == SIM_FETCH)
			sim_feed_fetch(&f, x->pc, x->addr, x->size, x->n);
		else
			sim_feed_data(&f, x->pc, x->kind, x->size, x->addr);
	}
	sim_feed_flush(&f, t);
	return n;
}

/* ------------------------------------------------------------- output */

/* v with thousands separators, right-aligned in w columns */
static void put_count(FILE *f, uint64_t v, int w)
{
	char d[32], o[48];
	int n = snprintf(d, sizeof d, "%" PRIu64, v), k = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			o[k++] = ',';
		o[k++] = d[i];
	}
	o[k] = 0;
	fprintf(f, "%*s", w, o);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void line3(FILE *f, const char *what, uint64_t all, uint64_t rd, uint64_t wr, int w)
{
	fprintf(f, "%-14s", what);
	put_count(f, all, w);
	fputs("  (", f);
	put_count(f, rd, w - 2);
	fputs(" rd   +", f);
	put_count(f, wr, w - 2);
	fputs(" wr)\n", f);
}

static void rate3(FILE *f, const char *what, uint64_t all, uint64_t rd, uint64_t wr,
		  uint64_t n, uint64_t nr, uint64_t nw, int w)
{
	fprintf(f, "%-14s%*.1f%% (%*.1f%%     + %*.1f%%  )\n", what, w - 1, pct(all, n), w - 3,
		pct(rd, nr), w - 3, pct(wr, nw));
}

static void put_desc(FILE *f, const char *name, const sim_level *l)
{
	fprintf(f, "desc: %s cache:         %" PRIu64 " B, %u B, %u-way associative\n", name,
		l->size, l->line, l->assoc);
}

static void reuse_report(const sim_reuse *r, FILE *f)
{
	uint64_t total = r->cold, cum = 0;
	for (int k = 0; k < SIM_REUSE_BUCKETS; k++)
		total += r->hist[k];
	fprintf(f, "reuse distance: distinct %u-byte lines touched since the last access to "
		"the line, data accesses (an access per line it touches)\n", 1u << r->line_bits);
	fprintf(f, "%-24s %16s %8s %8s\n", "distance", "accesses", "share", "below");
	int top = SIM_REUSE_BUCKETS - 1;
	while (top > 0 && !r->hist[top])
		top--;
	for (int k = 0; k <= top; k++) {
		char what[48];
		if (k <= 1)
			snprintf(what, sizeof what, "%d", k);
		else
			snprintf(what, sizeof what, "%" PRIu64 "-%" PRIu64, (uint64_t)1 << (k - 1),
				 ((uint64_t)1 << k) - 1);
		cum += r->hist[k];
		fprintf(f, "%-24s %16" PRIu64 " %7.2f%% %7.2f%%\n", what, r->hist[k],
			pct(r->hist[k], total), pct(cum, total));
	}
	fprintf(f, "%-24s %16" PRIu64 " %7.2f%%\n", "cold (first access)", r->cold,
		pct(r->cold, total));
	fprintf(f, "%-24s %16" PRIu64 "\n", "total", total);
}

void sim_report(const sim *s, FILE *f, bool fetches)
{
	if (s->reuse) {
		reuse_report(&s->ru, f);
		return;
	}
	const uint64_t *e = s->total.ev;
	uint64_t ir = e[SIM_IR], dr = e[SIM_DR], dw = e[SIM_DW];
	uint64_t big = ir > dr + dw ? ir : dr + dw;
	int w = 6;
	for (char d[32]; w < 24 && snprintf(d, sizeof d, "%" PRIu64, big) + 4 > w - (w - 1) / 4;)
		w++;
	put_desc(f, "I1", &s->cfg.i1);
	put_desc(f, "D1", &s->cfg.d1);
	put_desc(f, "LL", &s->cfg.ll);
	if (fetches) {
		fprintf(f, "%-14s", "I   refs:");
		put_count(f, ir, w);
		fprintf(f, "\n%-14s", "I1  misses:");
		put_count(f, e[SIM_I1MR], w);
		fprintf(f, "\n%-14s", "LLi misses:");
		put_count(f, e[SIM_ILMR], w);
		fprintf(f, "\n%-14s%*.2f%%\n%-14s%*.2f%%\n\n", "I1  miss rate:", w - 1,
			pct(e[SIM_I1MR], ir), "LLi miss rate:", w - 1, pct(e[SIM_ILMR], ir));
	}
	line3(f, "D   refs:", dr + dw, dr, dw, w);
	line3(f, "D1  misses:", e[SIM_D1MR] + e[SIM_D1MW], e[SIM_D1MR], e[SIM_D1MW], w);
	line3(f, "LLd misses:", e[SIM_DLMR] + e[SIM_DLMW], e[SIM_DLMR], e[SIM_DLMW], w);
	rate3(f, "D1  miss rate:", e[SIM_D1MR] + e[SIM_D1MW], e[SIM_D1MR], e[SIM_D1MW],
	      dr + dw, dr, dw, w);
	rate3(f, "LLd miss rate:", e[SIM_DLMR] + e[SIM_DLMW], e[SIM_DLMR], e[SIM_DLMW],
	      dr + dw, dr, dw, w);
	fputc('\n', f);
	uint64_t llr = e[SIM_I1MR] + e[SIM_D1MR], llmr = e[SIM_ILMR] + e[SIM_DLMR];
	line3(f, "LL refs:", llr + e[SIM_D1MW], llr, e[SIM_D1MW], w);
	line3(f, "LL misses:", llmr + e[SIM_DLMW], llmr, e[SIM_DLMW], w);
	rate3(f, "LL miss rate:", llmr + e[SIM_DLMW], llmr, e[SIM_DLMW], ir + dr + dw, ir + dr,
	      dw, w);
}

int sim_write_pcs(const sim *s, FILE *f)
{
	fprintf(f, "skel-sim-pcs 1\n");
	put_desc(f, "I1", &s->cfg.i1);
	put_desc(f, "D1", &s->cfg.d1);
	put_desc(f, "LL", &s->cfg.ll);
	for (size_t i = 0; i < s->pcs.cap; i++) {
		if (!s->pcs.pc[i])
			continue;
		fprintf(f, "%" PRIx64, s->pcs.pc[i] - 1);
		for (int k = 0; k < SIM_NEVENTS; k++)
			fprintf(f, " %" PRIu64, s->pcs.cost[i].ev[k]);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}
