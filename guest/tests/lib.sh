#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the in-guest tests.  Sourced by each test script.

DAMON_ADMIN=/sys/kernel/mm/damon/admin
BIN=/opt/damon-perf/bin
NR_PASS=0
NR_FAIL=0
WORKLOAD_PID=
# How long to wait for DAMON to settle: generous, since the debug kernel
# under TCG runs 5 to 10 times slower.  A deadline, never an expectation.
POLL_SECONDS=${POLL_SECONDS:-300}

# A test that set -e stops says where and why: without this, a command
# failing outside a check ends the test with no [FAIL] line and no
# summary, as aux.sh did on the slow KCSAN kernel.  -E: functions and
# command substitutions report too.
set -E
trap 'on_error $? "${BASH_SOURCE[0]##*/}" "$LINENO" "${FUNCNAME[0]:-main}" "$BASH_COMMAND"' ERR

# on_error STATUS FILE LINE FUNCTION COMMAND: the [FAIL] line of a test
# that set -e stops.
on_error() {
	echo "[FAIL] stopped: $2:$3 ($4): '$5' exited $1; the test ends here" >&2
}

# check and sysfs_write: one copy, the kselftest's, installed from the
# applied series with the damon kselftests.
# shellcheck source=/dev/null # the series' _damon_perf_common.sh
. /opt/kselftest/damon/_damon_perf_common.sh

pass() {
	NR_PASS=$((NR_PASS + 1))
	echo "[PASS] $*"
}

fail() {
	NR_FAIL=$((NR_FAIL + 1))
	echo "[FAIL] $*"
}

# fails COMMAND...: true if COMMAND fails.
fails() {
	! "$@"
}

# poll SECONDS COMMAND...: run COMMAND until it succeeds or the deadline
# passes; the deadline is generous so that slow (debug, TCG) kernels pass.
poll() {
	local deadline=$((SECONDS + $1))

	shift
	while ! "$@"; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.2
	done
}

finish() {
	echo "guest summary: $NR_PASS passed, $NR_FAIL failed"
	# the summary is the verdict: a test with failures has not stopped
	trap - ERR
	[ $NR_FAIL -eq 0 ]
}

# start_workload ARGS...: start hotcold in the background and read back its
# ranges into HOT_START, HOT_END, COLD_START, COLD_END (decimal).
start_workload() {
	local info=/tmp/hotcold.$$.info key a b

	rm -f "$info"
	"$BIN/hotcold" -i "$info" "$@" &
	WORKLOAD_PID=$!
	poll 30 test -s "$info" || { echo "workload did not start"; return 1; }
	while read -r key a b; do
		# shellcheck disable=SC2034 # CUR_VAR: read by the tests that source this
		case $key in
		hot) HOT_START=$((16#$a)); HOT_END=$((16#$b)) ;;
		cold) COLD_START=$((16#$a)); COLD_END=$((16#$b)) ;;
		cur) CUR_VAR=$((16#$a)) ;;
		esac
	done <"$info"
	echo "workload pid $WORKLOAD_PID: hot [$HOT_START, $HOT_END) cold [$COLD_START, $COLD_END)"
}

stop_workload() {
	[ -n "$WORKLOAD_PID" ] || return 0
	kill "$WORKLOAD_PID" 2>/dev/null || true
	wait "$WORKLOAD_PID" 2>/dev/null || true
	WORKLOAD_PID=
}

# kdamond_dir K: sysfs directory of kdamond K.
kdamond_dir() {
	echo "$DAMON_ADMIN/kdamonds/$1"
}

# damon_setup_vaddr K PID: kdamond K monitors PID's virtual address space
# with one "stat" scheme matching every region, so tried_regions shows all.
damon_setup_vaddr() {
	local kd ctx

	kd=$(kdamond_dir "$1")
	echo 1 >"$kd/contexts/nr_contexts"
	ctx=$kd/contexts/0
	echo vaddr >"$ctx/operations"
	echo 1 >"$ctx/targets/nr_targets"
	echo "$2" >"$ctx/targets/0/pid_target"
	echo 1 >"$ctx/schemes/nr_schemes"
	echo stat >"$ctx/schemes/0/action"
	# The access pattern ranges default to [0, 0]; widen them to match all.
	echo 18446744073709551615 >"$ctx/schemes/0/access_pattern/sz/max"
	echo 4294967295 >"$ctx/schemes/0/access_pattern/nr_accesses/max"
	echo 4294967295 >"$ctx/schemes/0/access_pattern/age/max"
}

# all_cpus_online: bring every CPU that is offline back online.
all_cpus_online() {
	local c

	for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat "$c")" = 1 ] || echo 1 >"$c" || true
	done
}

damon_stop_all() {
	local kd

	for kd in "$DAMON_ADMIN"/kdamonds/[0-9]*; do
		[ -d "$kd" ] || continue
		# a kdamond whose targets are gone stops by itself (EPERM)
		if [ "$(cat "$kd/state")" = on ]; then
			sysfs_write_until off "$kd/state" 2>/dev/null ||
				[ "$(cat "$kd/state")" = off ]
		fi
	done
	sysfs_write_until 0 "$DAMON_ADMIN/kdamonds/nr_kdamonds"
}

# sysfs_write_until VALUE FILE: sysfs_write, tried again for as long as
# DAMON sysfs stays busy, up to POLL_SECONDS.  On a slow kernel (KCSAN,
# debug) a kdamond can hold the sysfs lock, or still be stopping, for
# longer than the five seconds sysfs_write waits.
sysfs_write_until() {
	local deadline=$((SECONDS + POLL_SECONDS)) err

	while ! err=$(sysfs_write "$1" "$2" 2>&1); do
		case $err in
		*busy*) ;;
		*) echo "$err" >&2; return 1 ;;
		esac
		if [ $SECONDS -ge $deadline ]; then
			echo "write '$1' to $2: still busy after ${POLL_SECONDS}s" >&2
			return 1
		fi
	done
}

# tried_regions K: print "start end nr_accesses age" for every region of
# kdamond K's first scheme, freshly updated.
tried_regions() {
	local kd r

	kd=$(kdamond_dir "$1")
	echo update_schemes_tried_regions >"$kd/state" || return 1
	for r in "$kd"/contexts/0/schemes/0/tried_regions/[0-9]*; do
		[ -d "$r" ] || continue
		echo "$(cat "$r/start") $(cat "$r/end") $(cat "$r/nr_accesses") $(cat "$r/age")"
	done
}

# hot_range_found K [HOT_START HOT_END COLD_START COLD_END]: true when the
# regions of kdamond K with the highest nr_accesses overlap the hot range,
# that maximum is positive, and every region that overlaps the cold range
# reads zero (at least one does).  The ranges default to the last workload
# started.  Leaves the evidence in /tmp/regions.
hot_range_found() {
	local max=0 hot_max=0 cold_n=0 cold_bad=0 s e n a
	local HOT_START=${2:-$HOT_START} HOT_END=${3:-$HOT_END}
	local COLD_START=${4:-$COLD_START} COLD_END=${5:-$COLD_END}

	tried_regions "$1" >/tmp/regions || return 1
	while read -r s e n a; do
		[ "$n" -gt "$max" ] && max=$n
		if [ "$s" -lt "$HOT_END" ] && [ "$e" -gt "$HOT_START" ] &&
		   [ "$n" -gt "$hot_max" ]; then
			hot_max=$n
		fi
		if [ "$s" -lt "$COLD_END" ] && [ "$e" -gt "$COLD_START" ]; then
			cold_n=$((cold_n + 1))
			[ "$n" -eq 0 ] || cold_bad=$((cold_bad + 1))
		fi
	done </tmp/regions
	echo "regions=$(wc -l </tmp/regions) max=$max hot_max=$hot_max cold_regions=$cold_n cold_nonzero=$cold_bad" >/tmp/regions.summary
	[ "$max" -gt 0 ] && [ "$hot_max" -eq "$max" ] && [ "$cold_n" -gt 0 ] &&
		[ "$cold_bad" -eq 0 ]
}

# show_regions [N]: the N hottest regions from the last hot_range_found,
# each marked with the workload range it overlaps.
show_regions() {
	local s e n a where

	cat /tmp/regions.summary 2>/dev/null
	# awk reads to the end: head would quit early, and under pipefail
	# sort's next write would die of SIGPIPE and fail the test (it did,
	# once there were enough regions to fill sort's first write)
	sort -k3 -n -r /tmp/regions 2>/dev/null | awk -v n="${1:-5}" 'NR <= n' |
		while read -r s e n a; do
			where=
			[ "$s" -lt "$HOT_END" ] && [ "$e" -gt "$HOT_START" ] &&
				where="$where <- overlaps hot range"
			[ "$s" -lt "$COLD_END" ] && [ "$e" -gt "$COLD_START" ] &&
				where="$where <- overlaps cold range"
			printf '  %x-%x nr_accesses=%-3s age=%-4s%s\n' \
				"$s" "$e" "$n" "$a" "$where"
		done
}

# perf_dir K: the perf_events directory of kdamond K's context.
perf_dir() {
	echo "$(kdamond_dir "$1")/contexts/0/monitoring_attrs/sample/perf_events"
}

# damon_set_perf K FIELD=VALUE...: give kdamond K's context one perf event,
# with the given fields changed from their defaults.
damon_set_perf() {
	local d kv

	d=$(perf_dir "$1")
	shift
	echo 0 >"$d/nr_perf_events"
	echo 1 >"$d/nr_perf_events"
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/0/${kv%%=*}"
	done
}

# expect_errno ERRNO FILE VALUE: writing VALUE to FILE fails with ERRNO (or
# succeeds, for OK), once DAMON sysfs is not busy.
expect_errno() {
	local got

	# DAMON sysfs answers EBUSY while a kdamond holds its lock: try again
	for _ in $(seq 50); do
		got=$("$BIN/syswrite" "$2" "$3") && true
		[ "$got" = EBUSY ] || break
		sleep 0.1
	done
	if [ "$got" = "$1" ]; then
		return 0
	fi
	echo "write '$3' to $2: got $got, expected $1"
	return 1
}

# no_accesses_for K AGE: wait until every region of kdamond K is at least
# AGE aggregation intervals old, and fail as soon as any region shows an
# access on the way.
no_accesses_for() {
	local s e n a young deadline=$((SECONDS + POLL_SECONDS))

	while :; do
		tried_regions "$1" >/tmp/regions || return 1
		young=0
		while read -r s e n a; do
			if [ "$n" -ne 0 ]; then
				echo "region $s-$e has nr_accesses $n"
				return 1
			fi
			[ "$a" -ge "$2" ] || young=1
		done </tmp/regions
		[ -s /tmp/regions ] && [ $young -eq 0 ] && return 0
		[ $SECONDS -lt $deadline ] || return 2
		sleep 0.2
	done
}

KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_clear: have kmemleak forget what it found so far (boot's
# leftovers), so that only what follows counts.  Nothing without kmemleak.
kmemleak_clear() {
	[ ! -e "$KMEMLEAK" ] || echo clear >"$KMEMLEAK"
}

# kmemleak_leaks: have kmemleak scan, twice, since it reports objects only
# once they are 5 s old, and print how many leaks it found (showing the
# first on stderr), or n/a without kmemleak.
kmemleak_leaks() {
	local n

	if [ ! -e "$KMEMLEAK" ]; then
		echo n/a
		return
	fi
	echo scan >"$KMEMLEAK"
	sleep 6
	echo scan >"$KMEMLEAK"
	n=$(grep -c '^unreferenced object' "$KMEMLEAK" || true)
	[ "$n" -eq 0 ] || head -n 40 "$KMEMLEAK" >&2
	echo "$n"
}

PERF_STATS=/sys/kernel/debug/damon/perf_stats
TRACING=/sys/kernel/tracing

# perf_stats_snapshot: print "name value" for each perf_stats table counter,
# and for the key=value pairs of the lines below it.
perf_stats_snapshot() {
	local text

	text=$(cat "$PERF_STATS") || return 1
	awk -F'│' 'NF == 4 && $2 !~ /Counter/ {
		gsub(/ /, "", $2); gsub(/ /, "", $3); print $2, $3 }' <<<"$text"
	grep -E 'report_missed=|aux_records=|ring_bytes=' <<<"$text" |
		grep -o '[a-z_]*=[0-9]*' | tr '=' ' '
}

# stat_of SNAPSHOT NAME: a counter's value from a perf_stats_snapshot.
stat_of() {
	awk -v n="$2" '$1 == n { print $2; found = 1 } END { exit !found }' <<<"$1"
}

# cpu_states: "CPUnn STATE" for each CPU line of perf_stats.
cpu_states() {
	sed -n 's/^ *\(CPU[0-9]*\): st=\([A-Z]*\).*/\1 \2/p' "$PERF_STATS"
}

# trace_on EVENT...: clear the trace buffer and enable damon events.
trace_on() {
	local e

	echo 0 >"$TRACING/tracing_on"
	echo >"$TRACING/trace"
	echo 4096 >"$TRACING/buffer_size_kb"
	for e in "$@"; do
		echo 1 >"$TRACING/events/damon/$e/enable"
	done
	echo 1 >"$TRACING/tracing_on"
}

trace_off() {
	echo 0 >"$TRACING/tracing_on"
	echo 0 >"$TRACING/events/damon/enable"
}

# nobody_gets ERRNO read FILE | nobody_gets ERRNO write FILE VALUE: the
# unprivileged user 65534 is refused with ERRNO (the helper itself must work,
# so a broken helper cannot pass for a refusal).
nobody_gets() {
	local want=$1 op=$2 got

	shift 2
	"$BIN/asuser" 65534 true || { echo "asuser does not work"; return 1; }
	if [ "$op" = read ]; then
		got=$("$BIN/asuser" 65534 "$BIN/sysread" "$1") && true
	else
		got=$("$BIN/asuser" 65534 "$BIN/syswrite" "$1" "$2") && true
	fi
	[ "$got" = "$want" ] && return 0
	echo "$op of $1 as nobody: got $got, expected $want"
	return 1
}

# delta NAME [SINCE]: counter NAME in $AFTER minus in the snapshot SINCE
# (default $BEFORE)
delta() {
	echo $(($(stat_of "$AFTER" "$1") - $(stat_of "${2:-$BEFORE}" "$1")))
}

# laws: the conservation laws over the deltas, with the pipeline quiescent.
laws() {
	local ok=0 reasons

	reasons=$(($(delta valid) + $(delta null) + $(delta addr_zero) +
		   $(delta kernel) + $(delta inv_phys)))
	echo "callback=$(delta callback) = valid+null+addr_zero+kernel+inv_phys=$reasons"
	[ "$(delta callback)" -eq "$reasons" ] || ok=1
	echo "valid=$(delta valid) = enqueue+overflow+report_missed=$(($(delta enqueue) + $(delta overflow) + $(delta report_missed)))"
	[ "$(delta valid)" -eq $(($(delta enqueue) + $(delta overflow) + $(delta report_missed))) ] || ok=1
	echo "enqueue=$(delta enqueue) = dequeue=$(delta dequeue)"
	[ "$(delta enqueue)" -eq "$(delta dequeue)" ] || ok=1
	echo "dequeue=$(delta dequeue) = match+miss_tgid+miss_region+miss_bound=$(($(delta match) + $(delta miss_tgid) + $(delta miss_region) + $(delta miss_bound)))"
	[ "$(delta dequeue)" -eq $(($(delta match) + $(delta miss_tgid) + $(delta miss_region) + $(delta miss_bound))) ] || ok=1
	echo "update=$(delta update) <= match=$(delta match)"
	[ "$(delta update)" -le "$(delta match)" ] || ok=1
	echo "ring_peak=$(stat_of "$AFTER" ring_peak) <= ring_capacity=$(stat_of "$AFTER" ring_capacity)"
	[ "$(stat_of "$AFTER" ring_peak)" -le "$(stat_of "$AFTER" ring_capacity)" ] || ok=1
	return $ok
}
