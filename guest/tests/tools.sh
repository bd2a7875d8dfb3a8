#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The tools admins already use on the damon_perf_* tracepoints: Debian's
# perf (perf list, perf record, perf script) and trace-cmd (record, report),
# while DAMON samples a fault workload from the software page-fault event.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'stop_workload; damon_stop_all' EXIT

EVENTS=(damon_perf_sample damon_perf_ring_overflow damon_perf_report_missed
	damon_perf_drain damon_perf_aux_truncated)
# every field the admin guide documents, as perf script and trace-cmd print
SAMPLE_FIELDS=(addr= data_src= period= cpu= reason= sample_flags=
	       sample_type= context=)
DRAIN_FIELDS=(cpu= nr= match= miss= update= left= duration_ns=)

# has_fields FILE EVENT FIELD...: a line of FILE for EVENT has every FIELD.
has_fields() {
	local file=$1 event=$2 line f

	shift 2
	line=$(grep -m 1 "$event:" "$file") || return 1
	for f in "$@"; do
		case $line in
		*" $f"*) ;;
		*) echo "no $f in: $line"; return 1 ;;
		esac
	done
}

# sampling: kdamond 0 samples the workload's page faults (event 0), and
# cpu-clock (event 1).  perf's recursion guard drops a tracepoint event
# raised inside the overflow handler of a software event that perf delivers
# in the same context, as it delivers page faults, so perf sees
# damon_perf_sample only from cpu-clock, whose samples come in hardirq
# context; trace-cmd sees both.
sampling() {
	local d

	start_workload -m fault -H 4 -C 32 -s 0
	echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
	damon_setup_vaddr 0 "$WORKLOAD_PID"
	d=$(perf_dir 0)
	echo 2 >"$d/nr_perf_events"
	echo 2 >"$d/0/config"
	echo 1 >"$d/0/sample_period"
	echo 0 >"$d/1/config"
	echo 1000000 >"$d/1/sample_period"
	echo on >"$(kdamond_dir 0)/state"
}

PERF=$(command -v perf)
echo "perf: $PERF; trace-cmd: $(command -v trace-cmd)"

perf list 'damon:*' >/tmp/perf-list.out 2>&1 || true
cat /tmp/perf-list.out
for e in "${EVENTS[@]}"; do
	check "perf list shows damon:$e" grep -q "damon:$e" /tmp/perf-list.out
done

sampling
check "perf record -e 'damon:damon_perf_*' -a" \
	perf record -q -e 'damon:damon_perf_*' -a -o /tmp/perf.data -- sleep 3
perf script -i /tmp/perf.data >/tmp/perf-script.out 2>/dev/null || true
head -n 3 /tmp/perf-script.out
check "perf script shows damon_perf_sample records with every field" \
	has_fields /tmp/perf-script.out damon_perf_sample "${SAMPLE_FIELDS[@]}"
check "they are cpu-clock's, delivered in hardirq context" \
	grep -q 'damon_perf_sample: .* reason=2 .* context=2' /tmp/perf-script.out
check "perf shows no page-fault samples (its recursion guard drops them)" \
	fails grep -q 'damon_perf_sample: .* reason=0 .* context=0' /tmp/perf-script.out
check "perf script shows damon_perf_drain records with every field" \
	has_fields /tmp/perf-script.out damon_perf_drain "${DRAIN_FIELDS[@]}"

check "trace-cmd record -e damon" \
	trace-cmd record -q -e damon -o /tmp/trace.dat sleep 3
trace-cmd report -i /tmp/trace.dat >/tmp/trace-cmd.out 2>/dev/null || true
grep -m 2 'damon_perf_' /tmp/trace-cmd.out || true
check "trace-cmd report shows damon_perf_sample records with every field" \
	has_fields /tmp/trace-cmd.out damon_perf_sample "${SAMPLE_FIELDS[@]}"
check "trace-cmd also shows page-fault samples, in process context" \
	grep -q 'damon_perf_sample: .* reason=0 .* context=0' /tmp/trace-cmd.out
check "trace-cmd report shows damon_perf_drain records with every field" \
	has_fields /tmp/trace-cmd.out damon_perf_drain "${DRAIN_FIELDS[@]}"
check "trace-cmd left the damon events off" \
	test "$(cat /sys/kernel/tracing/events/damon/damon_perf_sample/enable)" = 0
finish
