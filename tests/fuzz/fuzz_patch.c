/* fuzz_patch.c — libFuzzer harness: a byte buffer as patch text
 * (replay/format.h).  A refusal names its reason; an accepted patch
 * written back in canonical form must parse again to the same probes and
 * hash (what the recorder and the replayer rely on to agree). */
#include "replay/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_probe(const patch_probe *a, const patch_probe *b)
{
	return a->pc == b->pc && a->block_start == b->block_start &&
	       a->block_end == b->block_end && a->after == b->after &&
	       a->what == b->what && a->reg == b->reg && a->k == b->k &&
	       a->word == b->word;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[FMT_ERR_LEN] = "";
	patch p;
	if (patch_parse(&p, (const char *)data, size, err) < 0) {
		if (!err[0] || p.probes || p.nprobes)
			abort();
		return 0;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f || patch_write(f, &p) < 0)
		abort();
	fclose(f);
	patch q;
	if (patch_parse(&q, text, len, err) < 0) {
		fprintf(stderr, "canonical text does not parse: %s\n%s", err, text);
		abort();
	}
	if (q.nprobes != p.nprobes || q.id_len != p.id_len || q.id_kind != p.id_kind ||
	    memcmp(q.id, p.id, p.id_len) != 0 || patch_hash(&p) != patch_hash(&q))
		abort();
	for (size_t i = 0; i < p.nprobes; i++)
		if (!same_probe(&p.probes[i], &q.probes[i]))
			abort();
	free(text);
	patch_free(&q);
	patch_free(&p);
	return 0;
}
