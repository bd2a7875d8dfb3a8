#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Copy kernel edits made in build/src back into the repository, following the
# layout rule: a file new to the base lands at its own path, a changed base
# file becomes P.patch.  The counterpart of apply.sh, for working in build/src.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cd "$SRC_DIR"
git add -A -f .
n=0
while IFS=$'\t' read -r status path; do
	case $status in
	A)
		mkdir -p "$TOP/$(dirname "$path")"
		cmp -s "$path" "$TOP/$path" || cp -p "$path" "$TOP/$path"
		;;
	M)
		mkdir -p "$TOP/$(dirname "$path")"
		git diff --cached --no-color --no-ext-diff base -- "$path" |
			sed '/^index /d' >"$TOP/$path.patch.tmp"
		if cmp -s "$TOP/$path.patch.tmp" "$TOP/$path.patch"; then
			rm "$TOP/$path.patch.tmp"
		else
			mv "$TOP/$path.patch.tmp" "$TOP/$path.patch"
		fi
		;;
	*)
		die "$path: status $status is not supported by the layout rule"
		;;
	esac
	n=$((n + 1))
done < <(git diff --cached --name-status --no-renames base)
# Record the exported state, so that apply.sh knows nothing is lost.
git -c user.name=damon-perf -c user.email=harness@localhost \
	commit -q --allow-empty -m "damon-perf: exported edits"
note "exported $n changed files from $SRC_DIR"
