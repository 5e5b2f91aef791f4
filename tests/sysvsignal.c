/* sysvsignal: compiled for strict ISO C (-std=c11), where <signal.h>
 * makes signal() glibc's __sysv_signal, it installs a SIGSEGV handler (as
 * zstd does for its backtraces) and then chases pointers long enough to
 * fill the recorder's buffer many times.  The buffer's guard-page fault
 * must still reach the recorder: __sysv_signal calls sigaction inside
 * libc, out of the recorder's sight, and the program was killed at the
 * first full buffer.  Built with -DSYSV_SIGSET (and _XOPEN_SOURCE) it
 * installs the handler with sigset() and blocks SIGSEGV with sighold():
 * both call libc's own sigaction and sigprocmask, unseen, and the first
 * full buffer killed the program. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned next[4096];
static volatile sig_atomic_t segv;

static void on_segv(int sig)
{
	(void)sig;
	segv = 1;
	_Exit(3);
}

__attribute__((noinline)) static unsigned chase(long n)
{
	unsigned i = 0, s = 0;
	for (long k = 0; k < n; k++) {
		i = next[i];
		s += i;
	}
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 400000;
#ifdef SYSV_SIGSET
	if (sigset(SIGSEGV, on_segv) == SIG_ERR || sighold(SIGSEGV))
		return 2;
#else
	if (signal(SIGSEGV, on_segv) == SIG_ERR)
		return 2;
#endif
	unsigned x = 12345;
	for (unsigned k = 0; k < 4096; k++) {
		x = x * 1103515245u + 12345u;
		next[k] = (x >> 8) % 4096;
	}
	printf("%u %d\n", chase(n), (int)segv);
	return 0;
}
