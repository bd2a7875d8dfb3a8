#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Harness smoke test: the guest sees 4 CPUs, and stock DAMON (vaddr,
# Accessed-bit checks) started through sysfs finds the workload's hot range.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all' EXIT

check "guest sees 4 CPUs ($(nproc) online)" test "$(nproc)" -eq 4

start_workload -m touch -H 4 -C 32 -s 0
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
echo on >"$(kdamond_dir 0)/state"
check "kdamond 0 is on" test "$(cat "$(kdamond_dir 0)/state")" = on

if poll "$POLL_SECONDS" hot_range_found 0; then
	pass "Accessed-bit DAMON finds the hot range, cold range reads 0"
else
	fail "Accessed-bit DAMON did not find the hot range"
fi
show_regions 5
finish
