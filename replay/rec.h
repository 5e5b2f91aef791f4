/* rec.h — the recorder's shared state and its files' interfaces (internal:
 * only replay/rec*.c include it).
 *
 *   rec.c       order of business: environment, objects and their
 *               identity, patching (at start-up and after dlopen)
 *   rec_plan.c  decoding, spans and sites
 *   rec_emit.c  trampoline code
 *   rec_cache.c the patch set and the plans kept between runs: what
 *               start-up reads instead of parsing, planning and emitting
 *   rec_buf.c   per-thread buffers, flushes, the online flusher, chunks
 *   rec_sig.c   the recorder's signal handlers (guard page, int3, fatal
 *               signals) and the program's view of its dispositions
 *   rec_proc.c  interposed pthread_create, exit, exec family, fork,
 *               dlopen
 *   rec_heap.c  interposed malloc family: HEAP events, thread regions */
#ifndef SKEL_REPLAY_REC_H
#define SKEL_REPLAY_REC_H

#include "replay/format.h"

#include <Zydis/Zydis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define REC_PAGE 4096ul
#define REC_BUF_BYTES (256ul * 1024)	/* per thread, before the guard */
/* A flush's packed words (format.h, vt_pack): the codes, half a byte a
 * word at most, then the data, VT_PACK_MAX bytes a word at most; in the
 * packing space the data comes after room for the payload's head, so
 * that the chunk is one piece, and the codes are made apart (rec_values). */
#define REC_CTL_BYTES (REC_BUF_BYTES / 8 / 2 + 8)
#define REC_DATA_BYTES (REC_BUF_BYTES / 8 * VT_PACK_MAX + 16)
#define REC_PACK_BYTES (2 * REC_CTL_BYTES + sizeof(vt_packed) + REC_DATA_BYTES)
/* Full buffers a thread may have handed to the flusher and not yet seen
 * written (rec_flush_full): with one, a thread whose buffer fills about
 * as fast as the flusher writes one waited at nearly every hand-over, and
 * the flusher slept between them (switch 30M: 1.5 s of a 2.3 s recording
 * in the thread's futex, 1.0 s in the flusher's). */
#define REC_JOBS 4
/* The codes of a buffer the thread packs itself (rec_flush_full), in
 * whole pages. */
#define REC_JCTL_BYTES ((REC_CTL_BYTES + REC_PAGE - 1) / REC_PAGE * REC_PAGE)
/* A thread's buffers: the one its cursor is in, and those handed to
 * the flusher as they are (rec_flush_full: the thread goes on in the
 * next, instead of copying its words out, which cost csr's recording
 * 0.19 s of 0.6), each with its guard page after it. */
#define REC_BUFS (REC_JOBS + 1)
#define REC_BUF_STRIDE (REC_BUF_BYTES + REC_PAGE)
/* A thread's mapping: the buffers with their guard pages, the packing
 * space, the buffers the thread packs itself (rec_thread.jbuf) and their
 * codes (rec_thread.jctl). */
#define REC_BUF_MAP_BYTES (REC_BUFS * REC_BUF_STRIDE + REC_PACK_BYTES + \
			   REC_JOBS * REC_BUF_BYTES + REC_JCTL_BYTES)
#define REC_MAX_THREADS 4096
#define REC_MAX_SEGS 16
#define REC_MAX_BLOCK_INSNS 4096
/* The probe frame: 128 bytes of red zone skipped, then rax and rdx. */
#define REC_FRAME (128 + 16)
#define REC_EXPORT __attribute__((visibility("default")))

/* --------------------------------------------------------------- state */

/* The hot path's state: initial-exec, so that its fs offset is fixed and
 * a trampoline reaches a field with one fs-relative load.  The fields'
 * offsets are fixed: the trampolines use them (REC_TLS_*). */
typedef struct rec_tls {
	uint64_t *cursor;
	uint64_t lastsp;	/* rsp at the previous PATCH_DSP probe */
	uint64_t dslot[PATCH_DSLOTS];	/* PATCH_DREG, PATCH_DADDR */
	void (*vmmark)(void);	/* rec_vm_mark_stub, which a PATCH_VMMARK
				   trampoline calls through this field (its
				   plan moves to other processes as is) */
} rec_tls;
#define REC_TLS_LASTSP 8
#define REC_TLS_DSLOT 16
#define REC_TLS_VMMARK (REC_TLS_DSLOT + 8 * PATCH_DSLOTS)
/* Called by PATCH_VMMARK trampolines, the system call's number pushed
 * (rec_proc.c): every register and the flags kept. */
void rec_vm_mark_stub(void);

typedef struct rec_thread {
	uint64_t *base;		/* buffer */
	uint64_t *guard;	/* first word of the PROT_NONE page */
	uint64_t *sent;		/* words before it (from base) are written */
	uint8_t *pack;		/* REC_PACK_BYTES to pack them (rec_values) */
	uint64_t **cursor;	/* the owning thread's rec_cursor */
	rec_tls *tls;		/* and its whole hot-path state */
	uint64_t written;	/* words flushed */
	uint32_t index;
	volatile int ended;
	int tp_moved;		/* its thread pointer is not ts.fsbase any
				 * more (rec_tp_check); 2: said (TP_MOVED) */
	int started;		/* its THREAD_START is written: at the first
				   flush, so that a thread opened lazily (a
				   probe in libc's thread start-up code) still
				   gets its start routine from rec_thread_main */
	vt_thread_start ts;
	struct rec_heap *_Atomic heap;	/* its HEAP events (rec_heap.c) */
	uint64_t origin;	/* stream index of *base (the owner resets) */
	uint64_t t0;		/* CLOCK_MONOTONIC ns when the stream opened */
	uint64_t fork_word;	/* its words before its last fork() (the
				   child's stream goes on from there) */
	_Atomic int lock;	/* sent, written, ended, started, ts, the
				   cursor reset and the reading of *cursor
				   from other threads */
	_Atomic int dead;	/* its clear-child-tid word once watched
				   (rec_exit.c): 0 when it has exited */
	int *ctid;		/* libc's, which the reaper clears for it */
	_Atomic int reaped;
	_Atomic int closed;	/* reaped, and its stream ended */
	struct rec_sigq *sigq;	/* signals held for its next probe
				   (rec_sig.c), NULL until the first */
	int tid;		/* its kernel thread id */
	_Atomic int parked;	/* stopped for the process's exit
				   (rec_sig.c, rec_park_ask): 1 at a probe,
				   2 in a system call of a covered object,
				   3 in one of code no skeleton covers,
				   4 not recording: runs on */
	uint8_t *zmem;		/* its compressor (rec_zstd.c): mapped at
				   its first flush, REC_Z_STACK of stack,
				   then room for a chunk, then the context */
	void *z;		/* the context in zmem, NULL: raw VALUES */
	int zfresh;		/* its next payload starts a new zstd frame */
	/* Full buffers handed to the flusher (rec_flush_full), a ring of
	 * REC_JOBS: job i's words (the buffer itself: the thread goes on in
	 * the next of its REC_BUFS, in turn), with the stream index of the
	 * first, their number, the time of the hand-over, and the thread's
	 * HEAP events stored by then (the flusher writes them first: they
	 * precede the words).  Jobs are written in order and at most
	 * REC_JOBS are out, so the buffer after the thread's is free.
	 * Jobs jtail..jhead-1 are the flusher's, and while there is one, so
	 * are pack and the compressor;
	 * everything else that writes for the thread waits until jtail
	 * reaches jhead (rec_job_wait), and a hand-over waits for a free
	 * slot. */
	uint64_t *map;		/* the mapping: REC_BUFS buffers, ... */
	uint32_t bufi;		/* base is buffer bufi of them */
	/* A job is the words, or, when the thread found the flusher three
	 * jobs behind, a VALUES payload it packed itself into the job's
	 * slot of jbuf (`packed` bytes from byte `at` of `words`),
	 * uncompressed: the flusher then only writes it, the thread packs
	 * instead of waiting for it, and keeps its buffer (rec_flush_full) */
	uint64_t *jbuf;
	uint8_t *jctl;
	struct rec_job {
		uint64_t *words;
		uint64_t first, n, ns, heap;
		uint64_t at, packed;
	} jobs[REC_JOBS];
	_Atomic uint32_t jhead, jtail;
	_Atomic int zlag;	/* the thread waited for a job: the next one
				   is written uncompressed (rec_job_run) */
} rec_thread;
#define REC_Z_STACK (256ul * 1024)

extern __thread rec_tls rec_t __attribute__((tls_model("initial-exec")));
#define rec_cursor (rec_t.cursor)
extern __thread rec_thread *rec_self __attribute__((tls_model("initial-exec")));
/* the start-up words of a child of pthread_create where no slots could
 * be reserved (rec_buf.c: rec_own), its guard page after them */
#define REC_OWN_PAGES 8
extern uint64_t rec_prestart[(REC_OWN_PAGES + 1) * REC_PAGE / 8];
#define REC_PRESTART_GUARD (rec_prestart + REC_OWN_PAGES * REC_PAGE / 8)
/* where other threads start their cursor, and its guard; the guard after
 * the slots of pthread_create's children (rec_buf.c) */
extern uint64_t *rec_pre, *rec_pre_guard, *rec_own_guard;

typedef struct rec_int3 {
	uint64_t pc;		/* runtime address of the int3 */
	uint64_t tramp;
	uint64_t hits;		/* SKEL_VERBOSE: the busiest are named at exit */
} rec_int3;

typedef struct rec_image {
	uint64_t bias;
	uint64_t lo, hi;	/* whole image, runtime */
	uint64_t xlo[REC_MAX_SEGS], xhi[REC_MAX_SEGS];	/* executable */
	int xprot[REC_MAX_SEGS];
	int nx;
	const uint8_t *build_id;
	uint32_t build_id_len;
	const char *path;	/* as dl_iterate_phdr names it ("" for the
				   executable) */
	const void *phdr;	/* with bias, tells objects apart between
				   two scans */
} rec_image;

/* A covered object: one section of the patch set, found loaded. */
typedef struct rec_object {
	rec_image img;
	const patch *patch;
	uint32_t index;		/* its section: the object number in entry
				   words, map kinds, CRASH, SIGNAL, START */
	uint64_t code_lo, code_hi;	/* its trampolines */
	/* the pieces of its trampolines, by address (their tramp plus
	 * map_base): where a fault in the program's own instructions
	 * (not VT_MAP_PROBE) was (rec_displaced_pc) */
	const vt_map_entry *map;
	size_t nmap;
	uint64_t map_base;
	int loader;		/* the dynamic loader (patched late) */
} rec_object;

/* The int3 sites of every covered object, sorted by pc; replaced as a
 * whole (never changed in place) when dlopen adds sites, because the
 * SIGTRAP handler may be reading it meanwhile. */
typedef struct rec_int3_table {
	size_t n;
	rec_int3 v[];
} rec_int3_table;

typedef struct rec_state {
	int pipe;		/* the value file is a FIFO or pipe (skel run) */
	int active;		/* patch applied, recording */
	int verbose;
	int force_int3;		/* SKEL_INT3=1: every site an int3 */
	int fd;
	pid_t pid;		/* the recording process */
	volatile int child;	/* forked, and not recording: record nothing */
	char vpath[4096];	/* the value file, absolute: a forked child
				   writes VPATH.<pid> ("" for a pipe) */
	vt_header header;	/* as written: a forked child's file has it */
	uint32_t image;		/* image number (SKEL_EXEC, formats.md) */
	int execed;		/* this image was started by exec */
	volatile int finished;	/* END written */
	patch_set set;		/* section 0: the executable */
	rec_object obj[PATCH_MAX_OBJECTS];	/* covered, obj[0] the
						   executable; filled before
						   nobj counts it */
	_Atomic uint32_t nobj;
	rec_object *cur;	/* the object being planned and emitted */
	_Atomic int patching;	/* held while objects are patched (dlopen) */
	long cursor_off;	/* fs offset of rec_t (its cursor) */
	rec_int3_table *_Atomic int3;
	size_t code_size;	/* trampoline bytes, all objects */
	size_t nint3;
	size_t nsites;
	size_t nprobes;
	size_t nneighbour;	/* sites whose span takes in other instructions */
	size_t nloop;		/* sites holding a whole loop (rec_loop_span);
				   planned in this process, not read from a
				   plan cache */
	int loader_due;		/* the loader may be covered: the program
				   started (rec.c, __libc_start_main) */
	size_t nlanding;	/* int3 sites gone on across a branch target
				   (rec_plan_landings) */
	size_t nredirect;	/* sites that enter an int3 site's block
				   through its trampoline (rec_plan_enters) */
	pthread_key_t key;
	rec_thread *threads[REC_MAX_THREADS];
	_Atomic uint32_t nthreads;
	_Atomic uint64_t values;
	_Atomic uint64_t int3_hits;
	rec_thread sink;	/* discard buffer: ended threads, fork child */
	int have_gsbase;
	int have_rtm;		/* xbegin runs (else it raises #UD) */
	uint64_t restorer;	/* libc's __restore_rt, never rewritten */
	size_t nunreachable;	/* probes left out (rec_unreachable) */
	uint64_t phash[PATCH_MAX_OBJECTS];	/* patch_hash of each section */
	uint64_t self_id;	/* the recorder's own build: a plan made by
				   another build is not used */
	int plans_read, plans_made, plans_written;	/* this process */
	int plans_as_is;	/* read as their writer left them (rec_plan_read) */
	int plan_check;		/* SKEL_PLAN_CHECK=1 */
	_Atomic int pass;	/* held by the online flusher during a pass and
				   by rec_finish: no VALUES after END */
	unsigned long main_fs;	/* the main thread's fs base (rec_exit.c) */
	int write_maps;		/* SKEL_MAPS=1: trampoline maps in the file */
	size_t zsize;		/* a compressor's context, 0: files get raw
				   VALUES (a pipe, or SKEL_COMPRESS=0) */
	int zmode;		/* SKEL_COMPRESS=1: every buffer compressed,
				   even when the flusher is behind; 2: every
				   other full buffer raw (tests: a mixed file);
				   else 0: raw while the flusher is behind */
	int prepack_all;	/* SKEL_PREPACK=1 (tests): every full buffer
				   packed by its thread (rec_flush_full) */
	int valgrind;		/* run under valgrind (skel check): VALUES
				   unpacked (rec_values) */
	int unsummed;		/* skel check's run under lackey (SKEL_UNSUMMED=1):
				   raw VALUES without a sum over the words
				   (format.h, VT_TOKENS_RAW_UNSUMMED) */
} rec_state;

extern rec_state R;

/* The definitions of rec_sig.c and rec_proc.c interpose libc's; the
 * originals come from dlsym(RTLD_NEXT), looked up on first use because
 * other libraries' constructors may call them before ours runs. */
#define REC_REAL(name, type) \
	static type rec_real_##name(void) \
	{ \
		static type fn; \
		if (!fn) \
			fn = (type)dlsym(RTLD_NEXT, #name); \
		return fn; \
	}

/* -------------------------------------------------------- rec_zstd.c */

size_t rec_z_setup(void);
void *rec_z_new(void *mem);
void rec_z_restart(void *z);
size_t rec_z_bound(size_t n);
size_t rec_z_compress(void *z, const void *in, size_t n, void *out, size_t cap);

/* ------------------------------------------------------------ rec.c */

void rec_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn, format(printf, 1, 2))) void rec_die(const char *fmt, ...);

/* The covered object holding runtime address pc, or NULL. */
const rec_object *rec_object_at(uint64_t pc);
/* The link-time pc (and object) of the program's instruction that the
 * recorder displaced into its trampolines at runtime pc; else 0. */
uint64_t rec_displaced_pc(uint64_t pc, uint32_t *object);
/* Whether the n pieces of m are in order of tramp and do not overlap. */
int rec_map_in_order(const vt_map_entry *m, size_t n);
/* Section 0's object: the executable. */
#define REC_EXE (&R.obj[0])
/* Newly mapped objects (dlopen): those a section covers are patched, and
 * an OBJECTS chunk names them all. */
void rec_late_objects(void);

static inline int rec_fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* ------------------------------------------------------- rec_plan.c */

extern ZydisDecoder rec_dec;

typedef struct rec_insn {
	uint64_t addr;		/* runtime */
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
} rec_insn;

typedef struct rec_probe {
	patch_probe p;		/* addresses made runtime */
	uint32_t order;		/* in the file */
} rec_probe;

typedef struct rec_site {
	uint64_t start, end;	/* span rewritten, runtime */
	uint64_t bstart, bend;	/* its block */
	size_t p0, np;		/* probes, in the sorted array */
	int int3;
	int last_transfer;	/* the span ends with a transfer */
	uint64_t first_end;	/* end of its first probed instruction */
	uint64_t redirect;	/* its jumps to this block start, and its
				   fall-through there, go to the block's
				   int3 site's trampoline (0: none) */
	size_t to;		/* that int3 site */
	uint64_t land;		/* a branch target strictly inside the span:
				   every relocated branch there goes to its
				   place in this trampoline (0: none) */
	int loop;		/* the span is its whole block, which ends
				   with a branch back to its start: that
				   branch (and any other relocated one to
				   the start) goes to the trampoline's entry,
				   so the loop runs in the trampolines */
} rec_site;

/* A direct branch of a library's text (rec.c's linear sweep), kept
 * sorted by target. */
typedef struct rec_branch {
	uint64_t target, src;	/* runtime */
	uint8_t len;		/* of the branch */
	uint8_t call;
	uint8_t prev[4];	/* lengths of the instructions before it in
				   the sweep, nearest first (0: unknown) */
} rec_branch;
typedef struct rec_targets {
	rec_branch *v;
	size_t n, cap;
} rec_targets;
size_t rec_targets_after(const rec_targets *t, uint64_t pc);
/* [lo, hi) within one executable section of img */
int rec_in_text(const rec_image *img, uint64_t lo, uint64_t hi);
/* the end of img's executable section holding pc (pc if none) */
uint64_t rec_text_end(const rec_image *img, uint64_t pc);
int rec_is_target(const rec_targets *t, uint64_t pc);

int rec_decode(uint64_t addr, uint64_t limit, rec_insn *x);
int rec_is_call(const rec_insn *x);
int rec_is_transfer(const rec_insn *x);
int rec_cond_code(const rec_insn *x);
int rec_probe_cmp(const void *a, const void *b);
int rec_plan(rec_probe *pv, size_t np, rec_site **out, size_t *nout);
/* The patch's `enter` hints (format.h) for R.cur's int3 sites: a
 * predecessor's last instructions become a site (or an existing one
 * there goes on to its end) that enters the block through its int3 site's
 * trampoline.  Sites are added at the end of *sv; the number made. */
size_t rec_plan_enters(const patch *pt, rec_site **sv, size_t *ns);
/* A library's int3 sites whose block is short because a branch target
 * ends it (t: the library's branches): the span goes on across the
 * target, and every branch there is sent to its place in the trampoline
 * (rec_site.land), the ones outside any site through a new site ending
 * with them.  Sites are changed, merged (left with np = 0 and an empty
 * span, start == end) or added at the end of *sv; the number changed. */
size_t rec_plan_landings(const rec_targets *t, rec_site **sv, size_t *ns);

/* ------------------------------------------------------- rec_emit.c */


typedef struct rec_lit {
	size_t disp_at;		/* offset of a rel32 to the literal */
	size_t next;		/* offset of the end of that instruction */
	uint64_t value;
} rec_lit;

/* Fields of the trampoline code that depend on this process, by kind:
 * each moves by one amount per object and process (rec_cache.c). */
enum {
	REC_REL32,	/* rel32 to an address of the object: moves by the
			   change of (bias - code base) */
	REC_ABS64,	/* an address of the object: moves with the bias */
	REC_CURSOR32,	/* fs offset of rec_t (plus a field's offset) */
	REC_ENTRY64,	/* an entry word: the object number in bits 32.. */
	REC_NRELOC
};

typedef struct rec_relocs {
	uint32_t *off;		/* from the code's start */
	size_t n, cap;
} rec_relocs;

typedef struct rec_fixup {
	size_t at;		/* offset of the rel32 */
	size_t land;		/* index in rec_emit.land_pc */
} rec_fixup;

typedef struct rec_write {
	uint64_t start, end, tramp;
	int int3;
	uint64_t quiet;		/* the routine entered at `start` past its
				   entry word and edsp (patch_link), or 0 */
	uint64_t word;		/* then its entry word (without object
				   bits: patch_entry_word adds them) */
} rec_write;

typedef struct rec_emit {
	uint8_t *p;		/* code; runtime address == pointer */
	size_t len, cap;
	rec_lit lit[64];
	int nlit;
	vt_map_entry *map;
	size_t nmap, capmap;
	rec_relocs rel[REC_NRELOC];
	int nocache;		/* a field that no relocation describes */
	uint64_t redir_from, redir_to;	/* the site being emitted enters
					   block redir_from at redir_to */
	/* branch targets inside spans (rec_site.land), sorted, and their
	 * places in the trampolines; the rel32 fields that go there, filled
	 * in once every trampoline is emitted */
	uint64_t *land_pc, *land_at;
	size_t nland;
	rec_fixup *fix;
	size_t nfix, capfix;
	/* emitting a site's quiet copy: its probes q0 and q1 (the entry
	 * word and edsp at quiet_pc, indices in the site's probes) left out */
	uint64_t quiet_pc;
	size_t q0, q1;
} rec_emit;

/* The store that may hit the guard page; the SIGSEGV handler looks for
 * exactly these bytes at the faulting rip. */
extern const uint8_t rec_store_insn[3];
extern const uint8_t rec_store_imm_insn[3];

/* The trampolines of R.cur's sites; its int3 sites are added to `i3`
 * (room for ns more). */
void rec_emit_all(rec_probe *pv, rec_site *sv, size_t ns, rec_emit *e,
		  uint64_t *tramp, rec_int3 *i3, size_t *ni3, rec_write *w);
int rec_in_code(uint64_t pc);
/* In the recorder's own image (rec_heap.c). */
int rec_in_self(const void *p);
/* Pages for `size` bytes of R.cur's trampolines within rel32 reach of all
 * its text, read-write; NULL if none. */
void *rec_code_map(size_t size);
void *rec_code_map_near(size_t size, uint64_t want);

/* ------------------------------------------------------ rec_cache.c */

/* What the text write needs of a site, in memory that is given back with
 * a raw munmap: by then libc may be patched, and free() would record. */

typedef struct rec_pending {
	const vt_map_entry *map;	/* in order of tramp + map_base, */
	size_t nmap;			/* disjoint */
	uint64_t map_base;	/* 0, or (a plan read) the trampolines' start,
				   the map being the plan file's */
	void *ref;		/* then its MAP_REF payload (SKEL_MAPS) */
	size_t nref;
	rec_write *w;
	size_t nw;
	size_t nsorted;		/* w[0..nsorted) in order of start (the
				   sites planned late follow: rec_write_at) */
	uint32_t *late;		/* w[nsorted..nw)'s indices in order of
				   start (rec_sites_index) */
	int indexed;
	int nsorted_known;	/* nsorted set by rec_plan_read */
	uint32_t *relinked;	/* the sites rec_qret_link sent to their */
	size_t nrelinked, relinked_cap;	/* quiet copies (raw mmap) */
	/* a plan read as its writer had it: the patched text [text_lo,
	 * text_lo + text_len) at offset text_at of the plan file open as
	 * text_fd + 1 (0: none) */
	uint64_t text_lo, text_len, text_at;
	int text_fd;
	uint64_t hook_at;	/* the replaced routine's entry (format.h:
				   SKEL_REPLACED_ROUTINE) in this object */
	uint64_t hook_stub;	/* the jump from there to the recorder's */
} rec_pending;

/* Site w's bytes at p (the text at w->start, or a copy of it). */
void rec_site_write(uint8_t *p, const rec_write *w);
/* pd's patched text from its plan file into place (pd->text_len): 0, or
 * -1 (nothing written). */
int rec_plan_text(const rec_pending *pd);
/* How many of w[0..n) come first in order of start. */
size_t rec_sites_sorted(const rec_write *w, size_t n);
/* Whether the process runs under valgrind (its preload in LD_PRELOAD:
 * R.valgrind, once the recorder has started). */
int rec_under_valgrind(void);
/* pd's sites indexed by start (nsorted, late), once; raw mmap.  Then
 * whether a site overlaps [lo, hi). */
void rec_sites_index(rec_pending *pd);
int rec_sites_overlap(const rec_pending *pd, uint64_t lo, uint64_t hi);

/* The int3 sites found so far, not published yet. */
typedef struct rec_int3_list {
	rec_int3 *v;
	size_t n;
} rec_int3_list;

/* Reads the patch set at path into R.set and R.phash: from the set index
 * of the cache when one matches the file's bytes (sections then parsed on
 * demand, rec_section_probes), else by parsing the text (and writing the
 * index).  -1 with err set if the text does not parse. */
int rec_set_load(const char *path, char err[FMT_ERR_LEN]);
/* Section k with its probes (parsed now if the index stood in for it). */
const patch *rec_section_probes(uint32_t k);
typedef struct rec_tail {
	patch_link *links;
	size_t nlinks;
	patch_qret *qrets;
	size_t nqrets;
	uint64_t *closed;
	size_t nclosed;
} rec_tail;
size_t rec_section_tail(uint32_t k, rec_tail *t);
/* qsort/bsearch order of uint64_t (rec_emit.c). */
int rec_u64_cmp(const void *a, const void *b);
void rec_tail_free(rec_tail *t);
/* Plans are kept (SKEL_PLAN_CACHE=0 turns the cache off). */
int rec_cache_on(void);
/* Object R.cur from its plan file: trampolines mapped and written, the
 * text writes, map and int3 sites as a fresh plan gives them; -1 if there
 * is no usable plan file (nothing is left behind then). */
int rec_plan_read(rec_pending *pd, rec_int3_list *i3);
/* Keeps the plan of R.cur just emitted into e; sv are its sites (one per
 * text write), counts its sites, probes, neighbour sites, probes left
 * out and sites entering int3 blocks.  Quiet (but for SKEL_VERBOSE) when
 * the cache cannot be written. */
void rec_plan_write(const rec_emit *e, const rec_pending *pd,
		    const rec_site *sv, const size_t counts[5]);
/* SKEL_PLAN_CHECK=1 (tests): compares the plan file of R.cur, moved to
 * e's place, with the fresh plan in e and pd; says which on stderr. */
void rec_plan_check(const rec_emit *e, const rec_pending *pd);

/* -------------------------------------------------------- rec_buf.c */

int rec_off(void);
/* System calls that leave errno alone and run no libc code: once libc is
 * patched, libc code records words into the calling thread's stream, which
 * is right only when the program asked for that code to run.  The
 * recorder's own paths (signal handlers, flushes, the flusher thread, the
 * exit and fork/exec events, the text writes) use these. */
long rec_syscall3(long nr, long a, long b, long c);
long rec_syscall6(long nr, long a, long b, long c, long d, long e, long f);
void rec_block_all(sigset_t *old);
void rec_restore_mask(const sigset_t *old);
pid_t rec_getpid(void);
/* Own loops, not libc's memcpy/memset (the file is built with
 * -fno-tree-loop-distribute-patterns so gcc does not turn them back). */
void rec_copy_bytes(void *to, const void *from, size_t n);
void *rec_mmap_raw(size_t size);
void rec_munmap_raw(void *p, size_t size);
void rec_lock(_Atomic int *l);
void rec_unlock(_Atomic int *l);
void rec_fill_bytes(void *to, int c, size_t n);
/* A chunk for `thread` (index) after its words handed to the flusher. */
void rec_chunk(uint32_t type, uint32_t thread, const void *p, size_t n);
long rec_futex(void *addr, int op, int val, const struct timespec *ts);
/* CLOCK_MONOTONIC in ns, by a raw system call (TIME chunks) */
uint64_t rec_now_ns(void);
int rec_buffer_map(rec_thread *t);
/* `keep`: the caller owns rec_own (rec_prestart_claim, by its parent):
 * its words there open the stream, and the page is released. */
rec_thread *rec_thread_open(uint64_t start, uint32_t parent, uint32_t flags, int keep);
/* rec_thread_main: the calling thread's stream, opened now or lazily
 * before, gets its start routine and parent. */
rec_thread *rec_thread_begin(uint64_t start, uint32_t parent, int keep);
/* Around the real pthread_create: claim (1: owned, and the new thread
 * starts in rec_own), then created(failed) once it returned. */
int rec_prestart_claim(void);
void rec_prestart_created(int failed);
void rec_prestart_init(void);
void rec_prestart_trim(void);
void rec_prestart_forked(void);
void rec_open_traps(void);
/* the owner took its `used` words from rec_own */
void rec_prestart_release(size_t used);
/* a thread libc started (notify) checks its cursor before its stream */
void rec_prestart_check_self(void);
/* a thread's words were lost: the END chunk says the run strayed */
void rec_stray_seen(void);
/* The START flags and link-time start of runtime address `start`. */
uint64_t rec_thread_pointer(void);
int rec_tp_check(rec_thread *t);
void rec_start_of(vt_thread_start *ts, uint64_t start);
void rec_flush_upto(rec_thread *t, uint64_t *end, int reset);
void rec_on_thread_exit(void *p);
/* The calling thread's stream ends now: it leaves by a raw exit system
 * call (syscall(SYS_exit)), past its key destructors and the reaper. */
void rec_thread_exit_now(void);
/* The calling thread's buffer written out now when it has less room
 * than REC_ROOM_WORDS (rec_buf.c: before libc blocks every signal). */
#define REC_ROOM_WORDS 4096
void rec_make_room(void);
/* Signals that came to the thread before it had a stream were kept
 * (rec_sig.c): their handlers run now, their masks made from `base` (the
 * thread's mask now if NULL). */
void rec_sig_undefer(const sigset_t *base);
/* In the parent of a vfork-like child whose words were sent to the sink
 * (rec_proc.c, rec_vm_mark): the thread's state back, if not yet. */
void rec_vm_parent_resume(void);
/* The calling thread records nothing until rec_quiet_end: its words go
 * to the sink, its cursor and delta state (PATCH_DSP, PATCH_DREG) come
 * back after (rec.c: the planning of late objects; rec_proc.c: a
 * vfork-like child).  No SSE, no libc. */
typedef struct rec_quiet {
	rec_thread *self;
	rec_tls tls;
} rec_quiet;
void rec_quiet_begin(rec_quiet *q);
void rec_quiet_end(const rec_quiet *q);
/* The calling thread's cursor is in the claim's slot: a thread that
 * pthread_create started, before its stream (rec_thread_begin). */
int rec_prestart_mine(void);
/* A raw clone (no libc): the child runs stack[0](stack[1]) and exits
 * with what it returns.  `tid`: the word CLONE_PARENT_SETTID and
 * CLONE_CHILD_CLEARTID use (the kernel zeroes it and wakes its futex
 * when the child is gone), NULL without them. */
long rec_clone_raw(unsigned long flags, void *stack, unsigned long tls, _Atomic int *tid);
/* rec_exit.c: the calling thread's stream goes on to its exit system
 * call, where the reaper closes it (0: cannot, end it now); the streams
 * of threads dead there closed now (process exit); fork's child. */
int rec_exit_watch(rec_thread *t);
void rec_exit_reap(void);
void rec_exit_forked(void);
void rec_exit_init(void);
void rec_thread_close_dead(rec_thread *t);
void rec_flush_all_dying(void);
/* The flusher thread: it writes the full buffers handed to it (all
 * runs but under valgrind or SKEL_ASYNC=0), and for skel run every
 * thread's words every millisecond.  `behind`: it takes full buffers. */
void rec_flusher_start(int behind);
/* The flusher gone (rec_finish): the process may end by its last
 * thread's exit system call, and the flusher would outlive it. */
void rec_flusher_stop(void);
/* At a guard fault: t's full buffer to the flusher, or written now. */
void rec_flush_full(rec_thread *t);
/* A forked child: no flusher there (the parent's runs on); its own. */
void rec_flusher_forked(void);
void rec_stats(const char *when);
/* The marker skel check starts and stops comparing at (rec.c). */
void rec_started(void);
/* The thread's START chunk, now (rec_buf.c). */
void rec_thread_start_now(rec_thread *t);
void rec_finish(uint32_t how);
void rec_event(uint32_t type, void *payload, size_t n);
/* The FORK chunk of the parent (rec_fork_prepare set the word). */
void rec_fork_event(uint32_t pid);

/* -------------------------------------------------------- rec_sig.c */

void rec_signals_install(void);
/* The signals held for the thread's next probe, run now (it stops
 * recording: exit, thread end). */
/* In a forked child: the parent's watchdog timer is not the child's
 * (timer ids are per process: the number may be the program's own). */
void rec_sig_forked(rec_thread *t);
void rec_sig_run_held(void);
/* Every signal blocked but those an instruction raises (faults, traps:
 * the probes'), the mask before in *old. */
void rec_block_async(sigset_t *old);
/* At the process's exit: asks thread t to stop where its stream can end
 * exactly (its next probe, or the system call it waits in); t->parked
 * says when it has.  0 if the signal could not be sent. */
int rec_park_ask(rec_thread *t);
/* The recording has ended: threads stopped at a probe go on. */
void rec_park_release(void);
/* rec_init: the recording ends after the destructors too (rec_proc.c) */
void rec_exit_hook(void);
/* sigaction as libc does it, past our interposer: the system call */
int rec_sys_sigaction(int sig, const struct sigaction *a, struct sigaction *o);
/* The replaced routine (format.h: SKEL_REPLACED_ROUTINE): its runtime
 * address, looked up before any text is written (0: none). */
void rec_sig_hook_find(void);
/* When object o holds it: the stub that jumps to the recorder's (made
 * while planning o, R.cur set). */
void rec_sig_hook_plan(const rec_object *o, rec_pending *pd);
/* The jump into the stub at its entry, while o's text is writable (our
 * own stores only); not when one of o's sites covers the entry (a
 * skeleton made before the routine was left out). */
void rec_sig_hook_write(rec_pending *pd);

/* fork: the forking thread's buffer written before the fork (so that its
 * words after `fork_word` are the child's as well as the parent's), and
 * in the child, the streams of the threads that did not survive dropped
 * and the forking thread's stream made thread 0 of the child's file. */
void rec_fork_prepare(void);
/* The program's signal mask back, after the fork (rec_fork_prepare blocks
 * the asynchronous signals from the fork's word on). */
void rec_fork_unblock(void);
void rec_fork_streams_reset(rec_thread *t);

/* ------------------------------------------------------- rec_proc.c */

void rec_atfork_child(void);
/* at_quick_exit's handler of the recorder: the streams end there. */
void rec_quick_exit(void);
void rec_atfork_parent(void);
extern int rec_vfork_as_fork;	/* vfork is fork + wait (recording) */
extern void *rec_vfork_real;	/* else libc's */
/* Decimal v at p, NUL-ended, no libc: its length. */
size_t rec_put_dec(char *p, unsigned long v);

/* ------------------------------------------------------- rec_heap.c */

/* Before patching: what the thread regions need from ld.so and libc. */
void rec_heap_init(void);
/* The calling thread's stack and TLS block as HEAP events of t (its
 * owner, outside signal handlers). */
void rec_heap_thread(rec_thread *t);
/* t's HEAP events not written yet, as chunks; under t->lock, before
 * its VALUES (rec_flush_locked). */
void rec_heap_flush(rec_thread *t);
/* The flusher's: t's events up to the `upto`-th written by write (which
 * does not wait for t's jobs); rec_heap_stored: the events stored. */
void rec_heap_flush_upto(rec_thread *t, uint64_t upto,
			 void (*write)(uint32_t, uint32_t, const void *, size_t));
uint64_t rec_heap_stored(const rec_thread *t);
/* The calling thread's events written now: before a thread it creates
 * starts, so that the replay of that thread knows the blocks it is
 * handed (skel run). */
void rec_heap_publish(void);

#endif
