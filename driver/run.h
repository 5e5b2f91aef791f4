/* run.h — the driver's run-time commands (gen, record, replay, check, run,
 * trace) and what they share. */
#ifndef SKEL_DRIVER_RUN_H
#define SKEL_DRIVER_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

int cmd_gen(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_report(int argc, char **argv);	/* replay --report */
int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);	/* online.c */
int cmd_trace(int argc, char **argv);	/* online.c */

/* usage texts (help.c): every command's, and one command's with an
 * example (-1 for an unknown name) */
void help_all(FILE *f);
int help_command(const char *cmd);
/* -h or --help among a command's arguments, before any "--" */
bool help_asked(int argc, char **argv);
/* "skel: CMD: unknown option 'OPT'" and where to look; exit status 2 */
int skel_unknown_option(const char *cmd, const char *opt);

/* The scope gen, trace and check take when no option chooses it: the
 * whole process (every shared object of APP's DT_NEEDED closure too),
 * unless SKEL_SCOPE=main.  ARG is one of argv: 1 when it is
 * --whole-process or --main-only, with *whole set as it says (run.c). */
bool skel_scope_default(void);
int skel_scope_arg(const char *arg, bool *whole);

/* helpers shared by the commands (run.c) */
int skel_fail(const char *file, const char *msg);
int skel_usage_error(const char *msg);
const char *skel_home(void);
/* APP as a shell finds it: a name with a '/' as it is, else the first
 * executable regular file of that name in $PATH.  0, or -1 after printing
 * "skel: APP: not found in PATH". */
int skel_find_app(const char *app, char path[PATH_MAX]);
/* -1, after saying why, when app is a static executable (not traceable). */
int skel_refuse_static(const char *app);
char *read_text(const char *path, size_t *len);
int skeleton_binary_id(const char *skel_path, const char *text, char *id, size_t len);
/* Compiles the skeleton (cached by content hash); returns the path of the
 * replayer program (malloc'd) or NULL after printing why. */
char *compile_skeleton(const char *skel_path);
/* A shared object's skeleton, as a module the replayer loads (cached
 * mod-HASH.so); its path (malloc'd) or NULL after printing why. */
char *compile_module(const char *skel_path);
/* $XDG_CACHE_HOME/skel (else ~/.cache/skel), made if missing */
const char *cache_dir(void);

/* Whole-process skeletons (objects.c).  `skel gen --whole-process` ends
 * the executable's skeleton with a SKEL-OBJECTS block naming the shared
 * objects it loads; each has a skeleton of its own in the cache,
 * ID.c, made here when missing or older than skel.  ONLY (NULL-ended,
 * or NULL for all) restricts them to those named (file name, DT_NEEDED
 * name, soname or path). */
int objects_gen(FILE *skel_out, const char *app, char *const *only, char *const *plugins,
		char err[256]);
/* The skeleton of the binary BIN (identity ID_HEX) in the cache, ID.c,
 * generated when missing or older than skel or than its noted targets;
 * its path in PATH.  0, or 1 after saying why (WHY prefixes messages). */
int skeleton_cached(const char *bin, const char *id_hex, const char *why,
		    char *path, size_t n);
/* From now on the cached skeletons are those with every loop and jump
 * replayed (ID-noslice.c: skel gen --no-slice), whose instruction
 * fetches are complete. */
void skeleton_cache_unsliced(bool on);
/* The sections the recorder needs beside the executable's patch: the
 * patches of the modules the skeleton text names, concatenated (malloc'd,
 * "" when it names none), or NULL after printing why. */
char *objects_patches(const char *skel_path, const char *text);
/* Compiles the modules the skeleton names and puts their .so files in
 * SKEL_MODULES for the replayer.  0, or -1 after printing why. */
int objects_compile(const char *skel_path);
/* Runs APP_PATH (found by skel_find_app) under the recorder, with
 * app_argv as its argv (argv[0] as the user typed it); returns the exit
 * status as a shell would report it (128+signal when killed), or -1 when
 * it could not start. */
int record_run(const char *skel_path, const char *values, const char *app_path,
	       char **app_argv, const char *valgrind_log);
int run_wait(char **argv, const char *out_path);
/* The same, the files it writes bounded to max_file bytes (0: not): past
 * it the child dies of SIGXFSZ, status 128 + SIGXFSZ. */
int run_wait_bounded(char **argv, const char *out_path, unsigned long long max_file);
/* record_run without the wait: the program's pid (or -1 after printing
 * why); the caller waits with child_wait and tmp_removes patch_out, the
 * patch file, once it exited. */
pid_t record_start(const char *skel_path, const char *values, const char *app_path,
		   char **app_argv, const char *valgrind_log, char patch_out[PATH_MAX]);
/* Fails (1, after saying why) when B, found as APP, is a shared library:
 * the run-time commands take the program that loads it. */
struct binary;
int skel_refuse_library(const struct binary *b, const char *app);
/* program_load with the indirect-jump targets earlier replays noted for
 * APP's identity (in the cache); says so on stderr, prefixed by `why`. */
struct program;
int load_analyzed(struct program *p, const char *app, const char *why, char err[256]);
/* skel check --accuracy (accuracy.c): the paper's MA and AIA of an
 * approximate trace against the oracle, per block at chunk C.  Feed it
 * the oracle's fetches and data accesses (runtime pcs; bias: the
 * executable's load bias), then the replayed text trace; accuracy_print
 * prints them (per routine too) and returns 1 when the trace is wrong
 * rather than approximate. */
typedef struct accuracy accuracy;
accuracy *accuracy_new(const char *app, uint64_t bias, uint64_t chunk, char err[256]);
void accuracy_fetch(accuracy *x, uint64_t pc);
void accuracy_oracle(accuracy *x, uint64_t pc, uint64_t addr);
int accuracy_replayed(accuracy *x, const char *path);
int accuracy_print(accuracy *x, bool per_routine);
void accuracy_free(accuracy *x);
/* text, bin, lackey, din, csv, count */
bool trace_format_ok(const char *format);

/* Skeletons compiled after this call FETCH() when `on` (instruction
 * fetches, --fetches): a replayer of their own in the cache. */
void compile_set_fetches(bool on);

/* The replayer's simulation and fetch options (simout.c). */
typedef struct sim_opts {
	const char *sim;        /* --sim KIND ("cache"), NULL: none */
	const char *sim_out;    /* --sim-out FILE: cachegrind.out */
	const char *level[3];   /* "--I1=...", "--D1=...", "--LL=..." as given */
	int fetches;            /* --fetches 1, --no-fetches 0, -1 unsaid */
	bool l1_per_thread;     /* --l1-per-thread */
} sim_opts;
#define SIM_OPTS_INIT { NULL, NULL, { NULL, NULL, NULL }, -1, false }
#define SIM_OPTS_MAXARGS 10
/* argv[*i] (and its value): 1 taken, 0 not one of them, -1 wrong (said). */
int sim_opts_arg(int argc, char **argv, int *i, sim_opts *o);
/* -1 (said) when the options do not go together */
int sim_opts_check(const sim_opts *o);
/* Whether the replay has fetches: asked, or by default with --sim and
 * the lackey format. */
bool sim_opts_fetches(const sim_opts *o, const char *format);
/* The replayer's arguments for o (at most SIM_OPTS_MAXARGS into av); the
 * costs per instruction go to raw_out when not NULL.  Returns how many. */
size_t sim_opts_argv(const sim_opts *o, const char *format, const char *raw_out, char **av);
/* A temporary file for the replayer's costs per instruction when o asks
 * for --sim-out ("" otherwise).  0, or 1 after saying why. */
int sim_raw_path(const sim_opts *o, char path[PATH_MAX]);
/* Turns the replayer's costs per instruction (raw) into the cachegrind.out
 * file `out`; cmd (NULL-ended) is the command named in it.  0, or 1 after
 * saying why. */
int sim_out_write(const char *raw, const char *out, char **cmd);

/* What a replay keeps and adds (roiopts.c): --roi FUNC (repeatable),
 * --roi-markers, --symbolize, and for replay --binary APP. */
#define ROI_OPTS_MAX 64
typedef struct roi_opts {
	bool symbolize;
	bool markers;
	const char *roi[ROI_OPTS_MAX];
	int nroi;
	const char *binary;
	bool report;		/* --report: the report instead of a trace */
	const char *csv_dir;	/* --csv DIR */
	const char *plot;	/* --plot FILE.png */
	char heat[PATH_MAX];	/* the heat map's data (report_heat_path) */
} roi_opts;
#define ROI_OPTS_MAXARGS (2 * ROI_OPTS_MAX + 10)
/* argv[*i] (and its value): 1 taken, 0 not one of them, -1 wrong (said).
 * `replay`: --binary is one. */
int roi_opts_arg(int argc, char **argv, int *i, roi_opts *o, bool replay);
/* -1 (said) when the options do not go together */
int roi_opts_check(const roi_opts *o, const char *format, const sim_opts *so);
/* --roi or --roi-markers: the skeleton needs its routine hooks */
bool roi_opts_any(const roi_opts *o);
/* The replayer's arguments (at most ROI_OPTS_MAXARGS into av); the
 * executable's symbols come from exe, else --binary, else the path the
 * skeleton names (kept in exe_buf).  Returns how many. */
size_t roi_opts_argv(const roi_opts *o, const char *skel, const char *exe, char **av,
		     char exe_buf[PATH_MAX]);
/* --plot: a temporary file for the replayer's heat map data, in o->heat.
 * 0, or 1 after saying why. */
int report_heat_path(roi_opts *o);
/* After the replay (status rc): the PNG from the data, which is removed;
 * rc, or 1 when the image could not be made (said). */
int report_plot_finish(roi_opts *o, int rc);
/* plot.c: the heat map data (report.h) as a PNG image, and its size.  0,
 * or -1 with err. */
int plot_heat(const char *data, const char *png, unsigned *width, unsigned *height,
	      char err[256]);

/* Skeletons compiled after this call have their routine hooks (SK_ROI). */
void compile_set_roi(bool on);

/* Children and temporary files (child.c): on SIGINT, SIGTERM or SIGHUP
 * the children's process groups are stopped, the tracked files and
 * directories removed, and skel dies by the signal. */
void child_signals_init(void);
/* fork(); the child leads a process group of its own.  TERMINAL (the
 * program under trace): it gets the terminal while it runs when skel is a
 * foreground job of its own, and stays in skel's group when skel is in the
 * foreground inside another's (child.c). */
pid_t child_fork(bool terminal);
/* The exit status as a shell reports it (128+N when killed by signal N),
 * -1 when PID is no child. */
int child_wait(pid_t pid);
/* child_wait, asking over(arg) ten times a second while pid runs: when
 * it says true, pid (its group) is killed (SIGKILL) and waited for. */
int child_wait_watched(pid_t pid, bool (*over)(void *), void *arg);
/* A child holding the terminal died of SIGINT: the user's ^C. */
bool child_interrupted(void);
/* RC, or, after a child_interrupted, death by SIGINT. */
int child_exit(int rc);
const char *tmp_dir(void);	/* $TMPDIR, else /tmp */
char *tmp_mkdtemp(char *templ);	/* mkdtemp, and tracked */
int tmp_mkstemp(char *templ);	/* mkstemp, and tracked */
void tmp_track(const char *path);
void tmp_untrack(const char *path);
void tmp_remove(const char *path);	/* unlink or rmdir, and untrack */

#endif
