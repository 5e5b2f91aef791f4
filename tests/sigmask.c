/* sigmask: a program that blocks every signal (as servers and shells do
 * around critical sections), installs its own SIGTRAP handler and works on
 * an array meanwhile.  Recorded with every probe site an int3
 * (SKEL_INT3=1), it must behave as natively: a blocked SIGTRAP at an int3
 * site would kill it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t traps;
static long data[512];

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

__attribute__((noinline)) static long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		data[i % 512] += i;
		if (data[(i * 7) % 512] & 1)
			s += data[i % 512];
	}
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	struct sigaction a = { .sa_handler = on_trap };
	sigfillset(&a.sa_mask);
	sigaction(SIGTRAP, &a, NULL);
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	long s = work(n);
	sigprocmask(SIG_SETMASK, &old, NULL);
	printf("%ld %d\n", s, (int)traps);
	return 0;
}
