/* funcptr — indirect calls.
 * Kernels: apply  (calls through the const table op_table[6] of function
 *                  pointers, index read from data),
 *          reduce (calls through the fn field of a struct reducer, set at
 *                  run time so gcc cannot devirtualize it).
 * Callees: op_add op_sub op_mul op_xor op_rot op_mix, red_sum red_max.
 * Size: argv[1] = elements (default 2000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint64_t (*op_fn)(uint64_t, uint64_t);

struct reducer {
    op_fn fn;
    uint64_t init;
    long calls;
};

static uint64_t lcg_state = 0x1D8E4E27C47D124FULL;
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

__attribute__((noinline)) uint64_t op_add(uint64_t a, uint64_t b) { return a + b; }
__attribute__((noinline)) uint64_t op_sub(uint64_t a, uint64_t b) { return a - b * 5; }
__attribute__((noinline)) uint64_t op_mul(uint64_t a, uint64_t b) { return a * (b | 1); }
__attribute__((noinline)) uint64_t op_xor(uint64_t a, uint64_t b) { return a ^ (b << 13); }
__attribute__((noinline)) uint64_t op_rot(uint64_t a, uint64_t b) { return (a << 9 | a >> 55) + b; }
__attribute__((noinline)) uint64_t op_mix(uint64_t a, uint64_t b)
{
    a ^= a >> 31;
    return a * 0x9E3779B97F4A7C15ULL + b;
}
__attribute__((noinline)) uint64_t red_sum(uint64_t a, uint64_t b) { return a + b; }
__attribute__((noinline)) uint64_t red_max(uint64_t a, uint64_t b) { return a > b ? a : b; }

static op_fn const op_table[6] = {op_add, op_sub, op_mul, op_xor, op_rot, op_mix};

static struct reducer the_reducer; /* global; fn chosen in main */

__attribute__((noinline)) uint64_t apply(const unsigned char *sel, const uint64_t *data, long n)
{
    uint64_t acc = 7;
    for (long i = 0; i < n; i++)
        acc = op_table[sel[i]](acc, data[i]);
    return acc;
}

__attribute__((noinline)) uint64_t reduce(struct reducer *r, const uint64_t *data, long n)
{
    uint64_t acc = r->init;
    for (long i = 0; i < n; i++) {
        acc = r->fn(acc, data[i]);
        r->calls++;
    }
    return acc;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 2000);
    unsigned char *sel = malloc((size_t)n);
    uint64_t *data = malloc(sizeof(uint64_t) * n);
    if (!sel || !data)
        return 1;
    for (long i = 0; i < n; i++) {
        sel[i] = (unsigned char)(lcg() % 6);
        data[i] = lcg();
    }
    uint64_t h = apply(sel, data, n);
    the_reducer.fn = (argc > 5) ? red_max : red_sum; /* run-time choice */
    the_reducer.init = 1;
    h = h * 1099511628211ULL ^ reduce(&the_reducer, data, n);
    the_reducer.fn = (argc > 5) ? red_sum : red_max;
    h = h * 1099511628211ULL ^ reduce(&the_reducer, data, n);
    printf("funcptr n=%ld calls=%ld checksum=%016llx\n", n, the_reducer.calls,
           (unsigned long long)h);
    free(sel);
    free(data);
    return 0;
}
