/* rec_exit.c — a thread's stream runs to its exit system call.
 *
 * The recorder learns that a pthread ends in its key destructor, but
 * libc runs on after it: the program's later key destructors, libc's
 * thread clean-up (tcache, resolver state), the stack's release, then
 * exit(2).  With libc patched, that code records words, and a stream
 * closed in the destructor would lose them (and its accesses; the replay
 * said so).  So the destructor only arms a watch: the thread's
 * clear-child-tid word (the one the kernel zeroes and wakes when the
 * thread is gone; libc's is the thread's tid field, which pthread_join
 * waits on) is moved to the recorder's `dead` word.  The reaper, a raw
 * clone of the recorder's own that runs no libc code, waits for it: then
 * the thread's last words are flushed from the cursor its TLS still
 * holds, its stream ends, and the reaper zeroes libc's word and wakes its
 * joiners, as the kernel would have.  Until then libc does not reuse the
 * thread's stack and TLS (a stack is free when its tid is zero), so the
 * cursor is still there.  The skeleton ends the thread at the same
 * system call (sk_thread_exit).
 *
 * Without PR_GET_TID_ADDRESS (a kernel without CHECKPOINT_RESTORE) or a
 * reaper, the stream ends in the destructor, flagged so that the replay
 * names what is missing. */
#include "replay/rec.h"

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#ifndef PR_GET_TID_ADDRESS
#define PR_GET_TID_ADDRESS 40
#endif
#define REC_ARCH_GET_FS 0x1003

static _Atomic uint32_t rec_exit_seq;	/* bumped when a watch is armed */
static _Atomic int rec_reaper_state;	/* 0 none, 1 starting, 2 running, -1 failed */
static char rec_reaper_stack[32 * 1024] __attribute__((aligned(64)));

/* Every watched thread that has exited gets its stream closed and its
 * joiners woken, once.  Returns one still running its exit path, or NULL. */
static rec_thread *rec_reap_pass(void)
{
	rec_thread *alive = NULL;
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		if (!t || !t->ctid || atomic_load(&t->reaped))
			continue;
		if (atomic_load(&t->dead)) {
			alive = alive ? alive : t;
			continue;
		}
		if (atomic_exchange(&t->reaped, 1))
			continue;
		rec_thread_close_dead(t);
		atomic_store(&t->closed, 1);
		rec_futex(&t->closed, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL);
		/* what the kernel would have done with libc's word */
		__atomic_store_n(t->ctid, 0, __ATOMIC_SEQ_CST);
		rec_futex(t->ctid, FUTEX_WAKE, 0x7fffffff, NULL);
	}
	return alive;
}

static int rec_reaper(void *arg)
{
	(void)arg;
	const struct timespec ms = { 0, 1000000 };
	for (;;) {
		uint32_t seq = atomic_load(&rec_exit_seq);
		rec_thread *t = rec_reap_pass();
		if (t) {
			int v = atomic_load(&t->dead);
			if (v)	/* woken at its exit; the timeout for the others */
				rec_futex(&t->dead, FUTEX_WAIT, v, &ms);
		} else {
			rec_futex(&rec_exit_seq, FUTEX_WAIT, (int)seq, NULL);
		}
	}
	return 0;
}

/* The reaper runs with the main thread's TLS (it touches none, but a
 * dying thread's could be unmapped under it) and every signal blocked. */
static int rec_reaper_running(void)
{
	int z = 0;
	if (atomic_compare_exchange_strong(&rec_reaper_state, &z, 1)) {
		sigset_t old;
		rec_block_all(&old);
		void **top = (void **)(rec_reaper_stack + sizeof rec_reaper_stack) - 2;
		top[0] = (void *)rec_reaper;
		top[1] = NULL;
		unsigned long fs = R.main_fs;
		if (!fs)
			rec_syscall3(SYS_arch_prctl, REC_ARCH_GET_FS, (long)&fs, 0);
		long rc = rec_clone_raw(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
					CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS, top, fs, NULL);
		rec_restore_mask(&old);
		atomic_store(&rec_reaper_state, rc < 0 ? -1 : 2);
	}
	while (atomic_load(&rec_reaper_state) == 1)
		rec_syscall3(SYS_sched_yield, 0, 0, 0);
	return atomic_load(&rec_reaper_state) == 2;
}

int rec_exit_watch(rec_thread *t)
{
	if (!t || t == &R.sink || t->ended || t->ctid || !R.active || rec_off() ||
	    rec_getpid() != R.pid)
		return 0;
	rec_tp_check(t);	/* its close, by the reaper, says so */
	int *ctid = NULL;
	if (rec_syscall6(SYS_prctl, PR_GET_TID_ADDRESS, (long)&ctid, 0, 0, 0, 0) != 0 ||
	    !ctid || !rec_reaper_running())
		return 0;
	atomic_store(&t->dead, (int)rec_syscall3(SYS_gettid, 0, 0, 0));
	t->ctid = ctid;
	rec_syscall3(SYS_set_tid_address, (long)&t->dead, 0, 0);
	atomic_fetch_add(&rec_exit_seq, 1);
	rec_futex(&rec_exit_seq, FUTEX_WAKE, 1, NULL);
	return 1;
}

/* At the process's exit, before END: the threads already gone are
 * closed, and one the reaper has taken but not yet closed is waited for
 * (else END came first, and its THREAD_END was never written: the replay
 * called a thread that had ended still running).  The reaper closes a
 * stream in well under a millisecond; the wait gives up after 2 s (a
 * reaper stopped by a debugger, say), and the replay then says that
 * thread was still running. */
void rec_exit_reap(void)
{
	rec_reap_pass();
	const struct timespec ms10 = { 0, 10000000 };
	uint32_t n = atomic_load(&R.nthreads);
	for (uint32_t i = 0; i < n && i < REC_MAX_THREADS; i++) {
		rec_thread *t = R.threads[i];
		for (unsigned k = 0; t && k < 200 && atomic_load(&t->reaped) &&
				     !atomic_load(&t->closed); k++)
			rec_futex(&t->closed, FUTEX_WAIT_PRIVATE, 0, &ms10);
	}
}

/* fork's child: no reaper there (threads do not survive fork), and the
 * forking thread's TLS is the one that lasts. */
void rec_exit_init(void)
{
	unsigned long fs = 0;
	if (rec_syscall3(SYS_arch_prctl, REC_ARCH_GET_FS, (long)&fs, 0) == 0)
		R.main_fs = fs;
}

void rec_exit_forked(void)
{
	atomic_store(&rec_reaper_state, 0);
	rec_exit_init();
}
