/* recursion — recursive calls (deep stacks of push/call/ret).
 * Kernels: fib (doubly recursive), ack (Ackermann, small arguments),
 *          rsum (divide-and-conquer sum of a heap array).
 * Size: argv[1] = n (default 1000): rsum over min(n, MAXN = 1<<22) elements;
 * fib(k) with k = 10 + floor(log2(n)) capped at 40 (default fib(19));
 * ack(2, 20) and ack(3, 3). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXN (1L << 22)

static uint64_t lcg_state = 0xB492B66FBE98F273ULL;
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

/* volatile: keeps gcc -O3 from cloning ack for constant arguments (ack.constprop) */
static volatile long ack_m[2] = {2, 3}, ack_n[2] = {20, 3};

__attribute__((noinline)) long fib(int k)
{
    if (k < 2)
        return k;
    return fib(k - 1) + fib(k - 2);
}

__attribute__((noinline)) long ack(long m, long n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

__attribute__((noinline)) long rsum(const long *a, long lo, long hi)
{
    if (hi - lo <= 0)
        return 0;
    if (hi - lo == 1)
        return a[lo];
    long mid = lo + (hi - lo) / 2;
    return rsum(a, lo, mid) + rsum(a, mid, hi);
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 1000);
    long len = n > MAXN ? MAXN : n;
    long *a = malloc(sizeof(long) * len);
    if (!a)
        return 1;
    for (long i = 0; i < len; i++)
        a[i] = (long)(lcg() % 100000) - 50000;
    int k = 10;
    for (long m = n; m > 1; m >>= 1)
        k++;
    if (k > 40)
        k = 40;
    long f = fib(k);
    long a2 = ack(ack_m[0], ack_n[0]);
    long a3 = ack(ack_m[1], ack_n[1]);
    long s = rsum(a, 0, len);
    uint64_t h = ((uint64_t)f * 1000003u ^ (uint64_t)a2) * 1000003u ^ (uint64_t)a3;
    h = h * 1099511628211ULL ^ (uint64_t)s;
    printf("recursion n=%ld fib(%d)=%ld ack=%ld,%ld checksum=%016llx\n", n, k, f, a2, a3,
           (unsigned long long)h);
    free(a);
    return 0;
}
