/* earlyexit — loops left from the middle.
 * Kernels: find_first  (for loop with return from the body),
 *          scan_limit  (while loop with two exit conditions: i < n && s < limit),
 *          find_pair   (nested loops; inner loop has two exit conditions and a
 *                       break, the pair found leaves both loops with goto),
 *          count_until (for loop with break in the middle and continue).
 * Data: global static array data[MAXN] (link-time address).
 * Size: argv[1] = n (default 256); 8 query rounds.  Beyond MAXN = 1<<22 the
 * array stays at MAXN and the rounds become 8 * (n / MAXN). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXN (1L << 22)

static long data[MAXN];

static uint64_t lcg_state = 0x94D049BB133111EBULL;
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

__attribute__((noinline)) long find_first(long n, long key)
{
    for (long i = 0; i < n; i++)
        if (data[i] == key)
            return i;
    return -1;
}

__attribute__((noinline)) long scan_limit(long n, long limit)
{
    long i = 0, s = 0;
    while (i < n && s < limit) {
        s += data[i];
        i++;
    }
    return i * 1000 + (s & 0xff);
}

__attribute__((noinline)) long find_pair(long n, long target)
{
    long r = -1;
    for (long i = 0; i < n; i++) {
        for (long j = i + 1; j < n && j < i + 16; j++) {
            if (data[i] + data[j] == target) {
                r = i * 16 + (j - i);
                goto done;
            }
            if (data[j] < 0)
                break;
        }
    }
done:
    return r;
}

__attribute__((noinline)) long count_until(long n, long stop)
{
    long c = 0;
    for (long i = 0; i < n; i++) {
        long v = data[i];
        if (v == stop)
            break;
        if (v & 1)
            continue;
        c += v;
    }
    return c;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 256);
    long rounds = 8;
    if (n > MAXN) {
        rounds = 8 * (n / MAXN);
        n = MAXN;
    }
    for (long i = 0; i < n; i++)
        data[i] = (long)(lcg() % 2000) - 100;
    uint64_t h = 1469598103934665603ULL;
    for (long r = 0; r < rounds; r++) {
        int q = (int)(r % 8);
        long key = (q & 1) ? data[(long)(lcg() % (uint32_t)n)] : 5000 + q; /* present / absent */
        h = (h ^ (uint64_t)find_first(n, key)) * 1099511628211ULL;
        h = (h ^ (uint64_t)scan_limit(n, (long)q * 100 * n)) * 1099511628211ULL;
        h = (h ^ (uint64_t)find_pair(n, 3500 + q * 17)) * 1099511628211ULL;
        h = (h ^ (uint64_t)count_until(n, key)) * 1099511628211ULL;
    }
    printf("earlyexit n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    return 0;
}
