/* skel_rt.h — what a generated skeleton needs at replay time.
 *
 * A skeleton is C: one function per routine of the traced program, with the
 * routine's shape.  It reads recorded values with IN(), emits accesses with
 * OUT(pc, kind, size, addr) and, at calls, consumes the control words the
 * recorder wrote (routine entries, "returned" after external calls).  The
 * replayer (replay/replayer.c) provides the definitions declared here and
 * calls sk_dispatch() on each thread's first word. */
#ifndef SKEL_RT_H
#define SKEL_RT_H

#include <stdint.h>

/* Control words.  An entry probe at a routine's first instruction records
 * SK_ENTRY(id); a probe at the return site of a call that may run code we
 * do not analyze (library calls, indirect calls) records SK_RETURNED. */
#define SK_ENTRY_BASE 0xe7e7000000000000ull
#define SK_ENTRY(id) (SK_ENTRY_BASE + (uint64_t)(id))
#define SK_RETURNED 0xe7e6ffffffffffffull
/* At the header of a loop without exit that records nothing
 * (skelgen.c, plan_ticks): one per iteration. */
#define SK_TICK (SK_RETURNED - 0x8000u)
/* In a whole-process recording, the entry words of object k (its section
 * of the patch, format.h) carry k in bits 32..47. */
#define SK_ENTRY_OBJECT(w) ((uint32_t)((w) >> 32) & 0xffffu)
#define SK_IS_ENTRY(w) (((w) & 0xffff000000000000ull) == SK_ENTRY_BASE)

enum { SK_R = 0, SK_W = 1 };

typedef struct sk_thread sk_thread;
typedef struct sk_module sk_module;

struct sk_thread {
	const uint64_t *w, *end;    /* the stream's words not yet read */
	const uint64_t *begin;
	uint64_t lastsp;            /* rsp at the previous PATCH_DSP */
	uint64_t pend;              /* a control word peeked at (has_pend) */
	int has_pend;
	uint64_t bias;              /* load bias of the object whose skeleton
	                             * runs: runtime = link-time + bias */
	uint64_t mbits;             /* its number in entry words (bits 32..47) */
	const sk_module *mod;       /* the replayer's view of it */
	uint64_t count[2];          /* accesses by kind */
	uint64_t bytes[2];
	int count_only;             /* sink: counting, no output */
	void *sink;                 /* replayer's output state */
	uint32_t thread;
	uint32_t depth;             /* skeleton call depth (for reports) */
	uint64_t crash_pc;          /* link-time pc the thread died at, in the
	                             * running object, or ~0 */
	uint64_t dslot[16];         /* PATCH_DREG/DADDR (PATCH_DSLOTS); after
	                             * the fields above, so modules compiled
	                             * before it still fit */
	/* regions of interest (--roi, --roi-markers), after dslot for the
	 * same reason: */
	const unsigned char *roi;   /* the running module's SK_ROI_* per
	                             * routine id, NULL: none marked */
	int roi_on;                 /* accesses are kept */
	uint32_t roi_depth;         /* frames of --roi routines active */
	uint32_t roi_marks;         /* skel_roi_begin calls not ended */
	struct sk_resume *resume;   /* innermost live setjmp (SK_SETJMP) */
	uint64_t roi_skipped;       /* accesses outside the regions: with the
	                             * kept ones, the report's clock */
	struct sk_rec *batch;       /* the report's accesses not handed over
	                             * (sk_batch_add), or NULL */
	uint32_t nbatch;
	/* last, for the same reason: the approximate mode's mark of the
	 * access being emitted (SK_EXACT, SK_ATTRIBUTED, SK_ABSENT) */
	int mark;
	uint64_t nmarked[2];        /* attributed, absent accesses kept */
	/* last: the name the next skel_roi_begin passes, when the skeleton
	 * knows it (SK_ROI_NAME before the call), else NULL */
	const char *roi_name;
	/* last: a forked child's thread 0, its parent's words passed: its
	 * own accesses start after the system call that made it (FORK_DONE) */
	int await_fork;
	/* last: the thread pointer (fs base) of the thread, for fs-relative
	 * addresses (vt_thread_start) */
	uint64_t fsbase;
	/* last: rsp a linked call passes to its callee's entry (sk_plt,
	 * ESP), 0 when none is pending */
	uint64_t qsp;
};

/* skel report takes the accesses in batches, stored here without a call
 * per access; a full batch goes to the replayer (sk_batch_full). */
typedef struct sk_rec {
	uint64_t addr;
	uint32_t size, kind;
} sk_rec;
#define SK_BATCH 2048
void sk_batch_full(sk_thread *t);

static inline void sk_batch_add(sk_thread *t, int kind, unsigned size, uint64_t addr)
{
	sk_rec *r = t->batch + t->nbatch;
	r->addr = addr;
	r->size = size;
	r->kind = (uint32_t)kind;
	if (++t->nbatch == SK_BATCH)
		sk_batch_full(t);
}

/* setjmp and longjmp.  The return address of a call to setjmp is a
 * routine (R) of its own, whose entry probe records its entry word and
 * then rsp each time control gets there: setjmp's first return and every
 * longjmp to it.  The calling routine's skeleton keeps an sk_resume for
 * it in its frame and calls r_R; a longjmp shows as R's entry word where
 * the skeleton waits for a control word (the longjmp's external call):
 * sk_dispatch finds the sk_resume with that word and rsp and unwinds the
 * skeleton's own frames to it, which calls r_R again. */
typedef struct sk_resume {
	void *jb[5];                /* __builtin_setjmp's buffer */
	uint64_t word;              /* R's entry word (object bits included) */
	/* a routine with C++ landing pads (sk_catch_push): their entry
	 * words, less object bits; pad: the index of the one the call the
	 * frame is in would land on (set before each call), SK_NO_PAD when
	 * it has none or the frame is not in a call.  A pad's word lands in
	 * the innermost frame whose pad it is, whatever the rsp (the
	 * unwinder picks the innermost frame with a pad for its call site,
	 * as the search from t->resume up does); landed: its index */
	const uint64_t *words;
	uint32_t nwords, landed, pad;
	sk_thread *thr;
	uint64_t sp;                /* the program's rsp at R */
	struct sk_resume *up;
	const sk_module *mod;       /* the thread's state to restore */
	uint64_t bias, mbits, crash_pc;
	uint32_t depth;
	const unsigned char *roi;   /* the region state (an unwind skips the
	                             * frames' cleanups) */
	uint32_t roi_depth;
	int roi_on;
} sk_resume;

/* Out of words (sk_in's slow path).  Online (skel run) the replayer waits
 * for the next words, points t->w/t->end at them and returns the first
 * (consumed).  When there are none and never will be (the program stopped
 * here: exit, crash or kill), it does not return: unwinds to the replayer. */
uint64_t sk_end_of_stream(sk_thread *t);
/* The same for sk_peek: returns the next word without consuming it. */
uint64_t sk_peek_more(sk_thread *t);
/* At the header of a loop without exits (for (;;) { ... }): a thread the
 * process's exit (another thread's exit(), a signal) killed in it leaves
 * no word its replay would stop at when the loop records none, so with
 * none left in its stream the thread's replay ends here, as it would at
 * its next word (sk_peek_more does not return then).  The iterations it
 * made there are not in the trace: the replay says so (sk_idle). */
void sk_idle(sk_thread *t);
#define SK_IDLE() do { if (__builtin_expect(t->w == t->end, 0)) sk_idle(t); } while (0)
/* The same at the header of such a loop with a tick (SK_TICK, one word
 * per iteration, skelgen.c plan_ticks): a thread that ends there made
 * every iteration the trace has, and maybe the start of one more. */
void sk_idle_tick(sk_thread *t);
#define SK_TICK_AT(pc) do { if (__builtin_expect(t->w == t->end, 0)) sk_idle_tick(t); \
		sk_expect(t, pc, SK_TICK); } while (0)
/* A word that is not the one the skeleton expects: the stream and the
 * skeleton disagree.  Reports routine and pc, does not return. */
void sk_desync(sk_thread *t, uint64_t pc, const char *what, uint64_t got);
/* The thread's exit system call at pc: its stream must end here (the
 * recorder ends it there).  Does not return. */
void sk_thread_exit(sk_thread *t, uint64_t pc);
void sk_emit(sk_thread *t, uint64_t pc, int kind, unsigned size, uint64_t addr);
/* The thread may have died at this access (no words left, pc is the
 * crash pc): if so (and its bytes hold the faulting address, when known)
 * it did not happen and this does not return; online, when more words
 * turn out to follow, it returns. */
void sk_crashed(sk_thread *t, uint64_t addr, unsigned size);
/* sk_crashed, and a handler of the program may run before this access
 * (the signal's pc is t->crash_pc too): its address tells the faulting
 * one. */
void sk_crashed_at(sk_thread *t, uint64_t pc, unsigned size, uint64_t addr);
/* A control word at top level or during an external call: a routine
 * entry of some object (the replayer runs that object's skeleton, see
 * sk_module_dispatch) or a desynchronisation. */
void sk_dispatch(sk_thread *t, uint64_t word);
/* Generated in each skeleton: the entries of its own routines. */
void sk_module_dispatch(sk_thread *t, uint64_t word);
/* An indirect jump to `to` (link-time) that is none of the jumping
 * routine's blocks: returns when it is an indirect tail call (the start of
 * a routine entered by entry word, or code outside the analyzed program),
 * so the caller's dispatch loop goes on; stops the replay otherwise. */
void sk_ijump_other(sk_thread *t, uint64_t pc, uint64_t to);
/* An indirect jump whose block loads rsp from memory first (skel gen:
 * __builtin_longjmp, a context switch of the program's own): the
 * skeleton's frames cannot follow; the thread's replay stops there, loud,
 * with every access before it emitted. */
void sk_stack_switch(sk_thread *t, uint64_t pc);
/* An indirect call's destination, recorded where the binary has code
 * outside every known function: stops the replay, loud, when it is code
 * the analysis did not find (whose accesses would be missing). */
void sk_icall_check(sk_thread *t, uint64_t pc, uint64_t to);

static inline uint64_t sk_in(sk_thread *t)
{
	return t->w < t->end ? *t->w++ : sk_end_of_stream(t);
}

static inline uint64_t sk_peek(sk_thread *t)
{
	return t->w < t->end ? *t->w : sk_peek_more(t);
}

/* A conditional jump's recorded outcome (PATCH_TBIT), 1 if taken. */
static inline int sk_bit(sk_thread *t)
{
	return sk_in(t) != 0;
}

/* Regions of interest: a skeleton compiled with SK_ROI=1 starts each
 * routine with SK_ROUTINE_ENTER(id); a routine the replayer marked (its
 * t->roi entry) calls sk_roi_enter, and, at each of its returns, the
 * frame's cleanup calls sk_roi_leave.  Accesses are kept while a marked
 * routine is active (recursion counts once) or between the ends of
 * skel_roi_begin and the start of skel_roi_end (--roi-markers). */
enum { SK_ROI_FUNC = 1, SK_ROI_BEGIN = 2, SK_ROI_END = 3 };
typedef struct sk_roi_frame {
	sk_thread *t;
	unsigned kind;              /* SK_ROI_*, 0: not marked */
} sk_roi_frame;
void sk_roi_enter(sk_roi_frame *f);
void sk_roi_leave(sk_roi_frame *f);
/* The name a call to skel_roi_begin passes: a constant string of the
 * binary, which skel gen read (the region it begins is named so). */
void sk_roi_name(sk_thread *t, const char *name);
static inline void sk_roi_exit(sk_roi_frame *f)
{
	if (__builtin_expect(f->kind != 0, 0))
		sk_roi_leave(f);
}
#if defined(SK_ROI) && SK_ROI
/* weak: one per unit; the replayer checks the skeleton has the hooks */
__attribute__((weak)) const int sk_roi_compiled = 1;
#define SK_ROI_NAME(t, name) sk_roi_name(t, name)
#define SK_ROUTINE_ENTER(id) \
	sk_roi_frame sk_roi_f __attribute__((cleanup(sk_roi_exit))) = \
		{ t, t->roi ? t->roi[id] : 0u }; \
	if (__builtin_expect(sk_roi_f.kind != 0, 0)) \
		sk_roi_enter(&sk_roi_f)
#else
#define SK_ROUTINE_ENTER(id) ((void)0)
#endif

static inline void sk_out(sk_thread *t, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	if (__builtin_expect(t->w == t->end, 0) && pc == t->crash_pc)
		sk_crashed_at(t, pc, size, addr);
#if defined(SK_ROI) && SK_ROI
	if (!t->roi_on) {
		t->roi_skipped++;
		return;
	}
#endif
	t->count[kind]++;
	t->bytes[kind] += size;
	/* count_only first: the count sink's loops test one flag, which
	 * gcc hoists (the report's batch is set only where it is 0) */
	if (!t->count_only) {
		if (t->batch)
			sk_batch_add(t, kind, size, addr);
		else
			sk_emit(t, pc + t->bias, kind, size, addr);
	}
}

/* A control word (routine entry, return), recorded less PATCH_CTL_BASE
 * (format.h, PATCH_SWORD). */
static inline uint64_t sk_ctl(sk_thread *t)
{
	if (t->has_pend) {
		t->has_pend = 0;
		return t->pend;
	}
	return sk_in(t) + 0xe7e6ffffffffffffull;
}

static inline uint64_t sk_peek_ctl(sk_thread *t)
{
	if (!t->has_pend) {
		t->pend = sk_in(t) + 0xe7e6ffffffffffffull;
		t->has_pend = 1;
	}
	return t->pend;
}

/* A call into analyzed code: the callee's entry word comes next. */
static inline void sk_enter(sk_thread *t, uint64_t pc, uint32_t id)
{
	uint64_t w = sk_ctl(t);
	if (w != SK_ENTRY(id) + t->mbits)
		sk_desync(t, pc, "expected the entry of the called routine", w);
}

/* A call that may run unanalyzed code: analyzed routines it calls back
 * (qsort comparators, atexit handlers) replay in place until the call
 * returns. */
static inline void sk_external(sk_thread *t)
{
	while (sk_peek_ctl(t) != SK_RETURNED) {
		t->depth++;
		sk_dispatch(t, sk_ctl(t));
		t->depth--;
	}
}

/* A call (or tail jump) through PLT stub n of the running object, its
 * callee's rsp at entry sp (patch_link): when the recorder linked the
 * stub's slot, the callee's entry word and rsp were not recorded, and
 * the replayer runs its skeleton with them (ESP); then, as for any call
 * out, what runs until it returns. */
int sk_plt_linked(sk_thread *t, uint32_t n, uint64_t sp);
static inline void sk_plt(sk_thread *t, uint32_t n, uint64_t sp)
{
	sk_plt_linked(t, n, sp);
	sk_external(t);
}
/* The same at a call whose return site's RETURNED word the recorder
 * leaves out when it links the slot to a routine that returns only to
 * its caller (patch_qret): 1 when it did (the callee's skeleton has
 * run, nothing else comes before the return), else 0 (as sk_plt; the
 * caller then reads the word). */
static inline int sk_plt_q(sk_thread *t, uint32_t n, uint64_t sp)
{
	if (sk_plt_linked(t, n, sp))
		return 1;
	sk_external(t);
	return 0;
}

/* rsp at a routine's entry (its edsp probe): passed by a linked call, or
 * recorded. */
#define ESP() (t->qsp ? sk_take_qsp(t) : SP())
static inline uint64_t sk_take_qsp(sk_thread *t)
{
	uint64_t v = t->qsp;
	t->qsp = 0;
	return v;
}

/* setjmp's first return: the words up to R's entry word (those of an
 * analyzed setjmp, in a whole-process trace), then the rsp recorded at R
 * into r. */
void sk_setjmp_first(sk_thread *t, uint64_t pc, sk_resume *r);
/* setjmp called again in the routine R it returns to (a loop): R's
 * sk_resume is the innermost; the skeleton then restarts R. */
void sk_setjmp_again(sk_thread *t, uint64_t pc, uint64_t word);
/* R entered other than by setjmp's return through an sk_resume: a
 * longjmp to a setjmp the replay did not see.  Does not return. */
void sk_resume_lost(sk_thread *t, uint64_t word);

/* The thread's state an sk_resume saves and an unwind to it restores
 * (one list, so that the two stay the same). */
#define SK_RESUME_STATE(X) X(mod) X(bias) X(mbits) X(crash_pc) X(depth) \
	X(roi) X(roi_depth) X(roi_on)

static inline void sk_resume_push(sk_thread *t, sk_resume *r, uint64_t word)
{
	r->word = word;
	r->words = 0;
	r->nwords = 0;
	r->thr = t;
	r->sp = 0;
	r->up = t->resume;
#define SK_SAVE(f) r->f = t->f;
	SK_RESUME_STATE(SK_SAVE)
#undef SK_SAVE
	t->resume = r;
}

/* A routine whose calls have C++ landing pads: its frame's sk_resume,
 * popped when the frame returns (cleanup attribute: sk_resume_pop). */
#define SK_NO_PAD UINT32_MAX
static inline void sk_catch_push(sk_thread *t, sk_resume *r, const uint64_t *words, uint32_t n)
{
	sk_resume_push(t, r, 0);
	r->words = words;
	r->nwords = n;
	r->pad = SK_NO_PAD;
}

static inline void sk_resume_pop(sk_resume *r)
{
	r->thr->resume = r->up;
}

/* A call to setjmp at pc returning to routine id, fn = r_<id>: runs R
 * after the first return and again after each longjmp to it. */
#define SK_SETJMP(pc, id, fn) do {						\
	sk_resume r_;								\
	sk_resume_push(t, &r_, SK_ENTRY(id) + t->mbits);			\
	if (!__builtin_setjmp(r_.jb))						\
		sk_setjmp_first(t, (pc), &r_);					\
	fn(t);									\
	t->resume = r_.up;							\
} while (0)

/* A thread's stream is over (no word left, none to come) and it died at
 * one of pcs[0..n): an exit-value loop it was in runs to that access. */
int sk_trip_crashed(sk_thread *t, const uint64_t *pcs, unsigned n);

/* Entering an exit-value loop (skelgen.c, plan_exits): when the thread's
 * stream is over and it died in the loop (at one of its accesses, pcs),
 * the loop runs to the faulting access (sk_out stops there). */
static inline int sk_trip_dead(sk_thread *t, const uint64_t *pcs, unsigned npcs)
{
	return __builtin_expect(t->w == t->end, 0) && sk_trip_crashed(t, pcs, npcs);
}

/* Else its trip count: the register of the exit it takes, recorded there
 * (pc) less delta slot `slot`, is e0 + c * I in the iteration that
 * leaves.  A value no iteration reaches is a desynchronisation, not a
 * runaway loop. */
static inline uint64_t sk_trip(sk_thread *t, uint64_t pc, unsigned slot, uint64_t e0, int64_t c)
{
	uint64_t x = (t->dslot[slot] += sk_in(t));
	int64_t d = (int64_t)(x - e0);
	if (d == INT64_MIN || d % c || d / c < 0)
		sk_desync(t, pc, "a loop's exit value that no iteration reaches", x);
	return (uint64_t)(d / c);
}

static inline void sk_expect(sk_thread *t, uint64_t pc, uint64_t word)
{
	uint64_t w = sk_ctl(t);
	if (w != word)
		sk_desync(t, pc, "expected a control word", w);
}

/* Instruction fetches (--fetches, --sim cache): the skeleton compiled with
 * SK_FETCHES=1 calls FETCH(b) where basic block b of its table starts;
 * the replayer expands the block into its instructions, in program order
 * between the data accesses.  Without SK_FETCHES the call is not there. */
#define SK_HAVE_FETCHES 1
typedef struct sk_block_info {
	uint64_t pc;                /* link-time start */
	uint32_t first;             /* its lengths: sk_insn_lens[first..first+n) */
	uint32_t n;
} sk_block_info;

void sk_block(sk_thread *t, uint32_t b);
/* A rep-prefixed instruction executes once per iteration, and once more
 * to find rcx at 0 (as valgrind counts it): the fetches after its first. */
void sk_refetch(sk_thread *t, uint64_t pc, unsigned len);

#if defined(SK_FETCHES) && SK_FETCHES
#define FETCH(b) sk_block(t, (b))
#define REFETCH(pc, len) sk_refetch(t, (pc), (len))
#else
#define FETCH(b) ((void)0)
#define REFETCH(pc, len) ((void)0)
#endif

/* For --stats (emitted by skelgen after the routines): routines and loops,
 * and the innermost one of each memory instruction, by link-time pc. */
typedef struct sk_scope {
	uint64_t pc;                /* routine start or loop header */
	int32_t parent;             /* enclosing scope, -1 for a routine */
	uint32_t depth;             /* loop depth, 0 for a routine */
	uint32_t routine;           /* index in sk_routine_names */
} sk_scope;

typedef struct sk_pc_scope {
	uint64_t pc;
	uint32_t scope;
} sk_pc_scope;

/* After the system call at pc (next: the instruction after it): a
 * signal handler that ran while the thread was in it runs here, after
 * the accesses before the call and before those after it.  The recorder
 * places it where the kernel resumes: after the call, or at the call
 * itself when the kernel restarts it (SA_RESTART). */
void sk_signal_at(sk_thread *t, uint64_t pc);
#define SYSCALL_DONE(pc, next) do {						\
	if (__builtin_expect(t->w == t->end, 0) &&				\
	    ((pc) == t->crash_pc || (next) == t->crash_pc))			\
		sk_signal_at(t, t->crash_pc);					\
} while (0)

/* After a system call that makes a process (clone, fork, vfork, clone3):
 * in a forked child's replay the parent's part ends here, the child's
 * accesses start (the accesses libc's fork makes before the call are the
 * parent's only). */
void sk_fork_done(sk_thread *t);
#define FORK_DONE() do {							\
	if (__builtin_expect(t->await_fork, 0))					\
		sk_fork_done(t);						\
} while (0)

/* After a trap instruction (ud2, int3, hlt) and its FAULT_POINT: the
 * thread died there (no word follows: its replay ends), else a handler
 * returned and the program went on where the skeleton cannot follow
 * (the replay stops, loud).  Does not return. */
void sk_trap(sk_thread *t, uint64_t pc) __attribute__((noreturn));

/* At an instruction that faults without a data access (div and idiv:
 * SIGFPE; ud2, hlt, int n: SIGILL, SIGSEGV, SIGTRAP, whose pc the kernel
 * gives as the next one's): a handler of the fault runs here, before
 * the instruction (a handler that returns makes it again). */
#define FAULT_POINT(pc, next) SYSCALL_DONE(pc, next)

/* A word recorded at a later probe than where the skeleton reads it: a
 * narrow value with the outcome of the jump after it (PATCH_TREG,
 * skelgen.c plan_tbytes), read at the value.  A signal handler the
 * recorder held to that probe ran after the accesses pcs[0..npcs) the
 * skeleton makes after the read: its accesses wait for them
 * (sk_in_early_wait). */
void sk_in_early_wait(sk_thread *t, const uint64_t *pcs, unsigned npcs);
static inline uint64_t sk_in_early(sk_thread *t, const uint64_t *pcs, unsigned npcs)
{
	if (__builtin_expect(t->w == t->end, 0))
		sk_in_early_wait(t, pcs, npcs);
	return *t->w++;
}
/* pcs: the accesses between the byte's load and the jump (link-time) */
#define IN_EARLY(pcs, npcs) sk_in_early(t, (pcs), (npcs))
#define IN() sk_in(t)
#define BIT() sk_bit(t)
#define SMALL() sk_in(t)
#define SP() (t->lastsp += sk_in(t))
/* a value recorded less delta slot s (PATCH_DREG, PATCH_DADDR) */
#define DSMALL(s) (t->dslot[s] += sk_in(t))
/* an indirect jump's destination at link-time pc: recorded less the pc */
#define TARGET(pc) ((pc) + sk_in(t))
#define OUT(pc, kind, size, addr) sk_out(t, (pc), (kind), (size), (addr))
/* The approximate mode (skel gen --omega, docs/bid.md): an access traced
 * at its fulcrum's address (the paper's AIA attribution), and one whose
 * address is not known (absent: counted, its address 0 and ignored). */
enum { SK_EXACT, SK_ATTRIBUTED, SK_ABSENT };
#define OUT_MARKED(m, pc, kind, size, addr) \
	(t->mark = (m), OUT(pc, kind, size, addr), t->nmarked[(m) - 1] += t->roi_on != 0, \
	 t->mark = SK_EXACT)
#define OUT_ATTR(pc, kind, size, addr) OUT_MARKED(SK_ATTRIBUTED, pc, kind, size, addr)
#define OUT_ABSENT(pc, kind, size, addr) OUT_MARKED(SK_ABSENT, pc, kind, size, addr)

#endif
