/* libcheavy — libc at work in loops: the whole-process trace's sample.
 * Kernel: churn (memcpy, memset, strlen, strcmp, qsort with a comparator
 *         of ours, malloc/realloc/free of records of varying sizes).
 * Heap buffers.  Size: argv[1] = records (default 400). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg_state = 0x5DEECE66DULL ^ 0x1234ABCDULL;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(lcg_state >> 33);
}

static long arg_size(int argc, char **argv, long def)
{
    if (argc < 2)
        return def;
    long v = strtol(argv[1], NULL, 10);
    return v > 0 ? v : def;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

__attribute__((noinline)) uint64_t churn(long n)
{
    char **rec = malloc((size_t)n * sizeof *rec);
    char tmp[96];
    uint64_t sum = 0;
    for (long i = 0; i < n; i++) {
        size_t len = 8 + lcg() % 64;
        for (size_t k = 0; k < len; k++)
            tmp[k] = (char)('a' + lcg() % 26);
        tmp[len] = 0;
        rec[i] = malloc(len + 1);
        memcpy(rec[i], tmp, len + 1);
        if (i % 5 == 0) {   /* grow, and pad with memset */
            rec[i] = realloc(rec[i], 2 * len + 1);
            memset(rec[i] + len, 'z', len);
            rec[i][2 * len] = 0;
        }
    }
    qsort(rec, (size_t)n, sizeof *rec, by_text);
    for (long i = 0; i < n; i++) {
        sum = sum * 31 + strlen(rec[i]);
        if (i && strcmp(rec[i - 1], rec[i]) == 0)
            sum ^= 0x9E3779B97F4A7C15ULL;
        sum += (unsigned char)rec[i][0];
        free(rec[i]);
    }
    free(rec);
    return sum;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 400);
    uint64_t s = 0;
    for (int round = 0; round < 3; round++)
        s = s * 1000003 + churn(n);
    printf("libcheavy n=%ld checksum=%016llx\n", n, (unsigned long long)s);
    return 0;
}
