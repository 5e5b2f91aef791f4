/* strkern — a hand-written string kernel: byte loops that end on a loaded
 * byte's value (the NUL, a searched character, the first difference).
 * Kernels: sk_strlen     (while (*p) p++),
 *          sk_strchr     (stops at c or at the NUL),
 *          sk_strcmp     (stops at the first difference or the NUL),
 *          sk_strcasecmp (the same with ASCII case folding of both bytes),
 *          sk_strncpy    (copies up to the NUL or n bytes, pads with NULs),
 *          count_words   (space / non-space transitions up to the NUL),
 *          fold_case     (ASCII upper -> lower in place, up to the NUL),
 *          tokenize      (byte-scanning tokenizer: words, numbers, single
 *                         punctuation; offsets and lengths into two arrays),
 *          sk_memchr     (first c among n bytes),
 *          sk_strrchr    (last c: the whole string, keeping a pointer),
 *          sk_strspn     (a 256-byte set on the stack indexed by each byte),
 *          sk_strstr     (naive search: an inner compare loop per position),
 *          sk_strrev     (two pointers meeting in the middle, up to the NUL),
 *          ctype_words   (<ctype.h>: isspace/isalnum index libc's 16-bit
 *                         class table by the loaded byte; toupper its
 *                         32-bit table), writes the upper-cased text,
 *          parse_numbers (atoi-like: digits accumulated until a non-digit),
 *          table_fold    (case folding through a global 256-byte table
 *                         indexed by the loaded byte),
 *          squeeze       (drops blanks: the store index grows only on
 *                         non-blanks),
 *          trim_right    (walks back from the end over trailing blanks).
 * Text: words of mixed-case letters and digits, separated by spaces and
 * punctuation, from the LCG.  Heap buffers.
 * Size: argv[1] = text bytes (default 640); 4 rounds, each with a shorter
 * string (a NUL put further in each round). */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t lcg_state = 0x5851F42D4C957F2DULL;
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

__attribute__((noinline)) size_t sk_strlen(const char *s)
{
    const char *p = s;
    while (*p)
        p++;
    return (size_t)(p - s);
}

__attribute__((noinline)) const char *sk_strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return s;
        if (*s == '\0')
            return NULL;
    }
}

__attribute__((noinline)) int sk_strcmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    while (*p && *p == *q) {
        p++;
        q++;
    }
    return *p - *q;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

__attribute__((noinline)) int sk_strcasecmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    int x, y;
    do {
        x = lower(*p++);
        y = lower(*q++);
    } while (x && x == y);
    return x - y;
}

__attribute__((noinline)) char *sk_strncpy(char *d, const char *s, size_t n)
{
    size_t i = 0;
    for (; i < n && s[i] != '\0'; i++)
        d[i] = s[i];
    for (; i < n; i++)
        d[i] = '\0';
    return d;
}

__attribute__((noinline)) size_t count_words(const char *s)
{
    size_t n = 0;
    int in = 0;
    for (; *s; s++) {
        int sp = *s == ' ' || *s == '\t' || *s == '\n';
        if (!sp && !in)
            n++;
        in = !sp;
    }
    return n;
}

__attribute__((noinline)) void fold_case(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s + ('a' - 'A'));
}

static int is_alpha(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Tokens are words (a letter, then letters, digits, '_'), numbers (digits)
 * and single punctuation characters; blanks separate them.  Returns the
 * number of tokens, at most max. */
__attribute__((noinline)) size_t tokenize(const char *text, unsigned *start, unsigned *len,
                                          size_t max)
{
    const unsigned char *s = (const unsigned char *)text, *p = s;
    size_t n = 0;
    while (*p && n < max) {
        if (*p == ' ' || *p == '\t' || *p == '\n') {
            p++;
            continue;
        }
        const unsigned char *b = p;
        if (is_alpha(*p)) {
            while (is_alpha(*p) || is_digit(*p) || *p == '_')
                p++;
        } else if (is_digit(*p)) {
            while (is_digit(*p))
                p++;
        } else {
            p++;
        }
        start[n] = (unsigned)(b - s);
        len[n] = (unsigned)(p - b);
        n++;
    }
    return n;
}

__attribute__((noinline)) const void *sk_memchr(const void *m, int c, size_t n)
{
    const unsigned char *p = m;
    for (size_t i = 0; i < n; i++)
        if (p[i] == (unsigned char)c)
            return p + i;
    return NULL;
}

__attribute__((noinline)) const char *sk_strrchr(const char *s, int c)
{
    const char *last = NULL;
    for (; *s; s++)
        if (*s == (char)c)
            last = s;
    return last;
}

__attribute__((noinline)) size_t sk_strspn(const char *s, const char *accept)
{
    unsigned char in[256] = {0};
    for (const unsigned char *a = (const unsigned char *)accept; *a; a++)
        in[*a] = 1;
    const unsigned char *p = (const unsigned char *)s;
    while (in[*p])
        p++;
    return (size_t)(p - (const unsigned char *)s);
}

__attribute__((noinline)) const char *sk_strstr(const char *h, const char *nd)
{
    for (; *h; h++) {
        size_t i = 0;
        while (nd[i] && h[i] == nd[i])
            i++;
        if (!nd[i])
            return h;
    }
    return NULL;
}

__attribute__((noinline)) void sk_strrev(char *s)
{
    char *e = s;
    while (*e)
        e++;
    while (s + 1 < e) {
        char t = *s;
        *s++ = *--e;
        *e = t;
    }
}

/* words counted with isspace, letters and digits with isalnum; dst gets
 * the text upper-cased with toupper */
__attribute__((noinline)) size_t ctype_words(const char *s, char *dst, size_t *alnum)
{
    size_t n = 0, k = 0;
    int in = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isspace(c)) {
            in = 0;
        } else if (!in) {
            in = 1;
            n++;
        }
        if (isalnum(c))
            k++;
        *dst++ = (char)toupper(c);
    }
    *dst = '\0';
    *alnum = k;
    return n;
}

/* the values of the digit runs, at most max */
__attribute__((noinline)) size_t parse_numbers(const char *s, unsigned long *val, size_t max)
{
    size_t n = 0;
    while (*s && n < max) {
        if (*s < '0' || *s > '9') {
            s++;
            continue;
        }
        unsigned long v = 0;
        while (*s >= '0' && *s <= '9')
            v = v * 10 + (unsigned long)(*s++ - '0');
        val[n++] = v;
    }
    return n;
}

/* ASCII lower case of every byte value */
static const unsigned char fold_table[256] = {
#define ROW(x) x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7, \
    x + 8, x + 9, x + 10, x + 11, x + 12, x + 13, x + 14, x + 15
    ROW(0), ROW(16), ROW(32), ROW(48),
    '@', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o',
    'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', '[', '\\', ']', '^', '_',
    ROW(96), ROW(112), ROW(128), ROW(144), ROW(160), ROW(176), ROW(192), ROW(208),
    ROW(224), ROW(240)
#undef ROW
};

__attribute__((noinline)) void table_fold(char *s)
{
    for (; *s; s++)
        *s = (char)fold_table[(unsigned char)*s];
}

__attribute__((noinline)) size_t squeeze(char *d, const char *s)
{
    size_t k = 0;
    for (; *s; s++)
        if (*s != ' ')
            d[k++] = *s;
    d[k] = '\0';
    return k;
}

__attribute__((noinline)) size_t trim_right(char *s)
{
    char *e = s + sk_strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
        e--;
    *e = '\0';
    return (size_t)(e - s);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ULL;
}

/* words of 1..9 letters (either case, digits after the first), then a
 * blank or punctuation */
static void make_text(char *t, size_t n)
{
    static const char sep[] = "    ,.;:!?-()\t\n";
    size_t i = 0;
    while (i + 1 < n) {
        unsigned w = 1 + lcg() % 9, k;
        if (lcg() % 8 == 0) {
            for (k = 0; k < w && i + 1 < n; k++)
                t[i++] = (char)('0' + lcg() % 10);
        } else {
            for (k = 0; k < w && i + 1 < n; k++) {
                unsigned r = lcg() % 40;
                t[i++] = (char)(k > 0 && r >= 36 ? '0' + (r - 36) : r < 10 ? 'A' + r % 26
                                                                            : 'a' + r % 26);
            }
        }
        if (i + 1 < n)
            t[i++] = sep[lcg() % (sizeof sep - 1)];
    }
    t[n - 1] = '\0';
}

int main(int argc, char **argv)
{
    long n = arg_size(argc, argv, 640);
    if (n < 64)
        n = 64;
    size_t sz = (size_t)n;
    char *text = malloc(sz), *copy = malloc(sz), *other = malloc(sz);
    size_t maxtok = sz / 2 + 1;
    unsigned *start = malloc(maxtok * sizeof *start), *len = malloc(maxtok * sizeof *len);
    unsigned long *val = malloc(maxtok * sizeof *val);
    if (!text || !copy || !other || !start || !len || !val)
        return 1;
    make_text(text, sz);
    uint64_t h = 1469598103934665603ULL;
    static const char wanted[] = "eQz,7(";
    for (int round = 0; round < 4; round++) {
        size_t cut = sz - 1 - (size_t)round * (sz / 8);
        char saved = text[cut];
        text[cut] = '\0';
        size_t l = sk_strlen(text);
        h = mix(h, l);
        for (const char *w = wanted; *w; w++) {
            const char *p = sk_strchr(text + round, *w);
            h = mix(h, p ? (uint64_t)(p - text) : 0xFFFF);
        }
        sk_strncpy(copy, text, sz);
        /* equal, then differing at a point further in each time */
        h = mix(h, (uint64_t)(sk_strcmp(text, copy) + 256));
        for (size_t at = l / 7 + 1; at < l; at += l / 3 + 1) {
            char c = copy[at];
            copy[at] = (char)(c + 1);
            h = mix(h, (uint64_t)(sk_strcmp(text, copy) + 256));
            copy[at] = c;
        }
        sk_strncpy(other, text, sz);
        fold_case(other);
        h = mix(h, (uint64_t)(sk_strcasecmp(text, other) + 256));
        h = mix(h, (uint64_t)(sk_strcmp(text, other) + 256));
        for (size_t i = 0; other[i]; i++)
            h = mix(h, (unsigned char)other[i]);
        h = mix(h, count_words(text + round));
        size_t nt = tokenize(text, start, len, maxtok);
        h = mix(h, nt);
        for (size_t i = 0; i < nt; i++)
            h = mix(h, (uint64_t)start[i] << 8 | len[i]);
        const char *m = sk_memchr(text, '!', sz);
        h = mix(h, m ? (uint64_t)(m - text) : 0xFFFF);
        m = sk_memchr(text + l / 2, '#', sz - l / 2); /* absent: all n bytes */
        h = mix(h, m ? 1 : 0);
        const char *r = sk_strrchr(text, wanted[round]);
        h = mix(h, r ? (uint64_t)(r - text) : 0xFFFF);
        h = mix(h, sk_strspn(text + round, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"));
        h = mix(h, sk_strspn(other + l / 3, "abcdefghijklmnopqrstuvwxyz0123456789 "));
        /* needles cut from the text (found) and changed in their last byte */
        for (size_t at = l / 5; at + 4 < l; at += l / 2 + 1) {
            char nd[5];
            sk_strncpy(nd, text + at, 4);
            nd[4] = '\0';
            const char *f = sk_strstr(text, nd);
            h = mix(h, f ? (uint64_t)(f - text) : 0xFFFF);
            nd[3] = '#';
            h = mix(h, sk_strstr(text + l / 2, nd) ? 1 : 0);
        }
        sk_strrev(copy);
        h = mix(h, (uint64_t)(sk_strcmp(copy, text) + 256));
        size_t alnum;
        h = mix(h, ctype_words(text, other, &alnum));
        h = mix(h, alnum);
        h = mix(h, (uint64_t)(sk_strcasecmp(other, text) + 256));
        size_t nv = parse_numbers(text + round, val, maxtok);
        for (size_t i = 0; i < nv; i++)
            h = mix(h, val[i]);
        sk_strncpy(copy, text, sz);
        table_fold(copy);
        h = mix(h, (uint64_t)(sk_strcmp(copy, other) + 256)); /* other: upper case */
        h = mix(h, (uint64_t)(sk_strcasecmp(copy, other) + 256));
        h = mix(h, squeeze(other, text + round));
        h = mix(h, count_words(other));
        sk_strncpy(copy, text, sz);
        copy[l / 2] = '\0';
        for (size_t i = 1; i <= (size_t)round * 3 && i < l / 2; i++)
            copy[l / 2 - i] = ' ';
        h = mix(h, trim_right(copy));
        text[cut] = saved;
    }
    printf("strkern n=%ld checksum=%016llx\n", n, (unsigned long long)h);
    free(text);
    free(copy);
    free(other);
    free(start);
    free(len);
    free(val);
    return 0;
}
