/* spinsig — a timer's signal in a loop that only its handler ends:
 * while (flag < want) spins++, spins volatile (tests/signals.sh,
 * spinsig).  argv[1]: rounds (default 4).  The loop's code runs all in
 * the trampolines (one span) and records its exit jump's outcome; a
 * signal there was single-stepped until the thread left the trampolines,
 * which it never did: the recorded program hung.  Once the watchdog's
 * 200 ms have passed it now runs at the first probe's store the thread
 * comes to. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static long tab[256];
static volatile sig_atomic_t flag;
static volatile long spins;

static void on_alarm(int sig)
{
	(void)sig;
	for (int i = 0; i < 256; i++)
		tab[i] += i;
	flag++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	signal(SIGALRM, on_alarm);
	long tot = 0;
	for (int r = 0; r < rounds; r++) {
		struct itimerval it = { { 0, 0 }, { 0, 3000 } };
		setitimer(ITIMER_REAL, &it, 0);
		while (flag < r + 1)
			spins++;
		for (int i = 0; i < 256; i++)
			tot += tab[i];
	}
	printf("%d signals, %s, spun %s\n", (int)flag, tot == 32640L * rounds * (rounds + 1) / 2 ? "ok" : "bad",
	       spins > 0 ? "yes" : "no");
	return 0;
}
