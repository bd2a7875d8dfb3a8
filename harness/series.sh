#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The patch series in series/ is the source of the kernel code.  This
# script turns it into a branch, a branch back into it, and a branch into
# the flattened tree (the repository's mm/, include/, kernel/,
# Documentation/, tools/ and MAINTAINERS.patch, by the layout rule in the
# README).
#
#   series.sh am DIR        clone the base into DIR and git am the series
#                           onto the branch damon-perf; the cover letter
#                           becomes the branch description
#   series.sh format DIR OUT
#                           git format-patch DIR's branch, cover letter
#                           included, into OUT
#   series.sh flatten DIR OUT
#                           write the flattened tree of DIR's branch to OUT
#   series.sh               (make series) apply series/ in build/series-src,
#                           write it again to build/series and fail unless
#                           that equals series/, and unless the flattened
#                           tree equals the repository's; then write the
#                           range-diff of v1 (series/ of v1_commit) and the
#                           series to build/range-diff-v1.txt
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The cover letter's subject and blurb, as a branch description: the first
# paragraph is the subject (git format-patch --cover-from-description=subject).
cover_description() {
	python3 - "$1" <<'PY'
import email, email.policy, re, sys
msg = email.message_from_file(open(sys.argv[1]), policy=email.policy.default)
subject = re.sub(r'^\[[^]]*\]\s*', '', str(msg['subject']))
body = msg.get_content()
# the blurb ends where git's shortlog begins: "Author Name (N):"
m = re.search(r'^\S[^\n]* \(\d+\):$', body, re.M)
blurb = body[:m.start()] if m else body
print(subject + '\n\n' + blurb.strip())
PY
}

series_am() {
	local dir=$1 cover=$SERIES_DIR/0000-cover-letter.patch
	local -a patches

	mapfile -t patches < <(series_patches "$SERIES_DIR")
	[ ${#patches[@]} -gt 0 ] || die "no patches in $SERIES_DIR"
	[ -f "$cover" ] || die "$cover missing"
	rm -rf "$dir"
	git clone -q --shared "$BASE_DIR" "$dir"
	git -C "$dir" checkout -q -b "$SERIES_BRANCH" base
	sgit -C "$dir" am -q --committer-date-is-author-date \
		--whitespace=error-all "${patches[@]}" ||
		die "the series does not apply onto the base"
	sgit -C "$dir" config "branch.$SERIES_BRANCH.description" \
		"$(cover_description "$cover")"
}

series_format() {
	local dir=$1 out=$2 nr date

	nr=$(git -C "$dir" rev-list --count "base..$SERIES_BRANCH")
	[ "$nr" -gt 0 ] || die "$dir: no commits on $SERIES_BRANCH"
	git -C "$dir" config "branch.$SERIES_BRANCH.description" >/dev/null ||
		die "$dir: no cover letter (git branch --edit-description)"
	rm -rf "$out"
	# --zero-commit and no signature: the same series gives the same
	# files whatever the commit dates and the git version.
	sgit -C "$dir" format-patch -q -o "$out" --cover-letter \
		--cover-from-description=subject --subject-prefix="$SERIES_PREFIX" \
		--base=base --zero-commit --no-signature \
		"base..$SERIES_BRANCH"
	# git dates the cover letter now; date it as the newest patch instead
	date=$(grep -m1 '^Date: ' "$(series_patches "$out" | tail -n 1)")
	sed -i "0,/^Date: .*/s//$date/" "$out/0000-cover-letter.patch"
}

# The layout rule: a file the series adds lands at its path, a base file it
# changes becomes PATH.patch, a diff against the base without index lines.
series_flatten() {
	local dir=$1 out=$2 status path

	rm -rf "$out"
	mkdir -p "$out"
	while IFS=$'\t' read -r status path; do
		mkdir -p "$out/$(dirname "$path")"
		case $status in
		A)
			git -C "$dir" show "$SERIES_BRANCH:$path" >"$out/$path"
			if git -C "$dir" ls-tree "$SERIES_BRANCH" -- "$path" |
					grep -q '^100755 '; then
				chmod +x "$out/$path"
			fi
			;;
		M)
			git -C "$dir" diff --no-color --no-ext-diff "base..$SERIES_BRANCH" \
				-- "$path" | sed '/^index /d' >"$out/$path.patch"
			;;
		*)
			die "$path: status $status is not supported by the layout rule"
			;;
		esac
	done < <(git -C "$dir" diff --name-status --no-renames "base..$SERIES_BRANCH")
}

# xbit FILE: whether FILE is executable, as x or -
xbit() {
	if [ -x "$1" ]; then echo x; else echo -; fi
}

# series_range_diff DIR OUT REV: git am v1 (series/ of commit REV, which
# is v1_commit) onto the base in DIR, as branch v1, and write git
# range-diff of v1 against DIR's branch to OUT, for the cover letter's
# readers.
series_range_diff() {
	local dir=$1 out=$2 rev=$3 f
	local v1=$BUILD/series-v1

	rm -rf "$v1"
	mkdir -p "$v1"
	for f in $(git -C "$TOP" ls-tree --name-only "$rev" series/ |
		   grep '/[0-9][0-9][0-9][0-9]-.*\.patch$' | grep -v '/0000-'); do
		git -C "$TOP" show "$rev:$f" >"$v1/${f#series/}"
	done
	git -C "$dir" branch -q -f v1 base
	git -C "$dir" checkout -q v1
	# shellcheck disable=SC2046 # one argument per patch file
	sgit -C "$dir" am -q --committer-date-is-author-date \
		$(series_patches "$v1") || die "v1 does not apply onto the base"
	git -C "$dir" checkout -q "$SERIES_BRANCH"
	git -C "$dir" range-diff --no-color "base..v1" "base..$SERIES_BRANCH" \
		>"$out"
}

# make series: the series, written again, is series/; and the flattened
# tree in the repository is the series' own.  It also writes the range-diff
# of v1 and this series.
series_make() {
	local work=$BUILD/series-src out=$BUILD/series flat=$BUILD/series-flat
	local f bad=0 v1

	"$TOP/harness/base.sh"
	series_am "$work"
	series_format "$work" "$out"
	if ! diff -r -u "$SERIES_DIR" "$out" >"$BUILD/series.diff"; then
		head -n 40 "$BUILD/series.diff" >&2
		echo "series/ is not what git format-patch writes from it;" \
			"run make export" >&2
		bad=1
	fi
	series_flatten "$work" "$flat"
	for f in $(cd "$flat" && find . -type f -printf '%P\n' | sort); do
		if ! cmp -s "$flat/$f" "$TOP/$f" ||
		   [ "$(xbit "$flat/$f")" != "$(xbit "$TOP/$f")" ]; then
			echo "$f differs from the series' version; run make export" >&2
			bad=1
		fi
	done
	for f in $(kernel_files); do
		if [ ! -e "$flat/$f" ]; then
			echo "$f is in no patch of the series; run make export" >&2
			bad=1
		fi
	done
	[ $bad -eq 0 ] || die "the repository does not match series/"
	note "series: $(series_patches "$out" | wc -l) patches and a cover letter in $out, equal to series/"
	v1=$(v1_commit)
	series_range_diff "$work" "$BUILD/range-diff-v1.txt" "$v1"
	note "series: git range-diff of v1 ($(git -C "$TOP" log -1 --format=%h "$v1")) and this series in $BUILD/range-diff-v1.txt"
}

case ${1:-} in
am) series_am "$2" ;;
format) series_format "$2" "$3" ;;
flatten) series_flatten "$2" "$3" ;;
"") series_make ;;
*) die "usage: $0 [am DIR | format DIR OUT | flatten DIR OUT]" ;;
esac
