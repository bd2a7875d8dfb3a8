#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A churn soak of the perf event mode: SOAK_STARTS start/stop cycles of a
# kdamond whose event alternates between the software page-fault event and
# the test PMU's NMI delivery, then SOAK_HOTPLUG CPU offline/online cycles
# under a kdamond sampling with the test PMU in NMI delivery, then
# SOAK_MIXED (default 0) start/commit/stop cycles while CPUs 1-3 go offline
# and online again all the time, then, for SOAK_AUX_SECONDS (default 0), an
# AUX storm: the SPE-like test PMU fills every CPU's area long before each
# drain, stops at the overrun as arm_spe_pmu does, and every CPU must write
# on in every 30-second window.  At the end
# perf_stats must be idle again, no DAMON event may be left, the counter
# relations must hold, and kmemleak (if built) must find nothing.  Prints
# one "soak: ..." summary line; exits non-zero on any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest/tests/testpmu-lib.sh
. "$(dirname "$0")/testpmu-lib.sh"

SOAK_STARTS=${SOAK_STARTS:-200}
SOAK_HOTPLUG=${SOAK_HOTPLUG:-50}
SOAK_MIXED=${SOAK_MIXED:-0}
SOAK_AUX_SECONDS=${SOAK_AUX_SECONDS:-0}
# the test PMU's period, in ns: 50 us, four times testpmu.sh's rate
SOAK_PERIOD=${SOAK_PERIOD:-50000}
# how long each window of the AUX storm is
AUX_WINDOW=30

CPUS=/sys/devices/system/cpu
PF=(type=1 config=2 sample_period=1)

starts=0
hotplugs=0
mixed=0
aux_windows=0
HOTPLUGGER=
trap 'stop_hotplugger; stop_workload; damon_stop_all; all_cpus_online' EXIT

# cpu_state N: the perf_stats state of CPU N; a CPU without a line is UNINIT
cpu_state() {
	local s

	s=$(cpu_states | awk -v c="$(printf 'CPU%02u' "$1")" '$1 == c { print $2 }')
	echo "${s:-UNINIT}"
}

# cpu_in STATES N: CPU N's state matches the extended regex STATES
cpu_in() {
	[[ $(cpu_state "$2") =~ ^($1)$ ]]
}

# some_cpu_in STATES: at least one CPU is in a state matching STATES
some_cpu_in() {
	cpu_states | grep -qE " ($1)\$"
}

# not_uninit: the number of per-CPU lines of perf_stats whose state is not
# UNINIT, i.e. CPUs on which some context still holds events (or NOPMU)
not_uninit() {
	cpu_states | grep -cv ' UNINIT$' || true
}

all_uninit() {
	[ "$(not_uninit)" -eq 0 ]
}

all_running() {
	[ "$(cpu_states | grep -c ' RUNNING$')" -eq "$(nproc)" ]
}

kd_state() {
	cat "$(kdamond_dir 0)/state"
}

# set_event I: the event of start cycle I, the page-fault event on even
# cycles and the test PMU in NMI delivery on odd ones
set_event() {
	if [ $(($1 % 2)) -eq 0 ]; then
		damon_set_perf 0 "${PF[@]}"
	else
		damon_set_perf 0 type="$DT" config=$((NMI | 1 << BATCH_SHIFT)) \
			config1="$CUR_VAR" config2="$WORKLOAD_PID" \
			sample_period="$SOAK_PERIOD"
	fi
}

# fast DAMON intervals, so that drains come often
fast_intervals() {
	local iv

	iv=$(kdamond_dir 0)/contexts/0/monitoring_attrs/intervals
	echo 1000 >"$iv/sample_us"
	echo 20000 >"$iv/aggr_us"
}

# one_start I: start, see a sample arrive, stop, see the events released
one_start() {
	local kd what

	kd=$(kdamond_dir 0)
	what=$([ $(($1 % 2)) -eq 0 ] && echo page-fault || echo damon_test-NMI)
	set_event "$1"
	if ! sysfs_write on "$kd/state"; then
		echo "start $1 ($what): on refused"
		return 1
	fi
	if [ "$(kd_state)" != on ]; then
		echo "start $1 ($what): state is $(kd_state) after on"
		return 1
	fi
	# RUNNING: a sample arrived on some CPU
	if ! poll "$POLL_SECONDS" some_cpu_in RUNNING; then
		echo "start $1 ($what): no CPU reached RUNNING"
		cpu_states
		return 1
	fi
	if [ "$(kd_state)" != on ]; then
		echo "start $1 ($what): the kdamond stopped by itself"
		return 1
	fi
	if ! sysfs_write off "$kd/state"; then
		echo "start $1 ($what): off refused"
		return 1
	fi
	if [ "$(kd_state)" != off ]; then
		echo "start $1 ($what): state is $(kd_state) after off"
		return 1
	fi
	if ! poll "$POLL_SECONDS" all_uninit; then
		echo "start $1 ($what): events left after off"
		cpu_states
		return 1
	fi
}

# one_hotplug I: take CPU 1 + (I % 3) offline and online again while the
# kdamond samples; its events go and come back, the kdamond stays on
one_hotplug() {
	local cpu=$((1 + $1 % 3))

	if ! echo 0 >"$CPUS/cpu$cpu/online"; then
		echo "hotplug $1: cpu$cpu offline refused"
		return 1
	fi
	if ! poll "$POLL_SECONDS" cpu_in UNINIT "$cpu"; then
		echo "hotplug $1: cpu$cpu offline but its state is $(cpu_state "$cpu")"
		return 1
	fi
	if [ "$(kd_state)" != on ]; then
		echo "hotplug $1: the kdamond stopped with cpu$cpu offline"
		return 1
	fi
	if ! echo 1 >"$CPUS/cpu$cpu/online"; then
		echo "hotplug $1: cpu$cpu online refused"
		return 1
	fi
	if ! poll "$POLL_SECONDS" cpu_in 'ENABLED|RUNNING' "$cpu"; then
		echo "hotplug $1: cpu$cpu online, its events did not come back ($(cpu_state "$cpu"))"
		cpu_states
		return 1
	fi
	if [ "$(kd_state)" != on ]; then
		echo "hotplug $1: the kdamond stopped after cpu$cpu came back"
		return 1
	fi
}

# hotplugger: take CPUs 1-3 offline and online again, in turn, until
# /tmp/soak.stop exists; count the cycles and the refusals
hotplugger() {
	local i=0 c

	while [ ! -e /tmp/soak.stop ]; do
		c=$((1 + i % 3))
		i=$((i + 1))
		echo 0 >"$CPUS/cpu$c/online" || echo "offline cpu$c refused" >>/tmp/soak.hperr
		echo 1 >"$CPUS/cpu$c/online" || echo "online cpu$c refused" >>/tmp/soak.hperr
		echo "$i" >/tmp/soak.hpcount
	done
}

stop_hotplugger() {
	[ -n "$HOTPLUGGER" ] || return 0
	touch /tmp/soak.stop
	wait "$HOTPLUGGER" || true
	HOTPLUGGER=
}

# one_mixed I: start with the event of cycle I, commit the other event,
# stop; the events are released even though CPUs come and go meanwhile
one_mixed() {
	local kd d

	kd=$(kdamond_dir 0)
	d=$(perf_dir 0)/0
	set_event "$1"
	if ! sysfs_write on "$kd/state"; then
		echo "mixed $1: on refused"
		return 1
	fi
	if [ $(($1 % 2)) -eq 0 ]; then
		echo "$DT" >"$d/type"
		echo $((NMI | 1 << BATCH_SHIFT)) >"$d/config"
		echo "$SOAK_PERIOD" >"$d/sample_period"
	else
		echo 1 >"$d/type"
		echo 2 >"$d/config"
		echo 1 >"$d/sample_period"
	fi
	if ! sysfs_write commit "$kd/state" || [ "$(kd_state)" != on ]; then
		echo "mixed $1: commit refused, or the kdamond stopped ($(kd_state))"
		return 1
	fi
	if ! sysfs_write off "$kd/state" || [ "$(kd_state)" != off ]; then
		echo "mixed $1: off refused ($(kd_state))"
		return 1
	fi
	if ! poll "$POLL_SECONDS" all_uninit; then
		echo "mixed $1: events left after off"
		cpu_states
		return 1
	fi
}

# kernel_reports: lines of the kernel log that boot.sh's scan would flag
# Data race reports are left to boot.sh, which in the KCSAN kernel judges
# only those that name DAMON.
kernel_reports() {
	dmesg | grep -E 'Kernel panic|Oops[:]|BUG[:]|WARNING[:]|cut here|KASAN[:]|UBSAN[:]|general protection fault|circular locking|recursive locking|inconsistent lock state|blocked for more than|suspected memory leak|Call Trace:' |
		grep -cv 'BUG: KCSAN: ' || true
}

DT=$(cat "$PMUS/damon_test/type")
# forget what boot left behind; only the soak's leaks count
kmemleak_clear
BEFORE=$(perf_stats_snapshot)
check "perf_stats is idle before the soak" all_uninit
t0=$SECONDS

echo "=== part A: $SOAK_STARTS start/stop cycles (page-fault / damon_test NMI, period ${SOAK_PERIOD}ns) ==="
start_workload -m fault -H 4 -C 32 -s 0
sysfs_write 1 "$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
fast_intervals
ok=1
for i in $(seq 0 $((SOAK_STARTS - 1))); do
	if ! one_start "$i"; then
		ok=0
		break
	fi
	starts=$((starts + 1))
	[ $((starts % 50)) -ne 0 ] || echo "  $starts starts in $((SECONDS - t0))s"
done
# a failed cycle may leave the kdamond on
[ "$(kd_state)" = off ] || sysfs_write off "$(kdamond_dir 0)/state"
check "part A: $starts of $SOAK_STARTS start/stop cycles, each on, sampling, off and released" \
	test $ok -eq 1
echo "part A took $((SECONDS - t0))s"

echo "=== part B: $SOAK_HOTPLUG CPU offline/online cycles under damon_test NMI sampling ==="
t1=$SECONDS
set_event 1
rc=0
sysfs_write on "$(kdamond_dir 0)/state" || rc=1
check "part B: the kdamond starts" test $rc -eq 0
ok=0
if [ $rc -eq 0 ] && poll "$POLL_SECONDS" all_running; then
	ok=1
fi
check "part B: every CPU is sampling (RUNNING)" test $ok -eq 1
for i in $(seq 0 $((SOAK_HOTPLUG - 1))); do
	[ $ok -eq 1 ] || break
	if ! one_hotplug "$i"; then
		ok=0
		break
	fi
	hotplugs=$((hotplugs + 1))
	[ $((hotplugs % 10)) -ne 0 ] || echo "  $hotplugs hotplug cycles in $((SECONDS - t1))s"
done
check "part B: $hotplugs of $SOAK_HOTPLUG offline/online cycles, the CPU's events back each time, the kdamond on" \
	test $ok -eq 1
cpu_states
echo "part B took $((SECONDS - t1))s"

if [ "$SOAK_MIXED" -gt 0 ]; then
	echo "=== part C: $SOAK_MIXED start/commit/stop cycles under constant CPU hotplug ==="
	t2=$SECONDS
	[ "$(kd_state)" = off ] || sysfs_write off "$(kdamond_dir 0)/state"
	rm -f /tmp/soak.stop /tmp/soak.hperr /tmp/soak.hpcount
	hotplugger &
	HOTPLUGGER=$!
	ok=1
	for i in $(seq 0 $((SOAK_MIXED - 1))); do
		if ! one_mixed "$i"; then
			ok=0
			break
		fi
		mixed=$((mixed + 1))
		[ $((mixed % 20)) -ne 0 ] || echo "  $mixed cycles in $((SECONDS - t2))s"
	done
	stop_hotplugger
	all_cpus_online
	echo "part C: $(cat /tmp/soak.hpcount 2>/dev/null || echo 0) hotplug cycles meanwhile"
	check "part C: $mixed of $SOAK_MIXED start/commit/stop cycles during CPU hotplug" \
		test $ok -eq 1
	check "part C: every CPU offline and online was taken" \
		test ! -s /tmp/soak.hperr
	echo "part C took $((SECONDS - t2))s"
fi

if [ "$SOAK_AUX_SECONDS" -gt 0 ]; then
	echo "=== part D: an AUX storm of ${SOAK_AUX_SECONDS}s, in ${AUX_WINDOW}-second windows ==="
	t3=$SECONDS
	[ "$(kd_state)" = off ] || sysfs_write off "$(kdamond_dir 0)/state"
	stop_workload
	start_workload -m touch -H 4 -C 32 -s 0
	storm_ctx "$SOAK_PERIOD"
	AUX_BEFORE=$(perf_stats_snapshot)
	written=$(pmu_stat aux_records)
	aux_starts=$(pmu_stat aux_starts)
	rc=0
	sysfs_write on "$(kdamond_dir 0)/state" || rc=1
	check "part D: the kdamond starts" test $rc -eq 0
	nr_windows=$(((SOAK_AUX_SECONDS + AUX_WINDOW - 1) / AUX_WINDOW))
	ok=$((1 - rc))
	for i in $(seq 1 "$nr_windows"); do
		[ $ok -eq 1 ] || break
		cpu_aux_records >/tmp/soak-aux.before
		sleep "$AUX_WINDOW"
		# more than an area's worth: the CPU overran and wrote on
		if ! cpus_wrote_more_than $((AREA / RECORD)) /tmp/soak-aux.before ||
				[ "$(kd_state)" != on ]; then
			echo "window $i: a CPU wrote no more than one area's worth, or the kdamond stopped ($(kd_state))"
			cpu_aux_written /tmp/soak-aux.before
			cpu_states
			ok=0
			break
		fi
		aux_windows=$i
		echo "  window $i: records per CPU: $(cpu_aux_written /tmp/soak-aux.before |
			awk '{ printf "%s%s=%d", sep, $1, $2; sep = " " }')"
	done
	check "part D: every CPU wrote more than an area's worth in each of $aux_windows of $nr_windows windows" \
		test $ok -eq 1
	sysfs_write off "$(kdamond_dir 0)/state" || true
	AFTER=$(perf_stats_snapshot)
	written=$(($(pmu_stat aux_records) - written))
	aux_starts=$(($(pmu_stat aux_starts) - aux_starts))
	truncated=$(delta aux_truncated "$AUX_BEFORE")
	echo "part D: written $written, decoded $(delta aux_records "$AUX_BEFORE")," \
		"truncations $truncated, pmu->start() calls $aux_starts"
	# more than one overrun per CPU and window, on average
	check "part D: the areas overran, again and again ($truncated truncations)" \
		test "$truncated" -gt $((nr_windows * $(nproc)))
	check "part D: each truncation was followed by a pmu->start()" \
		test "$aux_starts" -gt "$truncated"
	check "part D: every record written was decoded, none malformed" \
		test "$(delta aux_records "$AUX_BEFORE")" -eq "$written" -a \
		"$(delta aux_malformed "$AUX_BEFORE")" -eq 0
	echo "part D took $((SECONDS - t3))s"
fi

echo "=== the end: everything stopped ==="
all_cpus_online
damon_stop_all
stop_workload
check "no kdamond left" \
	test "$(cat "$DAMON_ADMIN/kdamonds/nr_kdamonds")" = 0
check "perf_stats is idle: every CPU UNINIT" poll "$POLL_SECONDS" all_uninit
cat "$PERF_STATS"
events_left=$(not_uninit)
# The test PMU counts no live events; what it can show is that no event of
# it is still firing: its interrupt count stands still once all is stopped.
irqs=$(pmu_stat interrupts)
sleep 2
irqs=$(($(pmu_stat interrupts) - irqs))
check "the test PMU makes no interrupt once stopped ($irqs in 2 s)" test "$irqs" -eq 0
AFTER=$(perf_stats_snapshot)
check "the conservation laws hold" laws
check "no illegal event state change ($(delta illegal_state_changes))" \
	test "$(delta illegal_state_changes)" -eq 0
check "no report missed ($(delta report_missed))" test "$(delta report_missed)" -eq 0
check "samples were taken and matched ($(delta match))" test "$(delta match)" -gt 0
cat "$PMU_STATS"

leaks=$(kmemleak_leaks)
if [ "$leaks" = n/a ]; then
	echo "no $KMEMLEAK in this kernel: leaks not checked"
else
	check "kmemleak found no leaks ($leaks)" test "$leaks" -eq 0
fi
reports=$(kernel_reports)
[ "$reports" -eq 0 ] || dmesg | grep -E 'WARNING|BUG|KASAN|Call Trace' | head -n 20
check "the kernel log has no report ($reports lines)" test "$reports" -eq 0
echo "soak took $((SECONDS - t0))s"

echo "soak: starts=$starts hotplug=$hotplugs mixed=$mixed aux_windows=$aux_windows reports=$reports leaks=$leaks events_left=$events_left"
finish
