/* fuzz_vtrace.c — libFuzzer harness: a byte buffer as a value-trace file
 * (replay/format.h).  The chunk walk and both per-thread views must take
 * any input: a clean error with the prefix before it, never a read past
 * the buffer (ASan), a crash or a leak.  Every word handed out is read, so
 * that a run pointing outside the file is caught. */
#include "replay/format.h"

#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

static void read_streams(const vt_streams *s)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < s->n; i++) {
		const vt_stream *st = &s->s[i];
		size_t n = 0;
		for (size_t k = 0; st->values && k < st->nvalues; k++)
			sum += st->values[k];
		for (size_t r = 0; r < st->nruns; r++) {
			uint64_t *w = malloc((st->runs[r].n + VT_UNPACK_SLACK) * 8);
			if (w && vt_run_words(&st->runs[r], w) == 0)
				for (size_t k = 0; k < st->runs[r].n; k++)
					sum += w[k];
			free(w);
			n += st->runs[r].n;
		}
		/* a stream is either copied or a list of runs, and nvalues
		 * counts its words either way */
		if (st->nruns && n != st->nvalues)
			abort();
		sum += st->start.start + st->crash.pc;
	}
	for (size_t i = 0; i < s->nmap; i++)
		sum += s->map[i].tramp + s->map[i].pc;
	sink = sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[FMT_ERR_LEN] = "";
	vtrace t;
	if (vtrace_open_mem(&t, data, size, err) < 0) {
		if (!err[0])
			abort();
		return 0;
	}
	/* the chunk iterator on its own: stops for good after an error */
	vt_chunk c;
	int rc;
	size_t chunks = 0;
	while ((rc = vtrace_next(&t, &c, err)) == 1) {
		if (c.payload < t.data || c.payload + c.h.payload_bytes > t.data + t.size)
			abort();
		chunks++;
	}
	if (rc < 0 && (!err[0] || vtrace_next(&t, &c, err) != -1))
		abort();
	vtrace_close(&t);

	vt_streams s;
	if (vtrace_open_mem(&t, data, size, err) < 0)
		abort();
	vtrace_streams_ref(&t, &s);
	read_streams(&s);
	vtrace_streams_free(&s);
	vtrace_close(&t);

	if (vtrace_open_mem(&t, data, size, err) < 0)
		abort();
	vtrace_streams_from(&t, &s);
	read_streams(&s);
	if (s.complete && !chunks)
		abort();
	vtrace_streams_free(&s);
	vtrace_close(&t);
	return 0;
}
