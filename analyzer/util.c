#include "analyzer/util.h"

#include <stdio.h>
#include <string.h>

static void out_of_memory(void)
{
	fputs("skel: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

static size_t slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return key & (cap - 1);
}

static void grow(addrmap *m)
{
	addrmap bigger = {0};
	bigger.cap = m->cap ? 2 * m->cap : 64;
	bigger.keys = xcalloc(bigger.cap, sizeof *bigger.keys);
	bigger.vals = xcalloc(bigger.cap, sizeof *bigger.vals);
	bigger.used = xcalloc(bigger.cap, 1);
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			addrmap_put(&bigger, m->keys[i], m->vals[i]);
	addrmap_free(m);
	*m = bigger;
}

void addrmap_put(addrmap *m, uint64_t key, uint32_t val)
{
	if (2 * (m->n + 1) > m->cap)
		grow(m);
	size_t i = slot(key, m->cap);
	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i])
		m->n++;
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
}

int addrmap_get(const addrmap *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return 0;
	size_t i = slot(key, m->cap);
	while (m->used[i]) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return 0;
}

void addrmap_free(addrmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}
