/* `mov eax, 0; and eax, [mem]`: the processor reads [mem]; valgrind's IR
 * optimizer knows the result is 0 and drops the load, so lackey does not
 * show it (Csmith seed 335 at -O0 has the pattern).  skel check must not
 * call the skeleton's (right) read a mismatch; the same `and` reached
 * with eax = 1 keeps its load, which must still be compared. */
#include <stdio.h>

int main(int argc, char **argv)
{
	static volatile int mem[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	unsigned r = 0;
	for (int i = argc; i < 300; i++) {
		unsigned v;
		if (i & 1)
			__asm__ volatile("mov $0, %%eax\n\tand %1, %%eax\n\tmov %%eax, %0"
					 : "=r"(v) : "m"(mem[i & 7]) : "eax", "cc");
		else
			__asm__ volatile("mov $1, %%eax\n\tand %1, %%eax\n\tmov %%eax, %0"
					 : "=r"(v) : "m"(mem[i & 7]) : "eax", "cc");
		r += v;
	}
	printf("%u\n", r);
	return 0;
}
