/* gapdata — a named variable inside a stretch of .data no symbol names
 * (tests/objects.sh).  An access in the stretch is .data+OFF, one to the
 * variable is gapvar: a lookup's answer for the stretch must not hold for
 * the variable (the section's extent contains it), nor the variable's for
 * the stretch.  The loop alternates: before, variable, after, variable;
 * each of the 3 * 1000 reads of gapvar is 8 bytes. */
#include <stdint.h>
#include <stdio.h>

__asm__(".data\n"
	".balign 64\n"
	".Lgap_lo: .skip 64\n"
	".globl gapvar\n"
	".type gapvar, @object\n"
	".size gapvar, 8\n"
	"gapvar: .quad 5\n"
	".skip 64\n"
	".text\n");
extern volatile uint64_t gapvar;

__attribute__((noinline)) uint64_t walk(volatile uint64_t *v, long n)
{
	volatile uint64_t *before = v - 4, *after = v + 4;
	uint64_t s = 0;
	for (long i = 0; i < n; i++)
		s += *before + *v + *after + *v + *v;
	return s;
}

int main(void)
{
	printf("%llu\n", (unsigned long long)walk(&gapvar, 1000));
	return 0;
}
