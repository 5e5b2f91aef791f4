/* tree — binary search tree, one malloc per node.
 * Kernels: tree_insert (recursive), tree_find (iterative),
 *          tree_find_rec (recursive), tree_sum (recursive, two calls),
 *          tree_free (recursive, calls free).
 * Size: argv[1] = keys inserted (default 300); 2n lookups, half absent. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct tnode {
    long key;
    long val;
    struct tnode *left, *right;
};

static uint64_t lcg_state = 0xE7037ED1A0B428DBULL;
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

__attribute__((noinline)) struct tnode *tree_insert(struct tnode *t, long key, long val)
{
    if (!t) {
        t = malloc(sizeof *t);
        if (!t)
            abort();
        t->key = key;
        t->val = val;
        t->left = t->right = NULL;
        return t;
    }
    if (key < t->key)
        t->left = tree_insert(t->left, key, val);
    else if (key > t->key)
        t->right = tree_insert(t->right, key, val);
    else
        t->val += val;
    return t;
}

__attribute__((noinline)) const struct tnode *tree_find(const struct tnode *t, long key)
{
    while (t && t->key != key)
        t = key < t->key ? t->left : t->right;
    return t;
}

__attribute__((noinline)) const struct tnode *tree_find_rec(const struct tnode *t, long key)
{
    if (!t || t->key == key)
        return t;
    return tree_find_rec(key < t->key ? t->left : t->right, key);
}

__attribute__((noinline)) long tree_sum(const struct tnode *t)
{
    if (!t)
        return 0;
    return tree_sum(t->left) + t->key * 3 + t->val + tree_sum(t->right);
}

__attribute__((noinline)) void tree_free(struct tnode *t)
{
    if (!t)
        return;
    tree_free(t->left);
    tree_free(t->right);
    free(t);
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 300);
    struct tnode *root = NULL;
    for (long i = 0; i < n; i++) {
        long k = (long)(lcg() % (uint32_t)(4 * n)) * 2; /* even keys */
        root = tree_insert(root, k, i);
    }
    long found = 0, acc = 0;
    for (long i = 0; i < 2 * n; i++) {
        long k = (long)(lcg() % (uint32_t)(8 * n)); /* odd keys are absent */
        const struct tnode *a = tree_find(root, k);
        const struct tnode *b = tree_find_rec(root, k);
        if (a != b)
            return 2;
        if (a) {
            found++;
            acc += a->val;
        }
    }
    long s = tree_sum(root);
    tree_free(root);
    printf("tree n=%ld found=%ld checksum=%016llx\n", n, found,
           (unsigned long long)((uint64_t)s * 1000003u + (uint64_t)acc));
    return 0;
}
