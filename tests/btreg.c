/* bt/bts/btr/btc on registers: no memory access on the processor, but
 * valgrind emulates them through a stack slot and lackey logs a store and
 * a load there; skel check must not take those for the program's. */
#include <stdio.h>

int main(int argc, char **argv)
{
	unsigned long x = 0x9234567812345678ul, r = 0, y = 0;
	static unsigned long mem[4] = { 5, 6, 7, 8 };
	for (unsigned long i = (unsigned long)argc; i < 200; i++) {
		unsigned char c;
		__asm__ volatile("bt %2, %1; setc %0" : "=r"(c) : "r"(x), "r"(i & 63) : "cc");
		r += c;
		__asm__ volatile("bts %1, %0" : "+r"(y) : "r"(i & 63) : "cc");
		__asm__ volatile("btr $3, %0" : "+r"(y) : : "cc");
		/* with an immediate, the memory form is a real access of the
		 * whole operand (with a register offset it is inexact: skel gen
		 * says so) */
		__asm__ volatile("btcq $9, %0" : "+m"(mem[i & 3]) : : "cc");
	}
	printf("%lu %lx %lx\n", r, y, mem[0] ^ mem[3]);
	return 0;
}
