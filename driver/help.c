/* help.c — the usage texts: `skel --help` (every command) and `skel
 * COMMAND --help` (that command's block and an example).  Each command's
 * synopsis and options are written once, here, and serve both. */
#include "driver/run.h"

#include <stdio.h>
#include <string.h>

typedef struct help {
	const char *name;
	const char *text;	/* synopsis, then the options */
	const char *example;
} help;

static const char intro[] =
"skel traces the data addresses an x86-64 program touches, by program\n"
"skeletonization: the binary is analyzed once, most addresses are computed\n"
"by a generated C skeleton, and only the few register values it cannot\n"
"compute are recorded at run time.\n";

/* the replay options run and trace take as well */
#define REPLAY_OPTS_NOTE \
"                                Also, as for replay (skel replay --help): --stats,\n" \
"                                --fetches, --no-fetches, --sim cache|reuse, --sim-out,\n" \
"                                --I1/--D1/--LL=..., --l1-per-thread, --symbolize,\n" \
"                                --roi FUNC, --roi-markers, --report [--csv DIR]\n" \
"                                [--plot FILE.png] (the report of skel report --help\n" \
"                                instead of a trace)\n"

static const help tracing[] = {
{ "gen",
"  skel gen APP [-o SKEL.c] [--patch FILE] [--all-accesses] [--no-slice]\n"
"          [--main-only] [--object LIB]... [--plugin PATH]...\n"
"          [--omega W [--chunk C]]\n"
"                                the C skeleton of APP (stdout by default); it embeds\n"
"                                the patch and APP's identity.  --all-accesses: the\n"
"                                full-tracing baseline (every address recorded).\n"
"                                --no-slice: replay loops without data accesses and\n"
"                                conditional jumps whose ways meet without one too\n"
"                                (else skipped, not recorded: their instruction\n"
"                                fetches are then not in --fetches/--sim traces of\n"
"                                skel run/replay; skel trace makes its skeletons so)\n"
"                                By default the whole process: also the shared\n"
"                                objects APP loads (libc and the loader included),\n"
"                                each a skeleton of its own made once into the cache\n"
"                                (libc: a minute or two the first time); record,\n"
"                                replay, run and check then trace them too.\n"
"                                --main-only: the executable alone (SKEL_SCOPE=main\n"
"                                makes that the default; --whole-process undoes it);\n"
"                                --object LIB: only that object (file name, soname\n"
"                                or path), repeatable.  --plugin PATH: also the\n"
"                                object PATH, which APP loads with dlopen (patched\n"
"                                when it is mapped), repeatable.  A shared library\n"
"                                APP gets its own skeleton only\n"
"                                --omega W (0..1, default 1: exact): approximate\n"
"                                mode (selective BID instrumentation, docs/bid.md):\n"
"                                per block, only ceil(W*m) of the m classes of\n"
"                                accesses whose addresses cost recorded values keep\n"
"                                their probes; the others are traced at a kept\n"
"                                access's address when within --chunk C bytes of it\n"
"                                (C a power of two, default 64), else without an\n"
"                                address, and marked so in the trace\n",
"  skel gen ./app -o app_skel.c\n" },
{ "record",
"  skel record SKEL.c -o VALUES -- APP [ARGS...]\n"
"                                run APP, storing the recorded values in VALUES;\n"
"                                also malloc and its family (interposed: each call's\n"
"                                block, size and caller) and each thread's stack and\n"
"                                TLS block, for --symbolize and report, and the time\n"
"                                of each buffer flush (CLOCK_MONOTONIC).  A process\n"
"                                APP forks (fork, vfork, clone without CLONE_VM)\n"
"                                records into VALUES.PID; an exec of APP itself by any\n"
"                                of them into VALUES.PID.execN (N counts the images);\n"
"                                other programs they exec or spawn are named in the\n"
"                                replay.  Each thread's values are compressed (zstd,\n"
"                                a 128 MiB window), but for buffers the thread had to\n"
"                                wait for (the compressor behind it); in the\n"
"                                environment SKEL_COMPRESS=1: every buffer, =0: none.\n"
"                                When SKEL covers objects besides APP, APP runs with\n"
"                                LD_BIND_NOW=1: the loader binds its PLT slots at\n"
"                                start, and calls through those whose callee has a\n"
"                                skeleton record no control word\n",
"  skel record app_skel.c -o app.vals -- ./app 100\n" },
{ "replay",
"  skel replay SKEL.c VALUES [--pid PID] [-o TRACE] [--format F] [--stats]\n"
"          [--salvage] [--symbolize [--binary APP]] [--roi FUNC]...\n"
"          [--roi-markers]\n"
"                                regenerate the trace (stdout, or TRACE; '-' is\n"
"                                stdout).  F: text (default: 'PC R|W SIZE ADDR' in\n"
"                                hex, one access per line, per thread), bin (32-byte\n"
"                                records), lackey (' L|S|M addr,size'), din (Dinero\n"
"                                IV: '0|1 addr'), csv (thread,pc,kind,size,addr),\n"
"                                count (totals only); docs/formats.md.  --stats:\n"
"                                accesses, bytes, distinct cache lines and pages per\n"
"                                thread, routine and loop, and the values recorded\n"
"                                for them (per routine, loop and object), on stderr;\n"
"                                a shared object's routines and loops say 'in LIB'\n"
"                                --fetches / --no-fetches: instruction fetches too\n"
"                                (I events; default: on with lackey and --sim)\n"
"                                --sim cache: cachegrind's cache model instead of a\n"
"                                trace, its summary to TRACE; --I1=SIZE,ASSOC,LINE,\n"
"                                --D1=..., --LL=... (default: as cachegrind picks);\n"
"                                --sim-out FILE: a cachegrind.out file (cg_annotate).\n"
"                                --l1-per-thread: each thread its own I1 and D1, one\n"
"                                LL for all (default: one cache, as cachegrind)\n"
"                                --sim reuse: reuse distances of the data accesses\n"
"                                (distinct lines between two accesses to a line)\n"
"                                --symbolize (text, csv): each access gets the object\n"
"                                it touches, a last field: SYMBOL+0xOFF (static data,\n"
"                                by the symbol tables; the section when no symbol\n"
"                                covers it; LIB!SYMBOL+0xOFF in a shared object),\n"
"                                heap#N+0xOFF (the N-th allocation of the run: malloc,\n"
"                                calloc, realloc, aligned allocations, anonymous mmap;\n"
"                                realloc, mremap and a reused address make a new N),\n"
"                                stack#T, tls#T (thread\n"
"                                T's stack, its TLS block), ? (none of these).  The\n"
"                                executable's symbols: --binary APP, else the file the\n"
"                                skeleton was made from\n"
"                                --roi FUNC (repeatable): only the accesses made while\n"
"                                FUNC runs (callees included, recursion once; from its\n"
"                                first instruction to its return);  --roi-markers: only\n"
"                                those between the return of skel_roi_begin(name) and\n"
"                                the call of skel_roi_end() (replay/skel_roi.h: weak\n"
"                                no-ops, the program runs the same without skel);\n"
"                                the report names each region by the literal name\n"
"                                passed (\"markers\" when skel gen cannot read it).\n"
"                                Counts, --stats and --sim see the regions only\n"
"                                --report [--csv DIR] [--plot FILE.png]: the report\n"
"                                of skel report instead of a trace\n"
"                                run and trace take these options as well\n"
"                                A damaged VALUES file is refused (status 4, nothing\n"
"                                written); --salvage replays what precedes the damage.\n"
"                                A file cut short is replayed up to the cut, status 4\n"
"                                --pid PID: the process PID forked (VALUES.PID, at any\n"
"                                depth): its trace from the fork on (its state then\n"
"                                is its parent's, replayed without output); without\n"
"                                it, the first process, and the children are named.\n"
"                                An exec'd image's file is replayed as it is\n",
"  skel replay app_skel.c app.vals --format csv --symbolize -o trace.csv\n" },
{ "report",
"  skel report SKEL.c VALUES [-o FILE] [--csv DIR] [--plot FILE.png]\n"
"          [--binary APP] [--roi FUNC]... [--roi-markers]\n"
"                                per region of interest (the whole run without --roi\n"
"                                or --roi-markers) and per object: heap blocks by\n"
"                                allocation site, static data by symbol, each thread's\n"
"                                stack: accesses, bytes read and written, distinct\n"
"                                cache lines (64 B) and pages (4 KiB), first and last\n"
"                                access time; per region its wall time and bandwidth.\n"
"                                Times come from the recorder's flush timestamps,\n"
"                                interpolated by access count in between.  The tables\n"
"                                go to FILE (stdout by default).\n"
"                                --csv DIR: objects.csv, regions.csv and series.csv\n"
"                                (bytes per time interval per object) in DIR\n"
"                                --plot FILE.png: an address-time heat map of the\n"
"                                busiest objects (x: accesses in time order, y: each\n"
"                                object's addresses, colour: accesses) with a legend\n",
"  skel report app_skel.c app.vals --csv report/ --plot app.png\n" },
{ "run",
"  skel run SKEL.c [-o TRACE] [--format F] [--stats] [--keep-values VALUES]\n"
"               -- APP [ARGS...]\n"
"                                online: run APP under the recorder and replay in\n"
"                                parallel (same trace as record + replay); APP's\n"
"                                stdin/stdout/stderr pass through; exits with APP's\n"
"                                status (128+N when killed by signal N).  Traces\n"
"                                APP's first process only: the processes it forks\n"
"                                and the images it execs are named, not traced\n"
"                                (record them with skel record).\n"
"                                --keep-values VALUES: the value stream replayed is\n"
"                                also kept in VALUES (skel replay reads it again)\n"
REPLAY_OPTS_NOTE,
"  skel run app_skel.c --format count -- ./app 100\n" },
{ "trace",
"  skel trace [-o TRACE] [--format F] [--stats] [--main-only]\n"
"             [--keep-values VALUES] -- APP [ARGS...]\n"
"                                gen + run in one step; the skeleton is cached by\n"
"                                APP's identity in $XDG_CACHE_HOME/skel (~/.cache/skel);\n"
"                                the whole process unless --main-only\n"
REPLAY_OPTS_NOTE,
"  skel trace --format csv --symbolize -o trace.csv -- ./app 100\n" },
{ "check",
"  skel check [--main-only | SKEL.c] -- APP [ARGS...]\n"
"                                run APP once under valgrind lackey and the recorder,\n"
"                                replay, and compare access by access (exit 0 only\n"
"                                on a full match).  Without SKEL.c, the skeleton of\n"
"                                the whole process (skel gen APP), or the executable's\n"
"                                with --main-only; with a whole-process skeleton every\n"
"                                covered object is compared (their shares of the\n"
"                                accesses are printed) and the others are named.\n"
"                                Every process APP forks and every image of APP an\n"
"                                exec starts is compared with its own lackey log\n"
"                                (--trace-children=yes); the first that differs is\n"
"                                named by pid\n"
"  skel check --accuracy [--stats] [--omega W] [--chunk C] [SKEL.c] -- APP [ARGS...]\n"
"                                the same run, an approximate skeleton's (SKEL.c, or\n"
"                                made with --omega W --chunk C) accuracy at chunk C:\n"
"                                MA (accesses traced exactly) and AIA (exactly or\n"
"                                at a fulcrum's address), per block against lackey,\n"
"                                blocks weighted by executions (docs/bid.md);\n"
"                                --stats: per routine too.  The executable's skeleton\n"
"                                unless --whole-process.  Exit 0 unless an access\n"
"                                marked exact is wrong or the replay failed.  The\n"
"                                program's first process only\n",
"  skel check app_skel.c -- ./app 100\n" },
};

static const help inside[] = {
{ "cfg",
"  skel cfg APP [FUNC] [--dot]   routines, blocks, instructions and their memory\n"
"                                accesses, edges; Graphviz with --dot (needs FUNC)\n",
"  skel cfg ./app main --dot | dot -Tpng -o main.png\n" },
{ "loops",
"  skel loops APP [FUNC]         the loop nesting forest, indented\n",
"  skel loops ./app\n" },
{ "analyze",
"  skel analyze APP [FUNC] [--json]\n"
"                                per loop its counter and IVs, per access its\n"
"                                address in counters and leaves (or direct), per\n"
"                                branch computed or recorded, the probes, totals;\n"
"                                and the probes skel gen's patch keeps of them\n"
"                                (after slicing, loop exits, merges), per routine\n"
"                                and in all: what skel gen reports\n",
"  skel analyze ./app matmul\n" },
{ "summary",
"  skel summary APP              one line: routines, blocks, instructions,\n"
"                                memory instructions, loops, irreducible loops,\n"
"                                unresolved indirect jumps, partial routines\n",
"  skel summary /usr/bin/ls\n" },
{ "deps",
"  skel deps APP                 the objects the dynamic loader maps for APP, in\n"
"                                load order, one per line: soname ('-' if none),\n"
"                                path and identity (build-id:HEX or hash:HEX),\n"
"                                tab-separated.  Found as ld.so finds them, without\n"
"                                running anything: DT_RPATH, LD_LIBRARY_PATH,\n"
"                                DT_RUNPATH, /etc/ld.so.cache, the default\n"
"                                directories, $ORIGIN, PT_INTERP; a library not\n"
"                                found is an error naming the object that needs it\n",
"  skel deps /usr/bin/ls\n" },
};

static const char tail[] =
"\n"
"Options:\n"
"  -h, --help                    this text; skel COMMAND --help: that command's\n"
"  --version                     the version\n"
"\n"
"APP is found as a shell finds it: a name without '/' in $PATH (so `skel trace\n"
"-- ls` works), a name with '/' as it is.  Temporary files go to $TMPDIR (/tmp\n"
"by default); on SIGINT, SIGTERM or SIGHUP skel stops what it started, removes\n"
"them and dies by that signal.\n"
"\n"
"Scope: the whole process by default: the executable and the shared objects\n"
"of its DT_NEEDED closure (libc, libm, ...), from the moment the recorder is\n"
"in place (after the loader and the constructors of libraries initialized\n"
"before it) to its end at exit; the loader itself (lazy binding) from the\n"
"program's start (__libc_start_main) on; outside stay objects loaded by\n"
"dlopen (but --plugin), the recorder's own libZydis, and the kernel's\n"
"writes during system calls (lackey does not show those either); replay and\n"
"check name every object not covered.  --main-only (gen, trace, check), or\n"
"SKEL_SCOPE=main in the environment, traces the executable's code alone.\n"
"APP must be an x86-64 ELF executable (PIE or not, stripped or not);\n"
"gen, cfg, loops, analyze, summary and deps also take a shared library.\n";

#define NHELP(a) (sizeof (a) / sizeof *(a))

void help_all(FILE *f)
{
	fprintf(f, "usage: skel COMMAND [ARGS]\n\n%s\nTracing:\n", intro);
	for (size_t i = 0; i < NHELP(tracing); i++)
		fputs(tracing[i].text, f);
	fputs("\nLooking inside the analysis:\n", f);
	for (size_t i = 0; i < NHELP(inside); i++)
		fputs(inside[i].text, f);
	fputs(tail, f);
}

static const help *help_find(const char *cmd)
{
	for (size_t i = 0; i < NHELP(tracing); i++)
		if (!strcmp(tracing[i].name, cmd))
			return &tracing[i];
	for (size_t i = 0; i < NHELP(inside); i++)
		if (!strcmp(inside[i].name, cmd))
			return &inside[i];
	return NULL;
}

/* argv[1..] of a command asks for its help: -h or --help before any
 * "--" (what follows "--" is the program's). */
bool help_asked(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

int help_command(const char *cmd)
{
	const help *h = help_find(cmd);
	if (!h)
		return -1;
	printf("usage:\n%s\nExample:\n%s", h->text, h->example);
	return 0;
}

int skel_unknown_option(const char *cmd, const char *opt)
{
	fprintf(stderr, "skel: %s: unknown option '%s'\nTry 'skel %s --help'.\n", cmd, opt, cmd);
	return 2;
}
