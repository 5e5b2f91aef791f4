/* elide — conditional jumps whose two ways meet again before any data
 * access (tests/elide.sh): the skeleton does not replay them and the
 * recorder does not record their outcomes.
 *   words:   a space/non-space state machine over a text: the in-word
 *            flag is set on one way only, the next byte is loaded on
 *            both (gcc: `test %ecx,%ecx; jne` around `add; mov $1`);
 *   nested:  two tests in a row, each changing a register only, the
 *            second inside one way of the first (an elided jump inside
 *            the way of another);
 *   kept:    one way stores, the other does not: the outcome is needed.
 * Size: argv[1] = text bytes (default 4000). */
#include <stdio.h>
#include <stdlib.h>

static char text[1 << 20];
static unsigned char hist[256];

__attribute__((noinline)) long words(const char *p)
{
	long n = 0;
	int in = 0;
	for (; *p; p++) {
		if (*p == ' ' || *p == '\n') {
			in = 0;
		} else if (!in) {
			n++;
			in = 1;
		}
	}
	return n;
}

__attribute__((noinline)) long nested(const unsigned char *p, long len)
{
	long a = 0, b = 0;
	for (long i = 0; i < len; i++) {
		unsigned c = p[i];
		if (c & 1) {
			a += 3;
			if (c & 2)
				b ^= c;
		}
		a += (long)c;
		b += p[i + 1];
	}
	return a ^ b;
}

__attribute__((noinline)) void kept(const unsigned char *p, long len)
{
	for (long i = 0; i < len; i++)
		if (p[i] & 4)
			hist[p[i]]++;
}

int main(int argc, char **argv)
{
	long len = argc > 1 ? atol(argv[1]) : 4000;
	if (len < 1 || len >= (long)sizeof text)
		len = 4000;
	unsigned s = 12345;
	for (long i = 0; i < len; i++) {
		s = s * 1103515245u + 12345u;
		unsigned r = (s >> 16) % 8;
		text[i] = r == 0 ? ' ' : (char)('a' + (s >> 20) % 26);
	}
	text[len] = 0;
	long w = words(text);
	long x = nested((const unsigned char *)text, len);
	kept((const unsigned char *)text, len);
	printf("elide: %ld words, %lx, %d\n", w, (unsigned long)x, hist['e']);
	return 0;
}
