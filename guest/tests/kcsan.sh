#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the KCSAN kernel: what makes the perf event mode's producers and
# consumers race, for the data race detector to watch: kdamond starts and
# stops, CPU hotplug under NMI sampling by the test PMU, commits under
# constant hotplug (the churn soak, short), the AUX drain reading areas
# that the SPE-like test PMU fills from NMIs, then a short fuzzer run over
# every DAMON sysfs file.  boot.sh judges the detector's reports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=$(dirname "$0")
rc=0
echo "=== soak ==="
SOAK_STARTS=${SOAK_STARTS:-10} SOAK_HOTPLUG=${SOAK_HOTPLUG:-10} \
	SOAK_MIXED=${SOAK_MIXED:-10} SOAK_PERIOD=${SOAK_PERIOD:-100000} \
	"$dir/soak.sh" || rc=1
echo "=== aux ==="
# This kernel runs several times slower than the test kernel, and each test
# PMU NMI takes it 16 to 24 ms: in one run DAMON had not singled out the
# hot range of the NMI case after 300 s, with every other check passing.
# How soon DAMON converges is a timing question, judged on the test
# kernel; here the AUX paths run for the race detector, and every
# other check of aux.sh is judged.
JUDGE_CONVERGENCE=0 TESTPMU_PERIOD=${TESTPMU_PERIOD:-500000} "$dir/aux.sh" || rc=1
echo "=== fuzz ==="
FUZZ_OPS=${FUZZ_OPS:-200} "$dir/fuzz.sh" || rc=1
exit $rc
