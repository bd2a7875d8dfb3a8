#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The seeded DAMON sysfs fuzzer, fuzz.py, with FUZZ_SEED and FUZZ_OPS (and
# FUZZ_ARGS, more arguments).  Leaves no kdamond running and every CPU
# online, and with kmemleak (the debug kernel) fails on what it leaked.
# Exits with fuzz.py's status, or 1 for a leak.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SEED=${FUZZ_SEED:-1}
OPS=${FUZZ_OPS:-300}
read -r -a EXTRA <<<"${FUZZ_ARGS:-}"

cleanup() {
	damon_stop_all || true
	all_cpus_online
}
trap cleanup EXIT

# only the fuzzer's leaks count, not boot's
kmemleak_clear

rc=0
python3 "$(dirname "$0")/fuzz.py" --seed "$SEED" --ops "$OPS" "${EXTRA[@]}" || rc=$?
cleanup

leaks=$(kmemleak_leaks)
case $leaks in
n/a) ;;
0) echo "fuzz: kmemleak found no leaks" ;;
*) echo "fuzz: kmemleak found $leaks leaks"; [ "$rc" -ne 0 ] || rc=1 ;;
esac
exit "$rc"
