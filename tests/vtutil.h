/* Building value traces by hand for the tests: a valid header and sealed
 * chunks (format.h), which a test then damages on purpose. */
#ifndef SKEL_VTUTIL_H
#define SKEL_VTUTIL_H
#include "replay/format.h"
#include <stdlib.h>

/* The header of a trace of an 8-byte content-hash identity, at buf. */
static inline size_t vt_put_header(uint8_t *buf)
{
	vt_header h = { .version = VT_VERSION, .id_len = 8, .id_kind = SKEL_ID_HASH };
	memcpy(h.magic, VT_MAGIC, 8);
	vt_header_seal(&h);
	memcpy(buf, &h, sizeof h);
	return sizeof h;
}

/* A VALUES payload (malloc'd, *n bytes): the n / 8 words at `words`
 * packed (format.h, vt_pack) with `first`, the index of the first. */
static inline uint8_t *vt_packed_payload(const void *words, uint64_t *n, uint64_t first)
{
	size_t nw = *n / 8;
	uint64_t *w = malloc(*n + 8);
	uint8_t *codes = malloc(nw / 2 + 1);
	uint8_t *data = malloc(nw * VT_PACK_MAX + 8);
	uint8_t *packed = malloc(sizeof(vt_packed) + nw / 2 + 1 + nw * VT_PACK_MAX + 8);
	if (*n)
		memcpy(w, words, *n);
	vt_packed h = { first, nw, 0, 0 };
	vt_pack(w, nw, codes, data, nw * VT_PACK_MAX + nw / 2 + 1, &h.tokens, &h.data);
	memcpy(packed, &h, sizeof h);
	memcpy(packed + sizeof h, codes, (h.tokens + 1) / 2);
	size_t k = vt_packed_head(h.tokens);
	memcpy(packed + k, data, h.data);
	k += h.data;
	while (k % 8)
		packed[k++] = 0;
	free(w);
	free(codes);
	free(data);
	*n = k;
	return packed;
}

/* A sealed chunk at buf + at; a VALUES chunk's payload is given as its
 * n / 8 words, which go in packed (vt_packed_payload) with `first`, the
 * index of its first word.  Returns the end. */
static inline size_t vt_put_chunk(uint8_t *buf, size_t at, uint32_t type, uint32_t thread,
				  uint64_t first, const void *payload, uint64_t n)
{
	uint8_t *packed = NULL;
	if (type == VT_VALUES)
		payload = packed = vt_packed_payload(payload, &n, first);
	vt_chunk_header h = { VT_CHUNK_MAGIC, type, thread, 0, n };
	vt_chunk_seal(&h, NULL, 0, payload, n);
	memcpy(buf + at, &h, sizeof h);
	if (n)
		memcpy(buf + at + sizeof h, payload, n);
	free(packed);
	return at + sizeof h + n;
}

/* A thread's START chunk (start routine unknown). */
static inline size_t vt_put_start(uint8_t *buf, size_t at, uint32_t thread)
{
	vt_thread_start s = { 0, 0, VT_NO_PARENT, VT_START_UNKNOWN, 0 };
	return vt_put_chunk(buf, at, VT_THREAD_START, thread, 0, &s, sizeof s);
}
#endif
