#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make series: turn the repository into a mail-ready patch series.
#
# series/NN-name/ defines step NN: "message" is its commit message (subject,
# blank line, body) and "files" lists the repo files it brings.  A listed
# file lands as the repository has it, except when the step's folder has
#  - series/NN-name/<path>: the file's whole content at this step, or
#  - series/NN-name/<path>.undo: a diff that takes the file from its
#    content at the next step that lists it (the repository's, after the
#    last) back to this step's; it must apply exactly, so the earlier
#    versions follow every change to the file or make series fails.
# Commits are made on the pristine base in build/series-src and written by
# git format-patch, with series/cover-letter, to build/series/.  The tip of
# the series must be exactly the tree apply.sh builds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=$BUILD/series
WORK=$BUILD/series-src
AUTHOR="damon-perf developers <damon-perf@example.org>"

"$TOP/harness/apply.sh" >/dev/null

rm -rf "$WORK" "$OUT"
git clone -q --shared "$BASE_DIR" "$WORK"
cd "$WORK"
git checkout -q -b damon-perf base

mapfile -t steps < <(printf '%s\n' "$TOP"/series/[0-9]*/ | sed 's|/$||')

# version I PATH OUT: write PATH as step I brings it to OUT
version() {
	local i=$1 path=$2 out=$3 step=${steps[$1]} j

	if [ -e "$step/$path" ]; then
		cp "$step/$path" "$out"
	elif [ -e "$step/$path.undo" ]; then
		for ((j = i + 1; j < ${#steps[@]}; j++)); do
			if grep -qxF "$path" "${steps[$j]}/files"; then
				break
			fi
		done
		if [ "$j" -lt "${#steps[@]}" ]; then
			version "$j" "$path" "$out"
		else
			cp "$TOP/$path" "$out"
		fi
		patch -s -F0 --no-backup-if-mismatch -r - "$out" "$step/$path.undo" ||
			die "$(basename "$step"): $path.undo does not apply"
	else
		cp "$TOP/$path" "$out"
	fi
}

listed=()
for i in "${!steps[@]}"; do
	step=${steps[$i]}
	if [ ! -f "$step/message" ] || [ ! -f "$step/files" ]; then
		die "$step needs a message and a files list"
	fi
	while read -r path; do
		[ -n "$path" ] || continue
		[ -e "$TOP/$path" ] || die "$(basename "$step"): $path does not exist"
		if [[ $path == *.patch ]]; then
			target=${path%.patch}
			git checkout -q base -- "$target"
			version "$i" "$path" "$WORK.diff"
			git apply --whitespace=error-all "$WORK.diff" ||
				die "$(basename "$step"): $path does not apply"
		else
			mkdir -p "$(dirname "$path")"
			version "$i" "$path" "$path"
		fi
		listed+=("$path")
	done <"$step/files"
	git add -A -f .
	{
		cat "$step/message"
		echo
		echo "Signed-off-by: $AUTHOR"
	} | git -c user.name="damon-perf developers" \
		-c user.email=damon-perf@example.org commit -q -F -
done
rm -f "$WORK.diff"

# Every kernel file of the repository is in some step.
missing=$(comm -23 <(kernel_files) <(printf '%s\n' "${listed[@]}" | sort -u))
[ -z "$missing" ] || die "files in no series step: $missing"

# The series ends exactly where apply.sh does.
want=$(git -C "$SRC_DIR" rev-parse "HEAD^{tree}")
got=$(git rev-parse "HEAD^{tree}")
if [ "$want" != "$got" ]; then
	git -C "$SRC_DIR" diff --stat "$(git rev-parse HEAD)" 2>/dev/null | tail -n 5 >&2 || true
	die "the series' tip differs from the applied tree"
fi

nr=$(git rev-list --count base..HEAD)
git format-patch -q -o "$OUT" --cover-letter --subject-prefix="RFC PATCH" \
	--base=base base..HEAD
cover=$(ls "$OUT"/0000-*.patch)
subject=$(head -n 1 "$TOP/series/cover-letter")
python3 - "$cover" "$subject" "$TOP/series/cover-letter" "$BASE_VERSION" <<'PY'
import sys
path, subject, letter, version = sys.argv[1:]
body = open(letter).read().split('\n', 2)[2].replace('@BASE_VERSION@', version)
text = open(path).read()
text = text.replace('*** SUBJECT HERE ***', subject)
text = text.replace('*** BLURB HERE ***', body.rstrip('\n'))
open(path, 'w').write(text)
PY
note "series: $nr patches and a cover letter in $OUT"
ls "$OUT"
