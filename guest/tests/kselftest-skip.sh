#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kselftest-skip.sh REASON: in a kernel that lacks something the kselftest
# needs (a PADDR-only or a no-tracing kernel), it ends as a skip that gives
# REASON, never as a failure or an abort, and leaves nothing behind.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || { echo "usage: $0 REASON"; exit 2; }
reason=$1
T=/opt/kselftest/damon/damon_perf_obs_test.sh

mounts_before=$(grep -c . /proc/mounts)
rc=0
"$T" --duration 5 --output /tmp/skip.d --period 1 --workload fault \
	>/tmp/skip.out 2>&1 || rc=$?
sed 's/^/    /' /tmp/skip.out

check "exit status 4, skip ($rc)" test $rc -eq 4
skip_says() {
	grep '^\[SKIP\]' /tmp/skip.out | grep -qF -- "$reason"
}
check "a [SKIP] line gives the reason: $reason" skip_says
check "no [FAIL]" fails grep -q '^\[FAIL\]' /tmp/skip.out
check "KTAP totals: a skip, no failure" \
	grep -qE '^# Totals: pass:[0-9]+ fail:0 xfail:0 xpass:0 skip:[1-9]' /tmp/skip.out
check "no kdamond left" \
	test "$(cat "$DAMON_ADMIN/kdamonds/nr_kdamonds")" = 0
check "no workload left" fails pidof damon_perf_hotcold
check "mounts as before" test "$(grep -c . /proc/mounts)" = "$mounts_before"
finish
