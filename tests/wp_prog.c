/* wp_prog.c — calls wp_sum of tests/wp_lib.c, linked (`wp_prog link N`)
 * or through dlopen (`wp_prog dlopen N LIB`), and prints what the
 * recorder must record in wp_sum ("V <hex>": the entry word of object 1,
 * then rax after the add) and the library's load bias ("BIAS <hex>"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* weak: the dlopen build of this program is not linked with the library */
long wp_sum(long a, long b) __attribute__((weak));

static unsigned long wp_bias;

static int wp_find(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (info->dlpi_name && strstr(info->dlpi_name, "libwp.so"))
		wp_bias = info->dlpi_addr;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long (*sum)(long, long) = NULL;
	if (!strcmp(argv[1], "link")) {
		if (!(sum = wp_sum))
			return 4;
	} else if (!strcmp(argv[1], "dlopen") && argc > 3) {
		void *h = dlopen(argv[3], RTLD_NOW);
		if (!h || !(sum = (long (*)(long, long))dlsym(h, "wp_sum")))
			return 4;
	} else {
		return 2;
	}
	dl_iterate_phdr(wp_find, NULL);
	printf("BIAS %lx\n", wp_bias);
	long n = atol(argv[2]), t = 0;
	for (long i = 0; i < n; i++) {
		printf("V e7e7000100000005\nV %lx\n", (unsigned long)(i + 3 * i));
		t += sum(i, 3 * i);
	}
	printf("total %ld\n", t);
	return 0;
}
