/* triangular — loops whose inner bound depends on the outer index.
 * Kernels: lower_solve (forward substitution L x = b, j in 0..i),
 *          lower_sum   (row-wise sum of the lower triangle, j in 0..i),
 *          upper_sum   (column-wise sum of the upper triangle, j in i..n).
 * Heap arrays.  Size: argv[1] = n (default 48). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg_state = 0xD1B54A32D192ED03ULL;
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

__attribute__((noinline)) void lower_solve(long n, const double *L, const double *b, double *x)
{
    for (long i = 0; i < n; i++) {
        double s = b[i];
        for (long j = 0; j < i; j++)
            s -= L[i * n + j] * x[j];
        x[i] = s / L[i * n + i];
    }
}

__attribute__((noinline)) long lower_sum(long n, const long *a)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j <= i; j++)
            s += a[i * n + j] * (j + 1);
    return s;
}

__attribute__((noinline)) long upper_sum(long n, const long *a)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        for (long j = i; j < n; j++)
            s ^= a[j * n + i] + i;
    return s;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 48);
    double *L = malloc(sizeof(double) * n * n);
    double *b = malloc(sizeof(double) * n);
    double *x = malloc(sizeof(double) * n);
    long *a = malloc(sizeof(long) * n * n);
    if (!L || !b || !x || !a)
        return 1;
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < n; j++) {
            L[i * n + j] = (i == j) ? (double)(n + 1) : (double)(lcg() % 3);
            a[i * n + j] = (long)(lcg() % 1000);
        }
        b[i] = (double)(lcg() % 100);
    }
    lower_solve(n, L, b, x);
    uint64_t h = 1469598103934665603ULL;
    for (long i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        h = (h ^ bits) * 1099511628211ULL;
    }
    h = (h ^ (uint64_t)lower_sum(n, a)) * 1099511628211ULL;
    h = (h ^ (uint64_t)upper_sum(n, a)) * 1099511628211ULL;
    printf("triangular n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    free(L);
    free(b);
    free(x);
    free(a);
    return 0;
}
