#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lay this repository onto a clean copy of the base kernel in build/src.
#
# The mapping rule: a repo file at path P lands at P in the kernel tree,
# except that a file named P.patch is a unified diff applied to P.
# Every run starts again from the pristine base commit, so a half-applied
# tree is never reused; a patch that does not apply exactly is an error.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/harness/base.sh"

if [ ! -d "$SRC_DIR/.git" ]; then
	note "cloning the base tree into $SRC_DIR"
	rm -rf "$SRC_DIR"
	git clone -q --shared "$BASE_DIR" "$SRC_DIR"
fi

cd "$SRC_DIR"
# Edits made by hand in build/src would be lost: make export keeps them.
if [ -n "$(git status --porcelain)" ] && [ "${FORCE:-0}" != 1 ]; then
	git status --short | head -n 10 >&2
	die "$SRC_DIR has edits that are not in the repository; run 'make export' to keep them, or FORCE=1 to drop them"
fi
git checkout -q -f --detach base
git clean -q -f -d -x

mapfile -t files < <(kernel_files)
patches=()
for f in "${files[@]}"; do
	case "$f" in
	*.patch)
		patches+=("$f")
		;;
	*)
		mkdir -p "$(dirname "$f")"
		cp -p "$TOP/$f" "$f"
		;;
	esac
done

for p in "${patches[@]}"; do
	target=${p%.patch}
	[ -f "$target" ] || die "$p: $target does not exist in the base tree"
	if ! out=$(git apply --verbose --whitespace=error-all "$TOP/$p" 2>&1); then
		echo "$out" >&2
		die "$p does not apply cleanly"
	fi
	if grep -q 'with fuzz\|Hunk.*succeeded at' <<<"$out"; then
		echo "$out" >&2
		die "$p applies only with offset or fuzz; regenerate it"
	fi
done

git add -A -f .
git -c user.name=damon-perf -c user.email=harness@localhost \
	commit -q --allow-empty -m "damon-perf: working tree of the repository"
note "applied ${#files[@]} files (${#patches[@]} patches) onto $(cat "$BUILD/base/VERSION")"
