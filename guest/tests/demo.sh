#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo, inside the guest: run a workload with a known hot range, let
# DAMON find it first from page table Accessed bits and then from software
# page-fault samples, and show what the perf pipeline saw on the way.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all; trace_off 2>/dev/null' EXIT

# found TITLE: wait for kdamond 0 to single out the hot range, then print
# the workload's ranges next to DAMON's hottest regions.
found() {
	if ! poll "$POLL_SECONDS" hot_range_found 0; then
		echo "DAMON did not single out the hot range within ${POLL_SECONDS}s:"
		show_regions 8
		return 1
	fi
	printf 'workload hot range:  %x-%x (%d KiB)\n' "$HOT_START" "$HOT_END" \
		$(((HOT_END - HOT_START) / 1024))
	printf 'workload cold range: %x-%x (%d KiB)\n' "$COLD_START" "$COLD_END" \
		$(((COLD_END - COLD_START) / 1024))
	echo "DAMON's regions, hottest first:"
	show_regions 6
}

start_workload -m fault -H 4 -C 32 -s 0 >/dev/null
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"

echo
echo "=== 1. DAMON with page table Accessed-bit checks (stock 6.12) ==="
echo on >"$(kdamond_dir 0)/state"
found
sysfs_write off "$(kdamond_dir 0)/state" 2>/dev/null ||
		test "$(cat "$(kdamond_dir 0)/state")" = off
poll 60 test "$(cat "$(kdamond_dir 0)/pid")" = -1

echo
echo "=== 2. DAMON with access checks from software page-fault samples ==="
echo "perf_events/0: type=1 (software) config=2 (page faults) sample_period=1"
damon_set_perf 0 type=1 config=2 sample_period=1
trace_on damon_perf_sample
echo on >"$(kdamond_dir 0)/state"
found

echo
echo "--- $PERF_STATS, while sampling ---"
cat "$PERF_STATS"

echo
echo "--- damon_perf_sample records of the hot range (reason=0: valid, context=0: process) ---"
trace_off
n=0
while read -r line; do
	addr=${line#*addr=0x}
	addr=$((16#${addr%% *}))
	if [ "$addr" -lt "$HOT_START" ] || [ "$addr" -ge "$HOT_END" ]; then
		continue
	fi
	echo "$line"
	n=$((n + 1))
	[ $n -lt 5 ] || break
done < <(grep -o 'damon_perf_sample: .*' "$TRACING/trace")
