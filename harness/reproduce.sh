#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make reproduce: show that each fix of the series is needed.  Builds the
# series up to the test PMUs, before the fixes that follow them, boots it
# and runs guest/tests/testpmu.sh there: every check that a fix is for must
# fail, and every other check must pass.  make check runs the same test
# on the whole series, where all of them pass.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The checks each fix makes pass, by the subject of the fix.
FIXES=(
	"keep Intel PEBS from batching|batched: "
	"use PMUs that cannot exclude|ibs: "
	"sample on the CPUs a hybrid PMU covers|hybrid: "
	"sort samples by the address space|phys-vaddr: "
	"keep the old events until|commit: "
	"do not sample while the watermarks|watermarks: "
	"make the checks perf_event_open|sample_period with bit 63|sample_freq above|a tracepoint event|... and "
)

"$TOP/harness/prepare.sh" test "${TEST_FRAGMENTS[@]}"
base=$(git -C "$SRC_DIR" log --format=%H --grep='add test PMUs' -1 "$SERIES_BRANCH")
[ -n "$base" ] || die "no test PMU patch in the series"
note "reproducing on: $(git -C "$SRC_DIR" log -1 --format='%h %s' "$base")"

wt=$BUILD/reproduce-src
obj=$OBJ_ROOT/reproduce
git -C "$SRC_DIR" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git -C "$SRC_DIR" worktree prune
git -C "$SRC_DIR" worktree add -q --detach "$wt" "$base"
trap 'git -C "$SRC_DIR" worktree remove --force "$wt"' EXIT
mkdir -p "$obj" "$LOG_DIR"
cp "$OBJ_ROOT/test/.config" "$obj/.config"
note "building the series before its fixes (log: $LOG_DIR/build-reproduce.log)"
make -C "$wt" O="$obj" CC="ccache gcc" -j"$JOBS" olddefconfig bzImage \
	>"$LOG_DIR/build-reproduce.log" 2>&1 ||
	die "the series before its fixes does not build; see $LOG_DIR/build-reproduce.log"

out=$LOG_DIR/reproduce.out
# failing checks poll to their deadline: keep it short
"$TOP/harness/boot.sh" -k reproduce -t 1800 -n reproduce -- \
	"POLL_SECONDS=40 /opt/damon-perf/tests/testpmu.sh" >"$out" 2>&1 || true
tr -d '\r' <"$out" | grep -E '^\[(PASS|FAIL)\]' >"$out.checks" || true

bad=0
expected=()
for fix in "${FIXES[@]}"; do
	subject=${fix%%|*}
	found=0
	IFS='|' read -r -a checks <<<"${fix#*|}"
	for c in "${checks[@]}"; do
		expected+=("$c")
		if grep -qF "[FAIL] $c" "$out.checks"; then
			found=$((found + 1))
		fi
	done
	if [ "$found" -eq "${#checks[@]}" ]; then
		echo "[PASS] reproduced without \"$subject\""
	else
		echo "[FAIL] not reproduced without \"$subject\""
		bad=1
	fi
done
# nothing else fails there
while IFS= read -r line; do
	ok=0
	for c in "${expected[@]}"; do
		case $line in "[FAIL] $c"*) ok=1 ;; esac
	done
	if [ $ok -eq 0 ]; then
		echo "[FAIL] also failed: $line"
		bad=1
	fi
done < <(grep '^\[FAIL\]' "$out.checks")
echo "checks: $(grep -c '^\[PASS\]' "$out.checks") passed, $(grep -c '^\[FAIL\]' "$out.checks") failed (log: $out)"
exit $bad
