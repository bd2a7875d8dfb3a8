#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo, inside the guest: run the hot/cold workload, monitor it with
# DAMON, and print what DAMON found next to the workload's real ranges.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all' EXIT

# demo_mode TITLE: monitor the running workload with kdamond 0 and print the
# hottest regions once DAMON has found the hot range.
demo_mode() {
	echo
	echo "=== $1 ==="
	echo on >"$(kdamond_dir 0)/state"
	if ! poll 120 hot_range_found 0; then
		echo "DAMON did not single out the hot range within 120s:"
		show_regions 8
		return 1
	fi
	printf 'workload hot range:  %x-%x (%d KiB)\n' "$HOT_START" "$HOT_END" \
		$(((HOT_END - HOT_START) / 1024))
	printf 'workload cold range: %x-%x (%d KiB)\n' "$COLD_START" "$COLD_END" \
		$(((COLD_END - COLD_START) / 1024))
	echo "DAMON's regions, hottest first:"
	show_regions 6
	echo off >"$(kdamond_dir 0)/state"
}

start_workload -m touch -H 4 -C 32 -s 0
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
demo_mode "DAMON, Accessed-bit checks (stock 6.12)"
