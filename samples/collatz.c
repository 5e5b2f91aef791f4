/* collatz — pure arithmetic loops between array accesses: for each
 * element, a `while` of Collatz steps that touches no memory, then a store
 * of the step count (collatz_steps), or an increment of a histogram bin
 * the step count selects (collatz_hist: an address that depends on the
 * loop's result).
 * Kernels: collatz_steps, collatz_hist.
 * Size: argv[1] = elements (default 2000); start values in 1..2^20. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t lcg_state = 0x5DEECE66DULL;
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

/* out[i] = the number of steps from a[i] down to 1 */
__attribute__((noinline)) long collatz_steps(const uint64_t *a, uint32_t *out, long n)
{
    long total = 0;
    for (long i = 0; i < n; i++) {
        uint64_t x = a[i];
        uint32_t steps = 0;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x / 2;
            steps++;
        }
        out[i] = steps;
        total += steps;
    }
    return total;
}

/* hist[steps % 64]++ for every element: the bin is known only after the
 * arithmetic loop */
__attribute__((noinline)) void collatz_hist(const uint64_t *a, uint32_t *hist, long n)
{
    for (long i = 0; i < n; i++) {
        uint64_t x = a[i];
        unsigned steps = 0;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x / 2;
            steps++;
        }
        hist[steps % 64]++;
    }
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 2000);
    uint64_t *a = malloc(n * sizeof *a);
    uint32_t *out = malloc(n * sizeof *out);
    uint32_t *hist = calloc(64, sizeof *hist);
    if (!a || !out || !hist)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = 1 + lcg() % (1u << 20);
    long total = collatz_steps(a, out, n);
    collatz_hist(a, hist, n);
    uint64_t sum = 0;
    for (long i = 0; i < n; i++)
        sum = sum * 31 + out[i];
    for (int b = 0; b < 64; b++)
        sum = sum * 131 + hist[b];
    printf("collatz n=%ld steps=%ld checksum=%016llx\n", n, total, (unsigned long long)sum);
    free(a);
    free(out);
    free(hist);
    return 0;
}
