/* list — singly linked list {key, val, next} whose link order is a fixed
 * shuffle of the node array (pointer chasing through a heap block).
 * Kernel: list_sum (reads key, val, next of every node).
 * Size: argv[1] = nodes (default 1000); 4 traversals. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
    long key;
    long val;
    struct node *next;
};

static uint64_t lcg_state = 0xA0761D6478BD642FULL;
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

__attribute__((noinline)) long list_sum(const struct node *p)
{
    long s = 0;
    while (p) {
        s += p->key * 31 + p->val;
        p = p->next;
    }
    return s;
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 1000);
    struct node *nodes = malloc(sizeof(struct node) * n);
    long *perm = malloc(sizeof(long) * n);
    if (!nodes || !perm)
        return 1;
    for (long i = 0; i < n; i++)
        perm[i] = i;
    for (long i = n - 1; i > 0; i--) { /* Fisher-Yates with the fixed LCG */
        long j = (long)(((uint64_t)lcg() << 31 | lcg()) % (uint64_t)(i + 1));
        long t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (long i = 0; i < n; i++) {
        struct node *p = &nodes[perm[i]];
        p->key = i;
        p->val = (long)(lcg() % 10000);
        p->next = (i + 1 < n) ? &nodes[perm[i + 1]] : NULL;
    }
    struct node *head = &nodes[perm[0]];
    long total = 0;
    for (int rep = 0; rep < 4; rep++) {
        total = total * 7 + list_sum(head);
        head->val++;
    }
    printf("list n=%ld checksum=%016llx\n", n, (unsigned long long)total);
    free(perm);
    free(nodes);
    return 0;
}
