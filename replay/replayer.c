/* replayer.c — the main program a skeleton is compiled with: reads a value
 * trace, runs the skeleton over each thread's stream and writes the trace.
 *
 *   replayer VALUES [-o TRACE] [--format text|count] [--quiet]
 *
 * Exit status: 0 when every stream was replayed to its end, 3 on a
 * desynchronisation (skeleton and stream disagree), 2 on unusable input;
 * a truncated or corrupt value trace is replayed up to the damage and
 * reported (exit 4). */
#include "replay/format.h"
#include "replay/skel_rt.h"

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char sk_binary_id[];
extern const char *const sk_routine_names[];
extern const unsigned sk_nroutines;

typedef struct sink {
	FILE *f;
	char buf[1 << 16];
	size_t n;
	jmp_buf end;
	int desync;
} sink;

static const char *out_path = "-";

static void sink_flush(sink *s)
{
	if (s->n && fwrite(s->buf, 1, s->n, s->f) != s->n) {
		fprintf(stderr, "skel: %s: write error\n", out_path);
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

/* "PC R|W SIZE ADDR", hex, one access per line */
void sk_emit(sk_thread *t, uint64_t pc, int kind, unsigned size, uint64_t addr)
{
	sink *s = t->sink;
	if (s->n > sizeof s->buf - 64)
		sink_flush(s);
	char *p = s->buf + s->n;
	p = put_hex(p, pc);
	*p++ = ' ';
	*p++ = kind == SK_W ? 'W' : 'R';
	*p++ = ' ';
	p = put_hex(p, size);
	*p++ = ' ';
	p = put_hex(p, addr);
	*p++ = '\n';
	s->n = (size_t)(p - s->buf);
}

void sk_crashed(sk_thread *t)
{
	longjmp(((sink *)t->sink)->end, 1);
}

uint64_t sk_end_of_stream(sk_thread *t)
{
	longjmp(((sink *)t->sink)->end, 1);
}

void sk_desync(sk_thread *t, uint64_t pc, const char *what, uint64_t got)
{
	sink *s = t->sink;
	sink_flush(s);
	fprintf(stderr, "skel: replay: thread %u desynchronised at pc 0x%" PRIx64
		" (word %zu of its stream): %s, got 0x%" PRIx64 "\n", t->thread, pc,
		(size_t)(t->w - t->begin), what, got);
	s->desync = 1;
	longjmp(s->end, 2);
}

typedef struct job {
	sk_thread t;
	sink *s;
	int how;            /* 1: end of stream, 2: desync */
} job;

static void *replay_stream(void *arg)
{
	job *j = arg;
	sk_thread *t = &j->t;
	int r = setjmp(j->s->end);
	if (r == 0)
		for (;;)
			sk_dispatch(t, sk_in(t));
	j->how = r;
	return NULL;
}

/* Deep recursion in the program is deep recursion in the skeleton: run
 * each stream on a thread with a large stack. */
static int run_job(job *j)
{
	pthread_attr_t at;
	pthread_t th;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, (size_t)1 << 30);
	if (pthread_create(&th, &at, replay_stream, j) != 0) {
		replay_stream(j);
		return j->how;
	}
	pthread_join(th, NULL);
	pthread_attr_destroy(&at);
	return j->how;
}

static void hex_id(const vt_header *h, char *out)
{
	for (uint32_t i = 0; i < h->id_len && i < SKEL_ID_MAX; i++)
		sprintf(out + 2 * i, "%02x", h->id[i]);
	out[2 * (h->id_len < SKEL_ID_MAX ? h->id_len : SKEL_ID_MAX)] = 0;
}

int main(int argc, char **argv)
{
	const char *values = NULL, *format = "text";
	bool quiet = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			format = argv[++i];
		else if (!strcmp(argv[i], "--quiet"))
			quiet = true;
		else
			values = argv[i];
	}
	if (!values || (strcmp(format, "text") && strcmp(format, "count"))) {
		fprintf(stderr, "usage: replayer VALUES [-o TRACE] [--format text|count]\n");
		return 2;
	}
	char err[FMT_ERR_LEN];
	vt_streams st;
	if (vtrace_load_streams(values, &st, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", values, err);
		return 2;
	}
	vtrace vt;
	if (vtrace_open(&vt, values, err) < 0) {
		fprintf(stderr, "skel: %s: %s\n", values, err);
		return 2;
	}
	char id[2 * SKEL_ID_MAX + 1];
	hex_id(&vt.header, id);
	uint64_t bias = vt.header.image_base;
	vtrace_close(&vt);
	if (strcmp(id, sk_binary_id)) {
		fprintf(stderr, "skel: %s: recorded from binary %s, but the skeleton is for %s\n",
			values, id, sk_binary_id);
		return 2;
	}

	static sink s;
	s.f = strcmp(out_path, "-") ? fopen(out_path, "w") : stdout;
	if (!s.f) {
		fprintf(stderr, "skel: %s: cannot write\n", out_path);
		return 2;
	}
	bool count = !strcmp(format, "count");
	uint64_t total[2] = { 0, 0 }, bytes[2] = { 0, 0 };
	int rc = 0;
	for (size_t k = 0; k < st.n; k++) {
		vt_stream *vs = &st.s[k];
		job j = { .s = &s };
		j.t.w = j.t.begin = vs->values;
		j.t.end = vs->values + vs->nvalues;
		j.t.bias = bias;
		j.t.sink = &s;
		j.t.count_only = count;
		j.t.thread = vs->thread;
		j.t.crash_pc = vs->crashed && vs->crash.pc ? vs->crash.pc : UINT64_MAX;
		if (!count) {
			int n = snprintf(s.buf + s.n, 128, "# thread %u start 0x%" PRIx64 "\n",
					 vs->thread, vs->start.start);
			s.n += (size_t)n;
		}
		if (run_job(&j) == 2)
			rc = 3;
		total[0] += j.t.count[0];
		total[1] += j.t.count[1];
		bytes[0] += j.t.bytes[0];
		bytes[1] += j.t.bytes[1];
		if (count)
			fprintf(s.f, "thread %u: %" PRIu64 " reads (%" PRIu64 " bytes), %" PRIu64
				" writes (%" PRIu64 " bytes), %zu values\n", vs->thread,
				j.t.count[0], j.t.bytes[0], j.t.count[1], j.t.bytes[1], vs->nvalues);
		sink_flush(&s);
	}
	if (count)
		fprintf(s.f, "total: %" PRIu64 " accesses, %" PRIu64 " reads, %" PRIu64
			" writes, %" PRIu64 " bytes\n", total[0] + total[1], total[0], total[1],
			bytes[0] + bytes[1]);
	sink_flush(&s);
	if (s.f != stdout)
		fclose(s.f);
	if (st.error[0]) {
		fprintf(stderr, "skel: %s: %s (the trace up to there was replayed)\n", values, st.error);
		if (!rc)
			rc = 4;
	} else if (!st.complete && !quiet) {
		fprintf(stderr, "skel: %s: the recorded run did not exit cleanly (crash or kill); "
			"the trace of what it did was replayed\n", values);
	}
	for (size_t k = 0; k < st.n && !quiet; k++)
		if (st.s[k].crashed)
			fprintf(stderr, "skel: %s: thread %u died of signal %u at pc 0x%" PRIx64 "\n",
				values, st.s[k].thread, st.s[k].crash.signal, st.s[k].crash.pc);
	vtrace_streams_free(&st);
	return rc;
}
