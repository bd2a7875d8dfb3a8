#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# DAMON access checks from perf event samples, in the booted kernel: the
# sysfs files and their validation, the software page-fault event finding
# a hot range, cpu-clock finding nothing, commit, CPU hotplug and two
# kdamonds at once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workloads; damon_stop_all; online_all_cpus' EXIT

PF=(type=1 config=2 sample_period=1)	# software page faults, every one
CPU_CLOCK=(type=1 config=0 sample_period=1000000)
EXTRA_PIDS=()

stop_workloads() {
	local p

	stop_workload
	for p in "${EXTRA_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	EXTRA_PIDS=()
}

online_all_cpus() {
	local c

	for c in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[ "$(cat "$c")" = 1 ] || echo 1 >"$c"
	done
}

reset() {
	stop_workloads
	damon_stop_all
}

case_sysfs_layout() {
	local d f

	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 $$
	d=$(perf_dir 0)
	check "perf_events directory exists, no events by default" \
		test "$(cat "$d/nr_perf_events")" = 0
	echo 1 >"$d/nr_perf_events"
	for f in type config config1 config2 freq sample_freq sample_period \
			sample_phys_addr precise_ip exclude_kernel exclude_hv; do
		if [ ! -f "$d/0/$f" ]; then
			fail "perf_events/0/$f exists"
			return
		fi
		if [ "$(stat -c %a "$d/0/$f")" != 600 ]; then
			fail "perf_events/0/$f is mode 600"
			return
		fi
	done
	pass "perf_events/0/ has all eleven files, mode 600"
	check "defaults: software page faults, exclude_kernel=1" \
		test "$(cat "$d/0/type") $(cat "$d/0/config") $(cat "$d/0/exclude_kernel")" = "1 2 1"
	check "an unprivileged user cannot read the files (EACCES)" \
		nobody_gets EACCES read "$d/0/type"
	check "an unprivileged user cannot write the files (EACCES)" \
		nobody_gets EACCES write "$d/0/type" 4
	check "nor nr_perf_events" nobody_gets EACCES write "$d/nr_perf_events" 2
}

case_bad_values() {
	local d ok=1 spec file value before

	d=$(perf_dir 0)
	for spec in type=-1 type=4294967296 type=abc config=18446744073709551616 \
			config=0x freq=2 freq=yes sample_freq=-5 sample_period=1.5 \
			sample_phys_addr=2 precise_ip=4 exclude_kernel=2 \
			exclude_hv=-1 config1=x config2='1 2'; do
		file=$d/0/${spec%%=*}
		value=${spec#*=}
		before=$(cat "$file")
		if ! expect_errno EINVAL "$file" "$value" ||
				[ "$(cat "$file")" != "$before" ]; then
			ok=0
		fi
	done
	check "every bad field value gets EINVAL and changes nothing" test $ok = 1
	ok=1
	for value in -1 33 abc; do
		expect_errno EINVAL "$d/nr_perf_events" "$value" || ok=0
	done
	check "bad nr_perf_events values get EINVAL" test $ok = 1
	check "nr_perf_events is unchanged" test "$(cat "$d/nr_perf_events")" = 1
}

# refuse_on ERRNO DESCRIPTION FIELD=VALUE...: turning on fails with ERRNO
refuse_on() {
	local want=$1 desc=$2 kd

	shift 2
	kd=$(kdamond_dir 0)
	damon_set_perf 0 "$@"
	if expect_errno "$want" "$kd/state" on &&
			[ "$(cat "$kd/state")" = off ] && [ "$(cat "$kd/pid")" = -1 ]; then
		pass "$desc: $want, no kdamond"
	else
		fail "$desc: $want, no kdamond"
	fi
}

case_refused_starts() {
	dmesg -c >/dev/null
	refuse_on ENOENT "PMU type 9999" type=9999
	check "the kernel log says why in one line" grep -q \
		'damon-perf: perf event 0 (type 9999 config 0x2): no online CPU has a PMU of this type that knows the event' \
		<<<"$(dmesg)"
	refuse_on EINVAL "sample_period 0" sample_period=0
	refuse_on EINVAL "freq 1 with sample_freq 0" freq=1 sample_freq=0
	refuse_on ENOENT "software event config 999" type=1 config=999
	echo paddr >"$(kdamond_dir 0)/contexts/0/operations"
	echo 0 >"$(kdamond_dir 0)/contexts/0/targets/nr_targets"
	refuse_on EINVAL "paddr without sample_phys_addr" "${PF[@]}"
	reset
}

case_page_faults_find_hot() {
	start_workload -m fault -H 4 -C 32 -s 0
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	damon_set_perf 0 "${PF[@]}"
	echo on >"$(kdamond_dir 0)/state"
	if poll "$POLL_SECONDS" hot_range_found 0; then
		pass "page-fault samples find the hot range, cold range reads 0"
	else
		fail "page-fault samples did not find the hot range"
	fi
	show_regions 4
}

case_commit() {
	local kd

	kd=$(kdamond_dir 0)
	# a bad commit is refused and the kdamond keeps running
	echo 9999 >"$(perf_dir 0)/0/type"
	check "commit with PMU type 9999 gets ENOENT" expect_errno ENOENT "$kd/state" commit
	check "the kdamond is still on" test "$(cat "$kd/state")" = on
	echo 1 >"$(perf_dir 0)/0/type"

	# switch to cpu-clock: no addresses, so no region updates
	damon_set_perf 0 "${CPU_CLOCK[@]}"
	check "commit to cpu-clock succeeds" expect_errno OK "$kd/state" commit
	if no_accesses_for 0 10; then
		pass "cpu-clock samples give no region updates"
	else
		fail "cpu-clock samples gave region updates"
	fi

	# and back
	damon_set_perf 0 "${PF[@]}"
	check "commit back to page faults succeeds" expect_errno OK "$kd/state" commit
	check "the hot range is found again" poll "$POLL_SECONDS" hot_range_found 0

	# a commit without a context to take is refused, as the base refuses it
	echo 0 >"$kd/contexts/nr_contexts"
	check "commit with nr_contexts 0 gets EINVAL" expect_errno EINVAL "$kd/state" commit
	check "the kdamond is still on" test "$(cat "$kd/state")" = on
	reset
}

case_cpu_clock() {
	start_workload -m fault -H 4 -C 32 -s 0
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	damon_set_perf 0 "${CPU_CLOCK[@]}"
	echo on >"$(kdamond_dir 0)/state"
	if no_accesses_for 0 10; then
		pass "cpu-clock from the start: no region updates"
	else
		fail "cpu-clock from the start: region updates"
	fi
	reset
}

case_hotplug() {
	local kd c first

	start_workload -m fault -H 4 -C 32 -s 0
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	damon_set_perf 0 "${PF[@]}"
	kd=$(kdamond_dir 0)
	echo on >"$kd/state"
	for c in 1 2 3; do
		echo 0 >/sys/devices/system/cpu/cpu$c/online
	done
	check "CPUs 1-3 went offline while sampling" test "$(nproc)" -eq 1
	check "with one CPU left, the hot range is found" poll "$POLL_SECONDS" hot_range_found 0
	online_all_cpus
	check "CPUs came back online" test "$(nproc)" -eq 4

	# a new workload only on CPU 3, whose event the online callback made
	first=$WORKLOAD_PID
	start_workload -m fault -H 4 -C 32 -s 0
	EXTRA_PIDS+=("$first")
	taskset -p 8 "$WORKLOAD_PID" >/dev/null
	echo "$WORKLOAD_PID" >"$kd/contexts/0/targets/0/pid_target"
	check "commit to the new workload succeeds" expect_errno OK "$kd/state" commit
	check "samples from the re-onlined CPU 3 find its hot range" \
		poll "$POLL_SECONDS" hot_range_found 0
	show_regions 3
	reset
}

case_two_kdamonds() {
	local hs he cs ce

	# nr_kdamonds rebuilds every kdamond directory: set it first
	echo 2 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	start_workload -m fault -H 4 -C 32 -s 0
	EXTRA_PIDS+=("$WORKLOAD_PID")
	hs=$HOT_START he=$HOT_END cs=$COLD_START ce=$COLD_END
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	damon_set_perf 0 "${PF[@]}"
	WORKLOAD_PID=
	start_workload -m fault -H 8 -C 16 -s 0
	damon_setup_vaddr 1 "$WORKLOAD_PID"
	damon_set_perf 1 "${PF[@]}"
	echo on >"$(kdamond_dir 0)/state"
	echo on >"$(kdamond_dir 1)/state"
	check "kdamond 0 finds its workload's hot range" \
		poll "$POLL_SECONDS" hot_range_found 0 "$hs" "$he" "$cs" "$ce"
	check "kdamond 1 finds its workload's hot range" poll "$POLL_SECONDS" hot_range_found 1
	reset
}

# sample/primitives/ and sample/filters/, as tools for mainline's sample
# control expect them, with what this kernel does not have refused.
case_sample_control() {
	local s

	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 $$
	s=$(kdamond_dir 0)/contexts/0/monitoring_attrs/sample
	check "primitives/page_table reads Y by default" \
		test "$(cat "$s/primitives/page_table")" = Y
	check "primitives/page_fault reads N" \
		test "$(cat "$s/primitives/page_fault")" = N
	check "filters/nr_filters reads 0" test "$(cat "$s/filters/nr_filters")" = 0
	check "page_fault N is taken" expect_errno OK "$s/primitives/page_fault" N
	check "page_fault Y gets EOPNOTSUPP" \
		expect_errno EOPNOTSUPP "$s/primitives/page_fault" Y
	check "nr_filters 0 is taken" expect_errno OK "$s/filters/nr_filters" 0
	check "nr_filters 1 gets EOPNOTSUPP" \
		expect_errno EOPNOTSUPP "$s/filters/nr_filters" 1
	check "nr_filters -1 gets EINVAL" expect_errno EINVAL "$s/filters/nr_filters" -1
	check "page_table 2 gets EINVAL" expect_errno EINVAL "$s/primitives/page_table" 2
	check "page_table is still Y" test "$(cat "$s/primitives/page_table")" = Y
	check "page_table N is taken" expect_errno OK "$s/primitives/page_table" N
	check "N with no perf event: on gets EINVAL" \
		expect_errno EINVAL "$(kdamond_dir 0)/state" on
	check "and no kdamond runs" test "$(cat "$(kdamond_dir 0)/state")" = off
	damon_set_perf 0 "${PF[@]}"
	check "N with a perf event: on works" \
		expect_errno OK "$(kdamond_dir 0)/state" on
	sysfs_write 0 "$(perf_dir 0)/nr_perf_events"
	check "committing page_table N and no perf event gets EINVAL" \
		expect_errno EINVAL "$(kdamond_dir 0)/state" commit
	check "the kdamond keeps running" \
		test "$(cat "$(kdamond_dir 0)/state")" = on
	damon_stop_all
}

case_sysfs_layout
case_bad_values
case_refused_starts
case_sample_control
case_page_faults_find_hot
case_commit
case_cpu_clock
case_hotplug
case_two_kdamonds
finish
