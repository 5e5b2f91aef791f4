/* fuzz_patch.c — libFuzzer harness: a byte buffer as patch text
 * (replay/format.h).  A refusal names its reason; an accepted patch
 * written back in canonical form must parse again to the same probes and
 * hash (what the recorder and the replayer rely on to agree).  The same
 * buffer as a patch set (several sections): refused with a message, or
 * each section written back reads the same, and a one-section text parses
 * to the patch patch_parse gives. */
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

static void roundtrip(const patch *p);

static void fuzz_set(const uint8_t *data, size_t size, const patch *single)
{
	char err[FMT_ERR_LEN] = "";
	patch_set s;
	if (patch_set_parse(&s, (const char *)data, size, err) < 0) {
		if (!err[0] || s.n || s.obj || single)
			abort();	/* a valid single patch is a valid set */
		return;
	}
	if (!s.n || s.n > PATCH_MAX_OBJECTS)
		abort();
	if (single && (s.n != 1 || patch_hash(&s.obj[0]) != patch_hash(single)))
		abort();
	for (size_t i = 0; i < s.n; i++)
		roundtrip(&s.obj[i]);
	patch_set_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[FMT_ERR_LEN] = "";
	patch p;
	if (patch_parse(&p, (const char *)data, size, err) < 0) {
		if (!err[0] || p.probes || p.nprobes)
			abort();
		fuzz_set(data, size, NULL);
		return 0;
	}
	fuzz_set(data, size, &p);
	roundtrip(&p);
	patch_free(&p);
	return 0;
}

static void roundtrip(const patch *pp)
{
	const patch p = *pp;
	char err[FMT_ERR_LEN] = "";
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
}
