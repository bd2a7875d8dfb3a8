// SPDX-License-Identifier: GPL-2.0
/*
 * syswrite FILE VALUE: write VALUE to FILE with one write(2), the way a
 * sysfs store sees it, and print "OK" or the errno name (EINVAL, ...).
 * Exits 0 if the write succeeded, 1 if it failed, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	ssize_t len;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE VALUE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	len = write(fd, argv[2], strlen(argv[2]));
	if (len < 0) {
		printf("%s\n", strerrorname_np(errno));
		close(fd);
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}
