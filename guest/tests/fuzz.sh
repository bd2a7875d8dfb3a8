#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The seeded DAMON sysfs fuzzer, fuzz.py, with FUZZ_SEED and FUZZ_OPS (and
# FUZZ_ARGS, more arguments).  Leaves no kdamond running and every CPU
# online, and with kmemleak (the debug kernel) fails on what it leaked.
# Exits with fuzz.py's status, or 1 for a leak.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KMEMLEAK=/sys/kernel/debug/kmemleak
SEED=${FUZZ_SEED:-1}
OPS=${FUZZ_OPS:-300}
read -r -a EXTRA <<<"${FUZZ_ARGS:-}"

cleanup() {
	damon_stop_all || true
	all_cpus_online
}
trap cleanup EXIT

leak=0
if [ -e "$KMEMLEAK" ]; then
	# only the fuzzer's leaks count, not boot's
	echo clear >"$KMEMLEAK"
fi

rc=0
python3 "$(dirname "$0")/fuzz.py" --seed "$SEED" --ops "$OPS" "${EXTRA[@]}" || rc=$?
cleanup

if [ -e "$KMEMLEAK" ]; then
	# kmemleak reports objects only once they are 5 s old
	echo scan >"$KMEMLEAK"
	sleep 6
	echo scan >"$KMEMLEAK"
	if [ -s "$KMEMLEAK" ]; then
		head -n 40 "$KMEMLEAK"
		echo "fuzz: kmemleak found leaks"
		leak=1
	else
		echo "fuzz: kmemleak found no leaks"
	fi
fi
[ "$rc" -ne 0 ] || rc=$leak
exit "$rc"
