/* Building value traces by hand for the tests: a valid header and sealed
 * chunks (format.h), which a test then damages on purpose. */
#ifndef SKEL_VTUTIL_H
#define SKEL_VTUTIL_H
#include "replay/format.h"

/* The header of a trace of an 8-byte content-hash identity, at buf. */
static inline size_t vt_put_header(uint8_t *buf)
{
	vt_header h = { .version = VT_VERSION, .id_len = 8, .id_kind = SKEL_ID_HASH };
	memcpy(h.magic, VT_MAGIC, 8);
	vt_header_seal(&h);
	memcpy(buf, &h, sizeof h);
	return sizeof h;
}

/* A sealed chunk at buf + at; a VALUES chunk gets `first` (the index of
 * its first word) before the n bytes of words.  Returns the end. */
static inline size_t vt_put_chunk(uint8_t *buf, size_t at, uint32_t type, uint32_t thread,
				  uint64_t first, const void *payload, uint64_t n)
{
	size_t pre = type == VT_VALUES ? 8 : 0;
	vt_chunk_header h = { VT_CHUNK_MAGIC, type, thread, 0, n + pre };
	vt_chunk_seal(&h, &first, pre, payload, n);
	memcpy(buf + at, &h, sizeof h);
	if (pre)
		memcpy(buf + at + sizeof h, &first, 8);
	if (n)
		memcpy(buf + at + sizeof h + pre, payload, n);
	return at + sizeof h + pre + n;
}

/* A thread's START chunk (start routine unknown). */
static inline size_t vt_put_start(uint8_t *buf, size_t at, uint32_t thread)
{
	vt_thread_start s = { 0, 0, VT_NO_PARENT, VT_START_UNKNOWN };
	return vt_put_chunk(buf, at, VT_THREAD_START, thread, 0, &s, sizeof s);
}
#endif
