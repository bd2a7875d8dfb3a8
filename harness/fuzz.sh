#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz [SEED=N] [OPS=N] [KERNEL=debug|test]: boot KERNEL (the debug
# kernel by default, built first the way check.sh builds it if it is
# missing) and run the seeded DAMON sysfs fuzzer, guest/tests/fuzz.sh, in
# it.  FUZZ_ARGS passes more arguments to fuzz.py (--replay FILE needs the
# file in the guest: put it in guest/tests/), FUZZ_TIMEOUT bounds the boot.
# Prints the guest's summary line last and exits non-zero on a failure, a
# leak or a kernel report in the console log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

seed=${SEED:-1}
ops=${OPS:-300}
kernel=${KERNEL:-debug}
timeout=${FUZZ_TIMEOUT:-3600}
args=${FUZZ_ARGS:-}

[[ $seed =~ ^[0-9]+$ ]] || die "SEED must be a number: $seed"
[[ $ops =~ ^[0-9]+$ ]] || die "OPS must be a number: $ops"
case $kernel in
debug | test) ;;
*) die "KERNEL must be debug or test: $kernel" ;;
esac

if [ "$kernel" = debug ]; then
	build_missing debug "$TOP/configs/debug.config"
else
	build_missing test
fi
"$TOP/harness/initramfs.sh"

mkdir -p "$LOG_DIR"
name=fuzz-$kernel-s$seed
out=$LOG_DIR/$name.out
cmd=$(printf 'FUZZ_SEED=%q FUZZ_OPS=%q FUZZ_ARGS=%q /opt/damon-perf/tests/fuzz.sh' \
	"$seed" "$ops" "$args")
start=$SECONDS
rc=0
# the step lines go to the log only; the rest is shown
"$TOP/harness/boot.sh" -k "$kernel" -t "$timeout" -n "$name" -- "$cmd" \
	>"$out" 2>&1 || rc=$?
grep -v -e '^step [0-9]*: ' -e '"\] -> [A-Z]*$' "$out" || true
summary=$(grep '^fuzz: seed=' "$out" | tail -n 1 || true)
if [ -z "$summary" ]; then
	summary="fuzz: seed=$seed ops=$ops done=0 failures=1 (no summary from the guest)"
	[ "$rc" -ne 0 ] || rc=1
fi
echo "fuzz: $kernel kernel, $((SECONDS - start))s, exit status $rc; steps in $out, console in $LOG_DIR/$name.log"
echo "$summary"
exit "$rc"
