#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The sampling hardware paths, through the test PMUs of
# CONFIG_DAMON_PERF_TEST_PMU: delivery in NMI, hardirq, softirq and task
# context with the addresses the workload really touches, physical
# addresses (paddr), large-PEBS batching, a PMU that covers only some CPUs,
# a PMU that refuses exclude flags, and an overflow storm.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all; trace_off' EXIT

# shellcheck source=guest/tests/testpmu-lib.sh
. "$(dirname "$0")/testpmu-lib.sh"

# deliver_test CONTEXT NAME: vaddr monitoring with samples delivered in
# CONTEXT finds the hot range; the traces show CONTEXT; the laws hold.
deliver_test() {
	local ctx=$1 name=$2 n

	start_workload -m touch -H 4 -C 32 -s 0
	setup_ctx vaddr damon_test $((ctx | 1 << BATCH_SHIFT))
	trace_on damon_perf_sample damon_perf_drain
	# hot_range_found: the cold range reads 0 too
	sample_until "$name" hot_range_found 0
	n=$(samples_in_context "$ctx")
	check "$name: $n samples traced with context=$ctx" test "$n" -gt 0
	check "$name: no sample traced in another context" \
		test "$(grep -c 'damon_perf_sample: ' "$TRACING/trace")" -eq "$n"
	check "$name: the conservation laws hold" laws
	check "$name: samples matched the workload ($(delta match))" \
		test "$(delta match)" -gt 0
}

echo "=== the test PMUs ==="
for p in damon_test damon_test_ibs damon_test_hybrid; do
	check "$p is registered" test -r "$PMUS/$p/type"
done
check "damon_test_hybrid covers only some CPUs ($(cat "$PMUS/damon_test_hybrid/cpus"))" \
	test "$(cat "$PMUS/damon_test_hybrid/cpus")" != "$(cat "$PMUS/damon_test/cpus")"

echo "=== delivery contexts ==="
deliver_test $NMI "NMI"
deliver_test $HARDIRQ "hardirq"
deliver_test $SOFTIRQ "softirq"
deliver_test $TASK "task"

echo "=== mixed samples: every reason and miss counter moves ==="
mixed_test damon_test mixed

echo "=== large PEBS: batched records reach DAMON ==="
# 8 records per interrupt; perf_event_output() would drop all but the last
# of them, since a kernel counter has no buffer
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr damon_test $((NMI | 8 << BATCH_SHIFT))
BEFORE=$(perf_stats_snapshot)
records=$(pmu_stat records)
outputs=$(pmu_stat output_calls)
echo on >"$(kdamond_dir 0)/state"
check "batched: DAMON finds the hot range" poll "$POLL_SECONDS" hot_range_found 0
stop_ctx
AFTER=$(perf_stats_snapshot)
stop_workload
records=$(($(pmu_stat records) - records))
outputs=$(($(pmu_stat output_calls) - outputs))
echo "records made: $records; sent to perf_event_output(): $outputs; callbacks: $(delta callback)"
check "batched: no record went to perf_event_output()" test "$outputs" -eq 0
check "batched: every record reached the overflow handler" \
	test "$(delta callback)" -eq "$records"
check "batched: the conservation laws hold" laws

echo "=== a PMU that covers only some CPUs (hybrid) ==="
start_workload -m touch -H 4 -C 32 -s 0
# on a covered CPU, so that its samples are taken
taskset -p -c 0 "$WORKLOAD_PID" >/dev/null
covered=$(cat "$PMUS/damon_test_hybrid/cpus")
setup_ctx vaddr damon_test_hybrid $((HARDIRQ | 1 << BATCH_SHIFT))
BEFORE=$(perf_stats_snapshot)
rc=0
echo on >"$(kdamond_dir 0)/state" || rc=1
check "hybrid: the kdamond starts" test $rc -eq 0
cpu_states | tee /tmp/states
check "hybrid: CPUs the PMU does not cover are shown as such" \
	grep -q ' NOPMU$' /tmp/states
# the kdamond enables the events once it runs, after the write returned:
# until then they are BOUND
cpu0_enabled() {
	cpu_states >/tmp/states
	grep -qE 'CPU0*0 (ENABLED|RUNNING)$' /tmp/states
}
check "hybrid: covered CPUs ($covered) are enabled" \
	poll "$POLL_SECONDS" cpu0_enabled
cat /tmp/states
sampled() {
	AFTER=$(perf_stats_snapshot)
	[ "$(delta match)" -gt 0 ]
}
check "hybrid: samples from the covered CPUs match" poll "$POLL_SECONDS" sampled
stop_ctx
stop_workload

echo "=== a PMU that cannot exclude privilege levels (IBS) ==="
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr damon_test_ibs $((NMI | 1 << BATCH_SHIFT))
check "ibs: exclude_kernel is 1 by default" \
	test "$(cat "$(perf_dir 0)/0/exclude_kernel")" = 1
BEFORE=$(perf_stats_snapshot)
dmesg -c >/dev/null
rc=0
echo on >"$(kdamond_dir 0)/state" || rc=1
dmesg | tee /tmp/dmesg.ibs
check "ibs: the kdamond starts with the default exclude_kernel" test $rc -eq 0
check "ibs: the kernel log says kernel mode is sampled too" \
	grep -q 'cannot exclude' /tmp/dmesg.ibs
check "ibs: samples match" poll "$POLL_SECONDS" sampled
stop_ctx
stop_workload

echo "=== paddr: the hot physical pages, from samples ==="
start_workload -m touch -H 4 -C 32 -s 0
# only the workload's samples, with physical addresses filled like IBS
setup_ctx paddr damon_test $((NMI | 1 << BATCH_SHIFT | PHYS | ONLY_TARGET)) \
	sample_phys_addr=1
read_hot_pfns
check "pagemap gives the hot range's physical pages ($(wc -l </tmp/hot.pfns))" \
	test "$(wc -l </tmp/hot.pfns)" -gt 0
BEFORE=$(perf_stats_snapshot)
echo on >"$(kdamond_dir 0)/state"
check "paddr: DAMON finds regions of the hot pages, and only those" \
	poll "$POLL_SECONDS" hot_phys_found
stop_ctx
AFTER=$(perf_stats_snapshot)
stop_workload
check "paddr: samples matched ($(delta match)), no invalid physical address" \
	test "$(delta match)" -gt 0 -a "$(delta inv_phys)" -eq 0
check "paddr: the conservation laws hold" laws

echo "=== a commit from vaddr to paddr with the same events restarts them ==="
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr damon_test $((NMI | 1 << BATCH_SHIFT | PHYS | ONLY_TARGET)) \
	sample_phys_addr=1
echo on >"$(kdamond_dir 0)/state"
check "vaddr to paddr: DAMON finds the hot range as vaddr" \
	poll "$POLL_SECONDS" hot_range_found 0
# the same events, now for the physical address space
read_hot_pfns
setup_paddr_target
echo commit >"$(kdamond_dir 0)/state"
check "vaddr to paddr: still on after the commit" \
	test "$(cat "$(kdamond_dir 0)/state")" = on
# the records are physical addresses now, or no region would be found
check "vaddr to paddr: DAMON finds regions of the hot pages, and only those" \
	poll "$POLL_SECONDS" hot_phys_found
stop_ctx
stop_workload

echo "=== an overflow storm ==="
# bursts of 64 records from NMIs into the largest rings (16384 records, for
# a 2 s interval), while a real-time task keeps the kdamond off the one CPU
# it may run on for 3 s: nothing drains them, even early, so they overflow;
# the kdamond drains them once it runs again
start_workload -m touch -H 4 -C 32 -s 0
hog_cpu=0
taskset -p "$(printf '%x' $(((1 << $(nproc)) - 1 - (1 << hog_cpu))))" \
	"$WORKLOAD_PID" >/dev/null
setup_ctx vaddr damon_test $((NMI | 64 << BATCH_SHIFT)) sample_period=$((PERIOD / 2))
echo 2000000 >"$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals/sample_us"
echo 4000000 >"$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals/aggr_us"
trace_on damon_perf_ring_overflow
BEFORE=$(perf_stats_snapshot)
calls=$(pmu_stat overflow_calls)
echo on >"$(kdamond_dir 0)/state"
overflowed() {
	AFTER=$(perf_stats_snapshot)
	[ "$(delta overflow)" -gt 0 ] && [ "$(delta dequeue)" -gt 0 ]
}
taskset -p "$(printf '%x' $((1 << hog_cpu)))" \
	"$(cat "$(kdamond_dir 0)/pid")" >/dev/null
rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us)
echo -1 >/proc/sys/kernel/sched_rt_runtime_us
rc=0
"$BIN/rthog" "$hog_cpu" 3 || rc=$?
echo "$rt_runtime" >/proc/sys/kernel/sched_rt_runtime_us
check "storm: the real-time task held the kdamond's CPU ($rc)" test "$rc" -eq 0
check "storm: the rings overflow while the kdamond cannot run, and are drained" \
	poll "$POLL_SECONDS" overflowed
stop_ctx
trace_off
AFTER=$(perf_stats_snapshot)
check "storm: damon_perf_ring_overflow records were traced, full at the capacity" \
	grep -q 'damon_perf_ring_overflow: cpu=[0-9]* occupancy=16384 capacity=16384 dropped=[1-9]' "$TRACING/trace"
stop_workload
calls=$(($(pmu_stat overflow_calls) - calls))
echo "overflow handler calls made by the PMU: $calls; callbacks counted: $(delta callback); overflow: $(delta overflow)"
check "storm: every call of the overflow handler is counted" \
	test "$(delta callback)" -eq "$calls"
check "storm: the conservation laws hold, overflows exactly" laws

echo "=== the kselftest, pointed at the test PMU ==="
rc=0
/opt/kselftest/damon/damon_perf_obs_test.sh --pmu damon_test --config 3 \
	--period "$PERIOD" --duration 5 --workload fault --output /tmp/ksft.d \
	>/tmp/ksft.out 2>&1 || rc=$?
sed 's/^/    /' /tmp/ksft.out
check "kselftest --pmu damon_test: exit status 0 ($rc)" test $rc -eq 0
for l in 'Layer 0' 'Layer 1' 'Layer 2-3' 'Layer 4' 'Layer 5' 'Layer 6'; do
	check "kselftest: $l ran" grep -q -- "--- $l" /tmp/ksft.out
done
check "kselftest: no [FAIL]" fails grep -q '^\[FAIL\]' /tmp/ksft.out

echo "=== vaddr with sample_phys_addr=1: samples go by virtual address ==="
# the page-fault event: its address has no page yet, so no physical address
start_workload -m fault -H 4 -C 32 -s 0
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
damon_set_perf 0 type=1 config=2 sample_period=1 sample_phys_addr=1
BEFORE=$(perf_stats_snapshot)
echo on >"$(kdamond_dir 0)/state"
check "phys-vaddr: DAMON finds the hot range" poll "$POLL_SECONDS" hot_range_found 0
stop_ctx
AFTER=$(perf_stats_snapshot)
stop_workload
check "phys-vaddr: no sample is inv_phys ($(delta inv_phys)), some match ($(delta match))" \
	test "$(delta inv_phys)" -eq 0 -a "$(delta match)" -gt 0

echo "=== a commit whose new events perf refuses keeps the old ones ==="
start_workload -m fault -H 4 -C 32 -s 0
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
damon_set_perf 0 type=1 config=2 sample_period=1
echo on >"$(kdamond_dir 0)/state"
# the writer's trial gets the event; the kdamond's creation is refused
echo 1 >"$PMU_PASS"
d=$(perf_dir 0)/0
pmu_type damon_test >"$d/type"
echo $((HARDIRQ | 1 << BATCH_SHIFT)) >"$d/config"
echo "$PERIOD" >"$d/sample_period"
dmesg -c >/dev/null
rc=0
echo commit >"$(kdamond_dir 0)/state" || rc=1
echo -1 >"$PMU_PASS"
dmesg | tee /tmp/dmesg.commit
check "commit: the write returns" test $rc -eq 0
check "commit: the kdamond is still on" \
	test "$(cat "$(kdamond_dir 0)/state")" = on
check "commit: the kernel log says the old events are kept" \
	grep -q 'the old ones are kept' /tmp/dmesg.commit
BEFORE=$(perf_stats_snapshot)
check "commit: the old events go on sampling" poll "$POLL_SECONDS" sampled
stop_ctx
stop_workload

echo "=== the watermarks deactivate a context: no sampling meanwhile ==="
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr damon_test $((HARDIRQ | 1 << BATCH_SHIFT))
# deactivated from the start: the context is activated by using memory
watermarks_deactivate
BEFORE=$(perf_stats_snapshot)
echo on >"$(kdamond_dir 0)/state"
check "watermarks: the events are disabled (BOUND)" poll "$POLL_SECONDS" all_bound
cat /tmp/states
paused=$(stat_of "$(perf_stats_snapshot)" callback)
sleep 1
paused=$(($(stat_of "$(perf_stats_snapshot)" callback) - paused))
check "watermarks: no sample while deactivated ($paused)" test "$paused" -eq 0
# take a third of the memory: free drops below mid, and it is active
"$BIN/hotcold" -m touch -H 1 -C $((FREE_PM * 1024 / 3000)) -s 0 -i /tmp/big.info &
big=$!
check "watermarks: active again, DAMON finds the hot range" \
	poll "$POLL_SECONDS" hot_range_found 0
kill "$big"
wait "$big" || true
stop_ctx
AFTER=$(perf_stats_snapshot)
stop_workload
check "watermarks: the conservation laws hold" laws

echo "=== what perf_event_open() refuses, DAMON refuses ==="
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 $$
damon_set_perf 0 type=1 config=2
d=$(perf_dir 0)/0
check "sample_period with bit 63 set: EINVAL" \
	expect_errno EINVAL "$d/sample_period" 9223372036854775808
check "... and the file keeps its value" test "$(cat "$d/sample_period")" = 4096
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
echo 1000 >/proc/sys/kernel/perf_event_max_sample_rate
echo 1 >"$d/freq"
echo 2000 >"$d/sample_freq"
dmesg -c >/dev/null
check "sample_freq above perf_event_max_sample_rate: EINVAL" \
	expect_errno EINVAL "$(kdamond_dir 0)/state" on
check "... and the kernel log names the sysctl" \
	sh -c 'dmesg | grep -q perf_event_max_sample_rate'
echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
echo 0 >"$d/freq"
echo 2 >"$d/type"
cat "$TRACING/events/damon/damon_aggregated/id" >"$d/config"
dmesg -c >/dev/null
check "a tracepoint event: EOPNOTSUPP" \
	expect_errno EOPNOTSUPP "$(kdamond_dir 0)/state" on
check "... and the kernel log says it gives no data addresses" \
	sh -c 'dmesg | grep -q "gives no data addresses"'
damon_stop_all

echo "=== the test PMUs are a module: held while sampled, unloaded, loaded again ==="
MOD=damon_perf_test_pmu
KO=/lib/modules/$MOD.ko
check "$MOD is loaded" grep -q "^$MOD " /proc/modules
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr damon_test $((HARDIRQ | 1 << BATCH_SHIFT))
old_type=$(pmu_type damon_test)
BEFORE=$(perf_stats_snapshot)
echo on >"$(kdamond_dir 0)/state"
check "module: DAMON samples from damon_test" poll "$POLL_SECONDS" sampled
check "module: rmmod is refused while DAMON's events exist" fails rmmod "$MOD"
check "module: ... and the PMUs stay" test -e "$PMUS/damon_test"
stop_ctx
stop_workload
check "module: rmmod works once DAMON stopped" poll "$POLL_SECONDS" rmmod "$MOD"
check "module: its PMUs are gone" \
	test ! -e "$PMUS/damon_test" -a ! -e "$PMUS/damon_test_aux"
check "module: its debugfs directory is gone" \
	test ! -e /sys/kernel/debug/damon_test_pmu
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 $$
damon_set_perf 0 type="$old_type" config=$HARDIRQ sample_period="$PERIOD"
check "module: a start on the unloaded PMU's type fails with ENOENT" \
	expect_errno ENOENT "$(kdamond_dir 0)/state" on
damon_stop_all
check "module: insmod loads it again" insmod "$KO"
check "module: its PMUs are back" test -e "$PMUS/damon_test_aux"
# damon_test_aux is declared to the AUX drain again, or the start fails
start_workload -m touch -H 4 -C 32 -s 0
setup_ctx vaddr damon_test_aux $((HARDIRQ | 1 << BATCH_SHIFT))
BEFORE=$(perf_stats_snapshot)
rc=0
echo on >"$(kdamond_dir 0)/state" || rc=1
check "module: DAMON starts on damon_test_aux after the reload" test $rc -eq 0
check "module: ... and matches its records" poll "$POLL_SECONDS" sampled
stop_ctx
stop_workload

finish
