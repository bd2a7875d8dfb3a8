#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The damon_perf_obs_test.sh kselftest, installed the way CI systems install
# kselftests on a target: through the kselftest runner, positive and
# negative controls, absent PMUs, the side-effect guard and Ctrl-C.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KSFT=/opt/kselftest
T=$KSFT/damon/damon_perf_obs_test.sh
trap 'damon_stop_all' EXIT

# run NAME ARGS...: run the selftest, keeping its output in /tmp/NAME.out
# and its exit status in RC
run() {
	local name=$1

	shift
	RC=0
	"$T" --duration 5 --output "/tmp/$name.d" "$@" >"/tmp/$name.out" 2>&1 || RC=$?
	sed 's/^/    /' "/tmp/$name.out"
}

no_kdamond_left() {
	[ "$(cat "$DAMON_ADMIN/kdamonds/nr_kdamonds")" = 0 ]
}

out_has() {
	grep -q -- "$2" "/tmp/$1.out"
}

echo "=== through the kselftest runner ==="
rc=0
"$KSFT/run_kselftest.sh" -t damon:damon_perf_obs_test.sh >/tmp/runner.out 2>&1 || rc=$?
sed 's/^/    /' /tmp/runner.out
check "run_kselftest.sh -t damon:damon_perf_obs_test.sh passes" test $rc -eq 0
check "the runner reports ok" grep -q '^ok 1 selftests: damon: damon_perf_obs_test.sh' /tmp/runner.out
check "the runner's run left no kdamond" no_kdamond_left

echo "=== make -C tools/testing/selftests TARGETS=damon run_tests ==="
# Only ours: damon-selftests.sh runs the whole damon suite, ours in its
# place among the base's tests, and judges every result.  TEST_PROGS on
# the command line wins over the damon Makefile's list.
rc=0
rm -rf /tmp/damon_perf_obs.*
PATH=/opt/gnu/bin:$PATH make -C /opt/linux/tools/testing/selftests \
	TARGETS=damon TEST_PROGS=damon_perf_obs_test.sh run_tests \
	>/tmp/make.out 2>&1 || rc=$?
grep -E '^(not )?ok [0-9]+ selftests: damon:' /tmp/make.out | sed 's/^/    /'
check "make run_tests ran damon_perf_obs_test.sh, and it passed" \
	grep -qE '^ok [0-9]+ selftests: damon: damon_perf_obs_test.sh$' /tmp/make.out
check "make run_tests: the test left no kdamond" no_kdamond_left

echo "=== workloads ==="
# stress-ng and stress sit in /opt/stress/bin, off PATH unless put there
# the runner shows no test output; the test's output directory says
check "make run_tests: auto took the fault workload (no stress-ng, no stress)" \
	grep -q '^# workload: fault,' /tmp/damon_perf_obs.*/run
PATH=/opt/stress/bin:$PATH run ng --pmu software
check "auto takes stress-ng when present" out_has ng '^# workload: stress-ng,'
check "stress-ng: exit status 0 ($RC)" test $RC -eq 0
check "stress-ng: no [FAIL]" fails out_has ng '^\[FAIL\]'
check "no stress-ng process left" fails pidof stress-ng
mkdir -p /tmp/stress-only
ln -sf /opt/stress/bin/stress /tmp/stress-only/stress
PATH=/tmp/stress-only:$PATH run stress --pmu software
check "auto takes stress when stress-ng is absent" out_has stress '^# workload: stress,'
check "stress: exit status 0 ($RC)" test $RC -eq 0
check "stress: no [FAIL]" fails out_has stress '^\[FAIL\]'
check "no stress process left" fails pidof stress
run dd --pmu software --workload dd
check "--workload dd runs dd" out_has dd '^# workload: dd,'
check "dd: layers 0-5 pass, no [FAIL]" fails out_has dd '^\[FAIL\]'
check "dd: samples reach the ring" out_has dd '^\[PASS\] Ring: every enqueued record dequeued'
check "dd: no page faults to match is a skip, exit status 4 ($RC)" test $RC -eq 4
check "dd: says why" out_has dd 'dd took no page faults while sampled'
check "no dd process left" fails pidof dd

echo "=== positive control: --pmu software --freq 1 --sample-freq 100 ==="
run freq --pmu software --freq 1 --sample-freq 100 --workload fault
check "exit status 0 ($RC)" test $RC -eq 0
check "every layer passes, none fails" fails out_has freq '^\[FAIL\]'
for l in 'Layer 0' 'Layer 2-3' 'Layer 4' 'Layer 5' 'Layer 6'; do
	check "$l ran" out_has freq "--- $l"
done
check "KTAP totals show no failure" out_has freq '^# Totals: pass:[1-9][0-9]* fail:0'

echo "=== positive control: --period 1 ==="
run period --pmu software --period 1 --workload fault
check "exit status 0 ($RC)" test $RC -eq 0
check "Drain & Match passed" out_has period '^\[PASS\] Drain & Match: [1-9]'

echo "=== negative control: cpu-clock ==="
run clock --pmu software --config 0 --period 1000000 --workload fault
check "exit status 4, skip ($RC)" test $RC -eq 4
check "layers 0-4 pass" out_has clock '^\[PASS\] Sampling: [1-9][0-9]* callbacks received'
check "valid=0 and addr_zero>0" out_has clock 'valid=0 null=0 addr_zero=[1-9]'
check "it says the PMU gives no addresses" out_has clock 'gives no sample addresses'
check "no [FAIL]" fails out_has clock '^\[FAIL\]'
check "no kdamond left" no_kdamond_left

echo "=== absent PMUs ==="
run type9999 --pmu-type 9999
check "--pmu-type 9999: exit status 4 ($RC)" test $RC -eq 4
check "--pmu-type 9999: a clear reason" out_has type9999 'no PMU of type 9999'
check "--pmu-type 9999: no PMU passes as available" fails out_has type9999 '^\[PASS\] PMU'
check "--pmu-type 9999: no kdamond left" no_kdamond_left
run nosuch --pmu no_such_pmu
check "--pmu no_such_pmu: exit status 4 ($RC)" test $RC -eq 4
check "--pmu no_such_pmu: a clear reason" out_has nosuch "PMU 'no_such_pmu' not found"
check "--pmu no_such_pmu: no kdamond left" no_kdamond_left

echo "=== ARM SPE, which this machine does not have: a skip, and why ==="
run spe --pmu arm_spe_0 --freq 0 --period 256
check "--pmu arm_spe_0: exit status 4 ($RC)" test $RC -eq 4
check "--pmu arm_spe_0: a clear reason" out_has spe "PMU 'arm_spe_0' not found"
check "--pmu arm_spe_0: no kdamond left" no_kdamond_left

echo "=== an SPE-like PMU, the AUX test PMU: every layer passes ==="
run aux --pmu damon_test_aux --freq 0 --period 200000 --workload fault
check "--pmu damon_test_aux: exit status 0 ($RC)" test $RC -eq 0
check "--pmu damon_test_aux: no [FAIL] or [SKIP]" fails out_has aux '^\[\(FAIL\|SKIP\)\]'
check "--pmu damon_test_aux: Layer 4 shows the AUX records decoded" \
	out_has aux '^AUX: records=[1-9]'
check "--pmu damon_test_aux: ...handled in process context" \
	out_has aux '^\[PASS\] Sampling: AUX records handled in process context'
check "--pmu damon_test_aux: no kdamond left" no_kdamond_left

echo "=== bad flags ==="
run badflag --freq 2
check "--freq 2: exit status 1 ($RC)" test $RC -eq 1
check "--freq 2: says why" out_has badflag 'takes 0 or 1'

echo "=== side-effect guard ==="
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
damon_setup_vaddr 0 $$
run guard --pmu software
check "an existing kdamond: exit status 4 ($RC)" test $RC -eq 4
check "an existing kdamond: a clear message" out_has guard 'already exist; not touching them'
check "the existing kdamond is untouched" \
	test "$(cat "$(kdamond_dir 0)/contexts/0/targets/0/pid_target")" = $$
damon_stop_all

echo "=== a minimal root file system: no /dev/fd ==="
mv /dev/fd /dev/fd.off
run nofd --pmu software --period 1 --workload fault
mv /dev/fd.off /dev/fd
check "without /dev/fd: exit status 0 ($RC)" test $RC -eq 0
check "without /dev/fd: no [FAIL]" fails out_has nofd '^\[FAIL\]'
check "without /dev/fd: no complaint about it" fails out_has nofd '/dev/fd'

echo "=== KTAP names, run from a folder of damon_perf_* files ==="
RC=0
(cd "$KSFT/damon" && "$T" --duration 5 --output /tmp/ktap.d --period 1 \
	--workload fault) >/tmp/ktap.out 2>&1 || RC=$?
check "exit status 0 ($RC)" test $RC -eq 0
check "the KTAP name keeps its '*'" \
	grep -qE '^ok [0-9]+ damon_perf_\* tracepoints exist$' /tmp/ktap.out

echo "=== it leaves tracing and debugfs as it found them ==="
T_DIR=/sys/kernel/tracing
echo 1 >"$T_DIR/events/damon/damon_perf_drain/enable"
echo 0 >"$T_DIR/tracing_on"
echo 1408 >"$T_DIR/buffer_size_kb"
echo 1 >"$T_DIR/tracing_on"
echo damon-perf-marker >"$T_DIR/trace_marker"
size_before=$(cat "$T_DIR/buffer_size_kb")
umount /sys/kernel/debug
run restore --pmu software --period 1 --workload fault
check "exit status 0 ($RC)" test $RC -eq 0
check "debugfs, which it mounted, is unmounted again" \
	fails grep -q ' /sys/kernel/debug debugfs ' /proc/mounts
mount -t debugfs debugfs /sys/kernel/debug
check "the global trace buffer still holds what was there" \
	grep -q damon-perf-marker "$T_DIR/trace"
check "a global event switch that was on stays on" \
	test "$(cat "$T_DIR/events/damon/damon_perf_drain/enable")" = 1
check "one that was off stays off" \
	test "$(cat "$T_DIR/events/damon/damon_perf_sample/enable")" = 0
check "tracing_on is as it was" test "$(cat "$T_DIR/tracing_on")" = 1
check "buffer_size_kb is as it was ($size_before)" \
	test "$(cat "$T_DIR/buffer_size_kb")" = "$size_before"
check "no tracing instance left" \
	test -z "$(ls "$T_DIR/instances")"
check "its own trace was kept" grep -q 'damon_perf_sample:' /tmp/restore.d/trace
echo 0 >"$T_DIR/events/damon/damon_perf_drain/enable"

echo "=== Ctrl-C ==="
# job control, so that the background test does not ignore SIGINT
set -m
"$T" --duration 60 --workload fault --output /tmp/int.d >/tmp/int.out 2>&1 &
pid=$!
set +m
kdamond_on() {
	[ "$(cat "$DAMON_ADMIN/kdamonds/0/state" 2>/dev/null)" = on ]
}
if poll 60 kdamond_on; then
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	check "SIGINT ends the test early ($rc)" test $rc -eq 130
	check "it says it was interrupted" grep -q '^# interrupted' /tmp/int.out
	check "SIGINT leaves no kdamond" no_kdamond_left
	check "SIGINT leaves no workload" fails pidof damon_perf_hotcold
else
	fail "the test started its kdamond"
	kill "$pid" || true
fi
finish
