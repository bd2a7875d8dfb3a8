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
TESTPMU_PERIOD=${TESTPMU_PERIOD:-500000} "$dir/aux.sh" || rc=1
echo "=== fuzz ==="
FUZZ_OPS=${FUZZ_OPS:-200} "$dir/fuzz.sh" || rc=1
exit $rc
