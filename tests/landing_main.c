/* tests/landing_main.c — calls tests/landing_lib.S's two entries of one
 * routine body many times (tests/landing.sh). */
#include <stdio.h>
#include <stdlib.h>

char *lb_copy(char *dst, const char *src, size_t n);
char *lb_copy_end(char *dst, const char *src, size_t n);
char *lb_copy_odd(char *dst, const char *src, size_t n);
struct node { char pad[0x2f8]; struct node *next; };
struct node *lb_walk(struct node **pp);

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;
	static char src[64], dst[64];
	unsigned long sum = 0;
	for (int i = 0; i < 64; i++)
		src[i] = (char)(i * 7 + 1);
	for (int r = 0; r < rounds; r++) {
		size_t n = (size_t)(r * 5 % 33);
		char *a = lb_copy(dst + r % 8, src + r % 16, n);
		char *b = lb_copy_end(dst + r % 4, src + r % 8, 32 - n);
		char *c = lb_copy_odd(dst + r % 16, src + r % 3, n);
		sum += (unsigned long)(a - dst) + (unsigned long)(b - dst) +
		       (unsigned long)(c - dst) +
		       (unsigned char)dst[r % 32];
	}
	struct node *h = NULL;
	for (int i = 0; i < 16; i++) {
		struct node *x = calloc(1, sizeof *x);
		x->next = h;
		h = x;
	}
	for (int r = 0; r < rounds; r++)
	{
		struct node *none = NULL;
		sum += lb_walk(r % 7 ? &h : &none) == NULL;
	}
	printf("landing %d %lu\n", rounds, sum);
	return 0;
}
