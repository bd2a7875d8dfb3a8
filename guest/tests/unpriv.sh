#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What an unprivileged user (uid 65534) can do with the perf event mode:
# with a kdamond running in that mode, every file under
# monitoring_attrs/sample/ refuses its writes (and reads), perf_stats and
# the damon_perf_* trace files cannot be read or written, and
# perf_event_open() of a kernel, CPU-wide or other-process counter is
# refused.  perf_event_paranoid changes neither: at 3, root's kdamond still
# samples; at -1, the user still cannot configure DAMON.  Each refusal's
# errno is printed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NOBODY=65534
PARANOID=/proc/sys/kernel/perf_event_paranoid
PMUS=/sys/bus/event_source/devices
paranoid0=$(cat "$PARANOID")
dbg_mode=$(stat -c %a /sys/kernel/debug)
tr_mode=$(stat -c %a "$TRACING")
trap 'stop_workload; damon_stop_all; echo "$paranoid0" >"$PARANOID"
	chmod "$dbg_mode" /sys/kernel/debug; chmod "$tr_mode" "$TRACING"' EXIT
declare -A ERRNOS=()

# as_nobody COMMAND...: COMMAND's output, run as uid 65534; never blocks
# (a trace_pipe that opened would)
as_nobody() {
	timeout 20 "$BIN/asuser" "$NOBODY" "$@" || true
}

# refused DESC read FILE | refused DESC write FILE VALUE: the user gets
# EACCES or EPERM; the errno is printed and tallied
refused() {
	local desc=$1 op=$2 file=$3 got

	if [ ! -e "$file" ]; then
		fail "$desc: $file does not exist"
		return
	fi
	if [ "$op" = read ]; then
		got=$(as_nobody "$BIN/sysread" "$file")
	else
		got=$(as_nobody "$BIN/syswrite" "$file" "$4")
	fi
	case $got in
	EACCES | EPERM)
		ERRNOS[$got]=$((${ERRNOS[$got]:-0} + 1))
		pass "$desc: $got"
		;;
	*)
		fail "$desc: got '${got:-nothing}', expected EACCES or EPERM"
		;;
	esac
}

# other_value V: a valid value of the same kind that differs from V
other_value() {
	case $1 in
	0) echo 1 ;;
	Y) echo N ;;
	N) echo Y ;;
	*) echo 0 ;;
	esac
}

# perf_as_nobody WANT DESC ARGS...: perfopen ARGS as the user gives WANT
perf_as_nobody() {
	local want=$1 desc=$2 got

	shift 2
	got=$(as_nobody "$BIN/perfopen" "$@")
	if [ "$got" = "$want" ]; then
		[ "$want" = OK ] || ERRNOS[$got]=$((${ERRNOS[$got]:-0} + 1))
		pass "perf_event_open as uid $NOBODY, $desc: $got"
	else
		fail "perf_event_open as uid $NOBODY, $desc: got '${got:-nothing}', expected $want"
	fi
}

all_uninit() {
	! cpu_states | grep -qv ' UNINIT$'
}

some_running() {
	cpu_states | grep -q ' RUNNING$'
}

echo "=== the user and the helpers ==="
check "asuser runs commands as uid $NOBODY" \
	test "$("$BIN/asuser" "$NOBODY" id -u)" = "$NOBODY"
echo "perf_event_paranoid in the guest: $paranoid0"

echo "=== a kdamond in the perf event mode, two events ==="
start_workload -m fault -H 4 -C 32 -s 0
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 "$WORKLOAD_PID"
pd=$(perf_dir 0)
echo 2 >"$pd/nr_perf_events"
echo 1 >"$pd/0/sample_period"
cat "$PMUS/damon_test/type" >"$pd/1/type"
echo 2 >"$pd/1/config"	# hardirq delivery
echo 1000000 >"$pd/1/sample_period"
sysfs_write on "$(kdamond_dir 0)/state"
check "the kdamond is on and sampling" poll "$POLL_SECONDS" some_running

echo "=== every file under monitoring_attrs/sample/ ==="
sample=$(kdamond_dir 0)/contexts/0/monitoring_attrs/sample
mapfile -t files < <(find "$sample" -type f | sort)
echo "${#files[@]} files: ${files[*]#"$sample"/}"
check "nr_perf_events and the eleven files of each event dir are there" \
	test "$(find "$pd" -type f | wc -l)" -eq 23
for f in "${files[@]}"; do
	name=${f#"$sample"/}
	before=$(cat "$f")
	refused "write '$(other_value "$before")' to $name" write "$f" "$(other_value "$before")"
	check "... $name still reads '$before'" test "$(cat "$f")" = "$before"
	refused "read $name" read "$f"
done
check "the kdamond is still on" test "$(cat "$(kdamond_dir 0)/state")" = on
check "both event dirs are still there" test -d "$pd/1"

# trace_events_refused PREFIX: uid $NOBODY can neither read nor write the
# files of the damon_perf_* events; PREFIX starts each check's name.
trace_events_refused() {
	local e f

	for e in "$TRACING"/events/damon/damon_perf_*; do
		for f in enable format filter trigger; do
			refused "${1}read ${e##*/}/$f" read "$e/$f"
		done
		refused "${1}write 1 to ${e##*/}/enable" write "$e/enable" 1
		refused "${1}write a filter to ${e##*/}/filter" write "$e/filter" 'cpu == 0'
		refused "${1}write a trigger to ${e##*/}/trigger" write "$e/trigger" traceon
	done
}

echo "=== perf_stats and the trace files ==="
refused "read perf_stats" read "$PERF_STATS"
refused "write perf_stats" write "$PERF_STATS" 0
trace_events_refused ""
for e in "$TRACING"/events/damon/damon_perf_*; do
	check "... ${e##*/} is still disabled, with no filter or trigger" \
		test "$(cat "$e/enable")" = 0 -a "$(cat "$e/filter")" = none \
		-a -z "$(grep -v '^#' "$e/trigger" || true)"
done
check "there are five damon_perf_* events" \
	test "$(find "$TRACING"/events/damon -maxdepth 1 -name 'damon_perf_*' | wc -l)" -eq 5
for f in trace trace_pipe; do
	refused "read $f" read "$TRACING/$f"
	refused "write $f" write "$TRACING/$f" x
done

echo "=== the same with debugfs and tracefs opened: the file modes refuse ==="
# /sys/kernel/debug and /sys/kernel/tracing are mode 700, which refuses
# everything under them; with them opened, as a mount with mode=755 or a
# tracing group opens them, the files' own modes must still refuse
echo "modes: /sys/kernel/debug $dbg_mode, $TRACING $tr_mode, perf_stats $(stat -c %a "$PERF_STATS"), damon_perf_sample/enable $(stat -c %a "$TRACING/events/damon/damon_perf_sample/enable"), trace_pipe $(stat -c %a "$TRACING/trace_pipe")"
chmod 755 /sys/kernel/debug "$TRACING"
check "opened: uid $NOBODY reaches perf_stats and the trace files (stat works)" \
	"$BIN/asuser" "$NOBODY" test -e "$PERF_STATS" -a \
	-e "$TRACING/events/damon/damon_perf_sample/enable" -a -e "$TRACING/trace_pipe"
refused "opened: read perf_stats" read "$PERF_STATS"
trace_events_refused "opened: "
for f in trace trace_pipe; do
	refused "opened: read $f" read "$TRACING/$f"
	refused "opened: write $f" write "$TRACING/$f" x
done
chmod "$dbg_mode" /sys/kernel/debug
chmod "$tr_mode" "$TRACING"

echo "=== perf_event_open() as uid $NOBODY (perf_event_paranoid $paranoid0) ==="
# control: profiling one's own user space is allowed up to paranoid 2
if [ "$paranoid0" -le 2 ]; then
	perf_as_nobody OK "own task, user space only (the control)" 1 2 0 -1 1
fi
perf_as_nobody EACCES "own task, kernel too" 1 2 0 -1 0
perf_as_nobody EACCES "own task, physical addresses" 1 2 0 -1 1 phys
perf_as_nobody EACCES "CPU 0, software page faults, user space only" 1 2 -1 0 1
perf_as_nobody EACCES "CPU 0, damon_test in NMI delivery" \
	"$(cat "$PMUS/damon_test/type")" 3 -1 0 1
perf_as_nobody EACCES "the workload (root's), user space only" 1 2 "$WORKLOAD_PID" -1 1
check "as root, a CPU-wide kernel counter opens (the control)" \
	test "$("$BIN/perfopen" 1 2 -1 0 0)" = OK

echo "=== perf_event_paranoid 3: the syscall refuses, DAMON still samples ==="
echo 3 >"$PARANOID"
perf_as_nobody EACCES "own task, user space only, at paranoid 3" 1 2 0 -1 1
sysfs_write off "$(kdamond_dir 0)/state"
check "no event left when off" poll "$POLL_SECONDS" all_uninit
rc=0
sysfs_write on "$(kdamond_dir 0)/state" || rc=1
check "at paranoid 3, root starts the kdamond" test $rc -eq 0
check "at paranoid 3, its kernel counters sample" poll "$POLL_SECONDS" some_running

echo "=== perf_event_paranoid -1: the user still cannot configure DAMON ==="
echo -1 >"$PARANOID"
perf_as_nobody OK "CPU 0, kernel too, at paranoid -1" 1 2 -1 0 0
refused "at paranoid -1, write 0 to nr_perf_events" write "$pd/nr_perf_events" 0
refused "at paranoid -1, write 9 to perf_events/0/type" write "$pd/0/type" 9
refused "at paranoid -1, read perf_stats" read "$PERF_STATS"
check "nr_perf_events still reads 2" test "$(cat "$pd/nr_perf_events")" = 2
echo "$paranoid0" >"$PARANOID"

damon_stop_all
stop_workload
summary=
for e in "${!ERRNOS[@]}"; do
	summary="$summary $e=${ERRNOS[$e]}"
done
echo "refusals by errno:${summary:- none}"
finish
