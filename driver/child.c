/* child.c — the processes skel starts and the temporary files it makes,
 * and what becomes of them when skel is interrupted.
 *
 * Children run in process groups of their own, so that one kill reaches
 * what they start in turn (gcc's cc1 and as, the program's own children).
 * On SIGINT, SIGTERM or SIGHUP skel passes the signal on to those groups,
 * gives them a moment, kills what is left, removes the temporary files it
 * still holds and dies by the signal it got, so that its caller sees the
 * right status.
 *
 * A group of its own is a background job for the terminal: the program
 * under trace would stop (SIGTTIN, SIGTTOU) when it reads the terminal or
 * sets its modes.  So when skel is a foreground job of its own (a shell
 * with job control started it), it lends the terminal to the program's
 * group for as long as the program runs, as a shell does with a job: ^C
 * and ^Z then reach the program as they would without skel.  A program
 * that dies of that ^C makes skel die of it too once it has done what is
 * left (the replay of what the program did), so that a shell loop around
 * skel stops as it would around the program (M. Cracauer, "Proper
 * handling of SIGINT/SIGQUIT").  When skel is in the foreground inside
 * someone else's group (a script, make), the terminal is not its to lend:
 * the program stays in that group, as it would without skel, and is
 * signalled alone.  Every handler here uses async-signal-safe calls. */
#include "driver/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_TMP 16
#define MAX_KIDS 8

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
static bool catching[sizeof caught / sizeof *caught];	/* false: inherited SIG_IGN */
static sigset_t caught_set, start_mask;

/* Removed in reverse order of tracking: a directory's files go first. */
static char tmp_paths[MAX_TMP][PATH_MAX];
static volatile sig_atomic_t ntmp;
static pid_t kids[MAX_KIDS];
static pid_t kid_target[MAX_KIDS];	/* for kill: -pid for its group, or pid */
static volatile sig_atomic_t nkids;

static int tty = -2;			/* /dev/tty, -1 without one; -2 not yet opened */
static volatile sig_atomic_t tty_lent;	/* the group holding the terminal, or 0 */
static pid_t tty_job;			/* the child it was lent to: its stops are ours */
static int interrupted;			/* the signal a terminal-holding child died of */

static void block(sigset_t *old)
{
	sigprocmask(SIG_BLOCK, &caught_set, old);
}

static void unblock(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* tcsetpgrp from a background group raises SIGTTOU unless it is blocked. */
static void terminal_to(pid_t pgrp)
{
	sigset_t s, old;
	sigemptyset(&s);
	sigaddset(&s, SIGTTOU);
	sigprocmask(SIG_BLOCK, &s, &old);
	tcsetpgrp(tty, pgrp);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Whether skel's group is the foreground job of its controlling terminal. */
static bool own_terminal(void)
{
	if (tty == -2)
		tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	return tty >= 0 && tcgetpgrp(tty) == getpgrp();
}

static void take_terminal_back(void)
{
	if (tty_lent) {
		terminal_to(getpgrp());
		tty_lent = 0;
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

/* The children (their groups) get SIG and a second to end; then SIGKILL. */
static void stop_children(int sig)
{
	bool gone[MAX_KIDS] = { false };
	int n = nkids;
	for (int i = 0; i < n; i++) {
		kill(kid_target[i], sig);
		kill(kid_target[i], SIGCONT);
	}
	for (int tries = 0; tries < 100; tries++) {
		bool all = true;
		for (int i = 0; i < n; i++) {
			if (!gone[i]) {
				pid_t r = waitpid(kids[i], NULL, WNOHANG);
				gone[i] = r == kids[i] || (r < 0 && errno == ECHILD);
			}
			all &= gone[i];
		}
		if (all)
			break;
		sleep_ms(10);
	}
	for (int i = 0; i < n; i++) {
		if (gone[i] && kid_target[i] > 0)	/* alone, and reaped */
			continue;
		kill(kid_target[i], SIGKILL);	/* a group: what it left too */
		if (!gone[i])
			while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
				;
	}
}

/* A private directory of ours emptied (what a child left in it, say
 * valgrind's log of a process the program forked), with system calls
 * only: this runs in a signal handler. */
static void empty_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[4096] __attribute__((aligned(8)));
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < n;) {
			struct { uint64_t ino; int64_t off; unsigned short len;
				 unsigned char type; char name[]; } *d = (void *)(buf + off);
			if (strcmp(d->name, ".") && strcmp(d->name, ".."))
				unlinkat(fd, d->name, 0);
			off += d->len;
		}
	close(fd);
}

static void on_signal(int sig)
{
	take_terminal_back();
	stop_children(sig);
	for (int i = ntmp - 1; i >= 0; i--)
		if (unlink(tmp_paths[i]) < 0 && errno == EISDIR && rmdir(tmp_paths[i]) < 0 &&
		    errno == ENOTEMPTY) {
			empty_dir(tmp_paths[i]);
			rmdir(tmp_paths[i]);
		}
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	_exit(128 + sig);
}

void child_signals_init(void)
{
	sigemptyset(&caught_set);
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++)
		sigaddset(&caught_set, caught[i]);
	sigprocmask(SIG_SETMASK, NULL, &start_mask);
	struct sigaction a = { .sa_handler = on_signal };
	a.sa_mask = caught_set;
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++) {
		struct sigaction old;
		/* a signal ignored by whoever started skel stays ignored
		 * (nohup, a background job of a non-interactive shell) */
		if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		catching[i] = sigaction(caught[i], &a, NULL) == 0;
	}
}

void tmp_track(const char *path)
{
	sigset_t old;
	block(&old);
	if (ntmp < MAX_TMP && strlen(path) < PATH_MAX) {
		strcpy(tmp_paths[ntmp], path);
		ntmp++;
	}
	unblock(&old);
}

void tmp_untrack(const char *path)
{
	sigset_t old;
	block(&old);
	for (int i = 0; i < ntmp; i++)
		if (!strcmp(tmp_paths[i], path)) {
			memmove(tmp_paths[i], tmp_paths[i + 1],
				(size_t)(ntmp - i - 1) * sizeof *tmp_paths);
			ntmp--;
			break;
		}
	unblock(&old);
}

void tmp_remove(const char *path)
{
	if (unlink(path) < 0 && errno == EISDIR)
		rmdir(path);
	tmp_untrack(path);
}

/* $TMPDIR, else /tmp. */
const char *tmp_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

/* TEMPLATE's XXXXXX filled in, created and tracked with no window for a
 * signal in between. */
char *tmp_mkdtemp(char *templ)
{
	sigset_t old;
	block(&old);
	char *d = mkdtemp(templ);
	if (d)
		tmp_track(d);
	unblock(&old);
	return d;
}

int tmp_mkstemp(char *templ)
{
	sigset_t old;
	block(&old);
	int fd = mkstemp(templ);
	if (fd >= 0)
		tmp_track(templ);
	unblock(&old);
	return fd;
}

enum placement { OWN_GROUP, LENT_TERMINAL, SKELS_GROUP };

/* The child side: the group, the terminal, then skel's own signal set-up
 * undone so that the program starts as it would from a shell.  It also
 * dies with skel: a SIGKILLed skel cannot pass anything on. */
static void child_setup(pid_t parent, enum placement where)
{
	if (where != SKELS_GROUP)
		setpgid(0, 0);
	if (where == LENT_TERMINAL)
		terminal_to(getpid());
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++)
		if (catching[i])
			sigaction(caught[i], &dfl, NULL);
	sigprocmask(SIG_SETMASK, &start_mask, NULL);
}

pid_t child_fork(bool terminal)
{
	sigset_t old;
	block(&old);
	enum placement where = OWN_GROUP;
	if (terminal && own_terminal())
		where = getpgrp() == getpid() ? LENT_TERMINAL : SKELS_GROUP;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		ntmp = nkids = 0;	/* the parent's to remove, not ours */
		child_setup(parent, where);
		return 0;
	}
	if (pid > 0) {
		if (where != SKELS_GROUP)
			setpgid(pid, pid);	/* both sides: whichever runs first */
		if (where == LENT_TERMINAL) {
			terminal_to(pid);
			tty_lent = tty_job = pid;
		}
		if (nkids < MAX_KIDS) {
			kids[nkids] = pid;
			kid_target[nkids] = where == SKELS_GROUP ? pid : -pid;
			nkids++;
		}
	}
	unblock(&old);
	return pid;
}

static void forget_child(pid_t pid)
{
	sigset_t old;
	block(&old);
	for (int i = 0; i < nkids; i++)
		if (kids[i] == pid) {
			nkids--;
			kids[i] = kids[nkids];
			kid_target[i] = kid_target[nkids];
			break;
		}
	unblock(&old);
}

/* ^Z stopped the program skel lent the terminal to: skel stops too, as
 * the shell expects of its job; once continued it lends the terminal
 * again (when it is in the foreground again: not after bg) and continues
 * the program. */
static void stop_with(pid_t pid)
{
	sigset_t old;
	block(&old);
	take_terminal_back();
	unblock(&old);
	raise(SIGTSTP);
	block(&old);
	if (own_terminal()) {
		terminal_to(pid);
		tty_lent = pid;
	}
	unblock(&old);
	kill(-pid, SIGCONT);
}

/* The group (or process) child_fork gave pid, for kill. */
static pid_t kid_kill_target(pid_t pid)
{
	for (int i = 0; i < nkids; i++)
		if (kids[i] == pid)
			return kid_target[i];
	return pid;
}

int child_wait(pid_t pid)
{
	return child_wait_watched(pid, NULL, NULL);
}

int child_wait_watched(pid_t pid, bool (*over)(void *), void *arg)
{
	int st, rc;
	bool killed = false;
	for (;;) {
		int flags = tty_job == pid ? WUNTRACED : 0;
		if (over && !killed)
			flags |= WNOHANG;
		pid_t r = waitpid(pid, &st, flags);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		if (r == 0) {	/* running: watched ten times a second */
			if (over(arg)) {
				kill(kid_kill_target(pid), SIGKILL);
				killed = true;
			} else {
				sleep_ms(100);
			}
			continue;
		}
		if (WIFSTOPPED(st)) {
			stop_with(pid);
			continue;
		}
		rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT && tty_lent == pid)
			interrupted = SIGINT;
		break;
	}
	if (tty_job == pid) {
		sigset_t old;
		block(&old);
		take_terminal_back();
		tty_job = 0;
		unblock(&old);
	}
	forget_child(pid);
	return rc;
}

bool child_interrupted(void)
{
	return interrupted != 0;
}

int child_exit(int rc)
{
	if (!interrupted)
		return rc;
	fflush(NULL);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&dfl.sa_mask);
	sigaction(interrupted, &dfl, NULL);
	raise(interrupted);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, interrupted);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	return rc;
}
