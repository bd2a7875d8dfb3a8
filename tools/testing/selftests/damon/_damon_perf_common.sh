#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the DAMON perf event tests.  Sourced, not run.  The
# sourcing script defines pass DESCRIPTION and fail DESCRIPTION, which
# check reports through.

# check DESCRIPTION COMMAND...: pass DESCRIPTION if COMMAND succeeds, else
# fail it.
check() {
	local desc=$1

	shift
	if "$@"; then
		pass "$desc"
	else
		fail "$desc"
	fi
}

# sysfs_write VALUE FILE: write to a DAMON sysfs file, retrying while it is
# busy (DAMON sysfs writes fail with EBUSY while a kdamond holds its lock).
# Any other error is printed and returned at once.
sysfs_write() {
	local err

	for _ in $(seq 50); do
		if err=$({ echo "$1" >"$2"; } 2>&1); then
			return 0
		fi
		case $err in
		*busy*) sleep 0.1 ;;
		*) break ;;
		esac
	done
	echo "$err" >&2
	return 1
}
