// tests/rotcatch.cc — a rotated byte loop (scanloop.c's rotfold) inside a
// try block: the routine has a landing pad, where skelgen does not carry a
// loop's φ from its edges (skelgen.c, routine_plain), so the analysis must
// not record the loaded byte for it (ivres.c, record_rotated): it would be
// a word beside the φ's at each iteration, in place of an outcome
// (tests/scanloop.sh).
#include <cstdio>
#include <cstdlib>
#include <string>

static unsigned char tab[256];

__attribute__((noinline)) void may_throw(int x)
{
	if (x == 12345)
		throw 1;
}

__attribute__((noinline)) long fold_in_try(unsigned char *s, int k)
{
	std::string keep("abcdefghijklmnopqrstuvwxyz0123456789");
	long n = 0;
	try {
		may_throw(k);
		for (; *s; s++)
			*s = tab[*s];
	} catch (int) {
		n = -1;
	}
	return n + (long)keep.size();
}

int main()
{
	static unsigned char buf[8192];
	for (int i = 0; i < 256; i++)
		tab[i] = (unsigned char)((i * 7 + 3) | 1);
	for (int i = 0; i < 8191; i++)
		buf[i] = (unsigned char)(rand() % 255 + 1);
	long s = 0;
	for (int k = 0; k < 200; k++) {
		int at = rand() % 8000;
		buf[at + 150] = 0;
		s += fold_in_try(buf + at, k);
		buf[at + 150] = 1;
	}
	printf("%ld\n", s);
	return 0;
}
