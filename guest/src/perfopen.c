// SPDX-License-Identifier: GPL-2.0
/*
 * perfopen TYPE CONFIG PID CPU EXCLUDE_KERNEL [phys]: perf_event_open() a
 * sampling event the way a user would (period 1000, PERF_SAMPLE_ADDR, and
 * PERF_SAMPLE_PHYS_ADDR with "phys"), close it, and print "OK" or the errno
 * name (EACCES, ...).  Exits 0 if the open worked, 1 if not, 2 on usage
 * errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr attr;
	int fd;

	if (argc != 6 && !(argc == 7 && !strcmp(argv[6], "phys"))) {
		fprintf(stderr, "usage: %s TYPE CONFIG PID CPU EXCLUDE_KERNEL [phys]\n",
			argv[0]);
		return 2;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = strtoul(argv[1], NULL, 0);
	attr.config = strtoull(argv[2], NULL, 0);
	attr.sample_period = 1000;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	if (argc == 7)
		attr.sample_type |= PERF_SAMPLE_PHYS_ADDR;
	attr.exclude_kernel = !!atoi(argv[5]);
	attr.exclude_hv = 1;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, atoi(argv[3]), atoi(argv[4]),
		     -1, 0);
	if (fd < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}
