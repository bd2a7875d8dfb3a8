#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Layer-by-layer test of DAMON's perf event access checks and their
# observability (CONFIG_DAMON_PERF_OBSERVE): start DAMON in perf event mode
# on a workload, then check each pipeline stage through the per-CPU states
# and counters of /sys/kernel/debug/damon/perf_stats.
#
# Exit status: 0 pass, 1 fail, 4 skip (kselftest).

set -euo pipefail

DIR=$(dirname "$(readlink -f "$0")")
# shellcheck source=/dev/null # the kernel tree's kselftest/ktap_helpers.sh
. "$DIR/../kselftest/ktap_helpers.sh"
# shellcheck source=/dev/null # check and sysfs_write, listed in TEST_FILES
. "$DIR/_damon_perf_common.sh"

ADMIN=/sys/kernel/mm/damon/admin
DEBUGFS=/sys/kernel/debug
PERF_STATS=$DEBUGFS/damon/perf_stats
PMU_DEVICES=/sys/bus/event_source/devices
STATES=(UNINIT CREATED BOUND ENABLED RUNNING)

pmu=software
pmu_type=
config=
config1=0
freq=0
period=
sample_freq=100
precise_ip=0
exclude_kernel=1
duration=10
workload=auto
cpus=
outdir=

usage() {
	cat <<EOF
usage: $0 [options]

Start DAMON in perf event mode on a workload and check each stage of the
PMU-to-DAMON pipeline: create, bind and enable (per-CPU states), sampling,
ring, drain, match and update (perf_stats counters).

  --pmu NAME          PMU: "software" or a name under $PMU_DEVICES
                      (default software)
  --pmu-type N        PMU by type number instead of name
  --config N          event config (default: 2, page faults, for software;
                      0 otherwise)
  --config1 N         event config1 (default 0)
  --freq 0|1          1: sample --sample-freq times a second; 0: every
                      --period events (default 0)
  --period N          sample period (default: 1 for software page faults,
                      1000000 for other software events, 10000 otherwise)
  --sample-freq N     samples per second with --freq 1 (default 100)
  --precise-ip N      precise_ip, 0 to 3 (default 0)
  --exclude-kernel 0|1  leave out kernel-mode events (default 1)
  --duration S        seconds to sample (default 10)
  --workload W        auto, stress-ng, stress, dd or fault; auto takes the
                      first present of stress-ng, stress, the fault
                      workload and dd (default auto).  dd touches its
                      buffer's pages for the first time only once, so
                      the software page-fault event sees it only then
  --cpus N            run the workload on the first N CPUs only
  --output DIR        where to keep perf_stats, trace and dmesg output
                      (default: a new directory under /tmp)
  -h, --help          this help

It refuses to run while any kdamond exists, and removes everything it set
up on every exit path.  It traces into a tracing instance of its own, so
the global trace buffer, its size and the global event switches are left
as they are; it unmounts debugfs again if it mounted it.  It needs no
/dev/fd.
EOF
}

die_usage() {
	echo "$0: $*" >&2
	usage >&2
	exit "$KSFT_FAIL"
}

is_num() {
	[[ $1 =~ ^(0x[0-9a-fA-F]+|[0-9]+)$ ]]
}

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	-h|--help)
		usage
		exit 0
		;;
	--pmu|--pmu-type|--config|--config1|--freq|--period|--sample-freq|\
	--precise-ip|--exclude-kernel|--duration|--workload|--cpus|--output)
		[ $# -ge 2 ] || die_usage "$opt needs a value"
		val=$2
		shift 2
		;;
	*)
		die_usage "unknown option $opt"
		;;
	esac
	case $opt in
	--pmu) pmu=$val ;;
	--pmu-type) pmu_type=$val ;;
	--config) config=$val ;;
	--config1) config1=$val ;;
	--freq) freq=$val ;;
	--period) period=$val ;;
	--sample-freq) sample_freq=$val ;;
	--precise-ip) precise_ip=$val ;;
	--exclude-kernel) exclude_kernel=$val ;;
	--duration) duration=$val ;;
	--workload) workload=$val ;;
	--cpus) cpus=$val ;;
	--output) outdir=$val ;;
	esac
	case $opt in
	--pmu|--workload|--output) ;;
	--freq|--exclude-kernel)
		[[ $val =~ ^[01]$ ]] || die_usage "$opt takes 0 or 1" ;;
	*)
		is_num "$val" || die_usage "$opt takes a number, not '$val'" ;;
	esac
done

# ktap COMMAND...: a ktap_helpers.sh call, with pathname expansion off:
# they echo the test name unquoted, and a name such as "damon_perf_*
# tracepoints" would turn into the files of the current directory.
ktap() {
	set -f
	"$@"
	set +f
}

# Output: [PASS]/[FAIL]/[SKIP] lines for people, KTAP lines for runners.
pass() {
	echo "[PASS] $*"
	ktap ktap_test_pass "$*"
}

fail() {
	echo "[FAIL] $*"
	ktap ktap_test_fail "$*"
}

skip() {
	echo "[SKIP] $*"
	ktap ktap_test_skip "$*"
}

layer() {
	echo
	echo "--- $* ---"
}

# finish: the totals, and the kselftest exit status.
finish() {
	echo "1..$((KTAP_TESTNO - 1))"
	ktap_print_totals
	echo "# output kept in $outdir"
	if [ "$KTAP_CNT_FAIL" -gt 0 ]; then
		exit "$KSFT_FAIL"
	elif [ "$KTAP_CNT_SKIP" -gt 0 ]; then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}

# skip_rest REASON: the remaining layers cannot run; end as skipped.
skip_rest() {
	skip "$*"
	finish
}

# Cleanup of everything this script set up, on every exit path.
created_kdamond=0
workload_pid=
mounted_debugfs=0
instance=

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local e pids

	trap - EXIT INT TERM
	if [ -n "$workload_pid" ]; then
		# stress-ng and stress work in child processes
		mapfile -t pids <<<"$(descendants "$workload_pid")"
		kill "${pids[@]}" "$workload_pid" 2>/dev/null || true
		wait "$workload_pid" 2>/dev/null || true
	fi
	if [ "$created_kdamond" = 1 ]; then
		if [ "$(cat "$ADMIN/kdamonds/0/state" 2>/dev/null)" = on ]; then
			sysfs_write off "$ADMIN/kdamonds/0/state" || true
		fi
		sysfs_write 0 "$ADMIN/kdamonds/nr_kdamonds" || true
	fi
	if [ -n "$instance" ]; then
		for e in "$instance"/events/damon/damon_perf_*/enable; do
			echo 0 >"$e" 2>/dev/null || true
		done
		rmdir "$instance" 2>/dev/null || true
	fi
	if [ "$mounted_debugfs" = 1 ]; then
		umount "$DEBUGFS" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'echo "# interrupted"; exit 130' INT TERM

# perf_stats access
snapshot() {
	cat "$PERF_STATS"
}

# counter SNAPSHOT NAME: a table counter, or a key=value of the line below
counter() {
	local v

	v=$(awk -F'│' -v n="$2" '{ gsub(/ /, "", $2); gsub(/ /, "", $3) }
		NF == 4 && $2 == n { print $3 }' <<<"$1")
	if [ -z "$v" ]; then
		v=$(grep -o "$2=[0-9]*" <<<"$1" | head -n 1 | cut -d= -f2) || true
	fi
	echo "${v:-0}"
}

# delta NAME: counter NAME after the run minus before it
delta() {
	echo $(($(counter "$after" "$1") - $(counter "$before" "$1")))
}

# max_state SNAPSHOT: the most advanced per-CPU state (index in STATES), or
# -1 if any CPU is in ERROR
max_state() {
	local st i max=0

	while read -r st; do
		if [ "$st" = ERROR ]; then
			echo -1
			return
		fi
		for i in "${!STATES[@]}"; do
			if [ "${STATES[$i]}" = "$st" ] && [ "$i" -gt "$max" ]; then
				max=$i
			fi
		done
	done <<<"$(sed -n 's/.*CPU[0-9]*: st=\([A-Z]*\).*/\1/p' <<<"$1")"
	echo "$max"
}

# children PID: the processes PID forked, in /proc order
# shellcheck disable=SC2317 # run by cleanup too
children() {
	local stat ppid pid

	for stat in /proc/[0-9]*/stat; do
		# field 4 is the parent pid; comm (field 2) has no spaces here
		read -r pid _ _ ppid _ <"$stat" 2>/dev/null || continue
		if [ "$ppid" = "$1" ]; then
			echo "$pid"
		fi
	done
}

# descendants PID: every process forked from PID, directly or not
# shellcheck disable=SC2317 # run by cleanup
descendants() {
	local pid

	for pid in $(children "$1"); do
		echo "$pid"
		descendants "$pid"
	done
}

# descendant PID: the most deeply forked first descendant of PID (the
# process that does the work in stress-ng and stress), or PID itself
descendant() {
	local pid=$1 child

	while :; do
		child=$(children "$pid")
		child=${child%%$'\n'*}
		[ -n "$child" ] || break
		pid=$child
	done
	echo "$pid"
}

start_workload() {
	local run=() info=$outdir/workload.info

	if [ "$workload" = auto ]; then
		for workload in stress-ng stress fault dd; do
			case $workload in
			fault) if [ -x "$DIR/damon_perf_hotcold" ]; then break; fi ;;
			*) if command -v "$workload" >/dev/null; then break; fi ;;
			esac
		done
	fi
	if [ -n "$cpus" ]; then
		run=(taskset -c "0-$((cpus - 1))")
	fi
	case $workload in
	stress-ng)
		"${run[@]}" stress-ng --vm 1 --vm-bytes 64M --timeout "$((duration + 30))" \
			>"$outdir/workload.out" 2>&1 &
		;;
	stress)
		"${run[@]}" stress --vm 1 --vm-bytes 64M --timeout "$((duration + 30))" \
			>"$outdir/workload.out" 2>&1 &
		;;
	fault)
		"${run[@]}" "$DIR/damon_perf_hotcold" -m fault -H 4 -C 32 \
			-s "$((duration + 30))" -i "$info" >"$outdir/workload.out" 2>&1 &
		;;
	dd)
		"${run[@]}" dd if=/dev/zero of=/dev/null bs=16M \
			>"$outdir/workload.out" 2>&1 &
		;;
	*)
		die_usage "unknown or unavailable workload '$workload'"
		;;
	esac
	workload_pid=$!
	sleep 1
	target_pid=$(descendant "$workload_pid")
	if ! kill -0 "$target_pid" 2>/dev/null; then
		return 1
	fi
	echo "# workload: $workload, target pid $target_pid" | tee "$outdir/run"
}

# ---------------------------------------------------------------------
ktap_print_header
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d /tmp/damon_perf_obs.XXXXXX)
fi
mkdir -p "$outdir" || exit "$KSFT_FAIL"
echo "# output directory: $outdir"

if [ "$(id -u)" -ne 0 ]; then
	skip_rest "must run as root"
fi

layer "Layer 0: Environment"
if [ ! -d "$ADMIN" ]; then
	skip_rest "CONFIG_DAMON_SYSFS=y (no $ADMIN)"
fi
pass "CONFIG_DAMON_SYSFS=y"
if ! grep -q " $DEBUGFS debugfs " /proc/mounts &&
   mount -t debugfs none "$DEBUGFS" 2>/dev/null; then
	mounted_debugfs=1
fi
tracing=$DEBUGFS/tracing
[ -d /sys/kernel/tracing/events ] && tracing=/sys/kernel/tracing
if [ ! -e "$PERF_STATS" ]; then
	skip_rest "CONFIG_DAMON_PERF_OBSERVE=y (no $PERF_STATS)"
fi
pass "CONFIG_DAMON_PERF_OBSERVE=y"
pass "debugfs perf_stats exists"
if [ -d "$tracing/events/damon/damon_perf_sample" ] &&
   [ -d "$tracing/instances" ]; then
	pass "damon_perf_* tracepoints exist"
	have_trace=1
else
	skip "damon_perf_* tracepoints (no tracefs with events and instances)"
	have_trace=0
fi

nr=$(cat "$ADMIN/kdamonds/nr_kdamonds")
if [ "$nr" != 0 ]; then
	skip_rest "$nr kdamond(s) already exist; not touching them (set nr_kdamonds to 0 first)"
fi

if [ -n "$pmu_type" ]; then
	type=$pmu_type
	pmu="type $pmu_type"
	if ! grep -qx "$pmu_type" "$PMU_DEVICES"/*/type 2>/dev/null; then
		skip_rest "no PMU of type $pmu_type under $PMU_DEVICES"
	fi
elif [ "$pmu" = software ]; then
	type=1
elif [ -r "$PMU_DEVICES/$pmu/type" ]; then
	type=$(cat "$PMU_DEVICES/$pmu/type")
else
	skip_rest "PMU '$pmu' not found under $PMU_DEVICES"
fi
pass "PMU $pmu available (type $type)"
if [ -z "$config" ]; then
	config=0
	if [ "$type" = 1 ]; then
		config=2
	fi
fi
if [ -z "$period" ]; then
	if [ "$type" = 1 ] && [ "$config" = 2 ]; then
		period=1
	elif [ "$type" = 1 ]; then
		period=1000000
	else
		period=10000
	fi
fi

# ---------------------------------------------------------------------
if ! start_workload; then
	fail "workload $workload started"
	finish
fi

kd=$ADMIN/kdamonds/0
ctx=$kd/contexts/0
ev=$ctx/monitoring_attrs/sample/perf_events
echo 1 >"$ADMIN/kdamonds/nr_kdamonds"
created_kdamond=1
echo 1 >"$kd/contexts/nr_contexts"
if ! grep -qw vaddr "$ctx/avail_operations"; then
	skip_rest "CONFIG_DAMON_VADDR=y (vaddr is not in avail_operations)"
fi
echo vaddr >"$ctx/operations"
echo 1 >"$ctx/targets/nr_targets"
echo "$target_pid" >"$ctx/targets/0/pid_target"
# vaddr lays out the target's regions at the start and then every update_us,
# 60 s by default: longer than the run.  stress and stress-ng unmap their
# buffer and map it again in a loop; a layout taken while it is unmapped
# leaves it in a gap between the regions, where no record matches.  Lay them
# out again every 100 ms, the default aggregation interval.
echo 100000 >"$ctx/monitoring_attrs/intervals/update_us"
echo 1 >"$ev/nr_perf_events"
for kv in type="$type" config="$config" config1="$config1" freq="$freq" \
	  sample_period="$period" sample_freq="$sample_freq" \
	  precise_ip="$precise_ip" exclude_kernel="$exclude_kernel"; do
	if ! echo "${kv#*=}" >"$ev/0/${kv%%=*}" 2>"$outdir/sysfs.err"; then
		fail "perf event attribute ${kv%%=*}=${kv#*=} accepted"
		finish
	fi
done
echo "# event: type=$type config=$config config1=$config1 freq=$freq" \
	"period=$period sample_freq=$sample_freq precise_ip=$precise_ip" \
	"exclude_kernel=$exclude_kernel" | tee -a "$outdir/run"

# A tracing instance of our own: its buffer and event switches are ours.
if [ "$have_trace" = 1 ]; then
	instance=$tracing/instances/damon_perf_obs_test.$$
	if mkdir "$instance" 2>/dev/null; then
		for e in damon_perf_sample damon_perf_ring_overflow \
			 damon_perf_report_missed damon_perf_drain \
			 damon_perf_aux_truncated; do
			echo 1 >"$instance/events/damon/$e/enable"
		done
	else
		instance=
		skip "a tracing instance of our own (mkdir failed)"
		have_trace=0
	fi
fi

dmesg >"$outdir/dmesg.before" 2>/dev/null || true
before=$(snapshot)
echo "$before" >"$outdir/perf_stats.before"

layer "Layer 1: Create (kdamond start)"
if ! echo on >"$kd/state" 2>"$outdir/start.err"; then
	why=$(sed 's/.*: //' "$outdir/start.err")
	{ dmesg 2>/dev/null || true; } | grep 'damon-perf' | tail -n 3 | sed 's/^/# /' || true
	skip_rest "the kernel refused the perf event of $pmu: $why"
fi
pass "kdamond started with the perf event"

# Sample for the duration, recording the most advanced per-CPU state seen.
best=0
end=$((SECONDS + duration))
while [ $SECONDS -lt "$end" ]; do
	s=$(max_state "$(snapshot)")
	if [ "$s" -lt 0 ]; then
		best=-1
		break
	fi
	[ "$s" -le "$best" ] || best=$s
	sleep 0.5
done
during=$(snapshot)
echo "$during" >"$outdir/perf_stats.during"
sysfs_write off "$kd/state" || [ "$(cat "$kd/state")" = off ]
for _ in $(seq 100); do
	if [ "$(cat "$kd/pid")" = -1 ]; then
		break
	fi
	sleep 0.1
done
after=$(snapshot)
echo "$after" >"$outdir/perf_stats.after"
dmesg >"$outdir/dmesg.after" 2>/dev/null || true
{ diff "$outdir/dmesg.before" "$outdir/dmesg.after" || true; } |
	sed -n 's/^> //p' >"$outdir/dmesg.delta"
if [ "$have_trace" = 1 ]; then
	cp "$instance/trace" "$outdir/trace"
fi

layer "Layer 2-3: Enable & Run (via per-CPU state)"
if [ "$best" -lt 0 ]; then
	fail "per-CPU states: a CPU went to ERROR"
else
	check "Event Created (max per-CPU state >= CREATED)" test "$best" -ge 1
	check "Event Bound (max per-CPU state >= BOUND)" test "$best" -ge 2
	check "Event Enabled (max per-CPU state >= ENABLED)" test "$best" -ge 3
	echo "Max per-CPU state: ${STATES[$best]}"
fi

layer "Layer 4: Sampling (Callback)"
cb=$(delta callback)
check "Sampling: $cb callbacks received" test "$cb" -gt 0
echo "Callback breakdown: valid=$(delta valid) null=$(delta null)" \
	"addr_zero=$(delta addr_zero) kernel=$(delta kernel)" \
	"inv_phys=$(delta inv_phys)"
classified=$(($(delta valid) + $(delta null) + $(delta addr_zero) +
	      $(delta kernel) + $(delta inv_phys)))
check "Sampling: every callback classified" test "$cb" -eq "$classified"
# a PMU that writes an AUX area (ARM SPE): its records, which the kdamond
# decodes in process context, count as callbacks
aux=$(delta aux_records)
echo "AUX: records=$aux malformed=$(delta aux_malformed)" \
	"truncated=$(delta aux_truncated) collisions=$(delta aux_collisions)"
if [ "$aux" -gt 0 ]; then
	check "Sampling: AUX records counted as callbacks" test "$cb" -ge "$aux"
	if [ "$have_trace" = 1 ]; then
		n=$(grep -c 'damon_perf_sample: .* context=[1-3]$' \
			"$outdir/trace") || true
		check "Sampling: AUX records handled in process context" \
			test "$n" -eq 0
	fi
fi
if [ "$cb" -gt 0 ] && [ "$(delta valid)" -eq 0 ]; then
	echo "# $pmu gives no sample addresses DAMON can use" \
		"(addr_zero=$(delta addr_zero) of $cb callbacks)"
	skip_rest "Layers 5-6: the PMU gives no sample addresses"
fi

layer "Layer 5: Ring"
check "Ring: enqueue > 0" test "$(delta enqueue)" -gt 0
check "Ring: dequeue > 0" test "$(delta dequeue)" -gt 0
echo "Ring: enqueue=$(delta enqueue) dequeue=$(delta dequeue)" \
	"overflow=$(delta overflow) ring_peak=$(counter "$after" ring_peak)"
check "Ring: valid = enqueue + overflow + report_missed" test "$(delta valid)" -eq \
	$(($(delta enqueue) + $(delta overflow) + $(delta report_missed)))
check "Ring: every enqueued record dequeued" test "$(delta enqueue)" -eq "$(delta dequeue)"

layer "Layer 6: Drain & Match"
if [ "$workload" = dd ] && [ "$type" = 1 ] && [ "$config" = 2 ] &&
   [ "$(delta match)" -eq 0 ]; then
	# dd faults its buffer in once, when it starts, and never again
	skip "Drain & Match: dd took no page faults while sampled"
	skip "Update: no samples of dd to update regions from"
elif [ "$(delta aux_records)" -gt 0 ] && [ "$(delta match)" -eq 0 ] &&
     [ "$(delta miss_tgid)" -eq "$(delta dequeue)" ] &&
     grep -q 'records name no task' "$outdir/dmesg.after"; then
	# an SPE record names its task only in its context packet, which
	# arm64 writes with CONFIG_PID_IN_CONTEXTIDR=y; the kernel says so
	why="the PMU's records name no task (arm64: CONFIG_PID_IN_CONTEXTIDR=y)"
	skip "Drain & Match: $why; see the kernel log"
	skip "Update: $why"
else
	check "Drain & Match: $(delta match) matched" test "$(delta match)" -gt 0
	check "Update: $(delta update) region updates" test "$(delta update)" -gt 0
fi
echo "Misses: miss_tgid=$(delta miss_tgid) miss_region=$(delta miss_region)" \
	"miss_bound=$(delta miss_bound)"
check "Drain: dequeue = match + miss_tgid + miss_region + miss_bound" \
	test "$(delta dequeue)" -eq $(($(delta match) + $(delta miss_tgid) + \
	$(delta miss_region) + $(delta miss_bound)))
check "Update: update <= match" test "$(delta update)" -le "$(delta match)"
finish
