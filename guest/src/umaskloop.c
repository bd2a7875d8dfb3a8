// SPDX-License-Identifier: GPL-2.0
/*
 * umaskloop N: call umask() N times.  The kernel's __x64_sys_umask() is a
 * short run of instructions without a branch; make bench times it with
 * ftrace's function profiler, next to the function it measures, to learn
 * what the profiler adds to every call it times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	unsigned long n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	for (i = 0; i < n; i++)
		umask(i & 1 ? 022 : 077);
	umask(022);
	return 0;
}
