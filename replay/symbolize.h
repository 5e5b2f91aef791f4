/* symbolize.h — the object an address belongs to (--symbolize): a symbol
 * of a traced object's static data, a heap block, a thread's stack or
 * TLS block.  Part of the replayer's runtime (replayer.c); reads ELF
 * files itself (no libelf in a replayer).
 *
 * Names, as written into the text and csv formats (docs/formats.md):
 *   SYMBOL+0xOFF         static data of the executable (symbol tables)
 *   .SECTION+0xOFF       ... in no symbol: its section
 *   OBJ!SYMBOL+0xOFF     the same in a shared object (OBJ: file name)
 *   heap#N+0xOFF         the N-th allocation of the run (HEAP events)
 *   stack#T, tls#T       thread T's stack, its static TLS block and TCB
 *   ?                    none of these
 *
 * Thread safety: objects and events may be added by one thread while
 * others look up (skel run); a lock covers the tables. */
#ifndef SKEL_REPLAY_SYMBOLIZE_H
#define SKEL_REPLAY_SYMBOLIZE_H

#include "replay/format.h"

/* A thread's view: heap blocks are looked up as of its last event
 * applied (`seq`), so that a block freed and its address reused by
 * another allocation later in the run is told apart. */
typedef struct sym_view {
	uint32_t thread;
	uint64_t seq;		/* seq of the thread's last HEAP event passed */
	uint64_t lo, hi;	/* the last object found: [lo, hi) */
	uint64_t base;		/* its offsets count from here (0: none) */
	uint64_t at_seq;	/* seq it was found at (heap blocks only) */
	bool heap;
	uint64_t site;		/* heap block: its allocation's call site */
	uint32_t heap_n;	/* heap block: its N (name heap#N) */
	char name[160];		/* its name up to the offset (not a heap
				   block's: sym_put makes that) */
} sym_view;

/* Adds the static data of an ELF file loaded with `bias` (runtime =
 * link-time + bias); `main`: the executable (its names unprefixed).
 * `id_hex`, when not NULL: the identity the file must have (build-id or
 * content hash, as the skeleton names it).  0, or -1 with err. */
int sym_object_add(const char *path, uint64_t bias, bool main, const char *id_hex,
		   char err[FMT_ERR_LEN]);
/* Whether any object was added. */
bool sym_have_objects(void);
/* HEAP events of `thread`: blocks and regions, known from now on
 * (their seq says when they live). */
void sym_events_add(uint32_t thread, const vt_heap_event *e, size_t n);
/* Writes the name of the object at addr (with its offset) at p; returns
 * the end.  At most SYM_NAME_MAX bytes. */
#define SYM_NAME_MAX 192
char *sym_put(sym_view *v, uint64_t addr, char *p);
/* The object at addr into v (name, lo, hi, base, heap, site; the last
 * one found is kept: a hit costs two compares).  false: none. */
bool sym_find(sym_view *v, uint64_t addr);
/* The static data or code at addr as SYMBOL+0xOFF (.SECTION+0xOFF;
 * OBJ!... in a shared object), else 0xADDR: an allocation site. */
void sym_code_name(uint64_t addr, char *out, size_t n);
/* The address ranges the HEAP events change, in the order they were
 * added (sym_events_add), each with its event's seq (0: a thread's stack
 * or TLS region, which holds from when it is added): a cache of lookups
 * need only forget what lies in them (report.c). */
typedef struct sym_chg {
	uint64_t seq, lo, hi;
} sym_chg;
/* Up to max of them from the from-th on into out; how many. */
size_t sym_changes(size_t from, sym_chg *out, size_t max);
void sym_free(void);
/* The replayer's growing arrays: p with room for `need` elements of
 * `size` bytes (*cap doubled as needed); out of memory ends the replay. */
void *sym_grow(void *p, size_t *cap, size_t need, size_t size);

#endif
