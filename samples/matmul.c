/* matmul — dense C = A*B over n×n doubles on the heap.
 * Kernel: matmul (classic i/j/k triple loop, k innermost).
 * Size: argv[1] = n (default 24). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg_state = 0x2545F4914F6CDD1DULL;
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

__attribute__((noinline)) void matmul(long n, const double *A, const double *B, double *C)
{
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double s = 0.0;
            for (long k = 0; k < n; k++)
                s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 24);
    double *A = malloc(sizeof(double) * n * n);
    double *B = malloc(sizeof(double) * n * n);
    double *C = malloc(sizeof(double) * n * n);
    if (!A || !B || !C)
        return 1;
    /* small integers: every product and sum is exact, so all builds agree */
    for (long i = 0; i < n * n; i++) {
        A[i] = (double)((int)(lcg() % 7) - 3);
        B[i] = (double)((int)(lcg() % 5) - 2);
    }
    matmul(n, A, B, C);
    uint64_t h = 1469598103934665603ULL;
    for (long i = 0; i < n * n; i++) {
        uint64_t bits;
        memcpy(&bits, &C[i], sizeof bits);
        h = (h ^ bits) * 1099511628211ULL;
    }
    printf("matmul n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    free(A);
    free(B);
    free(C);
    return 0;
}
