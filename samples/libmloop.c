/* libmloop — libm in a loop: sin, exp, sqrt, log1p, pow of a heap array.
 * Kernel: transcend.  Size: argv[1] = elements (default 2000). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long arg_size(int argc, char **argv, long def)
{
    if (argc < 2)
        return def;
    long v = strtol(argv[1], NULL, 10);
    return v > 0 ? v : def;
}

__attribute__((noinline)) double transcend(const double *x, double *y, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++) {
        y[i] = sin(x[i]) + exp(-x[i]) + sqrt(x[i]) + log1p(x[i]) + pow(1.0001, x[i]);
        s += y[i];
    }
    return s;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 2000);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (long i = 0; i < n; i++)
        x[i] = (double)(i % 1000) * 0.01;
    double s = 0;
    for (int round = 0; round < 2; round++)
        s += transcend(x, y, n);
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    printf("libmloop n=%ld checksum=%016llx\n", n, (unsigned long long)bits);
    free(x);
    free(y);
    return 0;
}
