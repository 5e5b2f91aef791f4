/* plugin_main.c — loads the plugin argv[1] with dlopen (tests/plugin.c)
 * and runs it over argv[2] elements; prints its result. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static long table[64];

static long callback(long i)
{
	table[i % 64] += i;
	return table[(i * 7) % 64] + i;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW);
	long (*run)(long, long (*)(long)) = h ? (long (*)(long, long (*)(long)))dlsym(h, "plugin_run") : NULL;
	if (!run) {
		fprintf(stderr, "plugin_main: %s\n", dlerror());
		return 1;
	}
	printf("%ld\n", run(atol(argv[2]), callback));
	dlclose(h);
	return 0;
}
