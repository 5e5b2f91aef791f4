/* carried — values the skeleton computes from values it has instead of
 * recording them (skelgen.c, plan_carried; tests/carried.sh):
 *   chain:  gzip's longest_match in small: a hash chain followed through
 *           prev[cur & MASK] (the index an and of a recorded value),
 *           with the best length so far carried around the loop in a
 *           register (a φ of known values) and used in the next
 *           iteration's address;
 *   probe:  open addressing, i = (i + 1) & mask from a hash shifted
 *           right (shr), the mask loaded once;
 *   signs:  a signed index shifted right arithmetically (sar), through
 *           a φ of a loop that halves it.
 * Size: argv[1] = text bytes (default 20000). */
#include <stdio.h>
#include <stdlib.h>

#define WBITS 12
#define WSIZE (1u << WBITS)
#define WMASK (WSIZE - 1)

static unsigned char win[2 * WSIZE + 300];
static unsigned short prev[WSIZE], head[1 << 10];
static unsigned long keys[1 << 12];
static unsigned long ht_mask = (1 << 12) - 1;
static long table[2048];

__attribute__((noinline)) int chain(unsigned cur, unsigned pos, int chain_len, unsigned limit)
{
	const unsigned char *scan = win + pos;
	int best = 2;
	do {
		const unsigned char *m = win + cur;
		if (m[best] != scan[best] || m[best - 1] != scan[best - 1] || m[0] != scan[0])
			continue;
		int len = 1;
		while (len < 258 && m[len] == scan[len])
			len++;
		if (len > best)
			best = len;
	} while ((cur = prev[cur & WMASK]) > limit && --chain_len != 0);
	return best;
}

__attribute__((noinline)) int probe(unsigned long key)
{
	unsigned long i = (key * 0x9E3779B97F4A7C15ull) >> 52 & ht_mask;
	while (keys[i] != 0 && keys[i] != key)
		i = (i + 1) & ht_mask;
	int fresh = keys[i] == 0;
	keys[i] = key;
	return fresh;
}

__attribute__((noinline)) long signs(long x)
{
	long s = 0;
	while (x != 0 && x != -1) {
		s += table[(x >> 3) & 2047];
		x >>= 1;
	}
	return s;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
	unsigned long x = 12345, total = 0;
	for (unsigned i = 0; i < sizeof win; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		win[i] = "abcab"[(x >> 33) % 5];
	}
	for (unsigned i = 0; i < 2048; i++)
		table[i] = (long)(i * 7 % 13);
	for (unsigned i = 0; i < n; i++) {
		unsigned pos = WSIZE + i % (WSIZE - 1);
		unsigned h = (win[pos] << 5 ^ win[pos + 1] << 2 ^ win[pos + 2]) & 1023;
		unsigned cur = head[h];
		if (cur)
			total += (unsigned long)chain(cur, pos, 32, 1);
		prev[pos & WMASK] = (unsigned short)(cur ? cur : 1);
		head[h] = (unsigned short)(pos & WMASK);
		if (i < 3000)
			total += (unsigned long)probe(x = x * 6364136223846793005ull + i % 1000);
		total += (unsigned long)signs((long)(x >> (i % 64)) - (long)(i * 977));
	}
	printf("%lu\n", total);
	return 0;
}
