#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every DAMON kselftest, the base's Python ones included, through the
# kselftest runner the way CI systems run them.  Prints one
# "result NAME ok|skip|fail" line per test, for the harness to judge and to
# compare with the base kernel's; exits non-zero only if the run itself
# could not be done.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
trap 'damon_stop_all' EXIT

# Debian's grep, dmesg and pgrep, which the base's tests need
export PATH=/opt/gnu/bin:$PATH
out=/tmp/damon-selftests.out
rc=0
/opt/kselftest/run_kselftest.sh -c damon >"$out" 2>&1 || rc=$?
sed 's/^/    /' "$out"
echo "run_kselftest.sh exit status $rc"
grep -qE '^(not )?ok [0-9]+ selftests: damon: ' "$out"

# status FILE NAME: ok, skip or fail, as the runner's output in FILE says
status() {
	local line

	line=$(grep -E "^(not )?ok [0-9]+ selftests: damon: $2( |\$)" "$1" || true)
	case $line in
	'') echo "fail (no result)" ;;
	not*) echo "fail (${line#*# })" ;;
	*'# SKIP') echo skip ;;
	*) echo ok ;;
	esac
}

# Some of the base's tests measure what DAMON finds within a fixed time,
# which the emulated CPUs here do not always give them: a test that fails
# is run twice more on its own, and the line says which attempt passed.
sed -nE 's/^(not )?ok [0-9]+ selftests: damon: ([^ ]+).*/\2/p' "$out" |
	while read -r name; do
		st=$(status "$out" "$name")
		try=1
		while [ "${st%% *}" = fail ] && [ $try -lt 3 ]; do
			try=$((try + 1))
			/opt/kselftest/run_kselftest.sh -t "damon:$name" \
				</dev/null >/tmp/retry.out 2>&1 || true
			sed 's/^/    /' /tmp/retry.out
			st=$(status /tmp/retry.out "$name")
		done
		if [ $try -gt 1 ]; then
			echo "result $name $st (attempt $try)"
		else
			echo "result $name $st"
		fi
	done
