#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench [QUICK=1]: what DAMON's perf event access checks cost and how
# accurate they are, against Accessed-bit checks, in the same runs.
#
# Boots the test kernel (building it first if it is missing) and runs
# guest/tests/bench.py: kdamond cost, workload slowdown, accuracy against a
# moving hot range and on patterns that stay put (hot ranges of unequal
# sizes, a Zipf-like spread, threads), and ring loss against the sample
# rate; then, in a boot
# of its own, access check cost against regions and records.  Then boots
# it again under QEMU's
# -icount shift=0, where a guest nanosecond is one instruction, for the
# instructions per sample; and the CONFIG_DAMON_PERF_OBSERVE=n kernel the
# same way, for what the observability adds; and both again built with
# CONFIG_JUMP_LABEL, as distributions build them, where a static key is a
# patched jump rather than a load and a branch.  harness/bench-report.py
# prints a table per experiment and writes build/bench/results.json and
# PNG plots there.
#
# QUICK=1 (make check) runs one small cell of each experiment, and no =n
# kernel, into build/bench-quick: it checks that the benchmark runs and
# that its output parses, never its figures.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

quick=${QUICK:-}
case $quick in
'' | 0) quick='' out=$BUILD/bench mem=2G timeout=3000 ;;
1) out=$BUILD/bench-quick mem=1G timeout=600 ;;
*) die "QUICK must be 1 or empty, not '$quick'" ;;
esac
args=()
[ -z "$quick" ] || args=(--quick)

# The host's packages (matplotlib and numpy for the report among them) and
# the base, as every entry point has them.
"$TOP/harness/base.sh"

build_missing test
if [ -z "$quick" ]; then
	build_missing no-observe "$TOP/configs/no-observe.config"
	build_missing jump-label "$TOP/configs/jump-label.config"
	build_missing jump-label-no-observe "$TOP/configs/no-observe.config" \
		"$TOP/configs/jump-label.config"
	# a kernel left from an older series is brought up to date (make
	# check relinks only the test kernel), so that none is measured stale
	for k in test no-observe jump-label jump-label-no-observe; do
		"$TOP/harness/build.sh" "$k"
	done
fi
"$TOP/harness/initramfs.sh"

rm -rf "$out"
mkdir -p "$out"
records=$out/records.txt
start=$SECONDS

# run NAME KERNEL BOOT_ARGS... -- BENCH_ARGS: one boot; its BENCH lines go
# to the records, its whole output to $out/NAME.out.  PYTHONHASHSEED keeps
# python from waiting for the guest's entropy, slow to come under -icount.
run() {
	local name=$1 kernel=$2 boot=() rc=0

	shift 2
	while [ "$1" != -- ]; do
		boot+=("$1")
		shift
	done
	shift
	note "bench: $name on the $kernel kernel"
	"$TOP/harness/boot.sh" -k "$kernel" -t "$timeout" -n "bench-$name" \
		"${boot[@]}" -- PYTHONHASHSEED=0 python3 /opt/damon-perf/tests/bench.py "${args[@]}" "$@" \
		>"$out/$name.out" 2>&1 || rc=$?
	tr -d '\r' <"$out/$name.out" | grep '^BENCH ' >>"$records" || true
	tr -d '\r' <"$out/$name.out" | grep -E '^bench: |Traceback|Error' >&2 || true
	if [ $rc -ne 0 ]; then
		echo "bench: $name failed with exit status $rc; last lines of $out/$name.out:"
		tail -n 20 "$out/$name.out"
		return 1
	fi
}

# calib_insns KERNEL: the instructions of __x64_sys_umask() in KERNEL,
# after its ftrace call and up to its return, which bench.py times to learn
# what the function profiler adds to a call; it must not branch.
calib_insns() {
	local vmlinux=$OBJ_ROOT/$1/vmlinux addr

	addr=$(nm "$vmlinux" | awk '$3 == "__x64_sys_umask" { print $1 }')
	[ -n "$addr" ] || die "no __x64_sys_umask in $vmlinux"
	objdump -d --no-show-raw-insn --start-address="0x$addr" \
		--stop-address="$(printf '0x%x' $((16#$addr + 64)))" "$vmlinux" |
		awk -F'\t' 'NF >= 2 && $1 ~ /^ *[0-9a-f]+:$/ {
			if (!n++) { if ($2 !~ /__fentry__/) exit 1; next }
			if ($2 ~ /^j/) exit 1
			body++
			if ($2 ~ /^ret/) { print body; exit }
		}'
}

# One CPU, and QEMU counting instructions: guest time is instructions.
icount=(-c 1 -Q -icount -Q shift=0)
rc=0
# ringloss first: perf_stats' ring_capacity, the largest rings since boot,
# is then its context's
run main test -m "$mem" -- --exp ringloss kdamond slowdown accuracy patterns \
	sweep ||
	rc=1
# ftrace's function profiler patches code that every CPU runs (the
# sched_switch tracepoint's static calls), and multi-threaded TCG ran CPUs
# into stale int3s of it: one host thread for all CPUs
run check test -m "$mem" -T thread=single -- --exp check --no-meta || rc=1
n=$(calib_insns test) || die "__x64_sys_umask branches or was not found"
run insns test "${icount[@]}" -- --exp insns --icount --no-meta \
	--calib-insns "$n" || rc=1
if [ -z "$quick" ]; then
	n=$(calib_insns no-observe) || die "__x64_sys_umask branches or was not found"
	run insns-no-observe no-observe "${icount[@]}" -- \
		--exp insns --icount --no-meta --calib-insns "$n" || rc=1
	# one CPU under -icount is one TCG thread: jump labels are safe here
	for k in jump-label jump-label-no-observe; do
		n=$(calib_insns "$k") || die "__x64_sys_umask branches or was not found"
		run "insns-$k" "$k" "${icount[@]}" -- --exp insns --icount \
			--no-meta --jump-label --calib-insns "$n" || rc=1
	done
fi
/usr/bin/python3 "$TOP/harness/bench-report.py" "${args[@]}" "$records" "$out" \
	>"$out/report.txt" || rc=1
if [ -z "$quick" ]; then
	# the one goal the objects answer, not a run
	{
		echo
		echo "CONFIG_DAMON_PERF_OBSERVE=n: no clock read and no observability in the sampling and drain paths"
		if test_no_observe_data_path; then
			echo "met"
		else
			echo "MISSED"
		fi
	} >>"$out/report.txt"
fi
cat "$out/report.txt"
echo "bench took $((SECONDS - start))s; results in $out"
exit $rc
