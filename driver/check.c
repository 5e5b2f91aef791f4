/* check.c — skel check: the replayed trace against valgrind lackey on the
 * very same execution.
 *
 * The program runs once, under lackey and the recorder together.  Lackey's
 * data accesses are attributed to the instruction line before them; those
 * of the main executable's text count, and so do those of trampoline code
 * standing for a displaced instruction (the value trace's map gives its
 * original pc).  The replayed trace must equal that sequence access for
 * access; threads are matched as an interleaving of the per-thread
 * streams, since lackey does not say which thread ran. */
#include "driver/run.h"
#include "analyzer/analyzer.h"
#include "analyzer/util.h"
#include "replay/format.h"
#include "replay/interleave.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

typedef il_acc acc;

typedef VEC(acc) acc_vec;

typedef struct text_range {
	uint64_t lo, hi;
} text_range;

static int cmp_map(const void *x, const void *y)
{
	const vt_map_entry *a = x, *b = y;
	return (a->tramp > b->tramp) - (a->tramp < b->tramp);
}

static const vt_map_entry *map_find(const vt_streams *s, uint64_t a)
{
	size_t lo = 0, hi = s->nmap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->map[mid].tramp + s->map[mid].len <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nmap && a >= s->map[lo].tramp ? &s->map[lo] : NULL;
}

/* The executable's code, PLT stubs excepted: they are linker-made
 * trampolines into libraries and count as part of the library call. */
static bool in_analyzed_text(const binary *b, uint64_t a)
{
	const elf_section *s = elf_section_at(b, a);
	return s && s->exec && strncmp(s->name, ".plt", 4);
}

/* bt/bts/btr/btc on a register: valgrind emulates them through a stack
 * slot below the red zone, and lackey shows that store and load although
 * the processor touches no memory.  Prefixes, 0f, a3|ab|b3|bb|ba, ModRM
 * with mod 3. */
/* The bytes of a two-byte opcode 0f XX at link-time pc, after its 66 and
 * REX prefixes: c[0] = 0f, c[1] = XX, c[2] = ModRM; NULL if it is none. */
static const uint8_t *opcode_0f(const binary *b, uint64_t pc)
{
	size_t n;
	const uint8_t *c = elf_code_at(b, pc, &n);
	size_t i = 0;
	while (c && i < n && i < 4 && (c[i] == 0x66 || (c[i] & 0xf0) == 0x40))
		i++;
	return c && i + 2 < n && c[i] == 0x0f ? c + i : NULL;
}

static bool valgrind_bt_artifact(const binary *b, uint64_t pc)
{
	const uint8_t *c = opcode_0f(b, pc);
	if (!c)
		return false;
	uint8_t op = c[1];
	return (op == 0xa3 || op == 0xab || op == 0xb3 || op == 0xbb || op == 0xba) &&
	       c[2] >> 6 == 3;
}

/* xsave, xsavec, xsaves, xrstor, xrstors (the loader's lazy binding saves
 * the vector state so): their footprint depends on the processor's
 * state components and which are in use; valgrind splits it into its
 * own pieces.  Compared on neither side, counted. */
static bool xsave_family(const binary *b, uint64_t pc)
{
	const uint8_t *c = opcode_0f(b, pc);
	if (!c || c[2] >> 6 == 3)
		return false;
	unsigned reg = c[2] >> 3 & 7;
	return (c[1] == 0xae && (reg == 4 || reg == 5)) ||
	       (c[1] == 0xc7 && (reg == 3 || reg == 4 || reg == 5));
}
static uint64_t xsave_skipped;

/* The objects whose accesses are compared: the executable (0) and, in a
 * whole-process recording, each covered shared object, by its number. */
typedef struct cobj {
	binary b;
	bool open;
	uint64_t bias, lo, hi;	/* runtime extent; lo = hi = 0: unknown */
	const char *path;
	uint32_t batch;		/* mapped by the batch-th dlopen (vt_objects) */
} cobj;

static cobj *cobjs;	/* the objects compared (cobjs_open) */
static size_t ncobjs;
/* the runs of the recorder's late marker seen in lackey's log: an object a
 * dlopen mapped is compared from its batch's run on (its constructors ran
 * before the recorder patched it: not in the trace) */
static uint32_t late_seen;

/* Per object of the recording (vt_objects order): the accesses of lackey's
 * log made by its code and not compared (it is not covered), for the
 * verdict (name_uncovered). */
static uint64_t *uncompared;
static size_t nuncompared;

static void count_uncompared(const vt_streams *s, uint64_t pc, uint64_t n)
{
	if (!uncompared)
		return;
	for (size_t i = 0; i < s->objects.n && i < nuncompared; i++)
		if (pc >= s->objects.v[i].lo && pc < s->objects.v[i].hi) {
			uncompared[i] += n;
			return;
		}
}

static bool cobj_live(const cobj *o)
{
	return o->open && o->batch <= late_seen;
}

static cobj *cobj_at(cobj *o, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (cobj_live(&o[i]) && (o[i].lo < o[i].hi ? a >= o[i].lo && a < o[i].hi
				  : in_analyzed_text(&o[i].b, a - o[i].bias)))
			return &o[i];
	return NULL;
}

/* `mov r32, 0; and r32, [mem]`: the processor reads [mem], but valgrind's
 * IR optimizer knows the result is 0 and drops the load, so lackey never
 * shows it (Csmith programs at -O0 have the pattern).  True when the
 * instruction at link-time pc is such an `and` (no REX.W) right after such
 * a `mov` of the same register: then the skeleton's read there may be
 * missing from the oracle. */
static bool valgrind_and_zero_artifact(const binary *b, uint64_t pc)
{
	size_t n;
	const uint8_t *c = elf_code_at(b, pc, &n);
	if (!c || n < 2)
		return false;
	size_t i = 0;
	uint8_t rex = 0;
	if ((c[0] & 0xf0) == 0x40) {
		rex = c[0];
		i = 1;
	}
	if (rex & 8 || i + 2 > n || c[i] != 0x23 || c[i + 1] >> 6 == 3)
		return false;
	unsigned reg = ((c[i + 1] >> 3) & 7) | (rex & 4 ? 8 : 0);
	/* the mov before it: [REX.B] b8+r imm32 0 */
	for (int len = 5; len <= 6; len++) {
		const uint8_t *m = elf_code_at(b, pc - (uint64_t)len, &n);
		if (!m || n < (size_t)len)
			continue;
		size_t k = len == 6 ? 1 : 0;
		if (len == 6 && (m[0] & 0xf8) != 0x40)
			continue;
		unsigned mreg = (m[k] & 7) | (len == 6 && (m[0] & 1) ? 8 : 0);
		if ((m[k] & 0xf8) == 0xb8 && mreg == reg && !m[k + 1] && !m[k + 2] && !m[k + 3] &&
		    !m[k + 4])
			return true;
	}
	return false;
}

/* A locked read-modify-write (a lock prefix, or xchg with memory, locked
 * by definition): valgrind runs it as a load, then a compare-and-swap,
 * and lackey logs both: ` L a` then ` M a`.  The processor reads once. */
static bool valgrind_locked_artifact(const binary *b, uint64_t pc)
{
	size_t n;
	const uint8_t *c = elf_code_at(b, pc, &n);
	if (!c)
		return false;
	size_t i = 0;
	for (; i < n && i < 14; i++) {
		uint8_t x = c[i];
		if (x == 0xf0)
			return true;
		if (x != 0x66 && x != 0x67 && x != 0xf2 && x != 0xf3 && x != 0x2e &&
		    x != 0x3e && x != 0x26 && x != 0x36 && x != 0x64 && x != 0x65 &&
		    (x & 0xf0) != 0x40)
			break;
	}
	return i + 1 < n && (c[i] == 0x86 || c[i] == 0x87) && c[i + 1] >> 6 != 3;
}

static size_t locked_extra;	/* lackey's extra loads of locked instructions */
static accuracy *fetches_to;	/* --accuracy: counts the executions of blocks */
static bool acc_mode, acc_stats;	/* --accuracy, its --stats */
static uint64_t acc_chunk;		/* its --chunk, 0: the skeleton's */
static const char *check_skel;		/* the skeleton checked */

static bool and_zero_elided(const acc *a)
{
	const cobj *o = cobj_at(cobjs, ncobjs, a->pc);
	return o && !a->w && a->size == 4 && valgrind_and_zero_artifact(&o->b, a->pc - o->bias);
}

/* Lackey's log: "I  addr,len", " L addr,size", " S ...", " M ...".  Pcs
 * are runtime; with a marker (OBJECTS), what ran before the recorder was
 * in place, and after it ended (its second run), is skipped (a forked
 * child's log has only the end). */
static int read_lackey(const char *log, const vt_streams *s, cobj *objs, size_t nobj,
		       bool child, acc_vec *out)
{
	FILE *f = fopen(log, "r");
	if (!f)
		return -1;
	char line[256];
	uint64_t pc = 0;
	int mode = 0; /* 0: not ours, 1: ours, 2: call push (store only) */
	bool call_jmp = false;	/* the jmp that ends an emulated call */
	size_t push_at = SIZE_MAX;	/* its push's store, in out */
	/* a forked child's log starts after the fork, recorder in place */
	bool started = !s->objects.marker || child;
	/* a forked child's log starts after the parent's late chunks were
	 * patched (the loader's, libraries loaded before the fork): their
	 * objects are live from its first line */
	late_seen = 0;
	for (size_t k = 0; child && k < nobj; k++)
		if (objs[k].open && objs[k].batch > late_seen)
			late_seen = objs[k].batch;
	uint64_t ipc = 0;	/* the pc of the last instruction */
	bool quiet = false;	/* between the two runs of the late marker */
	free(uncompared);
	nuncompared = s->objects.n;
	uncompared = calloc(nuncompared ? nuncompared : 1, sizeof *uncompared);
	const cobj *po = NULL;	/* the object pc is in */
	while (fgets(line, sizeof line, f)) {
		unsigned long long a, n;
		static const char vex_stop[] = "vex amd64->IR: unhandled instruction bytes: ";
		if (!strncmp(line, vex_stop, sizeof vex_stop - 1)) {
			/* valgrind then kills the program: no oracle past it */
			line[strcspn(line, "\n")] = 0;
			fprintf(stderr, "skel check: valgrind stopped the program at an "
				"instruction it does not know (bytes %s): no oracle, "
				"nothing compared (%s)\n", line + sizeof vex_stop - 1, log);
			fclose(f);
			return -2;
		}
		if (line[0] == 'I' && sscanf(line + 1, " %llx,%llu", &a, &n) == 2) {
			const vt_map_entry *m;
			const cobj *o = NULL;
			mode = 0;
			call_jmp = false;
			ipc = a;
			if (!started) {
				started = a == s->objects.marker;
				continue;
			}
			if (a == s->objects.marker)	/* the recorder's end */
				break;
			if (s->objects.late_marker && a == s->objects.late_marker) {
				/* two runs per late chunk: the recorder's
				 * planning in between is not the program's */
				quiet = !quiet;
				if (!quiet)
					late_seen++;
				continue;
			}
			if (quiet)
				continue;
			if ((o = cobj_at(objs, nobj, a)) && in_analyzed_text(&o->b, a - o->bias)) {
				pc = a;
				mode = 1;
			} else if ((m = map_find(s, a)) && VT_MAP_OBJECT(m->kind) < nobj &&
				   cobj_live(&objs[VT_MAP_OBJECT(m->kind)])) {
				o = &objs[VT_MAP_OBJECT(m->kind)];
				pc = m->pc + o->bias;
				uint32_t k = VT_MAP_KIND(m->kind);
				mode = k == VT_MAP_DISPLACED || k == VT_MAP_CALL_JMP ? 1 :
				       k == VT_MAP_CALL_PUSH ? 2 : 0;
				call_jmp = k == VT_MAP_CALL_JMP;
			}
			if (mode == 1 && valgrind_bt_artifact(&o->b, pc - o->bias))
				mode = 0;
			if (mode == 1 && xsave_family(&o->b, pc - o->bias))
				mode = 3;	/* skipped, counted */
			if (mode == 1 && !call_jmp && fetches_to && o == &objs[0])
				accuracy_fetch(fetches_to, pc);
			po = o;
			continue;
		}
		if (line[0] != ' ')
			continue;
		if (!mode) {
			if (started && !quiet &&
			    (line[1] == 'L' || line[1] == 'S' || line[1] == 'M'))
				count_uncompared(s, ipc, line[1] == 'M' ? 2 : 1);
			continue;
		}
		char k = line[1];
		if (sscanf(line + 2, " %llx,%llu", &a, &n) != 2)
			continue;
		if (mode == 2 && k != 'S')
			continue;
		if (mode == 3) {
			xsave_skipped++;
			continue;
		}
		acc x = { .pc = pc, .addr = a, .size = (uint32_t)n };
		/* `call [mem]` emulated in a trampoline (push the return
		 * address, then jmp [mem]) stores before it loads; the
		 * processor, and the skeleton, load the pointer first */
		if (call_jmp && k == 'L' && push_at < out->n &&
		    out->a[push_at].pc == pc && push_at == out->n - 1) {
			acc st = out->a[push_at];
			x.w = 0;
			out->a[push_at] = x;
			vec_push(*out, st);
			push_at = SIZE_MAX;
			continue;
		}
		if (k == 'M' && out->n && !out->a[out->n - 1].w && out->a[out->n - 1].pc == pc &&
		    out->a[out->n - 1].addr == x.addr && out->a[out->n - 1].size == x.size &&
		    po && valgrind_locked_artifact(&po->b, pc - po->bias)) {
			out->n--;	/* the load before valgrind's compare-and-swap */
			locked_extra++;
		}
		if (k == 'L' || k == 'M') {
			x.w = 0;
			vec_push(*out, x);
		}
		if (k == 'S' || k == 'M') {
			x.w = 1;
			vec_push(*out, x);
			if (mode == 2)
				push_at = out->n - 1;
		}
	}
	fclose(f);
	return 0;
}

typedef struct thread_trace {
	acc_vec a;
	size_t pos;
} thread_trace;

typedef VEC(thread_trace) thread_vec;

static int read_replayed(const char *path, thread_vec *threads)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	thread_trace *cur = NULL;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#') {
			thread_trace t = {0};
			vec_push(*threads, t);
			cur = &threads->a[threads->n - 1];
			continue;
		}
		unsigned long long pc, size, addr;
		char k;
		if (!cur || sscanf(line, "%llx %c %llx %llx", &pc, &k, &size, &addr) != 4)
			continue;
		acc x = { .pc = pc, .addr = addr, .size = (uint32_t)size, .w = k == 'W' };
		const cobj *o = cobj_at(cobjs, ncobjs, pc);
		if (o && xsave_family(&o->b, pc - o->bias))
			continue;
		vec_push(cur->a, x);
	}
	fclose(f);
	return 0;
}

static void print_acc(const char *who, const acc *a)
{
	const cobj *o = cobj_at(cobjs, ncobjs, a->pc);
	char in[PATH_MAX + 32] = "";
	if (o && ncobjs > 1)
		snprintf(in, sizeof in, " in %s", o->path);
	fprintf(stderr, "  %-8s pc 0x%" PRIx64 " (link 0x%" PRIx64 "%s) %c size %u addr 0x%" PRIx64
		"\n", who, a->pc, o ? a->pc - o->bias : a->pc, in, a->w ? 'W' : 'R', a->size,
		a->addr);
}

/* Whole process: how the accesses compared share out among the objects
 * (the executable first), e.g. "check: by object: grep 12000 (2.7%),
 * libc.so.6 428000 (97.2%)". */
static void print_objects(const acc_vec *oracle)
{
	size_t *n = xcalloc(ncobjs + 1, sizeof *n);
	for (size_t i = 0; i < oracle->n; i++) {
		const cobj *o = cobj_at(cobjs, ncobjs, oracle->a[i].pc);
		n[o ? (size_t)(o - cobjs) : ncobjs]++;
	}
	fprintf(stderr, "check: by object:");
	for (size_t k = 0; k <= ncobjs; k++) {
		if (k < ncobjs && !cobjs[k].open)
			continue;
		if (k == ncobjs && !n[k])
			break;
		const char *path = k < ncobjs ? cobjs[k].path : "elsewhere", *b = strrchr(path, '/');
		fprintf(stderr, "%s %s %zu (%.1f%%)", k ? "," : "", b ? b + 1 : path, n[k],
			oracle->n ? 100.0 * (double)n[k] / (double)oracle->n : 0.0);
	}
	fprintf(stderr, "\n");
	free(n);
}

static bool skippable(const il_acc *a, void *ctx)
{
	(void)ctx;
	return and_zero_elided(a);
}

/* Matches lackey's sequence as an interleaving of the thread streams
 * (interleave.h). */
static int compare(const acc_vec *oracle, thread_vec *threads)
{
	il_thread *th = xcalloc(threads->n ? threads->n : 1, sizeof *th);
	for (size_t k = 0; k < threads->n; k++)
		th[k] = (il_thread){ .a = threads->a[k].a.a, .n = threads->a[k].a.n };
	il_result r;
	il_match(oracle->a, oracle->n, th, threads->n, skippable, NULL, &r);
	free(th);
	if (!r.matched) {
		if (r.far == oracle->n) {
			fprintf(stderr, "skel check: MISMATCH: the replayed trace of thread %zu has %zu "
				"accesses more than valgrind saw; first:\n", r.thread, r.extra);
			print_acc("skel", &r.next);
		} else {
			fprintf(stderr, "skel check: MISMATCH at access %zu of %zu (oracle):\n",
				r.far + 1, oracle->n);
			for (size_t c = r.far >= 3 ? r.far - 3 : 0; c < r.far; c++)
				print_acc("matched", &oracle->a[c]);
			print_acc("valgrind", &oracle->a[r.far]);
			if (!r.ended)
				print_acc("skel", &r.next);
			else
				fprintf(stderr, "  skel     (thread %zu's trace has ended)\n", r.thread);
			fprintf(stderr, "check: %zu of %zu accesses matched before the first "
				"divergence\n", r.far, oracle->n);
		}
		if (r.backtracks)
			fprintf(stderr, "check: %zu other interleavings of the threads were tried "
				"where several could have made an access\n", r.backtracks);
		return 1;
	}
	size_t elided = r.skipped;
	size_t total = 0;
	for (size_t t = 0; t < threads->n; t++)
		total += threads->a[t].a.n;
	total -= elided;
	fprintf(stderr, "check: %zu of %zu accesses match valgrind lackey (100%%), %zu thread%s\n",
	       oracle->n, total, threads->n, threads->n == 1 ? "" : "s");
	if (r.backtracks)
		fprintf(stderr, "check: found after trying %zu other interleavings of the threads "
			"where several could have made an access\n", r.backtracks);
	if (ncobjs > 1)
		print_objects(oracle);
	if (locked_extra)
		fprintf(stderr, "check: %zu extra reads in lackey's log at locked instructions "
			"were not compared (valgrind loads, then compares and swaps; the processor "
			"reads once)\n", locked_extra);
	if (xsave_skipped)
		fprintf(stderr, "check: %" PRIu64 " accesses of xsave/xrstor instructions in lackey's "
			"log were not compared, nor skel's there (their footprint depends on the "
			"processor's state; valgrind splits it its own way)\n", xsave_skipped);
	if (elided)
		fprintf(stderr, "check: %zu reads of `and r32, [mem]` after `mov r32, 0` are not in "
			"lackey's log (valgrind's optimizer drops them; the processor makes them)\n",
			elided);
	return 0;
}

/* The executable, and each shared object the recording covered, at the
 * number its entry words and map entries carry.  0, or -1 after saying
 * why. */
static int cobjs_open(const vt_streams *s, const char *app_path, uint64_t bias)
{
	size_t n = 1;
	for (size_t i = 0; i < s->objects.n; i++)
		if ((s->objects.v[i].flags & VT_OBJ_COVERED) && s->objects.v[i].index + 1 > n &&
		    s->objects.v[i].index < PATCH_MAX_OBJECTS)
			n = s->objects.v[i].index + 1;
	cobjs = xcalloc(n, sizeof *cobjs);
	ncobjs = n;
	char err[ERR_LEN];
	if (elf_open(&cobjs[0].b, app_path, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", app_path, err);
		return -1;
	}
	cobjs[0] = (cobj){ .b = cobjs[0].b, .open = true, .bias = bias, .path = app_path };
	for (size_t i = 0; i < s->objects.n; i++) {
		const vt_object *o = &s->objects.v[i];
		if (!(o->flags & VT_OBJ_COVERED) || o->index >= n)
			continue;
		cobj *c = &cobjs[o->index];
		if (o->index && elf_open(&c->b, o->path, err) < 0) {
			fprintf(stderr, "skel: %s: %s\n", o->path, err);
			return -1;
		}
		c->open = true;
		c->batch = s->objects.batch ? s->objects.batch[i] : 0;
		c->bias = o->bias;
		c->lo = o->lo;
		c->hi = o->hi;
		if (o->index)
			c->path = o->path;
	}
	return 0;
}

static void cobjs_close(void)
{
	for (size_t i = 0; i < ncobjs; i++)
		if (cobjs[i].open)
			elf_close(&cobjs[i].b);
	free(cobjs);
	cobjs = NULL;
	ncobjs = 0;
}

/* A whole-process check compares the covered objects only: the others
 * are named. */
static void name_uncovered(const vt_streams *s)
{
	bool loader = false;	/* covered from the program's start */
	for (size_t i = 0; i < s->objects.n; i++)
		loader |= (s->objects.v[i].flags & (VT_OBJ_LOADER | VT_OBJ_COVERED)) ==
			  (VT_OBJ_LOADER | VT_OBJ_COVERED);
	for (size_t i = 0; i < s->objects.n; i++) {
		const vt_object *o = &s->objects.v[i];
		const char *base = strrchr(o->path, '/');
		base = base ? base + 1 : o->path;
		if (loader && (o->flags & (VT_OBJ_LOADER | VT_OBJ_COVERED)) == VT_OBJ_LOADER) {
			if (uncompared && i < nuncompared)
				fprintf(stderr, "check: not compared: the loader's %" PRIu64
					" accesses before the program started: %s\n",
					uncompared[i], o->path);
			continue;
		}
		if (!(o->flags & (VT_OBJ_COVERED | VT_OBJ_RECORDER)) && o->path[0] &&
		    strncmp(base, "linux-vdso", 10))
		{
			if (uncompared && i < nuncompared)
				fprintf(stderr, "check: not covered, its %" PRIu64
					" accesses not compared: %s\n", uncompared[i], o->path);
			else
				fprintf(stderr, "check: not covered, its accesses not "
					"compared: %s\n", o->path);
		}
	}
	free(uncompared);
	uncompared = NULL;
	nuncompared = 0;
}

/* A number the approximate skeleton defines (skelgen.c, emit_dispatch):
 * "const TYPE NAME = VALUE;", `none` when it has none. */
static double skeleton_number(const char *skel, const char *decl, double none)
{
	size_t len;
	char *text = read_text(skel, &len);
	const char *p = text ? strstr(text, decl) : NULL;
	double v = p ? strtod(p + strlen(decl), NULL) : none;
	free(text);
	return v;
}

/* --chunk, else the approximate skeleton's own, else a cache line */
static uint64_t chunk_of(const char *skel, uint64_t given)
{
	uint64_t c = given ? given
			   : (uint64_t)skeleton_number(skel, "\nconst unsigned long long sk_chunk = ", 0);
	return c ? c : 64;
}

/* The oracle against the replayed trace at chunk granularity, the
 * paper's MA and AIA (accuracy.c).  0, or 1 when the trace is wrong. */
static int check_accuracy(accuracy *x, const acc_vec *oracle, const char *trace, bool stats)
{
	for (size_t i = 0; i < oracle->n; i++)
		accuracy_oracle(x, oracle->a[i].pc, oracle->a[i].addr);
	if (accuracy_replayed(x, trace) < 0) {
		fprintf(stderr, "skel check: cannot read %s\n", trace);
		return 1;
	}
	return accuracy_print(x, stats);
}

/* The replay, its trace file bounded: a replay that runs away (a loop
 * the skeleton cannot leave: endless at run time, left by a handler it
 * cannot place) wrote until the disk was full (46 GB of trace for a
 * program lackey saw make 4 M accesses).  Its text takes about as many
 * bytes an access as lackey's log, which also has a line per instruction:
 * four times the log, and 256 MB, is more than any true replay writes.
 * The status as run_wait's; 128 + SIGXFSZ at the bound. */
static int replay_bounded(char **argv, const char *log)
{
	struct stat ls;
	unsigned long long bound = 256ull << 20;
	if (stat(log, &ls) == 0)
		bound += 4 * (unsigned long long)ls.st_size;
	int st = run_wait_bounded(argv, NULL, bound);
	if (st == 128 + SIGXFSZ)
		fprintf(stderr, "skel check: the replay's trace reached %llu bytes, four times "
			"lackey's log %s: it ran away (a loop it could not leave: an endless loop "
			"the program left by a signal the replay could not place); stopped, "
			"nothing compared\n", bound, log);
	return st;
}

/* The run under lackey, watched: its logs (a line per instruction, some
 * 60 bytes per native nanosecond) filled a 252 GB disk in two hours for a
 * program that never ended under valgrind.  It is stopped when the
 * directory's file system has lost half the space free at the start. */
typedef struct disk_watch {
	const char *dir;
	const char *app;
	unsigned long long start;	/* bytes free at the start */
	bool fired;
} disk_watch;

static unsigned long long disk_free(const char *dir)
{
	struct statvfs v;
	if (statvfs(dir, &v) < 0)
		return 0;
	return (unsigned long long)v.f_bavail * v.f_frsize;
}

static bool disk_over(void *arg)
{
	disk_watch *w = arg;
	unsigned long long now = disk_free(w->dir);
	if (!w->start || !now || now >= w->start / 2)
		return false;
	fprintf(stderr, "skel check: stopped %s: the lackey logs and value files in %s "
		"have taken half of the %.1f GB the disk had free (%.1f GB left); a run "
		"that long under valgrind cannot be checked there (TMPDIR names another "
		"directory); nothing compared\n", w->app, w->dir, w->start / 1e9, now / 1e9);
	w->fired = true;
	return true;
}

/* One process image: its replay (--pid for a forked child, whose log
 * begins after the fork) against its lackey log.  0 exact, 1 not, 2 no
 * replay at all. */
static int check_process(char *bin, const char *vals, const vt_streams *s, const char *log,
			 const char *trace, uint32_t pid)
{
	char pidarg[16];
	snprintf(pidarg, sizeof pidarg, "%u", pid);
	char *rav[] = { bin, (char *)vals, "-o", (char *)trace, "--quiet", "--unsummed",
			pid ? "--pid" : NULL, pidarg, NULL };
	int rr = replay_bounded(rav, log);
	if (rr == 2)
		return 2;
	if (rr == 128 + SIGXFSZ)
		return 1;
	int rc = 1;
	acc_vec oracle = {0};
	thread_vec threads = {0};
	int lr = read_lackey(log, s, cobjs, ncobjs, pid != 0, &oracle);
	if (lr == -1 || (lr == 0 && !fetches_to && read_replayed(trace, &threads) < 0)) {
		fprintf(stderr, "skel check: cannot read %s or %s\n", log, trace);
	} else if (lr == 0 && fetches_to) {
		rc = check_accuracy(fetches_to, &oracle, trace, acc_stats) || rr != 0;
	} else if (lr == 0) {
		rc = compare(&oracle, &threads) || rr != 0;
		if (rc && skeleton_number(check_skel, "\nconst double sk_omega = ", -1) >= 0)
			fprintf(stderr, "skel check: %s is an approximate skeleton (skel gen --omega): "
				"its trace is not meant to be exact; --accuracy measures it\n",
				check_skel);
	}
	if (rr == 3)
		fprintf(stderr, "skel check: the replay desynchronised (see above)\n");
	for (size_t t = 0; t < threads.n; t++)
		free(threads.a[t].a.a);
	free(threads.a);
	free(oracle.a);
	return rc;
}

/* A process image of the recording (formats.md, VT_PROCESS): its value
 * file, and the file whose map, objects and load bias are its address
 * space's (its own; a forked child's parent's).  Its lackey log is
 * lackey.PID.N.log (driver/run.c: SKEL_EXEC names N). */
typedef struct image {
	char vals[PATH_MAX];
	char space[PATH_MAX];
	uint32_t pid, n;
	bool forked;
} image;

typedef VEC(image) image_vec;

/* The images x's file names: the processes it forked, the image its
 * exec started if that one recorded (the same program); an exec of
 * another program is said. */
static void images_after(image_vec *q, const image *x, const vt_streams *s, const char *root)
{
	for (size_t i = 0; i < s->nforks; i++) {
		const struct vt_fork_at *f = &s->forks[i];
		image c = { .pid = f->f.pid, .n = x->n, .forked = true };
		if (!c.pid)	/* forked inside libc: its file names its parent */
			c.pid = vt_find_child(root, s->process.pid, f->thread, f->f.word);
		snprintf(c.vals, sizeof c.vals, "%s.%u", root, c.pid);
		snprintf(c.space, sizeof c.space, "%s", x->space);
		vec_push(*q, c);
	}
	if (s->exec.stage != VT_EXEC_CALLED)
		return;
	image e = { .pid = x->pid, .n = x->n + 1 };
	snprintf(e.vals, sizeof e.vals, "%s.%u.exec%u", root, e.pid, e.n);
	snprintf(e.space, sizeof e.space, "%s", e.vals);
	if (access(e.vals, R_OK) == 0)
		vec_push(*q, e);
	else
		fprintf(stderr, "check: process %u exec'd %s, not the program: not compared\n",
			x->pid, s->exec.path);
}

/* Image x against its log: 0, 1, or 2 (could not be compared). */
static int check_image(char *bin, const image *x, const char *root, const char *app_path,
		       const char *dir, const char *trace)
{
	char err[FMT_ERR_LEN], log[PATH_MAX];
	snprintf(log, sizeof log, "%s/lackey.%u.%u.log", dir, x->pid, x->n);
	vt_streams s;
	if (vtrace_load_streams(x->space, &s, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", x->space, err);
		return 2;
	}
	if (vt_maps_resolve(&s, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", x->space, err);
		vtrace_streams_free(&s);
		return 2;
	}
	if (s.nmap)
		qsort(s.map, s.nmap, sizeof *s.map, cmp_map);
	vtrace vt;
	uint64_t bias = 0;
	if (vtrace_open(&vt, x->space, err) == 0) {
		bias = vt.header.image_base;
		vtrace_close(&vt);
	}
	int rc = 2;
	/* --accuracy: the program's first image is measured */
	if (acc_mode && !x->forked && !x->n &&
	    !(fetches_to = accuracy_new(app_path, bias, chunk_of(check_skel, acc_chunk), err)))
		fprintf(stderr, "skel: %s: %s\n", app_path, err);
	else if (cobjs_open(&s, app_path, bias) == 0) {
		rc = check_process(bin, x->forked ? root : x->vals, &s, log, trace,
				   x->forked ? x->pid : 0);
		if (ncobjs > 1)
			name_uncovered(&s);
	}
	accuracy_free(fetches_to);
	fetches_to = NULL;
	cobjs_close();
	vtrace_streams_free(&s);
	return rc;
}

/* The program's process, then every image after it (forked processes at
 * any depth, images exec'd), each against its own lackey log, until the
 * first that differs, which is named. */
static int check_images(char *bin, const char *root, uint32_t pid, const char *app_path,
			const char *dir, const char *trace)
{
	image_vec q = {0};
	image first = { .pid = pid };
	snprintf(first.vals, sizeof first.vals, "%s", root);
	snprintf(first.space, sizeof first.space, "%s", root);
	vec_push(q, first);
	int rc = 0;
	for (size_t k = 0; k < q.n && !rc; k++) {
		image x = q.a[k];	/* q may move */
		char err[FMT_ERR_LEN];
		vt_streams s;
		if (vtrace_load_streams(x.vals, &s, err) < 0) {
			fprintf(stderr, "skel check: process %u: %s: %s (its trace is missing)\n",
				x.pid, x.vals, err);
			rc = 1;
			break;
		}
		if (k)
			fprintf(stderr, "check: process %u (%s):\n", x.pid,
				x.forked ? "forked" : "exec'd image of the program");
		rc = check_image(bin, &x, root, app_path, dir, trace);
		if (acc_mode) {
			if (s.nforks || s.exec.stage)
				fprintf(stderr, "check: --accuracy measures the program's first "
					"process only; the others are not measured\n");
			vtrace_streams_free(&s);
			break;
		}
		if (rc == 1 && k)
			fprintf(stderr, "skel check: process %u (%s) differs (above)\n", x.pid,
				x.vals);
		images_after(&q, &x, &s, root);
		vtrace_streams_free(&s);
	}
	free(q.a);
	return rc;
}

/* The logs of the program's processes, lackey.PID.N.log, and the value
 * files of the ones it forked or exec'd, app.vals.PID[.execN]. */
static void remove_children_logs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "lackey.", 7) || !strncmp(e->d_name, "app.vals.", 9)) {
			char p[PATH_MAX];
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
}

int cmd_check(int argc, char **argv)
{
	vt_unsummed_ok = 1;	/* the value files are its own run's (run.c) */
	int n = argc;
	char **app = NULL;
	const char *skel = NULL;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			n = i;
			app = i + 1 < argc ? argv + i + 1 : NULL;
			break;
		}
	bool whole = skel_scope_default(), scope_arg = false, accuracy_mode = false, stats = false;
	const char *omega = NULL, *chunk_arg = NULL;
	for (int i = 1; i < n; i++) {
		if (skel_scope_arg(argv[i], &whole)) {
			scope_arg = true;
			continue;
		}
		if (!strcmp(argv[i], "--accuracy") || !strcmp(argv[i], "--stats")) {
			*(argv[i][2] == 'a' ? &accuracy_mode : &stats) = true;
			continue;
		}
		if ((!strcmp(argv[i], "--omega") || !strcmp(argv[i], "--chunk")) && i + 1 < n) {
			*(argv[i][2] == 'o' ? &omega : &chunk_arg) = argv[i + 1];
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			return skel_unknown_option("check", argv[i]);
		skel = argv[i];
	}
	if (!app) {
		fprintf(stderr, "skel: check: usage: skel check [--main-only] [--accuracy "
			"[--stats] [--omega W] [--chunk C]] [SKEL] -- APP [ARGS...]\n");
		return 2;
	}
	if ((stats || omega || chunk_arg) && !accuracy_mode)
		return skel_usage_error("check: --stats, --omega and --chunk go with --accuracy");
	if (omega && skel)
		return skel_usage_error("check: --omega makes the skeleton: not with SKEL");
	/* accuracy is measured on the executable's accesses (its blocks
	 * against lackey's): its skeleton is the executable's unless asked */
	if (accuracy_mode && !scope_arg)
		whole = false;
	if (scope_arg && skel)
		return skel_usage_error("check: SKEL decides what is traced (skel gen --main-only "
					"makes an executable-only one): --main-only and "
					"--whole-process are not for SKEL");
	uint64_t chunk = 0;
	if (chunk_arg) {
		char *end;
		chunk = strtoull(chunk_arg, &end, 0);
		if (*end || !chunk || (chunk & (chunk - 1)))
			return skel_usage_error("check: --chunk takes a power of two (bytes), not 0");
	}
	char app_path[PATH_MAX];
	if (skel_find_app(app[0], app_path) < 0 || skel_refuse_static(app_path))
		return 1;
	binary lib;
	char lerr[ERR_LEN];
	if (elf_open(&lib, app_path, lerr) < 0)
		return skel_fail(app_path, lerr);
	int refused = skel_refuse_library(&lib, app_path);
	elf_close(&lib);
	if (refused)
		return 1;
	/* the lackey log alone can take gigabytes: the directory and its
	 * files go on every way out, a signal's included (child.c) */
	bool keep = getenv("SKEL_KEEP") != NULL;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/skel-check-XXXXXX", tmp_dir());
	if (!tmp_mkdtemp(dir))
		return skel_fail(dir, strerror(errno));
	char gen_path[PATH_MAX], vals[PATH_MAX], logs[PATH_MAX], trace[PATH_MAX];
	snprintf(gen_path, sizeof gen_path, "%s/skel.c", dir);
	snprintf(vals, sizeof vals, "%s/app.vals", dir);
	/* one log per process image: a forked child is traced by valgrind
	 * too, an exec'd image as well (--trace-children=yes), and their
	 * lines must not mix with the program's; SKEL_EXEC is the image's
	 * number (driver/run.c, replay/rec_proc.c) */
	snprintf(logs, sizeof logs, "%s/lackey.%%p.%%q{SKEL_EXEC}.log", dir);
	snprintf(trace, sizeof trace, "%s/trace.txt", dir);
	char *files[] = { gen_path, vals, trace };
	if (keep)	/* a ^C keeps them too */
		tmp_untrack(dir);
	else
		for (size_t i = 0; i < sizeof files / sizeof *files; i++)
			tmp_track(files[i]);
	int rc = 1;
	if (!skel) {
		char self[PATH_MAX];
		ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
		self[sl > 0 ? sl : 0] = 0;
		char *gav[12] = { self, "gen", app_path, "-o", gen_path }, **ga = gav + 5;
		*ga++ = whole ? "--whole-process" : "--main-only";
		if (omega) {
			*ga++ = "--omega";
			*ga++ = (char *)omega;
			*ga++ = "--chunk";
			*ga++ = (char *)(chunk_arg ? chunk_arg : "64");
		}
		if (run_wait(gav, NULL) != 0)
			goto out;
		skel = gen_path;
	}
	char *bin = compile_skeleton(skel);
	if (!bin)
		goto out;
	char patch_path[PATH_MAX];
	pid_t pid = record_start(skel, vals, app_path, app, logs, patch_path);
	disk_watch dw = { dir, app[0], disk_free(dir), false };
	int st = pid < 0 ? -1 : child_wait_watched(pid, disk_over, &dw);
	if (pid >= 0)
		tmp_remove(patch_path);
	/* the user's ^C, or the disk: no check */
	if (st < 0 || child_interrupted() || dw.fired) {
		free(bin);
		goto out;
	}
	if (st >= 128)
		fprintf(stderr, "skel check: %s was killed by signal %d; checking what it did\n",
			app[0], st - 128);
	/* valgrind runs as the program's process: its pid is the program's */
	acc_mode = accuracy_mode;
	acc_stats = stats;
	acc_chunk = chunk;
	check_skel = skel;
	rc = check_images(bin, vals, (uint32_t)pid, app_path, dir, trace) != 0;
	free(bin);
out:
	if (!keep) {
		for (size_t i = 0; i < sizeof files / sizeof *files; i++)
			tmp_remove(files[i]);
		remove_children_logs(dir);
		tmp_remove(dir);
	} else {
		fprintf(stderr, "skel check: files kept in %s\n", dir);
	}
	return rc;
}
