/* tbyte: byte-scanning loops whose exit depends on memory the skeleton
 * does not have (a table indexed by the byte): skel gen records each
 * byte with the outcome of the jump it decides, in one word. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static unsigned char stop[256];
static volatile long ticks;
static long seen[64];

__attribute__((noinline)) long scan_to(const unsigned char *p, long n)
{
	long i = 0;
	while (i < n && !stop[p[i]])
		i++;
	return i;
}

static void on_alarm(int sig)
{
	(void)sig;
	seen[ticks & 63]++;
	ticks++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int timer = argc > 2 && !strcmp(argv[2], "timer");
	unsigned char *text = malloc((size_t)n);
	if (!text)
		return 1;
	unsigned x = 12345;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		text[i] = (unsigned char)('a' + (x >> 16) % 26);
	}
	stop['q'] = stop['z'] = 1;
	if (timer) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	long words = 0, total = 0;
	/* with the timer: until its tenth tick, nearly all the time in
	 * scan_to's loop, where the recorder holds the signal to the jump
	 * (three ticks: under make check's load all three came outside it
	 * once in a while) */
	for (int rep = 0; rep < 1 || (timer && ticks < 10); rep++)
		for (long at = 0; at < n;) {
			long k = scan_to(text + at, n - at);
			words++;
			total += k;
			at += k + 1;
		}
	if (timer)	/* how many scans the ticks took varies */
		printf("tbyte n=%ld ticks=%ld\n", n, ticks);
	else
		printf("tbyte n=%ld words=%ld total=%ld\n", n, words, total);
	free(text);
	return 0;
}
