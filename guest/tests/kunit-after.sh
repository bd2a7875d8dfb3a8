#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run after a boot that ran the KUnit suites (kunit.enable=1): they count in
# counters and event states of their own, so perf_stats reads as if they had
# not run: every counter zero, no illegal state change, no CPU listed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

STATS=/sys/kernel/debug/damon/perf_stats

cat "$STATS"
dmesg >/tmp/kunit.dmesg
check "the damon-perf suites ran in this boot" \
	grep -qE 'ok [0-9]+ damon-perf-observe' /tmp/kunit.dmesg
# shellcheck disable=SC2016 # an awk program, run by check
check "every counter reads 0" \
	awk '/│ [a-z_]+ +│/ { if ($4 != 0) bad = 1 } END { exit bad }' "$STATS"
check "all 15 counters are listed" \
	test "$(grep -cE '│ [a-z_]+ +│ +[0-9]+ │' "$STATS")" -eq 15
check "report_missed=0 illegal_state_changes=0" \
	grep -q 'report_missed=0 illegal_state_changes=0 ' "$STATS"
check "no ring or view of the regions counted (ring_bytes=0 view_bytes=0)" \
	grep -q 'ring_bytes=0 view_bytes=0$' "$STATS"
check "no CPU has a counter or a state" \
	fails grep -q '^  CPU[0-9]' "$STATS"
finish
