/* hash — open-addressing hash table (linear probing) in global static
 * arrays (link-time addresses).
 * Kernels: ht_insert, ht_lookup.
 * Size: argv[1] = keys inserted (default 1000, clamped to MAXCAP/2);
 * capacity = next power of two >= 2n; 2n lookups of keys in 1..8n (odd keys are never present). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXCAP (1L << 22)

static uint64_t ht_keys[MAXCAP]; /* 0 = empty slot; keys are never 0 */
static long ht_vals[MAXCAP];
static uint64_t ht_mask;

static uint64_t lcg_state = 0x8EBC6AF09C88C6E3ULL;
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

/* Returns 1 if the key was new. */
__attribute__((noinline)) int ht_insert(uint64_t key, long val)
{
    uint64_t i = (key * 0x9E3779B97F4A7C15ULL) >> 20 & ht_mask;
    while (ht_keys[i] != 0) {
        if (ht_keys[i] == key) {
            ht_vals[i] += val;
            return 0;
        }
        i = (i + 1) & ht_mask;
    }
    ht_keys[i] = key;
    ht_vals[i] = val;
    return 1;
}

/* Returns the value, or -1 if absent. */
__attribute__((noinline)) long ht_lookup(uint64_t key)
{
    uint64_t i = (key * 0x9E3779B97F4A7C15ULL) >> 20 & ht_mask;
    for (;;) {
        uint64_t k = ht_keys[i];
        if (k == key)
            return ht_vals[i];
        if (k == 0)
            return -1;
        i = (i + 1) & ht_mask;
    }
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 1000);
    if (n > MAXCAP / 2)
        n = MAXCAP / 2;
    uint64_t cap = 1;
    while (cap < (uint64_t)(2 * n))
        cap <<= 1;
    ht_mask = cap - 1;
    long fresh = 0;
    for (long i = 0; i < n; i++) {
        uint64_t k = 2 * (uint64_t)(lcg() % (uint32_t)(4 * n)) + 2; /* even, non-zero */
        fresh += ht_insert(k, i);
    }
    long hits = 0;
    uint64_t acc = 0;
    for (long i = 0; i < 2 * n; i++) {
        uint64_t k = (uint64_t)(lcg() % (uint32_t)(8 * n)) + 1;
        long v = ht_lookup(k);
        if (v >= 0) {
            hits++;
            acc = acc * 31 + (uint64_t)v;
        }
    }
    printf("hash n=%ld fresh=%ld hits=%ld checksum=%016llx\n", n, fresh, hits,
           (unsigned long long)acc);
    return 0;
}
