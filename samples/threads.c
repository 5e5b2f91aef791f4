/* threads — two pthreads each work on one half of a global static array.
 * Kernel: worker (thread start routine; `reps` times over its range: reads
 *         shared_in[lo..hi), writes shared_out[lo..hi); stores its partial
 *         sum into its struct job).
 * Size: argv[1] = n (default 2000, reps 1).  Beyond MAXN = 1<<21 the array
 * stays at MAXN and reps = n / MAXN. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXN (1L << 21)
#define NTHREADS 2

static long shared_in[MAXN];
static long shared_out[MAXN];

struct job {
    long lo, hi, reps;
    uint64_t sum;
};

static uint64_t lcg_state = 0xC2B2AE3D27D4EB4FULL;
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

__attribute__((noinline)) void *worker(void *arg)
{
    struct job *j = arg;
    uint64_t s = 0;
    for (long r = 0; r < j->reps; r++)
        for (long i = j->lo; i < j->hi; i++) {
            long v = shared_in[i];
            shared_out[i] = v * 3 + r + 1;
            s += (uint64_t)v * (uint64_t)(i & 7);
        }
    j->sum = s;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 2000);
    long reps = 1;
    if (n > MAXN) {
        reps = n / MAXN;
        n = MAXN;
    }
    for (long i = 0; i < n; i++)
        shared_in[i] = (long)(lcg() % 100000);
    pthread_t tid[NTHREADS];
    struct job jobs[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        jobs[t].lo = n * t / NTHREADS;
        jobs[t].hi = n * (t + 1) / NTHREADS;
        jobs[t].reps = reps;
        jobs[t].sum = 0;
        if (pthread_create(&tid[t], NULL, worker, &jobs[t]) != 0)
            return 1;
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(tid[t], NULL);
    uint64_t h = jobs[0].sum * 1099511628211ULL ^ jobs[1].sum;
    for (long i = 0; i < n; i++)
        h = (h ^ (uint64_t)shared_out[i]) * 1099511628211ULL;
    printf("threads n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    return 0;
}
