#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build the patched kernel if needed, boot it, and show DAMON
# monitoring a workload with a known hot range.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/harness/prepare.sh" test "${TEST_FRAGMENTS[@]}"
note "booting the test kernel (console log: $LOG_DIR/demo.log)"
"$TOP/harness/boot.sh" -n demo -- /opt/damon-perf/tests/demo.sh |
	grep -v '^\[ *[0-9]*\.[0-9]*\] ' || true
exit "${PIPESTATUS[0]}"
