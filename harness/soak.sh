#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make soak [STARTS=N] [HOTPLUG=N] [MIXED=N] [AUX_SECONDS=N] [KERNEL=debug|test]
# [PERIOD=NS]: boot KERNEL (default the debug kernel: KASAN, lockdep,
# kmemleak), building it first if it is missing, and run
# guest/tests/soak.sh: STARTS start/stop cycles of a kdamond in the perf
# event mode, HOTPLUG CPU offline/online cycles under sampling, MIXED
# (default 0) start/commit/stop cycles under constant CPU hotplug, and an
# AUX storm of AUX_SECONDS (default 300) in which every CPU's AUX area
# overruns again and again and every CPU must write on.  boot.sh fails the run on any kernel report in the
# console.  Prints the failed checks and the soak's summary line; the whole
# output is kept in build/logs/soak-KERNEL.out.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

STARTS=${STARTS:-200}
HOTPLUG=${HOTPLUG:-50}
MIXED=${MIXED:-0}
AUX_SECONDS=${AUX_SECONDS:-300}
KERNEL=${KERNEL:-debug}
[[ $STARTS =~ ^[0-9]+$ ]] || die "STARTS must be a number, not '$STARTS'"
[[ $HOTPLUG =~ ^[0-9]+$ ]] || die "HOTPLUG must be a number, not '$HOTPLUG'"
[[ $MIXED =~ ^[0-9]+$ ]] || die "MIXED must be a number, not '$MIXED'"
[[ $AUX_SECONDS =~ ^[0-9]+$ ]] || die "AUX_SECONDS must be a number, not '$AUX_SECONDS'"

# The debug kernel runs 5 to 10 times slower: a longer test PMU period, so
# that its NMIs leave the CPUs time for anything else, and a longer timeout.
case $KERNEL in
debug) period=250000 timeout=$((900 + 20 * STARTS + 60 * HOTPLUG + 50 * MIXED + 2 * AUX_SECONDS)) ;;
test) period=50000 timeout=$((300 + 4 * STARTS + 12 * HOTPLUG + 10 * MIXED + 2 * AUX_SECONDS)) ;;
*) die "KERNEL must be debug or test, not '$KERNEL'" ;;
esac
PERIOD=${PERIOD:-$period}
[[ $PERIOD =~ ^[0-9]+$ ]] || die "PERIOD must be a number of ns, not '$PERIOD'"
TIMEOUT=${TIMEOUT:-$timeout}

if [ "$KERNEL" = debug ]; then
	build_missing debug "$TOP/configs/debug.config"
else
	build_missing test
fi
# the guest tests as they are now
"$TOP/harness/initramfs.sh"

mkdir -p "$LOG_DIR"
out=$LOG_DIR/soak-$KERNEL.out
note "soak on the $KERNEL kernel: $STARTS starts, $HOTPLUG hotplug cycles, $MIXED mixed cycles, an AUX storm of ${AUX_SECONDS}s, test PMU period ${PERIOD}ns, timeout ${TIMEOUT}s (output: $out, console: $LOG_DIR/soak-$KERNEL.log)"
t0=$SECONDS
rc=0
"$TOP/harness/boot.sh" -k "$KERNEL" -t "$TIMEOUT" -n "soak-$KERNEL" -- \
	"SOAK_STARTS=$STARTS SOAK_HOTPLUG=$HOTPLUG SOAK_MIXED=$MIXED SOAK_AUX_SECONDS=$AUX_SECONDS SOAK_PERIOD=$PERIOD" \
	/opt/damon-perf/tests/soak.sh >"$out" 2>&1 || rc=$?
tr -d '\r' <"$out" | grep -E '^\[FAIL\]|^boot: ' || true
if ! tr -d '\r' <"$out" | grep -E '^soak: starts='; then
	echo "soak: no summary line from the guest (exit status $rc; see $out)"
	[ $rc -ne 0 ] || rc=1
fi
echo "soak took $((SECONDS - t0))s on the $KERNEL kernel; exit status $rc"
exit $rc
