/* rec_plan.c — where each probe goes: the span of whole instructions of
 * its block that a jmp rel32 replaces (sites), or an int3 where the block
 * has no 5-byte span. */
#include "replay/rec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ decoding */

ZydisDecoder rec_dec;

int rec_decode(uint64_t addr, uint64_t limit, rec_insn *x)
{
	x->addr = addr;
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&rec_dec,
		(const void *)addr, limit - addr, &x->in, x->op)) ? 0 : -1;
}

int rec_is_call(const rec_insn *x)
{
	return x->in.meta.category == ZYDIS_CATEGORY_CALL;
}

/* Ends a span: nothing may follow it in the trampoline (a call's return
 * address is a landing point in the original code). */
int rec_is_transfer(const rec_insn *x)
{
	switch (x->in.meta.category) {
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_RET:
		return 1;
	default:
		return x->in.mnemonic == ZYDIS_MNEMONIC_LOOP ||
		       x->in.mnemonic == ZYDIS_MNEMONIC_LOOPE ||
		       x->in.mnemonic == ZYDIS_MNEMONIC_LOOPNE;
	}
}

/* ----------------------------------------------------------- planning */

int rec_probe_cmp(const void *a, const void *b)
{
	const rec_probe *x = a, *y = b;
	if (x->p.pc != y->p.pc)
		return x->p.pc < y->p.pc ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int rec_cond_code(const rec_insn *x)
{
	return x->in.meta.category == ZYDIS_CATEGORY_COND_BR &&
	       ((x->in.opcode & 0xf0) == 0x70 || (x->in.opcode & 0xf0) == 0x80)
		? x->in.opcode & 0x0f : -1;
}

/* A transfer a span may hold in its middle: a jcc rel, whose fall-through
 * continues in the trampoline.  The patch's block is then a run of basic
 * blocks entered only at its start (skelgen's probe_region), so the
 * fall-through is the next instruction of the span and nothing else jumps
 * into it. */
static int rec_hard_transfer(const rec_insn *x)
{
	return rec_is_transfer(x) && !(x->in.meta.category == ZYDIS_CATEGORY_COND_BR &&
				       rec_cond_code(x) >= 0);
}

/* Instruction starts of [bs, be), decoded linearly. */
static int rec_block_insns(uint64_t bs, uint64_t be, uint64_t *starts,
			   uint8_t *transfer, size_t *n)
{
	rec_insn x;
	*n = 0;
	for (uint64_t a = bs; a < be;) {
		/* lengths and kinds only: no operands */
		x.addr = a;
		if (*n == REC_MAX_BLOCK_INSNS ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec, NULL,
				(const void *)a, be - a, &x.in)))
			return -1;
		starts[*n] = a;
		transfer[(*n)++] = (uint8_t)rec_hard_transfer(&x);
		a += x.in.length;
	}
	return 0;
}

static uint64_t rec_starts[REC_MAX_BLOCK_INSNS + 1];
static uint8_t rec_transfer[REC_MAX_BLOCK_INSNS];

/* Chooses the span for a new pc: whole instructions around pc, within its
 * block and after `floor` (the previous site's end), >= 5 bytes, not
 * passing a transfer.  0 = span found, 1 = too short, -1 = bad block. */
static int rec_span(const patch_probe *pr, uint64_t floor, uint64_t *s,
		    uint64_t *e, int *last_transfer, int *reach_floor,
		    uint64_t *first_end)
{
	/* Under valgrind, decoding is most of the start-up.  Mostly the
	 * instructions from pc on make 5 bytes: nothing before pc is needed
	 * (the loops below would stop at k = i). */
	rec_insn x;
	for (uint64_t a = pr->pc; a < pr->block_end && a >= pr->block_start;) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&rec_dec, NULL,
				(const void *)a, pr->block_end - a, &x.in)))
			break;
		a += x.in.length;
		if (a == pr->pc + x.in.length)
			*first_end = a;
		int t = rec_hard_transfer(&x);
		if (a - pr->pc >= 5) {
			*s = pr->pc;
			*e = a;
			*last_transfer = t;
			*reach_floor = floor == pr->pc;
			return 0;
		}
		if (t)
			break;
	}
	/* else the block's instructions, from its start; probes come sorted
	 * by pc, so a block's probes are consecutive: it is decoded once */
	static uint64_t memo_bs, memo_be;
	static size_t memo_n;
	size_t n, i, j, k;
	if (memo_be == 0 || memo_bs != pr->block_start ||
	    memo_be != pr->block_end) {
		memo_be = 0;
		if (rec_block_insns(pr->block_start, pr->block_end,
				    rec_starts, rec_transfer, &memo_n))
			return -1;
		memo_bs = pr->block_start;
		memo_be = pr->block_end;
	}
	n = memo_n;
	rec_starts[n] = pr->block_end;
	for (i = 0; i < n && rec_starts[i] != pr->pc; i++)
		;
	if (i == n)
		return -1;
	*first_end = rec_starts[i + 1];
	for (j = i; rec_starts[j + 1] - rec_starts[i] < 5 && !rec_transfer[j] &&
		    j + 1 < n; j++)
		;
	for (k = i; rec_starts[j + 1] - rec_starts[k] < 5 && k > 0 &&
		    rec_starts[k - 1] >= floor && !rec_transfer[k - 1]; k--)
		;
	*s = rec_starts[k];
	*e = rec_starts[j + 1];
	*last_transfer = rec_transfer[j];
	*reach_floor = k == 0 || rec_starts[k - 1] < floor;
	return *e - *s >= 5 ? 0 : 1;
}

/* Whether pr's block is a loop of its own that one site can hold whole:
 * entered only at its start (the patch's blocks are), it ends with a
 * jcc or jmp rel back to its start and holds no other transfer but jccs,
 * >= 5 bytes, after `floor`.  Its iterations then run in the trampoline
 * instead of jumping out to it and back at every probe. */
static int rec_loop_span(const patch_probe *pr, uint64_t floor, int *last_transfer)
{
	uint64_t bs = pr->block_start, be = pr->block_end, target;
	rec_insn x;
	if (bs < floor || be - bs < 5 || R.force_int3)
		return 0;
	for (uint64_t a = bs; a < be; a += x.in.length) {
		if (rec_decode(a, be, &x))
			return 0;
		int last = a + x.in.length == be;
		if (rec_hard_transfer(&x) &&
		    !(last && x.in.meta.category == ZYDIS_CATEGORY_UNCOND_BR))
			return 0;
		if (!last)
			continue;
		if (!(x.in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
		    x.op[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
		    (rec_cond_code(&x) < 0 &&
		     x.in.meta.category != ZYDIS_CATEGORY_UNCOND_BR) ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x.in, &x.op[0], a,
							   &target)) ||
		    target != bs)
			return 0;
		*last_transfer = rec_hard_transfer(&x);
	}
	return 1;
}

int rec_plan(rec_probe *pv, size_t np, rec_site **out, size_t *nout)
{
	rec_site *sv = calloc(np ? np : 1, sizeof *sv);
	size_t ns = 0;
	if (!sv)
		rec_die("out of memory");
	for (size_t i = 0; i < np; i++) {
		const patch_probe *pr = &pv[i].p;
		rec_site *prev = ns ? &sv[ns - 1] : NULL;
		if (prev && pr->pc < prev->end) {
			prev->np++;	/* inside a span already chosen */
			continue;
		}
		int same_block = prev && prev->bstart == pr->block_start;
		uint64_t floor = same_block ? prev->end : pr->block_start;
		uint64_t s, e, fe = 0;
		int lt, reach;
		int rc = rec_span(pr, floor, &s, &e, &lt, &reach, &fe);
		if (rc >= 0 && !same_block && rec_loop_span(pr, floor, &lt)) {
			sv[ns++] = (rec_site){ .start = pr->block_start,
				.end = pr->block_end, .bstart = pr->block_start,
				.bend = pr->block_end, .p0 = i, .np = 1,
				.last_transfer = lt, .first_end = fe ? fe : pr->block_end,
				.loop = 1 };
			R.nloop++;
			continue;
		}
		if (R.force_int3 && rc == 0)
			rc = 1;
		if (rc < 0)
			rec_die("patch line %u: pc %" PRIx64 " is not an "
				"instruction of its block [%" PRIx64 ", %" PRIx64
				")", pr->line, pr->pc - R.cur->img.bias,
				pr->block_start - R.cur->img.bias,
				pr->block_end - R.cur->img.bias);
		if (rc == 1 && same_block && reach && !prev->int3 &&
		    !prev->last_transfer) {
			/* join the previous span: every instruction between
			 * them is in the same block, none a transfer */
			prev->end = e;
			prev->last_transfer = lt;
			prev->np++;
			continue;
		}
		rec_site *st = &sv[ns++];
		*st = (rec_site){ s, e, pr->block_start, pr->block_end, i, 1,
				  rc == 1, lt, fe, 0, 0, 0, 0 };
		if (rc == 1) {
			rec_insn x;
			rec_decode(pr->pc, pr->block_end, &x);
			st->start = pr->pc;
			st->end = pr->pc + x.in.length;
			st->last_transfer = rec_hard_transfer(&x);
		}
	}
	/* a site whose span is more than its first probed instruction */
	for (size_t k = 0; k < ns; k++)
		if (!sv[k].int3 && (sv[k].start != pv[sv[k].p0].p.pc ||
				    sv[k].end != sv[k].first_end))
			R.nneighbour++;
	*out = sv;
	*nout = ns;
	return 0;
}

/* ------------------------------------------------ entering int3 blocks */

/* The first site of the block starting at b, if it is an int3 site. */
static long rec_int3_site_of(const rec_site *sv, size_t ns, uint64_t b)
{
	long best = -1;
	for (size_t k = 0; k < ns; k++)
		if (sv[k].bstart == b && !sv[k].redirect &&
		    (best < 0 || sv[k].start < sv[best].start))
			best = (long)k;
	return best >= 0 && sv[best].int3 ? best : -1;
}

/* The instructions of the block before its int3 site, which the stub in
 * front of its trampoline runs (rec_emit.c): all relocatable, none a
 * transfer but a jcc whose fall-through stays in the block. */
static int rec_stub_ok(const rec_site *t)
{
	rec_insn x;
	for (uint64_t a = t->bstart; a < t->start; a += x.in.length)
		if (rec_decode(a, t->start, &x) || rec_hard_transfer(&x) ||
		    a + x.in.length > t->start)
			return 0;
	return 1;
}

/* Whether the last instruction x of a predecessor ending at pe reaches
 * block b by a direct jump or by falling through (never a call: its
 * return address is the original one). */
static int rec_reaches(const rec_insn *x, uint64_t pe, uint64_t b)
{
	uint64_t target;
	int rel = (x->in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
		  x->op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		  ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&x->in, &x->op[0],
							x->addr, &target));
	switch (x->in.meta.category) {
	case ZYDIS_CATEGORY_UNCOND_BR:
		return rel && target == b;
	case ZYDIS_CATEGORY_COND_BR:
		return rec_cond_code(x) >= 0 && ((rel && target == b) || pe == b);
	default:
		return !rec_is_transfer(x) && pe == b;
	}
}

size_t rec_plan_enters(const patch *pt, rec_site **svp, size_t *ns)
{
	const uint64_t bias = R.cur->img.bias;
	size_t made = 0;
	if (R.force_int3 || R.cur->index)	/* libraries: rec_block_clip */
		return 0;
	for (size_t i = 0; i < pt->nenters; i++) {
		rec_site *sv = *svp;
		uint64_t b = pt->enters[i].block + bias;
		uint64_t ps = pt->enters[i].pred_start + bias;
		uint64_t pe = pt->enters[i].pred_end + bias;
		long t = rec_int3_site_of(sv, *ns, b);
		if (t < 0 || !rec_stub_ok(&sv[t]))
			continue;
		/* the predecessor's last instructions (a span needs no more
		 * than five), its last one reaching b */
		uint64_t at[6];
		size_t n = 0;
		rec_insn x;
		for (uint64_t a = ps; a < pe; a += x.in.length) {
			if (rec_decode(a, pe, &x))
				break;
			if (n == 6)
				memmove(at, at + 1, 5 * sizeof *at), n--;
			at[n++] = a;
		}
		if (!n || rec_decode(at[n - 1], pe, &x) ||
		    at[n - 1] + x.in.length != pe || !rec_reaches(&x, pe, b))
			continue;
		int last_transfer = rec_hard_transfer(&x);
		/* a site already over its end goes on to it and enters b */
		long over = -1, several = 0;
		for (size_t k = 0; k < *ns; k++)
			if (sv[k].start < pe && sv[k].end > ps) {
				several |= over >= 0;
				over = (long)k;
			}
		if (several)
			continue;
		if (over >= 0) {
			rec_site *st = &sv[over];
			if (st->int3 || st->redirect || st->start < ps ||
			    (st->last_transfer && st->end != pe))
				continue;
			for (uint64_t a = st->end; a < pe; a += x.in.length)
				if (rec_decode(a, pe, &x) || (rec_hard_transfer(&x) &&
							      a + x.in.length != pe))
					goto next;
			if (st->end < pe) {
				st->end = pe;
				if (st->bend < pe)
					st->bend = pe;
				st->last_transfer = last_transfer;
			}
			st->redirect = b;
			st->to = (size_t)t;
			made++;
			continue;
		}
		/* else the fewest last instructions that make 5 bytes, none a
		 * transfer but the last */
		size_t k = n - 1;
		while (k > 0 && pe - at[k] < 5) {
			rec_decode(at[k - 1], pe, &x);
			if (rec_hard_transfer(&x))
				break;
			k--;
		}
		if (pe - at[k] < 5)
			continue;
		sv = realloc(sv, (*ns + 1) * sizeof *sv);
		if (!sv)
			rec_die("out of memory");
		*svp = sv;
		sv[(*ns)++] = (rec_site){ .start = at[k], .end = pe,
			.bstart = ps, .bend = pe, .p0 = 0, .np = 0,
			.last_transfer = last_transfer, .first_end = pe, .redirect = b,
			.to = (size_t)t };
		made++;
next:;
	}
	R.nredirect += made;
	return made;
}

/* ------------------------------------------ spans across branch targets */

/* The last site of sv[0..n) (sorted by start, spans apart) that starts
 * before pc, skipping those merged away (empty); NULL if none.  Only it
 * can cover pc, or overlap a range ending at pc. */
static rec_site *rec_site_before(rec_site *sv, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {	/* the first site starting at or after pc */
		size_t mid = (lo + hi) / 2;
		if (sv[mid].start < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0)
		if (sv[lo].start != sv[lo].end)
			return &sv[lo];
	return NULL;
}

static rec_site *rec_site_at(rec_site *sv, size_t n, uint64_t pc)
{
	rec_site *x = rec_site_before(sv, n, pc + 1);
	return x && pc < x->end ? x : NULL;
}

/* Whether a site of the unsorted v[0..n) overlaps [s, e). */
static int rec_overlaps(const rec_site *v, size_t n, uint64_t s, uint64_t e)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].start < e && v[k].end > s)
			return 1;
	return 0;
}

#define REC_LAND_ADD 64		/* new or extended sites for one landing */

/* What an int3 site needs to go on across the branch target ending its
 * block (rec_land_try). */
typedef struct rec_landing {
	uint64_t end;		/* the span's new end */
	int last_transfer;	/* the span then ends with a transfer */
	size_t merge;		/* the next site, taken in (SIZE_MAX: none) */
	rec_site add[REC_LAND_ADD];	/* new sites, each ending with a branch */
	size_t nadd;
	struct {		/* sites going on to the end of a branch */
		size_t site;
		uint64_t end;
		int last_transfer;
	} ext[REC_LAND_ADD];
	size_t next;
} rec_landing;

/* A site ending with the branch b, which no site covers: the fewest
 * instructions before it (the sweep's) that make 5 bytes, none a transfer
 * nor a branch target but the first.  0 if there is none. */
static int rec_land_source(const rec_targets *t, const rec_branch *b,
			   rec_site *out)
{
	uint64_t end = b->src + b->len, c = b->src;
	rec_insn x;
	if (rec_decode(c, end, &x) || x.in.length != b->len)
		return 0;
	int last_transfer = rec_hard_transfer(&x);
	for (int m = 0; end - c < 5; m++) {
		if (m == 4 || !b->prev[m] || rec_is_target(t, c))
			return 0;
		c -= b->prev[m];
		if (rec_decode(c, end, &x) || x.in.length != b->prev[m] ||
		    rec_hard_transfer(&x))
			return 0;
	}
	if (!rec_in_text(&R.cur->img, c, end))
		return 0;
	*out = (rec_site){ .start = c, .end = end, .bstart = c, .bend = end,
		.last_transfer = last_transfer, .first_end = end };
	return 1;
}

/* Whether site x, which ends before branch b, can go on to b's end: x
 * patched with a jump, not ending with a transfer, and every instruction
 * from its end to b's neither a transfer nor a branch target. */
static int rec_land_extend(const rec_targets *t, const rec_site *x,
			   const rec_branch *b)
{
	rec_insn in;
	if (x->int3 || x->redirect || x->land || x->loop || x->last_transfer)
		return 0;
	uint64_t a = x->end;
	for (; a < b->src; a += in.in.length)
		if (rec_is_target(t, a) || rec_decode(a, b->src, &in) ||
		    rec_hard_transfer(&in))
			return 0;
	return a == b->src && !rec_is_target(t, a);
}

/* Branch b to the landing point, which no site covers: a site just before
 * it goes on to its end, or a new one ends with it.  `span` is the int3
 * site's new span, `added` the sites added for earlier landings. */
static int rec_land_branch(const rec_targets *t, rec_site *sv, size_t ns,
			   const rec_branch *b, uint64_t s0, uint64_t s1,
			   const rec_site *added, size_t nadded, rec_landing *l)
{
	uint64_t xe = b->src + b->len;
	rec_site *pre = rec_site_before(sv, ns, b->src);
	/* not the site the landing span takes in (l->merge): that one is
	 * emptied after the extensions are made, its new end lost, and the
	 * branch would go on to the middle of the span's jump */
	if (pre && (size_t)(pre - sv) != l->merge && pre->end <= b->src &&
	    pre->end + 14 >= b->src && rec_land_extend(t, pre, b)) {
		rec_insn in;
		if (l->next == REC_LAND_ADD || (pre->end < s1 && xe > s0) ||
		    rec_overlaps(added, nadded, pre->end, xe) ||
		    rec_overlaps(l->add, l->nadd, pre->end, xe) ||
		    rec_decode(b->src, xe, &in))
			return 0;
		l->ext[l->next].site = (size_t)(pre - sv);
		l->ext[l->next].end = xe;
		l->ext[l->next++].last_transfer = rec_hard_transfer(&in);
		return 1;
	}
	rec_site *nw = &l->add[l->nadd];
	if (l->nadd == REC_LAND_ADD || !rec_land_source(t, b, nw) ||
	    (nw->start < s1 && nw->end > s0) ||
	    rec_overlaps(added, nadded, nw->start, nw->end) ||
	    rec_overlaps(l->add, l->nadd, nw->start, nw->end))
		return 0;
	rec_site *x = rec_site_before(sv, ns, nw->end);
	if (x && x->end > nw->start)
		return 0;
	l->nadd++;
	return 1;
}

/* Whether int3 site sv[i] can go on across the branch target ending its
 * block, and how (l). */
static int rec_land_try(const rec_targets *t, rec_site *sv, size_t ns,
			size_t i, const rec_site *added, size_t nadded,
			rec_landing *l)
{
	const rec_site *st = &sv[i];
	uint64_t land = st->bend, a = st->start, starts[16];
	size_t nst = 0;
	rec_insn x;
	if (st->redirect || st->land || !rec_is_target(t, land))
		return 0;
	/* to the target, then 5 bytes, one transfer at most and last */
	while (a < land || a - st->start < 5) {
		if (nst == 16 || rec_decode(a, rec_text_end(&R.cur->img, a), &x) ||
		    (a != st->start && a != land && rec_is_target(t, a)))
			return 0;
		starts[nst++] = a;
		a += x.in.length;
		if (rec_hard_transfer(&x)) {
			if (a <= land || a - st->start < 5)
				return 0;
			break;
		}
	}
	if (a < land || !rec_in_text(&R.cur->img, st->start, a))
		return 0;
	l->last_transfer = rec_hard_transfer(&x);
	/* a site already there: taken in if its probes come next */
	l->merge = SIZE_MAX;
	size_t nx = i + 1;
	if (nx < ns && sv[nx].start < a) {
		const rec_site *n = &sv[nx];
		int at_start = 0;
		for (size_t k = 0; k < nst; k++)
			at_start |= starts[k] == n->start;
		if (!at_start || n->start < land || n->redirect || n->land || n->loop ||
		    st->p0 + st->np != n->p0 || (n->end < a && n->last_transfer))
			return 0;
		if (n->end >= a) {
			a = n->end;
			l->last_transfer = n->last_transfer;
		}
		l->merge = nx++;
	}
	if ((nx < ns && sv[nx].start < a) || rec_overlaps(added, nadded, st->start, a))
		return 0;
	/* every branch to the target: in a site (whose trampoline then goes
	 * to the target's place), or sent there by rec_land_branch */
	l->nadd = l->next = 0;
	for (size_t k = rec_targets_after(t, land - 1);
	     k < t->n && t->v[k].target == land; k++) {
		const rec_branch *b = &t->v[k];
		if (b->call)
			return 0;
		if ((b->src >= st->start && b->src < a) ||
		    rec_site_at(sv, ns, b->src) ||
		    rec_overlaps(added, nadded, b->src, b->src + 1) ||
		    rec_overlaps(l->add, l->nadd, b->src, b->src + 1))
			continue;
		int dup = 0;
		for (size_t m = 0; m < l->next; m++)
			dup |= b->src >= sv[l->ext[m].site].end && b->src < l->ext[m].end;
		if (!dup && !rec_land_branch(t, sv, ns, b, st->start, a, added,
					     nadded, l))
			return 0;
	}
	l->end = a;
	return 1;
}

size_t rec_plan_landings(const rec_targets *t, rec_site **svp, size_t *nsp)
{
	rec_site *sv = *svp;
	size_t ns = *nsp, made = 0, nadded = 0, capadded = 0;
	rec_site *added = NULL;
	if (R.force_int3 || !R.cur->index || !t->n)
		return 0;
	rec_landing *l = malloc(sizeof *l);
	if (!l)
		rec_die("out of memory");
	for (size_t i = 0; i < ns; i++) {
		if (!sv[i].int3 || sv[i].start == sv[i].end ||
		    !rec_land_try(t, sv, ns, i, added, nadded, l))
			continue;
		for (size_t m = 0; m < l->next; m++) {
			rec_site *xs = &sv[l->ext[m].site];
			if (l->ext[m].end > xs->end) {
				xs->end = l->ext[m].end;
				if (xs->bend < xs->end)
					xs->bend = xs->end;
				xs->last_transfer = l->ext[m].last_transfer;
			}
		}
		rec_site *st = &sv[i];
		if (l->merge != SIZE_MAX) {
			rec_site *n = &sv[l->merge];
			st->np += n->np;
			n->np = 0;
			n->end = n->start;
		}
		st->last_transfer = l->last_transfer;
		st->land = st->bend;
		st->end = st->bend = l->end;
		st->int3 = 0;
		if (nadded + l->nadd > capadded) {
			capadded = 2 * (nadded + l->nadd);
			added = realloc(added, capadded * sizeof *added);
			if (!added)
				rec_die("out of memory");
		}
		memcpy(added + nadded, l->add, l->nadd * sizeof *added);
		nadded += l->nadd;
		made++;
		if (R.verbose)
			rec_say("int3 site at pc 0x%" PRIx64 " of object %u goes on "
				"across the branch target 0x%" PRIx64 " (%zu new sites "
				"for the branches there)", st->start - R.cur->img.bias,
				R.cur->index, st->land - R.cur->img.bias, l->nadd);
	}
	free(l);
	/* the sites taken in out, the new ones in */
	size_t k = 0;
	for (size_t i = 0; i < ns; i++)
		if (sv[i].start != sv[i].end)
			sv[k++] = sv[i];
	sv = realloc(sv, (k + nadded + 1) * sizeof *sv);
	if (!sv)
		rec_die("out of memory");
	memcpy(sv + k, added, nadded * sizeof *added);
	free(added);
	*svp = sv;
	*nsp = k + nadded;
	R.nlanding += made;
	return made;
}
