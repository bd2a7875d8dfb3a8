#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CONFIG_DAMON_PERF_OBSERVE=y in the booted kernel: the perf_stats file,
# per-CPU states, counters and their conservation laws, and the
# damon_perf_* tracepoints, with the software page-fault event (addresses)
# and cpu-clock (none).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all; trace_off' EXIT

PF=(type=1 config=2 sample_period=1)
CPU_CLOCK=(type=1 config=0 sample_period=1000000)
COUNTERS=(callback valid null addr_zero kernel inv_phys enqueue dequeue
	  overflow ring_peak match miss_tgid miss_region miss_bound update)

# run_perf_mode EVENT_FIELDS...: monitor a fault workload with one perf
# event, snapshotting counters into BEFORE (before start) and AFTER (after
# stop, when the pipeline is quiescent), with damon_perf_* tracing on.
# WAIT_FOR names the condition to poll for while it runs.
run_perf_mode() {
	start_workload -m fault -H 4 -C 32 -s 0
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	damon_set_perf 0 "$@"
	trace_on damon_perf_sample damon_perf_drain damon_perf_ring_overflow \
		damon_perf_report_missed
	BEFORE=$(perf_stats_snapshot)
	echo on >"$(kdamond_dir 0)/state"
	if ! poll "$POLL_SECONDS" "$WAIT_FOR" 0; then
		echo "timed out waiting for $WAIT_FOR"
		WAITED=0
	else
		WAITED=1
	fi
	cpu_states >/tmp/states
	sysfs_write off "$(kdamond_dir 0)/state" ||
		test "$(cat "$(kdamond_dir 0)/state")" = off
	poll 60 test "$(cat "$(kdamond_dir 0)/pid")" = -1
	trace_off
	AFTER=$(perf_stats_snapshot)
	cp "$TRACING/trace" /tmp/trace
	stop_workload
	echo 0 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
}

# counter_grew NAME: the live counter NAME exceeds its value in $BEFORE
counter_grew() {
	[ "$(stat_of "$(perf_stats_snapshot)" "$1")" -gt "$(stat_of "$BEFORE" "$1")" ]
}

callbacks_arrived() {
	counter_grew callback
}

case_file() {
	local names tps

	check "perf_stats exists, mode 400" test "$(stat -c %a "$PERF_STATS")" = 400
	check "an unprivileged user cannot read it (EACCES)" \
		nobody_gets EACCES read "$PERF_STATS"
	names=$(perf_stats_snapshot | awk 'NR <= 15 { print $1 }' | tr '\n' ' ')
	check "the table has the fifteen counters, in order" \
		test "$names" = "${COUNTERS[*]} "
	check "the per-CPU section is there" grep -q 'Per-CPU (non-zero / non-UNINIT):' "$PERF_STATS"
	tps=("$TRACING"/events/damon/damon_perf_*)
	check "five damon_perf_* tracepoints exist (${#tps[@]})" test "${#tps[@]}" -eq 5
}

case_page_faults() {
	local n v c r in_hot=0 bad=0

	WAIT_FOR=hot_range_found run_perf_mode "${PF[@]}"
	check "page faults: DAMON found the hot range" test "$WAITED" = 1
	cat "$PERF_STATS"
	check "some CPU reached RUNNING" grep -q ' RUNNING$' /tmp/states
	check "every CPU with events reached at least ENABLED" \
		fails grep -v -e ' RUNNING$' -e ' ENABLED$' /tmp/states
	for n in valid enqueue dequeue match update; do
		check "page faults: $n grew ($(delta "$n"))" test "$(delta "$n")" -gt 0
	done
	check "page faults: the conservation laws hold" laws
	check "page faults: the regions' view is counted (view_bytes $(stat_of "$AFTER" view_bytes))" \
		test "$(stat_of "$AFTER" view_bytes)" -gt 0

	grep -o 'damon_perf_sample: addr=0x[0-9a-f]* .*' /tmp/trace >/tmp/samples || true
	check "damon_perf_sample records were traced ($(wc -l </tmp/samples))" test -s /tmp/samples
	while read -r _ v _ _ _ r _ _ c; do
		v=$((16#${v#addr=0x}))
		[ "${r#reason=}" = 0 ] && [ "${c#context=}" = 0 ] || bad=$((bad + 1))
		[ "$v" -ge "$HOT_START" ] && [ "$v" -lt "$HOT_END" ] && in_hot=$((in_hot + 1))
	done </tmp/samples
	check "every sample record has reason=0 context=0 ($bad do not)" test $bad -eq 0
	check "sample addresses fall inside the hot range ($in_hot do)" test $in_hot -gt 0
	check "damon_perf_drain records were traced" grep -q 'damon_perf_drain: cpu=[0-9]* nr=[1-9]' /tmp/trace
	head -n 3 /tmp/samples
}

case_cpu_clock() {
	WAIT_FOR=callbacks_arrived run_perf_mode "${CPU_CLOCK[@]}"
	check "cpu-clock: callbacks arrived ($(delta callback))" test "$(delta callback)" -gt 0
	check "cpu-clock: addr_zero counts every callback" \
		test "$(delta addr_zero)" -eq "$(delta callback)"
	check "cpu-clock: valid stays 0" test "$(delta valid)" -eq 0
	check "cpu-clock: no region updates" test "$(delta update)" -eq 0
	check "cpu-clock: the conservation laws hold" laws
	grep -o 'damon_perf_sample: .*' /tmp/trace >/tmp/samples || true
	check "cpu-clock records were traced" test -s /tmp/samples
	check "cpu-clock records all show reason=2 context=2" \
		fails grep -v 'reason=2 .*context=2$' /tmp/samples
	head -n 2 /tmp/samples
}

# A sampling interval of 4 s, at which the page fault event fills a ring
# (16384 records) well within the interval, even sampling every fourth
# fault: the producer that fills a ring to half has the kdamond drain early,
# so nothing is lost.
case_early_drain() {
	local cap half

	drained() {
		AFTER=$(perf_stats_snapshot)
		[ "$(delta dequeue)" -gt $((4 * 16384)) ]
	}
	start_workload -m fault -H 8 -C 8 -s 0
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	echo 4000000 >"$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals/sample_us"
	echo 8000000 >"$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals/aggr_us"
	damon_set_perf 0 type=1 config=2 sample_period=4
	trace_on damon_perf_ring_overflow damon_perf_drain
	BEFORE=$(perf_stats_snapshot)
	echo on >"$(kdamond_dir 0)/state"
	check "early drain: four rings' worth of records drained" \
		poll "$POLL_SECONDS" drained
	sysfs_write off "$(kdamond_dir 0)/state" ||
		test "$(cat "$(kdamond_dir 0)/state")" = off
	poll 60 test "$(cat "$(kdamond_dir 0)/pid")" = -1
	trace_off
	AFTER=$(perf_stats_snapshot)
	cap=$(stat_of "$AFTER" ring_capacity)
	half=$((cap / 2))
	# a 4 s interval: the largest rings
	check "early drain: ring_capacity is 16384 ($cap)" test "$cap" -eq 16384
	check "early drain: ring_bytes grew with it ($(stat_of "$BEFORE" ring_bytes) to $(stat_of "$AFTER" ring_bytes))" \
		test "$(stat_of "$AFTER" ring_bytes)" -gt "$(stat_of "$BEFORE" ring_bytes)"
	check "early drain: a ring filled past half (ring_peak $(stat_of "$AFTER" ring_peak))" \
		test "$(stat_of "$AFTER" ring_peak)" -ge "$half"
	check "early drain: no ring overflowed ($(delta overflow))" \
		test "$(delta overflow)" -eq 0
	check "early drain: no damon_perf_ring_overflow record" \
		fails grep -q 'damon_perf_ring_overflow: ' "$TRACING/trace"
	check "early drain: the conservation laws hold" laws
	stop_workload
	echo 0 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
}

case_refused() {
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 $$
	damon_set_perf 0 type=9999
	check "PMU type 9999 is refused" expect_errno ENOENT "$(kdamond_dir 0)/state" on
	check "the refused CPU shows ERROR" grep -q 'st=ERROR' "$PERF_STATS"
	damon_stop_all
}

case_file
case_page_faults
case_cpu_clock
case_early_drain
case_refused
finish
