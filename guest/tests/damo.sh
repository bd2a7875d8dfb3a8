#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# damo, the DAMON user-space tool admins use, on the patched kernel: damo
# start, damo report access and damo stop with stock Accessed-bit checks,
# and damo report access and damo stop on a kdamond set up through sysfs in
# perf event mode.  Exits 4 (skip) without the damo snapshot.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all' EXIT

DAMO=/opt/damo/src/damo.py
if [ ! -f "$DAMO" ]; then
	echo "SKIP: no damo snapshot in the guest (../shared/damo is absent)"
	exit 4
fi

damo() {
	python3 "$DAMO" "$@"
}

# report NAME: damo report access into /tmp/NAME.out; true if it shows
# regions.
report() {
	damo report access >"/tmp/$1.out" 2>&1 || { cat "/tmp/$1.out"; return 1; }
	grep -q 'addr' "/tmp/$1.out"
}

kdamond_state() {
	cat "$(kdamond_dir 0)/state" 2>/dev/null || echo none
}

# stop_checked NAME: damo stop, which must exit 0 and leave no kdamond on.
stop_checked() {
	local rc=0

	damo stop >"/tmp/$1.out" 2>&1 || rc=$?
	cat "/tmp/$1.out"
	check "damo stop exits 0 ($rc)" test $rc -eq 0
	check "no kdamond runs after damo stop" fails test "$(kdamond_state)" = on
}

echo "damo $(damo version 2>&1 | head -n 1)"
start_workload -m fault -H 4 -C 32 -s 0

echo "=== stock Accessed-bit checks, started by damo ==="
rc=0
damo start "$WORKLOAD_PID" >/tmp/damo-start.out 2>&1 || rc=$?
cat /tmp/damo-start.out
check "damo start exits 0 ($rc)" test $rc -eq 0
check "its kdamond runs" test "$(kdamond_state)" = on
check "damo report access shows regions" poll "$POLL_SECONDS" report stock
head -n 12 /tmp/stock.out || true
stop_checked damo-stop
damon_stop_all

echo "=== perf event mode, set up through sysfs ==="
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
damon_set_perf 0 type=1 config=2 sample_period=1
echo on >"$(kdamond_dir 0)/state"
check "damo report access shows the perf-mode kdamond's regions" \
	poll "$POLL_SECONDS" report perf
head -n 12 /tmp/perf.out || true
check "the kdamond still samples perf events" \
	test "$(cat "$(perf_dir 0)/nr_perf_events")" = 1
stop_checked damo-stop2
finish
