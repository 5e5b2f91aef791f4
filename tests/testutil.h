/* Shared helpers for the cmocka tests. */
#ifndef SKEL_TESTUTIL_H
#define SKEL_TESTUTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Path of a built sample, e.g. sample_path("matmul", "O2", "pie", false)
 * -> "build/samples/matmul-O2-pie".  Tests run from the top of the tree. */
static inline const char *sample_path(const char *name, const char *opt,
				      const char *pie, int stripped)
{
	static char buf[8][256];
	static int k;
	char *p = buf[k++ & 7];
	snprintf(p, 256, "build/samples/%s-%s-%s%s", name, opt, pie,
		 stripped ? "-stripped" : "");
	return p;
}

/* Writes `len` bytes to a fresh temporary file; returns its path (static). */
static inline const char *temp_file(const void *data, size_t len)
{
	static char buf[4][64];
	static int k;
	char *p = buf[k++ & 3];
	strcpy(p, "/tmp/skel-test-XXXXXX");
	int fd = mkstemp(p);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "wb");
	if (len)
		fwrite(data, 1, len, f);
	fclose(f);
	return p;
}
#endif
