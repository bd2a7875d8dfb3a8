#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The AUX drain, through damon_test_aux, the test PMU that writes ARM SPE
# records into its events' AUX areas: vaddr and paddr contexts find the hot
# range with the records decoded in process context (context=0); records
# without a data address, of kernel addresses and of other tasks are sorted
# out as samples are; a PMU that fills its area faster than the kdamond
# drains it is counted and enabled again with nothing corrupted, records
# packed at their own length, with alignment packets, included; a freq
# event, and a paddr context whose events leave out the physical addresses,
# are refused cleanly; and kdamonds stopped while their areas fill
# leave nothing behind (the debug kernel's kmemleak scan, in debug.sh,
# covers that); a context stopped while its watermarks deactivate it moves
# its CPUs from BOUND to UNINIT, no illegal state change.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all; trace_off; all_cpus_online' EXIT

# shellcheck source=guest/tests/testpmu-lib.sh
. "$(dirname "$0")/testpmu-lib.sh"

# aux_test OPS DELIVER NAME FIELD=VALUE...: OPS monitoring of the workload,
# sampled through the AUX area with the PMU's interrupt in DELIVER, finds
# the hot range; every record is decoded in process context; the laws hold.
aux_test() {
	local ops=$1 deliver=$2 name=$3 n found=hot_range_found

	shift 3
	start_workload -m touch -H 4 -C 32 -s 0
	if [ "$ops" = paddr ]; then
		read_hot_pfns
		found=hot_phys_found
	fi
	setup_ctx "$ops" "$AUX" $((deliver | 1 << BATCH_SHIFT)) "$@"
	trace_on damon_perf_sample damon_perf_drain
	sample_until "$name" "$found" 0
	n=$(samples_in_context 0)
	check "$name: $n records traced, all in process context (context=0)" \
		test "$n" -gt 0 -a \
		"$(grep -c 'damon_perf_sample: ' "$TRACING/trace")" -eq "$n"
	check "$name: every record decoded is a callback ($(delta aux_records))" \
		test "$(delta aux_records)" -gt 0 -a \
		"$(delta aux_records)" -eq "$(delta callback)"
	check "$name: no malformed packet" test "$(delta aux_malformed)" -eq 0
	check "$name: the conservation laws hold" laws
	check "$name: records matched the workload ($(delta match))" \
		test "$(delta match)" -gt 0
}

echo "=== the AUX test PMU ==="
check "$AUX is registered" test -r "$PMUS/$AUX/type"

aux_test vaddr "$HARDIRQ" "vaddr, hardirq"
aux_test vaddr "$NMI" "vaddr, NMI"
aux_test paddr "$HARDIRQ" "paddr" config=$((HARDIRQ | 1 << BATCH_SHIFT | PHYS)) \
	sample_phys_addr=1
# records at their own length, one after the other, and alignment packets
aux_test vaddr "$HARDIRQ" "vaddr, packed records" \
	config=$((HARDIRQ | 4 << BATCH_SHIFT | PACKED))

echo "=== mixed records: branches, kernel threads, other tasks ==="
# branches have no data address (addr_zero), kernel threads' records a
# kernel address and no context packet, other tasks' records their pid
mixed_test "$AUX" "AUX mixed"
check "AUX mixed: every record decoded is a callback, none null" \
	test "$(delta aux_records)" -eq "$(delta callback)" -a "$(delta null)" -eq 0

echo "=== records that name no task (no CONFIG_PID_IN_CONTEXTIDR) ==="
start_workload -m touch -H 4 -C 32 -s 0
# only the workload's records, none with a context packet
setup_ctx vaddr "$AUX" $((HARDIRQ | 1 << BATCH_SHIFT | ONLY_TARGET | NO_CONTEXT))
BEFORE=$(perf_stats_snapshot)
echo on >"$(kdamond_dir 0)/state"
decoded() {
	AFTER=$(perf_stats_snapshot)
	[ "$(delta valid)" -gt 10 ]
}
check "no context: valid records are decoded" poll "$POLL_SECONDS" decoded
stop_ctx
AFTER=$(perf_stats_snapshot)
stop_workload
check "no context: none matches a target, all are miss_tgid ($(delta miss_tgid))" \
	test "$(delta match)" -eq 0 -a "$(delta miss_tgid)" -eq "$(delta dequeue)"
check "no context: the kernel log says why, once" \
	test "$(dmesg | grep -c 'records name no task.*CONFIG_PID_IN_CONTEXTIDR')" -eq 1
check "no context: the conservation laws hold" laws

echo "=== the kselftest, pointed at the AUX test PMU ==="
# ksft NAME CONFIG: run the kselftest on the SPE-like PMU with CONFIG,
# keeping its output in /tmp/ksft-NAME.out and its exit status in RC
ksft() {
	RC=0
	/opt/kselftest/damon/damon_perf_obs_test.sh --pmu "$AUX" --freq 0 \
		--period "$PERIOD" --config "$2" --duration 5 \
		--output "/tmp/ksft-$1.d" >"/tmp/ksft-$1.out" 2>&1 || RC=$?
	sed 's/^/    /' "/tmp/ksft-$1.out"
}
ksft aux $((HARDIRQ | 1 << BATCH_SHIFT))
check "kselftest --pmu $AUX: passes ($RC)" test "$RC" -eq 0
check "kselftest --pmu $AUX: its records count as callbacks" \
	grep -q '^\[PASS\] Sampling: AUX records counted as callbacks' /tmp/ksft-aux.out
check "kselftest --pmu $AUX: the records matched the workload" \
	grep -q '^\[PASS\] Drain & Match: [1-9][0-9]* matched' /tmp/ksft-aux.out
# records without a context packet, as on an arm64 kernel without
# CONFIG_PID_IN_CONTEXTIDR: the kselftest cannot match them, and skips
ksft nocontext $((HARDIRQ | 1 << BATCH_SHIFT | NO_CONTEXT))
check "kselftest, records naming no task: exit status 4, a skip ($RC)" test "$RC" -eq 4
check "kselftest, records naming no task: it says why" \
	grep -q '^\[SKIP\] Drain & Match: .*CONFIG_PID_IN_CONTEXTIDR' /tmp/ksft-nocontext.out
check "kselftest, records naming no task: no [FAIL]" \
	fails grep -q '^\[FAIL\]' /tmp/ksft-nocontext.out

# storm NAME BITS RECORD: the area fills faster than it is drained, with
# config BITS added to the storm's and records of RECORD bytes at least
storm() {
	local name=$1 bits=$2 rec_bytes=$3 written starts

	start_workload -m touch -H 4 -C 32 -s 0
	storm_ctx $((PERIOD / 4)) "$bits"
	trace_on damon_perf_ring_overflow damon_perf_aux_truncated
	BEFORE=$(perf_stats_snapshot)
	written=$(pmu_stat aux_records)
	starts=$(pmu_stat aux_starts)
	cpu_aux_records >/tmp/aux-before
	echo on >"$(kdamond_dir 0)/state"
	# The PMU stops at an overrun, as arm_spe_pmu does, until
	# pmu->start(): each CPU writes more than four areas' worth only if
	# its event is enabled again after each truncation.
	refilled() {
		AFTER=$(perf_stats_snapshot)
		[ "$(delta aux_truncated)" -gt 1 ] &&
			cpus_wrote_more_than $((4 * AREA / rec_bytes)) /tmp/aux-before
	}
	check "$name: truncations are counted, and every CPU writes on after them" \
		poll "$POLL_SECONDS" refilled
	cpu_aux_written /tmp/aux-before |
		awk '{ printf "CPU%s: %d records written\n", $1, $2 }'
	stop_ctx
	AFTER=$(perf_stats_snapshot)
	trace_off
	stop_workload
	written=$(($(pmu_stat aux_records) - written))
	starts=$(($(pmu_stat aux_starts) - starts))
	echo "records written: $written; decoded: $(delta aux_records);" \
		"truncations: $(delta aux_truncated); malformed: $(delta aux_malformed);" \
		"pmu->start() calls: $starts"
	check "$name: each truncation was followed by a pmu->start() ($starts)" \
		test "$starts" -gt "$(delta aux_truncated)"
	check "$name: every record written is decoded, none malformed" \
		test "$(delta aux_records)" -eq "$written" -a "$(delta aux_malformed)" -eq 0
	check "$name: no ring overflows ($(delta overflow))" test "$(delta overflow)" -eq 0
	# a truncation has an event of its own, in bytes; damon_perf_ring_overflow
	# counts records of DAMON's ring, and the ring did not overflow
	check "$name: truncations traced as damon_perf_aux_truncated, in bytes" \
		grep -q "damon_perf_aux_truncated: cpu=[0-9]* used=[1-9][0-9]* size=$AREA truncated=[1-9]" \
		"$TRACING/trace"
	check "$name: no damon_perf_ring_overflow event for a truncation" \
		no_ring_overflow_traced
	check "$name: the conservation laws hold" laws
}
no_ring_overflow_traced() {
	! grep -q "damon_perf_ring_overflow: " "$TRACING/trace"
}

echo "=== a lost-data storm: the area fills faster than it is drained ==="
storm storm 0 "$RECORD"
echo "=== the storm with packed records and alignment packets ==="
storm "packed storm" "$PACKED" "$PACKED_RECORD"

echo "=== a CPU going offline and online: no record lost, none made up ==="
CPU1=/sys/devices/system/cpu/cpu1/online
if [ -w "$CPU1" ]; then
	# 500 records a second per CPU, drained once a second: no area fills,
	# and CPU 1's area holds records no drain has read when it goes
	start_workload -m touch -H 4 -C 32 -s 0
	setup_ctx vaddr "$AUX" $((HARDIRQ | 1 << BATCH_SHIFT)) sample_period=2000000
	iv=$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals
	echo 1000000 >"$iv/sample_us"
	echo 2000000 >"$iv/aggr_us"
	BEFORE=$(perf_stats_snapshot)
	# CPU hotplug: the PMU's callbacks, which reset its buffer, run before
	# DAMON's on the way up, and after them on the way down
	hp_order() {
		awk -F': ' '$2 == "damon/test_pmu:online" { pmu = $1 }
			$2 == "mm/damon/perf:online" { damon = $1 }
			END { exit !(pmu != "" && damon != "" && pmu + 0 < damon + 0) }' \
			/sys/devices/system/cpu/hotplug/states
	}
	check "hotplug: the PMU's state comes before DAMON's" hp_order
	grep damon /sys/devices/system/cpu/hotplug/states || true
	written=$(pmu_stat aux_records)
	resets=$(pmu_stat aux_resets)
	cpu_resets=$(pmu_stat cpu_resets)
	# cpu1_wrote SINCE N: CPU 1 wrote more than N records since its
	# count was SINCE
	cpu1_wrote() {
		[ $(($(pmu_stat aux_records_cpu1) - $1)) -gt "$2" ]
	}
	cpu1_before=$(pmu_stat aux_records_cpu1)
	echo on >"$(kdamond_dir 0)/state"
	# round the area twice: what lies past its head then is records
	# already read, which a head moved too far would decode again
	laps=$((2 * AREA / RECORD))
	check "offline: CPU 1 writes more than $laps records" \
		poll "$POLL_SECONDS" cpu1_wrote "$cpu1_before" "$laps"
	echo 0 >"$CPU1"
	cpu1_uninit() {
		! cpu_states | grep -q '^CPU0*1 [A-TV-Z]'
	}
	check "offline: CPU 1 is shown UNINIT" cpu1_uninit
	# the PMU resets the buffer of a CPU coming online, as arm_spe_pmu
	# does: an event enabled before that would write nothing
	cpu1_before=$(pmu_stat aux_records_cpu1)
	echo 1 >"$CPU1"
	check "online: CPU 1 writes records again" \
		poll "$POLL_SECONDS" cpu1_wrote "$cpu1_before" 100
	stop_ctx
	AFTER=$(perf_stats_snapshot)
	stop_workload
	written=$(($(pmu_stat aux_records) - written))
	check "offline: every record written is decoded ($(delta aux_records) of $written)" \
		test "$(delta aux_records)" -eq "$written"
	check "offline: no area overran ($(delta aux_truncated))" \
		test "$(delta aux_truncated)" -eq 0
	check "offline: no malformed packet ($(delta aux_malformed))" \
		test "$(delta aux_malformed)" -eq 0
	cpu_resets=$(($(pmu_stat cpu_resets) - cpu_resets))
	check "offline, online: the PMU reset CPU 1's buffer ($cpu_resets times)" \
		test "$cpu_resets" -ge 2
	check "offline, online: no event ran on a buffer its PMU reset ($(($(pmu_stat aux_resets) - resets)))" \
		test "$(pmu_stat aux_resets)" -eq "$resets"
	check "offline: the conservation laws hold" laws
else
	echo "CPU 1 cannot go offline here: not tested"
	fail "offline: CPU 1 cannot be taken offline"
fi

echo "=== what the AUX PMU cannot do fails the start cleanly ==="
# only_cpu_states STATE: every CPU perf_stats shows is in STATE
only_cpu_states() {
	cpu_states >/tmp/states
	! grep -qv " $1\$" /tmp/states
}
kdamond_stopped() {
	[ "$(cat "$(kdamond_dir 0)/pid")" = -1 ]
}
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr "$AUX" $((HARDIRQ | 1 << BATCH_SHIFT)) freq=1 sample_freq=1000
dmesg -c >/dev/null
check "freq=1: the start fails with EINVAL" \
	expect_errno EINVAL "$(kdamond_dir 0)/state" on
check "... the kdamond is off" test "$(cat "$(kdamond_dir 0)/state")" = off
check "... every CPU shown is in ERROR" only_cpu_states ERROR
cat /tmp/states
damon_stop_all
# a paddr context whose records would carry no physical address: the phys
# bit of config is the test PMU's pa_enable
setup_ctx paddr "$AUX" $((HARDIRQ | 1 << BATCH_SHIFT)) sample_phys_addr=1
dmesg -c >/dev/null
check "paddr without the phys bit: the start fails with EINVAL" \
	expect_errno EINVAL "$(kdamond_dir 0)/state" on
check "... the kdamond is off" test "$(cat "$(kdamond_dir 0)/state")" = off
check "... every CPU shown is in ERROR" only_cpu_states ERROR
log_has() {
	dmesg | grep -qF -- "$1"
}
check "... the kernel log names the bits it needs" log_has \
	"PMU writes physical addresses only with config bits $(printf '%#x' "$PHYS") set (pa_enable)"
damon_stop_all
stop_workload

echo "=== a context stopped while its watermarks deactivate it ==="
# its events are disabled already: the stop releases them, BOUND to UNINIT
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr "$AUX" $((HARDIRQ | 1 << BATCH_SHIFT))
watermarks_deactivate
BEFORE=$(perf_stats_snapshot)
echo on >"$(kdamond_dir 0)/state"
check "deactivated: the events are disabled (BOUND)" poll "$POLL_SECONDS" all_bound
stop_ctx
AFTER=$(perf_stats_snapshot)
stop_workload
check "deactivated, stopped: no illegal state change ($(delta illegal_state_changes))" \
	test "$(delta illegal_state_changes)" -eq 0
check "deactivated, stopped: every CPU shown is back to UNINIT" \
	only_cpu_states UNINIT
cat /tmp/states
check "deactivated, stopped: the conservation laws hold" laws

echo "=== kdamonds stopped while their areas fill ==="
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr "$AUX" $((NMI | 16 << BATCH_SHIFT)) sample_period=$((PERIOD / 4))
decoding() {
	AFTER=$(perf_stats_snapshot)
	[ "$(delta aux_records)" -gt 0 ]
}
for i in $(seq 5); do
	BEFORE=$(perf_stats_snapshot)
	echo on >"$(kdamond_dir 0)/state"
	# records are coming in: off in the middle of it
	check "teardown $i: records decoded" poll "$POLL_SECONDS" decoding
	sysfs_write_until off "$(kdamond_dir 0)/state"
	check "teardown $i: the kdamond stops" poll "$POLL_SECONDS" kdamond_stopped
done
AFTER=$(perf_stats_snapshot)
stop_ctx
stop_workload
check "teardown: every CPU shown is back to UNINIT" only_cpu_states UNINIT
cat /tmp/states

finish
