/* strings — byte-string loops.
 * Kernels: my_strlen, my_strcpy, my_memcpy, my_memset (hand-written loops),
 *          asm_copy (inline asm: rep movsb for the bytes, then rep stosq to
 *                    fill a qword area — string instructions in the main binary),
 *          libc_ops (calls libc memcpy/memset/strlen).
 * Heap buffers.  Size: argv[1] = buffer bytes (default 1024); 4 rounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg_state = 0x27BB2EE687B0B0FDULL;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(lcg_state >> 33);
}

static long arg_size(int argc, char **argv, long def)
{
    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, 10);
        if (*end == '\0' && v > 0)
            return v;
    }
    return def;
}

__attribute__((noinline)) size_t my_strlen(const char *s)
{
    const char *p = s;
    while (*p)
        p++;
    return (size_t)(p - s);
}

__attribute__((noinline)) char *my_strcpy(char *d, const char *s)
{
    char *r = d;
    while ((*d++ = *s++) != '\0')
        ;
    return r;
}

__attribute__((noinline)) void *my_memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
    return dst;
}

__attribute__((noinline)) void *my_memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)c;
    return dst;
}

/* rep movsb of n bytes src -> dst, then rep stosq of nq copies of pattern at q. */
__attribute__((noinline)) void asm_copy(void *dst, const void *src, size_t n, uint64_t *q,
                                        size_t nq, uint64_t pattern)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
    __asm__ volatile("rep stosq" : "+D"(q), "+c"(nq) : "a"(pattern) : "memory");
}

__attribute__((noinline)) size_t libc_ops(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    memset(dst + n / 2, 'x', n / 4);
    return strlen(dst);
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 1024);
    if (n < 16)
        n = 16;
    size_t sz = (size_t)n;
    char *a = malloc(sz);
    char *b = malloc(sz);
    char *c = malloc(sz);
    size_t nq = sz / 8;
    uint64_t *q = malloc(nq * sizeof(uint64_t));
    if (!a || !b || !c || !q)
        return 1;
    for (size_t i = 0; i < sz - 1; i++)
        a[i] = (char)('a' + lcg() % 26);
    a[sz - 1] = '\0';
    uint64_t h = 1469598103934665603ULL;
    for (int round = 0; round < 4; round++) {
        size_t cut = sz / 2 + (size_t)round * (sz / 16); /* shorter string each round */
        a[cut] = '\0';
        h = (h ^ my_strlen(a)) * 1099511628211ULL;
        my_strcpy(b, a);
        my_memset(c, 'A' + round, sz);
        my_memcpy(c + 1, b, cut);
        h = hash_bytes(h, c, sz);
        asm_copy(b, c, sz, q, nq, 0x0101010101010101ULL * (uint64_t)(round + 1));
        h = hash_bytes(h, b, sz);
        h = hash_bytes(h, q, nq * sizeof(uint64_t));
        c[sz - 1] = '\0';
        h = (h ^ libc_ops(b, c, sz)) * 1099511628211ULL;
        h = hash_bytes(h, b, sz);
        a[cut] = 'q';
    }
    printf("strings n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    free(a);
    free(b);
    free(c);
    free(q);
    return 0;
}
