#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the debug kernel (KASAN, lockdep, atomic-sleep checks, kmemleak): a
# short soak, a short fuzzer run, the other in-guest tests (those named in
# DEBUG_TESTS, default all of smoke, perf, observe, testpmu and aux) and
# two kselftest runs, then have kmemleak scan for what they leaked.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=$(dirname "$0")

# forget what boot left behind; only the tests' leaks count
kmemleak_clear
rc=0
# section NAME: a header with the seconds since the start, so that the
# log shows where a slow kernel spends its time
section() {
	echo "=== $1 (at ${SECONDS}s) ==="
}

# A short churn soak first (make soak runs the long one): kdamond starts
# and stops, and CPU hotplug under NMI sampling.  It scans for leaks
# itself; the scan below covers the tests after it.  make check runs a
# shorter one than make check-full.
section soak
SOAK_STARTS=${DEBUG_SOAK_STARTS:-20} SOAK_HOTPLUG=${DEBUG_SOAK_HOTPLUG:-10} \
	SOAK_PERIOD=250000 "$dir/soak.sh" || rc=1
# ...and a short fuzzer run (make fuzz runs long ones)
section fuzz
FUZZ_SEED=2 FUZZ_OPS=${DEBUG_FUZZ_OPS:-150} "$dir/fuzz.sh" || rc=1
# make check runs some of them (DEBUG_TESTS), make check-full all.  This
# kernel runs them 4 to 5 times slower than the test kernel, and a test
# PMU NMI takes it 11 to 20 ms: DAMON had not singled out the hot range
# after 300 s in testpmu.sh's NMI and hardirq cases, every other check
# passing.  How soon DAMON converges is a timing question, judged on the
# test kernel (as on the KCSAN kernel, kcsan.sh); here testpmu.sh and
# aux.sh run for KASAN, lockdep and kmemleak, and their other checks are
# judged.
for t in ${DEBUG_TESTS:-smoke perf observe testpmu aux}; do
	section "$t"
	JUDGE_CONVERGENCE=0 TESTPMU_PERIOD=1000000 "$dir/$t.sh" || rc=1
done

# The kselftest's positive control and a refused PMU; kselftest.sh runs
# the rest on the test kernel.
section kselftest
ks=/opt/kselftest/damon/damon_perf_obs_test.sh
check "damon_perf_obs_test.sh --pmu software passes every layer" \
	"$ks" --pmu software --duration 5 --workload fault --output /tmp/ks-pos.d
ks_rc=0
"$ks" --pmu-type 9999 --output /tmp/ks-9999.d || ks_rc=$?
check "damon_perf_obs_test.sh --pmu-type 9999 skips ($ks_rc)" test $ks_rc -eq 4
check "no kdamond left" \
	test "$(cat "$DAMON_ADMIN/kdamonds/nr_kdamonds")" = 0

section kmemleak
leaks=$(kmemleak_leaks)
check "kmemleak found no leaks ($leaks)" test "$leaks" = 0
finish || rc=1
exit $rc
