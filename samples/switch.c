/* switch — a tiny accumulator bytecode interpreter.
 * Kernel: dispatch — one loop over the opcode array, one dense switch on the
 * opcode with case values 0,1,2,3,4,5,6,7,8,9 (10 consecutive cases, plus a
 * default never taken); gcc -O2 compiles it to a bounds check (cmp $9 / ja)
 * and an indirect jmp through a jump table.
 * Program (heap) and register file (global static, 16 words).
 * Size: argv[1] = program length (default 2000); the program runs 3 times. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t regs[16];

static uint64_t lcg_state = 0x4F1BBCDCBFA53E0BULL;
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

__attribute__((noinline)) uint64_t dispatch(const unsigned char *ops, const int *args, long n,
                                            uint64_t acc)
{
    for (long pc = 0; pc < n; pc++) {
        uint64_t a = (uint64_t)args[pc];
        switch (ops[pc]) {
        case 0: /* add */
            acc += a;
            break;
        case 1: /* sub 3a */
            acc -= a * 3;
            break;
        case 2: /* mul odd */
            acc *= a | 1;
            break;
        case 3: /* xor shifted */
            acc ^= a << 7;
            break;
        case 4: /* rotate left */
            acc = (acc << (a & 31)) | (acc >> (64 - (a & 31)) % 64);
            break;
        case 5: /* store */
            regs[a & 15] = acc;
            break;
        case 6: /* load-add */
            acc += regs[a & 15];
            break;
        case 7: /* shift right */
            acc = (acc >> (a & 15)) + a;
            break;
        case 8: /* collatz step: data-dependent branch */
            if (acc & 1)
                acc = acc * 3 + 1;
            else
                acc >>= 1;
            break;
        case 9: /* read-modify-write a register, complement */
            regs[a & 15] ^= acc;
            acc = ~acc;
            break;
        default:
            acc = 0;
            break;
        }
    }
    return acc;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 2000);
    unsigned char *ops = malloc((size_t)n);
    int *args = malloc(sizeof(int) * n);
    if (!ops || !args)
        return 1;
    for (long i = 0; i < n; i++) {
        ops[i] = (unsigned char)(lcg() % 10);
        args[i] = (int)(lcg() % 1000);
    }
    uint64_t acc = 1;
    for (int rep = 0; rep < 3; rep++)
        acc = dispatch(ops, args, n, acc);
    uint64_t h = acc;
    for (int i = 0; i < 16; i++)
        h = (h ^ regs[i]) * 1099511628211ULL;
    printf("switch n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    free(ops);
    free(args);
    return 0;
}
