/* interleave.c — one sequence of accesses as an interleaving of threads'
 * streams, with backtracking (interleave.h). */
#include "interleave.h"

#include "analyzer/util.h"

#include <string.h>

/* A point where several threads' next access was the sequence's: the
 * threads (likeliest first), the next to try, and where every thread
 * stood before it. */
#define CAND_MAX 8
typedef struct choice {
	size_t i, cur, skipped;
	size_t *pos;
	size_t cand[CAND_MAX], ncand, next;
} choice;

/* The latest CHOICES_MAX choices are kept; the search gives up once it
 * has matched STEPS_MAX accesses more than the sequence has. */
#define CHOICES_MAX 4096
#define STEPS_MAX ((size_t)50 * 1000 * 1000)
/* How far ahead a candidate's stream is compared with the sequence. */
#define LOOKAHEAD 4096

typedef struct matcher {
	const il_acc *seq;
	size_t n;
	il_thread *t;
	size_t nt;
	choice *ch;		/* a ring of CHOICES_MAX */
	size_t top, depth;	/* the next slot, the choices held */
	size_t backtracks;
} matcher;

static bool same(const il_acc *a, const il_acc *b)
{
	return a->pc == b->pc && a->addr == b->addr && a->size == b->size && a->w == b->w;
}

/* How many of the sequence's accesses from i on thread t makes next. */
static size_t run_ahead(const matcher *m, size_t i, const il_thread *t)
{
	size_t k = 0;
	while (k < LOOKAHEAD && i + k < m->n && t->pos + k < t->n &&
	       same(&t->a[t->pos + k], &m->seq[i + k]))
		k++;
	return k;
}

/* The threads whose next access is the sequence's i-th, at most CAND_MAX:
 * the one that goes on matching longest first (valgrind runs a thread for
 * many blocks at a time); on a tie the one that matched last (cur), else
 * the oldest (a thread starting as an older one did comes after it). */
static size_t candidates(const matcher *m, size_t i, size_t cur, size_t *cand)
{
	size_t n = 0, run[CAND_MAX];
	for (size_t k = 0; k <= m->nt && n < CAND_MAX; k++) {
		size_t t = k == 0 ? cur : k - 1;
		if (t >= m->nt || (k && t == cur))
			continue;
		const il_thread *th = &m->t[t];
		if (th->pos < th->n && same(&th->a[th->pos], &m->seq[i]))
			cand[n++] = t;
	}
	if (n < 2)
		return n;
	for (size_t k = 0; k < n; k++)
		run[k] = run_ahead(m, i, &m->t[cand[k]]);
	for (size_t k = 1; k < n; k++)	/* insertion sort, ties keep their order */
		for (size_t j = k; j > 0 && run[j] > run[j - 1]; j--) {
			size_t r = run[j], c = cand[j];
			run[j] = run[j - 1], cand[j] = cand[j - 1];
			run[j - 1] = r, cand[j - 1] = c;
		}
	return n;
}

static void choice_push(matcher *m, size_t i, size_t cur, size_t skipped, const size_t *cand,
			size_t ncand)
{
	choice *c = &m->ch[m->top];
	if (!c->pos)
		c->pos = xcalloc(m->nt, sizeof *c->pos);
	for (size_t t = 0; t < m->nt; t++)
		c->pos[t] = m->t[t].pos;
	c->i = i, c->cur = cur, c->skipped = skipped, c->ncand = ncand, c->next = 1;
	memcpy(c->cand, cand, ncand * sizeof *cand);
	m->top = (m->top + 1) % CHOICES_MAX;
	if (m->depth < CHOICES_MAX)
		m->depth++;
}

/* Back to the latest choice with a thread not tried yet, that thread's
 * access taken.  False when there is none. */
static bool choice_pop(matcher *m, size_t *i, size_t *cur, size_t *skipped)
{
	while (m->depth) {
		size_t k = (m->top + CHOICES_MAX - 1) % CHOICES_MAX;
		choice *c = &m->ch[k];
		if (c->next == c->ncand) {
			m->top = k;
			m->depth--;
			continue;
		}
		for (size_t t = 0; t < m->nt; t++)
			m->t[t].pos = c->pos[t];
		size_t t = c->cand[c->next++];
		m->t[t].pos++;
		*i = c->i + 1, *cur = t, *skipped = c->skipped;
		m->backtracks++;
		return true;
	}
	return false;
}

/* Where this attempt failed, if further than any before. */
static void note_failure(il_result *r, size_t i, const il_thread *t, size_t thread, bool extra)
{
	r->far = i, r->thread = thread;
	r->ended = t->pos >= t->n;
	r->extra = extra ? t->n - t->pos : 0;
	if (!r->ended)
		r->next = t->a[t->pos];
}

void il_match(const il_acc *seq, size_t n, il_thread *threads, size_t nthreads,
	      il_skippable skip, void *ctx, il_result *r)
{
	matcher m = { .seq = seq, .n = n, .t = threads, .nt = nthreads };
	m.ch = xcalloc(CHOICES_MAX, sizeof *m.ch);
	*r = (il_result){ 0 };
	size_t cur = 0, skipped = 0, i = 0, steps = 0, cand[CAND_MAX];
	bool failed = false;	/* an attempt has failed (r->far is set) */
	for (;;) {
		if (i < n) {
			size_t nc = nthreads ? candidates(&m, i, cur, cand) : 0;
			if (nc) {
				if (nc > 1)
					choice_push(&m, i, cur, skipped, cand, nc);
				threads[cand[0]].pos++;
				cur = cand[0];
				i++;
				steps++;
				continue;
			}
			il_thread *ct = nthreads ? &threads[cur] : NULL;
			if (ct && ct->pos < ct->n && skip && skip(&ct->a[ct->pos], ctx)) {
				ct->pos++;	/* try seq[i] again */
				skipped++;
				continue;
			}
			if (!failed || i >= r->far) {
				if (ct)
					note_failure(r, i, ct, cur, false);
				else
					r->far = i, r->ended = true;
			}
		} else {
			size_t t = 0;
			for (; t < nthreads; t++) {
				il_thread *th = &threads[t];
				while (th->pos < th->n && skip && skip(&th->a[th->pos], ctx)) {
					th->pos++;
					skipped++;
				}
				if (th->pos < th->n)
					break;
			}
			if (t == nthreads) {
				r->matched = true;
				r->skipped = skipped;
				break;
			}
			if (!failed || i >= r->far)
				note_failure(r, i, &threads[t], t, true);
		}
		failed = true;
		if (steps > n + STEPS_MAX || !choice_pop(&m, &i, &cur, &skipped))
			break;
	}
	r->backtracks = m.backtracks;
	for (size_t k = 0; k < CHOICES_MAX; k++)
		free(m.ch[k].pos);
	free(m.ch);
}
