/* qsort_cb — callbacks from libc into the main binary.
 * Kernels: cmp_items (qsort comparator: key, then tie, of struct item),
 *          cmp_key   (bsearch comparator),
 *          report    (atexit handler: it prints the checksum line).
 * Heap array of struct item {int key; int tie; long payload;}.
 * Size: argv[1] = items (default 300); n/2 bsearch lookups. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct item {
    int key;
    int tie;
    long payload;
};

static uint64_t lcg_state = 0x165667B19E3779F9ULL;
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

static uint64_t final_checksum;
static long final_n;

__attribute__((noinline)) int cmp_items(const void *pa, const void *pb)
{
    const struct item *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->tie > b->tie) - (a->tie < b->tie);
}

__attribute__((noinline)) int cmp_key(const void *pk, const void *pi)
{
    const int *k = pk;
    const struct item *it = pi;
    return (*k > it->key) - (*k < it->key);
}

__attribute__((noinline)) void report(void)
{
    printf("qsort_cb n=%ld checksum=%016llx\n", final_n, (unsigned long long)final_checksum);
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 300);
    struct item *items = malloc(sizeof(struct item) * n);
    if (!items)
        return 1;
    for (long i = 0; i < n; i++) {
        items[i].key = (int)(lcg() % (uint32_t)(2 * n)); /* duplicates likely */
        items[i].tie = (int)i;                           /* total order: qsort is deterministic */
        items[i].payload = (long)lcg();
    }
    if (atexit(report) != 0)
        return 1;
    qsort(items, (size_t)n, sizeof(struct item), cmp_items);
    uint64_t h = 1469598103934665603ULL;
    for (long i = 0; i < n; i++)
        h = (h ^ ((uint64_t)items[i].key << 32 ^ (uint64_t)items[i].tie)) * 1099511628211ULL;
    long hits = 0;
    for (long q = 0; q < n / 2; q++) {
        int k = (int)(lcg() % (uint32_t)(2 * n));
        const struct item *it = bsearch(&k, items, (size_t)n, sizeof(struct item), cmp_key);
        if (it) {
            hits++;
            h = (h ^ (uint64_t)it->key) * 1099511628211ULL; /* key only: which duplicate is found may vary */
        }
    }
    final_checksum = h ^ (uint64_t)hits;
    final_n = n;
    free(items);
    return 0;
}
