/* replayer.c — the main program a skeleton is compiled with: reads a value
 * trace, runs the skeleton over each thread's stream and writes the trace.
 *
 *   replayer VALUES [-o TRACE] [--format F] [--stats] [--quiet] [SIM]
 *   replayer --fd N  [-o TRACE] [--format F] [--stats] [--quiet] [SIM]
 *
 * F: text (default), bin, lackey, din, csv, count (docs/formats.md).
 * SIM: --fetches (the skeleton was compiled with SK_FETCHES=1: instruction
 * fetches between the accesses), --sim cache [--sim-out FILE] [--I1=...]
 * [--D1=...] [--LL=...]: the accesses go to the cache simulator (sim.h)
 * in batches instead of a format, its summary to TRACE.
 * VALUES is a value-trace file, read whole and replayed thread after
 * thread.  --fd N reads the value trace as it is written (skel run: the
 * read end of the FIFO the recorder writes): a reader (the main thread)
 * parses chunks and queues each thread's words; each thread's skeleton
 * runs on its own thread and waits in sk_end_of_stream() for more words.
 * The first thread writes to TRACE directly, the others to unlinked
 * temporary files (on disk) appended to TRACE in order at the end, so the
 * output is the same as an offline replay of the same run.
 *
 * Exit status: 0 when every stream was replayed to its end, 3 on a
 * desynchronisation (skeleton and stream disagree), 2 on unusable input;
 * a truncated or corrupt value trace is replayed up to the damage and
 * reported (exit 4). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif
#include "replay/format.h"
#include "replay/vpack.h"
#undef SK_ROI		/* the runtime is one for every skeleton */
#include "replay/skel_rt.h"
#include "replay/sim.h"
#include "replay/symbolize.h"
#include "replay/report.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <limits.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

extern const char sk_binary_id[];
extern const unsigned long long sk_patch_hash;
extern const uint64_t sk_entry_pcs[] __attribute__((weak));
extern const unsigned sk_nentry_pcs __attribute__((weak));
extern const uint64_t sk_code_ranges[] __attribute__((weak));
extern const unsigned sk_ncode_ranges __attribute__((weak));
extern const char *const sk_routine_names[];
extern const unsigned sk_nroutines;
/* weak: a skeleton from before per-scope stats has none */
extern const sk_scope sk_scopes[] __attribute__((weak));
extern const unsigned sk_nscopes __attribute__((weak));
extern const sk_pc_scope sk_pc_scopes[] __attribute__((weak));
extern const unsigned sk_npc_scopes __attribute__((weak));
/* weak: only an approximate skeleton (skel gen --omega) has them */
extern const double sk_omega __attribute__((weak));
extern const unsigned long long sk_chunk __attribute__((weak));
/* weak: a skeleton from before instruction fetches has none */
extern const sk_block_info sk_fetch_blocks[] __attribute__((weak));
extern const unsigned sk_nfetch_blocks __attribute__((weak));
extern const unsigned sk_nsliced __attribute__((weak));
extern const unsigned sk_nelided __attribute__((weak));
extern const unsigned char sk_insn_lens[] __attribute__((weak));
/* weak: defined by a skeleton compiled with SK_ROI=1 (skel_rt.h) */
extern const int sk_roi_compiled __attribute__((weak));

/* ------------------------------------------------------------ objects
 *
 * A whole-process recording has one skeleton per covered object: the
 * executable's is linked in (module 0), the shared objects' are loaded with
 * dlopen from the files SKEL_MODULES names (colon-separated, the driver
 * compiles them).  The OBJECTS chunk says which object has which number in
 * the entry words, its load bias and the patch it was recorded with;
 * sk_dispatch enters the skeleton of the object an entry word names. */
struct sk_module {
	const char *binary_id;		/* hex identity */
	unsigned long long patch_hash;
	void (*dispatch)(sk_thread *, uint64_t);
	const uint64_t *entry_pcs;	/* sorted, for sk_ijump_other */
	unsigned nentry_pcs;
	const uint64_t *code_ranges;
	unsigned ncode_ranges;
	const sk_block_info *blocks;	/* for fetches: FETCH() numbers */
	unsigned nblocks;
	const unsigned char *insn_lens;
	const char *file;		/* the module's .so, NULL: linked in */
	const char *object;		/* the object's path as recorded */
	const char *const *names;	/* sk_routine_names, by routine id */
	unsigned nnames;
	unsigned char *roi;		/* SK_ROI_* by routine id, or NULL */
	/* --sim cache without costs per instruction: each block's fetches
	 * as runs (fetch_runs_of), block b's from runs[run_of[b]] to
	 * runs[run_of[b + 1]] */
	struct fetch_run *runs;
	uint32_t *run_of;
	uint64_t bias;
	uint32_t index;			/* in entry words */
	bool bound;			/* the recording covered it */
	const uint64_t *links;		/* its linked PLT slots' callees
					 * (VT_LINKS, sk_plt_linked), or NULL */
	uint32_t nlinks;
	/* --stats per routine and loop (sk_scopes, sk_pc_scopes), or 0 */
	const sk_scope *scopes;
	const sk_pc_scope *pc_scopes;
	unsigned nscopes, npc_scopes;
};

static sk_module mods[PATCH_MAX_OBJECTS];
static size_t nmods;
static sk_module *by_index[PATCH_MAX_OBJECTS];
static vt_objects objs;			/* every object, covered or not */

static void *module_sym(void *h, const char *file, const char *name, bool need)
{
	void *p = dlsym(h, name);
	if (!p && need) {
		fprintf(stderr, "skel: %s: not a skeleton module (no %s)\n", file, name);
		exit(2);
	}
	return p;
}

/* Module 0 from the linked skeleton, then those SKEL_MODULES names. */
static void modules_load(void)
{
	mods[0] = (sk_module){ .binary_id = sk_binary_id, .patch_hash = sk_patch_hash,
			       .dispatch = sk_module_dispatch, .names = sk_routine_names,
			       .nnames = sk_nroutines };
	if (&sk_nentry_pcs) {
		mods[0].entry_pcs = sk_entry_pcs;
		mods[0].nentry_pcs = sk_nentry_pcs;
	}
	if (&sk_ncode_ranges) {
		mods[0].code_ranges = sk_code_ranges;
		mods[0].ncode_ranges = sk_ncode_ranges;
	}
	if (&sk_nfetch_blocks && sk_fetch_blocks && sk_insn_lens) {
		mods[0].blocks = sk_fetch_blocks;
		mods[0].nblocks = sk_nfetch_blocks;
		mods[0].insn_lens = sk_insn_lens;
	}
	if (sk_scopes && &sk_nscopes && sk_pc_scopes && &sk_npc_scopes) {
		mods[0].scopes = sk_scopes;
		mods[0].nscopes = sk_nscopes;
		mods[0].pc_scopes = sk_pc_scopes;
		mods[0].npc_scopes = sk_npc_scopes;
	}
	nmods = 1;
	const char *env = getenv("SKEL_MODULES");
	char *list = env ? strdup(env) : NULL, *save = NULL;
	for (char *f = list ? strtok_r(list, ":", &save) : NULL; f; f = strtok_r(NULL, ":", &save)) {
		if (nmods == PATCH_MAX_OBJECTS)
			break;
		void *h = dlopen(f, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "skel: %s: cannot load the skeleton module: %s\n", f, dlerror());
			exit(2);
		}
		sk_module *m = &mods[nmods++];
		m->file = strdup(f);
		m->binary_id = module_sym(h, f, "sk_binary_id", true);
		m->patch_hash = *(const unsigned long long *)module_sym(h, f, "sk_patch_hash", true);
		*(void **)&m->dispatch = module_sym(h, f, "sk_module_dispatch", true);
		const unsigned *n = module_sym(h, f, "sk_nentry_pcs", false);
		if (n) {
			m->entry_pcs = module_sym(h, f, "sk_entry_pcs", true);
			m->nentry_pcs = *n;
		}
		n = module_sym(h, f, "sk_ncode_ranges", false);
		if (n) {
			m->code_ranges = module_sym(h, f, "sk_code_ranges", true);
			m->ncode_ranges = *n;
		}
		n = module_sym(h, f, "sk_nroutines", false);
		if (n) {
			m->names = module_sym(h, f, "sk_routine_names", true);
			m->nnames = *n;
		}
		n = module_sym(h, f, "sk_nfetch_blocks", false);
		if (n) {
			m->blocks = module_sym(h, f, "sk_fetch_blocks", true);
			m->insn_lens = module_sym(h, f, "sk_insn_lens", true);
			m->nblocks = *n;
		}
		n = module_sym(h, f, "sk_nscopes", false);
		const unsigned *npc = module_sym(h, f, "sk_npc_scopes", false);
		if (n && npc) {
			m->scopes = module_sym(h, f, "sk_scopes", true);
			m->nscopes = *n;
			m->pc_scopes = module_sym(h, f, "sk_pc_scopes", true);
			m->npc_scopes = *npc;
		}
	}
	free(list);
	mods[0].bound = true;
	by_index[0] = &mods[0];
}

static void hex_bytes(const uint8_t *b, uint32_t n, char *out)
{
	if (n > SKEL_ID_MAX)
		n = SKEL_ID_MAX;
	for (uint32_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Objects of the process (an OBJECTS chunk's, or all of a file's) join
 * `objs`, and the covered ones get their skeletons.  0, or -1 after
 * saying why (a covered object without a module, or recorded with another
 * skeleton of it). */
static void symbols_of_objects(const vt_object *v, size_t n, const char *what);

static int modules_bind(const vt_object *v, size_t n, const char *what)
{
	size_t first = objs.n;
	vt_object *grown = realloc(objs.v, (objs.n + n + 1) * sizeof *grown);
	if (!grown) {
		fprintf(stderr, "skel: replay: out of memory\n");
		exit(2);
	}
	objs.v = grown;
	memcpy(objs.v + objs.n, v, n * sizeof *v);
	objs.n += n;
	for (size_t i = first; i < objs.n; i++)
		objs.v[i].path[sizeof objs.v[i].path - 1] = 0;
	symbols_of_objects(objs.v + first, objs.n - first, what);
	for (size_t i = first; i < objs.n; i++) {
		const vt_object *o = &objs.v[i];
		if (!(o->flags & VT_OBJ_COVERED) || o->index == 0)
			continue;
		char id[2 * SKEL_ID_MAX + 1];
		hex_bytes(o->id, o->id_len, id);
		sk_module *m = NULL;
		for (size_t k = 1; k < nmods && !m; k++)
			if (!strcmp(mods[k].binary_id, id))
				m = &mods[k];
		if (o->index >= PATCH_MAX_OBJECTS) {
			fprintf(stderr, "skel: %s: object %s has number %u, beyond %d\n", what,
				o->path, o->index, PATCH_MAX_OBJECTS);
			return -1;
		}
		if (!m) {
			fprintf(stderr, "skel: %s: %s (%s) was recorded, but no skeleton module "
				"of it was given\n", what, o->path, id);
			return -1;
		}
		if (m->patch_hash != o->patch_hash) {
			fprintf(stderr, "skel: %s: %s was recorded with another skeleton of it "
				"(patch %016llx, the module's is %016llx); record again\n", what,
				o->path, (unsigned long long)o->patch_hash, m->patch_hash);
			return -1;
		}
		m->bias = o->bias;
		m->index = o->index;
		m->object = o->path;
		m->bound = true;
		by_index[o->index] = m;
	}
	return 0;
}

/* runtime address `a` lies in an object other than m's */
static bool other_object(const sk_module *m, uint64_t a)
{
	for (size_t i = 0; i < objs.n; i++) {
		const vt_object *o = &objs.v[i];
		if (a >= o->lo && a < o->hi)
			return !(o->flags & VT_OBJ_COVERED) || o->index != m->index;
	}
	return false;
}

/* END says a thread ran covered code without a stream (rec_buf.c):
 * those words, and so its accesses, are lost; status 3 as for a replay
 * that could not follow. */
static int report_stray(const char *what, int rc)
{
	fprintf(stderr, "skel: %s: INCOMPLETE: a thread the recorder did not see start "
		"(one libc started itself: an aio notification, a SIGEV_THREAD timer or "
		"mq_notify callback in a whole-process recording) ran analyzed code before "
		"it had a stream; those accesses are not in the trace\n", what);
	return rc ? rc : 3;
}

/* The objects the trace does not cover, named once (whole-process
 * recordings only: with the executable alone, that is the user's choice). */
static _Atomic uint32_t nthreads_short;	/* streams ended in the recorder's
						 * key destructor */

static void report_uncovered(const char *what)
{
	bool whole = false, libc = false;
	for (size_t i = 0; i < objs.n; i++) {
		whole |= (objs.v[i].flags & VT_OBJ_COVERED) && objs.v[i].index;
		libc |= (objs.v[i].flags & VT_OBJ_COVERED) &&
			!strncmp(base_name(objs.v[i].path), "libc.so", 7);
	}
	if (!whole)
		return;
	/* a recorder that could not follow a thread to its exit system call
	 * ended its stream in its pthread key destructor: what libc's
	 * thread exit does after that is not recorded */
	uint32_t nshort = atomic_load(&nthreads_short);
	if (libc && nshort)
		fprintf(stderr, "skel: %s: not traced: the accesses of libc's thread exit code "
			"after the recorder's key destructor, in %u thread%s\n", what,
			nshort, nshort == 1 ? "" : "s");
	/* objects a dlopen mapped are patched when it returns: their
	 * constructors, which it runs, are not recorded */
	bool loader = false;	/* covered from the program's start */
	for (size_t i = 0; i < objs.n; i++) {
		if (!(objs.v[i].flags & VT_OBJ_COVERED) || !(objs.v[i].flags & VT_OBJ_LATE))
			continue;
		if (objs.v[i].flags & VT_OBJ_LOADER) {
			loader = true;
			fprintf(stderr, "skel: %s: not traced: what the loader %s did before the "
				"program started (relocations, the constructors' calls into "
				"it)\n", what, objs.v[i].path);
		} else {
			fprintf(stderr, "skel: %s: not traced: what ran in %s while dlopen loaded "
				"it (its constructors), before the recorder patched it\n", what,
				objs.v[i].path);
		}
	}
	char names[1024];
	size_t len = 0;
	int n = 0;
	names[0] = 0;
	for (size_t i = 0; i < objs.n; i++) {
		const vt_object *o = &objs.v[i];
		if (o->flags & (VT_OBJ_COVERED | VT_OBJ_RECORDER) || !o->path[0] ||
		    !strncmp(base_name(o->path), "linux-vdso", 10) ||
		    (loader && (o->flags & VT_OBJ_LOADER)))
			continue;
		n++;
		if (len < sizeof names - 200)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
						len ? ", " : "", o->path);
	}
	if (n)
		fprintf(stderr, "skel: %s: not traced (no skeleton): %s\n", what, names);
}

enum fmt { F_TEXT, F_BIN, F_LACKEY, F_DIN, F_CSV, F_COUNT, F_SIM };
static const char *const fmt_names[] = { "text", "bin", "lackey", "din", "csv", "count" };
/* an instruction fetch, the third kind of event a sink sees (size: the
 * instruction's length, address: its pc) */
enum { K_FETCH = SIM_FETCH };

#define BUFSZ (1 << 16)
/* online: words queued but not yet replayed, all threads; the reader stops
 * reading (and so the program blocks on the full pipe) above this */
#define PENDING_MAX ((size_t)64 << 20)

/* A set of u64 keys (cache lines, pages): open addressing, key+1 stored. */
typedef struct hset {
	uint64_t *a;
	size_t cap, n;
} hset;

/* The first slot to look at for key+1 v in a table of cap (a power of
 * two) slots, open addressing. */
static size_t hslot(uint64_t v, size_t cap)
{
	return (size_t)((v * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static void hset_free(hset *h)
{
	free(h->a);
}

static void hset_add(hset *h, uint64_t k)
{
	if (2 * (h->n + 1) > h->cap) {
		size_t ncap = h->cap ? 2 * h->cap : 1024;
		uint64_t *na = calloc(ncap, sizeof *na);
		if (!na) {
			fprintf(stderr, "skel: replay: out of memory (stats)\n");
			exit(2);
		}
		for (size_t i = 0; i < h->cap; i++)
			if (h->a[i]) {
				size_t j = hslot(h->a[i], ncap);
				while (na[j])
					j = (j + 1) & (ncap - 1);
				na[j] = h->a[i];
			}
		free(h->a);
		h->a = na;
		h->cap = ncap;
	}
	uint64_t v = k + 1;
	size_t j = hslot(v, h->cap);
	while (h->a[j]) {
		if (h->a[j] == v)
			return;
		j = (j + 1) & (h->cap - 1);
	}
	h->a[j] = v;
	h->n++;
}

/* The cache lines (64 B) and pages (4 KiB) a set of accesses touched:
 * per page touched, a word with a bit per line.  A loop's accesses fall
 * on a few hundred pages, whose table stays in the first-level cache,
 * where a table of lines would take megabytes (--stats at 9-15 M
 * accesses/s on matmul). */
typedef struct lpset {
	struct lp_page {
		uint64_t page1;		/* page number + 1; 0: free */
		uint64_t lines;
	} *a, *last;
	size_t cap, npages, nlines;
} lpset;

static struct lp_page *lp_page(lpset *h, uint64_t page)
{
	if (h->last && h->last->page1 == page + 1)
		return h->last;
	if (2 * (h->npages + 1) > h->cap) {
		size_t ncap = h->cap ? 2 * h->cap : 256;
		struct lp_page *na = calloc(ncap, sizeof *na);
		if (!na) {
			fprintf(stderr, "skel: replay: out of memory (stats)\n");
			exit(2);
		}
		for (size_t i = 0; i < h->cap; i++)
			if (h->a[i].page1) {
				size_t j = hslot(h->a[i].page1, ncap);
				while (na[j].page1)
					j = (j + 1) & (ncap - 1);
				na[j] = h->a[i];
			}
		free(h->a);
		h->a = na;
		h->cap = ncap;
	}
	uint64_t v = page + 1;
	size_t j = hslot(v, h->cap);
	while (h->a[j].page1 && h->a[j].page1 != v)
		j = (j + 1) & (h->cap - 1);
	if (!h->a[j].page1) {
		h->a[j].page1 = v;
		h->npages++;
	}
	return h->last = &h->a[j];
}

/* The lines of page `page` in mask, into h. */
static void lp_or(lpset *h, uint64_t page, uint64_t mask)
{
	struct lp_page *x = lp_page(h, page);
	uint64_t fresh = mask & ~x->lines;
	if (fresh) {
		x->lines |= fresh;
		h->nlines += (size_t)__builtin_popcountll(fresh);
	}
}

static void lp_add(lpset *h, unsigned size, uint64_t addr)
{
	uint64_t last = addr + (size ? size - 1 : 0);
	if (last < addr)
		last = addr;
	for (uint64_t l = addr >> 6; l <= last >> 6; l++)
		lp_or(h, l >> 6, 1ull << (l & 63));
}

static void lp_merge(lpset *into, const lpset *from)
{
	for (size_t i = 0; i < from->cap; i++)
		if (from->a[i].page1)
			lp_or(into, from->a[i].page1 - 1, from->a[i].lines);
}

static void lp_free(lpset *h)
{
	free(h->a);
}

/* One run of words: a VALUES payload's, unpacked by the reader (online),
 * or one in the value file, unpacked when the replay comes to it. */
typedef struct seg {
	struct seg *next;
	const uint64_t *w;
	size_t n;
	void *owned;            /* freed with the segment, or NULL */
	const struct vt_run *run;	/* offline: its packed words (w is
					   then the stream's `unpacked`) */
	vt_handler *hand;	/* online: a HANDLER event, no words */
} seg;

/* One thread's stream, its skeleton and its output. */
typedef struct stream {
	sk_thread t;
	uint32_t thread;
	vt_thread_start start;
	/* queue, under `mu` (online) */
	seg *qh, *qt;           /* words received, not yet taken */
	size_t qwords;          /* online: the VALUES segments among them */
	bool finished;          /* no more words will come */
	bool crashed;
	bool dead;              /* replay over: later words are dropped */
	vt_crash crash;
	uint64_t nvalues;       /* words received */
	vt_order order;         /* its chunks so far (vt_order_check) */
	bool signalled;         /* a program's handler ran: replay ends there */
	vt_signal sig;
	/* its HANDLER events: the handlers replayed in place, the next one
	 * not passed (online: learnt as the words come, owned by the
	 * skeleton's thread) */
	const vt_handler *hd;
	size_t nhd, hdnext;
	vt_handler *hdown;      /* online: hd, grown by refill */
	size_t hdcap;
	/* handlers held to an exit-value loop's exit, run where its
	 * skeleton reads the exit word (its entry): their accesses wait
	 * here until the loop's are made (trip_handlers) */
	struct held_access *held;
	size_t nheld, capheld;
	bool capturing;         /* sink_put stores into held */
	bool armed;             /* held waits for the loop's end */
	bool fault;             /* or for the access that faulted: */
	uint64_t fault_pc, fault_addr;	/* (runtime pc) */
	size_t held_hd;         /* hd index of the (first) held handler */
	bool loop_seen;         /* an access of the loop since */
	const uint64_t *loop_pcs;	/* the loop's access pcs (link-time) */
	unsigned nloop_pcs;
	uint64_t loop_bias;
	size_t trip_fault;      /* 1 + hd index of a fault's handler in an
				   exit-value loop run to it, or 0 */
	uint32_t forks;
	vt_fork fork;
	/* --pid: the first `quiet` words are the parent's before the fork,
	 * replayed without output (0: none) */
	uint64_t quiet;
	int count_only;         /* t.count_only after them */
	bool fork_in_skel;      /* then quiet on to FORK_DONE (libc covered) */
	uint8_t idle_end;       /* in sk_idle (1) or sk_idle_tick (2) */
	bool parked;            /* THREAD_END says VT_ENDED_AT_EXIT */
	/* the first STUCK handler's word (UINT64_MAX: none; online set by
	 * the reader) and the handler; the thread's CPU tick's view of its
	 * reader (stuck_tick) */
	_Atomic uint64_t stuck_at;
	vt_handler stuck_h;
	const uint64_t *tick_w;
	const void *tick_cur;
	unsigned tick_n;
	volatile sig_atomic_t stuck_due;	/* stop at the next access */
	bool thread_ended;      /* THREAD_END seen: the thread ended itself */
	/* owned by the skeleton's thread */
	seg *cur;               /* segment t->w points into */
	struct vt_unz *zin;     /* online: its ZVALUES' decompressor */
	uint64_t *unpacked;     /* offline: cur's words (seg_unpack) */
	size_t unpacked_cap;
	uint64_t *pf_buf;       /* offline: the next one's (pf_ask) */
	size_t pf_cap;
	/* --symbolize: its HEAP events (under mu when online), the next
	 * one to pass, and its view of the objects */
	vt_heap_event *hev;
	size_t nhev, caphev, hnext;
	sym_view view;
	/* --report: its figures, its TIME stamps (as the HEAP events) */
	rep_thread *rep;
	vt_time *tev;
	size_t ntev, captev, tnext;
	uint64_t base;          /* words before cur */
	/* for the progress line, read by the main thread (relaxed atomics):
	 * base and cur->w, copied when they change */
	uint64_t seg_base;
	const uint64_t *seg_w;
	jmp_buf end;
	int how;                /* 1: end of stream, 2: desync */
	FILE *f;                /* where the output goes */
	bool spill;             /* f is a temporary file */
	char *buf;
	size_t n;
	/* fetches: what is left of the block being executed (runtime pcs) */
	uint64_t fpc;           /* its next instruction */
	const unsigned char *flen;
	uint32_t fleft;
	const struct fetch_run *frun;	/* sim: the block's next run (fleft
					   counts runs then) */
	uint64_t fbias;
	uint64_t fline;         /* sim: the I1 line of the batch's last fetch */
	uint64_t fhits;         /* sim: fetches of that line since (hits) */
	sim_thread sth;         /* sim: its counts, and its own L1s with
				   --l1-per-thread */
	sim_feed feed;          /* sim_direct: its accesses' way in */
	bool pend;              /* lackey: a read waiting for its write */
	uint64_t ppc, paddr;
	unsigned psize;
	lpset lp;               /* lines and pages */
	hset chunks;            /* approximate --stats: C-byte chunks */
	struct scope_stat *sc[PATCH_MAX_OBJECTS];	/* --stats: per module
						 * (mods), per scope (its sk_scopes) */
	uint64_t wlast;         /* --stats: values read up to the last access */
	uint64_t mwords[PATCH_MAX_OBJECTS];	/* and since the access before,
						   by the object making each */
	uint64_t macc[PATCH_MAX_OBJECTS];	/* accesses by object */
	struct scope_hit {      /* scope_of's cache, by the pc's low bits */
		uint64_t pc;
		int32_t scope;
		uint32_t mod;
	} *scope_hits;
	pthread_t th;
	bool has_th;
} stream;

static const char *out_path = "-";
static enum fmt format = F_TEXT;
static bool stats;
static bool online;
static bool fetches;            /* the skeleton calls FETCH() */
static bool symbolize;          /* an object field (text, csv) */
static bool reporting;          /* --report: report.h instead of a trace */
static const char *csv_dir;     /* --csv DIR */
static const char *heat_out;    /* --heat FILE: the heat map's data */
static const char *exe_path;    /* --exe: the executable, for its symbols
				   when the recording names no objects */
static bool roi_active;         /* --roi or --roi-markers: accesses kept
				   only inside the regions */
static bool salvage;            /* replay the part of a damaged file before
                                   the damage */
/* --sim cache: one simulator for all threads (a shared cache), fed a
 * thread's batch at a time */
static sim *simu;
static pthread_mutex_t sim_mu = PTHREAD_MUTEX_INITIALIZER;
/* --sim cache offline: the streams replay one after the other, each
 * feeds the simulator as it goes (sim_feed), without records or sim_mu */
static bool sim_direct;
static const char *sim_out;
static bool l1_per_thread;
static size_t sim_nthreads;     /* streams replayed: per-thread lines if > 1 */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;   /* words or end */
static pthread_cond_t space = PTHREAD_COND_INITIALIZER;  /* pending fell */
static size_t pending;          /* bytes queued, all streams */
/* online, under mu: whether the replayer keeps up (skel run --stats) */
static size_t pending_peak;     /* most bytes ever queued */
static uint64_t reader_stalls;  /* the queue was full: the FIFO, hence the
				   program, waited for the replayer */
static uint64_t replay_waits;   /* a skeleton found no words: it waited for
				   the program */

/* --sim: the batch goes to the simulator; a read at its end stays for the
 * next batch, whose first record may be its write (a modify).  With
 * sim_direct there is no batch: the feed's counts go to the totals. */
static void sim_sink_flush(stream *s, bool last)
{
	if (sim_direct) {
		sim_feed_hits(&s->feed, s->fhits);
		s->fhits = 0;
		sim_feed_flush(&s->feed, &s->sth);
		return;
	}
	sim_rec *r = (sim_rec *)(void *)s->buf;
	size_t n = s->n / sizeof *r;
	pthread_mutex_lock(&sim_mu);
	size_t done = sim_batch_thread(simu, &s->sth, r, n, last, s->fhits);
	pthread_mutex_unlock(&sim_mu);
	/* another thread's batch may come next: its fetches are its own */
	s->fline = UINT64_MAX;
	s->fhits = 0;
	memmove(r, r + done, (n - done) * sizeof *r);
	s->n = (n - done) * sizeof *r;
}

static void sink_flush(stream *s)
{
	if (simu) {
		sim_sink_flush(s, false);
		return;
	}
	if (s->n && fwrite(s->buf, 1, s->n, s->f) != s->n) {
		fprintf(stderr, "skel: %s: write error\n", s->spill ? "temporary file" : out_path);
		exit(2);
	}
	s->n = 0;
}

static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* at least 8 digits, as lackey prints addresses */
static char *put_hex8(char *p, uint64_t v)
{
	for (int i = 7; i > 0; i--)
		if (v >> (4 * i) == 0)
			*p++ = '0';
	return put_hex(p, v);
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* ------------------------------------------------------------ writers */

/* text: "PC R|W SIZE ADDR", hex, one access per line */
static char *w_text(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	p = put_hex(p, pc);
	*p++ = ' ';
	*p++ = "RWI"[kind];
	*p++ = ' ';
	p = put_hex(p, size);
	*p++ = ' ';
	p = put_hex(p, addr);
	*p++ = '\n';
	return p;
}

/* bin: 32-byte little-endian records */
typedef struct bin_rec {
	uint64_t pc, addr;
	uint32_t size;
	uint8_t kind, pad[3];
	uint32_t thread, reserved;
} bin_rec;
_Static_assert(sizeof(bin_rec) == 32, "bin record layout");

static char *w_bin(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	bin_rec r = { pc, addr, size, (uint8_t)kind, { 0, 0, 0 }, s->thread, 0 };
	memcpy(p, &r, sizeof r);
	return p + sizeof r;
}

static char *lackey_line(char *p, char c, uint64_t addr, unsigned size)
{
	*p++ = ' ';
	*p++ = c;
	*p++ = ' ';
	p = put_hex8(p, addr);
	*p++ = ',';
	p = put_dec(p, size);
	*p++ = '\n';
	return p;
}

/* lackey: " L addr,size", " S addr,size"; a read followed by a write of the
 * same pc, address and size is one " M addr,size" */
static char *w_lackey(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	if (s->pend) {
		s->pend = false;
		if (kind == SK_W && pc == s->ppc && addr == s->paddr && size == s->psize)
			return lackey_line(p, 'M', addr, size);
		p = lackey_line(p, 'L', s->paddr, s->psize);
	}
	if (kind == K_FETCH) {	/* "I  addr,size": no leading blank */
		char *q = p;
		p = lackey_line(p, ' ', addr, size);
		*q = 'I';
		return p;
	}
	if (kind == SK_R) {
		s->pend = true;
		s->ppc = pc;
		s->paddr = addr;
		s->psize = size;
		return p;
	}
	return lackey_line(p, 'S', addr, size);
}

/* din (Dinero IV): "0 ADDR" read, "1 ADDR" write, "2 ADDR" fetch, hex */
static char *w_din(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	*p++ = "012"[kind];
	*p++ = ' ';
	p = put_hex(p, addr);
	*p++ = '\n';
	return p;
}

/* csv: thread,pc,kind,size,addr */
static char *w_csv(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	p = put_dec(p, s->thread);
	*p++ = ',';
	*p++ = '0';
	*p++ = 'x';
	p = put_hex(p, pc);
	*p++ = ',';
	*p++ = "RWI"[kind];
	*p++ = ',';
	p = put_dec(p, size);
	*p++ = ',';
	*p++ = '0';
	*p++ = 'x';
	p = put_hex(p, addr);
	*p++ = '\n';
	return p;
}

/* --symbolize: the line, then the object of addr */
static char *w_text_sym(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	p = w_text(s, p, pc, kind, size, addr) - 1;
	*p++ = ' ';
	p = sym_put(&s->view, addr, p);
	*p++ = '\n';
	return p;
}

static char *w_csv_sym(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	p = w_csv(s, p, pc, kind, size, addr) - 1;
	*p++ = ',';
	p = sym_put(&s->view, addr, p);
	*p++ = '\n';
	return p;
}

/* count with --stats: nothing written */
static char *w_none(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	return p;
}

/* sim: records for sim_batch */
static char *w_sim(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	/* field by field: a record built on the stack and copied stalls on
	 * store forwarding, at twice the cost of the simulation */
	sim_rec *r = (sim_rec *)(void *)p;
	r->pc = pc;
	r->addr = addr;
	r->size = size;
	r->kind = (uint16_t)kind;
	r->n = 1;
	return (char *)(r + 1);
}

typedef char *(*writer_fn)(stream *, char *, uint64_t, int, unsigned, uint64_t);
static writer_fn writer = w_text;

/* An approximate trace (docs/bid.md): text and csv lines end with the
 * access's mark, after what the format's own writer put. */
static writer_fn marked_writer;

static char *w_marked(stream *s, char *p, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	static const char *const marks[] = { "exact", "attr", "absent" };
	const char *m = marks[s->t.mark >= 0 && s->t.mark <= SK_ABSENT ? s->t.mark : 0];
	p = marked_writer(s, p, pc, kind, size, addr) - 1;
	*p++ = format == F_CSV ? ',' : ' ';
	size_t n = strlen(m);
	memcpy(p, m, n);
	p[n] = '\n';
	return p + n + 1;
}

static bool approximate(void)
{
	return &sk_omega && sk_omega < 1;
}

static void hset_merge(hset *into, const hset *from)
{
	for (size_t i = 0; i < from->cap; i++)
		if (from->a[i])
			hset_add(into, from->a[i] - 1);
}

/* --stats per routine and loop: an access counts for its innermost scope
 * and every scope around it: it is counted in the innermost one, which
 * report_scopes adds to the scopes around it. */
typedef struct scope_stat {
	uint64_t count[2], bytes[2];
	uint64_t words;         /* values read since the access before */
	lpset lp;               /* lines and pages */
} scope_stat;

#define SCOPE_HITS 64

/* The innermost scope of link-time pc in module m (index mi), or -1. */
static int32_t scope_of(stream *s, const sk_module *m, uint32_t mi, uint64_t pc)
{
	struct scope_hit *h = &s->scope_hits[pc & (SCOPE_HITS - 1)];
	if (pc == h->pc && mi == h->mod)
		return h->scope;
	size_t lo = 0, hi = m->npc_scopes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->pc_scopes[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	h->pc = pc;
	h->mod = mi;
	h->scope = lo < m->npc_scopes && m->pc_scopes[lo].pc == pc
		? (int32_t)m->pc_scopes[lo].scope : -1;
	return h->scope;
}

static void *stats_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "skel: replay: out of memory (stats)\n");
		exit(2);
	}
	return p;
}

static void scope_add(stream *s, uint32_t mi, uint64_t pc, int kind, unsigned size,
		      uint64_t addr, uint64_t words)
{
	const sk_module *m = &mods[mi];
	if (!s->scope_hits) {
		s->scope_hits = stats_calloc(SCOPE_HITS, sizeof *s->scope_hits);
		for (size_t i = 0; i < SCOPE_HITS; i++)
			s->scope_hits[i].pc = UINT64_MAX;
	}
	if (!s->sc[mi])
		s->sc[mi] = stats_calloc(m->nscopes, sizeof *s->sc[mi]);
	int32_t k = scope_of(s, m, mi, pc);
	if (k >= 0 && (unsigned)k < m->nscopes) {
		scope_stat *x = &s->sc[mi][k];
		x->count[kind]++;
		x->bytes[kind] += size;
		x->words += words;
		lp_add(&x->lp, size, addr);
	}
}

/* The values the thread's replay read since its previous access: they
 * count for this access's object and innermost scope (--stats: where
 * the value trace's words come from). */
static uint64_t stats_at(const stream *s)
{
	return s->cur ? s->base + (uint64_t)(s->t.w - s->cur->w) : s->base;
}

static uint64_t stats_words(stream *s)
{
	uint64_t at = stats_at(s);
	uint64_t d = at - s->wlast;
	s->wlast = at;
	size_t m = (size_t)(s->t.mod - mods);
	if (m < PATCH_MAX_OBJECTS) {
		s->mwords[m] += d;
		s->macc[m]++;
	}
	return d;
}

static void stats_add(stream *s, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	uint64_t words = stats_words(s);
	lp_add(&s->lp, size, addr);
	if (approximate())	/* the granularity its accuracy is about */
		for (uint64_t c = addr / sk_chunk; c <= (addr + (size ? size - 1 : 0)) / sk_chunk; c++)
			hset_add(&s->chunks, c);
	size_t mi = (size_t)(s->t.mod - mods);
	if (mi < nmods && s->t.mod->nscopes && s->t.mod->npc_scopes)
		scope_add(s, (uint32_t)mi, pc - s->t.bias, kind, size, addr, words);
}

struct held_access {
	uint64_t pc, addr;
	unsigned size;
	int kind, mark;
};

static void sink_put(stream *s, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	if (s->capturing) {
		s->held = sym_grow(s->held, &s->capheld, s->nheld + 1, sizeof *s->held);
		s->held[s->nheld++] = (struct held_access){ pc, addr, size, kind, s->t.mark };
		return;
	}
	if (sim_direct) {
		if (kind == K_FETCH)
			sim_feed_fetch(&s->feed, pc, addr, size, 1);
		else
			sim_feed_data(&s->feed, pc, kind, size, addr);
		return;
	}
	if (s->n > BUFSZ - 128 - SYM_NAME_MAX)
		sink_flush(s);
	s->n = (size_t)(writer(s, s->buf + s->n, pc, kind, size, addr) - s->buf);
}

/* n fetches from first to the one at `at` (len bytes), all starting in
 * one I1 line: a record for the simulator (sim_direct: straight to the
 * stream's feed), or, when only data came since the batch's last fetch
 * record looked this line up, hits that change nothing (counted). */
static inline __attribute__((always_inline)) void sim_fetch_run(stream *s, uint64_t first,
								 uint64_t at, unsigned len, unsigned n)
{
	unsigned bits = simu->i1.line_bits;
	uint64_t line = first >> bits, last = (at + len - 1) >> bits;
	if (line == s->fline && last == line) {
		s->fhits += n;
		return;
	}
	s->fline = last;
	if (sim_direct) {
		sim_feed_fetch(&s->feed, first, at, len, n);
		return;
	}
	if (s->n > BUFSZ - 128)
		sink_flush(s);
	sim_rec *r = (sim_rec *)(void *)(s->buf + s->n);
	*r = (sim_rec){ first, at, len, K_FETCH, (uint16_t)n };
	s->n += sizeof *r;
}

/* For the simulator without costs per instruction, a block's fetches are
 * runs made once per module (fetch_runs_of): instructions that start in
 * one I1 line and end in it, or alone the one that crosses into the next
 * line.  A run goes to the simulator (sim_fetch_run) when the replay
 * reaches its first instruction, with the instructions after it: they hit
 * the line its first looked up, and only fetches change I1, so their
 * counts are all the simulator needs, now or later.  The crossing
 * instruction, which looks up a second line (and the LL, on a miss),
 * comes in its place among the data accesses, as cachegrind has it. */
struct fetch_run {
	uint64_t first;		/* link-time pc */
	uint32_t at;		/* the last instruction's, less first */
	uint16_t n;		/* instructions */
	uint8_t len;		/* the last one's length */
};

static void fetch_runs_of(sk_module *m, unsigned bits)
{
	size_t cap = 0, nr = 0;
	m->run_of = malloc((m->nblocks + 1) * sizeof *m->run_of);
	if (!m->run_of)
		goto oom;
	for (unsigned b = 0; b < m->nblocks; b++) {
		const sk_block_info *x = &m->blocks[b];
		m->run_of[b] = (uint32_t)nr;
		uint64_t pc = x->pc;
		for (uint32_t i = 0; i < x->n;) {
			if (nr + 1 > cap) {
				cap = cap ? 2 * cap : 4096;
				struct fetch_run *g = realloc(m->runs, cap * sizeof *g);
				if (!g)
					goto oom;
				m->runs = g;
			}
			struct fetch_run *r = &m->runs[nr++];
			uint64_t line = pc >> bits;
			*r = (struct fetch_run){ .first = pc };
			do {
				unsigned len = m->insn_lens[x->first + i];
				bool crosses = (pc + (len ? len - 1 : 0)) >> bits != line;
				if (crosses && r->n)
					break;	/* alone, in the next run */
				r->at = (uint32_t)(pc - r->first);
				r->len = (uint8_t)len;
				r->n++;
				pc += len;
				i++;
				if (crosses)
					break;
			} while (i < x->n && pc >> bits == line && r->n < UINT16_MAX);
		}
	}
	m->run_of[m->nblocks] = (uint32_t)nr;
	return;
oom:
	fprintf(stderr, "skel: sim: out of memory (fetch runs)\n");
	exit(2);
}

/* The same, made as the replay goes, for a module without runs (an I1
 * line longer than a page): instructions up to pc that start in one line
 * (the last may cross). */
static void fetch_insn_runs_upto(stream *s, uint64_t pc)
{
	unsigned bits = simu->i1.line_bits;
	while (s->fleft && s->fpc <= pc) {
		uint64_t first = s->fpc, at, line = first >> bits;
		unsigned len, n = 0;
		do {
			at = s->fpc;
			len = *s->flen++;
			s->fpc += len;
			s->fleft--;
			n++;
		} while (s->fleft && s->fpc <= pc && s->fpc >> bits == line && n < UINT16_MAX);
		sim_fetch_run(s, first, at, len, n);
	}
}

/* fetch_upto for the simulator without costs per instruction: the runs
 * (above) whose first instruction is at or before pc. */
static inline __attribute__((always_inline)) void fetch_runs_upto(stream *s, uint64_t pc)
{
	if (!s->frun) {
		fetch_insn_runs_upto(s, pc);
		return;
	}
	while (s->fleft && s->frun->first + s->fbias <= pc) {
		const struct fetch_run *r = s->frun++;
		s->fleft--;
		uint64_t first = r->first + s->fbias;
		sim_fetch_run(s, first, first + r->at, r->len, r->n);
	}
}

/* The fetches of the current block's instructions up to pc (all of them
 * when pc is past its end). */
static void fetch_upto(stream *s, uint64_t pc)
{
	if (simu && !simu->per_pc) {
		fetch_runs_upto(s, pc);
		return;
	}
	while (s->fleft && s->fpc <= pc) {
		unsigned len = *s->flen++;
		sink_put(s, s->fpc, K_FETCH, len, s->fpc);
		s->fpc += len;
		s->fleft--;
	}
}

/* The fetches of the block that ends, when some wait: a call of its own,
 * so that sk_block saves no registers when none do. */
static __attribute__((noinline)) void fetch_rest(stream *s)
{
	if (s->frun)
		fetch_runs_upto(s, UINT64_MAX);
	else
		fetch_upto(s, UINT64_MAX);
}

/* The report's clock: the thread's accesses so far, outside the regions
 * too. */
static uint64_t report_clock(const sk_thread *t)
{
	return t->count[0] + t->count[1] + t->roi_skipped;
}

/* Hands the thread's batch of accesses over (report.h): before anything
 * else reaches the report, and before the view passes heap events.  The
 * batch's accesses are the last ones counted (a region's change, which
 * would put uncounted ones between, hands it over first). */
static void report_flush(stream *s)
{
	sk_thread *t = &s->t;
	if (t->nbatch)
		report_batch(s->rep, &s->view, report_clock(t) - t->nbatch, t->batch, t->nbatch);
	t->nbatch = 0;
}

static void stuck_stop(stream *s);

void sk_batch_full(sk_thread *t)
{
	stream *s = t->sink;
	if (s->stuck_due)
		stuck_stop(s);
	report_flush(s);
}

static void held_access(stream *s, uint64_t pc, unsigned size, uint64_t addr);

void sk_emit(sk_thread *t, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	stream *s = t->sink;
	if (s->stuck_due)
		stuck_stop(s);
	if (s->armed)
		held_access(s, pc, size, addr);
	if (t->batch) {	/* a skeleton compiled before sk_batch_add */
		sk_batch_add(t, kind, size, addr);
		return;
	}
	/* with runs (frun: the simulator's), in line when one is due */
	if (s->fleft) {
		if (!s->frun)
			fetch_upto(s, pc);
		else if (s->frun->first + s->fbias <= pc)
			fetch_runs_upto(s, pc);
	}
	/* an absent access has no address: only text and csv say it */
	if (t->mark == SK_ABSENT && writer != w_marked)
		return;
	if (stats && t->mark != SK_ABSENT)
		stats_add(s, pc, kind, size, addr);
	if (sim_direct && !s->capturing)
		sim_feed_data(&s->feed, pc, kind, size, addr);
	else
		sink_put(s, pc, kind, size, addr);
}

void sk_refetch(sk_thread *t, uint64_t pc, unsigned len)
{
	stream *s = t->sink;
	if (t->count_only || (simu && simu->reuse) || !t->roi_on)
		return;
	pc += t->bias;
	if (s->fleft)
		fetch_upto(s, pc);
	if (simu && !simu->per_pc)
		sim_fetch_run(s, pc, pc, len, 1);
	else
		sink_put(s, pc, K_FETCH, len, pc);
}

/* A block starts: the previous one ran to its end (blocks end at jumps
 * and calls), and its instructions wait for the accesses of this one. */
void sk_block(sk_thread *t, uint32_t b)
{
	stream *s = t->sink;
	const sk_module *m = t->mod;
	if (t->count_only || (simu && simu->reuse))	/* data only */
		return;
	if (s->fleft)
		fetch_rest(s);
	if (b >= m->nblocks || !t->roi_on)
		return;
	if (m->run_of) {
		s->frun = m->runs + m->run_of[b];
		s->fbias = t->bias;
		s->fleft = m->run_of[b + 1] - m->run_of[b];
		return;
	}
	const sk_block_info *x = &m->blocks[b];
	s->frun = NULL;
	s->fpc = x->pc + t->bias;
	s->flen = m->insn_lens + x->first;
	s->fleft = x->n;
}

/* Start of a thread's output, and its end (a lackey read still pending). */
static void sink_begin(stream *s)
{
	if (format == F_TEXT)
		s->n += (size_t)snprintf(s->buf + s->n, 128, "# thread %u start 0x%" PRIx64 "\n",
					 s->thread, s->start.start);
}

static void sink_end(stream *s)
{
	/* the last block ran to its end unless the thread died in it or
	 * the replay lost its way */
	if (s->fleft && s->how == 1 && !s->crashed)
		fetch_upto(s, UINT64_MAX);
	s->fleft = 0;
	if (simu) {
		sim_sink_flush(s, true);
		return;
	}
	if (s->pend) {
		s->pend = false;
		s->n = (size_t)(lackey_line(s->buf + s->n, 'L', s->paddr, s->psize) - s->buf);
	}
	sink_flush(s);
}

/* ------------------------------------------------------- the words */

/* the offline words are a mapping of the value file: pages replayed may
 * be given back (vt_release), they would be read again */
static bool values_mapped;

static void seg_free(seg *g)
{
	if (!g)
		return;
	free(g->hand);
	if (g->owned) {
		pthread_mutex_lock(&mu);
		pending -= g->n * 8;
		pthread_cond_signal(&space);
		pthread_mutex_unlock(&mu);
		free(g->owned);
	} else if (values_mapped && g->run && g->run->nbytes >= 2 * VT_RELEASE_PAGE) {
		vt_release(g->run->p, g->run->nbytes);	/* replayed: in the mapped file */
	}
	free(g);
}

/* Offline, the next segment's words are unpacked (and decompressed) on
 * another processor while the skeleton replays the current one: one
 * request at a time, as offline streams replay one after another.  The
 * worker writes only into the requesting stream's pf_buf; the stream
 * takes the words by swapping that buffer with its own (seg_unpack).
 * A stream's runs, zstd's window included, are unpacked in order either
 * way: the skeleton's thread unpacks only while no request is in flight. */
#define PF_MIN_WORDS 4096	/* smaller runs: not worth the hand-over */
/* pauses (~10 us) before a wait sleeps: longer spins won little on an
 * idle machine, and with another process busy on the second processor
 * the spinning thread took the processor from the one it waited for
 * (hash's replay: 20000 pauses 0.57 s, 256 0.22 s, no worker 0.21 s) */
#define PF_SPIN 256
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started, off;
	int state;		/* 0 idle, 1 asked, 2 done */
	int rc;
	const stream *owner;
	const struct vt_run *run;
	uint64_t *buf;
} pf = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, 0, 0,
	 NULL, NULL, NULL };

static void pf_spin(void)
{
	for (int i = 0; i < PF_SPIN && __atomic_load_n(&pf.state, __ATOMIC_ACQUIRE) != 1; i++)
		__builtin_ia32_pause();
}

static void *pf_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&pf.mu);
	for (;;) {
		/* the next request comes within a segment's replay: spin a
		 * while before sleeping (a wake-up costs more than a run) */
		pthread_mutex_unlock(&pf.mu);
		pf_spin();
		pthread_mutex_lock(&pf.mu);
		while (pf.state != 1)
			pthread_cond_wait(&pf.cv, &pf.mu);
		const struct vt_run *r = pf.run;
		uint64_t *buf = pf.buf;
		pthread_mutex_unlock(&pf.mu);
		int rc = vt_run_words(r, buf);
		pthread_mutex_lock(&pf.mu);
		pf.rc = rc;
		__atomic_store_n(&pf.state, 2, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&pf.cv);
	}
	return NULL;
}

/* Waits for the request in flight, if any: its words stay for
 * pf_take when they are s's (s NULL: dropped whoever's). */
static void pf_settle(const stream *s)
{
	pthread_mutex_lock(&pf.mu);
	while (pf.state == 1)
		pthread_cond_wait(&pf.cv, &pf.mu);
	if (!s || pf.owner != s)
		pf.state = 0;
	pthread_mutex_unlock(&pf.mu);
}

/* The words of run r when the worker has them for s: 1 (pf_buf holds
 * them), else 0 (the request, if any, is dropped). */
static int pf_take(const stream *s, const struct vt_run *r)
{
	if (!pf.started)
		return 0;
	for (int i = 0; i < PF_SPIN && __atomic_load_n(&pf.state, __ATOMIC_ACQUIRE) == 1; i++)
		__builtin_ia32_pause();
	pthread_mutex_lock(&pf.mu);
	while (pf.state == 1)
		pthread_cond_wait(&pf.cv, &pf.mu);
	int got = pf.state == 2 && pf.owner == s && pf.run == r && pf.rc == 0;
	pf.state = 0;
	pthread_mutex_unlock(&pf.mu);
	return got;
}

/* After s took a segment: its next one's words asked for. */
static void pf_ask(stream *s)
{
	const seg *n = s->qh;
	if (online || pf.off || !n || !n->run || n->run->n < PF_MIN_WORDS || n->hand)
		return;
	if (!pf.started) {
		const char *e = getenv("SKEL_PREFETCH");
		pthread_t th;
		if ((e && !strcmp(e, "0")) || pthread_create(&th, NULL, pf_main, NULL)) {
			pf.off = true;
			return;
		}
		pthread_detach(th);
		pf.started = true;
	}
	if (n->run->n > s->pf_cap) {
		free(s->pf_buf);
		s->pf_cap = n->run->n;
		s->pf_buf = malloc((n->run->n + VT_UNPACK_SLACK) * 8);
		if (!s->pf_buf) {
			s->pf_cap = 0;
			return;
		}
	}
	pthread_mutex_lock(&pf.mu);
	pf.owner = s;
	pf.run = n->run;
	pf.buf = s->pf_buf;
	__atomic_store_n(&pf.state, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&pf.cv);
	pthread_mutex_unlock(&pf.mu);
}

/* Offline, g's words unpacked into s->unpacked, which held the previous
 * segment's (replayed), or taken from the worker (above).  A payload
 * that does not unpack (the chunk's check passed: a recorder's bug, or
 * a forged file) stops the replay. */
static void seg_unpack(stream *s, seg *g)
{
	if (!g->run)
		return;
	if (pf_take(s, g->run)) {
		uint64_t *b = s->unpacked;
		size_t c = s->unpacked_cap;
		s->unpacked = s->pf_buf;
		s->unpacked_cap = s->pf_cap;
		s->pf_buf = b;
		s->pf_cap = c;
		g->w = s->unpacked;
		return;
	}
	if (g->run->n > s->unpacked_cap) {
		free(s->unpacked);
		s->unpacked_cap = g->run->n;
		s->unpacked = malloc((g->run->n + VT_UNPACK_SLACK) * 8);
		if (!s->unpacked) {
			fprintf(stderr, "skel: replay: out of memory\n");
			exit(2);
		}
	}
	if (vt_run_words(g->run, s->unpacked)) {
		fprintf(stderr, "skel: replay: thread %u: the VALUES chunk after its word %"
			PRIu64 " does not unpack (damaged value file); the replay stops "
			"there\n", s->thread, s->base + (s->cur ? s->cur->n : 0));
		exit(2);
	}
	g->w = s->unpacked;
}

/* --pid: the skeleton reads the child's first word, so the parent's part
 * is over: the child's accesses from here on are emitted.  Every access
 * before it was made before the fork: the first word the child records
 * after the fork is read before any access the child makes (the first
 * probe the child meets after fork() returns is the RETURNED word at the
 * call's return site, or a routine entry). */
static void fork_passed(stream *s)
{
	s->quiet = 0;
	s->t.count_only = s->count_only;
	for (int k = 0; k < 2; k++)
		s->t.count[k] = s->t.bytes[k] = 0;
	s->wlast = stats_at(s);	/* --stats: the parent's words are not its */
}

/* A forked child's words from the parent's pthread_atfork prepare handler
 * on are its own (the recorder's child file starts there), but its
 * accesses start after the system call that made it: the libc code
 * before it ran in the parent only. */
static uint64_t words_read(const stream *s);

void sk_fork_done(sk_thread *t)
{
	stream *s = t->sink;
	if (words_read(s) < s->quiet)
		return;		/* a clone or fork of the parent's, before */
	t->await_fork = 0;
	fork_passed(s);
}

/* Online, a thread's words are taken one VALUES chunk behind the
 * reader.  Its HANDLER events lie between its VALUES chunks (the
 * recorder writes its buffer out before each), and the skeleton must
 * know those that follow the words it has before it runs past their end:
 * a handler may be due before the very next access (AT_PC), or the
 * handler being replayed may return there.  Once the next VALUES chunk
 * (or the stream's end) is here, every event up to it is.  Offline the
 * stream is whole from the start (finished). */
static bool words_ready(const stream *s)
{
	return s->finished || s->qwords >= 2;
}

static seg *queue_pop(stream *s)
{
	seg *g = s->qh;
	s->qh = g->next;
	if (!s->qh)
		s->qt = NULL;
	return g;
}

static uint64_t crash_pc_in(const stream *s, const sk_module *m);

/* Under mu: the HANDLER events at the queue's head join the thread's
 * list (a pc the skeleton must stop at may come with them). */
static void handlers_take(stream *s)
{
	bool any = false;
	while (s->qh && s->qh->hand) {
		seg *g = queue_pop(s);
		s->hdown = sym_grow(s->hdown, &s->hdcap, s->nhd + 1, sizeof *s->hdown);
		s->hdown[s->nhd++] = *g->hand;
		free(g->hand);
		free(g);
		any = true;
	}
	if (any) {
		s->hd = s->hdown;
		s->t.crash_pc = crash_pc_in(s, s->t.mod);
	}
}

/* Points t->w/t->end at the next words: 1, or 0 when there are none and
 * never will be. */
static int refill(stream *s)
{
	pthread_mutex_lock(&mu);
	if (!words_ready(s))
		replay_waits++;
	while (!words_ready(s))
		pthread_cond_wait(&more, &mu);
	handlers_take(s);
	seg *g = s->qh ? queue_pop(s) : NULL;
	if (g && online) {
		s->qwords--;
		handlers_take(s);
	}
	pthread_mutex_unlock(&mu);
	if (!g)
		return 0;
	seg_unpack(s, g);
	if (s->cur) {
		s->base += s->cur->n;
		seg_free(s->cur);
	}
	s->cur = g;
	s->t.w = g->w;
	s->t.end = g->w + g->n;
	pf_ask(s);
	if (s->quiet && s->base >= s->quiet && !s->fork_in_skel)
		fork_passed(s);	/* else quiet on to the system call (sk_fork_done) */
	__atomic_store_n(&s->seg_base, s->base, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seg_w, g->w, __ATOMIC_RELAXED);
	return 1;
}

/* --symbolize: a thread's HEAP events take effect when its replay reads
 * the word that follows them (format.h): t->end stops at that word, and
 * the slow path (words_wait) passes the events, then lets it go on. */
static bool track_heap;

/* Whether the thread's replay stops at events in its stream: t->end
 * is then the next event's word, when it comes before the segment's. */
static bool has_stops(const stream *s)
{
	return track_heap || reporting || s->nhd;
}

static bool soft_end(const stream *s)
{
	return has_stops(s) && s->cur && s->t.w < s->cur->w + s->cur->n;
}

/* --report: the TIME stamps up to word pos are placed at the clock now. */
static void stamps_pass(stream *s, uint64_t pos)
{
	while (s->tnext < s->ntev && s->tev[s->tnext].word <= pos) {
		report_flush(s);
		report_stamp(s->rep, report_clock(&s->t), s->tev[s->tnext++].ns);
	}
}

static const vt_handler *handler_next(stream *s);

static void heap_catch_up(stream *s)
{
	sk_thread *t = &s->t;
	if (!s->cur)
		return;
	uint64_t pos = s->base + (uint64_t)(t->w - s->cur->w), last = s->base + s->cur->n;
	const uint64_t *end = s->cur->w + s->cur->n;
	if (online)
		pthread_mutex_lock(&mu);
	if (reporting && s->hnext < s->nhev && s->hev[s->hnext].word <= pos)
		report_flush(s);	/* its accesses see the blocks before */
	while (s->hnext < s->nhev && s->hev[s->hnext].word <= pos)
		s->view.seq = s->hev[s->hnext++].seq;
	if (s->hnext < s->nhev && s->hev[s->hnext].word < last)
		end = s->cur->w + (s->hev[s->hnext].word - s->base);
	stamps_pass(s, pos);
	if (s->tnext < s->ntev && s->tev[s->tnext].word < last &&
	    s->cur->w + (s->tev[s->tnext].word - s->base) < end)
		end = s->cur->w + (s->tev[s->tnext].word - s->base);
	const vt_handler *h = handler_next(s);
	if (h && h->word >= pos && h->word < last && s->cur->w + (h->word - s->base) < end)
		end = s->cur->w + (h->word - s->base);
	if (online)
		pthread_mutex_unlock(&mu);
	t->end = end;
}

/* A thread's events join its list (online: under mu). */
static void heap_events_take(stream *s, const vt_heap_event *e, size_t n)
{
	if (!n)
		return;
	s->hev = sym_grow(s->hev, &s->caphev, s->nhev + n, sizeof *e);
	memcpy(s->hev + s->nhev, e, n * sizeof *e);
	s->nhev += n;
}

/* The same for its TIME stamps. */
static void stamps_take(stream *s, const vt_time *e, size_t n)
{
	if (!n)
		return;
	s->tev = sym_grow(s->tev, &s->captev, s->ntev + n, sizeof *e);
	memcpy(s->tev + s->ntev, e, n * sizeof *e);
	s->ntev += n;
}

/* ------------------------------------------------ the program's handlers
 *
 * A handler's words lie between its HANDLER event and the matching
 * return (format.h).  The replay runs it where the recorder says: at the
 * read of its first word (a held signal, or one in code the skeleton
 * passes as an external call), or before the access of its pc (sk_out:
 * crash_pc) once the words before it are read.  The reader's state of
 * the interrupted code (rsp of PATCH_DSP, delta slots) waits for it
 * to return, as the recorder's did. */

/* The words of t's stream the skeleton has read (the lead's window over
 * the stream adapts this one). */
static uint64_t words_read(const stream *s)
{
	return s->cur ? s->base + (uint64_t)(s->t.w - s->cur->w) : 0;
}

/* The next handler to run (returns of handlers run are passed). */
static const vt_handler *handler_next(stream *s)
{
	while (s->hdnext < s->nhd && (s->hd[s->hdnext].flags & VT_HANDLER_RETURN))
		s->hdnext++;
	return s->hdnext < s->nhd ? &s->hd[s->hdnext] : NULL;
}

/* Whether the skeleton holds no word it peeked at and has not taken:
 * the handler's words would be behind it. */
static bool reader_clear(const sk_thread *t)
{
	return !t->has_pend;
}

static void handler_lost(stream *s, const vt_handler *h, const char *why)
{
	sink_flush(s);
	fprintf(stderr, "skel: replay: thread %u: signal %u (%s), its handler ran after word "
		"%" PRIu64 " (interrupted at pc 0x%" PRIx64 "): %s; the thread's trace ends "
		"here\n", s->thread, h->signal, strsignal((int)h->signal), h->word, h->pc, why);
	longjmp(s->end, 2);
}

/* Where the handler at hd[i] returned: its words end there; UINT64_MAX
 * if it did not (longjmp out of it, or the thread ended in it). */
static uint64_t handler_end(const stream *s, size_t i)
{
	unsigned depth = 0;
	for (size_t k = i; k < s->nhd; k++) {
		if (!(s->hd[k].flags & VT_HANDLER_RETURN))
			depth++;
		else if (--depth == 0)
			return s->hd[k].word;
	}
	return UINT64_MAX;
}


/* Online, the handler's return is learnt with the words before it
 * (refill): its end is looked for again as the words come. */
static void handler_run(stream *s)
{
	sk_thread *t = &s->t;
	const vt_handler *h = handler_next(s);
	if (!reader_clear(t))
		handler_lost(s, h, "the skeleton holds values of the interrupted code not read "
			     "yet there (desynchronised)");
	size_t i = s->hdnext++;
	uint64_t end;
	t->crash_pc = crash_pc_in(s, t->mod);
	heap_catch_up(s);
	uint64_t lastsp = t->lastsp;
	uint64_t dslot[16];
	memcpy(dslot, t->dslot, sizeof dslot);
	memset(t->dslot, 0, sizeof dslot);
	t->lastsp = 0;
	/* a linked call's rsp not taken yet (a handler run before its
	 * callee's first instruction) is the callee's, not the handler's */
	uint64_t qsp = t->qsp;
	t->qsp = 0;
	/* a handler that does not return (longjmp) leaves the idle loop
	 * whose word it came before: the thread does not end there */
	uint8_t idle = s->idle_end;
	s->idle_end = 0;
	t->depth++;
	while ((end = handler_end(s, i)) == UINT64_MAX || words_read(s) < end)
		sk_dispatch(t, sk_ctl(t));
	if (words_read(s) != end || !reader_clear(t))
		handler_lost(s, &s->hd[i], "its skeleton read past the handler's words "
			     "(desynchronised)");
	if (s->trip_fault == i + 1)
		handler_lost(s, &s->hd[i], "it returned into a loop whose exit value the "
			     "skeleton reads at the loop's entry (an exit-value loop), run "
			     "to the fault: where it leaves is not known");
	t->depth--;
	s->idle_end = idle;
	t->lastsp = lastsp;
	t->qsp = qsp;
	memcpy(t->dslot, dslot, sizeof dslot);
	t->crash_pc = crash_pc_in(s, t->mod);
}

static bool handler_due(stream *s)
{
	const vt_handler *h = handler_next(s);
	return h && h->word == words_read(s);
}

/* swapcontext or setcontext: the skeleton's frames are not where the
 * thread went (format.h, VT_HANDLER_SWITCH). */
static void switch_lost(stream *s, const vt_handler *h)
{
	sink_flush(s);
	fprintf(stderr, "skel: replay: thread %u: the program switched to another context "
		"with %s (called from pc 0x%" PRIx64 " of object %u, after word %" PRIu64
		"): skel does not follow context switches (coroutines); the thread's trace "
		"ends here\n", s->thread, h->addr == 2 ? "setcontext" : "swapcontext",
		h->pc, h->object, h->word);
	longjmp(s->end, 2);
}

/* The skeleton needs the handler's first word. */
static void handler_at_word(stream *s)
{
	const vt_handler *h = handler_next(s);
	if (h->flags & VT_HANDLER_SWITCH)
		switch_lost(s, h);
	if (h->flags & VT_HANDLER_UNPLACED)
		handler_lost(s, h, "the signal came in the recorder's trampolines, where the "
			     "replay cannot place its handler");
	if (h->flags & VT_HANDLER_STUCK)
		handler_lost(s, h, "it was held for the thread's next probe, which did not come "
			     "within 200 ms (10 s under valgrind; a loop that records nothing "
			     "until the handler has run: while (!flag)); it ran where the thread "
			     "was, which the replay cannot place");
	if (h->flags & VT_HANDLER_AT_PC)
		handler_lost(s, h, "the skeleton did not come to that pc before the handler's "
			     "words (desynchronised, or the pc makes no access)");
	handler_run(s);
}

/* sk_out at the pc of a handler's signal (t->crash_pc) with the words
 * before it read: its access is the interrupted one if the reader is
 * where the signal came (and, for a fault, the access holds the faulting
 * address: an earlier execution of the pc would have faulted too). */
/* Whether the next handler ran at pc, after the words read so far. */
static const vt_handler *handler_here(stream *s, const sk_thread *t, uint64_t pc)
{
	const vt_handler *h = handler_next(s);
	return h && (h->flags & VT_HANDLER_AT_PC) && h->pc == pc && h->word == words_read(s) &&
	       reader_clear(t) ? h : NULL;
}

/* ------------------------------------------- a replay that runs away
 *
 * A STUCK handler (rec_sig.c: held for a probe that did not come, run
 * where the thread was) stops the replay where the skeleton needs its
 * first word.  Where the handler left a loop that records nothing and
 * that the known values never end (it siglongjmp'd out of `for (;;)`
 * whose exit is not taken), the skeleton never needs it: the replay went
 * round for ever, writing its trace until the disk was full.  So each
 * stream's thread gets a tick per second of its CPU time; when the next
 * word is a STUCK handler's and the skeleton has read nothing since the
 * last tick, the replay stops there, loud, as at the word: at the next
 * access, or, in the count sink or after another second without one, in
 * the tick itself (the thread is then in the skeleton's loop, not in the
 * replayer's state). */
static __thread stream *tick_stream;

/* The first STUCK handler of the stream (online: from the reader). */
static void stuck_note(stream *s, const vt_handler *h)
{
	if (!(h->flags & VT_HANDLER_STUCK) || (h->flags & VT_HANDLER_RETURN) ||
	    atomic_load_explicit(&s->stuck_at, memory_order_relaxed) <= h->word)
		return;
	s->stuck_h = *h;
	atomic_store_explicit(&s->stuck_at, h->word, memory_order_release);
}

static void stuck_stop(stream *s)
{
	s->stuck_due = 0;
	handler_lost(s, &s->stuck_h, "it was held for the thread's next probe, which did not "
		     "come (a loop that records nothing), and ran where the thread was, which "
		     "the replay cannot place; the skeleton then went round a loop for a second "
		     "without reading a word, past where the program left it (the handler "
		     "jumped or exited out of a loop the known values never end)");
}

/* Whether the thread is at a STUCK handler's word and has read nothing
 * since the last tick (its reader unchanged for a second: the reader is
 * not moving it now). */
static bool stuck_still(stream *s)
{
	const uint64_t *w = s->t.w;
	const void *cur = s->cur;
	bool still = w == s->tick_w && cur == s->tick_cur;
	s->tick_w = w;
	s->tick_cur = cur;
	uint64_t at = atomic_load_explicit(&s->stuck_at, memory_order_acquire);
	return still && at != UINT64_MAX && reader_clear(&s->t) && words_read(s) == at;
}

static void stuck_tick(int sig)
{
	stream *s = tick_stream;
	if (!s)
		return;
	int e = errno;
	s->tick_n = stuck_still(s) ? s->tick_n + 1 : 0;
	if (s->tick_n == 1 && !s->t.count_only) {
		s->stuck_due = 1;	/* at the next access */
	} else if (s->tick_n) {		/* none to come, or the count sink */
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, sig);
		pthread_sigmask(SIG_UNBLOCK, &m, NULL);
		stuck_stop(s);
	}
	errno = e;
}

#define STUCK_TICK_SIG (SIGRTMIN + 3)

static void stuck_tick_install(void)
{
	struct sigaction a = { .sa_handler = stuck_tick, .sa_flags = SA_RESTART };
	sigemptyset(&a.sa_mask);
	sigaction(STUCK_TICK_SIG, &a, NULL);
}

/* The thread's tick, or 0 (then it goes without). */
static int stuck_tick_start(stream *s, timer_t *id)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, stuck_tick_install);
	if (s->finished) {	/* offline: its handlers are known */
		for (size_t i = 0; i < s->nhd; i++)
			stuck_note(s, &s->hd[i]);
		if (atomic_load(&s->stuck_at) == UINT64_MAX)
			return 0;
	}
	struct sigevent se;
	memset(&se, 0, sizeof se);
	se.sigev_notify = SIGEV_THREAD_ID;
	se.sigev_signo = STUCK_TICK_SIG;
	se._sigev_un._tid = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &se, id))
		return 0;
	struct itimerspec it = { { 1, 0 }, { 1, 0 } };
	tick_stream = s;
	if (timer_settime(*id, 0, &it, NULL)) {
		tick_stream = NULL;
		timer_delete(*id);
		return 0;
	}
	return 1;
}

static void stuck_tick_end(timer_t id)
{
	tick_stream = NULL;
	timer_delete(id);
}

/* The handlers of signals that were pending together (unblocked by
 * sigprocmask, or queued to the thread itself): the kernel runs one after
 * the other, each at the same interrupted pc, with no word between. */
static void handlers_pending_at(stream *s, const sk_thread *t, uint64_t pc)
{
	const vt_handler *h;
	while ((h = handler_here(s, t, pc)) && !(h->flags & VT_HANDLER_ADDR))
		handler_run(s);
}

void sk_crashed_at(sk_thread *t, uint64_t pc, unsigned size, uint64_t addr)
{
	stream *s = t->sink;
	const vt_handler *h = handler_here(s, t, pc);
	if (h && (!(h->flags & VT_HANDLER_ADDR) || (h->addr >= addr && h->addr - addr < size))) {
		handler_run(s);
		handlers_pending_at(s, t, pc);
		return;
	}
	sk_crashed(t, addr, size);
}

void sk_signal_at(sk_thread *t, uint64_t pc)
{
	stream *s = t->sink;
	handlers_pending_at(s, t, pc);
	/* stopped in this system call by the process's exit: its stream
	 * ends here (sk_crashed: unless words follow, online) */
	if (s->crashed && (s->crash.flags & VT_CRASH_EXIT_SYSCALL) && t->w == t->end &&
	    pc == t->crash_pc)
		sk_crashed(t, 0, 0);
}

static void held_word(stream *s);
static void held_clamp(stream *s);

/* Until t->w has a word: events passed, segments taken. */
static bool trip_fault(stream *s, const uint64_t *pcs, unsigned n);
static int trip_handlers(stream *s, const uint64_t *pcs, unsigned n, const char *why);
static bool held_due(stream *s);
static const char early_why[];

/* The thread died at pc, an access between a byte's load and the jump
 * whose probe records the byte (sk_in_early): its address needs the
 * byte, which was not recorded.  Said; the trace ends before it. */
static void early_died(stream *s, uint64_t pc)
{
	sink_flush(s);
	fprintf(stderr, "skel: replay: thread %u died at pc 0x%" PRIx64 ", an access whose "
		"address depends on a byte that the recorder stores at the jump after it "
		"(skel gen: a jump's outcome in the word of the byte it tests): that access is "
		"not in the trace, which ends before it\n", s->thread, pc);
	longjmp(s->end, 2);
}

/* early: the word is read before the probe that recorded it ran, before
 * the accesses pcs[0..n) (sk_in_early): a handler the recorder held to
 * that probe, or a fault's at one of pcs, runs now with its accesses held
 * until those are made (trip_handlers); where it cannot, loud. */
static void words_wait_for(stream *s, bool early, const uint64_t *pcs, unsigned n)
{
	sk_thread *t = &s->t;
	if (s->armed)
		held_word(s);
	while (t->w == t->end) {
		/* no access between: the handler runs here as at the jump */
		if (handler_due(s)) {
			if (early && n && (held_due(s) || trip_fault(s, pcs, n))) {
				if (s->armed || trip_handlers(s, pcs, n, early_why))
					handler_lost(s, handler_next(s), early_why);
				continue;
			}
			handler_at_word(s);
			continue;
		}
		if (soft_end(s)) {
			heap_catch_up(s);
			continue;
		}
		if (!refill(s)) {
			/* sk_idle of a thread stopped for the exit: on to
			 * the probe it stopped at */
			if (s->idle_end && s->parked)
				return;
			for (unsigned i = 0; early && i < n; i++)
				if (pcs[i] == t->crash_pc)
					early_died(s, pcs[i]);
			longjmp(s->end, 1);
		}
		if (has_stops(s))
			heap_catch_up(s);
	}
	held_clamp(s);
}

static void words_wait(stream *s)
{
	words_wait_for(s, false, NULL, 0);
}

uint64_t sk_end_of_stream(sk_thread *t)
{
	words_wait(t->sink);
	return *t->w++;
}

/* A byte read with the outcome of the jump after it (sk_in_early): a
 * handler the recorder held ran at that jump, after the accesses pcs
 * between the byte's load and the jump: it runs now, its accesses held
 * until those are made (words_wait_for, held_access).  Others run at
 * the word, as at any. */
static const char early_why[] = "it ran at a jump whose outcome the skeleton reads with "
	"the byte before it (one word: skel gen records a conditional jump's outcome in "
	"the word of the byte it tests), and the skeleton cannot hold it there";

void sk_in_early_wait(sk_thread *t, const uint64_t *pcs, unsigned n)
{
	words_wait_for(t->sink, true, pcs, n);
}

uint64_t sk_peek_more(sk_thread *t)
{
	words_wait(t->sink);
	return *t->w;
}

void sk_trap(sk_thread *t, uint64_t pc)
{
	(void)sk_peek_more(t);	/* no word left: the trace ends here */
	sk_desync(t, pc, "the program went on after a trap instruction (ud2, int3, hlt): its "
		  "handler returned, to where the skeleton cannot follow", 0);
	abort();
}

/* SK_IDLE out of words: if none comes, the thread's replay ends here, in
 * a loop without exit that records nothing, whose iterations the thread
 * made (until the process's exit, a cancellation or a handler ended it)
 * are not in the trace: said at the end (replay_stream). */
static void idle_wait(sk_thread *t, uint8_t kind)
{
	stream *s = t->sink;
	/* a thread stopped for the exit right before a probe's word
	 * (rec_sig.c, rec_park_asked) replays on to that word, past the
	 * call it stopped in (words_wait_for returns) */
	s->idle_end = kind;
	words_wait(s);
	s->idle_end = 0;
}

void sk_idle(sk_thread *t)
{
	idle_wait(t, 1);
}

void sk_idle_tick(sk_thread *t)
{
	idle_wait(t, 2);
}

void sk_crashed(sk_thread *t, uint64_t addr, unsigned size)
{
	stream *s = t->sink;
	if (soft_end(s))	/* words left: an event's stop */
		return;
	if (s->crash.has_addr && (s->crash.addr < addr || s->crash.addr - addr >= (size ? size : 1)))
		return;		/* another execution of pc */
	pthread_mutex_lock(&mu);
	bool last = s->finished && !s->qh;
	pthread_mutex_unlock(&mu);
	if (last)
		longjmp(s->end, 1);
}

/* A handler before the exit word of an exit-value loop, which the
 * skeleton reads at the loop's entry: the signal came in the loop (it
 * ran at the exit, held there, or in one of its iterations), after
 * accesses of the loop the skeleton has not made yet. */
static void trip_handler_check(stream *s, const char *why)
{
	if (handler_due(s))
		handler_lost(s, handler_next(s), why);
}

static const char trip_why[] = "it came in a loop whose exit value the skeleton reads at "
	"the loop's entry, before the loop's accesses (an exit-value loop)";

static bool held_due(stream *s)
{
	return handler_due(s) && (handler_next(s)->flags & VT_HANDLER_DEFERRED);
}

/* Under mu: whether the thread's queued events close `depth` handlers. */
static bool queue_returns(const stream *s, long depth)
{
	for (const seg *g = s->qh; g && depth > 0; g = g->next)
		if (g->hand)
			depth += g->hand->flags & VT_HANDLER_RETURN ? -1 : 1;
	return depth == 0;
}

/* Whether the handler at hd[i] returned.  Online, its return may not be
 * here yet: the recorder writes it right after the handler's last words,
 * so it is waited for while at most two more VALUES chunks come (a
 * handler that leaves by longjmp never has one; one whose words fill
 * more chunks is taken for such). */
static bool handler_returns(stream *s, size_t i)
{
	if (handler_end(s, i) != UINT64_MAX)
		return true;
	if (!online)
		return false;
	long depth = 0;
	for (size_t k = i; k < s->nhd; k++)
		depth += s->hd[k].flags & VT_HANDLER_RETURN ? -1 : 1;
	pthread_mutex_lock(&mu);
	bool ret;
	while (!(ret = queue_returns(s, depth)) && !s->finished && s->qwords < 3)
		pthread_cond_wait(&more, &mu);
	pthread_mutex_unlock(&mu);
	return ret;
}

/* A fault at one of an exit-value loop's accesses, the next handler's:
 * the loop will come to that access. */
static bool trip_fault(stream *s, const uint64_t *pcs, unsigned n)
{
	const vt_handler *h = handler_next(s);
	if (!(h->flags & VT_HANDLER_ADDR) || h->object != s->t.mod->index)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (pcs[i] == h->pc)
			return true;
	return false;
}

/* Handlers due where an exit-value loop's skeleton reads its exit word
 * (its entry), its words coming before the exit word.
 * One the recorder held (DEFERRED) ran at the loop's exit probe, the
 * first instruction of the exit block: after every access of the loop,
 * before the exit block's.  Its skeleton runs now and its accesses wait
 * until the loop's are made (held_access, held_word).
 * A fault's at one of the loop's accesses (pc, addr): if the handler
 * returns, the access is made again, and the loop goes on to the exit
 * its word says: the handler runs now, its accesses held until the loop
 * comes to that access.  If it leaves by longjmp, the loop runs to the
 * faulting access as for a thread that died there (1: sk_trip_dead) and
 * the handler runs there (sk_crashed_at: t->crash_pc is its pc); online,
 * a return not here yet is taken for a longjmp, and when it comes the
 * replay stops (handler_run).
 * A count needs no waiting.  Other handlers, and sinks whose events
 * cannot wait (the report's batches, instruction fetches), stay loud. */
static int trip_handlers(stream *s, const uint64_t *pcs, unsigned n, const char *why)
{
	sk_thread *t = &s->t;
	if (!handler_due(s))
		return 0;
	bool fault = trip_fault(s, pcs, n);
	if (fault && !handler_returns(s, s->hdnext)) {
		s->trip_fault = s->hdnext + 1;
		return 1;
	}
	if (!(fault || held_due(s)) || s->armed)
		handler_lost(s, handler_next(s), why);
	if (t->batch || fetches)
		handler_lost(s, handler_next(s), "it came where the skeleton reads a word "
			     "before accesses made before the handler ran (an exit-value "
			     "loop's entry, or a byte read with the jump it decides), and "
			     "the report and instruction fetches (--fetches, --sim) cannot "
			     "wait for those accesses (a trace or a count can)");
	s->held_hd = s->hdnext;
	s->fault = fault;
	s->fault_pc = handler_next(s)->pc + t->bias;
	s->fault_addr = handler_next(s)->addr;
	s->capturing = !t->count_only;
	do
		handler_run(s);
	while (!fault && held_due(s));
	s->capturing = false;
	trip_handler_check(s, why);
	if (t->count_only)
		return 0;
	s->armed = true;
	s->loop_seen = false;
	s->loop_pcs = pcs;
	s->nloop_pcs = n;
	s->loop_bias = t->bias;
	return 0;
}

/* The held handlers' accesses, in place. */
static void held_flush(stream *s)
{
	int mark = s->t.mark;
	s->armed = false;
	for (size_t i = 0; i < s->nheld; i++) {
		s->t.mark = s->held[i].mark;
		sink_put(s, s->held[i].pc, s->held[i].kind, s->held[i].size, s->held[i].addr);
	}
	s->t.mark = mark;
	s->nheld = 0;
}

/* An access while held: the loop's, or the first after it; or the
 * faulting access, made again. */
static void held_access(stream *s, uint64_t pc, unsigned size, uint64_t addr)
{
	if (s->fault) {
		if (pc == s->fault_pc && s->fault_addr >= addr && s->fault_addr - addr < size)
			held_flush(s);
		s->loop_seen = true;
		return;
	}
	for (unsigned i = 0; i < s->nloop_pcs; i++)
		if (s->loop_pcs[i] + s->loop_bias == pc) {
			s->loop_seen = true;
			return;
		}
	held_flush(s);
}

/* A word read while held: the loop's exit words (read at its entry,
 * before any of its accesses), or one after the loop. */
static void held_word(stream *s)
{
	if (s->fault && s->loop_seen)
		handler_lost(s, &s->hd[s->held_hd], "the skeleton's loop left before the "
			     "access that faulted (desynchronised)");
	if (s->loop_seen || !s->nloop_pcs)
		held_flush(s);
}

/* While held, each word read comes through words_wait (held_word). */
static void held_clamp(stream *s)
{
	sk_thread *t = &s->t;
	if (s->armed && t->w < t->end)
		t->end = t->w + 1;
}

/* Whether the thread's stream is over and it died at one of pcs. */
static int trip_dead(stream *s, const uint64_t *pcs, unsigned n)
{
	sk_thread *t = &s->t;
	while (t->w == t->end) {
		trip_handler_check(s, trip_why);
		if (soft_end(s)) {
			heap_catch_up(s);
			continue;
		}
		if (!refill(s)) {
			for (unsigned i = 0; i < n; i++)
				if (pcs[i] == t->crash_pc)
					return 1;
			return 0;
		}
		if (track_heap || reporting)
			heap_catch_up(s);
	}
	return 0;
}

/* As words_wait, but a stream that is over returns: whether the thread
 * died at one of pcs. */
int sk_trip_crashed(sk_thread *t, const uint64_t *pcs, unsigned n)
{
	stream *s = t->sink;
	int dead = trip_handlers(s, pcs, n, trip_why) ||
		   (t->crash_pc != UINT64_MAX && trip_dead(s, pcs, n));
	held_clamp(s);
	return dead;
}

void sk_thread_exit(sk_thread *t, uint64_t pc)
{
	uint64_t w = t->w < t->end ? *t->w : sk_peek_more(t);
	sk_desync(t, pc, "the thread's exit system call, with words of its stream left", w);
}

void sk_desync(sk_thread *t, uint64_t pc, const char *what, uint64_t got)
{
	stream *s = t->sink;
	sink_flush(s);
	size_t k = (size_t)s->base + (s->cur ? (size_t)(t->w - s->cur->w) : 0);
	fprintf(stderr, "skel: replay: thread %u desynchronised at pc 0x%" PRIx64
		" (word %zu of its stream): %s, got 0x%" PRIx64 "\n", t->thread, pc,
		k, what, got);
	longjmp(s->end, 2);
}

/* Whether `to`, where an indirect jump or call in t's module went, is
 * somewhere the skeleton can follow: an analyzed routine's entry, another
 * object (its entry word comes next if it has a skeleton), or outside the
 * module's code. */
static bool ijump_followed(const sk_thread *t, uint64_t to)
{
	const sk_module *m = t->mod;
	if (m->entry_pcs) {
		size_t lo = 0, hi = m->nentry_pcs;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (m->entry_pcs[mid] < to)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < m->nentry_pcs && m->entry_pcs[lo] == to)
			return true;
	}
	if (other_object(m, to + t->bias))
		return true;
	bool inside = !m->code_ranges;
	for (unsigned i = 0; !inside && i < m->ncode_ranges; i++)
		inside = to >= m->code_ranges[2 * i] && to < m->code_ranges[2 * i + 1];
	return !inside;
}

/* Stops the replay at an indirect jump or call to code the analysis did
 * not find, noting the target for the next analysis of this binary, in
 * the cache where the driver looks (run.c: load_analyzed), so the next
 * run follows it. */
static void unfollowed(sk_thread *t, uint64_t pc, uint64_t to, const char *what)
{
	const sk_module *m = t->mod;
	char path[4096];
	const char *out = getenv("SKEL_TARGETS_OUT");
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (!out || !*out) {
		if (x && *x)
			snprintf(path, sizeof path, "%s/skel/%s.targets", x, m->binary_id);
		else
			snprintf(path, sizeof path, "%s/.cache/skel/%s.targets", h && *h ? h : "/tmp",
				 m->binary_id);
		out = path;
	}
	FILE *f = fopen(out, "a");
	if (f) {
		fprintf(f, "0x%" PRIx64 " 0x%" PRIx64 "\n", pc, to);
		fclose(f);
		fprintf(stderr, "skel: replay: target 0x%" PRIx64 " of the %s at 0x%" PRIx64
			" noted in %s: the next `skel gen` or `skel trace` of this binary follows it\n",
			to, what, pc, out);
	}
	char why[96];
	snprintf(why, sizeof why, "%s to a target the analysis did not find", what);
	sk_desync(t, pc, why, to);
}

void sk_stack_switch(sk_thread *t, uint64_t pc)
{
	stream *s = t->sink;
	sink_flush(s);
	fprintf(stderr, "skel: replay: thread %u: the indirect jump at pc 0x%" PRIx64 " (link-time) "
		"loads the stack pointer from memory first (__builtin_longjmp, or a context switch "
		"of the program's own): skel does not follow it; the thread's trace ends here\n",
		s->thread, pc);
	longjmp(s->end, 2);
}

void sk_ijump_other(sk_thread *t, uint64_t pc, uint64_t to)
{
	if (!ijump_followed(t, to))
		unfollowed(t, pc, to, "indirect jump");
}

void sk_icall_check(sk_thread *t, uint64_t pc, uint64_t to)
{
	if (!ijump_followed(t, to))
		unfollowed(t, pc, to, "indirect call");
}

/* ------------------------------------------------ regions of interest */

#define ROI_MAX 64
static const char *roi_names[ROI_MAX];
static int nroi;
static bool roi_markers;

/* A routine's mark: SK_ROI_BEGIN, SK_ROI_END, or ROI_FUNC_0 + j for the
 * j-th --roi routine (the report's region j; the markers' region is
 * nroi). */
#define ROI_FUNC_0 4

/* The report sees the regions start and end: the region that turned
 * them on is the one the accesses count in until they are off. */
static void roi_changed(sk_thread *t, int was_on, int region)
{
	if (!reporting || !t->roi_on == !was_on)
		return;
	stream *s = t->sink;
	report_flush(s);
	report_region(s->rep, report_clock(t), t->roi_on ? region : -1);
}

void sk_roi_enter(sk_roi_frame *f)
{
	sk_thread *t = f->t;
	int was = t->roi_on;
	if (f->kind >= ROI_FUNC_0)
		t->roi_depth++;
	else if (f->kind == SK_ROI_END && t->roi_marks)
		t->roi_marks--;
	t->roi_on = t->roi_depth || t->roi_marks;
	roi_changed(t, was, (int)f->kind - ROI_FUNC_0);
}

void sk_roi_leave(sk_roi_frame *f)
{
	sk_thread *t = f->t;
	int was = t->roi_on;
	if (f->kind >= ROI_FUNC_0 && t->roi_depth)
		t->roi_depth--;
	else if (f->kind == SK_ROI_BEGIN)
		t->roi_marks++;
	t->roi_on = t->roi_depth || t->roi_marks;
	/* a marked region is named by its outermost skel_roi_begin */
	int region = nroi;
	if (f->kind == SK_ROI_BEGIN && reporting && !was)
		region = report_marker(t->roi_name);
	if (f->kind == SK_ROI_BEGIN)
		t->roi_name = NULL;
	roi_changed(t, was, region);
}

void sk_roi_name(sk_thread *t, const char *name)
{
	t->roi_name = name;
}

/* Each module's routines marked by name: 0, or -1 after saying why (a
 * name no skeleton has, markers the program does not call). */
static int roi_setup(void)
{
	bool found[ROI_MAX] = { false }, begin = false, end = false;
	if (!nroi && !roi_markers)
		return 0;
	if (!&sk_roi_compiled) {
		fprintf(stderr, "skel: replay: --roi: the skeleton was compiled without its "
			"routine hooks (SK_ROI=1)\n");
		return -1;
	}
	roi_active = true;
	for (size_t k = 0; k < nmods; k++) {
		sk_module *m = &mods[k];
		if (!m->names)
			continue;
		m->roi = calloc(m->nnames + 1, 1);
		if (!m->roi) {
			fprintf(stderr, "skel: replay: out of memory\n");
			return -1;
		}
		for (unsigned i = 0; i < m->nnames; i++) {
			for (int j = 0; j < nroi; j++)
				if (!strcmp(m->names[i], roi_names[j])) {
					m->roi[i] = (unsigned char)(ROI_FUNC_0 + j);
					found[j] = true;
				}
			if (roi_markers && !strcmp(m->names[i], "skel_roi_begin")) {
				m->roi[i] = SK_ROI_BEGIN;
				begin = true;
			}
			if (roi_markers && !strcmp(m->names[i], "skel_roi_end")) {
				m->roi[i] = SK_ROI_END;
				end = true;
			}
		}
	}
	for (int j = 0; j < nroi; j++)
		if (!found[j]) {
			fprintf(stderr, "skel: replay: --roi %s: no routine of that name in the "
				"skeleton%s (skel analyze APP lists them)\n", roi_names[j],
				nmods > 1 ? " or its modules" : "");
			return -1;
		}
	if (roi_markers && !(begin && end)) {
		fprintf(stderr, "skel: replay: --roi-markers: the program has no %s routine "
			"(include skel_roi.h and call skel_roi_begin and skel_roi_end; a stripped "
			"binary keeps no names)\n", begin ? "skel_roi_end" : "skel_roi_begin");
		return -1;
	}
	return 0;
}

/* The pc a crashed thread died at, when it lies in m (sk_crashed). */
static uint64_t crash_pc_in(const stream *s, const sk_module *m)
{
	const vt_handler *h = s->hdnext < s->nhd ? &s->hd[s->hdnext] : NULL;
	if (h && (h->flags & VT_HANDLER_AT_PC) && h->object == m->index)
		return h->pc;
	return s->crashed && s->crash.pc && s->crash.object == m->index
		? s->crash.pc : UINT64_MAX;
}

/* LINKS payloads (n words one after the other): each object's linked
 * PLT slots, kept by the module that replays the object.  They must name
 * bound modules' routines: an entry word of an object without a skeleton
 * is refused here rather than met in the middle of the replay. */
static int modules_link(const uint64_t *w, size_t n, const char *what)
{
	for (size_t at = 0; at < n;) {
		uint32_t idx = (uint32_t)w[at], k = (uint32_t)(w[at] >> 32);
		if (k > n - at - 1 || idx >= PATCH_MAX_OBJECTS || !by_index[idx]) {
			fprintf(stderr, "skel: %s: its linked PLT slots name object %u, which has "
				"no skeleton here\n", what, idx);
			return -1;
		}
		for (uint32_t j = 0; j < k; j++) {
			uint64_t e = w[at + 1 + j] & ~VT_LINK_QRET;
			uint32_t o = SK_ENTRY_OBJECT(e);
			if (e && (!SK_IS_ENTRY(e) || o >= PATCH_MAX_OBJECTS || !by_index[o])) {
				fprintf(stderr, "skel: %s: linked PLT slot %u of object %u names "
					"0x%" PRIx64 ", not an entry of an object with a skeleton\n",
					what, j, idx, e);
				return -1;
			}
		}
		by_index[idx]->links = w + at + 1;
		by_index[idx]->nlinks = k;
		at += 1 + (size_t)k;
	}
	return 0;
}

int sk_plt_linked(sk_thread *t, uint32_t n, uint64_t sp)
{
	const sk_module *m = t->mod;
	if (!m || n >= m->nlinks || !m->links[n])
		return 0;
	uint64_t w = m->links[n] & ~VT_LINK_QRET;
	t->qsp = sp;
	t->depth++;
	sk_dispatch(t, w);
	t->depth--;
	if (t->qsp)
		sk_desync(t, 0, "a routine entered by a linked PLT call did not take its rsp", w);
	return (m->links[n] & VT_LINK_QRET) != 0;
}

static void module_enter(sk_thread *t, const sk_module *m)
{
	t->mod = m;
	t->roi = m->roi;
	t->bias = m->bias;
	t->mbits = (uint64_t)m->index << 32;
	t->crash_pc = crash_pc_in(t->sink, m);
}

void sk_setjmp_first(sk_thread *t, uint64_t pc, sk_resume *r)
{
	while (sk_peek_ctl(t) != r->word) {
		if (sk_peek_ctl(t) == SK_RETURNED)
			sk_desync(t, pc, "expected setjmp to return to the routine after it", SK_RETURNED);
		t->depth++;
		sk_dispatch(t, sk_ctl(t));
		t->depth--;
	}
	(void)sk_ctl(t);
	r->sp = SP();
}

void sk_setjmp_again(sk_thread *t, uint64_t pc, uint64_t word)
{
	if (!t->resume || t->resume->word != word)
		sk_desync(t, pc, "setjmp again in a routine not entered through setjmp", word);
	sk_setjmp_first(t, pc, t->resume);
}

void sk_resume_lost(sk_thread *t, uint64_t word)
{
	sk_desync(t, 0, "a longjmp to a setjmp the replay did not see (or code after a "
		  "setjmp call entered otherwise)", word);
}

/* A routine entry word that is a live setjmp's (sk_resume): a longjmp.
 * Unwinds the skeleton to that setjmp's frame; returns when it is none. */
static bool resume_matches(sk_resume *r, uint64_t word)
{
	if (!r->nwords)
		return r->word == word;
	if (r->pad >= r->nwords || r->words[r->pad] + r->mbits != word)
		return false;
	r->landed = r->pad;
	return true;
}

static void resume_longjmp(sk_thread *t, uint64_t word)
{
	sk_resume *r = t->resume;
	while (r && !resume_matches(r, word))
		r = r->up;
	if (!r)
		return;
	uint64_t sp = SP();
	while (r && !(resume_matches(r, word) && (r->nwords || r->sp == sp)))
		r = r->up;
	if (!r)
		sk_desync(t, 0, "a longjmp to a setjmp frame the replay does not have "
			  "(its rsp is recorded after the entry word)", sp);
	t->resume = r;
	r->pad = SK_NO_PAD;	/* in its pad now, not in the call */
	int was = t->roi_on;
#define SK_LOAD(f) t->f = r->f;
	SK_RESUME_STATE(SK_LOAD)
#undef SK_LOAD
	/* the handlers passed since the setjmp (the one it leaves, if a
	 * handler longjmps) are passed still */
	t->crash_pc = crash_pc_in(t->sink, t->mod);
	/* the unwind skips the frames' region ends: the report hears of
	 * it here (regions turned on again this way, rarely, are counted
	 * as the markers' when those are on, else as the first --roi's) */
	roi_changed(t, was, t->roi_marks ? nroi : 0);
	__builtin_longjmp(r->jb, 1);
}

void sk_dispatch(sk_thread *t, uint64_t word)
{
	if (t->resume)
		resume_longjmp(t, word);
	const sk_module *m = &mods[0];
	if (SK_IS_ENTRY(word) && SK_ENTRY_OBJECT(word)) {
		/* a word that only looks like an entry may name any number */
		m = SK_ENTRY_OBJECT(word) < PATCH_MAX_OBJECTS ? by_index[SK_ENTRY_OBJECT(word)] : NULL;
		if (!m)
			sk_desync(t, 0, "an entry of an object without a skeleton", word);
	}
	if (m == t->mod) {
		m->dispatch(t, word);
		return;
	}
	const sk_module *was = t->mod;
	module_enter(t, m);
	m->dispatch(t, word);
	module_enter(t, was);
}

static void *replay_stream(void *arg)
{
	stream *s = arg;
	sk_thread *t = &s->t;
	timer_t tick;
	int ticking = stuck_tick_start(s, &tick);
	t->fsbase = s->start.fsbase;
	int r = setjmp(s->end);
	if (r == 0 && has_stops(s))
		heap_catch_up(s);	/* events before its first word */
	if (r == 0)
		for (;;)
			sk_dispatch(t, sk_ctl(t));
	if (ticking)
		stuck_tick_end(tick);
	s->how = r;
	if (r == 1 && s->armed)	/* the stream ended after the loop */
		held_flush(s);
	/* a thread still running at the process's exit is said with the
	 * others (say_running) */
	if (r == 1 && s->idle_end == 1 && s->thread_ended)
		fprintf(stderr, "skel: replay: thread %u ended (cancelled, or a handler's exit) "
			"in a loop without exit that records nothing: the accesses of the "
			"iterations it made there are not in the trace\n", s->thread);
	if (r == 1 && s->idle_end == 2 && s->thread_ended && !s->parked)
		fprintf(stderr, "skel: replay: thread %u ended (cancelled, or a handler's exit) "
			"in a loop without exit, at its iteration's start or in the iteration: "
			"the accesses it made there after that start, if any, are not in the "
			"trace\n", s->thread);
	if (reporting) {	/* the last stamps: the end of the stream */
		pthread_mutex_lock(&mu);
		stamps_pass(s, UINT64_MAX);
		pthread_mutex_unlock(&mu);
		report_flush(s);
		report_thread_end(s->rep, report_clock(t));
	}
	sink_end(s);
	/* done: what is still queued (after a desync) is dropped */
	pthread_mutex_lock(&mu);
	s->dead = true;
	seg *g = s->qh;
	s->qh = s->qt = NULL;
	pthread_mutex_unlock(&mu);
	seg_free(s->cur);
	s->cur = NULL;
	while (g) {
		seg *n = g->next;
		seg_free(g);
		g = n;
	}
	return NULL;
}

/* Deep recursion in the program is deep recursion in the skeleton: run
 * each stream on a thread with a large stack. */
static void start_job(stream *s)
{
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, (size_t)1 << 30);
	if (pthread_create(&s->th, &at, replay_stream, s) != 0) {
		fprintf(stderr, "skel: replay: cannot start a thread\n");
		exit(2);
	}
	s->has_th = true;
	pthread_attr_destroy(&at);
}

/* Main-only recordings name no objects: the executable's symbols come
 * from --exe, checked against the skeleton's identity. */
static void symbols_of_exe(uint64_t bias)
{
	static bool tried;
	char err[FMT_ERR_LEN];
	if (tried || sym_have_objects())
		return;
	tried = true;
	if (!exe_path)
		fprintf(stderr, "skel: replay: %s: the executable is not known (skel "
			"replay --binary APP names it): its static data shows as '?'\n",
			reporting ? "report" : "--symbolize");
	else if (sym_object_add(exe_path, bias, true, sk_binary_id, err) < 0)
		fprintf(stderr, "skel: %s: %s: its static data shows as '?'\n", exe_path, err);
}

static void symbols_of_objects(const vt_object *v, size_t n, const char *what)
{
	char err[FMT_ERR_LEN], id[2 * SKEL_ID_MAX + 1];
	for (size_t i = 0; (symbolize || reporting) && i < n; i++) {
		const vt_object *o = &v[i];
		if ((o->flags & VT_OBJ_RECORDER) || !o->path[0] || o->path[0] != '/')
			continue;	/* the recorder, the vdso */
		hex_bytes(o->id, o->id_len, id);
		if (sym_object_add(o->path, o->bias, o->flags & VT_OBJ_MAIN,
				   o->id_len ? id : NULL, err) < 0)
			fprintf(stderr, "skel: %s: %s: %s: its static data shows as '?'\n", what,
				o->path, err);
	}
}

static void stream_free(stream *s);

static stream *stream_new(uint32_t thread, uint64_t bias, FILE *out, bool spill)
{
	stream *s = calloc(1, sizeof *s);
	if (!s || !(s->buf = malloc(BUFSZ))) {
		fprintf(stderr, "skel: replay: out of memory\n");
		exit(2);
	}
	s->thread = thread;
	s->t.thread = thread;
	s->t.bias = bias;
	s->t.sink = s;
	s->t.count_only = format == F_COUNT && !stats && !reporting;
	s->t.crash_pc = UINT64_MAX;
	s->fline = UINT64_MAX;
	atomic_init(&s->stuck_at, UINT64_MAX);
	char err[SIM_ERR_LEN];
	if (simu && sim_thread_init(&s->sth, simu, l1_per_thread, err) < 0) {
		fprintf(stderr, "skel: sim: %s\n", err);
		exit(2);
	}
	if (sim_direct)
		sim_feed_init(&s->feed, simu, &s->sth);
	mods[0].bias = bias;
	s->t.mod = &mods[0];
	s->t.roi = mods[0].roi;
	s->t.roi_on = !roi_active;
	s->view.thread = thread;
	if (symbolize || reporting)
		symbols_of_exe(bias);
	if (reporting) {
		s->rep = report_thread_new(thread);
		s->t.batch = malloc(SK_BATCH * sizeof *s->t.batch);
		if (!s->t.batch) {
			fprintf(stderr, "skel: replay: out of memory\n");
			exit(2);
		}
	}
	s->f = out;
	s->spill = spill;
	return s;
}

static void stream_free(stream *s)
{
	free(s->hdown);
	free(s->held);
	free(s->hev);
	free(s->tev);
	free(s->t.batch);
	sim_thread_free(&s->sth);
	lp_free(&s->lp);
	hset_free(&s->chunks);
	pf_settle(NULL);
	free(s->unpacked);
	free(s->pf_buf);
	vt_unz_free(s->zin);
	free(s->buf);
	free(s);
}

/* The values are this skeleton's: same binary, same probes.  0 or a
 * message naming `what`. */
static int header_matches(const vt_header *h, const char *what)
{
	char id[2 * SKEL_ID_MAX + 1];
	hex_bytes(h->id, h->id_len, id);
	if (strcmp(id, sk_binary_id)) {
		fprintf(stderr, "skel: %s: recorded from binary %s, but the skeleton is for %s\n",
			what, id, sk_binary_id);
		return -1;
	}
	if (h->patch_hash != sk_patch_hash) {
		fprintf(stderr, "skel: %s: recorded with another skeleton of this binary "
			"(patch %016llx, this skeleton's is %016llx: other options, "
			"targets or skel version); record again with this skeleton\n",
			what, (unsigned long long)h->patch_hash, sk_patch_hash);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------- the results */

typedef struct totals {
	uint64_t count[2], bytes[2];
	lpset lp;               /* lines and pages */
	hset chunks;            /* approximate --stats: C-byte chunks */
	scope_stat *sc[PATCH_MAX_OBJECTS];	/* all threads, per module, per scope */
	uint64_t mwords[PATCH_MAX_OBJECTS], macc[PATCH_MAX_OBJECTS];
	uint64_t wleft;         /* values after their thread's last access */
} totals;

static void report_thread(FILE *f, stream *s, totals *tot)
{
	sk_thread *t = &s->t;
	if (simu && !simu->reuse && sim_nthreads > 1) {
		fprintf(f, "thread %u:", s->thread);
		for (int k = 0; k < SIM_NEVENTS; k++)
			fprintf(f, " %s %" PRIu64, sim_event_names[k], s->sth.total.ev[k]);
		fputc('\n', f);
	}
	for (int k = 0; k < 2; k++) {
		tot->count[k] += t->count[k];
		tot->bytes[k] += t->bytes[k];
	}
	if (format == F_COUNT)
		fprintf(f, "thread %u: %" PRIu64 " reads (%" PRIu64 " bytes), %" PRIu64
			" writes (%" PRIu64 " bytes), %" PRIu64 " values\n", s->thread,
			t->count[0], t->bytes[0], t->count[1], t->bytes[1], s->nvalues);
	if (approximate() && (format == F_COUNT || stats))
		fprintf(format == F_COUNT ? f : stderr, "approximate: thread %u: of %" PRIu64
			" accesses %" PRIu64 " attributed, %" PRIu64 " absent (omega %g, chunk "
			"%llu)\n", s->thread, t->count[0] + t->count[1], t->nmarked[0], t->nmarked[1],
			sk_omega, &sk_chunk ? sk_chunk : 0);
	if (approximate() && stats) {
		fprintf(stderr, "skel: stats: thread %u: %zu chunks of %llu bytes\n", s->thread,
			s->chunks.n, sk_chunk);
		hset_merge(&tot->chunks, &s->chunks);
	}
	if (stats) {
		fprintf(stderr, "skel: stats: thread %u: %" PRIu64 " accesses, %" PRIu64
			" reads (%" PRIu64 " bytes), %" PRIu64 " writes (%" PRIu64 " bytes), %zu "
			"cache lines (64 B), %zu pages (4 KiB)\n", s->thread, t->count[0] + t->count[1],
			t->count[0], t->bytes[0], t->count[1], t->bytes[1], s->lp.nlines, s->lp.npages);
		lp_merge(&tot->lp, &s->lp);
		for (size_t m = 0; m < nmods; m++) {
			tot->mwords[m] += s->mwords[m];
			tot->macc[m] += s->macc[m];
		}
		/* the values after its last access: its end, a handler's
		 * words after its last access, ... */
		tot->wleft += s->nvalues > s->wlast ? s->nvalues - s->wlast : 0;
		for (size_t m = 0; m < nmods; m++) {
			if (!s->sc[m])
				continue;
			if (!tot->sc[m])
				tot->sc[m] = stats_calloc(mods[m].nscopes, sizeof *tot->sc[m]);
			for (unsigned k = 0; k < mods[m].nscopes; k++) {
				scope_stat *x = &s->sc[m][k], *y = &tot->sc[m][k];
				for (int j = 0; j < 2; j++) {
					y->count[j] += x->count[j];
					y->bytes[j] += x->bytes[j];
				}
				y->words += x->words;
				lp_merge(&y->lp, &x->lp);
				lp_free(&x->lp);
			}
			free(s->sc[m]);
			s->sc[m] = NULL;
		}
		free(s->scope_hits);
		s->scope_hits = NULL;
	}
}

/* Per module (the executable's first), per routine, then its loops
 * indented by depth; scopes without accesses are left out.  Each scope's
 * counts, lines and pages are first its own and its inner scopes'
 * (innermost first).  Another object's lines name it ("in libc.so.6"). */
static void report_module_scopes(size_t mi, scope_stat *sc)
{
	const sk_module *m = &mods[mi];
	const sk_scope *v = m->scopes;
	uint32_t deepest = 0;
	char in[96] = "";
	if (mi)
		snprintf(in, sizeof in, " in %s", m->object ? base_name(m->object) : "?");
	for (unsigned k = 0; k < m->nscopes; k++)
		if (v[k].depth > deepest)
			deepest = v[k].depth;
	for (uint32_t d = deepest; d > 0; d--)
		for (unsigned k = 0; k < m->nscopes; k++) {
			int32_t p = v[k].parent;
			if (v[k].depth != d || p < 0 || (unsigned)p >= m->nscopes)
				continue;
			for (int j = 0; j < 2; j++) {
				sc[p].count[j] += sc[k].count[j];
				sc[p].bytes[j] += sc[k].bytes[j];
			}
			sc[p].words += sc[k].words;
			lp_merge(&sc[p].lp, &sc[k].lp);
		}
	for (unsigned k = 0; k < m->nscopes; k++) {
		scope_stat *x = &sc[k];
		if (x->count[0] + x->count[1]) {
			char what[256];
			if (v[k].parent < 0)
				snprintf(what, sizeof what, "routine %s%s",
					 v[k].routine < m->nnames ? m->names[v[k].routine] : "?", in);
			else
				snprintf(what, sizeof what, "%*sloop at 0x%" PRIx64 " (depth %u)%s",
					 2 * (int)v[k].depth, "", v[k].pc, v[k].depth, in);
			fprintf(stderr, "skel: stats: %s: %" PRIu64 " accesses, %" PRIu64
				" bytes read, %" PRIu64 " bytes written, %zu cache lines, %zu pages, %"
				PRIu64 " values\n", what, x->count[0] + x->count[1], x->bytes[0],
				x->bytes[1], x->lp.nlines, x->lp.npages, x->words);
		}
		lp_free(&x->lp);
	}
}

static void report_scopes(totals *tot)
{
	for (size_t m = 0; m < nmods; m++) {
		if (tot->sc[m])
			report_module_scopes(m, tot->sc[m]);
		free(tot->sc[m]);
		tot->sc[m] = NULL;
	}
}

/* Accesses and values by object: a value counts for the object whose
 * access the replay made next after reading it. */
static void report_objects(const totals *tot)
{
	for (size_t m = 0; m < nmods; m++) {
		if (!tot->macc[m] && !tot->mwords[m])
			continue;
		const char *o = mods[m].object ? base_name(mods[m].object) : m ? "?" : "the executable";
		fprintf(stderr, "skel: stats: object %s: %" PRIu64 " accesses, %" PRIu64
			" values (%.3f per access)\n", o, tot->macc[m],
			tot->mwords[m], tot->macc[m] ? (double)tot->mwords[m] / (double)tot->macc[m] : 0.0);
	}
	if (tot->wleft)
		fprintf(stderr, "skel: stats: %" PRIu64 " values after the last access of "
			"their thread\n", tot->wleft);
}

static void report_total(FILE *f, totals *tot)
{
	if (format == F_COUNT)
		fprintf(f, "total: %" PRIu64 " accesses, %" PRIu64 " reads, %" PRIu64
			" writes, %" PRIu64 " bytes\n", tot->count[0] + tot->count[1], tot->count[0],
			tot->count[1], tot->bytes[0] + tot->bytes[1]);
	if (stats)
		fprintf(stderr, "skel: stats: total: %" PRIu64 " accesses, %" PRIu64 " bytes read, %"
			PRIu64 " bytes written, %zu cache lines, %zu pages\n",
			tot->count[0] + tot->count[1], tot->bytes[0], tot->bytes[1], tot->lp.nlines,
			tot->lp.npages);
	if (stats && approximate())
		fprintf(stderr, "skel: stats: total: %zu chunks of %llu bytes\n", tot->chunks.n,
			sk_chunk);
	if (stats)
		report_objects(tot);
	if (stats) {
		struct rusage ru;
		report_scopes(tot);
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			fprintf(stderr, "skel: stats: replayer peak memory %ld MiB\n",
				ru.ru_maxrss >> 10);
	}
	lp_free(&tot->lp);
	hset_free(&tot->chunks);
}

static void begin_output(FILE *f)
{
	bool marks = approximate() && (format == F_TEXT || format == F_CSV);
	if (format == F_CSV)
		fprintf(f, "thread,pc,kind,size,addr%s%s\n", symbolize ? ",object" : "",
			marks ? ",mark" : "");
	else if (marks)
		fprintf(f, "# approximate: omega %g chunk %llu\n", sk_omega,
			&sk_chunk ? sk_chunk : 0);
}

/* ------------------------------------------------------------ offline */

/* Waits for a stream's replay; when stderr is a terminal and the replay
 * takes more than a second (SKEL_PROGRESS_DELAY_MS, for tests), keeps one
 * progress line there (words of the stream replayed, accesses so far),
 * erased at the end. */
static void join_with_progress(stream *s, bool quiet)
{
	if (quiet || !isatty(2) || !s->nvalues) {
		pthread_join(s->th, NULL);
		return;
	}
	const char *d = getenv("SKEL_PROGRESS_DELAY_MS");
	long delay = d && *d ? strtol(d, NULL, 10) : 1000, tick = d && *d ? 10 : 250;
	struct timespec at;
	clock_gettime(CLOCK_REALTIME, &at);
	long waited = 0;
	bool shown = false;
	for (;;) {
		at.tv_nsec += tick * 1000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(s->th, NULL, &at) == 0)
			break;
		if ((waited += tick) < delay)
			continue;
		uint64_t base = __atomic_load_n(&s->seg_base, __ATOMIC_RELAXED);
		const uint64_t *w0 = __atomic_load_n(&s->seg_w, __ATOMIC_RELAXED);
		const uint64_t *w = __atomic_load_n(&s->t.w, __ATOMIC_RELAXED);
		uint64_t done = base + (w >= w0 ? (uint64_t)(w - w0) : 0);
		uint64_t acc = __atomic_load_n(&s->t.count[0], __ATOMIC_RELAXED) +
			       __atomic_load_n(&s->t.count[1], __ATOMIC_RELAXED);
		fprintf(stderr, "\rskel: replay: thread %u: %5.1f%% of its %" PRIu64 " words, %"
			PRIu64 " accesses ", s->thread,
			done > s->nvalues ? 100.0 : 100.0 * (double)done / (double)s->nvalues,
			s->nvalues, acc);
		shown = true;
	}
	if (shown)
		fputs("\r\033[K", stderr);
}

/* The files of a recording (formats.md, VT_PROCESS): the first
 * process's VALUES, a forked child's VALUES.<pid>, an exec'd image's
 * VALUES.<pid>.exec<n>. */
static void child_path(char *out, const char *values, uint32_t pid)
{
	if (snprintf(out, PATH_MAX, "%s.%u", values, pid) >= PATH_MAX)
		out[0] = 0;	/* no such file */
}

/* The file of image n (n > 0) of process pid: started by an exec. */
static void image_path(char *out, const char *values, uint32_t pid, uint32_t n)
{
	if (snprintf(out, PATH_MAX, "%s.%u.exec%u", values, pid, n) >= PATH_MAX)
		out[0] = 0;
}

/* The first process's file, from the name of a file of the recording
 * and its PROCESS chunk (the name as it is if it was renamed). */
static void root_of(char *out, const char *path, const vt_process *p)
{
	char suf[64] = "";
	if (p->flags & VT_PROC_EXECED)
		snprintf(suf, sizeof suf, ".%u.exec%u", p->pid, VT_PROC_IMAGE(p->flags));
	else if (p->flags & VT_PROC_FORKED)
		snprintf(suf, sizeof suf, ".%u", p->pid);
	size_t l = strlen(path), k = strlen(suf);
	if (k <= l && !strcmp(path + l - k, suf))
		l -= k;
	snprintf(out, PATH_MAX, "%.*s", (int)l, path);
}

/* Events the skeleton does not model: said on every replay, quiet or not
 * (issue: never a silent hole).  A handler's accesses would be missing
 * from the trace: the thread's trace stops there and the status says so
 * (3).  A fork's child and an exec'd image are other processes: the
 * trace of this one is whole, the message names what is not in it. */
static int report_signal(const char *what, uint32_t thread, const vt_signal *e,
			 const char *why)
{
	fprintf(stderr, "skel: %s: thread %u: signal %u (%s) ran a handler of the program "
		"after its word %" PRIu64 " (interrupted at pc 0x%" PRIx64 "): %s; the "
		"handler's accesses are missing, and the thread's trace ends where it needed "
		"its next word\n", what, thread, e->signal, strsignal((int)e->signal), e->word,
		e->pc, why);
	return 3;
}

/* skel run: the children write no stream of their own (the FIFO is the
 * parent's); skel record writes one per child (report_forks). */
static void report_fork(const char *what, uint32_t thread, uint32_t n, const vt_fork *f)
{
	fprintf(stderr, "skel: %s: thread %u forked %u child process%s (the first, pid %u, "
		"after its word %" PRIu64 "): skel run traces the first process only, what a "
		"child does is not traced (skel record, then skel replay --pid PID, traces "
		"it)\n", what, thread, n, n == 1 ? "" : "es", f->pid, f->word);
}

/* true: the run ended in exec (no END chunk is expected) */
static void report_spawns(const char *what, uint32_t n, const vt_exec *first)
{
	if (n)
		fprintf(stderr, "skel: %s: the program started %u other program%s (posix_spawn, "
			"system, popen; the first: %s): not traced, glibc's child runs none of the "
			"program's code before it execs\n", what, n, n == 1 ? "" : "s", first->path);
}

/* `root` and p (NULL online): where the new image's trace is, if that
 * image recorded (the same program: formats.md, VT_PROCESS). */
static bool report_exec(const char *what, const vt_exec *e, const char *root,
			const vt_process *p)
{
	if (e->stage != VT_EXEC_CALLED)
		return false;
	char next[PATH_MAX] = "";
	if (p && p->pid)
		image_path(next, root, p->pid, VT_PROC_IMAGE(p->flags) + 1);
	if (next[0] && access(next, R_OK) == 0)
		fprintf(stderr, "skel: %s: the program replaced itself by exec of %s at the end of "
			"this trace: the new image's trace is in %s (skel replay SKEL %s)\n", what,
			e->path, next, next);
	else
		fprintf(stderr, "skel: %s: the program replaced itself by exec of %s at the end of "
			"this trace: what that image did is not traced\n", what, e->path);
	return true;
}

static void seg_queue(stream *s, seg *g)
{
	if (!s->cur)
		s->cur = g;
	else if (s->qt)
		s->qt = s->qt->next = g;
	else
		s->qh = s->qt = g;
}

/* The stream's words, `limit` at most: one segment per run (at least
 * one, empty). */
static void stream_runs(stream *s, const struct vt_run *runs, size_t n, uint64_t limit)
{
	for (size_t r = 0; r < n || r == 0; r++) {
		seg *g = calloc(1, sizeof *g);
		if (!g) {
			fprintf(stderr, "skel: replay: out of memory\n");
			exit(2);
		}
		if (r < n && limit) {
			g->run = &runs[r];
			g->n = runs[r].n < limit ? runs[r].n : limit;
			limit -= g->n;
		}
		seg_queue(s, g);
	}
}

/* ---------------------------------------------------- forked children */

/* A forked child's file is its parent's name and ".PID" (formats.md);
 * the first process recorded writes VALUES itself. */
#define FORK_DEPTH 32

typedef struct pfile {
	char path[PATH_MAX];
	vtrace vt;
	vt_streams st;
	bool open;
} pfile;

/* The parents' words a child's thread 0 starts from: the forking
 * thread's stream in each ancestor up to the fork, the first process's
 * first. */
typedef struct prefix {
	pfile f[FORK_DEPTH];
	size_t nf;
	const vt_stream *part[FORK_DEPTH];	/* root first */
	uint64_t words[FORK_DEPTH];
	size_t np;
	uint64_t total;
} prefix;

static int pfile_open(pfile *f, const char *path)
{
	char err[FMT_ERR_LEN];
	snprintf(f->path, sizeof f->path, "%s", path);
	if (vtrace_open(&f->vt, path, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", path, err);
		return -1;
	}
	f->open = true;
	if (header_matches(&f->vt.header, path) < 0)
		return -1;
	vtrace_streams_ref(&f->vt, &f->st);
	if (f->st.error[0] && !salvage) {
		fprintf(stderr, "skel: %s: %s: a parent's file is damaged or cut before the "
			"fork; nothing was replayed\n", path, f->st.error);
		return -1;
	}
	return 0;
}

static void pfile_close(pfile *f)
{
	if (!f->open)
		return;
	vtrace_streams_free(&f->st);
	vtrace_close(&f->vt);
	f->open = false;
}

static void prefix_free(prefix *p)
{
	for (size_t i = 0; i < p->nf; i++)
		pfile_close(&p->f[i]);
}

static bool fork_recorded(const vt_streams *st, const vt_process *c)
{
	for (size_t i = 0; i < st->nforks; i++)	/* pid 0: forked inside libc */
		if ((st->forks[i].f.pid == c->pid || !st->forks[i].f.pid) &&
		    st->forks[i].thread == c->thread && st->forks[i].f.word == c->word)
			return true;
	return false;
}

/* From the child's PROCESS chunk up through its ancestors' files (the
 * first process's is `root`, pid root_pid): 0, or -1 after saying why. */
static int prefix_load(prefix *p, const char *root, uint32_t root_pid, vt_process c)
{
	while (c.flags & VT_PROC_FORKED) {
		if (p->nf == FORK_DEPTH) {
			fprintf(stderr, "skel: %s: more than %d forks deep\n", root, FORK_DEPTH);
			return -1;
		}
		pfile *f = &p->f[p->nf++];
		char path[PATH_MAX];
		if (c.flags & VT_PROC_PARENT_EXECED)
			image_path(path, root, c.parent, VT_PROC_IMAGE(c.flags));
		else if (c.parent == root_pid)
			snprintf(path, sizeof path, "%s", root);
		else
			child_path(path, root, c.parent);
		if (pfile_open(f, path) < 0)
			return -1;
		const vt_stream *vs = vtrace_stream(&f->st, c.thread);
		if (!fork_recorded(&f->st, &c) || !vs || vs->nvalues < c.word) {
			fprintf(stderr, "skel: %s: the fork of process %u (thread %u, after its word %"
				PRIu64 ") is not in its parent's file %s (cut before the fork?): "
				"nothing was replayed\n", root, c.pid, c.thread, c.word, path);
			return -1;
		}
		memmove(p->part + 1, p->part, p->np * sizeof *p->part);
		memmove(p->words + 1, p->words, p->np * sizeof *p->words);
		p->part[0] = vs;
		p->words[0] = c.word;
		p->np++;
		p->total += c.word;
		if (c.thread != 0)	/* a thread born in the parent */
			break;
		c = f->st.process;
	}
	return 0;
}

/* Thread 0 of a child: the parents' words up to the fork come first,
 * replayed without output (fork_passed). */
static void stream_prefix(stream *s, const prefix *p, bool fork_in_skel)
{
	s->fork_in_skel = fork_in_skel;
	for (size_t i = 0; i < p->np; i++)
		stream_runs(s, p->part[i]->runs, p->part[i]->nruns, p->words[i]);
	if (!p->total)
		return;
	s->quiet = p->total;
	s->count_only = s->t.count_only;
	s->t.count_only = 1;
	/* the parent's words passed, the child's accesses start after the
	 * system call that made it, which may come before the skeleton reads
	 * another word (sk_fork_done) */
	s->t.await_fork = fork_in_skel;
}

/* Thread 0 of a child: the HANDLER events of its parents' streams before
 * their forks, then its own.  Each file counts its words from 0 (the
 * recorder starts a child's count at the fork); the replay counts from
 * the prefix's first, so each part's are moved by the words before it.
 * A handler that ran in a parent before the fork was not in the child's
 * replay: it read the handler's words as the interrupted code's (a
 * shell's SIGCHLD handler, for the children it forked after the first
 * one had exited). */
static void prefix_handlers(stream *s, const prefix *p, const vt_stream *vs)
{
	size_t n = vs->nhand, k = 0;
	uint64_t off = 0;
	for (size_t i = 0; i < p->np; i++)
		n += p->part[i]->nhand;
	vt_handler *v = malloc((n ? n : 1) * sizeof *v);
	if (!v) {
		fprintf(stderr, "skel: replay: out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < p->np; i++) {
		const vt_stream *x = p->part[i];
		int open = 0;	/* handlers begun before the fork, not returned */
		for (size_t j = 0; j < x->nhand; j++) {
			const vt_handler *h = &x->hand[j];
			bool ret = h->flags & VT_HANDLER_RETURN;
			/* a handler that returned without a word before the
			 * fork returns at the fork's word */
			if (h->word > p->words[i] || (h->word == p->words[i] && !(ret && open)))
				break;
			open += ret ? -1 : 1;
			v[k] = *h;
			v[k++].word += off;
		}
		off += p->words[i];
	}
	for (size_t j = 0; j < vs->nhand; j++) {
		v[k] = vs->hand[j];
		v[k++].word += off;
	}
	free(s->hdown);
	s->hd = s->hdown = v;
	s->hdcap = n;
	s->nhd = k;
}

/* A replay without --pid: the children the process forked, and how to
 * replay each (their files), or that one was not recorded. */
/* Threads still running when the process exited (no THREAD_END): the
 * recorder wrote their words up to then, but they ran on until the kernel
 * stopped them, somewhere between two values. */
static void say_running(const char *what, unsigned n, uint32_t first)
{
	if (n)
		fprintf(stderr, "skel: %s: %u thread%s (thread %u%s) still running when the "
			"process exited: %s trace ends at its last recorded value, and the "
			"accesses the skeleton computes after that value (up to the next) may "
			"not all have been made before the thread was stopped; one stopped in "
			"a loop without exit that records nothing (for (;;) over an array) has "
			"that loop's accesses missing\n", what, n,
			n == 1 ? "" : "s", first, n == 1 ? "" : " first", n == 1 ? "its" : "each one's");
}

static void report_running(const char *values, const vt_streams *st)
{
	unsigned n = 0;
	uint32_t first = 0;
	if (!st->complete)
		return;
	for (size_t k = 0; k < st->n; k++)
		if (!st->s[k].ended && !st->s[k].crashed && !n++)
			first = st->s[k].thread;
	say_running(values, n, first);
}

static void report_forks(const char *values, const vt_streams *st, bool quiet)
{
	for (size_t i = 0; i < st->nforks; i++) {
		const struct vt_fork_at *x = &st->forks[i];
		char path[PATH_MAX];
		uint32_t pid = x->f.pid ? x->f.pid
				       : vt_find_child(values, st->process.pid, x->thread, x->f.word);
		child_path(path, values, pid);
		bool there = pid && access(path, R_OK) == 0;
		if (there && !quiet)
			fprintf(stderr, "skel: %s: thread %u forked process %u after its word %" PRIu64
				": its trace is in %s (skel replay SKEL %s --pid %u)\n", values,
				x->thread, pid, x->f.word, path, values, pid);
		else if (!there && pid)
			fprintf(stderr, "skel: %s: thread %u forked process %u after its word %" PRIu64
				": %s is missing, what that process did is not traced\n", values,
				x->thread, pid, x->f.word, path);
		else if (!there)
			fprintf(stderr, "skel: %s: thread %u forked a process inside libc (daemon, "
				"forkpty) after its word %" PRIu64 ": no file of this run names it as "
				"its child, what that process did is not traced\n", values,
				x->thread, x->f.word);
	}
}

static uint32_t replay_pid;     /* --pid: the forked child to replay */

static bool libs_covered(const vt_objects *o)
{
	for (size_t i = 0; i < o->n; i++)
		if ((o->v[i].flags & VT_OBJ_COVERED) && o->v[i].index)
			return true;
	return false;
}

/* The prefix of the child whose streams are st (root: the first
 * process's file), or NULL after saying why. */
static prefix *child_prefix(const char *root, const vt_streams *st)
{
	if (!(st->process.flags & VT_PROC_FORKED) || st->process.pid != replay_pid) {
		fprintf(stderr, "skel: %s.%u: not the file of a forked child\n", root, replay_pid);
		return NULL;
	}
	prefix *p = calloc(1, sizeof *p);
	pfile rf = { 0 };
	if (!p || pfile_open(&rf, root) < 0) {
		pfile_close(&rf);
		free(p);
		return NULL;
	}
	uint32_t root_pid = rf.st.process.pid;
	pfile_close(&rf);
	if (prefix_load(p, root, root_pid, st->process) < 0) {
		prefix_free(p);
		free(p);
		return NULL;
	}
	return p;
}

static int replay_file(const char *values, FILE *out, bool quiet)
{
	char err[FMT_ERR_LEN], cpath[PATH_MAX];
	vtrace vt;
	prefix *pre = NULL;
	const char *root = values;
	if (replay_pid) {
		child_path(cpath, values, replay_pid);
		if (access(cpath, R_OK) != 0) {
			fprintf(stderr, "skel: %s: no value file for process %u (%s): it was not "
				"forked by the recorded program, or it did not record\n", values,
				replay_pid, cpath);
			return 2;
		}
		values = cpath;
	}
	if (vtrace_open(&vt, values, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", values, err);
		return 2;
	}
	uint64_t bias = vt.header.image_base;
	values_mapped = vt.mapped;
	if (header_matches(&vt.header, values) < 0) {
		vtrace_close(&vt);
		return 2;
	}
	/* the words are read in place, one segment per VALUES chunk; the
	 * whole file is read and checked before anything is replayed */
	vt_streams st;
	vtrace_streams_ref(&vt, &st);
	if (st.error[0] && !st.cut && !salvage) {
		if (vt_unsummed_seen)
			fprintf(stderr, "skel: %s: %s; nothing was replayed (skel record "
				"makes a file any replay takes)\n", values, st.error);
		else
			fprintf(stderr, "skel: %s: %s: the file is damaged, nothing was replayed "
				"(--salvage replays what comes before the damage)\n", values,
				st.error);
		vtrace_streams_free(&st);
		vtrace_close(&vt);
		return 4;
	}
	char rootbuf[PATH_MAX];
	if (!replay_pid) {	/* a child's or exec'd image's file given */
		root_of(rootbuf, values, &st.process);
		root = rootbuf;
	}
	if (replay_pid && (pre = child_prefix(root, &st)) == NULL) {
		vtrace_streams_free(&st);
		vtrace_close(&vt);
		return 2;
	}
	/* whole process: the fork's system call is in libc's skeleton */
	bool fork_in_skel = pre && pre->nf && libs_covered(&pre->f[pre->nf - 1].st.objects);
	/* a child's objects are its first ancestor's, and those it mapped */
	if ((pre && pre->nf && modules_bind(pre->f[pre->nf - 1].st.objects.v,
					    pre->f[pre->nf - 1].st.objects.n, root) < 0) ||
	    modules_bind(st.objects.v, st.objects.n, values) < 0 ||
	    (pre && pre->nf && modules_link(pre->f[pre->nf - 1].st.objects.links,
					    pre->f[pre->nf - 1].st.objects.nlinks, root) < 0) ||
	    modules_link(st.objects.links, st.objects.nlinks, values) < 0) {
		vtrace_streams_free(&st);
		vtrace_close(&vt);
		return 2;
	}
	int rc = 0;
	totals tot = { .count = { 0, 0 } };
	begin_output(out);
	sim_nthreads = st.n;
	for (size_t k = 0; k < st.n && track_heap; k++)	/* every thread's blocks */
		sym_events_add(st.s[k].thread, st.s[k].heap, st.s[k].nheap);
	for (size_t k = 0; k < st.n; k++) {
		vt_stream *vs = &st.s[k];
		stream *s = stream_new(vs->thread, bias, out, false);
		if (track_heap)
			heap_events_take(s, vs->heap, vs->nheap);
		if (reporting)
			stamps_take(s, vs->times, vs->ntimes);
		s->start = vs->start;
		s->nvalues = vs->nvalues;
		s->finished = true;
		s->crashed = vs->crashed;
		s->crash = vs->crash;
		s->thread_ended = vs->ended;
		s->parked = vs->end_flags & VT_ENDED_AT_EXIT;
		s->hd = vs->hand;
		s->nhd = vs->nhand;
		if (vs->thread == 0 && pre)
			prefix_handlers(s, pre, vs);
		s->t.crash_pc = crash_pc_in(s, &mods[0]);
		if (vs->thread == 0 && pre)
			stream_prefix(s, pre, fork_in_skel);
		stream_runs(s, vs->runs, vs->nruns, UINT64_MAX);
		seg_unpack(s, s->cur);
		s->t.w = s->t.begin = s->seg_w = s->cur->w;
		s->t.end = s->cur->w + s->cur->n;
		pf_ask(s);
		fflush(out);
		sink_begin(s);
		start_job(s);
		join_with_progress(s, quiet);
		pf_settle(NULL);
		if (s->how == 2)
			rc = 3;
		if (s->t.await_fork || s->quiet) {
			fprintf(stderr, "skel: %s: process %u: the replay never came to the system "
				"call that made the process (fork, vfork or clone: its number not "
				"known to the skeleton?); the process's trace is empty\n", values,
				replay_pid);
			rc = 3;
		}
		report_thread(out, s, &tot);
		stream_free(s);
	}
	report_total(out, &tot);
	if (reporting && report_write(out) < 0)
		rc = 2;
	bool crashed = false;
	for (size_t k = 0; k < st.n; k++)
		crashed |= st.s[k].crashed;
	if (st.error[0]) {
		fprintf(stderr, "skel: %s: %s (%s: the trace up to there was replayed)\n",
			values, st.error, st.cut ? "the file ends inside that chunk: cut short, or its "
			"length is damaged" : "--salvage");
		if (!rc)
			rc = 4;
	} else if (!report_exec(values, &st.exec, root, &st.process) && !st.complete &&
		   crashed) {
		if (!quiet)
			fprintf(stderr, "skel: %s: the recorded run did not exit cleanly (crash); "
				"the trace of what it did was replayed\n", values);
	} else if (st.exec.stage != VT_EXEC_CALLED && !st.complete) {
		/* no END and no CRASH: SIGKILL, or the file cut at a chunk's
		 * end; every thread's last buffer may be missing */
		fprintf(stderr, "skel: %s: the file ends before the recorded run did (the run was "
			"killed, or the file was cut): the last values of its threads may be "
			"missing; the trace up to there was replayed\n", values);
		if (!rc)
			rc = 4;
	}
	for (size_t k = 0; k < st.n; k++) {
		if (st.s[k].crashed && !quiet && st.s[k].crash.signal)
			fprintf(stderr, "skel: %s: thread %u died of signal %u at pc 0x%" PRIx64 "\n",
				values, st.s[k].thread, st.s[k].crash.signal, st.s[k].crash.pc);
		if (st.s[k].signalled)
			rc = report_signal(values, st.s[k].thread, &st.s[k].sig,
					   "the file was recorded by a skel that did not place "
					   "handlers in the stream");
	}
	if (st.complete && (st.end.how & VT_END_STRAY))
		rc = report_stray(values, rc);
	report_running(values, &st);
	report_forks(root, &st, quiet);
	report_spawns(values, st.nspawns, &st.spawn);
	if (pre) {
		prefix_free(pre);
		free(pre);
	}
	vtrace_streams_free(&st);
	vtrace_close(&vt);
	return rc;
}

/* ------------------------------------------------------------- online */

static int in_fd;
static uint64_t in_off;
/* --tee FILE (skel run --keep-values): the stream as it came, a value
 * file skel replay reads */
static const char *tee_path;
static FILE *tee_f;

static void tee(const void *p, size_t n)
{
	if (tee_f && n && fwrite(p, 1, n, tee_f) != n) {
		fprintf(stderr, "skel: %s: write error; the value stream is not kept\n", tee_path);
		fclose(tee_f);
		tee_f = NULL;
	}
}

/* Reads n bytes; returns how many arrived before the end of the input. */
static size_t read_full(void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(in_fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	in_off += got;
	tee(p, got);
	return got;
}

/* After an error: keep reading so that the program never blocks on (or
 * dies of) a pipe nobody reads. */
static void drain(void)
{
	char buf[65536];
	for (;;) {
		ssize_t r = read(in_fd, buf, sizeof buf);
		if (r == 0 || (r < 0 && errno != EINTR))
			break;
		tee(buf, r > 0 ? (size_t)r : 0);
	}
}

typedef struct streams {
	stream **a;
	size_t n, cap;
} streams;

/* A thread's trace waits here until the threads before it are written:
 * in $TMPDIR (tmpfile() would take /tmp whatever the user said), gone
 * once closed. */
static FILE *spill_file(void)
{
	const char *d = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/skel-spill-XXXXXX", d && *d ? d : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	FILE *f = fdopen(fd, "w+");
	if (!f)
		close(fd);
	return f;
}

static stream *stream_of(const streams *v, uint32_t thread)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->a[i]->thread == thread)
			return v->a[i];
	return NULL;
}

/* The thread's stream, opened (its replay started) on first sight. */
static stream *find_stream(streams *v, uint32_t thread, uint64_t bias, FILE *out,
			   const vt_thread_start *start, size_t start_bytes)
{
	stream *old = stream_of(v, thread);
	if (old)
		return old;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->a = realloc(v->a, v->cap * sizeof *v->a);
	}
	bool spill = v->n > 0;
	FILE *f = spill ? spill_file() : out;
	if (!f) {
		const char *d = getenv("TMPDIR");
		fprintf(stderr, "skel: replay: cannot create a temporary file in %s: %s\n",
			d && *d ? d : "/tmp", strerror(errno));
		exit(2);
	}
	stream *s = stream_new(thread, bias, f, spill);
	if (start)	/* a 24-byte payload before fsbase (VT_THREAD_START_OLD) */
		memcpy(&s->start, start, start_bytes < sizeof s->start ? start_bytes
									 : sizeof s->start);
	v->a[v->n++] = s;
	sink_begin(s);
	start_job(s);
	return s;
}

/* Under mu. */
static void queue_push(stream *s, seg *g)
{
	if (s->qt)
		s->qt->next = g;
	else
		s->qh = g;
	s->qt = g;
}

/* A HANDLER event in its place among the thread's words (refill takes
 * it); the payload p becomes the queue's. */
static void handler_queue(stream *s, void *p)
{
	seg *g = calloc(1, sizeof *g);
	if (!g) {
		fprintf(stderr, "skel: replay: out of memory\n");
		exit(2);
	}
	g->hand = p;
	stuck_note(s, p);
	queue_push(s, g);
}

static int replay_fd(FILE *out, bool quiet)
{
	const char *what = "value stream";
	char err[FMT_ERR_LEN] = "";
	vt_header h;
	size_t got = read_full(&h, sizeof h);
	if (got == 0) {
		fprintf(stderr, "skel: %s: no values arrived (the program did not run under the "
			"recorder)\n", what);
		return 2;
	}
	vtrace vt;
	if (got < sizeof h || vtrace_open_mem(&vt, &h, sizeof h, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", what, err[0] ? err : "truncated header");
		drain();
		return 2;
	}
	if (header_matches(&h, what) < 0) {
		drain();
		return 2;
	}
	uint64_t bias = h.image_base;
	streams v = { 0 };
	bool complete = false, stray = false;
	vt_exec exec = { 0 }, spawn = { 0 };
	uint32_t nspawns = 0;
	begin_output(out);
	fflush(out);
	for (;;) {
		vt_chunk_header c;
		uint64_t off = in_off;
		got = read_full(&c, sizeof c);
		if (got == 0)
			break;
		if (got < sizeof c) {
			snprintf(err, sizeof err, "truncated chunk at offset %" PRIu64, off);
			break;
		}
		if (c.magic != VT_CHUNK_MAGIC) {
			snprintf(err, sizeof err, "bad chunk magic at offset %" PRIu64, off);
			break;
		}
		if (c.payload_bytes > ((uint64_t)1 << 30)) {
			snprintf(err, sizeof err, "bad chunk at offset %" PRIu64 ": type %u, %" PRIu64
				 " payload bytes", off, c.type, c.payload_bytes);
			break;
		}
		void *p = malloc(c.payload_bytes ? c.payload_bytes : 1);
		if (!p) {
			snprintf(err, sizeof err, "out of memory at offset %" PRIu64, off);
			break;
		}
		if (read_full(p, c.payload_bytes) < c.payload_bytes) {
			snprintf(err, sizeof err, "truncated chunk at offset %" PRIu64
				 " (payload of %" PRIu64 " bytes)", off, c.payload_bytes);
			free(p);
			break;
		}
		if (vt_chunk_verify(&c, p, off, err) < 0) {
			free(p);
			break;
		}
		if (vt_chunk_global(c.type)) {
			complete |= c.type == VT_END;
			if (c.type == VT_END) {
				vt_end en;
				memcpy(&en, p, sizeof en);
				stray |= (en.how & VT_END_STRAY) != 0;
			}
			if (c.type == VT_EXEC) {
				vt_exec e;
				memcpy(&e, p, sizeof e);
				e.path[sizeof e.path - 1] = 0;
				if (e.stage != VT_EXEC_SPAWNED)
					exec = e;
				else if (!nspawns++)
					spawn = e;
			}
			/* before any word of those objects: the skeletons'
			 * threads see them bound (the queue's mutex orders) */
			if (c.type == VT_OBJECTS &&
			    modules_bind((const vt_object *)((const uint8_t *)p + 8),
					 (c.payload_bytes - 8) / sizeof(vt_object), what) < 0) {
				free(p);
				snprintf(err, sizeof err, "cannot replay the objects recorded");
				break;
			}
			if (c.type == VT_LINKS) {	/* kept: the modules point into it */
				if (modules_link(p, c.payload_bytes / 8, what) < 0) {
					free(p);
					snprintf(err, sizeof err, "cannot replay the links recorded");
					break;
				}
				continue;
			}
			free(p);
			continue;
		}
		/* a thread's chunks in their order; its stream (and the thread
		 * replaying it) only from a valid START on */
		stream *s = stream_of(&v, c.thread);
		vt_order fresh = { 0 };
		if (vt_order_check(s ? &s->order : &fresh, &c, p, off, err) < 0) {
			free(p);
			break;
		}
		if (!s) {
			s = find_stream(&v, c.thread, bias, out, p, c.payload_bytes);
			s->order = fresh;
		}
		uint64_t nw = 0;
		bool values = c.type == VT_VALUES || c.type == VT_ZVALUES;
		const uint8_t *vp = p;	/* its VALUES payload */
		size_t vbytes = c.payload_bytes;
		if (c.type == VT_ZVALUES &&
		    !(vp = vt_unz_payload(&s->zin, p, &vbytes))) {
			snprintf(err, sizeof err, "thread %u: a ZVALUES chunk does not "
				 "decompress", c.thread);
			free(p);
			break;
		}
		if (values)
			memcpy(&nw, (uint8_t *)p + 8, 8);
		if (!values || !nw) {
			pthread_mutex_lock(&mu);
			if (c.type == VT_THREAD_START) {
				memset(&s->start, 0, sizeof s->start);
				memcpy(&s->start, p, c.payload_bytes);
			}
			if (c.type == VT_THREAD_END) {
				s->finished = true;
				s->thread_ended = true;
				uint64_t fl = 0;
				if (c.payload_bytes >= 16)
					memcpy(&fl, (uint8_t *)p + 8, 8);
				if (fl & VT_ENDED_IN_DESTRUCTOR)
					atomic_fetch_add(&nthreads_short, 1);
				s->parked = fl & VT_ENDED_AT_EXIT;
			}
			if (c.type == VT_SIGNAL && !s->signalled) {
				/* an older recorder's: the words after it are
				 * the handler's, the thread's replay ends here */
				s->signalled = true;
				memcpy(&s->sig, p, sizeof s->sig);
				s->finished = true;
			}
			if (c.type == VT_HANDLER && !s->dead && !s->finished) {
				handler_queue(s, p);
				p = NULL;
			}
			if (c.type == VT_FORK && !s->forks++)
				memcpy(&s->fork, p, sizeof s->fork);
			if (c.type == VT_TIME && reporting)
				stamps_take(s, p, 1);
			if (c.type == VT_HEAP && track_heap) {
				size_t n = c.payload_bytes / sizeof(vt_heap_event);
				sym_events_add(c.thread, p, n);
				heap_events_take(s, p, n);
			}
			if (c.type == VT_CRASH) {
				s->crashed = true;
				memcpy(&s->crash, p, sizeof s->crash);
				s->finished = true;
				if (s->crash.pc && s->crash.object == 0)
					__atomic_store_n(&s->t.crash_pc, s->crash.pc, __ATOMIC_RELAXED);
			}
			pthread_cond_broadcast(&more);
			pthread_mutex_unlock(&mu);
			free(p);
			continue;
		}
		seg *g = calloc(1, sizeof *g);
		uint64_t *w = malloc((nw + VT_UNPACK_SLACK) * 8);
		if (!g || !w) {
			fprintf(stderr, "skel: replay: out of memory\n");
			exit(2);
		}
		if (vt_values_unpack_fast(vt_simd(), vp, vbytes, w, nw)) {
			snprintf(err, sizeof err, "thread %u: a VALUES chunk's words do not "
				 "unpack", c.thread);
			free(w);
			free(g);
			free(p);
			break;
		}
		free(p);
		g->w = w;
		g->n = nw;
		g->owned = w;
		pthread_mutex_lock(&mu);
		s->nvalues += g->n;
		if (s->dead || s->finished) {
			pthread_mutex_unlock(&mu);
			free(w);
			free(g);
			continue;
		}
		pending += g->n * 8;
		if (pending > pending_peak)
			pending_peak = pending;
		queue_push(s, g);
		s->qwords++;
		pthread_cond_broadcast(&more);
		/* the thread's last segment waits for the next (words_ready):
		 * the reader waits only for a thread whose replay can go on,
		 * or the last segments of many threads would hold it for ever */
		if (pending > PENDING_MAX && s->qwords >= 2)
			reader_stalls++;
		while (pending > PENDING_MAX && s->qwords >= 2 && !s->dead)
			pthread_cond_wait(&space, &mu);
		pthread_mutex_unlock(&mu);
	}
	if (err[0])
		drain();
	pthread_mutex_lock(&mu);
	/* threads still running when the process exited (report_running) */
	unsigned nrunning = 0;
	uint32_t first_running = 0;
	for (size_t i = 0; i < v.n; i++)
		if (complete && !v.a[i]->finished && !v.a[i]->dead && !nrunning++)
			first_running = v.a[i]->thread;
	say_running("run", nrunning, first_running);
	for (size_t i = 0; i < v.n; i++)
		v.a[i]->finished = true;
	pthread_cond_broadcast(&more);
	pthread_mutex_unlock(&mu);

	int rc = 0;
	totals tot = { .count = { 0, 0 } };
	sim_nthreads = v.n;
	for (size_t i = 0; i < v.n; i++) {
		stream *s = v.a[i];
		pthread_join(s->th, NULL);
		if (s->how == 2)
			rc = 3;
	}
	for (size_t i = 0; i < v.n; i++) {
		stream *s = v.a[i];
		if (s->spill) {
			char buf[65536];
			size_t n;
			rewind(s->f);
			while ((n = fread(buf, 1, sizeof buf, s->f)) > 0)
				if (fwrite(buf, 1, n, out) != n) {
					fprintf(stderr, "skel: %s: write error\n", out_path);
					exit(2);
				}
			fclose(s->f);
		}
		report_thread(out, s, &tot);
	}
	report_total(out, &tot);
	if (reporting && report_write(out) < 0)
		rc = 2;
	if (stats)
		fprintf(stderr, "skel: stats: online: queue peak %zu KiB of %zu KiB; the program "
			"waited %" PRIu64 " times for the replayer, the replayer %" PRIu64
			" times for the program\n", pending_peak >> 10, PENDING_MAX >> 10,
			reader_stalls, replay_waits);
	if (err[0]) {
		fprintf(stderr, "skel: %s: %s (the trace up to there was replayed)\n", what, err);
		if (!rc)
			rc = 4;
	} else if (!report_exec(what, &exec, NULL, NULL) && !complete) {
		/* quiet (skel run): the driver knows whether the program was
		 * killed, and says so; status 5 tells it the stream has no end */
		if (!quiet)
			fprintf(stderr, "skel: %s: the run did not exit cleanly (crash or kill); "
				"the trace of what it did was replayed\n", what);
		else if (!rc)
			rc = 5;
	}
	for (size_t i = 0; i < v.n; i++) {
		stream *s = v.a[i];
		if (s->crashed && !quiet && s->crash.signal)
			fprintf(stderr, "skel: %s: thread %u died of signal %u at pc 0x%" PRIx64 "\n",
				what, s->thread, s->crash.signal, s->crash.pc);
		if (s->signalled)
			rc = report_signal(what, s->thread, &s->sig,
					   "the recorder did not place handlers in the stream");
		if (s->forks)
			report_fork(what, s->thread, s->forks, &s->fork);
	}
	report_spawns(what, nspawns, &spawn);
	if (stray)
		rc = report_stray(what, rc);
	for (size_t i = 0; i < v.n; i++)
		stream_free(v.a[i]);
	free(v.a);
	return rc;
}

/* --sim-out: the costs per instruction, and the objects that tell which
 * instruction is whose (the driver names files, functions and lines). */
static int write_sim_pcs(void)
{
	FILE *f = fopen(sim_out, "w");
	if (!f) {
		fprintf(stderr, "skel: %s: cannot write\n", sim_out);
		return -1;
	}
	int rc = sim_write_pcs(simu, f);
	for (size_t i = 0; i < objs.n; i++)
		fprintf(f, "object %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n", objs.v[i].lo,
			objs.v[i].hi, objs.v[i].bias, objs.v[i].path);
	if (fclose(f) != 0 || rc < 0) {
		fprintf(stderr, "skel: %s: write error\n", sim_out);
		return -1;
	}
	return 0;
}

/* The simulator's options; 1 when argv[*i] was one, -1 when wrong. */
static int sim_option(int argc, char **argv, int *i, const char **kind, sim_config *c)
{
	const char *a = argv[*i];
	sim_level *l = !strncmp(a, "--I1=", 5) ? &c->i1 : !strncmp(a, "--D1=", 5) ? &c->d1
		     : !strncmp(a, "--LL=", 5) ? &c->ll : NULL;
	char err[SIM_ERR_LEN];
	if (l && (sim_parse_level(a + 5, l, err) < 0 || sim_check_level(a + 2, l, err) < 0)) {
		fprintf(stderr, "skel: %.4s: %s\n", a + 2, err);
		return -1;
	}
	if (l)
		return 1;
	if (!strcmp(a, "--fetches")) {
		fetches = true;
		return 1;
	}
	if (!strcmp(a, "--l1-per-thread")) {
		l1_per_thread = true;
		return 1;
	}
	if (!strcmp(a, "--sim") && *i + 1 < argc) {
		*kind = argv[++*i];
		return 1;
	}
	if (!strcmp(a, "--sim-out") && *i + 1 < argc) {
		sim_out = argv[++*i];
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *values = NULL, *fmt = "text", *sim_kind = NULL;
	bool quiet = false;
	sim_config scfg;
	sim_default_config(&scfg);
	for (int i = 1, so; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			fmt = argv[++i];
		else if (!strcmp(argv[i], "--fd") && i + 1 < argc) {
			online = true;
			in_fd = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--tee") && i + 1 < argc)
			tee_path = argv[++i];
		else if (!strcmp(argv[i], "--quiet"))
			quiet = true;
		else if (!strcmp(argv[i], "--salvage"))
			salvage = true;
		else if (!strcmp(argv[i], "--unsummed"))	/* skel check's own file */
			vt_unsummed_ok = 1;
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			replay_pid = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--stats"))
			stats = true;
		else if (!strcmp(argv[i], "--symbolize"))
			symbolize = true;
		else if (!strcmp(argv[i], "--report"))
			reporting = true;
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv_dir = argv[++i];
		else if (!strcmp(argv[i], "--heat") && i + 1 < argc)
			heat_out = argv[++i];
		else if (!strcmp(argv[i], "--exe") && i + 1 < argc)
			exe_path = argv[++i];
		else if (!strcmp(argv[i], "--roi-markers"))
			roi_markers = true;
		else if (!strcmp(argv[i], "--roi") && i + 1 < argc) {
			if (nroi == ROI_MAX) {
				fprintf(stderr, "skel: replay: --roi: at most %d routines\n", ROI_MAX);
				return 2;
			}
			roi_names[nroi++] = argv[++i];
		} else if ((so = sim_option(argc, argv, &i, &sim_kind, &scfg)) < 0)
			return 2;
		else if (!so)
			values = argv[i];
	}
	if (sim_kind && strcmp(sim_kind, "cache") && strcmp(sim_kind, "reuse")) {
		fprintf(stderr, "skel: --sim %s: the simulations are: cache, reuse\n", sim_kind);
		return 2;
	}
	int f = -1;
	for (int k = 0; k < (int)(sizeof fmt_names / sizeof *fmt_names); k++)
		if (!strcmp(fmt, fmt_names[k]))
			f = k;
	if ((!values && !online) || f < 0) {
		fprintf(stderr, "usage: replayer VALUES|--fd N [--tee FILE] [-o TRACE] "
			"[--format text|bin|lackey|din|csv|count] [--stats] [--quiet] [--fetches] "
			"[--sim cache|reuse [--sim-out FILE] [--I1=S,A,L] [--D1=S,A,L] [--LL=S,A,L] "
			"[--l1-per-thread]] [--symbolize [--exe APP]] [--roi FUNC]... [--roi-markers] "
			"[--report [--csv DIR] [--heat FILE]]\n");
		return 2;
	}
	format = sim_kind ? F_SIM : (enum fmt)f;
	static const writer_fn writers[] = { w_text, w_bin, w_lackey, w_din, w_csv, w_none, w_sim };
	writer = writers[format];
	if (symbolize && format != F_TEXT && format != F_CSV) {
		fprintf(stderr, "skel: replay: --symbolize: with the text and csv formats only\n");
		return 2;
	}
	if (symbolize)
		writer = format == F_TEXT ? w_text_sym : w_csv_sym;
	if (reporting && (symbolize || sim_kind || stats)) {
		fprintf(stderr, "skel: replay: --report: not with --symbolize, --sim or --stats\n");
		return 2;
	}
	if (reporting) {
		format = F_COUNT;
		writer = w_none;
		report_setup(&(rep_config){ roi_names, nroi, roi_markers, csv_dir, heat_out });
	}
	if (approximate() && (format == F_TEXT || format == F_CSV)) {
		marked_writer = writer;
		writer = w_marked;
	}
	track_heap = symbolize || reporting;
	if (replay_pid && (track_heap || online)) {
		fprintf(stderr, "skel: replay: --pid: not with --symbolize, --report or online\n");
		return 2;
	}
	static sim the_sim;
	char serr[SIM_ERR_LEN];
	bool reuse = sim_kind && !strcmp(sim_kind, "reuse");
	if (sim_kind && (reuse ? sim_init_reuse(&the_sim, &scfg, serr)
			       : sim_init(&the_sim, &scfg, sim_out != NULL, serr)) < 0) {
		fprintf(stderr, "skel: sim: %s\n", serr);
		return 2;
	}
	if (sim_kind)
		simu = &the_sim;
	sim_direct = simu && !reuse && !online;
	FILE *out = strcmp(out_path, "-") ? fopen(out_path, "w") : stdout;
	if (!out) {
		fprintf(stderr, "skel: %s: cannot write\n", out_path);
		if (online)
			drain();
		return 2;
	}
	modules_load();
	/* runs need the bias to keep lines: a multiple of the page */
	if (simu && !simu->per_pc && !simu->reuse && simu->cfg.i1.line <= 4096)
		for (size_t k = 0; k < nmods; k++)
			if (mods[k].nblocks)
				fetch_runs_of(&mods[k], simu->i1.line_bits);
	if (roi_setup() < 0) {
		if (online)
			drain();
		return 2;
	}
	if (fetches && &sk_nsliced && sk_nsliced)
		fprintf(stderr, "skel: replay: note: the instruction fetches of %u loops without "
			"data accesses are not in this trace: they are not replayed (skel gen "
			"--no-slice keeps them)\n", sk_nsliced);
	if (fetches && &sk_nelided && sk_nelided)
		fprintf(stderr, "skel: replay: note: the instruction fetches between %u conditional "
			"jumps and where their two ways meet are not in this trace: they are not "
			"replayed (skel gen --no-slice keeps them)\n", sk_nelided);
	if (online && tee_path && !(tee_f = fopen(tee_path, "w"))) {
		fprintf(stderr, "skel: %s: %s\n", tee_path, strerror(errno));
		drain();
		return 2;
	}
	int rc = online ? replay_fd(out, quiet) : replay_file(values, out, quiet);
	if (tee_f && fclose(tee_f) != 0) {
		fprintf(stderr, "skel: %s: write error\n", tee_path);
		rc = rc ? rc : 2;
	}
	report_uncovered(online ? "run" : values);
	if (simu) {
		sim_report(simu, out, fetches);
		if (sim_out && !reuse && write_sim_pcs() < 0)
			rc = 2;
		sim_free(simu);
	}
	if (fflush(out) != 0) {
		fprintf(stderr, "skel: %s: write error\n", out_path);
		rc = 2;
	}
	if (out != stdout)
		fclose(out);
	sym_free();
	return rc;
}
