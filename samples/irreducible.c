/* irreducible — loops with two entries, made with goto.
 * Kernels: irreducible  — `if (enter_mid) goto inside; for (;;) { A; inside: B; }`:
 *                         the cycle A -> B -> A is entered at A (fall in) or at
 *                         B (goto), so neither block dominates the other.
 *          irreducible2 — the same two-entry cycle nested inside a reducible
 *                         outer row loop; the entry is chosen per row by data.
 * enter_mid comes from run-time data, so the second entry survives -O2/-O3.
 * Heap array.  Size: argv[1] = n (default 1000); 4 calls of each kernel. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t lcg_state = 0x3C6EF372FE94F82BULL;
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

__attribute__((noinline)) uint64_t irreducible(const long *a, long n, long enter_mid)
{
    long i = 0;
    uint64_t s = 1;
    if (enter_mid)
        goto inside;
    for (;;) {
        /* block A */
        s = s * 3 + (uint64_t)a[i];
        s ^= s >> 7;
        i++;
        if (i >= n)
            break;
    inside:
        /* block B */
        s += (uint64_t)a[i] * 5 - (s & 0xff);
        s ^= s << 3;
        i++;
        if (i >= n)
            break;
    }
    return s;
}

__attribute__((noinline)) uint64_t irreducible2(const long *a, long rows, long cols)
{
    uint64_t total = 0;
    for (long r = 0; r < rows; r++) {
        const long *row = a + r * cols;
        long j = 0;
        uint64_t s = (uint64_t)r;
        if (row[0] & 1)
            goto second;
        for (;;) {
            s += (uint64_t)row[j] * 7;
            s ^= s >> 11;
            j++;
            if (j >= cols)
                break;
        second:
            s = s * 5 + (uint64_t)row[j];
            s ^= s >> 3;
            j++;
            if (j >= cols)
                break;
        }
        total = total * 31 + s;
    }
    return total;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 1000);
    if (n < 16)
        n = 16;
    long *a = malloc(sizeof(long) * n);
    if (!a)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = (long)(lcg() % 100000);
    uint64_t h = 1469598103934665603ULL;
    for (int k = 0; k < 4; k++) {
        long enter_mid = a[k] & 1; /* run-time choice of the entry */
        long len = n - k * 3;      /* odd and even lengths */
        h = (h ^ irreducible(a, len, enter_mid)) * 1099511628211ULL;
        h = (h ^ irreducible(a, len, !enter_mid)) * 1099511628211ULL;
        h = (h ^ irreducible2(a, n / (8 + k), 8 + k)) * 1099511628211ULL;
    }
    printf("irreducible n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    free(a);
    return 0;
}
