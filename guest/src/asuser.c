// SPDX-License-Identifier: GPL-2.0
/*
 * asuser UID COMMAND [ARG]...: run COMMAND with every user and group id set
 * to UID and no supplementary groups, the way an unprivileged user would.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t id;

	if (argc < 3) {
		fprintf(stderr, "usage: %s UID COMMAND [ARG]...\n", argv[0]);
		return 2;
	}
	id = strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id)) {
		perror("asuser");
		return 2;
	}
	if (getuid() != id || geteuid() != id) {
		fprintf(stderr, "asuser: still uid %d\n", geteuid());
		return 2;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
