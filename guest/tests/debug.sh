#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the debug kernel (KASAN, lockdep, atomic-sleep checks, kmemleak): run
# the other in-guest tests, then have kmemleak scan for what they leaked.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KMEMLEAK=/sys/kernel/debug/kmemleak
dir=$(dirname "$0")

# forget what boot left behind; only the tests' leaks count
echo clear >"$KMEMLEAK"
rc=0
for t in smoke perf observe; do
	echo "=== $t ==="
	"$dir/$t.sh" || rc=1
done

# kmemleak reports objects only once they are 5 s old
echo "=== kmemleak ==="
echo scan >"$KMEMLEAK"
sleep 6
echo scan >"$KMEMLEAK"
if [ -s "$KMEMLEAK" ]; then
	head -n 40 "$KMEMLEAK"
	fail "kmemleak found no leaks"
else
	pass "kmemleak found no leaks"
fi
finish || rc=1
exit $rc
