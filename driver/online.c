/* online.c — skel run and skel trace: the program and its skeleton in
 * parallel.
 *
 * The recorder writes its value trace into a FIFO (private directory in
 * $TMPDIR, /tmp by default) instead of a file; the replayer
 * (replay/replayer.c --fd) reads the chunks as they come and runs each
 * thread's skeleton on them.  skel run opens both ends of the FIFO itself
 * before starting anything: the read end goes to the replayer, so the
 * recorder's open never blocks; the write end stays here until the program
 * is gone, so the replayer never sees an end of file before the program
 * started, and does see one when it ended (even if it never opened the
 * FIFO).  Back-pressure is the pipe's: a recorder that gets ahead blocks
 * in write.  The replayer always reads to the end, so the program never
 * dies of SIGPIPE because of the replay. */
#include "driver/run.h"
#include "analyzer/analyzer.h"
#include "analyzer/util.h"
#include "skelgen/skelgen.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs APP under the recorder with SKEL's replayer reading along.  Returns
 * the exit status for skel: the program's; if the program exited 0 but the
 * replay failed, the replayer's. */
/* --sim, --fetches... of skel run and skel trace */
static sim_opts simo = SIM_OPTS_INIT;
/* --roi, --symbolize of skel run and skel trace */
static roi_opts roio;

/* --keep-values FILE: the stream the replayer read, kept (replayer --tee) */
static const char *keep_values;

static int online_run(const char *skel, const char *out, const char *format, bool stats,
		      const char *app_path, char **app)
{
	compile_set_fetches(sim_opts_fetches(&simo, format));
	compile_set_roi(roi_opts_any(&roio));
	char *bin = compile_skeleton(skel);
	char raw[PATH_MAX];
	if (!bin || sim_raw_path(&simo, raw) || report_heat_path(&roio)) {
		free(bin);
		return 1;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/skel-run-XXXXXX", tmp_dir());
	if (!tmp_mkdtemp(dir)) {
		skel_fail(dir, strerror(errno));
		free(bin);
		return 1;
	}
	char fifo[PATH_MAX + 16];
	snprintf(fifo, sizeof fifo, "%s/values", dir);
	tmp_track(fifo);
	int rfd = -1, wfd = -1;
	if (mkfifo(fifo, 0600) < 0 ||
	    (rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0 ||
	    (wfd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		skel_fail(fifo, strerror(errno));
		if (rfd >= 0)
			close(rfd);
		tmp_remove(fifo);
		tmp_remove(dir);
		free(bin);
		return 1;
	}
	fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) & ~O_NONBLOCK);
	fcntl(wfd, F_SETFL, fcntl(wfd, F_GETFL) & ~O_NONBLOCK);
#ifdef F_SETPIPE_SZ
	fcntl(rfd, F_SETPIPE_SZ, 1 << 20);	/* fewer switches; fails harmlessly */
#endif
	pid_t rpid = child_fork(false);
	if (rpid == 0) {
		if (rfd == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(rfd, 3) < 0)
			_exit(2);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		char *av[12 + SIM_OPTS_MAXARGS + ROI_OPTS_MAXARGS] = { bin, "--fd", "3", "-o",
			(char *)out, "--format", (char *)format, "--quiet" };
		size_t n = 8;
		char exe[PATH_MAX];
		if (stats)
			av[n++] = "--stats";
		if (keep_values) {
			av[n++] = "--tee";
			av[n++] = (char *)keep_values;
		}
		n += sim_opts_argv(&simo, format, raw[0] ? raw : NULL, av + n);
		n += roi_opts_argv(&roio, skel, app_path, av + n, exe);
		av[n] = NULL;
		execv(bin, av);
		fprintf(stderr, "skel: %s: %s\n", bin, strerror(errno));
		_exit(2);
	}
	close(rfd);
	if (rpid < 0) {
		close(wfd);
		tmp_remove(fifo);
		tmp_remove(dir);
		free(bin);
		return skel_fail("fork", strerror(errno));
	}
	char patch_path[PATH_MAX];
	/* the program's stdin, stdout and stderr are ours, and so is the
	 * terminal while it runs: a ^C there is the program's, the replayer
	 * (a group of its own) goes on to show what it did */
	pid_t pid = record_start(skel, fifo, app_path, app, NULL, patch_path);
	if (pid < 0)	/* nothing will come: the replayer need not say so */
		kill(rpid, SIGTERM);
	int prc = pid < 0 ? -1 : child_wait(pid);
	if (pid >= 0)
		tmp_remove(patch_path);
	close(wfd);
	tmp_remove(fifo);
	tmp_remove(dir);
	if (prc >= 128)
		fprintf(stderr, "skel: %s: killed by signal %d; the trace of what it did follows "
			"(replay draining)\n", app[0], prc - 128);
	int rrc = child_wait(rpid);
	free(bin);
	if (raw[0]) {
		if (rrc == 0 || rrc == 3 || rrc == 4)
			rrc = sim_out_write(raw, simo.sim_out, app) ? 1 : rrc;
		tmp_remove(raw);
	}
	rrc = report_plot_finish(&roio, rrc);
	if (prc < 0)
		return 1;
	/* the stream has no end: expected of a killed program, else the
	 * program left by a way the recorder did not see (a raw exit system
	 * call), and the words it recorded last are lost */
	if (rrc == 5 && prc >= 128)
		rrc = 0;
	else if (rrc == 5)
		fprintf(stderr, "skel: run: %s exited (status %d) without the recorder's exit "
			"path (an exit system call of its own?): the values it recorded last "
			"are lost, the trace is cut short\n", app[0], prc);
	else if (rrc != 0 && prc >= 0)
		fprintf(stderr, "skel: run: the replay failed (status %d)\n", rrc);
	return prc == 0 && rrc != 0 ? rrc : prc;
}

/* "SKEL [-o TRACE] [--format F] [--stats] -- APP ARGS": the options before
 * "--"; *skel stays NULL when none is given (skel trace). */
static int parse(int argc, char **argv, bool want_skel, const char **skel, const char **out,
		 const char **format, bool *stats, bool *whole, char ***app)
{
	int i, r;
	*app = NULL;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (i + 1 < argc)
				*app = argv + i + 1;
			break;
		}
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			*out = argv[++i];
		else if (!strcmp(argv[i], "--format") && i + 1 < argc)
			*format = argv[++i];
		else if (!strcmp(argv[i], "--stats"))
			*stats = true;
		else if (!strcmp(argv[i], "--keep-values") && i + 1 < argc)
			keep_values = argv[++i];
		else if (whole && skel_scope_arg(argv[i], whole))
			;
		else if ((r = sim_opts_arg(argc, argv, &i, &simo)) != 0 ||
			 (r = roi_opts_arg(argc, argv, &i, &roio, false)) != 0) {
			if (r < 0)
				return -1;
		} else if (argv[i][0] == '-' && argv[i][1])
			return skel_unknown_option(argv[0], argv[i]), -1;
		else if (want_skel && !*skel)
			*skel = argv[i];
		else
			return skel_usage_error("too many arguments before --"), -1;
	}
	if (!trace_format_ok(*format))
		return skel_usage_error("--format must be text, bin, lackey, din, csv or count"), -1;
	if (roi_opts_check(&roio, *format, &simo) < 0)
		return -1;
	return sim_opts_check(&simo);
}

int cmd_run(int argc, char **argv)
{
	const char *skel = NULL, *out = "-", *format = "text";
	bool stats = false;
	char **app;
	if (parse(argc, argv, true, &skel, &out, &format, &stats, NULL, &app) < 0)
		return 2;
	if (!skel || !app)
		return skel_usage_error("run: usage: skel run SKEL.c [-o TRACE] [--format F] [--stats] "
				   "[--keep-values VALUES] "
				   "-- APP [ARGS...]");
	char app_path[PATH_MAX];
	if (skel_find_app(app[0], app_path) < 0)
		return 1;
	return online_run(skel, out, format, stats, app_path, app);
}

/* The skeleton of APP, from the cache or generated into it (<id>.c, see
 * skeleton_cached); with WHOLE, <id>-whole.c: the same followed by the
 * SKEL-OBJECTS block, made again when older than <id>.c. */
static int cached_skeleton(const char *app, bool whole, char *path, size_t n)
{
	binary b;
	char err[ERR_LEN];
	if (elf_open(&b, app, err) < 0)
		return skel_fail(app, err);
	if (skel_refuse_library(&b, app)) {
		elf_close(&b);
		return 1;
	}
	char id[160];
	snprintf(id, sizeof id, "%s", b.id_hex);
	elf_close(&b);
	if (skeleton_cached(app, id, "trace", path, n))
		return 1;
	if (!whole)
		return 0;
	char wpath[PATH_MAX];
	size_t pl = strlen(path);
	/* <id>-whole.c, or <id>-noslice-whole.c */
	snprintf(wpath, sizeof wpath, "%.*s-whole.c", (int)(pl > 2 ? pl - 2 : 0), path);
	struct stat ms, ws;
	if (stat(wpath, &ws) == 0 && stat(path, &ms) == 0 && ms.st_mtime <= ws.st_mtime) {
		snprintf(path, n, "%s", wpath);
		return 0;
	}
	size_t len;
	char *text = read_text(path, &len);
	if (!text)
		return skel_fail(path, strerror(errno));
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.%d", wpath, (int)getpid());
	tmp_track(tmp);
	FILE *f = fopen(tmp, "w");
	int rc = f ? 0 : -1;
	if (f) {
		fwrite(text, 1, len, f);
		rc = objects_gen(f, app, NULL, NULL, err);
		if (fclose(f) != 0 && rc == 0) {
			rc = -1;
			snprintf(err, sizeof err, "%s: write error", tmp);
		}
	} else {
		snprintf(err, sizeof err, "%s: %s", tmp, strerror(errno));
	}
	free(text);
	if (rc < 0 || rename(tmp, wpath) != 0) {
		tmp_remove(tmp);
		return skel_fail(app, rc < 0 ? err : strerror(errno));
	}
	tmp_untrack(tmp);
	snprintf(path, n, "%s", wpath);
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	const char *skel = NULL, *out = "-", *format = "text";
	bool stats = false, whole = skel_scope_default();
	char **app;
	if (parse(argc, argv, false, &skel, &out, &format, &stats, &whole, &app) < 0)
		return 2;
	if (!app)
		return skel_usage_error("trace: usage: skel trace [-o TRACE] [--format F] [--stats] "
				   "[--keep-values VALUES] "
				   "[--main-only|--whole-process] -- APP [ARGS...]");
	char app_path[PATH_MAX], path[PATH_MAX];
	/* fetches (--fetches, --sim cache, lackey) need every jump replayed */
	skeleton_cache_unsliced(sim_opts_fetches(&simo, format));
	if (skel_find_app(app[0], app_path) < 0 || skel_refuse_static(app_path) ||
	    cached_skeleton(app_path, whole, path, sizeof path))
		return 1;
	return online_run(path, out, format, stats, app_path, app);
}
