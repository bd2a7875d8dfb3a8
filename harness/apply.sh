#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make apply: build/src becomes the base with series/ applied by git am,
# one commit per patch on the branch damon-perf.  That tree is what every
# build and test uses.
#
# Work on the kernel code is done there: commit a fix with
# "git commit --fixup=<commit>" and fold it in with
# "git rebase -i --autosquash base", or add a commit; then make export
# writes the branch back to series/.  This script refuses to reset
# build/src while it holds work that make export has not written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/harness/base.sh"

# build/src is up to date if it formats to exactly series/.
if [ -d "$SRC_DIR/.git" ]; then
	if [ -n "$(git -C "$SRC_DIR" status --porcelain)" ] && [ "${FORCE:-0}" != 1 ]; then
		git -C "$SRC_DIR" status --short | head -n 10 >&2
		die "$SRC_DIR has uncommitted edits; commit them and run make export, or FORCE=1 to drop them"
	fi
	tmp=$BUILD/apply-check
	if [ "$(git -C "$SRC_DIR" symbolic-ref -q --short HEAD)" = "$SERIES_BRANCH" ] &&
	   "$TOP/harness/series.sh" format "$SRC_DIR" "$tmp" 2>/dev/null &&
	   diff -r -q "$SERIES_DIR" "$tmp" >/dev/null; then
		rm -rf "$tmp"
		note "$SRC_DIR is series/ applied onto $(cat "$BUILD/base/VERSION")"
		exit 0
	fi
	rm -rf "$tmp"
	if [ "${FORCE:-0}" != 1 ] &&
	   git -C "$SRC_DIR" rev-parse -q --verify "$SERIES_BRANCH" >/dev/null &&
	   [ -n "$(git -C "$SRC_DIR" config "branch.$SERIES_BRANCH.exported" || true)" ] &&
	   [ "$(git -C "$SRC_DIR" config "branch.$SERIES_BRANCH.exported")" != \
	     "$(git -C "$SRC_DIR" rev-parse "$SERIES_BRANCH")" ]; then
		die "$SRC_DIR has commits that make export has not written to series/; run make export, or FORCE=1 to drop them"
	fi
fi

note "applying series/ onto $(cat "$BUILD/base/VERSION") in $SRC_DIR"
"$TOP/harness/series.sh" am "$SRC_DIR"
git -C "$SRC_DIR" config "branch.$SERIES_BRANCH.exported" \
	"$(git -C "$SRC_DIR" rev-parse "$SERIES_BRANCH")"
# commits made there carry the series' author, whose Signed-off-by the
# patches have, whatever the developer's own git identity is
git -C "$SRC_DIR" config user.name "$SERIES_NAME"
git -C "$SRC_DIR" config user.email "$SERIES_EMAIL"
note "applied $(series_patches "$SERIES_DIR" | wc -l) patches"
