#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scan-log.sh LOG: exit 1 and print the offending lines if a kernel console
# log holds a panic, Oops, BUG, WARNING, KASAN, UBSAN, lockdep or kmemleak
# report.  (KUnit results are judged by kunit.py; see check.sh.)
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 LOG" >&2; exit 2; }

patterns=(
	'Kernel panic'
	'Oops[:]'
	'BUG[:]'
	'WARNING[:]'
	'------------\[ cut here \]------------'
	'KASAN[:]'
	'UBSAN[:]'
	'general protection fault'
	'possible circular locking dependency'
	'possible recursive locking'
	'inconsistent lock state'
	'INFO: task .* blocked for more than'
	'suspected memory leak'
	'Call Trace:'
	# arm64's spelling, for a stack dumped with no other report line
	'Call trace:'
)
# A user program's own fault ("traps: COMM[PID] general protection fault
# ip:... sp:..."), which some of the base's DAMON selftests cause on
# purpose, is not a kernel problem.
user_trap='traps: [^ ]+\[[0-9]+\] (general protection fault|trap [a-z ]+) ip:'
regex=$(IFS='|'; echo "${patterns[*]}")

# With SCAN_LOG_KCSAN_SCOPE set (a regular expression, such as "damon"),
# a KCSAN data race report counts only if its title, which names the two
# racing functions, matches; the others, such as a race in the scheduler
# while a kdamond sleeps, are listed, not judged.
kcsan_scope() {
	awk -v scope="$SCAN_LOG_KCSAN_SCOPE" '
	function flush() {
		if (blk != "" && hit)
			printf "%s", blk
		else if (blk != "")
			print "scan-log: KCSAN report outside the scope, not judged: " title > "/dev/stderr"
		blk = ""
	}
	/BUG: KCSAN: / { flush(); inblk = 1; hit = ($0 ~ scope); title = $0 }
	inblk { blk = blk $0 "\n" }
	inblk && /\] =+$/ && blk != $0 "\n" { flush(); inblk = 0; next }
	!inblk { print }
	END { flush() }'
}

filter() {
	if [ -n "${SCAN_LOG_KCSAN_SCOPE:-}" ]; then
		kcsan_scope
	else
		cat
	fi
}

if hits=$(tr -d '\r' <"$1" | filter | grep -E -n -- "$regex" | grep -Ev -- "$user_trap"); then
	echo "scan-log: $1:" >&2
	head -n 20 <<<"$hits" >&2
	exit 1
fi
exit 0
