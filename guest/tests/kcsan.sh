#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the KCSAN kernel: the perf event mode tests (every delivery context of
# the test PMUs, NMI included, and the page-fault event) and a short fuzzer
# run, for the data race detector to watch.  boot.sh judges its reports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

dir=$(dirname "$0")
rc=0
for t in testpmu perf; do
	echo "=== $t ==="
	TESTPMU_PERIOD=1000000 "$dir/$t.sh" || rc=1
done
echo "=== fuzz ==="
FUZZ_OPS=${FUZZ_OPS:-200} "$dir/fuzz.sh" || rc=1
exit $rc
