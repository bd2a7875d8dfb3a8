#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# check.sh [check|full|rest]: set everything up, build the kernels, boot them and
# run the tests.  Prints one [PASS]/[FAIL] line per test and a final
# "N passed, N failed" line; exits non-zero if anything failed.
#
#   check   (make check, what CI runs) the test kernel's KUnit suites and
#           guest tests, make demo's script, the base's DAMON selftests, a
#           quick bench, the CONFIG_DAMON_PERF_OBSERVE=n objects' symbol
#           and data path checks, the debug kernel's tests with a short
#           soak and fuzzer run, and the series checks on the final tree:
#           under 50 minutes on a new 2-core machine.
#   full    (make check-full) all of that, with the debug kernel's longer
#           soak and fuzzer runs, then what only it runs: the pristine base
#           kernel's selftest results, the =n kernel booted, the PADDR-only
#           and no-tracing kernels, the KCSAN kernel, the Kconfig
#           combinations (UML, i386 and arm64 builds among them), the arm64
#           kernel booted under TCG, and every prefix of the series built
#           (W=1, sparse) and booted with its tests.
#   rest    (make check-rest) what full adds to check, with the debug
#           kernel's longer runs: after a make check of the same tree, the
#           two together test what make check-full does.  The kernels that
#           make check built are built again only if they are missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TIER=${1:-check}
case $TIER in
check | full | rest) ;;
*) die "usage: $0 [check|full|rest]" ;;
esac
# the tests below are make check's until the line that says otherwise
SECTION=check

NR_PASS=0
NR_FAIL=0
NR_SKIP=0
FAILED=()
mkdir -p "$LOG_DIR"
start=$SECONDS

# The summary repeats each failed test's own [FAIL] lines (or its last
# line), since CI may keep only the end of the output.
report() {
	local name out lines

	echo
	if [ ${#FAILED[@]} -gt 0 ]; then
		echo "failed: ${FAILED[*]}"
		for name in "${FAILED[@]}"; do
			out=$LOG_DIR/check-$name.out
			[ -f "$out" ] || continue
			lines=$(tr -d '\r' <"$out" | grep -F '[FAIL]' || tail -n 1 "$out")
			sed -n "1,5s/^/  $name: /p" <<<"$lines"
		done
	fi
	echo "$what took $((SECONDS - start))s on base $(cat "$BUILD/base/VERSION" 2>/dev/null || echo '?')"
	echo "$NR_PASS passed, $NR_FAIL failed, $NR_SKIP skipped"
}
what=check
[ "$TIER" = check ] || what=check-$TIER
# a background build that a failed stage leaves running stops with the run
stop_bg() {
	[ -z "${BG_PID:-}" ] || kill -- "-$BG_PID" 2>/dev/null || true
}
trap 'stop_bg; report' EXIT

# t NAME COMMAND...: one test; its output goes to build/logs/check-NAME.out
# and is shown only when it fails.  Exit status 4 is a skip, shown with
# its reason; it is not a pass.
# With make check-rest, make check's own tests are left out (not counted).
t() {
	local name=$1 out=$LOG_DIR/check-$1.out t0=$SECONDS rc=0

	[ "$TIER" != rest ] || [ "$SECTION" != check ] || return 0
	shift
	"$@" >"$out" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		NR_PASS=$((NR_PASS + 1))
		echo "[PASS] $name ($((SECONDS - t0))s)"
	elif [ $rc -eq 4 ]; then
		NR_SKIP=$((NR_SKIP + 1))
		echo "[SKIP] $name: $(grep -m 1 'SKIP' "$out" || echo 'exit status 4')"
	else
		NR_FAIL=$((NR_FAIL + 1))
		FAILED+=("$name")
		echo "[FAIL] $name ($((SECONDS - t0))s); last lines of $out:"
		tail -n 30 "$out" | sed 's/^/    /'
	fi
}

# A stage that later tests need: if it fails, stop here (the report still
# runs).
stage() {
	local before=$NR_FAIL

	t "$@"
	[ "$NR_FAIL" -eq "$before" ] || exit 1
}

# expect_rc RC COMMAND...: COMMAND must exit with exactly RC.
expect_rc() {
	local want=$1 rc=0

	shift
	"$@" || rc=$?
	echo "exit status $rc, expected $want"
	[ "$rc" -eq "$want" ]
}

test_scan_log() {
	local f bad=0

	for f in "$TOP"/tests/host/scan-log/*.log; do
		case $(basename "$f") in
		clean.log)
			"$TOP/harness/scan-log.sh" "$f" || { echo "clean log flagged: $f"; bad=1; } ;;
		*)
			! "$TOP/harness/scan-log.sh" "$f" 2>/dev/null || { echo "missed: $f"; bad=1; } ;;
		esac
	done
	# with a KCSAN scope, a data race report outside it is not judged
	SCAN_LOG_KCSAN_SCOPE=damon "$TOP/harness/scan-log.sh" \
		"$TOP/tests/host/kcsan-elsewhere.log" ||
		{ echo "a report outside the scope was flagged"; bad=1; }
	! SCAN_LOG_KCSAN_SCOPE=damon "$TOP/harness/scan-log.sh" \
		"$TOP/tests/host/scan-log/kcsan.log" 2>/dev/null ||
		{ echo "a report in the scope was missed"; bad=1; }
	return $bad
}

test_config_rejects_unmet() {
	local out

	if out=$("$TOP/harness/config.sh" cfgtest "$TOP/tests/host/unsatisfiable.config" 2>&1); then
		echo "config.sh accepted an unsatisfiable fragment"
		return 1
	fi
	echo "$out"
	grep -q 'CONFIG_DAMON_SYSFS wanted y, got n' <<<"$out"
}

# make apply keeps work that make export has not written: it refuses to
# reset build/src holding an unexported commit or an uncommitted edit.
test_apply_guards() {
	local head ok=0

	head=$(git -C "$SRC_DIR" rev-parse HEAD)
	git -C "$SRC_DIR" -c user.name=check -c user.email=check@localhost \
		commit -q --allow-empty -m "check: an unexported commit"
	if "$TOP/harness/apply.sh"; then
		echo "apply.sh dropped an unexported commit"
		ok=1
	fi
	git -C "$SRC_DIR" reset -q --hard "$head"
	echo "# an edit" >>"$SRC_DIR/mm/damon/perf.c"
	if "$TOP/harness/apply.sh"; then
		echo "apply.sh dropped an uncommitted edit"
		ok=1
	fi
	git -C "$SRC_DIR" checkout -q -- mm/damon/perf.c
	"$TOP/harness/apply.sh" || ok=1
	[ "$(git -C "$SRC_DIR" rev-parse HEAD)" = "$head" ] || ok=1
	return $ok
}

test_base_version() {
	local v

	v=$(cat "$BUILD/base/VERSION")
	echo "extracted $v, recorded $BASE_VERSION"
	[ "$v" = "$BASE_VERSION" ] && grep -q "$BASE_VERSION" "$TOP/README"
}

# kunit_passed LOG [SUITE...]: the KUnit results in a console log, parsed by
# the kernel's own kunit.py, show every suite passed, ours and each SUITE
# included.
kunit_passed() {
	kunit_log_passed "$@" damon-perf damon-perf-ring damon-perf-sysfs \
		damon-perf-observe damon-perf-spe
}

# Every suite passes, and perf_stats then reads as if none had run: the
# suites count in counters of their own.
test_kunit() {
	"$TOP/harness/boot.sh" -n kunit -a kunit.enable=1 -- \
		/opt/damon-perf/tests/kunit-after.sh &&
		kunit_passed "$LOG_DIR/kunit.log"
}

# build_config NAME FRAGMENT...: configure and build one more kernel.
build_config() {
	local name=$1

	"$TOP/harness/config.sh" "$@" && "$TOP/harness/build.sh" "$name"
}

# build_config_bg NAME FRAGMENT...: start build_config's work in the
# background, at the lowest CPU priority, in a session of its own (so that
# the report can stop all of it); build_config_wait collects it.  The guest
# tests leave part of the machine idle (the guests wait on DAMON's
# intervals): a kernel built meanwhile takes that, and little of theirs.
BG_PID=
build_config_bg() {
	BG_NAME=$1
	BG_START=$SECONDS
	# shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
	setsid nice -n 19 bash -c \
		'"$0/harness/config.sh" "$@" && "$0/harness/build.sh" "$1"' \
		"$TOP" "$@" >"$LOG_DIR/check-build-$1.bg" 2>&1 </dev/null &
	BG_PID=$!
}

build_config_wait() {
	local rc=0 waited=$SECONDS

	wait "$BG_PID" || rc=$?
	BG_PID=
	cat "$LOG_DIR/check-build-$BG_NAME.bg"
	echo "$BG_NAME: built in the background in $((SECONDS - BG_START))s," \
		"$((SECONDS - waited))s of it waited for"
	return $rc
}

# build_clean NAME TARGETS FRAGMENT...: configure and build, with no
# compiler warning in the log.  TARGETS is one make target, or several
# separated by spaces.
build_clean() {
	local name=$1 targets=()

	read -ra targets <<<"$2"
	shift 2
	"$TOP/harness/config.sh" "$name" "$@" &&
		"$TOP/harness/build.sh" "$name" "${targets[@]}" || return 1
	if grep -E 'warning:' "$LOG_DIR/build-$name.log"; then
		return 1
	fi
	echo "$name: ${targets[*]} built without warnings"
}

build_uml() {
	ARCH=um build_clean "$@"
}

# The admin guide's required symbols plus CONFIG_DAMON_PERF_OBSERVE=y, on a
# defconfig kernel, get the observability and its data path; mm/damon
# builds without warnings.
test_combo_spec() {
	BASECONFIG=defconfig build_clean combo-spec mm/damon/ \
		"$TOP/configs/combo-spec.config" || return 1
	grep -E '^CONFIG_DAMON_PERF_(EVENTS|OBSERVE)=' "$OBJ_ROOT/combo-spec/.config"
	grep -qx 'CONFIG_DAMON_PERF_EVENTS=y' "$OBJ_ROOT/combo-spec/.config" &&
		[ -f "$OBJ_ROOT/combo-spec/mm/damon/perf_observe.o" ]
}

# A 32-bit kernel (ARCH=i386): mm/damon, perf event mode and observability
# with their KUnit tests included, builds without warnings and calls none
# of libgcc's 64-bit division helpers, which only a link would catch.
test_combo_i386() {
	local obj=$OBJ_ROOT/combo-i386 helpers

	ARCH=i386 build_clean combo-i386 mm/damon/ "$TOP/Kconfig.damon-perf" \
		"$TOP/configs/combo-i386.config" || return 1
	file "$obj/mm/damon/perf_observe.o"
	file "$obj/mm/damon/perf_observe.o" | grep -q 'ELF 32-bit' || return 1
	helpers=$(nm -u "$obj"/mm/damon/*.o |
		grep -E '__(u?div|u?mod)di3|__udivmoddi4' || true)
	echo "64-bit division helpers called: ${helpers:-none}"
	[ -z "$helpers" ]
}

# An arm64 kernel, cross-built (gcc-aarch64-linux-gnu): mm/damon with the
# series, the observability, the SPE decoder, the test PMUs and the KUnit
# tests, perf's core with the series' AUX change, and the Statistical
# Profiling Extension's driver (ARM_SPE_PMU=y), arm64's sampling PMU, build
# without warnings.  Objects only, as for i386: no Image.
test_combo_arm64() {
	local obj=$OBJ_ROOT/combo-arm64 o

	ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- build_clean combo-arm64 \
		"mm/damon/ kernel/events/ drivers/perf/" "$TOP/Kconfig.damon-perf" \
		"$TOP/configs/combo-arm64.config" || return 1
	for o in mm/damon/perf_observe.o mm/damon/perf_spe.o \
		 mm/damon/perf_test_pmu.o kernel/events/core.o \
		 drivers/perf/arm_spe_pmu.o; do
		file "$obj/$o"
		file "$obj/$o" | grep -q 'ELF 64-bit .*ARM aarch64' || return 1
	done
	# not nm | grep -q: grep quits at the match, and pipefail would see
	# nm killed by SIGPIPE
	grep -q ' T perf_event_alloc_kernel_aux$' <(nm "$obj/kernel/events/core.o")
}

# An arm64 kernel that boots: the series with the observability, the
# test PMUs and arm64's SPE driver as in combo-arm64, plus what QEMU's virt
# machine needs (configs/arm64-boot.config), an Image, and the arm64
# guest's initramfs.  A subshell, so that ARCH and CROSS_COMPILE stay in it.
build_arm64_boot() (
	export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-

	"$TOP/harness/config.sh" arm64-boot "$TOP/Kconfig.damon-perf" \
		"$TOP/configs/combo-arm64.config" "$TOP/configs/arm64-boot.config" &&
		"$TOP/harness/build.sh" arm64-boot Image &&
		"$TOP/harness/initramfs.sh"
)

# guest_arm64 TEST: run guest/tests/TEST.sh in the arm64 kernel, under
# qemu-system-aarch64 -M virt -cpu max.
guest_arm64() {
	"$TOP/harness/boot.sh" -A arm64 -t 900 -n "arm64-$1" -- \
		"/opt/damon-perf/tests/$1.sh"
}

# The damon-perf KUnit suites, the SPE record decoder's included, pass on
# arm64 too.
test_arm64_kunit() {
	"$TOP/harness/boot.sh" -A arm64 -n arm64-kunit -a kunit.enable=1 -- true &&
		kunit_passed "$LOG_DIR/arm64-kunit.log"
}

series_check() {
	"$TOP/harness/series-check.sh" "$1"
}

# make demo succeeds and prints no error text, which a user would read as
# a failure.
test_demo() {
	local out=$LOG_DIR/demo.out

	"$TOP/harness/demo.sh" >"$out" 2>&1 || { tail -n 20 "$out"; return 1; }
	grep -q 'overlaps hot range' "$out" &&
		! grep -E 'rror: |write error|not permitted|No such file|not found' "$out"
}

# test_no_observe_symbols FILE...: the observe symbols are in FILEs (paths
# below a kernel's object directory) of the =y test kernel, and none is in
# those of the =n one.  make check looks in the objects of mm/damon and
# perf's core, where all of the series' code is; make check-full in the
# linked vmlinux too.
test_no_observe_symbols() {
	local pattern='damon_perf_obs_|__tracepoint_damon_perf_|damon_perf_stats'
	local y n f

	for f in "$@"; do
		y=$(nm "$OBJ_ROOT/test/$f" 2>/dev/null | grep -cE "$pattern" || true)
		n=$(nm "$OBJ_ROOT/no-observe/$f" | grep -E "$pattern" || true)
		echo "$f: observe symbols with =y: $y; with =n: ${n:-none}"
		[ -z "$n" ] || return 1
		# perf's core has none even with =y
		[ "$f" = kernel/events/built-in.a ] || [ "$y" -gt 0 ] || return 1
	done
}

# The debug kernel runs KUnit and every in-guest test in one boot, then
# kmemleak; boot.sh fails the run on any KASAN, lockdep or other report.
# make check runs a shorter churn soak and fuzzer run than make check-full,
# and of the other tests only smoke: perf, observe, testpmu and aux take 8,
# 3, over 10 and over 3 minutes on this kernel, and the soak and the
# fuzzer drive the same paths (the page-fault event, the test PMUs' NMIs,
# hotplug under sampling, every sysfs file, perf_stats and the trace).
test_debug() {
	local lengths="DEBUG_SOAK_STARTS=8 DEBUG_SOAK_HOTPLUG=4 DEBUG_FUZZ_OPS=60 DEBUG_TESTS=smoke"

	[ "$TIER" = check ] || lengths='DEBUG_SOAK_STARTS=20 DEBUG_SOAK_HOTPLUG=10 DEBUG_FUZZ_OPS=150'
	"$TOP/harness/boot.sh" -k debug -t 3000 -n debug -a kunit.enable=1 -- \
		"$lengths" /opt/damon-perf/tests/debug.sh &&
		kunit_passed "$LOG_DIR/debug.log" damon damon-operations
}

# The pristine base kernel with the test kernel's configuration, less the
# series' symbols, in build/obj/base-test.
build_base_kernel() {
	local obj=$OBJ_ROOT/base-test log=$LOG_DIR/build-base-test.log

	mkdir -p "$obj"
	cp "$OBJ_ROOT/test/.config" "$obj/.config"
	make -C "$BASE_DIR" O="$obj" CC="ccache gcc" -j"$JOBS" olddefconfig bzImage \
		>"$log" 2>&1 || { tail -n 20 "$log"; return 1; }
	echo "the test kernel's options that the base does not have:"
	comm -23 <(grep '^CONFIG_' "$OBJ_ROOT/test/.config" | sort) \
		<(grep '^CONFIG_' "$obj/.config" | sort)
}

# damon_selftests KERNEL: every DAMON kselftest and KUnit suite in one boot
# of KERNEL; the sorted "NAME STATUS" results in
# build/logs/damon-selftests-KERNEL.results, the KUnit ones as
# "kunit:SUITE STATUS".
damon_selftests() {
	local out=$LOG_DIR/damon-selftests-$1.out res=$LOG_DIR/damon-selftests-$1.results

	"$TOP/harness/boot.sh" -k "$1" -t 2400 -n "damon-selftests-$1" \
		-a kunit.enable=1 -- /opt/damon-perf/tests/damon-selftests.sh >"$out" 2>&1 ||
		{ tail -n 30 "$out"; return 1; }
	{
		sed -n 's/^result //p' "$out"
		python3 "$SRC_DIR/tools/testing/kunit/kunit.py" parse \
			"$LOG_DIR/damon-selftests-$1.log" 2>/dev/null |
			sed -nE 's/.*\[(PASSED|FAILED|SKIPPED|CRASHED)\] ([a-z0-9_-]+)( =+)?$/kunit:\2 \1/p'
	} | sort >"$res"
	cat "$res"
}

# The base's DAMON kselftests (the Python ones too) and KUnit suites all
# pass on the test kernel, the series' own included.
test_damon_selftests() {
	damon_selftests test || return 1
	! grep -vE ' (ok|PASSED)( \(attempt [0-9]\))?$' "$LOG_DIR/damon-selftests-test.results"
}

# base_results FILE: the results in FILE of the base's tests and suites
# (the series' own, damon_perf* and the SPE decoder's damon_spe_* cases,
# left out), retries counted as passes.
base_results() {
	grep -v 'damon_perf\|damon_sysfs_perf\|kunit:damon-perf\|kunit:damon_spe_' "$1" |
		sed 's/ (attempt [0-9])//'
}

# ...and give the same results on the base kernel, so that a regression is
# caught whether the series or the base (or this machine) is at fault.
# Results differ if a test passes on one kernel and not on the other,
# retries counted as passes; the series' own tests are left out.
test_damon_selftests_base() {
	local ours=$LOG_DIR/damon-selftests-test.results
	local theirs=$LOG_DIR/damon-selftests-base-test.results diff

	damon_selftests base-test || return 1
	[ -s "$ours" ] || { echo "no results of the test kernel"; return 1; }
	diff=$(diff <(base_results "$ours") <(base_results "$theirs")) || true
	echo "test kernel vs base kernel: ${diff:-no difference}"
	[ -z "$diff" ] && [ "$(grep -c 'kunit:' "$theirs")" -gt 0 ]
}

# The KCSAN kernel runs a short churn soak and a fuzzer run, with a
# watchpoint every 500 memory accesses (8 times KCSAN's default); a data
# race report between two DAMON functions, or a DAMON function and another,
# fails it; races elsewhere (with a kdamond merely in a stack) are listed.
test_kcsan() {
	local log=$LOG_DIR/kcsan.log rc=0 ours all

	SCAN_LOG_KCSAN_SCOPE=damon "$TOP/harness/boot.sh" -k kcsan -t 3000 -n kcsan \
		-a kcsan.skip_watch=500 -- \
		/opt/damon-perf/tests/kcsan.sh || rc=$?
	all=$(tr -d '\r' <"$log" | grep -c 'BUG: KCSAN: ' || true)
	ours=$(SCAN_LOG_KCSAN_SCOPE=damon "$TOP/harness/scan-log.sh" "$log" 2>&1 |
		grep -c '^[0-9]*:.*BUG: KCSAN: ' || true)
	grep -q 'kcsan: enabled' "$log" || { echo "KCSAN did not start"; rc=1; }
	echo "kcsan: $ours data race reports in DAMON, $((all - ours)) elsewhere (not judged)"
	return $rc
}

# bench-report.py reads well-formed records, full and quick, with exit
# status 0 whatever the figures, and refuses a broken record and a missing
# experiment.
test_bench_report() {
	local py=/usr/bin/python3 report=$TOP/harness/bench-report.py
	local t=$TOP/tests/host out=$BUILD/bench-report-test

	rm -rf "$out"
	mkdir -p "$out"
	"$py" "$report" "$t/bench-sample.txt" "$out/full" >/dev/null || return 1
	"$py" "$report" --quick "$t/bench-quick-sample.txt" "$out/quick" >/dev/null ||
		return 1
	ls "$out/full" "$out/quick"
	[ "$(find "$out/full" "$out/quick" -name '*.png' | wc -l)" -eq 12 ] &&
		[ -s "$out/full/results.json" ] || return 1
	sed '0,/^BENCH {"exp":"kdamond"/s//&,/' "$t/bench-sample.txt" >"$out/broken.txt"
	grep -q '"kdamond",,' "$out/broken.txt" || return 1
	! "$py" "$report" "$out/broken.txt" "$out/bad" ||
		{ echo "a broken record passed"; return 1; }
	grep -v '"exp":"kdamond"' "$t/bench-sample.txt" >"$out/missing.txt"
	! "$py" "$report" "$out/missing.txt" "$out/bad" ||
		{ echo "a missing experiment passed"; return 1; }
	# zipf's pacing is told from its records, and a bad one is refused:
	# the sample's own pacing, if it has one, replaced by another
	sed -E '/"pattern":"zipf"/{s/"(rate|aggr_us)":[0-9]+,//g
		s/^BENCH \{"exp":"patterns",/&"rate":120,"aggr_us":2000000,/}' \
		"$t/bench-sample.txt" >"$out/paced.txt"
	"$py" "$report" "$out/paced.txt" "$out/paced" >"$out/paced.out" || return 1
	grep -q 'zipf: one window a pass, 120 passes a second,.*aggregations of 2 s,' \
		"$out/paced.out" || { echo "zipf's pacing not told"; return 1; }
	sed 's/"rate":120,/"rate":-1,/' "$out/paced.txt" >"$out/badrate.txt"
	! "$py" "$report" "$out/badrate.txt" "$out/bad" ||
		{ echo "a negative rate passed"; return 1; }
}

# guest TEST [CONFIG]: run guest/tests/TEST.sh in the CONFIG kernel.
guest() {
	local config=${2:-test}

	"$TOP/harness/boot.sh" -k "$config" -t 900 -n "$1-$config" -- \
		"/opt/damon-perf/tests/$1.sh"
}

t scan-log test_scan_log
stage prepare "$TOP/harness/prepare.sh" test "${TEST_FRAGMENTS[@]}"
t base-version test_base_version
t apply-guards test_apply_guards
t config-rejects-unmet test_config_rejects_unmet
t boot-returns-guest-status expect_rc 7 "$TOP/harness/boot.sh" -n status -- 'exit 7'
t boot-fails-on-warning expect_rc 125 "$TOP/harness/boot.sh" -n warning -- \
	'echo "WARNING: CPU: 0 PID: 1 at injected/by/test.c:1" >/dev/kmsg'
t boot-timeout expect_rc 124 "$TOP/harness/boot.sh" -n timeout -t 15 -- 'sleep 600'
# make bench's quick mode: it runs and its output parses; figures are
# never judged.  First, on a machine that nothing else uses.
t bench-report test_bench_report
t bench-quick env QUICK=1 "$TOP/harness/bench.sh"
# KASAN, lockdep, atomic-sleep checks and kmemleak: the debug kernel builds
# while the test kernel's guest tests run (build-debug below waits for it).
[ "$TIER" = rest ] || build_config_bg debug "${TEST_FRAGMENTS[@]}" \
	"$TOP/configs/debug.config"
t kunit test_kunit
t smoke guest smoke
t perf guest perf
t observe guest observe
t kselftest guest kselftest
t tools guest tools
t damo guest damo
t testpmu guest testpmu
t aux guest aux
t unpriv guest unpriv
# 150 steps in make check, 300 in make check-full
fuzz_ops=150
[ "$TIER" = check ] || fuzz_ops=300
t fuzz "$TOP/harness/boot.sh" -k test -t 900 -n fuzz-test -- \
	FUZZ_SEED=1 FUZZ_OPS=$fuzz_ops /opt/damon-perf/tests/fuzz.sh
t demo test_demo
t damon-selftests test_damon_selftests

# CONFIG_DAMON_PERF_OBSERVE=n: nothing of the observability is built, and
# the data path reads no clock and calls none of it.  Objects only here;
# make check-full links and boots this kernel.
stage build-no-observe build_clean no-observe "mm/damon/ kernel/events/" \
	"${TEST_FRAGMENTS[@]}" "$TOP/configs/no-observe.config"
t no-observe-symbols test_no_observe_symbols mm/damon/built-in.a \
	kernel/events/built-in.a
t no-observe-data-path test_no_observe_data_path

# The debug kernel started building before the guest tests; make
# check-rest runs its tests again, last, with the longer soak and fuzzer
# runs.
stage build-debug build_config_wait
t debug test_debug

# The mail-ready series and the kernel's own checks on it; the build of
# every prefix is make check-full's.
stage series "$TOP/harness/series.sh"
for c in am checkpatch kernel-doc maintainers kconfig docs sparse w1; do
	t "series-$c" series_check "$c"
done

if [ "$TIER" = check ]; then
	[ $NR_FAIL -eq 0 ]
	exit
fi

# make check-full and make check-rest from here on.
SECTION=full

# KCSAN, the data race detector.
stage build-kcsan build_config kcsan "${TEST_FRAGMENTS[@]}" "$TOP/configs/kcsan.config"
t kcsan test_kcsan

# The =n kernel linked and booted: the same data path tests.
stage build-no-observe-kernel "$TOP/harness/build.sh" no-observe
t no-observe-vmlinux-symbols test_no_observe_symbols vmlinux
t no-observe-files guest no-observe no-observe
t no-observe-perf guest perf no-observe

# Kernels that lack what the kselftest needs: it skips and says why.
stage build-paddr-only build_config paddr-only "${TEST_FRAGMENTS[@]}" \
	"$TOP/configs/paddr-only.config"
t kselftest-paddr-only "$TOP/harness/boot.sh" -k paddr-only -n kselftest-paddr-only -- \
	/opt/damon-perf/tests/kselftest-skip.sh "'vaddr is not in avail_operations'"
stage build-no-tracing build_config no-tracing "${TEST_FRAGMENTS[@]}" \
	"$TOP/configs/no-tracing.config"
t kselftest-no-tracing "$TOP/harness/boot.sh" -k no-tracing -n kselftest-no-tracing -- \
	/opt/damon-perf/tests/kselftest-skip.sh "'CONFIG_DAMON_PERF_OBSERVE=y (no'"

# Kconfig combinations a distro may pick.  x86 always selects PERF_EVENTS,
# so PERF_EVENTS=n is built for User Mode Linux.
C=$TOP/configs
t combo-no-pipeline build_clean combo-no-pipeline vmlinux "${TEST_FRAGMENTS[@]}" \
	"$C/combo-no-pipeline.config"
t combo-no-debugfs build_clean combo-no-debugfs vmlinux "${TEST_FRAGMENTS[@]}" \
	"$C/combo-no-debugfs.config"
t combo-no-perf-events build_uml combo-uml vmlinux \
	"$C/combo-uml-no-perf-events.config"
t combo-spec test_combo_spec
t combo-i386 test_combo_i386
t combo-arm64 test_combo_arm64

# The base kernel, for what the series must not change.
stage build-base-test build_base_kernel
t damon-selftests-base test_damon_selftests_base

# Every prefix of the series builds, without warnings from the compiler
# (W=1) or sparse, names only Kconfig symbols that exist by then, and boots
# with the KUnit suites and the kselftest it has passing.
t series-prefixes series_check prefixes
t series-kconfig-each series_check kconfig-each
t series-prefix-boots series_check prefix-boots

# The arm64 kernel booted under TCG: its KUnit suites and the data path
# tests, with stock DAMON and with the software page-fault event.
stage build-arm64-boot build_arm64_boot
t arm64-kunit test_arm64_kunit
t arm64-smoke guest_arm64 smoke
t arm64-perf guest_arm64 perf

# make check-rest: the debug kernel's longer soak and fuzzer runs
[ "$TIER" != rest ] || t debug test_debug

[ $NR_FAIL -eq 0 ]
