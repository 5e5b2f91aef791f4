/* plugin.c — a plugin for tests/whole.sh, built as a shared object and
 * loaded by tests/plugin_main.c with dlopen: a loop over an array, a call
 * back into the program, libc from the plugin (malloc, strlen, free). */
#include <stdlib.h>
#include <string.h>

long plugin_run(long n, long (*cb)(long))
{
	long *a = malloc((size_t)n * sizeof *a), s = 0;
	for (long i = 0; i < n; i++)
		a[i] = cb(i) ^ (long)strlen("plugin") * i;
	for (long i = n - 1; i >= 0; i--)
		s += a[i] & 0xff ? a[i] : -a[i];
	free(a);
	return s;
}
