/* interleave.h — matching one sequence of accesses against several
 * threads' streams, as an interleaving of them.
 *
 * valgrind lackey logs a multithreaded process's accesses as one
 * sequence without thread ids; the replay gives one stream per thread.
 * `skel check` passes when the sequence is an interleaving of the
 * streams: each access of the sequence is the next access of some thread,
 * and no thread has accesses left at the end.  Several threads' next
 * access can be the same (threads running the same code on shared data:
 * a lock, malloc's arena; a thread starting on the stack of one that
 * ended), and the first choice can lead to a mismatch later: the search
 * then comes back to the latest such choice and tries the next thread. */
#ifndef SKEL_INTERLEAVE_H
#define SKEL_INTERLEAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct il_acc {
	uint64_t pc, addr;
	uint32_t size;
	uint8_t w;
} il_acc;

typedef struct il_thread {
	const il_acc *a;
	size_t n;
	size_t pos;		/* out: how far it was matched */
} il_thread;

/* A replayed access the sequence may lack (valgrind drops some); tried
 * only when no thread's next access is the sequence's. */
typedef bool (*il_skippable)(const il_acc *a, void *ctx);

typedef struct il_result {
	bool matched;
	/* not matched: where the attempt that went furthest stopped.  far <
	 * the sequence's length: its access far had no thread; thread is the
	 * one that made the access before (ended: it had none left, else
	 * next is its next access).  far == the length: thread had extra
	 * accesses left, next the first. */
	size_t far, thread, extra;
	bool ended;
	il_acc next;
	size_t skipped;		/* matched: replayed accesses skipped */
	size_t backtracks;	/* choices taken again */
} il_result;

void il_match(const il_acc *seq, size_t n, il_thread *threads, size_t nthreads,
	      il_skippable skip, void *ctx, il_result *r);

#endif
