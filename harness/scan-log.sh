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
)
regex=$(IFS='|'; echo "${patterns[*]}")
if hits=$(tr -d '\r' <"$1" | grep -E -n -- "$regex"); then
	echo "scan-log: $1:" >&2
	head -n 20 <<<"$hits" >&2
	exit 1
fi
exit 0
