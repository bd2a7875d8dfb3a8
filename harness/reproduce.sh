#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make reproduce: show that each fix of series v1 was needed.  v1 kept its
# fixes (patches 10 to 17) apart so that each defect they fix could be
# reproduced on the series before the fix; later revisions fold them into
# the patches they fix.  v1 is series/ at v1_commit (lib.sh): this
# script checks it out in build/v1 and runs that revision's own
# harness/reproduce.sh, which builds v1 up to its test PMUs (patch 9),
# boots it and runs v1's guest/tests/testpmu.sh there.  It passes only if
# every check a fix is for fails and every other check passes.  The v1
# tree builds in build/v1/build, with this tree's extracted base and the
# shared ccache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"


v1=$(v1_commit)
"$TOP/harness/base.sh"

wt=$BUILD/v1
if [ "$(git -C "$wt" rev-parse HEAD 2>/dev/null || true)" != "$v1" ]; then
	git -C "$TOP" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
	git -C "$TOP" worktree prune
	git -C "$TOP" worktree add -q --detach "$wt" "$v1"
fi
mkdir -p "$wt/build"
# the v1 tree's base is this one's: the same tarball, extracted once
[ -e "$wt/build/base" ] || ln -s "$BUILD/base" "$wt/build/base"
note "reproducing v1 ($(git -C "$TOP" log -1 --format='%h %s' "$v1")) in $wt"
exec env -u BUILD bash "$wt/harness/reproduce.sh"
