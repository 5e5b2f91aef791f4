/* rec_proc.c — the process's life as the recorder follows it: threads
 * (pthread_create interposed: one stream each), exit and _exit (END),
 * the exec family (EXEC), fork and vfork (FORK; the child records into a
 * file of its own). */
#include "replay/rec.h"

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* The definitions below interpose libc's; the originals come from
 * dlsym(RTLD_NEXT), looked up on first use because other libraries'
 * constructors may call them before ours runs. */
typedef int (*rec_pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				     void *(*)(void *), void *);
typedef void (*rec_exit_fn)(int);
REC_REAL(pthread_create, rec_pthread_create_fn)
REC_REAL(_exit, rec_exit_fn)
typedef int (*rec_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*rec_fexecve_fn)(int, char *const[], char *const[]);
typedef pid_t (*rec_fork_fn)(void);
REC_REAL(execve, rec_execve_fn)
REC_REAL(execvpe, rec_execve_fn)
REC_REAL(fexecve, rec_fexecve_fn)
typedef int (*rec_execveat_fn)(int, const char *, char *const[], char *const[], int);
REC_REAL(execveat, rec_execveat_fn)
typedef long (*rec_syscall_fn)(long, ...);
REC_REAL(syscall, rec_syscall_fn)
REC_REAL(fork, rec_fork_fn)

/* ------------------------------------------------- threads, exit, fork */

typedef struct rec_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t parent;
	int owns;		/* the child owns rec_own (rec_buf.c) */
} rec_start;

/* With libc patched, libc's thread start-up code has run (and may have
 * recorded words, opening the stream lazily) before this: the stream gets
 * its start routine here, before its first flush. */
static void *rec_thread_main(void *p)
{
	rec_start s = *(rec_start *)p;
	rec_thread_begin((uint64_t)s.fn, s.parent, s.owns);
	free(p);
	return s.fn(s.arg);
}

REC_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
			      void *(*fn)(void *), void *arg)
{
	rec_pthread_create_fn real = rec_real_pthread_create();
	if (!R.active || R.child)
		return real(th, attr, fn, arg);
	rec_start *s = malloc(sizeof *s);
	if (!s)
		return real(th, attr, fn, arg);
	rec_thread *me = rec_self;
	*s = (rec_start){ fn, arg,
			  me && me != &R.sink ? me->index : VT_NO_PARENT, 0 };
	rec_heap_publish();
	rec_make_room();
	/* claimed last: libc threads started meanwhile share the slot */
	int owns = s->owns = rec_prestart_claim();
	int rc = real(th, attr, rec_thread_main, s);
	if (owns)	/* not s->owns: the child may have freed s */
		rec_prestart_created(rc != 0);
	if (rc)
		free(s);
	return rc;
}

/* A SIGEV_THREAD notification (timer_create, mq_notify) runs its
 * function on a thread libc starts itself, by an internal call the
 * interposed pthread_create never sees: the function is wrapped so that
 * the thread's stream opens before the program's code runs.  (With libc
 * covered its start-up code has run before, into rec_pre: END says
 * those words were lost.)  The wrapper's record
 * lives as long as the process: one per timer or registration. */
typedef struct rec_notify {
	void (*fn)(union sigval);
	union sigval arg;
	uint32_t parent;
} rec_notify;

void *__libc_malloc(size_t n);

static void rec_notify_main(union sigval v)
{
	const rec_notify *n = v.sival_ptr;
	/* libc runs it with every signal blocked: a guard fault or an int3
	 * site there would kill the process */
	rec_open_traps();
	rec_prestart_check_self();
	rec_thread_begin((uint64_t)n->fn, n->parent, 0);
	n->fn(n->arg);
}

static const struct sigevent *rec_notify_wrap(const struct sigevent *se,
					      struct sigevent *mine)
{
	if (!se || se->sigev_notify != SIGEV_THREAD || !se->sigev_notify_function ||
	    !R.active || R.child)
		return se;
	rec_notify *n = __libc_malloc(sizeof *n);
	if (!n)
		return se;
	rec_thread *me = rec_self;
	*n = (rec_notify){ se->sigev_notify_function, se->sigev_value,
			   me && me != &R.sink ? me->index : VT_NO_PARENT };
	*mine = *se;
	mine->sigev_notify_function = rec_notify_main;
	mine->sigev_value.sival_ptr = n;
	return mine;
}

typedef int (*rec_timer_create_fn)(clockid_t, struct sigevent *, timer_t *);
typedef int (*rec_mq_notify_fn)(mqd_t, const struct sigevent *);
REC_REAL(timer_create, rec_timer_create_fn)
REC_REAL(mq_notify, rec_mq_notify_fn)

REC_EXPORT int timer_create(clockid_t clock, struct sigevent *se, timer_t *id)
{
	struct sigevent mine;
	return rec_real_timer_create()(clock, (struct sigevent *)rec_notify_wrap(se, &mine),
				       id);
}

/* Interval timers under valgrind (skel check's oracle run): none fires
 * sooner or more often than every REC_VALGRIND_TIMER_US.  valgrind takes
 * milliseconds to deliver a signal held for a probe and run its handler
 * there: a 3 ms timer whose handler siglongjmps out of a loop nest came
 * faster than that (each held at the loop's tick), a new one was always
 * pending when the previous handler's longjmp unblocked it, and the
 * program went no further.  Slower timers are left as they are (a
 * program that works until its alarm does as little under valgrind as
 * before).  The times read back are the kernel's. */
#define REC_VALGRIND_TIMER_US 50000
typedef int (*rec_setitimer_fn)(__itimer_which_t, const struct itimerval *, struct itimerval *);
REC_REAL(setitimer, rec_setitimer_fn)

static void rec_tv_floor(struct timeval *tv)
{
	if ((tv->tv_sec || tv->tv_usec) && !tv->tv_sec && tv->tv_usec < REC_VALGRIND_TIMER_US)
		tv->tv_usec = REC_VALGRIND_TIMER_US;
}

REC_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv, struct itimerval *ov)
{
	struct itimerval s;
	if (R.valgrind && R.active && nv) {
		s = *nv;
		rec_tv_floor(&s.it_value);
		rec_tv_floor(&s.it_interval);
		nv = &s;
	}
	return rec_real_setitimer()(which, nv, ov);
}

/* POSIX timers the same way (a time relative to now, and the interval) */
typedef int (*rec_timer_settime_fn)(timer_t, int, const struct itimerspec *,
				    struct itimerspec *);
REC_REAL(timer_settime, rec_timer_settime_fn)

static void rec_ts_floor(struct timespec *ts)
{
	if ((ts->tv_sec || ts->tv_nsec) && !ts->tv_sec && ts->tv_nsec < REC_VALGRIND_TIMER_US * 1000L)
		ts->tv_nsec = REC_VALGRIND_TIMER_US * 1000L;
}

REC_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *nv,
			     struct itimerspec *ov)
{
	struct itimerspec s;
	if (R.valgrind && R.active && nv) {
		s = *nv;
		if (!(flags & TIMER_ABSTIME))
			rec_ts_floor(&s.it_value);
		rec_ts_floor(&s.it_interval);
		nv = &s;
	}
	return rec_real_timer_settime()(id, flags, nv, ov);
}

REC_EXPORT int mq_notify(mqd_t q, const struct sigevent *se)
{
	struct sigevent mine;
	return rec_real_mq_notify()(q, rec_notify_wrap(se, &mine));
}

__attribute__((noreturn)) static void rec_exit_now(int status)
{
	if (R.active) {
		rec_sig_run_held();
		rec_finish(VT_END_UNDERSCORE_EXIT);
	}
	rec_exit_fn real = rec_real__exit();
	if (real)
		real(status);
	for (;;)
		rec_syscall3(SYS_exit_group, status, 0, 0);
}

/* swapcontext and setcontext move the thread to another stack and pc
 * (a coroutine, a context made by makecontext, one saved by getcontext):
 * the skeleton's frames do not follow, so the thread's stream says
 * where it switched, and the replay stops there, loud, instead of
 * replaying what follows as if the call had returned. */
typedef int (*rec_swapcontext_fn)(ucontext_t *, const ucontext_t *);
typedef int (*rec_setcontext_fn)(const ucontext_t *);
REC_REAL(swapcontext, rec_swapcontext_fn)
REC_REAL(setcontext, rec_setcontext_fn)

static void rec_note_switch(uint64_t how, uint64_t from)
{
	rec_thread *t = rec_self;
	if (!R.active || rec_off() || !t || t == &R.sink || rec_getpid() != R.pid)
		return;
	int e = errno;
	vt_handler h = { .flags = VT_HANDLER_SWITCH, .addr = how, .pc = from };
	const rec_object *o = rec_object_at(from);
	if (o) {
		h.pc = from - o->img.bias;
		h.object = o->index;
	}
	rec_event(VT_HANDLER, &h, sizeof h);
	errno = e;
}

REC_EXPORT int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	rec_note_switch(1, (uint64_t)__builtin_return_address(0));
	rec_swapcontext_fn real = rec_real_swapcontext();
	return real ? real(oucp, ucp) : -1;
}

REC_EXPORT int setcontext(const ucontext_t *ucp)
{
	rec_note_switch(2, (uint64_t)__builtin_return_address(0));
	rec_setcontext_fn real = rec_real_setcontext();
	return real ? real(ucp) : -1;
}

REC_EXPORT void _exit(int status)
{
	rec_exit_now(status);
}

/* quick_exit runs the at_quick_exit handlers, then libc's own _exit
 * (not through the PLT, so not the one above): the recorder's handler,
 * registered before the program's, runs after them (rec.c). */
void rec_quick_exit(void)
{
	if (R.active) {
		rec_sig_run_held();
		rec_finish(VT_END_UNDERSCORE_EXIT);
	}
}

REC_EXPORT void _Exit(int status)
{
	rec_exit_now(status);
}

/* fork, in the child: it records into a file of its own, VPATH.<pid>
 * (formats.md), whose PROCESS chunk says where its thread 0 -- the
 * forking thread, the only one left -- branched off the parent's stream.
 * Raw system calls only: libc may be patched and this runs inside its
 * fork.  Where that cannot be (skel run's pipe, a thread without a
 * stream, no file), the child records nothing, and the replay, which
 * finds no file, says so. */
size_t rec_put_dec(char *p, unsigned long v)
{
	char digits[24];
	size_t k = 0, n = 0;
	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (k)
		p[n++] = digits[--k];
	p[n] = 0;
	return n;
}

static size_t rec_put_str(char *p, const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		p[n] = s[n];
	p[n] = 0;
	return n;
}

static int rec_child_file(pid_t pid)
{
	char path[sizeof R.vpath + 24];
	size_t n = rec_put_str(path, R.vpath);
	if (!n)
		return -1;
	path[n++] = '.';
	rec_put_dec(path + n, (unsigned long)pid);
	long fd = rec_syscall3(SYS_open, (long)path,
			       O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (rec_syscall3(SYS_flock, fd, LOCK_EX | LOCK_NB, 0) ||
	    rec_syscall3(SYS_write, fd, (long)&R.header, sizeof R.header) !=
		    (long)sizeof R.header) {
		rec_syscall3(SYS_close, fd, 0, 0);
		return -1;
	}
	return (int)fd;
}

void rec_atfork_child(void)
{
	rec_thread *t = rec_self;
	rec_sig_forked(t);
	pid_t pid = rec_getpid();
	int fd = -1;
	if (R.active && !rec_off() && !R.pipe && t && t != &R.sink)
		fd = rec_child_file(pid);
	if (R.fd >= 0)
		rec_syscall3(SYS_close, R.fd, 0, 0);
	R.fd = fd;
	if (fd < 0) {
		R.child = 1;
		rec_self = &R.sink;
		rec_cursor = R.sink.base;
		rec_prestart_forked();	/* a claim held at the fork: not here */
		rec_flusher_forked();
		rec_fork_unblock();
		return;
	}
	vt_process p = { (uint32_t)pid, (uint32_t)R.pid, t->fork_word, t->index,
			 VT_PROC_FORKED | (R.execed ? VT_PROC_PARENT_EXECED : 0) |
				 R.image << 16 };
	R.pid = pid;
	R.execed = 0;
	rec_prestart_forked();
	rec_exit_forked();
	rec_fork_streams_reset(t);
	rec_chunk(VT_PROCESS, 0, &p, sizeof p);
	rec_thread_start_now(t);
	rec_flusher_forked();
	rec_fork_unblock();
}

/* exec: the image's words so far are written, then an EXEC chunk says
 * that what follows (the new image) is not in this trace; a failed exec
 * says so too, and recording goes on. */
static void rec_note_exec_arg(const char *path, const char *arg, uint32_t stage)
{
	if (!R.active || rec_off() || rec_getpid() != R.pid)
		return;
	if (stage == VT_EXEC_CALLED) {
		rec_flush_all_dying();
		rec_stats("exec");
	}
	vt_exec e = { .stage = stage };
	size_t n = 0;	/* path, then arg: no libc (it may be patched) */
	for (size_t i = 0; path && path[i] && n < sizeof e.path - 1; i++)
		e.path[n++] = path[i];
	for (size_t i = 0; arg[i] && n < sizeof e.path - 1; i++)
		e.path[n++] = arg[i];
	rec_chunk(VT_EXEC, 0, &e, sizeof e);
}

/* posix_spawn and the calls that spawn a shell (system, popen): glibc's
 * child is a clone(CLONE_VM|CLONE_VFORK) that runs glibc's code only, then
 * execs: nothing of the program runs in it, and what it execs is another
 * program.  Named in the parent's trace (a SPAWNED chunk), not traced. */
typedef int (*rec_posix_spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				  const posix_spawnattr_t *, char *const[], char *const[]);
typedef int (*rec_system_fn)(const char *);
typedef FILE *(*rec_popen_fn)(const char *, const char *);
REC_REAL(posix_spawn, rec_posix_spawn_fn)
REC_REAL(posix_spawnp, rec_posix_spawn_fn)
REC_REAL(system, rec_system_fn)
REC_REAL(popen, rec_popen_fn)

static void rec_note_spawn(const char *what, const char *path)
{
	int e = errno;
	rec_note_exec_arg(what, path, VT_EXEC_SPAWNED);
	errno = e;
}

static int rec_spawned(int rc, const char *path)
{
	if (!rc)
		rec_note_spawn("", path);
	return rc;
}

REC_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	rec_make_room();
	return rec_spawned(rec_real_posix_spawn()(pid, path, fa, at, argv, envp), path);
}

REC_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	rec_make_room();
	return rec_spawned(rec_real_posix_spawnp()(pid, file, fa, at, argv, envp), file);
}

REC_EXPORT int system(const char *cmd)
{
	rec_make_room();
	int rc = rec_real_system()(cmd);
	if (cmd)
		rec_note_spawn("/bin/sh -c ", cmd);
	return rc;
}

REC_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	rec_make_room();
	FILE *f = rec_real_popen()(cmd, mode);
	if (f)
		rec_note_spawn("/bin/sh -c ", cmd);
	return f;
}

static void rec_note_exec(const char *path, uint32_t stage)
{
	rec_note_exec_arg(path, "", stage);
}

/* The environment the new image starts with, when this one records:
 * SKEL_VALUES absolute and SKEL_EXEC its image number, so that the same
 * program, recorded again, writes a file of its own (VALUES.<pid>.exec<n>)
 * instead of truncating this image's; through skel run's FIFO, or where
 * this process does not record, no file (SKEL_VALUES empty): the replay
 * names the new image as not traced.  No libc (it may be patched): the
 * array is mapped (*bytes), the strings static (an exec replaces them). */
static char rec_exec_vars[2][sizeof R.vpath + 24];

static int rec_env_is(const char *e, const char *name)
{
	size_t i = 0;
	for (; name[i]; i++)
		if (e[i] != name[i])
			return 0;
	return e[i] == '=';
}

static char **rec_exec_env(char *const envp[], size_t *bytes)
{
	size_t n = 0, k = 0;
	if (!R.active)
		return NULL;
	while (envp && envp[n])
		n++;
	*bytes = (n + 3) * sizeof(char *);
	char **v = rec_mmap_raw(*bytes);
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		/* SKEL_PLANS_CHECKED vouched for this image's plans only */
		if (!rec_env_is(envp[i], "SKEL_VALUES") && !rec_env_is(envp[i], "SKEL_EXEC") &&
		    !rec_env_is(envp[i], "SKEL_PLANS_CHECKED"))
			v[k++] = envp[i];
	char *a = rec_exec_vars[0], *b = rec_exec_vars[1];
	size_t m = rec_put_str(a, "SKEL_VALUES=");
	if (!rec_off() && !R.pipe && rec_getpid() == R.pid)
		rec_put_str(a + m, R.vpath);
	m = rec_put_str(b, "SKEL_EXEC=");
	rec_put_dec(b + m, R.image + 1);
	v[k++] = a;
	v[k++] = b;
	v[k] = NULL;
	return v;
}

/* real (the function's pointer, looked up with dlsym) called with args,
 * `env` in them the new image's environment (rec_exec_env of envp).  The
 * lookup comes before the trace ends (VT_EXEC_CALLED): dlsym is libc's,
 * traced in a whole-process recording. */
#define REC_EXEC(real, args, path, envp) \
	do { \
		int saved; \
		size_t bytes = 0; \
		char **env = rec_exec_env(envp, &bytes); \
		if (!env) \
			env = (char **)(envp); \
		__typeof__(&*(real)) fn = real; \
		rec_note_exec(path, VT_EXEC_CALLED); \
		int rc = fn args; \
		saved = errno; \
		rec_note_exec(path, VT_EXEC_FAILED); \
		if (bytes) \
			rec_munmap_raw(env, bytes); \
		errno = saved; \
		return rc; \
	} while (0)

REC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_execve(), (path, argv, env), path, envp);
}

REC_EXPORT int execv(const char *path, char *const argv[])
{
	REC_EXEC(rec_real_execve(), (path, argv, env), path, environ);
}

/* execvp's search of PATH, done here as glibc's __execvpe does it
 * (posix/execvpe.c), not by libc: libc's search (strchr, memcpy, the
 * failed execve calls) would run after the trace ended at EXEC_CALLED,
 * and its accesses be missing from it, unsaid.  The recorder's code is
 * not the program's, so the trace ends where the program called execvp.
 * Raw system calls; errno is set once, by the caller, from the result. */
static long rec_exec_raw(const char *path, char *const argv[], char *const env[])
{
	return rec_syscall3(SYS_execve, (long)path, (long)argv, (long)env);
}

/* A file the kernel does not know how to run (ENOEXEC) is run as a
 * shell script: /bin/sh FILE ARGS. */
static long rec_exec_script(const char *path, char *const argv[], char *const env[])
{
	size_t argc = 0;
	while (argv[argc])
		argc++;
	const char **v = alloca((argc + 3) * sizeof *v);
	v[0] = "/bin/sh";
	v[1] = path;
	for (size_t i = 1; i <= argc; i++)	/* argv[1..], and the NULL */
		v[i + 1] = argv[i];
	if (!argc)
		v[2] = NULL;
	return rec_exec_raw("/bin/sh", (char *const *)v, env);
}

static long rec_exec_or_script(const char *path, char *const argv[], char *const env[])
{
	long rc = rec_exec_raw(path, argv, env);
	return rc == -ENOEXEC ? rec_exec_script(path, argv, env) : rc;
}

static const char *rec_env_get(const char *name)
{
	for (char **e = environ; e && *e; e++)
		if (rec_env_is(*e, name)) {
			const char *v = *e;
			while (*v != '=')
				v++;
			return v + 1;
		}
	return NULL;
}

static int rec_execvpe_search(const char *file, char *const argv[], char *const env[])
{
	long rc;
	size_t flen = 0, dlen;
	bool eacces = false;
	while (file[flen] && flen <= NAME_MAX)
		flen++;
	if (!flen) {
		rc = -ENOENT;
		goto out;
	}
	for (size_t i = 0; file[i]; i++)
		if (file[i] == '/') {
			rc = rec_exec_or_script(file, argv, env);
			goto out;
		}
	if (flen > NAME_MAX) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	const char *p = rec_env_get("PATH");
	if (!p)
		p = "/bin:/usr/bin";	/* glibc's _CS_PATH */
	char buf[PATH_MAX + NAME_MAX + 2];
	rc = -ENOENT;
	for (;;) {
		for (dlen = 0; p[dlen] && p[dlen] != ':'; dlen++)
			;
		if (dlen < PATH_MAX) {	/* longer: glibc skips it too */
			size_t n = 0;
			for (; n < dlen; n++)
				buf[n] = p[n];
			if (dlen)	/* an empty entry is the current directory */
				buf[n++] = '/';
			for (size_t i = 0; i <= flen; i++)
				buf[n + i] = file[i];
			rc = rec_exec_or_script(buf, argv, env);
			switch (-rc) {
			case EACCES:
				eacces = true;
				/* fall through */
			case ENOENT:
			case ESTALE:
			case ENOTDIR:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				goto out;
			}
		}
		if (!p[dlen])
			break;
		p += dlen + 1;
	}
	if (eacces)
		rc = -EACCES;
out:
	errno = (int)-rc;
	return -1;
}

REC_EXPORT int execvp(const char *file, char *const argv[])
{
	if (!R.active)
		return rec_real_execvpe()(file, argv, environ);
	REC_EXEC(rec_execvpe_search, (file, argv, env), file, environ);
}

REC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!R.active)
		return rec_real_execvpe()(file, argv, envp);
	REC_EXEC(rec_execvpe_search, (file, argv, env), file, envp);
}

REC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_fexecve(), (fd, argv, env), "(a file descriptor)", envp);
}

REC_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			int flags)
{
	REC_EXEC(rec_real_execveat(), (dirfd, path, argv, env, flags), path, envp);
}

/* execveat through syscall(2), where libc has no execveat (the lookup
 * made already, before the trace's end: rec_syscall_fn's dlsym is libc's) */
static int rec_execveat_call(int dirfd, const char *path, char *const argv[],
			     char *const envp[], int flags)
{
	return (int)rec_real_syscall()(SYS_execveat, dirfd, path, argv, envp, flags);
}

static pid_t rec_vfork_fork(void);

/* syscall(2), libc's generic call: the calls that end the image or make
 * a process go where their libc functions go -- syscall(SYS_exit_group,
 * 3) ended the process with the words not written (the trace empty, said
 * by the replay only), syscall(SYS_execve, ...) and SYS_execveat too; a
 * thread's syscall(SYS_exit) left its stream open ("still running when
 * the process exited");
 * syscall(SYS_fork) and a clone that is a fork (no flag but the exit
 * signal, no stack) made a child nobody traced or named, silently: now
 * _Fork's (vfork while recording: fork, as the interposed vfork).  The
 * others pass on.  Six arguments are taken whatever the call, as libc's
 * syscall takes them. */
REC_EXPORT long syscall(long nr, ...)
{
	va_list ap;
	long a[6];
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/* looked up first: dlsym is libc's code, traced only while the
	 * thread's stream is open */
	rec_syscall_fn real = rec_real_syscall();
	if (nr == SYS_exit_group)
		rec_exit_now((int)a[0]);
	if (nr == SYS_exit) {	/* this thread only: its stream ends here */
		rec_thread_exit_now();
		for (;;)
			rec_syscall3(SYS_exit, a[0], 0, 0);
	}
	if (R.active && (nr == SYS_fork || (nr == SYS_clone && a[0] == SIGCHLD && !a[1])))
		return _Fork();
	if (nr == SYS_vfork && rec_vfork_as_fork)
		return rec_vfork_fork();
	if (nr == SYS_execve)
		return execve((const char *)a[0], (char *const *)a[1], (char *const *)a[2]);
	if (nr == SYS_execveat) {
		if (rec_real_execveat())
			return execveat((int)a[0], (const char *)a[1], (char *const *)a[2],
					(char *const *)a[3], (int)a[4]);
		REC_EXEC(rec_execveat_call, ((int)a[0], (const char *)a[1],
					     (char *const *)a[2], env, (int)a[4]),
			 (const char *)a[1], (char *const *)a[3]);
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* execl, execlp, execle: their arguments gathered, then the v forms above
 * (glibc's own would call its internal execve, unseen). */
#define REC_EXECL_ARGS(first, ap, argv) \
	do { \
		size_t n; \
		{ \
			va_list cp; \
			va_copy(cp, ap); \
			for (n = 1; va_arg(cp, char *); n++) \
				; \
			va_end(cp); \
		} \
		argv = alloca((n + 1) * sizeof *argv); \
		for (size_t i = 0; i < n; i++) \
			argv[i] = i ? va_arg(ap, char *) : (char *)(first); \
		argv[n] = NULL; \
		(void)va_arg(ap, char *);	/* the NULL */ \
	} while (0)

REC_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv;
	va_list ap;
	va_start(ap, arg);
	REC_EXECL_ARGS(arg, ap, argv);
	va_end(ap);
	return execv(path, argv);
}

REC_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	va_list ap;
	va_start(ap, arg);
	REC_EXECL_ARGS(arg, ap, argv);
	va_end(ap);
	return execvp(file, argv);
}

REC_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv;
	char *const *envp = NULL;
	va_list ap;
	va_start(ap, arg);
	REC_EXECL_ARGS(arg, ap, argv);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* fork: the child records into a file of its own (rec_atfork_child); the
 * parent's stream says where it forked.  A fork libc makes inside itself
 * (daemon, forkpty) does not come here, but runs the pthread_atfork
 * handlers: the parent's names its child's pid as 0, the child's file
 * says whose child it is (vt_find_child). */
static __thread int rec_in_fork;

void rec_atfork_parent(void)
{
	if (!rec_in_fork) {
		rec_fork_event(0);
		rec_fork_unblock();
	}
}

REC_EXPORT pid_t fork(void)
{
	rec_in_fork = 1;
	pid_t pid = rec_real_fork()();
	rec_in_fork = 0;
	int e = errno;
	if (pid > 0)
		rec_fork_event((uint32_t)pid);
	rec_fork_unblock();	/* the child's did already */
	errno = e;
	return pid;
}

/* daemon, as glibc's does it, but through the fork and _exit above:
 * libc's own would fork and exit inside libc, where the parent's exit
 * is not seen (no END) and the child's pid not known. */
REC_EXPORT int daemon(int nochdir, int noclose)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return -1;
	if (!nochdir && chdir("/") < 0)
		return -1;
	if (noclose)
		return 0;
	int fd = open("/dev/null", O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISCHR(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		errno = ENODEV;
		return -1;
	}
	for (int k = 0; k < 3; k++)
		dup2(fd, k);
	if (fd > 2)
		close(fd);
	return 0;
}

/* _Fork (glibc 2.34) is fork without the pthread_atfork handlers: ours
 * run around it here. */
REC_REAL(_Fork, rec_fork_fn)

REC_EXPORT pid_t _Fork(void)
{
	rec_fork_prepare();
	pid_t pid = rec_real__Fork()();
	int e = errno;
	if (pid == 0)
		rec_atfork_child();
	else if (pid > 0)
		rec_fork_event((uint32_t)pid);
	rec_fork_unblock();
	errno = e;
	return pid;
}

/* clone without CLONE_VM makes a process, as fork does but without the
 * pthread_atfork handlers: the same before and after, the child's part
 * run first thing in the child, on its stack.  With CLONE_VM it is a
 * thread (or a vfork-like child that must exec at once): passed on.  A
 * child given its own TLS (CLONE_SETTLS) is not followed. */
typedef int (*rec_clone_fn)(int (*)(void *), void *, int, void *, ...);
REC_REAL(clone, rec_clone_fn)

typedef struct rec_clone_arg {
	int (*fn)(void *);
	void *arg;
} rec_clone_arg;

/* When fn returns, glibc's clone ends the process with the exit system
 * call: no exit(), no _exit(), so the stream ends here. */
static int rec_clone_child(void *p)
{
	rec_clone_arg a = *(rec_clone_arg *)p;	/* the parent's, copied */
	rec_atfork_child();
	int rc = a.fn(a.arg);
	rec_sig_run_held();
	rec_finish(VT_END_UNDERSCORE_EXIT);
	return rc;
}

REC_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;	/* glibc's clone reads them whatever the flags say */
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	rec_clone_fn real = rec_real_clone();
	if ((flags & (CLONE_VM | CLONE_SETTLS)) || !R.active)
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	rec_clone_arg a = { fn, arg };
	rec_fork_prepare();
	int pid = real(rec_clone_child, stack, flags, &a, ptid, tls, ctid);
	int e = errno;
	if (pid > 0)
		rec_fork_event((uint32_t)pid);
	rec_fork_unblock();
	errno = e;
	return pid;
}

/* Children that share the memory.  glibc's posix_spawn (system and popen
 * too) clones with CLONE_VM | CLONE_VFORK: its child runs libc's code,
 * patched, in the parent's memory and with the parent's thread pointer,
 * so its probes would store into the parent's buffer and delta state,
 * between the parent's words before the clone and after it (the replay
 * desynchronised there).  skel gen puts a `vmmark` after each clone and
 * clone3 system call of a covered object (format.h, PATCH_VMMARK).  In
 * such a child (CLONE_VM without CLONE_THREAD or CLONE_SETTLS; the call
 * returned 0) it keeps the thread's state aside and sends its words to
 * the sink; in the parent, which the kernel resumes once the child has
 * exec'd or exited, it puts the state back.  Only with CLONE_VFORK (the
 * parent waits, so the flags clone3 read from its stack are still there
 * when the child looks; without it both would run on one rec_t at once),
 * and only in a new process: a thread of this one (same pid) may find
 * that word reused already.  The diverted child's pid is kept, so that
 * its own vfork-like child's return in it does not take the state back.
 * glibc blocks the parent's signals around its clone; for another
 * caller's, a handler that runs in the parent before its mark puts the
 * state back first (rec_vm_parent_resume, rec_sig.c).  No SSE (the stub
 * keeps the general registers and the flags only), no libc. */
static __thread struct {
	rec_quiet q;
	pid_t child;		/* the diverted child, 0: none */
} rec_vm_aside __attribute__((tls_model("initial-exec")));

__attribute__((target("general-regs-only")))
void rec_vm_parent_resume(void)
{
	if (!rec_vm_aside.child || rec_getpid() == rec_vm_aside.child)
		return;
	rec_quiet_end(&rec_vm_aside.q);
	rec_vm_aside.child = 0;
}

__attribute__((used, noipa, target("general-regs-only")))
static void rec_vm_mark(uint64_t ret, uint64_t rdi, uint64_t nr)
{
	if ((int64_t)ret < 0)	/* failed: no child */
		return;
	if (ret) {
		rec_vm_parent_resume();
		return;
	}
	pid_t me = rec_getpid();
	if (me == R.pid || rec_vm_aside.child || !R.sink.base)
		return;	/* a thread; or diverted already (nested) */
	uint64_t flags = nr == SYS_clone3 ? *(const volatile uint64_t *)rdi : rdi;
	if ((flags & (CLONE_VM | CLONE_VFORK)) != (CLONE_VM | CLONE_VFORK) ||
	    flags & (CLONE_THREAD | CLONE_SETTLS))
		return;
	rec_quiet_begin(&rec_vm_aside.q);
	rec_vm_aside.child = me;
}

/* From the trampoline: [rsp] its return, then the number it pushed, the
 * program's rdx and rax (the probe frame, rec_emit.c). */
__asm__(".text\n"
	".globl rec_vm_mark_stub\n"
	".hidden rec_vm_mark_stub\n"
	".type rec_vm_mark_stub, @function\n"
	"rec_vm_mark_stub:\n"
	"	pushfq\n"
	"	push %rcx\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	push %r8\n"
	"	push %r9\n"
	"	push %r10\n"
	"	push %r11\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov 96(%rbp), %rdi\n"	/* rax: what the system call returned */
	"	mov 40(%rbp), %rsi\n"	/* rdi: its first argument */
	"	mov 80(%rbp), %rdx\n"	/* the number */
	"	and $-16, %rsp\n"
	"	cld\n"
	"	call rec_vm_mark\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	pop %r11\n"
	"	pop %r10\n"
	"	pop %r9\n"
	"	pop %r8\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rcx\n"
	"	popfq\n"
	"	ret\n"
	".size rec_vm_mark_stub, .-rec_vm_mark_stub\n");

/* vfork, while recording, is fork: a vfork child runs in its parent's
 * memory, where its probes would store into the parent's buffer.  The
 * parent waits, as after vfork, until the child execs or exits (the
 * pipe's write end is close-on-exec).  A child that writes to its
 * parent's memory, which POSIX does not allow, is not followed.  Not
 * recording, it is libc's vfork, reached by a tail jump: a vfork cannot
 * be called from a function that returns before the child is done. */
int rec_vfork_as_fork;		/* set when recording starts (rec.c) */
void *rec_vfork_real;		/* libc's, looked up by rec_init */

__attribute__((used)) static pid_t rec_vfork_fork(void)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC))
		return fork();
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		return 0;
	}
	int e = errno;
	close(fds[1]);
	char c;
	while (pid > 0 && (read(fds[0], &c, 1) < 0 && errno == EINTR))
		;
	close(fds[0]);
	errno = e;
	return pid;
}

__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	cmpl $0, rec_vfork_as_fork(%rip)\n"
	"	jne 1f\n"
	"	cmpq $0, rec_vfork_real(%rip)\n"
	"	je 1f\n"
	"	jmp *rec_vfork_real(%rip)\n"
	"1:	jmp rec_vfork_fork\n"
	".size vfork, .-vfork\n");

/* dlopen: objects the real one maps are patched when it returns, if a
 * section covers them.  Their constructors have run by then, unpatched
 * (their words are missing; the replay meets the object at its first
 * probe after dlopen returns).  No other thread can be in the new
 * object's code meanwhile except through those constructors: nothing
 * else knows its addresses before dlopen returns. */
typedef void *(*rec_dlopen_fn)(const char *, int);
typedef void *(*rec_dlmopen_fn)(Lmid_t, const char *, int);
REC_REAL(dlopen, rec_dlopen_fn)
REC_REAL(dlmopen, rec_dlmopen_fn)

REC_EXPORT void *dlopen(const char *file, int mode)
{
	void *h = rec_real_dlopen()(file, mode);
	if (h && R.active && !R.child) {
		int e = errno;
		rec_late_objects();
		errno = e;
	}
	return h;
}

REC_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h = rec_real_dlmopen()(lmid, file, mode);
	if (h && R.active && !R.child) {
		int e = errno;
		rec_late_objects();
		errno = e;
	}
	return h;
}

/* The recording's end, again, at the very end of the program's exit:
 * registered with atexit before the program's start, this runs after
 * the destructors (rec_fini).  It matters when a held signal's handler,
 * run by rec_fini, did not return (a siglongjmp back into the program):
 * the program went on and exited again, and glibc runs the destructors
 * once only; without this the file had no END. */
static void rec_exit_again(void)
{
	rec_sig_run_held();
	rec_finish(VT_END_EXIT);
}

void rec_exit_hook(void)
{
	atexit(rec_exit_again);
}

__attribute__((destructor)) static void rec_fini(void)
{
	rec_sig_run_held();
	rec_finish(VT_END_EXIT);
}

