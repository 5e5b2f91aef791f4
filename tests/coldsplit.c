/* A switch whose rare cases gcc -O2 moves to the function's cold part
 * (hot/cold splitting), in the style of CPython's PyMember_SetOne.
 *
 * set_member's jump table sends case 5 to the first instruction of
 * set_member.cold, which jumps back into set_member's epilogue (case 7,
 * also cold, ends in a call and a ret of its own).  Stripped,
 * the cold part is known only by its FDE: a routine start of its own,
 * reached through the table.  Built -fno-pie -no-pie the table holds
 * absolute addresses in .rodata, so the cold part's start is a code
 * address in data ("taken") and stays a routine: the table's jump to it
 * is a tail call, and set_member, called directly from main with its
 * entry values, must read the cold part's entry word there (it once
 * returned to main instead, which then read that word as its own
 * values).  Built PIE the table holds offsets and the cold part is merged
 * back into set_member, the one routine that jumps to it.
 * tests/kernels.sh builds both, stripped, and checks that the pattern
 * is there before it checks the replay against lackey. */
#include <stdio.h>
#include <stdlib.h>

volatile long complaints;

__attribute__((noinline, cold)) void complain(long v)
{
	complaints += v;
}

__attribute__((noinline)) long other(long *p, long v)
{
	p[1] += v;
	return p[1];
}

__attribute__((noinline)) int set_member(int type, long *p, long v)
{
	int rc = 0;
	switch (type) {
	case 0: *(char *)p = (char)v; break;
	case 1: *(short *)p = (short)v; break;
	case 2: *(int *)p = (int)v; break;
	case 3: *p = v; break;
	case 4:
		if (v < 0)
			rc = -1;
		else
			*p = v;
		break;
	case 5:
		complain(v);
		*(unsigned long *)p = (unsigned long)v;
		break;
	case 6: *p += v; break;
	case 7:
		complain(-v);
		return (int)other(p, v);
	case 9: p[3] = v * 3; break;
	default: rc = -2; break;
	}
	return rc;
}

int main(int argc, char **argv)
{
	long *m = calloc(8, sizeof *m);
	long s = 0;
	int n = argc > 1 ? atoi(argv[1]) : 200;
	for (int i = 0; i < n; i++) {
		s += set_member(i % 11, m, i - 20);
		s += m[0] + m[1] + m[2] + m[3];
	}
	printf("%ld %ld\n", s, complaints);
	free(m);
	return 0;
}
