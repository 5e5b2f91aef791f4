/* csr — CSR sparse matrix-vector product y = M x, repeated (x <- y).
 * Kernel: spmv (row loop, inner loop over row_ptr[r]..row_ptr[r+1],
 * indirect load x[col_idx[k]]).  Heap arrays.
 * Size: argv[1] = rows (default 200); 1..8 nonzeros per row; 5 repetitions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 5

static uint64_t lcg_state = 0x853C49E6748FEA9BULL;
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

__attribute__((noinline)) void spmv(long nrows, const long *row_ptr, const int *col_idx,
                                    const double *vals, const double *x, double *y)
{
    for (long r = 0; r < nrows; r++) {
        double s = 0.0;
        for (long k = row_ptr[r]; k < row_ptr[r + 1]; k++)
            s += vals[k] * x[col_idx[k]];
        y[r] = s;
    }
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 200);
    long *row_ptr = malloc(sizeof(long) * (n + 1));
    int *col_idx = malloc(sizeof(int) * n * 8);
    double *vals = malloc(sizeof(double) * n * 8);
    double *x = malloc(sizeof(double) * n);
    double *y = malloc(sizeof(double) * n);
    if (!row_ptr || !col_idx || !vals || !x || !y)
        return 1;
    long nnz = 0;
    for (long r = 0; r < n; r++) {
        row_ptr[r] = nnz;
        int cnt = 1 + (int)(lcg() % 8);
        for (int c = 0; c < cnt; c++) {
            col_idx[nnz] = (int)(lcg() % (uint32_t)n);
            vals[nnz] = 0.125 * (double)(1 + lcg() % 7) / cnt; /* row sums < 1 */
            nnz++;
        }
    }
    row_ptr[n] = nnz;
    for (long i = 0; i < n; i++)
        x[i] = (double)(lcg() % 1000);
    for (int rep = 0; rep < REPS; rep++) {
        spmv(n, row_ptr, col_idx, vals, x, y);
        double *t = x;
        x = y;
        y = t;
    }
    uint64_t h = 1469598103934665603ULL;
    for (long i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        h = (h ^ bits) * 1099511628211ULL;
    }
    printf("csr rows=%ld nnz=%ld checksum=%016llx\n", n, nnz, (unsigned long long)h);
    free(row_ptr);
    free(col_idx);
    free(vals);
    free(x);
    free(y);
    return 0;
}
