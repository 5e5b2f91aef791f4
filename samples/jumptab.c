/* jumptab: switches the way real programs write them — an option loop
 * whose table base the compiler keeps in a callee-saved register across
 * the calls of the loop, a switch on a byte, and a switch whose cases call
 * out.  Access pattern: per input byte, a few loads/stores in counters[]
 * chosen by the byte's class.  argv[1]: input size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long counters[64];
static unsigned char *buf;

__attribute__((noinline)) static int next_opt(int *k, int n)
{
	if (*k >= n)
		return -1;
	return "abcdefghijklmnopqrstuvwxyzABCDEF"[(*k)++ * 7 % 32];
}

__attribute__((noinline)) static void note(int i)
{
	counters[i & 63] += i;
}

static void options(int n)
{
	int k = 0, c;
	while ((c = next_opt(&k, n)) != -1) {
		switch (c) {
		case 'a': note(1); break;
		case 'b': note(2); counters[3]++; break;
		case 'c': counters[4] += 2; break;
		case 'd': note(5); break;
		case 'e': counters[6]--; break;
		case 'f': note(7); note(8); break;
		case 'g': counters[9] ^= 3; break;
		case 'h': note(10); break;
		case 'i': counters[11] = counters[12]; break;
		case 'j': note(13); break;
		case 'k': counters[14] *= 3; break;
		case 'l': note(15); break;
		case 'x': counters[16] += counters[17]; break;
		case 'A': note(18); break;
		case 'E': counters[19]++; break;
		default: counters[20]++; break;
		}
	}
}

static long classify(const unsigned char *p, long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++) {
		switch (p[i]) {
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			counters[21] = counters[21] * 10 + (p[i] - '0');
			break;
		case ' ': case '\t':
			counters[22]++;
			break;
		case '\n':
			counters[23]++;
			sum += counters[21];
			counters[21] = 0;
			break;
		case '+': counters[24]++; break;
		case '-': counters[25]++; break;
		case '*': counters[26]++; break;
		case '/': counters[27]++; break;
		case '(': counters[28]++; break;
		case ')': counters[29]++; break;
		case ',': note(30); break;
		case ';': note(31); break;
		default: counters[32]++; break;
		}
	}
	return sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	if (n < 1)
		n = 1;
	buf = malloc((size_t)n);
	if (!buf)
		return 1;
	static const char alphabet[] = "0123456789 \t\n+-*/(),;xy";
	for (long i = 0; i < n; i++)
		buf[i] = (unsigned char)alphabet[(i * 2654435761u >> 7) % (sizeof alphabet - 1)];
	options((int)(n % 200) + 50);
	long s = classify(buf, n);
	long t = 0;
	for (int i = 0; i < 64; i++)
		t += counters[i] * (i + 1);
	printf("%ld %ld\n", s, t);
	free(buf);
	return 0;
}
