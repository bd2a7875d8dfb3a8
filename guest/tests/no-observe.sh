#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CONFIG_DAMON_PERF_OBSERVE=n: nothing of the observability exists, and the
# data path itself is tested by perf.sh in the same kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check "debugfs is mounted" grep -q ' /sys/kernel/debug debugfs ' /proc/mounts
check "no /sys/kernel/debug/damon/perf_stats" test ! -e "$PERF_STATS"
check "tracefs has damon events" test -d "$TRACING/events/damon/damon_aggregated"
tps=("$TRACING"/events/damon/damon_perf_*)
check "no damon_perf_* tracepoints" test ! -e "${tps[0]}"
echo 1 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
echo 1 >"$(kdamond_dir 0)/contexts/nr_contexts"
check "the perf_events sysfs directory still exists" test -d "$(perf_dir 0)"
echo 0 >"$DAMON_ADMIN/kdamonds/nr_kdamonds"
finish
