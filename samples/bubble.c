/* bubble — bubble sort with data-dependent swaps on a global static array.
 * Kernels: bubble_sort (outer pass loop with early exit when no swap,
 *          inner compare/swap loop; inner bound n-1-pass depends on outer),
 *          is_sorted.
 * Size: argv[1] = n (default 150, clamped to MAXN = 1<<16). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXN (1L << 16)

static long arr[MAXN];

static uint64_t lcg_state = 0x7A646E4D3B3C7F1DULL;
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

/* Returns the number of swaps. */
__attribute__((noinline)) long bubble_sort(long n)
{
    long swaps = 0;
    for (long pass = 0; pass < n - 1; pass++) {
        int swapped = 0;
        for (long i = 0; i < n - 1 - pass; i++) {
            if (arr[i] > arr[i + 1]) {
                long t = arr[i];
                arr[i] = arr[i + 1];
                arr[i + 1] = t;
                swapped = 1;
                swaps++;
            }
        }
        if (!swapped)
            break;
    }
    return swaps;
}

__attribute__((noinline)) int is_sorted(long n)
{
    for (long i = 1; i < n; i++)
        if (arr[i - 1] > arr[i])
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 150);
    if (n > MAXN)
        n = MAXN;
    for (long i = 0; i < n; i++)
        arr[i] = (long)(lcg() % 100000);
    arr[n / 2] = arr[0]; /* a duplicate */
    long swaps = bubble_sort(n);
    if (!is_sorted(n))
        return 2;
    uint64_t h = 1469598103934665603ULL;
    for (long i = 0; i < n; i++)
        h = (h ^ (uint64_t)arr[i]) * 1099511628211ULL;
    printf("bubble n=%ld swaps=%ld checksum=%016llx\n", n, swaps, (unsigned long long)h);
    return 0;
}
