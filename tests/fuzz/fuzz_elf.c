/* fuzz_elf.c — libFuzzer harness: a byte buffer as the APP of `skel gen`.
 *
 * The loader wants a path, so the input goes to a memfd that is opened
 * again through /proc/self/fd; then the whole analysis runs (ELF, CFG,
 * dominators, loops, SSA, IV resolution) and the skeleton and its patch
 * are generated into /dev/null, as driver/run.c cmd_gen does.  The text
 * views (`skel cfg`, `loops`, `summary`) print every input; `skel analyze`,
 * which redoes the IV analysis, one input in four.  A load failure must
 * leave a message; nothing may crash, hang or leak. */
#include "analyzer/analyzer.h"
#include "skelgen/skelgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fd = -1;
static char path[64];
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("skel-fuzz-elf", MFD_CLOEXEC);
	devnull = fopen("/dev/null", "w");
	if (fd < 0 || !devnull) {
		perror("fuzz_elf: set-up");
		exit(1);
	}
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return 0;
}

static void put_input(const uint8_t *data, size_t size)
{
	size_t done = 0;
	if (ftruncate(fd, 0) < 0)
		abort();
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	put_input(data, size);
	program p;
	char err[ERR_LEN] = "";
	if (program_load(&p, path, err) < 0) {
		/* every refusal says why, and libelf's "no error" is no reason */
		if (!err[0] || strstr(err, "no error"))
			abort();
		return 0;
	}
	for (uint32_t i = 0; i < p.nroutines; i++) {
		print_cfg(devnull, &p, &p.routines[i], i == 0);
		print_loops(devnull, &p, &p.routines[i]);
	}
	print_summary(devnull, &p);
	if (data[size / 2] % 4 == 0)
		for (uint32_t i = 0; i < p.nroutines; i++) {
			analysis a;
			iv_analyze(&a, &p, &p.routines[i], 0);
			if (i % 2)
				iv_print(devnull, &a);
			else
				iv_print_json(devnull, &a, i == 0), fputc('}', devnull);
			iv_free(&a);
		}
	skel_opts o = { .app = "fuzz" };
	patch pt;
	skel_stats st;
	if (skel_generate(devnull, &p, &o, &pt, &st, err) < 0 && !err[0])
		abort();
	patch_free(&pt);
	program_free(&p);
	return 0;
}
