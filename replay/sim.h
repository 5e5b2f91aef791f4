/* sim.h — the cache simulator behind `--sim cache`: cachegrind's model,
 * fed by the replay on batches of accesses.
 *
 * Model (as cachegrind's, valgrind 3.19, so that the figures compare):
 * I1 and D1 in front of one LL, each set-associative with LRU replacement
 * and write-allocate; the LL is looked up only on an L1 miss (it is
 * neither inclusive nor exclusive: no back-invalidation, no fill from L1
 * evictions).  An access that crosses a line boundary looks up both
 * lines, in address order, and counts one miss at most per level.
 * Accesses larger than 16 bytes count as 16 bytes (cachegrind cuts them
 * to its minimum line size).  A read followed by a write of the same
 * instruction, address and size (a read-modify-write: lackey's `M`) is one
 * data read, as cachegrind counts it: the write can never miss.
 *
 * No libc beyond stdio/stdlib, no analyzer headers: the replayer is
 * compiled with it. */
#ifndef SKEL_SIM_H
#define SKEL_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_ERR_LEN 160
/* cachegrind's MIN_LINE_SIZE: the largest access it simulates */
#define SIM_MAX_ACCESS 16

typedef struct sim_level {
	uint64_t size;          /* bytes */
	unsigned assoc;
	unsigned line;          /* bytes */
} sim_level;

typedef struct sim_config {
	sim_level i1, d1, ll;
} sim_config;

/* One cache: tags[set * assoc + way], the most recently used first.  A
 * tag is the line number + 1 (0: empty way).  Looking up the most
 * recent line of a set again is a hit that changes nothing: most
 * lookups are that, the first way's test. */
typedef struct sim_cache {
	sim_level l;
	uint64_t sets;
	uint64_t set_mask;      /* sets - 1 */
	unsigned line_bits;
	uint64_t *tags;
} sim_cache;

/* cachegrind's events */
enum { SIM_IR, SIM_I1MR, SIM_ILMR, SIM_DR, SIM_D1MR, SIM_DLMR, SIM_DW, SIM_D1MW, SIM_DLMW,
       SIM_NEVENTS };
extern const char *const sim_event_names[SIM_NEVENTS];

typedef struct sim_cost {
	uint64_t ev[SIM_NEVENTS];
} sim_cost;

/* Per instruction costs (--sim-out): open addressing by runtime pc. */
typedef struct sim_pcs {
	uint64_t *pc;           /* pc + 1; 0 empty */
	sim_cost *cost;
	size_t cap, n;
} sim_pcs;

/* --sim reuse: per access to a line, the number of distinct lines touched
 * since the last access to it, in log2 buckets (sim.c). */
#define SIM_REUSE_BUCKETS 66
typedef struct sim_reuse {
	uint64_t *keys, *times; /* line + 1 (0: empty) -> time of its last access */
	size_t cap, n;
	int64_t *bit;           /* Fenwick tree over times: 1 at each line's last */
	uint64_t span, now;
	unsigned line_bits;
	/* [0]: distance 0; [k]: 2^(k-1) <= distance < 2^k */
	uint64_t hist[SIM_REUSE_BUCKETS];
	uint64_t cold;          /* first accesses to their line */
} sim_reuse;

void sim_reuse_init(sim_reuse *r, unsigned line);
void sim_reuse_free(sim_reuse *r);
/* One access to line (address >> line bits). */
void sim_reuse_line(sim_reuse *r, uint64_t line);

typedef struct sim {
	bool reuse;             /* --sim reuse, not cache */
	sim_reuse ru;
	sim_config cfg;
	sim_cache i1, d1, ll;
	sim_cost total;
	bool per_pc;            /* keep costs per instruction */
	sim_pcs pcs;
	uint64_t last_pc;       /* one-entry cache of cost_of */
	sim_cost *last;
} sim;

/* One access as the replay batches them.  A fetch record stands for n
 * instructions in a row that start in one I1 line: pc is the first one's,
 * addr and size are the last one's (pc and length; n = 1: addr == pc).
 * With costs per instruction (per_pc) every fetch is a record of its own. */
enum { SIM_READ = 0, SIM_WRITE = 1, SIM_FETCH = 2 };
typedef struct sim_rec {
	uint64_t pc, addr;
	uint32_t size;
	uint16_t kind;
	uint16_t n;             /* fetches: instructions (data: 1) */
} sim_rec;

/* "SIZE,ASSOC,LINE" (decimal, as cachegrind's --D1=...).  0, or -1 with
 * a message. */
int sim_parse_level(const char *arg, sim_level *l, char err[SIM_ERR_LEN]);
/* A level cachegrind accepts: line ≥ 16, size, line and the set count
 * powers of two, size = sets × assoc × line.  0, or -1 with a message. */
int sim_check_level(const char *name, const sim_level *l, char err[SIM_ERR_LEN]);
/* The configuration cachegrind picks on this machine (CPUID). */
void sim_default_config(sim_config *c);

int sim_cache_init(sim_cache *c, const sim_level *l, char err[SIM_ERR_LEN]);
void sim_cache_free(sim_cache *c);
/* Looks up [addr, addr+size) and updates LRU order; true on a miss (of
 * either line, for an access that crosses a boundary). */
bool sim_cache_ref(sim_cache *c, uint64_t addr, unsigned size);

/* whether line is the most recent of its set */
static inline bool sim_line_mru(const sim_cache *c, uint64_t line)
{
	return c->tags[(line & c->set_mask) * c->l.assoc] == line + 1;
}

/* One line: a hit moves it to the front of its set; a miss puts it
 * there and drops the least recently used way.  One pass: each way takes
 * the one before it until the line is found (a hit) or falls off the end
 * (a miss).  True on a miss. */
static inline bool sim_line_miss(sim_cache *c, uint64_t line)
{
	uint64_t tag = line + 1;
	uint64_t *set = c->tags + (line & c->set_mask) * c->l.assoc;
	uint64_t carry = set[0];
	if (carry == tag)
		return false;
	set[0] = tag;
	for (unsigned i = 1, n = c->l.assoc; i < n; i++) {
		uint64_t t = set[i];
		set[i] = carry;
		if (t == tag)
			return false;
		carry = t;
	}
	return true;
}

/* A thread's own L1s (--l1-per-thread: private I1 and D1 per thread, one
 * LL for all, as cores share a last level) and its counts. */
typedef struct sim_thread {
	sim_cache i1, d1;
	bool own;               /* its own L1s, else the simulator's */
	sim_cost total;
} sim_thread;

int sim_init(sim *s, const sim_config *c, bool per_pc, char err[SIM_ERR_LEN]);
/* own: private L1s of s's configuration.  0, or -1 with a message. */
int sim_thread_init(sim_thread *t, const sim *s, bool own, char err[SIM_ERR_LEN]);
void sim_thread_free(sim_thread *t);
/* sim_batch for thread t (its L1s when it owns them), then n_hits fetch
 * hits (sim_fetch_hits); t's counts get what the batch added. */
size_t sim_batch_thread(sim *s, sim_thread *t, const sim_rec *r, size_t n, bool last,
			uint64_t fetch_hits);
/* --sim reuse over lines of D1's size in c; data accesses only, every line
 * an access touches. */
int sim_init_reuse(sim *s, const sim_config *c, char err[SIM_ERR_LEN]);
void sim_free(sim *s);
/* Simulates accesses of one thread in order; returns how many it took:
 * n, or n - 1 when more are to come (!last) and the last is a read, which
 * the caller keeps for the next batch (its write may follow there). */
size_t sim_batch(sim *s, const sim_rec *r, size_t n, bool last);

/* n fetches known to hit I1 without changing it: instructions of the line
 * a fetch of the same batch looked up last (the replay counts them instead
 * of making records of them; totals only). */
void sim_fetch_hits(sim *s, uint64_t n);

/* One thread's accesses given to the simulator one by one, as the
 * replay makes them, with the effect sim_batch has on the same records:
 * a read then a write of the same pc, address and size (with no record
 * between) is a modify.  The feed's counts gather in `cost` until
 * sim_feed_flush; costs per instruction (per_pc) go to s at once.  The
 * simulator must be the feed's alone while it is fed (the offline
 * replay: one stream after the other; sim_batch: under the caller's
 * lock). */
typedef struct sim_feed {
	sim *s;
	sim_cache *i1, *d1;
	bool per_pc;
	bool rlast;             /* the last record was a read: */
	uint32_t rsize;
	uint64_t rpc, raddr;
	sim_cost cost;
} sim_feed;

/* thread t's L1s when it owns them, else s's */
void sim_feed_init(sim_feed *f, sim *s, sim_thread *t);
/* adds the feed's counts to s's and, when t, to t's */
void sim_feed_flush(sim_feed *f, sim_thread *t);
/* sim_feed_ref for an access that crosses into a line not the most
 * recent of its set, or with costs per instruction */
void sim_feed_ref_slow(sim_feed *f, sim_cache *l1, uint64_t pc, int ev, uint64_t addr,
		       unsigned size);
/* the LL's part of a reference (event ev) of one line that missed L1 */
void sim_feed_l1_miss(sim_feed *f, int ev, uint64_t addr, unsigned size);

/* One reference of event ev (SIM_IR, SIM_DR, SIM_DW) to l1. */
static inline void sim_feed_ref(sim_feed *f, sim_cache *l1, uint64_t pc, int ev, uint64_t addr,
				unsigned size)
{
	if (size > SIM_MAX_ACCESS)
		size = SIM_MAX_ACCESS;
	uint64_t first = addr >> l1->line_bits;
	uint64_t last = (addr + (size ? size - 1 : 0)) >> l1->line_bits;
	if (f->per_pc || (last != first && !(sim_line_mru(l1, first) && sim_line_mru(l1, last)))) {
		sim_feed_ref_slow(f, l1, pc, ev, addr, size);
		return;
	}
	f->cost.ev[ev]++;
	if (last != first)	/* two hits that change nothing (two sets) */
		return;
	if (sim_line_miss(l1, first))
		sim_feed_l1_miss(f, ev, addr, size);
}

/* A data access, kind SIM_READ or SIM_WRITE. */
static inline void sim_feed_data(sim_feed *f, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	if (kind == SIM_WRITE && f->rlast && addr == f->raddr && pc == f->rpc && size == f->rsize) {
		f->rlast = false;	/* a modify: the read alone counts */
		return;
	}
	f->rlast = kind == SIM_READ;
	f->rpc = pc;
	f->raddr = addr;
	f->rsize = size;
	sim_feed_ref(f, f->d1, pc, kind == SIM_READ ? SIM_DR : SIM_DW, addr, size);
}

/* A fetch record (sim_rec): n instructions from first to the one at `at`
 * (len bytes), all starting in one I1 line. */
static inline void sim_feed_fetch(sim_feed *f, uint64_t first, uint64_t at, unsigned len,
				  unsigned n)
{
	f->rlast = false;
	/* the first looks the line up, those between hit it unchanged, the
	 * last may cross into the next line: when it does not, it hits too */
	if (n > 1) {
		unsigned bits = f->i1->line_bits, size = len > SIM_MAX_ACCESS ? SIM_MAX_ACCESS : len;
		sim_feed_ref(f, f->i1, first, SIM_IR, first, 1);
		if ((at + (size ? size - 1 : 0)) >> bits == first >> bits) {
			f->cost.ev[SIM_IR] += n - 1u;
			return;
		}
		f->cost.ev[SIM_IR] += n - 2u;
	}
	sim_feed_ref(f, f->i1, at, SIM_IR, at, len);
}

/* n fetches that hit I1's last line, counted */
static inline void sim_feed_hits(sim_feed *f, uint64_t n)
{
	f->cost.ev[SIM_IR] += n;
}

/* cachegrind's summary ("I refs: ...", "D1 misses: ..."), with the
 * configuration first; fetches: whether the I lines mean anything. */
void sim_report(const sim *s, FILE *f, bool fetches);
/* Per instruction costs as "PC IR I1MR ... DLMW" lines (hex pc, runtime),
 * after a "skel-sim-pcs 1" line and the configuration; the driver turns
 * them into a cachegrind.out file. */
int sim_write_pcs(const sim *s, FILE *f);

#endif
