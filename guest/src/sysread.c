// SPDX-License-Identifier: GPL-2.0
/*
 * sysread FILE: open and read FILE, and print "OK" or the errno name
 * (EACCES, ...).  Exits 0 if both worked, 1 if not, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}
