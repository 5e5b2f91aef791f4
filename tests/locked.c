/* Locked read-modify-writes: xchg with memory, lock add/xadd/inc/cmpxchg.
 * The processor reads each operand once; valgrind runs most of them as a
 * load followed by a compare-and-swap and lackey logs an extra load
 * (` L a` then ` M a`), which skel check must recognise, count and say,
 * while still comparing the read and the write themselves.  Last, a jump
 * over a lock prefix (both decodes of the instruction end together). */
#include <stdio.h>

static int cell[16];

int main(int argc, char **argv)
{
	int sum = 0;
	for (int i = 0; i < 100 + argc; i++) {
		int *p = &cell[(i * 7) & 15], a = i, e = i & 3;
		__asm__ volatile("xchg %0, %1" : "+r"(a), "+m"(*p));
		__asm__ volatile("lock addl $2, %0" : "+m"(*p));
		__asm__ volatile("lock xaddl %0, %1" : "+r"(a), "+m"(*p));
		__asm__ volatile("lock cmpxchgl %2, %1" : "+a"(e), "+m"(*p) : "r"(i));
		__asm__ volatile("lock incl %0" : "+m"(*p));
		/* glibc's single-threaded shortcut: a jump over the lock
		 * prefix into the middle of the instruction */
		e = i & 1;
		__asm__ volatile("test $2, %b3\n\tje 1f\n\tlock\n1:\tcmpxchgl %2, %1"
				 : "+a"(e), "+m"(*p) : "r"(i), "q"(i) : "cc");
		sum += a + e;
	}
	printf("%d\n", sum);
	return 0;
}
