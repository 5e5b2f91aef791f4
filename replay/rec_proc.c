/* rec_proc.c — the process's life as the recorder follows it: threads
 * (pthread_create interposed: one stream each), exit and _exit (END),
 * the exec family (EXEC) and fork (FORK; the child records nothing). */
#include "replay/rec.h"

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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
typedef int (*rec_execv_fn)(const char *, char *const[]);
typedef int (*rec_fexecve_fn)(int, char *const[], char *const[]);
typedef pid_t (*rec_fork_fn)(void);
REC_REAL(execve, rec_execve_fn)
REC_REAL(execv, rec_execv_fn)
REC_REAL(execvp, rec_execv_fn)
REC_REAL(execvpe, rec_execve_fn)
REC_REAL(fexecve, rec_fexecve_fn)
REC_REAL(fork, rec_fork_fn)

/* ------------------------------------------------- threads, exit, fork */

typedef struct rec_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t parent;
	int owns;		/* the child owns rec_prestart (rec_buf.c) */
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
	s->owns = rec_prestart_claim();
	rec_heap_publish();
	int rc = real(th, attr, rec_thread_main, s);
	if (rc) {
		if (s->owns)
			rec_prestart_release();
		free(s);
	}
	return rc;
}

__attribute__((noreturn)) static void rec_exit_now(int status)
{
	if (R.active)
		rec_finish(VT_END_UNDERSCORE_EXIT);
	rec_exit_fn real = rec_real__exit();
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

REC_EXPORT void _exit(int status)
{
	rec_exit_now(status);
}

REC_EXPORT void _Exit(int status)
{
	rec_exit_now(status);
}

/* fork: the child records nothing (its probes store into a discard
 * buffer); it would otherwise share the parent's stream and file. */
void rec_atfork_child(void)
{
	R.child = 1;
	if (R.fd >= 0)
		rec_syscall3(SYS_close, R.fd, 0, 0);
	R.fd = -1;
	rec_self = &R.sink;
	rec_cursor = R.sink.base;
	rec_t.mask = rec_t.sleft = 0;
}

/* exec: the image's words so far are written, then an EXEC chunk says
 * that what follows (the new image) is not in this trace; a failed exec
 * says so too, and recording goes on. */
static void rec_note_exec(const char *path, uint32_t stage)
{
	if (!R.active || rec_off() || rec_getpid() != R.pid)
		return;
	if (stage == VT_EXEC_CALLED)
		rec_flush_all_dying();
	vt_exec e = { .stage = stage };
	for (size_t i = 0; path && path[i] && i < sizeof e.path - 1; i++)
		e.path[i] = path[i];
	rec_chunk(VT_EXEC, 0, &e, sizeof e);
}

#define REC_EXEC(call, path) \
	do { \
		int saved; \
		rec_note_exec(path, VT_EXEC_CALLED); \
		int rc = call; \
		saved = errno; \
		rec_note_exec(path, VT_EXEC_FAILED); \
		errno = saved; \
		return rc; \
	} while (0)

REC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_execve()(path, argv, envp), path);
}

REC_EXPORT int execv(const char *path, char *const argv[])
{
	REC_EXEC(rec_real_execv()(path, argv), path);
}

REC_EXPORT int execvp(const char *file, char *const argv[])
{
	REC_EXEC(rec_real_execvp()(file, argv), file);
}

REC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_execvpe()(file, argv, envp), file);
}

REC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	REC_EXEC(rec_real_fexecve()(fd, argv, envp), "(a file descriptor)");
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

/* fork: the child's work is not traced (rec_atfork_child); the parent's
 * stream says where it forked, and the replay says so. */
REC_EXPORT pid_t fork(void)
{
	pid_t pid = rec_real_fork()();
	if (pid > 0) {
		int e = errno;
		vt_fork f = { 0, (uint32_t)pid, 0 };
		rec_event(VT_FORK, &f, sizeof f);
		errno = e;
	}
	return pid;
}

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

__attribute__((destructor)) static void rec_fini(void)
{
	rec_finish(VT_END_EXIT);
}

