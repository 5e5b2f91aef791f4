/* uctx: coroutines by swapcontext (a context made by makecontext on a
 * stack of the program's, switched to and back 50 times), and a
 * setcontext back to a context saved by getcontext.  skel does not
 * follow context switches: the replay must stop at the first one and
 * say so, never go on as if the call had returned.
 *   swap  the coroutine ping-pong
 *   set   getcontext, then setcontext to it once (getcontext returns
 *         twice) */
#include <stdio.h>
#include <ucontext.h>
#include <string.h>

static ucontext_t mainc, coc;
static long arr[1000], sum;
static char stack[65536];

static void co(void)
{
	for (int r = 0; r < 50; r++) {
		for (int i = 0; i < 1000; i += 3)
			arr[i] += i ^ r;
		swapcontext(&coc, &mainc);
	}
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 1000; i++)	/* the trace's part before any switch */
		arr[i] = i * 7;
	if (argc > 1 && !strcmp(argv[1], "set")) {
		volatile int again = 0;
		getcontext(&mainc);
		for (int i = 0; i < 1000; i++)
			sum += arr[i];
		if (!again++)
			setcontext(&mainc);
		printf("%ld\n", sum);
		return 0;
	}
	getcontext(&coc);
	coc.uc_stack.ss_sp = stack;
	coc.uc_stack.ss_size = sizeof stack;
	coc.uc_link = &mainc;
	makecontext(&coc, co, 0);
	for (int r = 0; r < 50; r++) {
		swapcontext(&mainc, &coc);
		for (int i = 0; i < 1000; i++)
			sum += arr[i] & 0xff ? arr[i] : -1;
	}
	printf("%ld\n", sum);
	return 0;
}
