#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make export: write the branch in build/src back to the repository: the
# series to series/ with git format-patch (the cover letter is the branch
# description), and the flattened tree, which the layout rule derives from
# it, to mm/, include/, kernel/, Documentation/, tools/ and
# MAINTAINERS.patch.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -d "$SRC_DIR/.git" ] || die "no $SRC_DIR; run make apply first"
[ "$(git -C "$SRC_DIR" symbolic-ref -q --short HEAD)" = "$SERIES_BRANCH" ] ||
	die "$SRC_DIR is not on the branch $SERIES_BRANCH (a rebase in progress?)"
if [ -n "$(git -C "$SRC_DIR" status --porcelain)" ]; then
	git -C "$SRC_DIR" status --short | head -n 10 >&2
	die "$SRC_DIR has uncommitted edits: commit them (git commit --fixup=<commit>, then git rebase -i --autosquash base) first"
fi
if git -C "$SRC_DIR" log --format=%s "base..$SERIES_BRANCH" | grep -q '^\(fixup\|squash\|amend\)! '; then
	die "$SRC_DIR has fixup commits; fold them in with: git -C $SRC_DIR rebase -i --autosquash base"
fi

tmp=$BUILD/export
"$TOP/harness/series.sh" format "$SRC_DIR" "$tmp/series"
"$TOP/harness/series.sh" flatten "$SRC_DIR" "$tmp/flat"

rm -f "$SERIES_DIR"/*.patch
mkdir -p "$SERIES_DIR"
cp "$tmp/series"/*.patch "$SERIES_DIR/"
for f in $(kernel_files); do
	rm -f "$TOP/$f"
done
(cd "$TOP" && find "${KERNEL_DIRS[@]}" -type d -empty -delete 2>/dev/null) || true
cp -r "$tmp/flat/." "$TOP/"
rm -rf "$tmp"
git -C "$SRC_DIR" config "branch.$SERIES_BRANCH.exported" \
	"$(git -C "$SRC_DIR" rev-parse "$SERIES_BRANCH")"
note "exported $(series_patches "$SERIES_DIR" | wc -l) patches to series/ and the flattened tree"
git -C "$TOP" status --short -- series "${KERNEL_DIRS[@]}" MAINTAINERS.patch >&2
