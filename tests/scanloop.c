/* scanloop — loops whose one unknown is when they stop (skelgen.c,
 * exit-value loops): the register of their exit test is recorded once
 * where they leave, not the outcome of every iteration.
 *   scan   strlen's `while (*p) p++` (step 1), from every offset
 *   ints   an int array scanned to a sentinel (step 4)
 *   back   a scan down from the end over blanks (step -1)
 *   chr    strchr's loop: two exits, the NUL or the character (the exit
 *          taken is recorded with the pointer); one exit block is also
 *          reached from before the loop (its words are read and dropped)
 *   find   a counted search with a break: its two exits (a computed and
 *          a recorded one) lead to one block, with another register form
 *          at each: its outcomes stay recorded (and exact)
 *   share  two scans whose early exits jump to the same block
 *          (scanloop_share.S): the recorder would write both loops' words
 *          there, whichever left, so both record on their exit jumps'
 *          ways (format.h, PATCH_ON_TAKEN) instead
 *   pad    strncpy's copy up to the NUL or n bytes: one exit leads to the
 *          return from the memset call after it (a RETURNED word there),
 *          so it records on its exit jumps' ways
 *   fold   strcasecmp's loop: the case folding's jump (no access on
 *          either way) meets the other way at the loop's header, so it
 *          is not replayed, and the loop is an exit-value loop too
 *   tally  the same with the two ways meeting at the loop's header
 *          (scanloop_share.S)
 *   rot    two loops gcc rotates (the byte the next iteration works on
 *          loaded at the end of this one, tested for the end there):
 *          strkern's table_fold (the byte indexes a table at the loop's
 *          head) and count_words (classified there): recorded where it
 *          is loaded, a word per iteration, not the head's value and an
 *          outcome (ivres.c, record_rotated)
 *   none   loops that stop at once (trip count 0)
 *   init   the text alone (what the other modes add to)
 *   outer  a scan inside a loop over rows (e0 holds the outer counter)
 *   crash  a scan that runs into a PROT_NONE page: the trace must stop
 *          at the faulting load, not at the loop's entry
 *   affine a counted loop that runs into one: no word at all comes
 *          between its iterations, the faulting address tells which
 * Shapes where the words of one exit-value loop would come between
 * another's entry and its exit (skelgen.c, exits_apart): treated with
 * their words where the exits lead, they desynchronised the replay; now
 * they record on their exit jumps' ways.
 *   sign   python3's _PyLong_FromByteArray: two scans (from the front,
 *          from the back) for a byte unlike the sign byte, each with two
 *          exits, leaving to one block when none differs
 *   hop    a scan that leaves, when it finds c, straight into the header
 *          of a second scan
 *   slice  the same into the header of a loop without accesses (sliced,
 *          so nothing is recorded there): not treated
 * (noipa: gcc's constant propagation into them would change the shapes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* tests/scanloop_share.S */
long share2(const char *a, const char *b);
long tally(const char *s);

static unsigned char rot_table[256];

__attribute__((noinline)) static void rotfold(char *s)
{
	for (; *s; s++)
		*s = (char)rot_table[(unsigned char)*s];
}

__attribute__((noinline)) static long rotwords(const char *s)
{
	long n = 0;
	int in = 0;
	for (; *s; s++) {
		int sp = *s == ' ' || *s == '\t' || *s == '\n';
		if (!sp && !in)
			n++;
		in = !sp;
	}
	return n;
}

__attribute__((noinline)) static long scan(const char *s)
{
	const char *p = s;
	while (*p)
		p++;
	return p - s;
}

__attribute__((noinline)) static long ints(const int *a)
{
	const int *p = a;
	while (*p != -1)
		p++;
	return p - a;
}

__attribute__((noinline)) static long back(const char *s, long n)
{
	const char *p = s + n;
	while (p[-1] == ' ')
		p--;
	return p - s;
}

__attribute__((noinline)) static const char *chr(const char *s, int c)
{
	while (*s != (char)c) {
		if (!*s)
			return NULL;
		s++;
	}
	return s;
}

__attribute__((noinline)) static long find(const int *a, long n, int k)
{
	long i;
	for (i = 0; i < n; i++)
		if (a[i] == k)
			break;
	return i;
}

__attribute__((noinline)) static long total(const long *a, long n)
{
	long t = 0;
	for (long i = 0; i < n; i++)
		t += a[i];
	return t;
}

__attribute__((noinline)) static long outer(const char *rows, long nr, long w)
{
	long t = 0;
	for (long r = 0; r < nr; r++) {
		const char *p = rows + r * w;
		while (*p != '.')
			p++;
		t += p - (rows + r * w);
	}
	return t;
}

__attribute__((noipa)) static long sign(const unsigned char *a, long n, int little)
{
	long i;
	unsigned char s = a[little ? n - 1 : 0];
	if (little) {
		const unsigned char *p = a + n - 2;
		for (i = 1; i < n; i++, p--)
			if (*p != s)
				goto found;
	} else {
		for (i = 1; i < n; i++)
			if (a[i] != s)
				goto found;
	}
	return -1;
found:
	return i * 3 + (i > 5);
}

__attribute__((noipa)) static long hop(const char *s, const char *q, int c)
{
	const char *p = s;
	for (;;) {
		if (*p == c)
			break;
		if (!*p)
			return -1;
		p++;
	}
	do
		q++;
	while (*q != ' ');
	return q - s;
}

__attribute__((noipa)) static char *pad(char *d, const char *s, unsigned long n)
{
	unsigned long i = 0;
	for (; i < n && s[i] != '\0'; i++)
		d[i] = s[i];
	for (; i < n; i++)	/* gcc: memset */
		d[i] = '\0';
	return d;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

__attribute__((noipa)) static int fold(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
	int x, y;
	do {
		x = lower(*p++);
		y = lower(*q++);
	} while (x && x == y);
	return x - y;
}

__attribute__((noipa)) static long slice(const char *s, unsigned long n, int c)
{
	const char *p = s;
	for (;;) {
		if (*p == c)
			break;
		if (!*p)
			return -1;
		p++;
	}
	do
		n = n & 1 ? 3 * n + 1 : n / 2;
	while (n > 1);
	return (long)n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	static char text[4096];
	static int arr[2048];
	unsigned x = 12345;
	long sum = 0;
	for (int i = 0; i < 4095; i++) {
		x = x * 1103515245u + 12345u;
		text[i] = (x >> 16) % 23 ? 'a' + (char)(x % 26) : (x & 64 ? ' ' : 0);
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "scan"))
		for (int i = 0; i < 4000; i += 7)
			sum += scan(text + i);
	if (!strcmp(mode, "all") || !strcmp(mode, "ints")) {
		for (int i = 0; i < 2047; i++)
			arr[i] = i % 97 == 96 ? -1 : i;
		arr[2047] = -1;
		for (int i = 0; i < 2000; i += 13)
			sum += ints(arr + i);
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "back")) {
		char b[64];
		for (int k = 1; k < 40; k++) {
			memset(b, 'x', sizeof b);
			memset(b + 64 - k, ' ', (size_t)k - 1);
			sum += back(b, 63);
		}
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "chr"))
		for (int i = 0; i < 4000; i += 11) {
			const char *q = chr(text + i, 'q');
			sum += q ? q - text : -1;
		}
	if (!strcmp(mode, "all") || !strcmp(mode, "find"))
		for (int i = 0; i < 2000; i += 17)
			sum += find(arr + i, 40, i % 3 ? 96 * (i / 96 + 1) - 1 : -5);
	if (!strcmp(mode, "all") || !strcmp(mode, "share")) {
		char b[64];
		memset(b, 'y', sizeof b);
		b[63] = 0;
		for (int k = 0; k < 60; k += 3) {
			b[k] = '#';	/* the early exit, of the second scan, then the first */
			sum += share2(text + k, b) + share2(b + k + 1, text) + share2(b, text);
			b[k] = 'y';
		}
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "none"))
		for (int i = 0; i < 100; i++)
			sum += scan("") + ints((const int[]){ -1 });
	if (!strcmp(mode, "all") || !strcmp(mode, "outer")) {
		static char rows[50 * 40];
		memset(rows, 'r', sizeof rows);
		for (int r = 0; r < 50; r++)
			rows[r * 40 + (r * 7) % 39] = '.';
		sum += outer(rows, 50, 40);
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "sign")) {
		static unsigned char b[80];
		x = 1;
		for (int k = 0; k < 400; k++) {
			x = x * 1103515245u + 12345u;
			int n = 8 + (x >> 16) % 64, z = (x >> 8) % n;
			memset(b, 0, (size_t)n);
			if (k % 3)
				b[z] = 1;	/* else no byte differs */
			sum += sign(b, n, k & 1) * (k + 1);
		}
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "hop")) {
		text[4094] = ' ';
		for (int i = 0; i < 4000; i += 7)
			sum += hop(text + i, text + i + 3, 'q') * (i + 1);
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "pad")) {
		static char d[128];
		for (int i = 0; i < 4000; i += 7)
			sum += pad(d, text + i, (unsigned long)(i % 120) + 1)[i % 128] * (i + 1);
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "fold")) {
		static char up[4096];
		for (int i = 0; i < 4095; i++)
			up[i] = (char)(text[i] >= 'a' && text[i] <= 'z' && i % 3 ? text[i] - 32 : text[i]);
		up[2000] = '#';	/* one difference */
		for (int i = 0; i < 4000; i += 7)
			sum += fold(text + i, up + i) * (i + 1);
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "tally"))
		for (int i = 0; i < 4000; i += 7)
			sum += tally(text + i) * (i + 1);
	if (!strcmp(mode, "all") || !strcmp(mode, "rot")) {
		static char buf[4096];
		for (int c = 0; c < 256; c++)
			rot_table[c] = (unsigned char)(c >= 'a' && c <= 'z' ? c - 32 : c ? c : 1);
		memcpy(buf, text, sizeof buf);
		for (int i = 0; i < 4000; i += 7) {
			rotfold(buf + i);
			sum += rotwords(text + i) * (i + 1) + buf[i];
		}
	}
	if (!strcmp(mode, "all") || !strcmp(mode, "slice"))
		for (int i = 0; i < 4000; i += 7)
			sum += slice(text + i, (unsigned long)i + 5, 'q') * (i + 1);
	printf("%s %ld\n", mode, sum);
	fflush(stdout);
	if (!strcmp(mode, "crash") || !strcmp(mode, "affine")) {
		char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED || mprotect(m + 4096, 4096, PROT_NONE))
			return 1;
		memset(m, 'z', 4096);
		if (mode[0] == 'c')
			sum += scan(m + 4000);	/* no NUL before the PROT_NONE page */
		else
			sum += total((const long *)(m + 3600), 100);
		printf("%ld\n", sum);
	}
	return 0;
}
