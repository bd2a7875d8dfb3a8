#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the tests of the test PMUs (CONFIG_DAMON_PERF_TEST_PMU):
# testpmu.sh, aux.sh and soak.sh.  Sourced after lib.sh.
# shellcheck disable=SC2034 # the constants are for the tests that source this

PMUS=/sys/bus/event_source/devices
PMU_STATS=/sys/kernel/debug/damon_test_pmu/stats
PMU_PASS=/sys/kernel/debug/damon_test_pmu/pass
# config fields of the test PMUs (their format/ directory says the same)
NMI=3
HARDIRQ=2
SOFTIRQ=1
TASK=0
BATCH_SHIFT=8
PHYS=$((1 << 16))
ONLY_TARGET=$((1 << 19))
NO_CONTEXT=$((1 << 20))
PACKED=$((1 << 21))
# 200 us between interrupts: enough samples, and TCG keeps up; the debug
# kernel, slower, takes a longer one
PERIOD=${TESTPMU_PERIOD:-200000}
# the SPE-like test PMU, the bytes of each record it writes, and of an
# event's AUX area
AUX=damon_test_aux
RECORD=64
AREA=65536
# with PACKED, records are written at their own length: a load of the
# workload's with its context packet, the shortest in a storm, takes 35
PACKED_RECORD=35

pmu_type() {
	cat "$PMUS/$1/type"
}

# pmu_stat NAME: a counter of the test PMUs
pmu_stat() {
	awk -v n="$1" '$1 == n { print $2 }' "$PMU_STATS"
}

# cpu_aux_records: "CPU RECORDS" for each online CPU: the records the
# SPE-like test PMU wrote into that CPU's AUX area so far
cpu_aux_records() {
	local d c

	for d in /sys/devices/system/cpu/cpu[0-9]*; do
		c=${d##*/cpu}
		[ ! -f "$d/online" ] || [ "$(cat "$d/online")" = 1 ] || continue
		echo "$c $(pmu_stat "aux_records_cpu$c")"
	done | sort
}

# cpu_aux_written SINCE: "CPU RECORDS" for each online CPU: the records
# written since SINCE, a file cpu_aux_records wrote, was taken
cpu_aux_written() {
	cpu_aux_records | awk 'NR == FNR { before[$1] = $2; next }
		{ print $1, $2 - before[$1] }' "$1" -
}

# cpus_wrote_more_than N SINCE: every online CPU wrote more than N records
# since SINCE was taken
cpus_wrote_more_than() {
	cpu_aux_written "$2" | awk -v n="$1" '$2 <= n { slow = 1 } END { exit slow }'
}

# storm_ctx PERIOD [BITS]: kdamond 0's context samples the workload
# through the SPE-like PMU, config BITS added, with 16 records of 64 bytes
# (about 40 with PACKED) per hardirq every PERIOD ns, and drains every
# 100 ms: a 64 KiB area is full after 64 interrupts (about 100 packed),
# long before the drain, and the PMU then stays stopped, as arm_spe_pmu
# does, until DAMON enables the event again
storm_ctx() {
	local iv

	setup_ctx vaddr "$AUX" $((HARDIRQ | 16 << BATCH_SHIFT | ${2:-0})) \
		sample_period="$1"
	iv=$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals
	echo 100000 >"$iv/sample_us"
	echo 2000000 >"$iv/aggr_us"
}

# setup_paddr_target: context 0 of kdamond 0 monitors the physical address
# space: the biggest System RAM range, as DAMON_RECLAIM picks it
setup_paddr_target() {
	local t range name s e best=0 start=0 end=0

	t=$(kdamond_dir 0)/contexts/0/targets/0
	echo paddr >"$(kdamond_dir 0)/contexts/0/operations"
	# the biggest System RAM range, as DAMON_RECLAIM picks it
	while IFS=: read -r range name; do
		[ "${name# }" = "System RAM" ] || continue
		s=$((16#${range%-*}))
		e=$((16#${range#*-} + 1))
		if [ $((e - s)) -gt "$best" ]; then
			best=$((e - s)) start=$s end=$e
		fi
	done </proc/iomem
	echo 1 >"$t/regions/nr_regions"
	echo "$end" >"$t/regions/0/end"
	echo "$start" >"$t/regions/0/start"
}

# read_hot_pfns: the physical pages of the workload's hot range, as root
# reads them from pagemap, into /tmp/hot.pfns
read_hot_pfns() {
	python3 - "$WORKLOAD_PID" "$HOT_START" "$HOT_END" >/tmp/hot.pfns <<'PY'
import struct, sys
pid, start, end = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
with open(f"/proc/{pid}/pagemap", "rb") as f:
    for va in range(start, end, 4096):
        f.seek(va // 4096 * 8)
        e = struct.unpack("<Q", f.read(8))[0]
        if e >> 63:
            print(e & ((1 << 55) - 1))
PY
}

# every region DAMON finds accessed holds a hot page, and one is found
hot_phys_found() {
	local s e n a any=0

	tried_regions 0 >/tmp/regions || return 1
	while read -r s e n a; do
		[ "$n" -gt 0 ] || continue
		any=1
		awk -v s="$s" -v e="$e" '$1 * 4096 >= s && $1 * 4096 < e { f = 1; exit }
			END { exit !f }' /tmp/hot.pfns || {
			echo "region $s-$e (nr_accesses $n) holds no hot page"
			return 1
		}
	done </tmp/regions
	[ $any -eq 1 ]
}

# setup_ctx OPS: kdamond 0 with one context monitoring the workload
# (vaddr) or physical memory (paddr), sampled by one event of the test PMU
# PMU with config CONFIG; the rest of the arguments are more fields.
setup_ctx() {
	local ops=$1 pmu=$2 config=$3

	shift 3
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	if [ "$ops" = paddr ]; then
		setup_paddr_target
	fi
	damon_set_perf 0 type="$(pmu_type "$pmu")" config="$config" \
		config1="$CUR_VAR" config2="$WORKLOAD_PID" \
		sample_period="$PERIOD" "$@"
}

# stop_ctx: turn kdamond 0 off and remove it
stop_ctx() {
	sysfs_write_until off "$(kdamond_dir 0)/state" || true
	sysfs_write_until 0 "$DAMON_ADMIN/kdamonds/nr_kdamonds"
}

samples_in_context() {
	grep -c "damon_perf_sample: .* context=$1\$" "$TRACING/trace" || true
}

# mixed_test PMU NAME: vaddr monitoring of the workload through PMU, with
# the mix option (every 4th record has no data address) and hardirq
# delivery, which also samples other tasks and kernel threads: the
# addr_zero, kernel, miss_tgid and match counters all move, and the
# conservation laws hold.  Leaves the counters in BEFORE and AFTER.
mixed_test() {
	local pmu=$1 name=$2 other

	start_workload -m touch -H 4 -C 32 -s 0
	setup_ctx vaddr "$pmu" $((HARDIRQ | 1 << BATCH_SHIFT | 1 << 18))
	BEFORE=$(perf_stats_snapshot)
	echo on >"$(kdamond_dir 0)/state"
	# an other process, so that samples of another tgid are taken
	"$BIN/hotcold" -m touch -H 1 -C 1 -s 0 -i /tmp/other.info &
	other=$!
	check "$name: no address, kernel addresses, other tasks and the workload all seen" \
		poll "$POLL_SECONDS" mixed_moved
	kill "$other"
	wait "$other" || true
	stop_ctx
	AFTER=$(perf_stats_snapshot)
	stop_workload
	echo "addr_zero=$(delta addr_zero) kernel=$(delta kernel) miss_tgid=$(delta miss_tgid) match=$(delta match)"
	check "$name: the conservation laws hold" laws
}

mixed_moved() {
	AFTER=$(perf_stats_snapshot)
	[ "$(delta addr_zero)" -gt 0 ] && [ "$(delta kernel)" -gt 0 ] &&
		[ "$(delta miss_tgid)" -gt 0 ] && [ "$(delta match)" -gt 0 ]
}

# sample_until NAME FOUND...: turn kdamond 0 on and wait until FOUND...
# holds (pass) or the deadline passes (fail, or only a note with
# JUDGE_CONVERGENCE=0: how soon DAMON converges is a matter of speed, which
# the KCSAN and debug kernels do not have); show the hottest regions,
# then stop the kdamond, the trace and the workload.  The counters before
# and after are left in BEFORE and AFTER.
sample_until() {
	local name=$1

	shift
	BEFORE=$(perf_stats_snapshot)
	echo on >"$(kdamond_dir 0)/state"
	if poll "$POLL_SECONDS" "$@"; then
		pass "$name: DAMON finds the hot range"
	elif [ "${JUDGE_CONVERGENCE:-1}" = 0 ]; then
		echo "[NOTE] $name: DAMON did not single out the hot range in ${POLL_SECONDS}s; not judged on this kernel (JUDGE_CONVERGENCE=0)"
	else
		fail "$name: DAMON did not find the hot range"
	fi
	show_regions 3
	stop_ctx
	AFTER=$(perf_stats_snapshot)
	trace_off
	stop_workload
}

# watermarks_deactivate: give the scheme of kdamond 0's context watermarks
# that the free memory, per mille, is above now, so the context is
# deactivated while it stays so; a commit is not taken while deactivated.
# Sets FREE_PM.
watermarks_deactivate() {
	local wm

	wm=$(kdamond_dir 0)/contexts/0/schemes/0/watermarks
	FREE_PM=$(awk '/^MemTotal:/ { t = $2 } /^MemFree:/ { f = $2 }
		END { print int(f * 1000 / t) }' /proc/meminfo)
	echo "free memory: $FREE_PM per mille"
	echo free_mem_rate >"$wm/metric"
	echo 100000 >"$wm/interval_us"
	echo $((FREE_PM - 50)) >"$wm/high"
	echo $((FREE_PM - 100)) >"$wm/mid"
	echo 0 >"$wm/low"
}

# all_bound: every CPU perf_stats shows is BOUND or UNINIT, and one BOUND;
# leaves the states in /tmp/states
all_bound() {
	cpu_states >/tmp/states
	! grep -qvE ' (BOUND|UNINIT)$' /tmp/states && grep -q ' BOUND$' /tmp/states
}
