/* rec.c — the recorder: a library preloaded into the program that applies a
 * patch (format.h) before main and writes the value trace.
 *
 *   SKEL_PATCH=app.patch SKEL_VALUES=app.vals LD_PRELOAD=libskelrec.so app
 *
 * Order of business (rec_init, a constructor, so it runs before the
 * executable's own initialisers and _start):
 *   1. both variables set, the patch set readable, and the running
 *      executable the one its section 0 names (build-id from the loaded
 *      program headers, or FNV-1a of /proc/self/exe) — otherwise do
 *      nothing at all: the library is inherited by every process the
 *      program starts, valgrind's launcher included (PLATFORM-NOTES.md,
 *      "Runtime patching"); sections 1.. are found among the loaded shared
 *      objects by identity, a missing one is no error;
 *   2. plan, per covered object: each probed pc gets a span of whole
 *      instructions of its block, >= 5 bytes, for a jmp rel32; int3 where
 *      no such span exists;
 *   3. emit trampolines into pages mapped within +-2 GiB of that object;
 *   4. open the value trace (header, maps, OBJECTS), install signal
 *      handlers, then rewrite the texts with raw system calls only (one of
 *      them may be libc's), and call rec_started, the marker.
 * Objects mapped later by dlopen are patched when it returns
 * (rec_late_objects).
 * Any failure after step 1 is reported ("skel-rec: ...") and ends the
 * program with status 125: a half-recorded run is worse than none.
 *
 * Hot path (per recorded value, no system call, no flags touched):
 *     mov rdx, fs:[rec_cursor]; mov [rdx], rax; lea rdx, [rdx+8];
 *     mov fs:[rec_cursor], rdx
 * rec_cursor is in rec_t, an initial-exec TLS variable, so its fs offset
 * is fixed.  Every probe stores a whole word (a branch outcome 0 or 1, a
 * difference: rec_emit.c, rec_minus); the flush packs them into few bytes
 * (format.h, vt_pack), off the hot path.
 * Each thread's buffer is followed by a PROT_NONE guard page; the store
 * that hits it faults, and the SIGSEGV handler flushes the buffer, resets
 * the cursor (TLS and rdx in the ucontext) and lets the store retry.
 *
 * Trampolines are flag-free: `lea rsp, [rsp-128]` steps over the red zone
 * (pushf would cost 5x, PLATFORM-NOTES), rax and rdx are saved by push and
 * restored by pop; every other register and the flags are never written. */
#include "replay/rec.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

rec_state R = { .fd = -1 };

/* ------------------------------------------------------------- messages */

void rec_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "skel-rec: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, n);
	(void)w;
}

__attribute__((noreturn)) void rec_die(const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	rec_say("%s; not running the program half-recorded", buf);
	_exit(125);
}
/* ---------------------------------------------------------- objects */

/* One object as dl_iterate_phdr lists it. */
typedef struct rec_seen {
	rec_image img;
	uint32_t section;	/* the section covering it, or VT_NO_OBJECT */
	uint32_t flags;		/* VT_OBJ_* */
	int hashed;		/* 1: hash computed, -1: could not be */
	uint64_t hash;
} rec_seen;

typedef struct rec_scan {
	rec_seen *v;
	size_t n, cap;
} rec_scan;

/* The objects at the last scan (start-up, then each dlopen): a later
 * scan's new objects are those not in it. */
static rec_scan rec_last;
static int rec_section_found[PATCH_MAX_OBJECTS];

/* The marker: skel check compares valgrind's accesses between the first
 * two runs of this function: right after every covered object is
 * patched, and at the recorder's end (rec_finish), after which nothing is
 * recorded.  Its one volatile load makes sure it has an instruction of its
 * own. */
static volatile int rec_started_word;
__attribute__((noinline, noclone)) void rec_started(void)
{
	(void)rec_started_word;
}

/* The second marker: objects a dlopen mapped (or the loader, at the
 * program's start) are patched between two runs of it (the OBJECTS chunk
 * that names them carries its address): skel check skips what runs in
 * between (the recorder's planning, unrecorded) and compares them from
 * the second run on.  What ran in them before (their constructors, which
 * dlopen runs before it returns) is not recorded. */
static volatile int rec_late_word;
__attribute__((noinline, noclone)) void rec_late_patched(void)
{
	(void)rec_late_word;
}

static void rec_image_fill(const struct dl_phdr_info *info, rec_image *img)
{
	*img = (rec_image){ .bias = info->dlpi_addr, .lo = UINT64_MAX,
			    .path = info->dlpi_name ? info->dlpi_name : "",
			    .phdr = info->dlpi_phdr };
	img->bias = info->dlpi_addr;
	img->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = img->bias + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			if (lo < img->lo)
				img->lo = lo;
			if (lo + ph->p_memsz > img->hi)
				img->hi = lo + ph->p_memsz;
			if ((ph->p_flags & PF_X) && img->nx < REC_MAX_SEGS) {
				img->xlo[img->nx] = lo;
				img->xhi[img->nx] = lo + ph->p_memsz;
				img->xprot[img->nx++] =
					(ph->p_flags & PF_R ? PROT_READ : 0) |
					PROT_EXEC;
			}
		} else if (ph->p_type == PT_NOTE && !img->build_id) {
			size_t align = ph->p_align == 8 ? 8 : 4;
			const uint8_t *p = (const uint8_t *)lo;
			const uint8_t *end = p + ph->p_memsz;
			while (end - p >= 12) {
				const ElfW(Nhdr) *nh = (const void *)p;
				const uint8_t *name = p + 12;
				const uint8_t *desc = name +
					((nh->n_namesz + align - 1) & -align);
				if (nh->n_type == NT_GNU_BUILD_ID &&
				    nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
				    desc + nh->n_descsz <= end) {
					img->build_id = desc;
					img->build_id_len = nh->n_descsz;
					break;
				}
				p = desc + ((nh->n_descsz + align - 1) & -align);
			}
		}
	}
}

static int rec_scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	rec_scan *s = data;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		rec_seen *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return 1;
		s->v = v;
		s->cap = cap;
	}
	rec_seen *o = &s->v[s->n++];
	*o = (rec_seen){ .section = VT_NO_OBJECT };
	rec_image_fill(info, &o->img);
	if ((uint64_t)rec_started >= o->img.lo && (uint64_t)rec_started < o->img.hi)
		o->flags |= VT_OBJ_RECORDER;
	if (o->img.bias && o->img.bias == getauxval(AT_BASE))
		o->flags |= VT_OBJ_LOADER;
	return 0;
}

/* The first entry is the executable. */
static void rec_scan_objects(rec_scan *s)
{
	*s = (rec_scan){ 0 };
	dl_iterate_phdr(rec_scan_cb, s);
	if (s->n)
		s->v[0].flags |= VT_OBJ_MAIN;
}

static int rec_file_hash(const char *path, uint64_t *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	static uint8_t buf[1 << 16];
	uint64_t x = SKEL_FNV1A64_INIT;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		x = skel_fnv1a64(x, buf, (size_t)n);
	close(fd);
	*h = x;
	return n < 0 ? -1 : 0;
}

/* Whether object o has the identity section p names.  A content hash is
 * computed only when a section asks for one, once per object. */
static int rec_matches(rec_seen *o, const patch *p)
{
	if (p->id_kind == SKEL_ID_BUILDID)
		return o->img.build_id && o->img.build_id_len == p->id_len &&
		       !memcmp(o->img.build_id, p->id, p->id_len);
	if (!o->hashed) {
		const char *path = o->flags & VT_OBJ_MAIN ? "/proc/self/exe"
							  : o->img.path;
		o->hashed = *path && !rec_file_hash(path, &o->hash) ? 1 : -1;
	}
	if (o->hashed < 0)
		return 0;
	uint8_t id[SKEL_ID_MAX];
	uint32_t len;
	skel_id_from_hash(o->hash, id, &len);
	return len == p->id_len && !memcmp(id, p->id, len);
}

/* Sections 1.. among the objects of s not covered yet (the recorder never
 * covers itself); each found one gets the next slot of R.obj from `slot`,
 * counted in R.nobj only once its trampolines exist.  Returns the slots
 * used. */
static uint32_t rec_sections_match(rec_scan *s, const int *isnew, uint32_t slot)
{
	uint32_t at = slot;
	for (size_t i = 0; i < s->n; i++) {
		rec_seen *o = &s->v[i];
		if ((isnew && !isnew[i]) || (o->flags & (VT_OBJ_RECORDER | VT_OBJ_MAIN)) ||
		    ((o->flags & VT_OBJ_LOADER) && !R.loader_due))
			continue;
		for (uint32_t k = 1; k < R.set.n; k++) {
			if (rec_section_found[k] || !rec_matches(o, &R.set.obj[k]))
				continue;
			rec_section_found[k] = 1;
			o->section = k;
			o->flags |= VT_OBJ_COVERED;
			R.obj[at++] = (rec_object){ .img = o->img,
						    .patch = &R.set.obj[k],
						    .index = k,
						    .loader = !!(o->flags & VT_OBJ_LOADER) };
			break;
		}
	}
	return at - slot;
}

const rec_object *rec_object_at(uint64_t pc)
{
	uint32_t n = atomic_load_explicit(&R.nobj, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (pc >= R.obj[i].img.lo && pc < R.obj[i].img.hi)
			return &R.obj[i];
	return NULL;
}

int rec_map_in_order(const vt_map_entry *m, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (m[i].tramp < m[i - 1].tramp + m[i - 1].len)
			return 0;
	return 1;
}

/* The piece of o's trampolines at pc that is one of the program's own
 * instructions, or NULL (recorder code, or none). */
static const vt_map_entry *rec_map_find(const rec_object *o, uint64_t pc)
{
	size_t lo = 0, hi = o->nmap;
	pc -= o->map_base;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const vt_map_entry *m = &o->map[mid];
		if (pc < m->tramp)
			hi = mid;
		else if (pc - m->tramp >= m->len)
			lo = mid + 1;
		else
			return VT_MAP_KIND(m->kind) == VT_MAP_PROBE ? NULL : m;
	}
	return NULL;
}

uint64_t rec_displaced_pc(uint64_t pc, uint32_t *object)
{
	*object = 0;
	uint32_t n = atomic_load_explicit(&R.nobj, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		const rec_object *o = &R.obj[i];
		const vt_map_entry *m = pc >= o->code_lo && pc < o->code_hi
					? rec_map_find(o, pc) : NULL;
		if (m) {
			*object = o->index;
			return m->pc;
		}
	}
	return 0;
}

uint64_t rec_text_end(const rec_image *img, uint64_t pc)
{
	for (int i = 0; i < img->nx; i++)
		if (pc >= img->xlo[i] && pc < img->xhi[i])
			return img->xhi[i];
	return pc;
}

int rec_in_text(const rec_image *img, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < img->nx; i++)
		if (lo >= img->xlo[i] && hi <= img->xhi[i])
			return 1;
	return 0;
}

/* ------------------------------------------------------------ patching */

/* libc's signal return trampoline (__restore_rt), which the kernel
 * enters at the end of every handler: the recorder never rewrites it.  Its
 * unwind entry starts one byte early (the convention that lets unwinders
 * step back into a signal frame), which an analysis taking unwind entries
 * for routine starts may read as code.  libc's sigaction sets it as the
 * kernel's sa_restorer: setting SIGSEGV's action to itself and reading
 * the kernel's back gives it. */
static uint64_t rec_restorer(void)
{
	struct sigaction cur;
	struct { void *h; unsigned long flags; void *restorer; uint64_t mask; } k;
	if (rec_sys_sigaction(SIGSEGV, NULL, &cur) ||
	    rec_sys_sigaction(SIGSEGV, &cur, NULL) ||
	    rec_syscall6(SYS_rt_sigaction, SIGSEGV, 0, (long)&k, 8, 0, 0))
		return 0;
	return (uint64_t)k.restorer;
}

/* A probe on an RTM instruction (xbegin, xabort, xend: libc's lock
 * elision) on a CPU without RTM: the instruction raises #UD here, and
 * libc never runs it on such a CPU; the recorder could not observe xbegin's
 * outcome anyway (an abort takes the branch long after the instruction).
 * Left out, said with SKEL_VERBOSE.  (The analysis asks for `taken` at
 * xbegin and `target` at xabort.) */
static int rec_unreachable(const patch_probe *p)
{
	ZydisDecodedInstruction in;
	if (R.restorer >= p->block_start && R.restorer < p->block_end) {
		R.nunreachable++;
		if (R.verbose)
			rec_say("patch line %u: probe in the block of the signal "
				"return trampoline left out", p->line);
		return 1;
	}
	if (R.have_rtm ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec, NULL,
			(const void *)p->pc, p->block_end - p->pc, &in)) ||
	    (in.mnemonic != ZYDIS_MNEMONIC_XBEGIN &&
	     in.mnemonic != ZYDIS_MNEMONIC_XABORT &&
	     in.mnemonic != ZYDIS_MNEMONIC_XEND))
		return 0;
	R.nunreachable++;
	if (R.verbose)
		rec_say("patch line %u: probe on %s left out: this CPU has no RTM",
			p->line, ZydisMnemonicGetString(in.mnemonic));
	return 1;
}

/* Direct jump and call targets of a library's text, by linear sweep.  A
 * library's routines jump into each other's middles (libc's mempcpy into
 * memmove), which the analysis's blocks, made per routine, may not show;
 * a span across such a target would be entered in its middle.  Blocks are
 * cut at every target here (rec_block_clip), and a span may cross one
 * only where every branch to it can be sent into the trampoline
 * (rec_plan_landings: what the branches are, and what comes before). */
static int rec_branch_cmp(const void *a, const void *b)
{
	const rec_branch *x = a, *y = b;
	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;
}

static void rec_targets_scan(const rec_image *img, rec_targets *t)
{
	*t = (rec_targets){ 0 };
	for (int i = 0; i < img->nx; i++) {
		uint8_t prev[4] = { 0 };	/* the last lengths, newest first */
		for (uint64_t a = img->xlo[i]; a < img->xhi[i];) {
			ZydisDecodedInstruction in;
			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec,
					NULL, (const void *)a, img->xhi[i] - a, &in))) {
				a++;
				memset(prev, 0, sizeof prev);
				continue;
			}
			uint64_t next = a + in.length;
			if ((in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
			    (in.meta.category == ZYDIS_CATEGORY_COND_BR ||
			     in.meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
			     in.meta.category == ZYDIS_CATEGORY_CALL) &&
			    in.raw.imm[0].is_relative) {
				if (t->n == t->cap) {
					t->cap = t->cap ? 2 * t->cap : 4096;
					t->v = realloc(t->v, t->cap * sizeof *t->v);
					if (!t->v)
						rec_die("out of memory");
				}
				rec_branch *b = &t->v[t->n++];
				*b = (rec_branch){ next + (uint64_t)in.raw.imm[0].value.s,
					a, in.length,
					in.meta.category == ZYDIS_CATEGORY_CALL, { 0 } };
				memcpy(b->prev, prev, sizeof prev);
			}
			memmove(prev + 1, prev, sizeof prev - 1);
			prev[0] = in.length;
			a = next;
		}
	}
	qsort(t->v, t->n, sizeof *t->v, rec_branch_cmp);
}

/* The first branch to a target > pc (t->n if none). */
size_t rec_targets_after(const rec_targets *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].target <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rec_is_target(const rec_targets *t, uint64_t pc)
{
	size_t k = rec_targets_after(t, pc - 1);
	return k < t->n && t->v[k].target == pc;
}

static void rec_block_clip(const rec_targets *t, patch_probe *p)
{
	size_t lo = rec_targets_after(t, p->pc);
	uint64_t e = lo < t->n && t->v[lo].target < p->block_end ? t->v[lo].target : 0;
	uint64_t b = lo > 0 && t->v[lo - 1].target > p->block_start
			? t->v[lo - 1].target : 0;
	if (!e && !b)
		return;
	/* a target that is no instruction start of the block comes from
	 * bytes the sweep misread: ignored */
	int eok = 0, bok = 0;
	for (uint64_t a = p->block_start; a < p->block_end;) {
		ZydisDecodedInstruction in;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec, NULL,
				(const void *)a, p->block_end - a, &in)))
			return;
		eok |= a == e;
		bok |= a == b;
		a += in.length;
	}
	if (eok)
		p->block_end = e;
	if (bok)
		p->block_start = b;
}

static rec_probe *rec_probes_load(const rec_object *o, size_t *np,
				  rec_targets *tg)
{
	const patch *pt = o->patch;
	size_t n = pt->nprobes, kept = 0;
	rec_probe *pv = calloc(n ? n : 1, sizeof *pv);
	*tg = (rec_targets){ 0 };
	if (!pv)
		rec_die("out of memory");
	if (o->index)
		rec_targets_scan(&o->img, tg);
	for (size_t i = 0; i < n; i++) {
		patch_probe p = pt->probes[i];
		p.pc += o->img.bias;
		p.block_start += o->img.bias;
		p.block_end += o->img.bias;
		if (!rec_in_text(&o->img, p.block_start, p.block_end))
			rec_die("patch line %u: block [%" PRIx64 ", %" PRIx64
				") is not in the text of %s", p.line,
				pt->probes[i].block_start, pt->probes[i].block_end,
				o->index ? o->img.path : "the executable");
		if (rec_unreachable(&p))
			continue;
		if (o->index)
			rec_block_clip(tg, &p);
		pv[kept++] = (rec_probe){ p, (uint32_t)i };
	}
	n = kept;
	*np = n;
	size_t sorted = 1;	/* skel gen writes them in order mostly */
	while (sorted < n && rec_probe_cmp(&pv[sorted - 1], &pv[sorted]) <= 0)
		sorted++;
	if (sorted < n)
		qsort(pv, n, sizeof *pv, rec_probe_cmp);
	return pv;
}

/* Plans and emits object o's trampolines, or reads them from its plan
 * file (`cached`; later than start-up, rec_late_objects runs it with the
 * thread's words going nowhere, libc being patched); nothing is written
 * into its text yet. */
static void rec_object_prepare(rec_object *o, rec_pending *pd,
			       rec_int3_list *i3, int cached)
{
	R.cur = o;
	*pd = (rec_pending){ 0 };	/* rec_late_objects' are on its stack */
	rec_sig_hook_plan(o, pd);
	cached = cached && rec_cache_on();
	if (cached && !R.plan_check && rec_plan_read(pd, i3) == 0) {
		R.cur = NULL;
		return;
	}
	o->patch = rec_section_probes(o->index);
	size_t nn = R.nneighbour, nu = R.nunreachable, nr = R.nredirect;
	size_t np;
	rec_targets tg;
	rec_probe *pv = rec_probes_load(o, &np, &tg);
	rec_site *sv;
	size_t ns;
	rec_plan(pv, np, &sv, &ns);
	rec_plan_enters(o->patch, &sv, &ns);
	rec_plan_landings(&tg, &sv, &ns);
	free(tg.v);
	uint64_t *tramp = calloc(ns ? ns : 1, sizeof *tramp);
	rec_int3 *v = realloc(i3->v, (i3->n + ns + 1) * sizeof *v);
	if (!tramp || !v)
		rec_die("out of memory");
	i3->v = v;
	rec_emit e;
	pd->w = rec_mmap_raw((ns ? ns : 1) * sizeof *pd->w);
	if (!pd->w)
		rec_die("out of memory");
	rec_emit_all(pv, sv, ns, &e, tramp, i3->v, &i3->n, pd->w);
	pd->nw = ns;
	pd->map = e.map;
	pd->nmap = e.nmap;
	R.nsites += ns;
	R.nprobes += np;
	R.plans_made++;
	if (cached && R.plan_check) {
		rec_plan_check(&e, pd);
	} else if (cached && !e.nocache) {
		size_t counts[5] = { ns, np, R.nneighbour - nn,
				     R.nunreachable - nu, R.nredirect - nr };
		rec_plan_write(&e, pd, sv, counts);
	}
	for (int k = 0; k < REC_NRELOC; k++)
		free(e.rel[k].off);
	free(tramp), free(sv), free(pv);
	R.cur = NULL;
}

static int rec_int3_cmp(const void *a, const void *b)
{
	const rec_int3 *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* The SIGTRAP handler's table, old sites and new, replaced in one store.
 * An old table is not freed: a handler may still be reading it. */
static void rec_int3_publish(rec_int3_list *i3)
{
	if (!i3->n)
		return;
	rec_int3_table *old = atomic_load(&R.int3);
	size_t n = (old ? old->n : 0) + i3->n;
	rec_int3_table *t = malloc(sizeof *t + n * sizeof *t->v);
	if (!t)
		rec_die("out of memory");
	t->n = n;
	if (old)
		memcpy(t->v, old->v, old->n * sizeof *t->v);
	memcpy(t->v + n - i3->n, i3->v, i3->n * sizeof *t->v);
	qsort(t->v, n, sizeof *t->v, rec_int3_cmp);
	R.nint3 = n;
	atomic_store_explicit(&R.int3, t, memory_order_release);
}

/* A failure while some text is writable: no libc (it may be the text
 * being written), a fixed message and the exit status of rec_die. */
__attribute__((noreturn)) static void rec_text_fail(void)
{
	static const char msg[] = "skel-rec: cannot change the protection of "
		"a text segment; not running the program half-recorded\n";
	rec_syscall3(SYS_write, 2, (long)msg, sizeof msg - 1);
	for (;;)
		rec_syscall3(SYS_exit_group, 125, 0, 0);
}

static void rec_text_protect(const rec_image *img, int writable)
{
	for (int i = 0; i < img->nx; i++) {
		uint64_t lo = img->xlo[i] & ~(REC_PAGE - 1);
		long prot = writable ? PROT_READ | PROT_WRITE : img->xprot[i];
		if (rec_syscall3(SYS_mprotect, (long)lo, (long)(img->xhi[i] - lo),
				 prot))
			rec_text_fail();
		/* copy every page now, in one call: a copy-on-write fault
		 * per page, each with its TLB flush, costs several times
		 * more.  Best effort (MADV_POPULATE_WRITE, Linux 5.14). */
		if (writable)
			rec_syscall3(SYS_madvise, (long)lo,
				     (long)(((img->xhi[i] + REC_PAGE - 1) &
					     ~(REC_PAGE - 1)) - lo), 23);
	}
}

typedef uint64_t __attribute__((may_alias, aligned(1))) rec_u64u;
typedef uint32_t __attribute__((may_alias, aligned(1))) rec_u32u;

/* Site w's bytes (its jump to its trampoline and the int3 fill of its
 * span, or its int3) at p: the text at w->start, or a copy of it. */
void rec_site_write(uint8_t *p, const rec_write *w)
{
	if (w->int3) {
		p[0] = 0xcc;
		return;
	}
	/* by words where the span allows: under skel check each store is
	 * a line of lackey's log; volatile, or gcc calls memset, which may
	 * be libc's being patched */
	uint32_t d = (uint32_t)(w->tramp - (w->start + 5));
	uint64_t len = w->end - w->start, k;
	if (len >= 8) {
		*(volatile rec_u64u *)p = 0xe9 | (uint64_t)d << 8 | 0xcccccc0000000000ull;
		k = 8;
	} else {
		p[0] = 0xe9;
		*(volatile rec_u32u *)(p + 1) = d;
		k = 5;
	}
	for (; k + 8 <= len; k += 8)
		*(volatile rec_u64u *)(p + k) = 0xccccccccccccccccull;
	/* the rest by one store ending at the span's end, where it stays
	 * past the jump (bytes 0-4) */
	if (k == len)
		return;
	if (len >= 13)
		*(volatile rec_u64u *)(p + len - 8) = 0xccccccccccccccccull;
	else if (len >= 9)
		*(volatile rec_u32u *)(p + len - 4) = 0xccccccccu;
	else
		for (; k < len; k++)
			*(volatile uint8_t *)(p + k) = 0xcc;
}

/* Rewrites object o's text: raw mprotect and our own stores, since the
 * text may be libc's own (patched or not, not to be run while writable),
 * with every signal blocked (a handler could run code of that text).  A
 * plan read as its writer had it (rec_plan_read) brings the patched text
 * too: the kernel reads it into place, and only the sites a PLT link sent
 * to their quiet copies (rec_qret_link) are written here. */
static void rec_text_write(const rec_object *o, rec_pending *pd)
{
	sigset_t old;
	rec_block_all(&old);
	rec_text_protect(&o->img, 1);
	/* every site, unless the plan's text is in place and the relinked
	 * sites were all kept (writing a site again is harmless) */
	int whole = pd->text_len && rec_plan_text(pd) == 0 &&
		    pd->nrelinked <= pd->relinked_cap;
	for (size_t i = 0, n = whole ? pd->nrelinked : pd->nw; i < n; i++) {
		const rec_write *w = &pd->w[whole ? pd->relinked[i] : i];
		rec_site_write((uint8_t *)w->start, w);
	}
	rec_sig_hook_write(pd);
	rec_text_protect(&o->img, 0);
	rec_restore_mask(&old);
	rec_munmap_raw(pd->w, (pd->nw ? pd->nw : 1) * sizeof *pd->w);
	if (pd->late)
		rec_munmap_raw(pd->late, (pd->nw - pd->nsorted) * sizeof *pd->late);
	if (pd->relinked)
		rec_munmap_raw(pd->relinked, pd->relinked_cap * sizeof *pd->relinked);
	pd->relinked = NULL;
	pd->nrelinked = pd->relinked_cap = 0;
	pd->w = NULL;
	pd->late = NULL;
	pd->indexed = 0;
}

/* The OBJECTS payload: marker, then a vt_object for each object of s
 * (only the new ones when isnew). */
static void rec_objects_write(const rec_scan *s, const int *isnew,
			      uint64_t marker, uint32_t flags)
{
	vt_object *v = calloc(s->n + 1, sizeof *v);
	size_t n = 0;
	if (!v)
		rec_die("out of memory");
	for (size_t i = 0; i < s->n; i++) {
		const rec_seen *o = &s->v[i];
		if (isnew && !isnew[i])
			continue;
		vt_object *x = &v[n++];
		x->bias = o->img.bias;
		x->lo = o->img.lo;
		x->hi = o->img.hi;
		x->index = o->section;
		x->flags = o->flags | flags;
		if (o->section != VT_NO_OBJECT) {
			const patch *p = &R.set.obj[o->section];
			x->patch_hash = R.phash[o->section];
			memcpy(x->id, p->id, p->id_len);
			x->id_len = p->id_len;
			x->id_kind = p->id_kind;
		} else if (o->img.build_id && o->img.build_id_len <= SKEL_ID_MAX) {
			memcpy(x->id, o->img.build_id, o->img.build_id_len);
			x->id_len = o->img.build_id_len;
			x->id_kind = SKEL_ID_BUILDID;
		}
		if (o->flags & VT_OBJ_MAIN) {
			ssize_t k = readlink("/proc/self/exe", x->path,
					     sizeof x->path - 1);
			x->path[k > 0 ? k : 0] = 0;
		} else {
			strncpy(x->path, o->img.path, sizeof x->path - 1);
		}
	}
	size_t bytes = 8 + n * sizeof *v;
	uint8_t *payload = malloc(bytes);
	if (!payload)
		rec_die("out of memory");
	memcpy(payload, &marker, 8);
	memcpy(payload + 8, v, n * sizeof *v);
	rec_chunk(VT_OBJECTS, 0, payload, bytes);
	free(payload);
	free(v);
}

/* Linked PLT slots (format.h, patch_link): the GOT writes, made with the
 * texts' (no libc by then). */
typedef struct rec_gotw {
	uint64_t slot, to;
	int relro;
} rec_gotw;
static rec_gotw *rec_gotws;
static size_t rec_ngotw;

/* Under skel check every instruction of the set-up is a line of lackey's
 * log (a system call each): libc's 58 thousand sites were scanned
 * linearly per lookup before (the late ones) and per link (the qrets). */
int rec_under_valgrind(void)
{
	const char *pre = getenv("LD_PRELOAD");
	return pre && strstr(pre, "vgpreload");
}

size_t rec_sites_sorted(const rec_write *w, size_t n)
{
	size_t k = 1;
	while (k < n && w[k - 1].start <= w[k].start)
		k++;
	return n ? k : 0;
}

void rec_sites_index(rec_pending *pd)
{
	if (pd->indexed)
		return;
	pd->indexed = 1;
	if (!pd->nsorted_known)		/* a plan read as is says it */
		pd->nsorted = rec_sites_sorted(pd->w, pd->nw);
	size_t n = pd->nw - pd->nsorted;
	if (!n)
		return;
	uint32_t *v = rec_mmap_raw(n * sizeof *v);
	if (!v)
		rec_die("out of memory");
	for (size_t i = 0; i < n; i++)	/* a shell sort of a few hundred */
		v[i] = (uint32_t)(pd->nsorted + i);
	for (size_t gap = n / 2 ? n / 2 : 1;; gap = gap > 2 ? gap * 5 / 11 : 1) {
		for (size_t i = gap; i < n; i++) {
			uint32_t x = v[i];
			size_t j = i;
			for (; j >= gap && pd->w[v[j - gap]].start > pd->w[x].start; j -= gap)
				v[j] = v[j - gap];
			v[j] = x;
		}
		if (gap == 1)
			break;
	}
	pd->late = v;
}

/* The first index of sorted w (through idx when not NULL) [0, n) whose
 * start is >= pc. */
static size_t rec_sites_lower(const rec_write *w, const uint32_t *idx, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w[idx ? idx[mid] : mid].start < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int rec_sites_overlap(const rec_pending *pd, uint64_t lo, uint64_t hi)
{
	size_t i = rec_sites_lower(pd->w, NULL, pd->nsorted, hi);
	if (i && pd->w[i - 1].end > lo)	/* disjoint: only the last before hi */
		return 1;
	size_t nl = pd->nw - pd->nsorted;
	i = rec_sites_lower(pd->w, pd->late, nl, hi);
	return i && pd->w[pd->late[i - 1]].end > lo;
}

/* pd's site starting at pc: a binary search of its sorted part, then
 * of the few sites after it by their index (not a sort of all: under
 * skel check's lackey, sorting libc's 58,000 sites was a quarter of the
 * recorder's start-up). */
static rec_write *rec_write_at(const rec_pending *pd, uint64_t pc)
{
	size_t i = rec_sites_lower(pd->w, NULL, pd->nsorted, pc);
	if (i < pd->nsorted && pd->w[i].start == pc)
		return &pd->w[i];
	size_t nl = pd->nw - pd->nsorted;
	i = rec_sites_lower(pd->w, pd->late, nl, pc);
	if (i < nl && pd->w[pd->late[i]].start == pc)
		return &pd->w[pd->late[i]];
	return NULL;
}

/* Link j of object o (its tail t, its sites pd) entering routine `entry`
 * (link-time) of the object whose tail is ct: when that routine is
 * closed and each of the link's qret return sites has its quiet copy,
 * those sites go there (1), else nothing changes (0). */
static int rec_qret_link(const rec_object *o, rec_pending *pd, const rec_tail *t,
			 const uint32_t *qs, size_t nqs, const rec_tail *ct, uint64_t entry)
{
	if (!nqs || !ct->nclosed ||
	    !bsearch(&entry, ct->closed, ct->nclosed, sizeof entry, rec_u64_cmp))
		return 0;
	/* each site looked up once (skel check's lackey logs every step of
	 * the searches) */
	rec_write *one[64], **ws = nqs <= 64 ? one : malloc(nqs * sizeof *ws);
	if (!ws)
		rec_die("out of memory");
	int ok = 1;
	for (size_t i = 0; ok && i < nqs; i++) {
		rec_write *w = rec_write_at(pd, t->qrets[qs[i]].ret + o->img.bias);
		ok = w && w->quiet && w->word == PATCH_CTL_BASE && !w->int3;
		ws[i] = w;
	}
	for (size_t i = 0; ok && i < nqs; i++) {
		rec_write *w = ws[i];
		w->tramp = w->quiet;
		if (pd->nrelinked < pd->relinked_cap)
			pd->relinked[pd->nrelinked] = (uint32_t)(w - pd->w);
		pd->nrelinked++;	/* past cap: rec_text_write writes all */
	}
	if (ws != one)
		free(ws);
	return ok;
}

/* t's qrets by link, in their order within each (a counting sort):
 * link j's are ord[first[j] .. first[j + 1]).  0, or -1 out of memory. */
static int rec_qrets_by_link(const rec_tail *t, size_t nl, uint32_t **ord, size_t **first)
{
	*ord = calloc(t->nqrets ? t->nqrets : 1, sizeof **ord);
	*first = calloc(nl + 2, sizeof **first);
	if (!*ord || !*first)
		return -1;
	size_t *f = *first;
	for (size_t i = 0; i < t->nqrets; i++)
		if (t->qrets[i].link < nl)
			f[t->qrets[i].link + 2]++;
	for (size_t j = 0; j < nl; j++)
		f[j + 2] += f[j + 1];
	for (size_t i = 0; i < t->nqrets; i++)
		if (t->qrets[i].link < nl)
			(*ord)[f[t->qrets[i].link + 1]++] = (uint32_t)i;
	return 0;
}

typedef struct rec_relro_q {
	const void *phdr;
	uint64_t lo, hi;
} rec_relro_q;

static int rec_relro_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	rec_relro_q *q = arg;
	(void)size;
	if ((const void *)info->dlpi_phdr != q->phdr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			q->lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			q->hi = q->lo + info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/* Each object's links: the callee its slot holds now (the loader bound
 * it: LD_BIND_NOW, which skel record sets when objects besides the
 * executable are covered) when that is a covered
 * routine's entry with a quiet copy; the slot then goes there, and a
 * LINKS chunk tells the replay.  A slot still lazy (its own PLT), or
 * holding anything else (an interposed malloc, an object without a
 * skeleton), stays as it is: its calls record their entry words.  When
 * that routine is `closed` (returns only to its caller) and every qret
 * return site of the link has a quiet copy, those sites go to their
 * copies (rec_text_write writes them so) and the link's LINKS word says
 * VT_LINK_QRET: its calls record no word at all. */
static void rec_links_plan(rec_object *o, rec_pending *pd, uint32_t n)
{
	const char *off = getenv("SKEL_LINK");
	if (off && !strcmp(off, "0"))
		return;
	const char *qoff = getenv("SKEL_QRET");
	int qret = !(qoff && !strcmp(qoff, "0"));
	for (uint32_t b = 0; b < n; b++)
		rec_sites_index(&pd[b]);
	rec_tail *tl = calloc(n ? n : 1, sizeof *tl);
	if (!tl)
		rec_die("out of memory");
	for (uint32_t a = 0; a < n; a++) {
		rec_section_tail(o[a].index, &tl[a]);
		size_t k = 1;	/* skel gen writes them in order */
		while (k < tl[a].nclosed && tl[a].closed[k - 1] <= tl[a].closed[k])
			k++;
		if (k < tl[a].nclosed)
			qsort(tl[a].closed, tl[a].nclosed, sizeof *tl[a].closed, rec_u64_cmp);
	}
	for (uint32_t a = 0; a < n; a++) {
		size_t nl = tl[a].nlinks;
		if (!nl)
			continue;
		rec_relro_q q = { o[a].img.phdr, 0, 0 };
		dl_iterate_phdr(rec_relro_cb, &q);
		uint64_t *pay = calloc(nl + 1, 8);
		rec_gotw *gw = realloc(rec_gotws, (rec_ngotw + nl) * sizeof *gw);
		uint32_t *qord;
		size_t *qfirst;
		if (!pay || !gw || rec_qrets_by_link(&tl[a], nl, &qord, &qfirst))
			rec_die("out of memory");
		if (qret && tl[a].nqrets && !pd[a].relinked &&
		    (pd[a].relinked = rec_mmap_raw(tl[a].nqrets * sizeof *pd[a].relinked)))
			pd[a].relinked_cap = tl[a].nqrets;
		rec_gotws = gw;
		pay[0] = o[a].index | (uint64_t)nl << 32;
		size_t linked = 0, quiet = 0;
		for (size_t j = 0; j < nl; j++) {
			uint64_t slot = tl[a].links[j].slot + o[a].img.bias, to;
			if (slot < o[a].img.lo || slot + 8 > o[a].img.hi)
				continue;
			memcpy(&to, (const void *)slot, 8);
			for (uint32_t b = 0; b < n; b++) {
				const rec_write *w = to >= o[b].img.lo && to < o[b].img.hi ?
						     rec_write_at(&pd[b], to) : NULL;
				if (!w || !w->quiet || (w->word & PATCH_ENTRY_MASK) != PATCH_ENTRY_TOP)
					continue;
				pay[1 + j] = patch_entry_word(w->word, o[b].index);
				/* the loader protects the pages wholly inside
				 * RELRO: its last page, shared with .data,
				 * stays writable */
				uint64_t pg = ~(uint64_t)(REC_PAGE - 1);
				gw[rec_ngotw++] = (rec_gotw){ slot, w->quiet,
							      slot >= (q.lo & pg) && slot + 8 <= (q.hi & pg) };
				linked++;
				if (qret && rec_qret_link(&o[a], &pd[a], &tl[a], qord + qfirst[j],
							  qfirst[j + 1] - qfirst[j], &tl[b],
							  w->start - o[b].img.bias)) {
					pay[1 + j] |= VT_LINK_QRET;
					quiet++;
				}
				break;
			}
		}
		if (linked)
			rec_chunk(VT_LINKS, 0, pay, 8 * (nl + 1));
		if (R.verbose)
			rec_say("object %u: %zu of its %zu PLT slots linked, %zu of them returning "
				"quietly (%zu sites, %zu of them out of order)", o[a].index, linked,
				nl, quiet, pd[a].nw, pd[a].nw - pd[a].nsorted);
		free(pay);
		free(qord);
		free(qfirst);
	}
	for (uint32_t a = 0; a < n; a++)
		rec_tail_free(&tl[a]);
	free(tl);
}

/* The GOT writes rec_links_plan decided; raw system calls only. */
static void rec_links_write(void)
{
	for (size_t i = 0; i < rec_ngotw; i++) {
		const rec_gotw *g = &rec_gotws[i];
		uint64_t pg = g->slot & ~(uint64_t)(REC_PAGE - 1);
		if (g->relro && rec_syscall3(SYS_mprotect, (long)pg, REC_PAGE,
					     PROT_READ | PROT_WRITE))
			rec_text_fail();
		*(volatile uint64_t *)g->slot = g->to;
		if (g->relro && rec_syscall3(SYS_mprotect, (long)pg, REC_PAGE, PROT_READ))
			rec_text_fail();
	}
}

/* o's map: pd's entries, the probes' code included (rec_map_find skips
 * it), where they are (a plan file's stay in its mapping).  Trampolines
 * are written in address order; a fresh map that is not stays unused
 * (faults there stay unplaced, loud); a plan's was checked when written. */
static void rec_map_keep(rec_object *o, rec_pending *pd)
{
	o->map = pd->map;
	/* a plan file's map was checked when it was written */
	o->nmap = pd->map_base || rec_map_in_order(pd->map, pd->nmap) ? pd->nmap : 0;
	o->map_base = pd->map_base;
}

/* The maps stay with their objects (rec_displaced_pc), and go to the
 * value file for skel check (SKEL_MAPS=1): lackey sees the displaced
 * instructions at their trampolines' addresses, which the comparison maps
 * back.  Nothing else reads them, and libc's is megabytes: a map read
 * from the plan cache goes there as a reference to its file. */
static void rec_maps_write(rec_object *o, rec_pending *pd, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (pd[i].ref)	/* only with SKEL_MAPS (rec_plan_read) */
			rec_chunk(VT_MAP_REF, 0, pd[i].ref, pd[i].nref);
		else if (R.write_maps)
			rec_chunk(VT_TRAMPOLINE_MAP, 0, pd[i].map,
				  pd[i].nmap * sizeof *pd[i].map);
		rec_map_keep(&o[i], &pd[i]);
		free(pd[i].ref);
		pd[i].ref = NULL;
		pd[i].map = NULL;
	}
}

static int rec_same_object(const rec_seen *a, const rec_seen *b)
{
	return a->img.bias == b->img.bias && a->img.phdr == b->img.phdr &&
	       a->img.lo == b->img.lo && a->img.hi == b->img.hi;
}

/* rec.h: words, not rec_copy_bytes, which gcc may vectorize (a vmmark
 * keeps the general registers only). */
__attribute__((target("general-regs-only")))
void rec_quiet_begin(rec_quiet *q)
{
	uint64_t *to = (uint64_t *)&q->tls;
	const uint64_t *from = (const uint64_t *)&rec_t;
	for (size_t i = 0; i < sizeof q->tls / 8; i++)
		to[i] = from[i];
	q->self = rec_self;
	rec_self = &R.sink;
	rec_cursor = R.sink.base;
}

__attribute__((target("general-regs-only")))
void rec_quiet_end(const rec_quiet *q)
{
	uint64_t *to = (uint64_t *)&rec_t;
	const uint64_t *from = (const uint64_t *)&q->tls;
	for (size_t i = 0; i < sizeof q->tls / 8; i++)
		to[i] = from[i];
	rec_self = q->self;
}

void rec_late_objects(void)
{
	if (!R.active || rec_off() || rec_getpid() != R.pid)
		return;
	rec_lock(&R.patching);
	rec_scan now;
	rec_scan_objects(&now);
	int *isnew = calloc(now.n + 1, sizeof *isnew);
	size_t nnew = 0;
	if (!isnew)
		rec_die("out of memory");
	for (size_t i = 0; i < now.n; i++) {
		size_t j = 0;
		while (j < rec_last.n && !rec_same_object(&now.v[i], &rec_last.v[j]))
			j++;
		if (j < rec_last.n) {	/* keep what is known of it */
			now.v[i].section = rec_last.v[j].section;
			now.v[i].flags = rec_last.v[j].flags;
		} else {
			isnew[i] = 1;
			nnew++;
		}
	}
	if (nnew) {
		uint32_t first = atomic_load(&R.nobj);
		uint32_t n = rec_sections_match(&now, isnew, first);
		rec_pending pd[PATCH_MAX_OBJECTS];
		rec_int3_list i3 = { 0 };
		/* the planning runs libc (patched): not the program's work, its
		 * words go nowhere, and skel check skips what runs between the
		 * two runs of the marker (two for each late chunk) */
		rec_quiet q;
		rec_late_patched();
		rec_quiet_begin(&q);
		for (uint32_t k = 0; k < n; k++)
			rec_object_prepare(&R.obj[first + k], &pd[k], &i3, 1);
		rec_maps_write(&R.obj[first], pd, n);
		rec_objects_write(&now, isnew, (uint64_t)rec_late_patched, VT_OBJ_LATE);
		rec_int3_publish(&i3);
		free(i3.v);
		atomic_store_explicit(&R.nobj, first + n, memory_order_release);
		for (uint32_t k = 0; k < n; k++)
			rec_text_write(&R.obj[first + k], &pd[k]);
		rec_quiet_end(&q);
		rec_late_patched();
		if (R.verbose && n)
			rec_stats("dlopen");
	}
	free(isnew);
	free(rec_last.v);
	rec_last = now;
	rec_unlock(&R.patching);
}

/* The loader is patched when the program starts: at rec_init its
 * routines that called the constructors (_dl_init) are live on the stack,
 * and would record in their middles on the way back.  The executable's
 * _start calls __libc_start_main, found here first (LD_PRELOAD): no loader
 * frame is live then.  The loader, listed uncovered at start-up, is
 * matched as a new object (a late OBJECTS chunk, whose marker run tells
 * skel check to compare it from there). */
static int (*rec_start_main_real)(int (*)(int, char **, char **), int, char **,
				  void (*)(void), void (*)(void), void (*)(void),
				  void *);

static void rec_loader_late(void)
{
	if (!R.active || rec_off() || rec_getpid() != R.pid || R.loader_due)
		return;
	rec_lock(&R.patching);
	R.loader_due = 1;
	size_t k = 0;	/* the loader is new to rec_late_objects */
	for (size_t i = 0; i < rec_last.n; i++)
		if (!(rec_last.v[i].flags & VT_OBJ_LOADER))
			rec_last.v[k++] = rec_last.v[i];
	int any = k < rec_last.n;
	rec_last.n = k;
	rec_unlock(&R.patching);
	if (any)
		rec_late_objects();
}

REC_EXPORT int __libc_start_main(int (*main_fn)(int, char **, char **), int argc,
				 char **argv, void (*init)(void), void (*fini)(void),
				 void (*rtld_fini)(void), void *stack_end)
{
	if (!rec_start_main_real)
		rec_start_main_real = dlsym(RTLD_NEXT, "__libc_start_main");
	if (!rec_start_main_real)
		rec_die("cannot find libc's __libc_start_main");
	rec_loader_late();
	return rec_start_main_real(main_fn, argc, argv, init, fini, rtld_fini,
				   stack_end);
}

/* ------------------------------------------------------------- set-up */

static void rec_header_write(const patch *p)
{
	vt_header h = { .version = VT_VERSION, .id_len = p->id_len,
			.id_kind = p->id_kind,
			.patch_hash = R.phash[0],
			.image_base = REC_EXE->img.bias };
	memcpy(h.magic, VT_MAGIC, 8);
	memcpy(h.id, p->id, p->id_len);
	vt_header_seal(&h);
	if (write(R.fd, &h, sizeof h) != (ssize_t)sizeof h)
		rec_die("cannot write the value trace: %s", strerror(errno));
	R.header = h;
	vt_process me = { .pid = (uint32_t)R.pid,
			  .flags = (R.execed ? VT_PROC_EXECED : 0) | R.image << 16 };
	rec_chunk(VT_PROCESS, 0, &me, sizeof me);
}

/* The value file's absolute path: a forked child writes its own file
 * beside it, wherever it has moved to meanwhile. */
static void rec_vpath_keep(const char *vpath)
{
	size_t n = 0;
	if (R.pipe)
		return;
	if (vpath[0] != '/' && getcwd(R.vpath, sizeof R.vpath - 1)) {
		n = strlen(R.vpath);
		R.vpath[n++] = '/';
	}
	if (n + strlen(vpath) >= sizeof R.vpath - 1) {
		R.vpath[0] = 0;	/* children will not record; replay says so */
		return;
	}
	strcpy(R.vpath + n, vpath);
}
/* The value file, locked: a second process that inherits the environment
 * (fork+exec of the same program) finds it taken and records nothing. */
static int rec_file_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		rec_say("%s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (R.verbose)
			rec_say("%s: in use by another recorder; not recording",
				path);
		close(fd);
		return -1;
	}
	struct stat st;	/* a pipe or /dev/null is fine too */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0))
		rec_die("%s: %s", path, strerror(errno));
	R.pipe = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
	return fd;
}

static void rec_tls_offset(void)
{
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	R.cursor_off = (long)((uint64_t)&rec_t - tp);
	if (!rec_fits32(R.cursor_off))
		rec_die("TLS offset out of reach");
}

__attribute__((constructor)) static void rec_init(void)
{
	rec_vfork_real = dlsym(RTLD_NEXT, "vfork");
	rec_start_main_real = dlsym(RTLD_NEXT, "__libc_start_main");
	rec_sig_hook_find();
	const char *ppath = getenv("SKEL_PATCH");
	const char *vpath = getenv("SKEL_VALUES");
	const char *verb = getenv("SKEL_VERBOSE");
	const char *maps = getenv("SKEL_MAPS");
	R.write_maps = maps && !strcmp(maps, "1");
	R.verbose = verb && !strcmp(verb, "1");
	/* testing: every site an int3 (tests/transparency.sh) */
	const char *i3e = getenv("SKEL_INT3");
	R.force_int3 = i3e && !strcmp(i3e, "1");
	const char *chk = getenv("SKEL_PLAN_CHECK");
	R.plan_check = chk && !strcmp(chk, "1");
	if (!ppath || !vpath || !*ppath || !*vpath)
		return;
	rec_scan_objects(&rec_last);
	char err[FMT_ERR_LEN];
	if (!rec_last.n)
		return;
	if (rec_set_load(ppath, err)) {
		rec_say("%s: %s", ppath, err);
		return;
	}
	rec_seen *exe = &rec_last.v[0];
	if (!rec_matches(exe, &R.set.obj[0])) {
		if (R.verbose)
			rec_say("not the patched executable; not recording");
		patch_set_free(&R.set);
		return;
	}
	rec_exit_hook();
	for (size_t i = 0; i < rec_last.n; i++)
		if (rec_last.v[i].flags & VT_OBJ_RECORDER && rec_last.v[i].img.build_id)
			R.self_id = skel_fnv1a64(SKEL_FNV1A64_INIT,
						 rec_last.v[i].img.build_id,
						 rec_last.v[i].img.build_id_len);
	exe->section = 0;
	exe->flags |= VT_OBJ_COVERED;
	rec_section_found[0] = 1;
	R.obj[0] = (rec_object){ .img = exe->img, .patch = &R.set.obj[0] };
	uint32_t n = 1 + rec_sections_match(&rec_last, NULL, 1);
	ZydisDecoderInit(&rec_dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	R.have_gsbase = (getauxval(AT_HWCAP2) & 2) != 0; /* HWCAP2_FSGSBASE */
	unsigned a, b, c, d;	/* RTM: cpuid leaf 7, ebx bit 11 */
	R.have_rtm = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 11 & 1);
	rec_tls_offset();
	R.restorer = rec_restorer();
	if (rec_syscall3(SYS_mprotect, (long)REC_PRESTART_GUARD, REC_PAGE,
			 PROT_NONE))
		rec_die("cannot protect the start-up page");
	rec_prestart_init();
	static rec_pending pd[PATCH_MAX_OBJECTS];
	rec_int3_list i3 = { 0 };
	for (uint32_t k = 0; k < n; k++)
		rec_object_prepare(&R.obj[k], &pd[k], &i3, 1);
	/* the driver's native run before valgrind (driver/run.c): the
	 * plans are kept, the program does not run */
	const char *only = getenv("SKEL_PLAN_ONLY");
	if (only && !strcmp(only, "1")) {
		/* the loader's too, which the run patches at its start */
		R.loader_due = 1;
		uint32_t nl = rec_sections_match(&rec_last, NULL, n);
		for (uint32_t k = n; k < n + nl; k++)
			rec_object_prepare(&R.obj[k], &pd[k], &i3, 1);
		_exit(0);
	}

	/* an image the exec of a recorded one started (rec_exec_env) */
	const char *img = getenv("SKEL_EXEC");
	R.image = img ? (uint32_t)strtoul(img, NULL, 10) : 0;
	R.execed = R.image > 0;
	char epath[sizeof R.vpath + 48];
	if (R.execed) {
		int len = snprintf(epath, sizeof epath, "%s.%d.exec", vpath, (int)getpid());
		rec_put_dec(epath + len, R.image);
	}
	R.fd = rec_file_open(R.execed ? epath : vpath);
	if (R.fd < 0) {
		/* the trampolines stay mapped but unused: nothing patched */
		R.fd = -1;
		return;
	}
	R.pid = getpid();
	rec_vpath_keep(vpath);
	/* a file's VALUES compressed (format.h, VT_ZVALUES); a pipe's raw:
	 * skel run's reader is on the other end, and waits for them */
	const char *zc = getenv("SKEL_COMPRESS");
	const char *pp = getenv("SKEL_PREPACK");
	R.prepack_all = pp && !strcmp(pp, "1");
	R.zmode = zc && !strcmp(zc, "1") ? 1 : zc && !strcmp(zc, "2") ? 2 : 0;
	/* nor under valgrind (skel check: a file replayed once and removed;
	 * zstd run under lackey made the checks several times slower) */
	R.valgrind = rec_under_valgrind();
	const char *us = getenv("SKEL_UNSUMMED");
	R.unsummed = R.valgrind && us && !strcmp(us, "1");
	if (R.valgrind)
		zc = "0";
	if (!R.pipe && !(zc && !strcmp(zc, "0")) && !(R.zsize = rec_z_setup()))
		rec_say("the compressor cannot be set up: VALUES are written "
			"uncompressed");
	if (rec_buffer_map(&R.sink) || pthread_key_create(&R.key,
							  rec_on_thread_exit))
		rec_die("out of memory");
	rec_header_write(&R.set.obj[0]);
	rec_maps_write(R.obj, pd, n);
	rec_objects_write(&rec_last, NULL, (uint64_t)rec_started, 0);
	rec_links_plan(R.obj, pd, n);
	rec_exit_init();
	/* the set-up's calls into patched code wrote into rec_own: still the
	 * only thread, as a forked child's */
	rec_prestart_forked();
	rec_thread *main_t = rec_thread_open(0, VT_NO_PARENT, 0, 0);
	pthread_setspecific(R.key, main_t);
	rec_heap_init();
	if (main_t != &R.sink)
		rec_heap_thread(main_t);	/* written with its START: */
	if (main_t != &R.sink)
		rec_thread_start_now(main_t);	/* the main thread comes first */
	pthread_atfork(rec_fork_prepare, rec_atfork_parent, rec_atfork_child);
	at_quick_exit(rec_quick_exit);
	rec_int3_publish(&i3);
	free(i3.v);
	atomic_store_explicit(&R.nobj, n, memory_order_release);
	R.active = 1;
	rec_vfork_as_fork = 1;
	rec_signals_install();
	/* the flusher writes full buffers behind the program (not under
	 * valgrind, nor with SKEL_ASYNC=0), and skel run's words online */
	const char *as = getenv("SKEL_ASYNC");
	int behind = !R.valgrind && !(as && !strcmp(as, "0"));
	if (R.pipe || behind)
		rec_flusher_start(behind);
	rec_stats("start");
	/* from here on no libc: the texts written may be libc's, and what
	 * libc runs after that records words, which must be the program's
	 * own (skel check starts at rec_started) */
	for (uint32_t k = 0; k < n; k++)
		rec_text_write(&R.obj[k], &pd[k]);
	rec_links_write();
	rec_started();
}
