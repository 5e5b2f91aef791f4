/* timer.c — run a command once, append its wall time in seconds to a file.
 *   timer OUT CMD [ARGS...]
 * The command inherits stdin/stdout/stderr; exits with its status
 * (128+N if killed by signal N).  Used by bench/run.sh (make bench). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: timer OUT CMD [ARGS...]\n");
		return 2;
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		return 2;
	}
	if (p == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	int st;
	if (waitpid(p, &st, 0) < 0) {
		perror("waitpid");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	FILE *f = fopen(argv[1], "a");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "%.6f\n", s);
	fclose(f);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
