/* rec_sig.c — signals: the guard-page SIGSEGV handler (buffer full), the
 * SIGTRAP handler (int3 sites), the flush handler of fatal signals, and
 * the program's view of its own dispositions and masks (sigaction, signal,
 * sigprocmask, pthread_sigmask interposed), chained to from ours. */
#include "replay/rec.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*rec_sigmask_fn)(int, const sigset_t *, sigset_t *);
REC_REAL(sigprocmask, rec_sigmask_fn)
REC_REAL(pthread_sigmask, rec_sigmask_fn)

/* The kernel's struct sigaction (x86-64), and the return from a handler
 * as glibc's __restore_rt has it, byte for byte: the unwinder (libgcc)
 * knows a signal frame by these bytes at the return address, and
 * pthread_cancel unwinds through one. */
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif
struct rec_ksigaction {
	void *handler;
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};
void rec_restore_rt(void);
__asm__(".text\n"
	".type rec_restore_rt, @function\n"
	"rec_restore_rt:\n"
	"\tmov $15, %rax\n"
	"\tsyscall\n"
	".size rec_restore_rt, . - rec_restore_rt\n");

/* The system call itself: libc's sigaction goes through
 * __libc_sigaction, which the recorder replaces (rec_sig_hook_write). */
int rec_sys_sigaction(int sig, const struct sigaction *a, struct sigaction *o)
{
	struct rec_ksigaction k, ko;
	if (a) {
		k.handler = (void *)a->sa_sigaction;
		k.flags = (unsigned long)a->sa_flags | SA_RESTORER;
		k.restorer = rec_restore_rt;
		memcpy(&k.mask, &a->sa_mask, sizeof k.mask);
	}
	long r = rec_syscall6(SYS_rt_sigaction, sig, a ? (long)&k : 0, o ? (long)&ko : 0,
			      sizeof k.mask, 0, 0);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (o) {
		memset(o, 0, sizeof *o);
		o->sa_sigaction = (void (*)(int, siginfo_t *, void *))ko.handler;
		o->sa_flags = (int)ko.flags;
		o->sa_restorer = ko.restorer;
		memcpy(&o->sa_mask, &ko.mask, sizeof ko.mask);
	}
	return 0;
}

/* Signal sets as the kernel reads them (the first 64 bits), without
 * libc: on the paths a signal takes, a call into a covered libc would
 * store words in the middle of the interrupted code's. */
static int rec_sigin(const sigset_t *s, int sig)
{
	return sig > 0 && sig <= 64 && (s->__val[0] >> (sig - 1) & 1);
}

static void rec_sigput(sigset_t *s, int sig, int on)
{
	if (sig <= 0 || sig > 64)
		return;
	if (on)
		s->__val[0] |= 1ul << (sig - 1);
	else
		s->__val[0] &= ~(1ul << (sig - 1));
}

static struct sigaction rec_prog_act[NSIG];	/* the program's: owned and
						   wrapped signals */
static volatile sig_atomic_t rec_fatal_ours[NSIG];
static volatile sig_atomic_t rec_wrapped[NSIG];	/* rec_on_program runs first */
static const int rec_fatal_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGUSR1,
	SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS,
	SIGVTALRM, SIGPROF,
};

/* the signals an instruction raises (a fault, int3, a single step) */
static const int rec_sync_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP };

/* SIGURG: the recorder's request that a thread stop for the exit
 * (rec_park_ask); its default is to be ignored */
static int rec_owned(int sig)
{
	return sig == SIGSEGV || sig == SIGTRAP || sig == SIGURG;
}

static int rec_is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof rec_fatal_sigs / sizeof *rec_fatal_sigs;
	     i++)
		if (rec_fatal_sigs[i] == sig)
			return 1;
	return 0;
}

/* Dies of `sig` the way the program would have: default action, raised
 * again (delivered on return from the handler, or at once with
 * SA_NODEFER). */
static void rec_die_by(int sig)
{
	/* the kernel's struct sigaction: handler, flags, restorer, mask */
	struct { void *h; unsigned long flags; void *restorer; uint64_t mask; }
		dfl = { SIG_DFL, 0, 0, 0 };
	rec_flush_all_dying();
	rec_syscall6(SYS_rt_sigaction, sig, (long)&dfl, 0, 8, 0, 0);
	rec_syscall3(SYS_tgkill, rec_getpid(), rec_syscall3(SYS_gettid, 0, 0, 0),
		     sig);
}

/* The link-time pc and object of a runtime pc in a covered object, else
 * 0 and 0. */
static uint64_t rec_link_pc(uint64_t rip, uint32_t *object)
{
	const rec_object *o = rec_object_at(rip);
	*object = o ? o->index : 0;
	return o ? rip - o->img.bias : 0;
}

/* Where a fault was: the instruction at rip, which may be one the
 * recorder displaced into a trampoline (a probe's, or its neighbour),
 * faulting there as it would have in place. */
static int rec_fault(int sig, const siginfo_t *si)
{
	return si && si->si_code > 0 &&
	       (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

static uint64_t rec_fault_pc(int sig, const siginfo_t *si, uint64_t rip, uint32_t *object)
{
	uint64_t pc = rec_link_pc(rip, object);
	return pc || !rec_fault(sig, si) ? pc : rec_displaced_pc(rip, object);
}

/* A fatal signal in this thread: flush its words and say where it died,
 * so that a replay stops at the faulting instruction. */
static void rec_note_crash(int sig, const siginfo_t *si, void *ucv)
{
	rec_thread *t = rec_self;
	if (!R.active || !t || rec_off() || rec_getpid() != R.pid || !ucv)
		return;
	ucontext_t *uc = ucv;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	vt_crash c = { .signal = (uint32_t)sig };
	c.pc = rec_fault_pc(sig, si, rip, &c.object);
	if (si && (sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0) {
		c.addr = (uint64_t)si->si_addr;	/* a fault, not a kill() */
		c.has_addr = 1;
	}
	rec_flush_upto(t, *(uint64_t *volatile *)t->cursor, 1);
	rec_chunk(VT_CRASH, t->index, &c, sizeof c);
	rec_stats("crash");
}

static void rec_handler_now(const struct sigaction *a, int sig, siginfo_t *si,
			    void *uc);

static void rec_handler_mask(const sigset_t *base, const struct sigaction *a,
			     int sig, sigset_t *old);

/* A SIGSEGV/SIGTRAP that is not the recorder's: what the program asked
 * for, with the mask the kernel would have given it (the recorder's
 * handler runs with the others blocked). */
static void rec_chain(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct sigaction *a = &rec_prog_act[sig];
	if (!(a->sa_flags & SA_SIGINFO)) {
		void (*h)(int) = a->sa_handler;
		if (h == SIG_IGN && si->si_code <= 0)
			return;	/* sent by kill(): ignored; a fault is fatal */
		if (h == SIG_DFL || h == SIG_IGN) {
			rec_note_crash(sig, si, uc);
			rec_die_by(sig);
			return;
		}
	}
	struct sigaction run = *a;
	if (a->sa_flags & SA_RESETHAND)
		a->sa_handler = SIG_DFL, a->sa_flags = 0;
	sigset_t old;
	rec_handler_mask(&uc->uc_sigmask, &run, sig, &old);
	rec_handler_now(&run, sig, si, uc);
	rec_restore_mask(&old);
}

static int rec_held_fault(rec_thread *t, ucontext_t *uc);
static int rec_park_asked(const siginfo_t *si, ucontext_t *uc);

/* At the store of a probe: its cursor is in rdx. */
static int rec_at_store(uint64_t rip)
{
	const uint8_t *at = (const uint8_t *)rip;
	return rec_in_code(rip) && at[0] == rec_store_insn[0] &&
	       (at[1] == rec_store_insn[1] || at[1] == rec_store_imm_insn[1]) &&
	       at[2] == rec_store_insn[2];
}

static void rec_on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	if (R.active && rec_at_store((uint64_t)g[REG_RIP])) {
		uint64_t *at = (uint64_t *)g[REG_RDX];
		rec_thread *t = rec_self;
		if (t && rec_held_fault(t, uc))
			return;
		if (!t) {	/* a thread we did not see start */
			if (at == REC_PRESTART_GUARD || at == rec_pre_guard ||
			    at == rec_own_guard)
				rec_stray_seen();	/* its words so far are lost */
			t = rec_thread_open(0, VT_NO_PARENT, VT_START_UNKNOWN, 0);
		}
		if (at == t->guard || at == NULL || at == REC_PRESTART_GUARD ||
		    at == rec_pre_guard || at == rec_own_guard) {
			if (at == t->guard)
				rec_flush_full(t);
			rec_cursor = t->base;
			rec_sig_undefer(&uc->uc_sigmask);	/* a stream now */
			g[REG_RDX] = (greg_t)rec_cursor;
			return;
		}
	}
	rec_chain(sig, si, ucv);
}

static rec_int3 *rec_int3_find(uint64_t pc)
{
	rec_int3_table *tb = atomic_load_explicit(&R.int3,
							 memory_order_acquire);
	if (!tb)
		return NULL;
	size_t lo = 0, hi = tb->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tb->v[mid].pc == pc)
			return &tb->v[mid];
		if (tb->v[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* int3 sites: the kernel stops after the int3; continue in the
 * trampoline, which ends with a jmp behind the original instruction. */
static int rec_stepped(greg_t *g);
static int rec_watched(const siginfo_t *si, ucontext_t *uc);

static void rec_on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	if (si->si_code == TRAP_TRACE && rec_stepped(g))
		return;
	if (rec_watched(si, uc))
		return;
	rec_int3 *s = R.active ? rec_int3_find((uint64_t)g[REG_RIP] - 1) : NULL;
	if (s) {
		g[REG_RIP] = (greg_t)s->tramp;
		atomic_fetch_add_explicit(&R.int3_hits, 1, memory_order_relaxed);
		if (R.verbose)
			__atomic_fetch_add(&s->hits, 1, __ATOMIC_RELAXED);
		return;
	}
	rec_chain(sig, si, ucv);
}


/* ---------------------------------------------- the program's handlers
 *
 * A handler's words go into the interrupted thread's stream between two
 * HANDLER events (format.h), and the replay runs the handler's skeleton
 * there.  Where exactly: a signal the thread brings on itself (a fault,
 * raise) runs its handler at once, at a pc the replay finds again (the
 * faulting access; or the external call it came in).  An asynchronous
 * one (a timer, another process) that comes in analyzed code could be at
 * any of the executions of its pc since the last word, which the replay
 * cannot tell apart; it is held until the thread's next probe, and runs
 * right before that probe's word, where the replay reads it: the program
 * sees a signal delivered a little later, which the kernel may do too.
 * The next probe is made to fault: the thread's buffer is written out,
 * its cursor back at the buffer's first page, which is made inaccessible
 * until then. */
#define REC_HELD_MAX 8
typedef struct rec_held {
	int sig;
	siginfo_t si;
	struct sigaction act;	/* the disposition when it came */
} rec_held;
typedef struct rec_sigq {
	int armed;		/* the buffer's first page is PROT_NONE */
	int stepping;		/* held in the trampolines: single steps
				   (TF) until the thread is out of them;
				   2: or at a probe's store (the watchdog
				   came first) */
	int n;
	rec_held v[REC_HELD_MAX];
	int timer;		/* the watchdog (rec_watch), +1; 0: none yet */
	int timer_sig;		/* the signal it sends */
	int stuck;		/* a handler ran STUCK: the replay of the
				   thread ends there, later signals are not
				   held (each would wait for the watchdog) */
	int park;		/* the process exits: stop at the next probe
				   (rec_park_asked) */
} rec_sigq;

/* A held signal whose probe does not come in this long runs where the
 * thread is (VT_HANDLER_STUCK): a loop that records nothing until the
 * handler has run (`while (!flag) ;`) would wait for it for ever.  Long
 * enough for a loop that ends by itself (a scan whose trip count is
 * recorded at its exit) to reach its probe; under valgrind, which runs
 * the program some 50 times slower, 50 times as long. */
#define REC_HELD_WAIT_MS 200
#define REC_HELD_WAIT_MS_VALGRIND 10000
/* The watchdog's signal carries this value (SI_TIMER): the recorder's
 * handlers know it from the program's signals, int3's and single steps.
 * Natively the signal is SIGTRAP, which the program cannot block.  Under
 * valgrind a SIGTRAP that is not a trap "has lost its siginfo" and
 * valgrind kills the program; there the watchdog sends the held signal
 * itself, whose handler is the recorder's (rec_on_program) while it is
 * the program's: SIGTRAP still where the program's handler was reset
 * (SA_RESETHAND) or is gone. */
#define REC_WATCH_COOKIE ((void *)0x736b656c77617463ull)

/* The thread's watchdog timer set to fire in ms (0: disarmed). */
static void rec_watch_set(const rec_sigq *q, long ms)
{
	struct itimerspec in;
	rec_fill_bytes(&in, 0, sizeof in);
	in.it_value.tv_sec = ms / 1000;
	in.it_value.tv_nsec = ms % 1000 * 1000000L;
	if (q->timer)
		rec_syscall6(SYS_timer_settime, q->timer - 1, 0, (long)&in, 0, 0, 0);
}

static int rec_watch_signal(const rec_sigq *q)
{
	int sig = q->n ? q->v[0].sig : 0;
	if (!R.valgrind || !sig || !rec_wrapped[sig] ||
	    rec_prog_act[sig].sa_flags & SA_RESETHAND)
		return SIGTRAP;
	return sig;
}

/* A one-shot timer of the thread's, REC_HELD_WAIT_MS from now, that
 * sends it the watchdog's signal (raw system calls: libc may be patched,
 * and its timer_create is interposed).  Nothing if the kernel refuses. */
static void rec_watch(rec_sigq *q)
{
	int sig = rec_watch_signal(q);
	if (q->timer && q->timer_sig != sig) {
		rec_syscall3(SYS_timer_delete, q->timer - 1, 0, 0);
		q->timer = 0;
	}
	if (!q->timer) {
		struct sigevent se;
		rec_fill_bytes(&se, 0, sizeof se);
		se.sigev_value.sival_ptr = REC_WATCH_COOKIE;
		se.sigev_signo = sig;
		se.sigev_notify = SIGEV_THREAD_ID;
		se._sigev_un._tid = (int)rec_syscall3(SYS_gettid, 0, 0, 0);
		int id = -1;
		if (rec_syscall3(SYS_timer_create, CLOCK_MONOTONIC, (long)&se, (long)&id) || id < 0)
			return;
		q->timer = id + 1;
		q->timer_sig = sig;
	}
	rec_watch_set(q, R.valgrind ? REC_HELD_WAIT_MS_VALGRIND : REC_HELD_WAIT_MS);
}

/* The held signals ran: the watchdog stops (its SIGTRAP would end a
 * sigsuspend or a poll of the program's with EINTR). */
static void rec_unwatch(rec_sigq *q)
{
	rec_watch_set(q, 0);
}

static void rec_keep_deliverable(sigset_t *s);

static void rec_call(const struct sigaction *a, int sig, siginfo_t *si, void *uc)
{
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, si, uc);
	else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN)
		a->sa_handler(sig);
}

/* The handler between its two events.  Its delta state (PATCH_DSP,
 * PATCH_DREG) starts at 0 and the interrupted code's comes back after
 * it: a held signal runs in the middle of a probe that may have moved
 * its slot already, which the replay moves after the handler.  A handler
 * that does not return (longjmp) keeps its state, as the replay does. */
static void rec_run_handler(const struct sigaction *a, int sig, siginfo_t *si,
			    void *uc, vt_handler *e)
{
	e->signal = (uint32_t)sig;
	e->handler = a->sa_flags & SA_SIGINFO ? (uint64_t)a->sa_sigaction
					       : (uint64_t)a->sa_handler;
	rec_event(VT_HANDLER, e, sizeof *e);
	/* by words: a handler under skel check's valgrind pays for each
	 * instruction, and a timer that comes faster starves the program */
	uint64_t lastsp = rec_t.lastsp, dslot[PATCH_DSLOTS];
	for (int i = 0; i < PATCH_DSLOTS; i++) {
		dslot[i] = rec_t.dslot[i];
		rec_t.dslot[i] = 0;
	}
	rec_t.lastsp = 0;
	rec_call(a, sig, si, uc);
	rec_t.lastsp = lastsp;
	for (int i = 0; i < PATCH_DSLOTS; i++)
		rec_t.dslot[i] = dslot[i];
	vt_handler r = { .flags = VT_HANDLER_RETURN };
	rec_event(VT_HANDLER, &r, sizeof r);
}

/* Whether the thread was in a system call: rip follows a `syscall`
 * instruction (where the kernel delivers a signal the thread sent itself,
 * with kill, tgkill or sigqueue, or unblocked with sigprocmask, or one
 * that ended a blocking call), or is at one (a call the kernel restarts
 * after the handler, SA_RESTART). */
static int rec_in_syscall(uint64_t rip)
{
	const uint8_t *p = (const uint8_t *)rip;
	if (p[0] == 0x0f && p[1] == 0x05)
		return 1;
	if ((rip & 0xfff) < 2)	/* the page before may not be mapped */
		return 0;
	return p[-2] == 0x0f && p[-1] == 0x05;
}

/* A signal the thread brought on itself: it must run now (raise returns
 * after the handler; a faulting access would fault again).  One of the
 * process's own pid that comes anywhere but in a system call was sent by
 * another of its threads (pthread_kill, pthread_cancel) while this one
 * ran: asynchronous, held as a timer's is (its pc alone would not tell
 * the replay which execution of it the thread was at).  In a system call
 * it runs now, placed at the call, as before. */
static int rec_sync(int sig, const siginfo_t *si, uint64_t rip)
{
	if (si->si_code > 0) {
		for (size_t i = 0; i < sizeof rec_sync_sigs / sizeof *rec_sync_sigs; i++)
			if (sig == rec_sync_sigs[i])
				return 1;
		return 0;
	}
	return (si->si_code == SI_USER || si->si_code == SI_TKILL ||
		si->si_code == SI_QUEUE) && si->si_pid == rec_getpid() && rec_in_syscall(rip);
}

static void rec_on_segv(int sig, siginfo_t *si, void *ucv);
static void rec_on_trap(int sig, siginfo_t *si, void *ucv);
static void rec_on_program(int sig, siginfo_t *si, void *uc);
static void rec_on_urg(int sig, siginfo_t *si, void *uc);
static void rec_on_fatal(int sig, siginfo_t *si, void *uc);

/* Where the thread was when the signal came.  The kernel delivers every
 * pending signal before it returns to user mode, each frame on top of
 * the last: a signal that came so interrupted another's delivery at the
 * first instruction of the recorder's handler for it, which ran nothing
 * yet (three queued while blocked, unblocked by sigprocmask: one placed
 * at the system call, the next in the recorder's code, at the next word
 * -- after the call the replay had passed).  The other's context, the
 * third argument of that handler (all are SA_SIGINFO), is on the stack
 * just above: where the thread really was. */
static ucontext_t *rec_outer_uc(ucontext_t *uc)
{
	for (int depth = 0; uc && depth < 16; depth++) {
		const greg_t *g = uc->uc_mcontext.gregs;
		uint64_t rip = (uint64_t)g[REG_RIP], outer = (uint64_t)g[REG_RDX];
		if (rip != (uint64_t)rec_on_program && rip != (uint64_t)rec_on_urg &&
		    rip != (uint64_t)rec_on_segv && rip != (uint64_t)rec_on_trap &&
		    rip != (uint64_t)rec_on_fatal)
			break;
		if (outer < (uint64_t)g[REG_RSP] || outer - (uint64_t)g[REG_RSP] > 4096)
			break;	/* not a frame the kernel made */
		uc = (ucontext_t *)outer;
	}
	return uc;
}

/* Where a handler that runs now runs, for the replay. */
static void rec_place(vt_handler *e, int sig, const siginfo_t *si, uint64_t rip)
{
	e->pc = rec_fault_pc(sig, si, rip, &e->object);
	if (!e->pc) {
		if (rec_in_code(rip))
			e->flags = VT_HANDLER_UNPLACED;
		return;
	}
	e->flags = VT_HANDLER_AT_PC;
	if ((sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0) {
		e->flags |= VT_HANDLER_ADDR;
		e->addr = (uint64_t)si->si_addr;
	}
}

static void rec_handler_now(const struct sigaction *a, int sig, siginfo_t *si,
			    void *ucv)
{
	ucontext_t *uc = ucv, *at = rec_outer_uc(uc);
	vt_handler e = { 0 };
	rec_place(&e, sig, si, at ? (uint64_t)at->uc_mcontext.gregs[REG_RIP] : 0);
	rec_run_handler(a, sig, si, uc, &e);
}

static int rec_recording(const rec_thread *t)
{
	return R.active && t && t != &R.sink && !t->ended && !rec_off() &&
	       rec_getpid() == R.pid;
}

static void rec_protect_first(rec_thread *t, int prot)
{
	rec_syscall3(SYS_mprotect, (long)t->base, REC_PAGE, prot);
}

/* Holds the signal for the thread's next probe; 0 if it cannot be held
 * (then it runs now).  In the trampolines the cursor may be half way
 * through a store: nothing is moved there unless a held signal already
 * made the next store fault.  A standard signal held already is merged,
 * as the kernel merges a pending one. */
static void rec_arm(rec_thread *t)
{
	rec_flush_upto(t, rec_cursor, 1);	/* cursor at base */
	rec_protect_first(t, PROT_NONE);
	t->sigq->armed = 1;
}

/* valgrind (R.valgrind) does not single-step (TF): a held signal would
 * wait for its probe forever.  It delivers signals between its blocks,
 * which begin in the trampolines seldom but at the store a fault returns
 * to (the held signals' or the guard's): that one is held. */

/* Under valgrind, a signal in the trampolines is held as one in analyzed
 * code: the buffer armed, the next probe's store faults and runs it (it
 * ran at once before, UNPLACED: the replay stopped, e.g. at a shell's
 * SIGCHLD after a wait4 the recorder had displaced).  Where rip is half
 * way through a probe's store (rec_emit.c, rec_store: its word stored,
 * the cursor not moved yet: at `lea rdx, [rdx+8]` or `mov fs:[cursor],
 * rdx`), the rest of the store is done here first; the cursor's store,
 * with the recorder's TLS offset, is never the program's. */
static void rec_store_finish(greg_t *g)
{
	static const uint8_t lea[4] = { 0x48, 0x8d, 0x52, 0x08 };
	static const uint8_t put[5] = { 0x64, 0x48, 0x89, 0x14, 0x25 };
	const uint8_t *p = (const uint8_t *)g[REG_RIP];
	size_t step = 0, i;
	for (i = 0; i < sizeof lea && p[i] == lea[i]; i++)
		;
	if (i == sizeof lea)
		step = sizeof lea;
	for (i = 0; i < sizeof put && p[step + i] == put[i]; i++)
		;
	if (i != sizeof put)
		return;
	int32_t off = 0;
	for (size_t k = 0; k < 4; k++)
		off |= (int32_t)((uint32_t)p[step + sizeof put + k] << 8 * k);
	if (off != (int32_t)R.cursor_off)
		return;
	if (step)
		g[REG_RDX] += 8;
	rec_cursor = (uint64_t *)g[REG_RDX];
	g[REG_RIP] = (greg_t)(p + step + sizeof put + 4);
}

/* Makes the thread's next probe fault (rec_held_fault), from where it is:
 * analyzed code (the buffer armed), or the trampolines (stepped out of
 * them first; under valgrind, which does not single-step, its store
 * finished first). */
static void rec_to_probe(rec_thread *t, greg_t *g, int tramp)
{
	if (tramp && R.valgrind) {
		rec_store_finish(g);
		rec_arm(t);
	} else if (tramp) {
		t->sigq->stepping = 1;
		g[REG_EFL] |= 0x100;	/* TF */
	} else {
		rec_arm(t);
	}
}

/* rec_hold with all signals blocked: a nested one would find the queue
 * half changed. */
static int rec_hold_blocked(rec_thread *t, int sig, siginfo_t *si,
			    const struct sigaction *a, greg_t *g)
{
	uint64_t rip = (uint64_t)g[REG_RIP];
	if (!t->sigq && !(t->sigq = rec_mmap_raw(sizeof *t->sigq)))
		return 0;
	rec_sigq *q = t->sigq;
	int waiting = q->armed || q->stepping;
	/* Only analyzed code is ambiguous: outside the covered objects
	 * (libc, a system call, the vdso) the replay places the handler at
	 * the next word, and it runs now, as the kernel runs it (a blocking
	 * read restarted by SA_RESTART would wait for a handler held until
	 * it returns).  The recorder's own code (an interposer, the loop of
	 * the held handlers) may hold the cursor, or a flush's end, in a
	 * register: nothing is moved there either. */
	int at_store = rec_at_store(rip) && (uint64_t *)g[REG_RDX] == rec_cursor;
	int tramp = rec_in_code(rip);
	uint32_t obj;
	if (!waiting && !tramp && !rec_link_pc(rip, &obj))
		return 0;
	/* under valgrind, at a store whose cursor moved since its load (a
	 * handler in between), or at a system call the kernel restarts after
	 * the handler (held, it would wait for the call, which may wait for
	 * it): run now, unplaced, as before */
	if (!waiting && tramp && R.valgrind && !at_store &&
	    (rec_at_store(rip) || (((const uint8_t *)rip)[0] == 0x0f &&
				   ((const uint8_t *)rip)[1] == 0x05)))
		return 0;
	int merged = 0;
	for (int i = 0; i < q->n && sig < 32; i++)	/* not real-time: merged */
		merged |= q->v[i].sig == sig;
	if (!merged && q->n == REC_HELD_MAX)
		return 0;
	if (!merged)
		q->v[q->n++] = (rec_held){ sig, *si, *a };
	if (waiting)
		return 1;
	if (at_store) {		/* the store goes to the new cursor */
		rec_arm(t);
		g[REG_RDX] = (greg_t)t->base;
	} else {
		rec_to_probe(t, g, tramp);
	}
	rec_watch(q);
	return 1;
}

/* A signal that came at another's delivery (rec_outer_uc) is held or run
 * as it would have been where the thread was: the other's context, not
 * yet looked at by its handler, is the one a hold changes. */
static int rec_hold(int sig, siginfo_t *si, const struct sigaction *a, void *ucv)
{
	rec_thread *t = rec_self;
	ucontext_t *at = rec_outer_uc(ucv);
	if (!rec_recording(t) || (t->sigq && t->sigq->stuck) ||
	    rec_sync(sig, si, (uint64_t)at->uc_mcontext.gregs[REG_RIP]))
		return 0;
	sigset_t old;
	rec_block_all(&old);
	int held = rec_hold_blocked(t, sig, si, a, at->uc_mcontext.gregs);
	rec_restore_mask(&old);
	return held;
}

/* The mask a handler of the program runs with, as the kernel sets it:
 * the interrupted code's, the handler's sa_mask and (without
 * SA_NODEFER) its signal; never SIGTRAP or SIGSEGV. */
static void rec_handler_mask(const sigset_t *base, const struct sigaction *a,
			     int sig, sigset_t *old)
{
	sigset_t m = *base;
	m.__val[0] |= a->sa_mask.__val[0];
	if (!(a->sa_flags & SA_NODEFER))
		rec_sigput(&m, sig, 1);
	rec_keep_deliverable(&m);
	rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&m, (long)old, 8, 0, 0);
}

/* The held signals' handlers, in the order they came, each with its
 * mask as the kernel would have set it over `base`, the mask of the code
 * they interrupt.  A signal that comes in one of them is held again
 * (armed): the buffer's first page is opened for each. */
/* The first of the n held signals in v, taken off and its handler run
 * with the mask made from base. */
static void rec_run_first(rec_held *v, int *n, const sigset_t *base, const vt_handler *place)
{
	rec_held h = v[0];
	--*n;
	for (int i = 0; i < *n; i++)
		v[i] = v[i + 1];
	sigset_t old;
	rec_handler_mask(base, &h.act, h.sig, &old);
	vt_handler e = *place;
	rec_run_handler(&h.act, h.sig, &h.si, NULL, &e);
	rec_restore_mask(&old);
}

static void rec_run_held(rec_thread *t, const sigset_t *base, const vt_handler *place)
{
	rec_sigq *q = t->sigq;
	while (q->n) {
		if (q->armed)
			rec_protect_first(t, PROT_READ | PROT_WRITE);
		q->armed = 0;
		rec_run_first(q->v, &q->n, base, place);
	}
	if (q->armed)
		rec_protect_first(t, PROT_READ | PROT_WRITE);
	q->armed = 0;
	rec_unwatch(q);
}

/* ------------------------------------------- stopping for the exit
 *
 * At the process's exit (rec_buf.c, rec_park_others) every other thread
 * still running is sent SIGURG with REC_PARK_COOKIE (SI_QUEUE; SIGTRAP
 * "loses its siginfo" under valgrind, and a SIGSEGV that came to a thread
 * waiting in a system call stopped valgrind on an assertion).  It stops
 * where the replay can end its stream exactly and waits there, every signal blocked, for the
 * kernel to kill it with the process: right before a probe's word (held
 * as a signal is, to its next probe), or in the system call it waits in
 * (a CRASH of signal 0 at that call's pc).  Its words up to there are
 * flushed by the exiting thread. */
#define REC_PARK_COOKIE ((void *)0x736b656c7061726bull)

int rec_park_ask(rec_thread *t)
{
	siginfo_t si;
	rec_fill_bytes(&si, 0, sizeof si);
	si.si_signo = SIGURG;
	si.si_code = SI_QUEUE;
	si.si_pid = rec_getpid();
	si.si_uid = (uid_t)rec_syscall3(SYS_getuid, 0, 0, 0);
	si.si_value.sival_ptr = REC_PARK_COOKIE;
	return rec_syscall6(SYS_rt_tgsigqueueinfo, rec_getpid(), t->tid, SIGURG, (long)&si, 0,
			    0) == 0;
}

/* Set when the recording has ended (rec_park_release). */
static _Atomic int rec_parks_go;

/* Stops the thread for the exit.  In a system call (how 2, 3) it waits for
 * the kill (a call it returned from would be the program's: a sleep cut
 * short, a read ended by EINTR).  At a probe (how 1) it may hold a lock
 * of the program's that the rest of the exit takes: once the recording
 * has ended it goes on, unrecorded, as it would have without skel until
 * the kernel kills it. */
static void rec_park_here(rec_thread *t, int how)
{
	sigset_t all, old;
	rec_fill_bytes(&all, 0xff, sizeof all);
	rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
	atomic_store(&t->parked, how);
	rec_futex(&t->parked, FUTEX_WAKE_PRIVATE, 1, NULL);
	if (how != 1)
		for (;;)
			rec_syscall3(SYS_pause, 0, 0, 0);
	while (!atomic_load(&rec_parks_go))
		rec_futex(&rec_parks_go, FUTEX_WAIT_PRIVATE, 0, NULL);
	rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
}

void rec_park_release(void)
{
	atomic_store(&rec_parks_go, 1);
	rec_futex(&rec_parks_go, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL);
}

static int rec_park_asked(const siginfo_t *si, ucontext_t *uc)
{
	if (!si || si->si_code != SI_QUEUE || si->si_value.sival_ptr != REC_PARK_COOKIE)
		return 0;
	rec_thread *t = rec_self;
	if (!t || t == &R.sink)
		return 1;	/* nothing to end: it runs on until the kill */
	if (!rec_recording(t)) {
		atomic_store(&t->parked, 4);	/* nor here: not waited for */
		return 1;
	}
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rip = (uint64_t)g[REG_RIP];
	int tramp = rec_in_code(rip);
	if (rec_at_store(rip) && (uint64_t *)g[REG_RDX] == rec_cursor) {
		rec_park_here(t, 1);	/* before this probe's word */
		return 1;
	}
	if (rec_in_syscall(rip)) {
		vt_crash c = { .signal = 0, .flags = VT_CRASH_EXIT_SYSCALL };
		c.pc = rec_link_pc(rip, &c.object);
		if (!c.pc && tramp)
			c.pc = rec_displaced_pc(rip, &c.object);
		if (c.pc) {
			rec_flush_upto(t, *(uint64_t *volatile *)t->cursor, 1);
			rec_chunk(VT_CRASH, t->index, &c, sizeof c);
			rec_park_here(t, 2);
		}
		/* in code no skeleton covers (libc, executable only): the
		 * call into it ends with a RETURNED word, which now never
		 * comes: the stream ends as at a probe */
		if (!tramp)
			rec_park_here(t, 3);	/* does not return */
	}
	if (!t->sigq && !(t->sigq = rec_mmap_raw(sizeof *t->sigq)))
		return 1;
	rec_sigq *q = t->sigq;
	q->park = 1;
	if (!q->armed && !q->stepping)	/* else its next probe stops it */
		rec_to_probe(t, g, tramp);
	return 1;
}

/* The store of the probe a held signal waits for: its handlers run, then
 * the store goes on at the cursor they leave.  1 if it was that. */
static int rec_held_fault(rec_thread *t, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	if (!t->sigq || !t->sigq->armed || (uint64_t *)g[REG_RDX] != t->base)
		return 0;
	if (t->sigq->park) {	/* the store goes on once the recording ended */
		rec_park_here(t, 1);
		t->sigq->park = 0;
		rec_protect_first(t, PROT_READ | PROT_WRITE);
		t->sigq->armed = 0;
		g[REG_RDX] = (greg_t)rec_cursor;
		return 1;
	}
	rec_run_held(t, &uc->uc_sigmask, &(vt_handler){ .flags = VT_HANDLER_DEFERRED });
	g[REG_RDX] = (greg_t)rec_cursor;
	return 1;
}

/* The watchdog (rec_watch): held signals whose probe has not come run
 * now, where the thread is, unless it is in the recorder's code (the
 * trampolines, being stepped out of: soon at a probe), where the
 * watchdog waits again.  In a system call (the thread blocked in pause
 * or read before its probe came), or outside the covered objects, they
 * are placed as a signal that comes there is (at the call; at the next
 * word): exact.  Elsewhere in analyzed code the replay cannot tell which
 * execution of the pc the thread was at: STUCK, the replay stops there.
 * 1 if the signal was the watchdog's. */
static int rec_watched(const siginfo_t *si, ucontext_t *uc)
{
	if (!si || !uc || si->si_code != SI_TIMER || si->si_value.sival_ptr != REC_WATCH_COOKIE)
		return 0;
	rec_thread *t = rec_self;
	if (!t || t == &R.sink || !t->sigq || !t->sigq->n || !rec_recording(t))
		return 1;	/* ran at their probe meanwhile */
	if (t->sigq->stepping || rec_in_code((uint64_t)uc->uc_mcontext.gregs[REG_RIP])) {
		if (t->sigq->stepping)	/* the next probe's store will do */
			t->sigq->stepping = 2;
		rec_watch(t->sigq);
		return 1;
	}
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	uint32_t obj;
	vt_handler place = { .flags = VT_HANDLER_STUCK };
	uint64_t link = rec_link_pc(rip, &obj);
	if (link) {		/* named in the replay's message */
		place.pc = link;
		place.object = obj;
	}
	if (rec_in_syscall(rip) || !link) {
		rec_held *h = &t->sigq->v[0];
		place = (vt_handler){ 0 };
		rec_place(&place, h->sig, &h->si, rip);
	}
	if (place.flags == VT_HANDLER_STUCK)
		t->sigq->stuck = 1;
	rec_run_held(t, &uc->uc_sigmask, &place);
	return 1;
}

/* A single step of a thread whose held signal came in the trampolines:
 * out of them, the next probe is made to fault (valgrind does not step:
 * there the signal waits for another one, or the thread's end). */
static int rec_stepped(greg_t *g)
{
	rec_thread *t = rec_self;
	if (!t || t == &R.sink || !t->sigq || !t->sigq->stepping)
		return 0;
	/* stepped for longer than the watchdog waits (rec_watched): at a
	 * probe's store in the trampolines, the held signals run there (a
	 * loop whose code is all in the trampolines, a span, never leaves
	 * them: `while (!flag) n++` was stepped for ever) */
	int at_store = t->sigq->stepping == 2 && rec_at_store((uint64_t)g[REG_RIP]) &&
		       (uint64_t *)g[REG_RDX] == rec_cursor;
	if (rec_in_code((uint64_t)g[REG_RIP]) && !at_store)
		return 1;
	g[REG_EFL] &= ~(greg_t)0x100;
	t->sigq->stepping = 0;
	if ((t->sigq->n || t->sigq->park) && !t->sigq->armed) {
		rec_arm(t);
		if (at_store)	/* the store goes to the new cursor */
			g[REG_RDX] = (greg_t)t->base;
	}
	return 1;
}

/* fork, in the child (its memory a copy): the watchdog timer is the
 * parent's, and so are the signals held for the forking thread's next
 * probe -- the kernel delivered them to the parent, whose handlers run
 * them there; the child starts as if they had come during the fork call
 * (a SIGCHLD held in fork() ran in both, and the child's replay read the
 * parent's handler where the child had none).  Its buffer's first page,
 * made to fault for them, is the child's own again. */
void rec_sig_forked(rec_thread *t)
{
	if (!t || t == &R.sink || !t->sigq)
		return;
	rec_sigq *q = t->sigq;
	q->timer = 0;
	q->n = 0;
	q->park = 0;
	if (q->armed) {
		rec_protect_first(t, PROT_READ | PROT_WRITE);
		q->armed = 0;
	}
}

void rec_block_async(sigset_t *old)
{
	uint64_t async = ~0ull;
	for (size_t i = 0; i < sizeof rec_sync_sigs / sizeof *rec_sync_sigs; i++)
		async &= ~(1ull << (rec_sync_sigs[i] - 1));
	rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&async, (long)old, 8, 0, 0);
}

void rec_sig_run_held(void)
{
	rec_thread *t = rec_self;
	if (t && t != &R.sink && t->sigq && t->sigq->n && rec_recording(t)) {
		sigset_t now;
		rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, 0, (long)&now, 8, 0, 0);
		rec_run_held(t, &now, &(vt_handler){ .flags = VT_HANDLER_DEFERRED });
	}
}

/* A signal for a thread that has no stream yet (between its clone and
 * rec_thread_begin, in libc's start-up code, its cursor in the claim's
 * slot): its handler's run could not be marked in any stream, and its
 * words would join the start-up's unmarked (the replay desynchronised:
 * a signal sent right after pthread_create).  It is kept here and its
 * handler runs when the stream opens (rec_sig_undefer), marked, with the
 * mask it would have had.  Not the kernel's queue and the interrupted
 * context's mask: valgrind does not take a handler's change of
 * uc_sigmask, and the signal came back at once, for ever.  Not a fault
 * (it would fault again), not with SA_RESETHAND (the kernel reset the
 * action already). */
#define REC_PRE_HELD 8
static __thread struct {
	int n;
	rec_held v[REC_PRE_HELD];
} rec_pre_held __attribute__((tls_model("initial-exec")));

static int rec_defer(int sig, siginfo_t *si, ucontext_t *uc, const struct sigaction *a)
{
	if (!R.active || rec_self || rec_off() || !uc || !si || rec_fault(sig, si) ||
	    a->sa_flags & SA_RESETHAND || !rec_prestart_mine() || rec_getpid() != R.pid)
		return 0;
	for (int i = 0; i < rec_pre_held.n && sig < 32; i++)
		if (rec_pre_held.v[i].sig == sig)	/* merged, as the kernel does */
			return 1;
	if (rec_pre_held.n == REC_PRE_HELD)
		return 0;
	rec_pre_held.v[rec_pre_held.n++] = (rec_held){ sig, *si, *a };
	return 1;
}

void rec_sig_undefer(const sigset_t *base)
{
	sigset_t now;
	if (!rec_pre_held.n)
		return;
	if (!base) {
		rec_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, 0, (long)&now, 8, 0, 0);
		base = &now;
	}
	while (rec_pre_held.n)
		rec_run_first(rec_pre_held.v, &rec_pre_held.n, base,
			      &(vt_handler){ .flags = VT_HANDLER_DEFERRED });
}

/* errno needs no saving here: the recorder's part makes raw system calls
 * only (and __errno_location, in a patched libc, would record a word). */
static void rec_on_program(int sig, siginfo_t *si, void *uc)
{
	if (rec_watched(si, uc))	/* the watchdog, under valgrind */
		return;
	struct sigaction a = rec_prog_act[sig];
	rec_vm_parent_resume();	/* a handler before the clone's mark */
	if (rec_defer(sig, si, uc, &a))
		return;
	if (a.sa_flags & SA_RESETHAND) {	/* the kernel reset it already */
		rec_wrapped[sig] = 0;
		rec_fill_bytes(&rec_prog_act[sig], 0, sizeof rec_prog_act[sig]);
	}
	if (!uc || !rec_hold(sig, si, &a, uc))
		rec_handler_now(&a, sig, si, uc);
}

static void rec_on_urg(int sig, siginfo_t *si, void *uc)
{
	if (rec_park_asked(si, uc))
		return;
	const struct sigaction *a = &rec_prog_act[sig];
	if (a->sa_flags & SA_SIGINFO || (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN))
		rec_on_program(sig, si, uc);	/* the program's: held as any */
}

static void rec_on_fatal(int sig, siginfo_t *si, void *uc)
{
	rec_fatal_ours[sig] = 0;
	rec_note_crash(sig, si, uc);
	rec_die_by(sig);
}

void rec_signals_install(void)
{
	/* the recorder's handlers hold the cursor or a flush's end: a
	 * handler of the program in the middle (which stores words, or moves
	 * the buffer for a held signal) waits for them to return.  The
	 * program's handlers they call get their own mask (rec_chain,
	 * rec_run_held), with SIGSEGV and SIGTRAP open.  No SA_NODEFER:
	 * valgrind then ignores sa_mask. */
	struct sigaction a = { .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART };
	sigfillset(&a.sa_mask);
	for (size_t i = 0; i < sizeof rec_sync_sigs / sizeof *rec_sync_sigs; i++)
		sigdelset(&a.sa_mask, rec_sync_sigs[i]);
	a.sa_sigaction = rec_on_segv;
	if (rec_sys_sigaction(SIGSEGV, &a, &rec_prog_act[SIGSEGV]))
		rec_die("cannot install the SIGSEGV handler");
	a.sa_sigaction = rec_on_trap;
	if (rec_sys_sigaction(SIGTRAP, &a, &rec_prog_act[SIGTRAP]))
		rec_die("cannot install the SIGTRAP handler");
	a.sa_sigaction = rec_on_urg;	/* without it, no thread stops for the exit */
	if (rec_sys_sigaction(SIGURG, &a, &rec_prog_act[SIGURG]))
		rec_fill_bytes(&rec_prog_act[SIGURG], 0, sizeof rec_prog_act[SIGURG]);
	struct sigaction f = { .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART };
	sigemptyset(&f.sa_mask);
	f.sa_sigaction = rec_on_fatal;
	for (size_t i = 0; i < sizeof rec_fatal_sigs / sizeof *rec_fatal_sigs;
	     i++) {
		int sig = rec_fatal_sigs[i];
		struct sigaction cur;
		if (rec_sys_sigaction(sig, NULL, &cur) == 0 &&
		    !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL &&
		    rec_sys_sigaction(sig, &f, NULL) == 0)
			rec_fatal_ours[sig] = 1;
	}
}

/* SIGTRAP (int3 sites) and SIGSEGV (buffer guard) out of a mask the
 * program asks for: blocked, a synchronous trap kills the process. */
static void rec_keep_deliverable(sigset_t *s)
{
	rec_sigput(s, SIGTRAP, 0);
	rec_sigput(s, SIGSEGV, 0);
}

/* The program keeps its view of its own dispositions: for SIGSEGV and
 * SIGTRAP the recorder's handler stays and chains to the program's; for
 * the fatal signals the recorder's flush handler stands for SIG_DFL and
 * yields to any handler the program installs. */
static int rec_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* glibc keeps its two internal signals (SIGCANCEL, SIGSETXID: 32 and
 * 33, below SIGRTMIN) from the program */
REC_EXPORT int sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	if (sig <= 0 || sig >= NSIG || sig == 32 || sig == 33) {
		errno = EINVAL;
		return -1;
	}
	return rec_sigaction(sig, act, old);
}

/* --------------------------------------------- the replaced routine */

static uint64_t rec_hook_at;

void rec_sig_hook_find(void)
{
	rec_hook_at = (uint64_t)dlsym(RTLD_DEFAULT, SKEL_REPLACED_ROUTINE);
}

/* glibc's own installs (pthread_cancel's SIGCANCEL handler, setxid's)
 * come here, wrapped as the program's are */
static int rec_libc_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return rec_sigaction(sig, act, old);
}

void rec_sig_hook_plan(const rec_object *o, rec_pending *pd)
{
	pd->hook_at = pd->hook_stub = 0;
	if (!rec_hook_at || rec_hook_at < o->img.lo || rec_hook_at >= o->img.hi)
		return;
	uint8_t *stub = rec_code_map(REC_PAGE);
	if (!stub)
		rec_die("no room for a jump within 2 GiB of %s", o->img.path);
	uint64_t to = (uint64_t)rec_libc_sigaction;
	static const uint8_t jmp_abs[6] = { 0xff, 0x25, 0, 0, 0, 0 };	/* jmp *0(%rip) */
	memcpy(stub, jmp_abs, sizeof jmp_abs);
	memcpy(stub + sizeof jmp_abs, &to, 8);
	if (mprotect(stub, REC_PAGE, PROT_READ | PROT_EXEC))
		rec_die("cannot protect the trampolines: %s", strerror(errno));
	pd->hook_at = rec_hook_at;
	pd->hook_stub = (uint64_t)stub;
}

void rec_sig_hook_write(rec_pending *pd)
{
	rec_sites_index(pd);
	if (!pd->hook_stub)
		return;
	if (rec_sites_overlap(pd, pd->hook_at, pd->hook_at + 5))
		return;
	uint8_t *p = (uint8_t *)pd->hook_at;
	uint32_t d = (uint32_t)(pd->hook_stub - (pd->hook_at + 5));
	p[0] = 0xe9;
	for (int b = 0; b < 4; b++)
		p[1 + b] = (uint8_t)(d >> 8 * b);
}

static int rec_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!R.active || sig <= 0 || sig >= NSIG)
		return rec_sys_sigaction(sig, act, old);
	if (rec_owned(sig)) {
		struct sigaction prev = rec_prog_act[sig];
		if (act)
			rec_prog_act[sig] = *act;
		if (old)
			*old = prev;
		return 0;
	}
	/* a handler that runs with SIGTRAP or SIGSEGV blocked would turn an
	 * int3 site or a buffer guard hit into a kill */
	struct sigaction mine, prev;
	int wrapped = rec_wrapped[sig];
	if (wrapped)
		prev = rec_prog_act[sig];
	if (act) {
		mine = *act;
		rec_keep_deliverable(&mine.sa_mask);
		act = &mine;
	}
	/* the program's handlers run behind rec_on_program, with the
	 * program's flags and mask; it reads back what it set */
	if (act && ((act->sa_flags & SA_SIGINFO) ||
		    (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN))) {
		struct sigaction w = mine, cur;
		w.sa_flags |= SA_SIGINFO;
		w.sa_sigaction = rec_on_program;
		rec_prog_act[sig] = *act;
		if (rec_sys_sigaction(sig, &w, &cur))
			return -1;
		if (old)
			*old = wrapped ? prev : rec_fatal_ours[sig] ?
				(struct sigaction){ .sa_handler = SIG_DFL } : cur;
		rec_wrapped[sig] = 1;
		rec_fatal_ours[sig] = 0;
		return 0;
	}
	if (act)
		rec_wrapped[sig] = 0;
	if (!rec_is_fatal(sig)) {
		if (rec_sys_sigaction(sig, act, old))
			return -1;
		if (old && wrapped)
			*old = prev;
		return 0;
	}
	struct sigaction dfl = { .sa_handler = SIG_DFL }, cur;
	int ours = rec_fatal_ours[sig];
	if (wrapped)
		dfl = prev, ours = 1;
	if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		struct sigaction f = { .sa_flags = SA_SIGINFO | SA_ONSTACK |
						   SA_RESTART };
		sigemptyset(&f.sa_mask);
		f.sa_sigaction = rec_on_fatal;
		if (rec_sys_sigaction(sig, &f, &cur))
			return -1;
		if (old)
			*old = ours ? dfl : cur;
		rec_fatal_ours[sig] = 1;
		return 0;
	}
	if (rec_sys_sigaction(sig, act, &cur))
		return -1;
	if (old)
		*old = ours ? dfl : cur;
	if (act)
		rec_fatal_ours[sig] = 0;
	return 0;
}

/* For a thread libc started with every signal blocked (a SIGEV_THREAD
 * notification's): SIGTRAP and SIGSEGV opened, as rec_mask keeps them. */
void rec_open_traps(void)
{
	sigset_t s;
	sigemptyset(&s);
	rec_sigput(&s, SIGTRAP, 1);
	rec_sigput(&s, SIGSEGV, 1);
	rec_syscall6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&s, 0, 8, 0, 0);
}

/* The program may block every signal (sigfillset): SIGTRAP and SIGSEGV
 * stay deliverable, since a synchronous trap that is blocked kills the
 * process.  The old mask the program reads back is the kernel's. */
static int rec_mask(rec_sigmask_fn fn, int how, const sigset_t *set, sigset_t *old)
{
	if (!R.active || !set || how == SIG_UNBLOCK)
		return fn(how, set, old);
	sigset_t mine = *set;
	rec_keep_deliverable(&mine);
	return fn(how, &mine, old);
}

REC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return rec_mask(rec_real_sigprocmask(), how, set, old);
}

REC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return rec_mask(rec_real_pthread_sigmask(), how, set, old);
}

/* glibc's signal() has BSD semantics and calls sigaction internally,
 * where the interposition above does not see it; so do bsd_signal() and
 * the System V one, which is what `signal` means in a program compiled
 * for strict ISO C (-std=c99: the header renames it __sysv_signal; zstd
 * installs its SIGSEGV handler so, and the first full buffer killed it). */
static __sighandler_t rec_signal(int sig, __sighandler_t h, int flags, int self)
{
	struct sigaction a = { .sa_handler = h, .sa_flags = flags }, o;
	sigemptyset(&a.sa_mask);
	if (self && sig > 0 && sig < NSIG)
		sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &o))
		return SIG_ERR;
	return o.sa_handler;
}

REC_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
	return rec_signal(sig, h, SA_RESTART, 1);
}

REC_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t h)
{
	return rec_signal(sig, h, SA_RESTART, 1);
}

/* glibc: one-shot, not masked while it runs, system calls interrupted */
REC_EXPORT __sighandler_t __sysv_signal(int sig, __sighandler_t h)
{
	return rec_signal(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}

REC_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t h)
{
	return rec_signal(sig, h, SA_RESETHAND | SA_NODEFER, 0);
}


/* The System V calls: glibc's own sigaction and sigprocmask inside them
 * are out of the recorder's sight, so that sigset(SIGSEGV, h) took the
 * buffer's guard fault from the recorder and sighold(SIGSEGV) made it a
 * kill.  Here they go through the interposed ones. */
static int rec_sig_one(int how, int sig, sigset_t *was)
{
	sigset_t s;
	sigemptyset(&s);
	if (sigaddset(&s, sig))
		return -1;
	return sigprocmask(how, &s, was);
}

REC_EXPORT __sighandler_t sigset(int sig, __sighandler_t h)
{
	if (sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	int hold = h == SIG_HOLD;
	struct sigaction a = { .sa_handler = h }, o;
	sigemptyset(&a.sa_mask);
	sigset_t was;
	if (sigaction(sig, hold ? NULL : &a, &o) ||
	    rec_sig_one(hold ? SIG_BLOCK : SIG_UNBLOCK, sig, &was))
		return SIG_ERR;
	return rec_sigin(&was, sig) ? SIG_HOLD : o.sa_handler;
}

REC_EXPORT int sigignore(int sig)
{
	struct sigaction a = { .sa_handler = SIG_IGN };
	sigemptyset(&a.sa_mask);
	return sigaction(sig, &a, NULL);
}

REC_EXPORT int sighold(int sig)
{
	return rec_sig_one(SIG_BLOCK, sig, NULL);
}

REC_EXPORT int sigrelse(int sig)
{
	return rec_sig_one(SIG_UNBLOCK, sig, NULL);
}
