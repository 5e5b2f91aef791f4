/* util.h — small containers shared by the analysis stages: checked
 * allocation, growable arrays, an address → index hash map. */
#ifndef SKEL_UTIL_H
#define SKEL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Growable array: VEC(T) v = {0}; vec_push(v, x); free(v.a); */
#define VEC(T) struct { T *a; size_t n, cap; }
#define vec_push(v, x) do { \
	if ((v).n == (v).cap) { \
		(v).cap = (v).cap ? 2 * (v).cap : 8; \
		(v).a = xrealloc((v).a, (v).cap * sizeof *(v).a); \
	} \
	(v).a[(v).n++] = (x); \
} while (0)

/* Open-addressing map from a non-zero-able 64-bit key to a uint32_t. */
typedef struct addrmap {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t n, cap;
} addrmap;

void addrmap_put(addrmap *m, uint64_t key, uint32_t val);
/* Returns 1 and sets *val when present. */
int addrmap_get(const addrmap *m, uint64_t key, uint32_t *val);
void addrmap_free(addrmap *m);

int cmp_u64(const void *a, const void *b);
#endif
