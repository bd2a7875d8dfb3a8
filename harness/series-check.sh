#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# series-check.sh CHECK: one of the kernel's own checks on the series that
# make series writes to build/series (run make series first).
#
#   am           git am onto the base succeeds and ends at the applied tree
#   checkpatch   checkpatch --strict: no errors or warnings (but for mainline
#                commit ids, which the base's history lacks); every CHECK is
#                listed, with its justification, in the cover letter
#   kernel-doc   scripts/kernel-doc -none -Wall is clean on every C file
#                each patch adds, and adds nothing to what it says of the
#                base's version of every file a patch changes
#   maintainers  get_maintainer.pl names the new entry for every patch, the
#                perf events entry for a patch to perf's core, or the DAMON
#                entry for a patch to DAMON core's and operations' files alone
#   kconfig      the series refers to no Kconfig symbol that does not exist
#   kconfig-each no patch refers to a Kconfig symbol that does not exist yet
#   docs         Sphinx builds the DAMON admin-guide folder and adds no
#                warning to the base's; get_abi.pl validates
#   prefixes     every prefix of the series builds mm/damon and perf's core
#                (the test config) with W=1 and sparse reporting nothing
#                the base does not
#   prefix-boots every prefix boots as the test kernel and passes the KUnit
#                suites and the kselftest it has
#   sparse       make C=2 (sparse) on mm/damon and kernel/events/core.c
#                reports nothing the base does not
#   w1           make W=1 adds no warnings in mm/damon and kernel/events
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SERIES=$BUILD/series
AM=$BUILD/series-am

# in_src COMMAND...: run COMMAND in the applied tree; its status is ignored,
# the checks judge its output.
in_src() {
	(cd "$SRC_DIR" || exit; "$@") || true
}
# patches: the series' patch files, in order, without the cover letter
patches() {
	series_patches "$SERIES"
}

check_am() {
	rm -rf "$AM"
	git clone -q --shared "$BASE_DIR" "$AM"
	git -C "$AM" checkout -q -b am base
	# shellcheck disable=SC2046 # one argument per patch file
	git -C "$AM" -c user.name=am -c user.email=am@localhost am -q --whitespace=error-all $(patches)
	echo "applied $(git -C "$AM" rev-list --count base..HEAD) patches"
	[ "$(git -C "$AM" rev-parse "HEAD^{tree}")" = "$(git -C "$SRC_DIR" rev-parse "HEAD^{tree}")" ] ||
		die "the series applied with git am differs from the tested tree"
}

# checkpatch_checks PATCH: "FILE:LINE: message" for each CHECK in PATCH
checkpatch_checks() {
	in_src perl scripts/checkpatch.pl --strict --no-tree "$1" |
		awk '/^CHECK: / { msg = substr($0, 8); getline
			if (match($0, /FILE: [^ ]*/))
				print substr($0, RSTART + 6, RLENGTH - 6) " " msg }'
}

check_checkpatch() {
	local p n=0 out bad=0 total entry

	total=$(patches | wc -l)
	for p in $(patches); do
		n=$((n + 1))
		# the base is a source tarball imported as one commit: no
		# mainline commit a message names (a backport's) is in its
		# history, so checkpatch cannot find one; their form is checked
		out=$(in_src perl scripts/checkpatch.pl --strict --terse --no-tree \
			--ignore UNKNOWN_COMMIT_ID "$p")
		echo "$n/$total $(basename "$p"): ${out:+$(tail -n 1 <<<"$out")}${out:-clean}"
		if grep -q 'ERROR\|WARNING' <<<"$out"; then
			grep 'ERROR\|WARNING' <<<"$out"
			bad=1
		fi
		# every CHECK must be listed, and justified, in the cover letter
		while IFS= read -r entry; do
			if ! grep -qF "  $n/$total $entry" "$SERIES/0000-cover-letter.patch"; then
				echo "CHECK not justified in the cover letter: $n/$total $entry"
				bad=1
			fi
		done < <(checkpatch_checks "$p")
	done
	return $bad
}

# kdoc DIR FILE...: kernel-doc -none -Wall on FILEs, relative to DIR, with
# line numbers dropped so that runs on two versions of a file compare.
kdoc() {
	local dir=$1

	shift
	(cd "$dir" && perl "$AM/scripts/kernel-doc" -none -Wall "$@" 2>&1) |
		sed -E 's/:[0-9]+: /: /' | sort
}

check_kernel_doc() {
	local commit n=0 total files old f out base bad=0 tmp=$BUILD/kdoc-base

	[ -d "$AM/.git" ] || die "run the am check first"
	total=$(git -C "$AM" rev-list --count base..am)
	for commit in $(git -C "$AM" rev-list --reverse base..am); do
		n=$((n + 1))
		mapfile -t files < <(git -C "$AM" diff-tree --no-commit-id \
			--name-only -r --diff-filter=AM "$commit" -- \
			'mm/*.[ch]' 'include/*.h' 'kernel/*.[ch]')
		if [ ${#files[@]} -eq 0 ]; then
			echo "$n/$total: no C files"
			continue
		fi
		# what kernel-doc says of the base's version of changed files
		rm -rf "$tmp"
		for f in "${files[@]}"; do
			if git -C "$AM" cat-file -e "base:$f" 2>/dev/null; then
				mkdir -p "$tmp/$(dirname "$f")"
				git -C "$AM" show "base:$f" >"$tmp/$f"
			fi
		done
		base=
		if [ -d "$tmp" ]; then
			mapfile -t old < <(cd "$tmp" && find . -type f -printf '%P\n')
			base=$(kdoc "$tmp" "${old[@]}")
		fi
		git -C "$AM" checkout -q "$commit"
		out=$(comm -13 <(echo "$base") <(kdoc "$AM" "${files[@]}") | sed '/^$/d')
		echo "$n/$total ${files[*]}: ${out:-clean}"
		[ -z "$out" ] || bad=1
	done
	git -C "$AM" checkout -q am
	rm -rf "$tmp"
	return $bad
}

check_maintainers() {
	local p bad=0 entry who

	for p in $(patches); do
		# a change to perf's core goes to the perf maintainers, one to
		# the CPU hotplug states to CPU hotplug's, one to DAMON core's
		# and operations' files alone to DAMON's
		if grep -q '^+++ b/kernel/events/' "$p"; then
			entry="perf events" who='linux-perf-users@vger.kernel.org'
		elif grep -qx '+++ b/include/linux/cpuhotplug.h' "$p"; then
			entry="CPU HOTPLUG" who='tglx@linutronix.de'
		elif ! grep '^+++ b/' "$p" | grep -qvE \
			'^\+\+\+ b/(include/linux/damon\.h|mm/damon/(core|vaddr|paddr|ops-common)\.c|mm/damon/tests/(core|vaddr)-kunit\.h)$'; then
			entry="DAMON" who='damon@lists.linux.dev'
		else
			entry="DAMON perf" who='damon-perf@example.org'
		fi
		if in_src perl scripts/get_maintainer.pl --no-git \
			--no-git-fallback --no-rolestats "$p" | grep -qF "$who"; then
			echo "$(basename "$p"): names the $entry entry"
		else
			echo "$(basename "$p"): get_maintainer.pl does not name the $entry entry"
			bad=1
		fi
	done
	return $bad
}

# sphinx_warnings TREE OBJ: what Sphinx reports building the DAMON
# admin-guide folder of TREE as html in OBJ, tree and line numbers dropped
# (the kernel prints TREE with its symbolic links resolved).
sphinx_warnings() {
	local tree

	tree=$(realpath "$1")
	rm -rf "$2"
	mkdir -p "$2"
	if ! make -C "$1" O="$2" SPHINXDIRS=admin-guide/mm/damon htmldocs \
			>"$2/sphinx.log" 2>&1; then
		tail -n 20 "$2/sphinx.log" >&2
		return 1
	fi
	grep -E '(WARNING|ERROR|SEVERE|CRITICAL)' "$2/sphinx.log" |
		grep -v 'dot(1) not found' | sed -E "s|^$tree/||; s/:[0-9]+: /: /" |
		sort || true
}

# Sphinx builds the DAMON admin-guide folder with the new page and adds no
# warning to those of the base (whose cross references into other folders
# cannot resolve in a one-folder build); get_abi.pl validates the ABI.
check_docs() {
	local base ours new page

	base=$(sphinx_warnings "$BASE_DIR" "$OBJ_ROOT/docs-base") || return 1
	ours=$(sphinx_warnings "$SRC_DIR" "$OBJ_ROOT/docs") || return 1
	page=$OBJ_ROOT/docs/Documentation/output/admin-guide/mm/damon/perf-observability.html
	echo "$(sphinx-build --version) on admin-guide/mm/damon:" \
		"$(grep -c . <<<"$base") warnings on the base," \
		"$(grep -c . <<<"$ours") with the series"
	new=$(comm -13 <(echo "$base") <(echo "$ours") | sed '/^$/d')
	echo "new warnings: ${new:-none}"
	[ -z "$new" ] || return 1
	[ -s "$page" ] || { echo "no $page"; return 1; }
	echo "built $(basename "$page")"
	in_src perl scripts/get_abi.pl validate --dir Documentation/ABI 2>&1 |
		tee "$LOG_DIR/get_abi.log" | grep -i 'damon' && return 1
	echo "get_abi.pl validate: nothing about damon"
}

# The kernel's checkkconfigsymbols.py on the whole series at once: no
# CONFIG_ symbol it refers to is undefined once every patch is applied.
# make check's; kconfig-each (make check-full's) runs it on each patch, and
# so also finds a patch that names a symbol only a later patch defines.
check_kconfig() {
	local out

	[ -d "$AM/.git" ] || die "run the am check first"
	# the script resets the checkout to the commits it compares
	git -C "$AM" checkout -q --detach am
	out=$(cd "$AM" && python3 scripts/checkkconfigsymbols.py --diff base..am 2>&1) || true
	git -C "$AM" checkout -q am
	echo "base..am: ${out:-no undefined symbols}"
	[ -z "$out" ]
}

# Every CONFIG_ symbol that a patch adds a reference to is defined once the
# patch is applied.
check_kconfig_each() {
	local commit n=0 total out bad=0

	[ -d "$AM/.git" ] || die "run the am check first"
	total=$(git -C "$AM" rev-list --count base..am)
	# the script resets the checkout to the commits it compares
	git -C "$AM" checkout -q --detach am
	for commit in $(git -C "$AM" rev-list --reverse base..am); do
		n=$((n + 1))
		# a patch that names no Kconfig symbol cannot name an undefined one
		if ! git -C "$AM" show --format= "$commit" |
				grep -qE '^\+.*(CONFIG_[A-Z0-9_]+|^\+(menu)?config |depends on|select )'; then
			echo "$n/$total $(git -C "$AM" log -1 --format=%s "$commit"): names no Kconfig symbol"
			continue
		fi
		out=$(cd "$AM" && python3 scripts/checkkconfigsymbols.py \
			--diff "$commit^..$commit" 2>&1) || true
		echo "$n/$total $(git -C "$AM" log -1 --format=%s "$commit"):" \
			"${out:-no undefined symbols}"
		[ -z "$out" ] || bad=1
	done
	git -C "$AM" checkout -q am
	return $bad
}

# prefix_links OBJ: every symbol the mm/damon objects in OBJ use is defined
# by them or by the kernel outside the series' own objects (the test
# kernel's System.map less what its mm/damon objects define), so the
# prefix would link.  Prints the symbols that would not.
prefix_links() {
	local objs series_defs outside own

	objs=$(ar t "$1/mm/damon/built-in.a")
	series_defs=$(nm --defined-only "$OBJ_ROOT"/test/mm/damon/*.o | awk 'NF == 3 { print $3 }' | sort -u)
	outside=$(awk '{ print $3 }' "$OBJ_ROOT/test/System.map" | sort -u |
		comm -23 - <(echo "$series_defs"))
	# shellcheck disable=SC2086 # one path per word
	own=$(nm --defined-only $objs | awk 'NF == 3 { print $3 }' | sort -u)
	# shellcheck disable=SC2086
	nm -u $objs | awk 'NF == 2 { print $2 }' | sort -u |
		comm -23 - <(echo "$own") | comm -23 - <(echo "$outside") |
		grep . && return 1
	return 0
}

# prefix_warnings TREE OBJ LOG: build mm/damon/ and perf's core of TREE
# with the test kernel's configuration in OBJ, with W=1 and sparse on every
# file (C=2), the build's output in LOG; print what the compiler and sparse
# report, paths relative to TREE as the kernel prints it, line numbers
# dropped (patches move lines).  Fails if the build does.
prefix_warnings() {
	local tree obj=$2 log=$3

	tree=$(realpath "$1")
	test_obj "$1" "$obj" &&
		make -C "$1" O="$obj" CC="ccache gcc" -j"$JOBS" W=1 C=2 \
			mm/damon/ kernel/events/ >"$log" 2>&1 || return 1
	grep -E ': (warning|error):' "$log" |
		sed -E "s|^$tree/||; s|^([^:]*):[0-9]+:[0-9]+:|\1:|; s|^([^:]*):[0-9]+:|\1:|" |
		sort || true
}

# Every prefix of the series builds mm/damon/ and perf's core with the
# test configuration, W=1 and sparse, and reports nothing that the base
# does not (the base's own sparse warnings in vaddr.c and perf's core are
# the base's); its objects use no symbol that only a later patch defines.
check_prefixes() {
	local obj=$OBJ_ROOT/prefix n commit total base out new

	# make check-rest runs this without the am check before it
	[ -d "$AM/.git" ] || check_am
	git -C "$AM" checkout -q base
	base=$(prefix_warnings "$AM" "$obj" "$LOG_DIR/prefix-0.log") ||
		{ git -C "$AM" checkout -q am; die "the base does not build"; }
	echo "the base, W=1 and sparse on mm/damon/ and kernel/events/:" \
		"$(grep -c . <<<"$base") reports (in $LOG_DIR/prefix-0.log)"
	total=$(git -C "$AM" rev-list --count base..am)
	n=0
	for commit in $(git -C "$AM" rev-list --reverse base..am); do
		n=$((n + 1))
		git -C "$AM" checkout -q "$commit"
		if ! out=$(prefix_warnings "$AM" "$obj" "$LOG_DIR/prefix-$n.log"); then
			grep -E 'error|Error' "$LOG_DIR/prefix-$n.log" | head -20
			git -C "$AM" checkout -q am
			die "prefix $n/$total does not build"
		fi
		new=$(comm -13 <(echo "$base") <(echo "$out") | sed '/^$/d')
		if [ -n "$new" ]; then
			echo "$new"
			git -C "$AM" checkout -q am
			die "prefix $n/$total: W=1 or sparse reports what the base does not"
		fi
		if ! prefix_links "$obj" >"$LOG_DIR/prefix-$n.undefined"; then
			cat "$LOG_DIR/prefix-$n.undefined"
			git -C "$AM" checkout -q am
			die "prefix $n/$total uses symbols that only later patches define"
		fi
		echo "prefix $n/$total builds, W=1 and sparse clean: $(git -C "$AM" log -1 --format=%s)"
	done
	git -C "$AM" checkout -q am
}

# prefix_suites TREE: the names of the KUnit suites TREE's mm/damon defines
prefix_suites() {
	grep -rhoE '^\s*\.name = "damon-perf[a-z-]*"' "$1/mm/damon/tests" 2>/dev/null |
		sed -E 's/.*"(.*)"/\1/' | sort -u || true
}

# Every prefix of the series boots as the test kernel (bzImage and modules
# from the test configuration, as far as the prefix has its symbols) and
# passes the tests it has: every KUnit suite (the series' suites that
# exist at that prefix among them), and, from the patch that adds it, the
# kselftest damon_perf_obs_test.sh.  The guest's copy of the kselftest is
# the final tree's; a prefix whose copy differs cannot be run with it, and
# fails.
check_prefix_boots() {
	local obj=$OBJ_ROOT/prefix-boot n commit total suites cmd log
	local ksft=tools/testing/selftests/damon bad=0

	[ -d "$AM/.git" ] || check_am
	[ -f "$BUILD/initramfs.cpio" ] || die "no initramfs; run make kernel first"
	total=$(git -C "$AM" rev-list --count base..am)
	n=0
	for commit in $(git -C "$AM" rev-list --reverse base..am); do
		n=$((n + 1))
		git -C "$AM" checkout -q "$commit"
		if ! test_obj "$AM" "$obj" ||
		   ! make -C "$AM" O="$obj" CC="ccache gcc" -j"$JOBS" \
				bzImage modules >"$LOG_DIR/prefix-boot-$n.build" 2>&1; then
			grep -E 'error|Error' "$LOG_DIR/prefix-boot-$n.build" | head -20
			echo "prefix $n/$total: the kernel does not build"
			bad=1
			continue
		fi
		cmd=true
		if [ -f "$AM/$ksft/damon_perf_obs_test.sh" ]; then
			if ! git -C "$AM" diff --quiet "$commit" am -- "$ksft"; then
				echo "prefix $n/$total: its $ksft differs from the final tree's, which the guest has"
				bad=1
				continue
			fi
			cmd="/opt/kselftest/damon/damon_perf_obs_test.sh --duration 5 --output /tmp/ksft"
		fi
		log=$LOG_DIR/prefix-boot-$n.log
		if ! "$TOP/harness/boot.sh" -k prefix-boot -t 900 -n "prefix-boot-$n" \
				-a kunit.enable=1 -- "$cmd" >"$log.out" 2>&1; then
			tail -n 20 "$log.out"
			echo "prefix $n/$total: the boot or '$cmd' failed (log: $log)"
			bad=1
			continue
		fi
		# every suite passes, the series' suites of the prefix among them
		mapfile -t suites < <(prefix_suites "$AM")
		if ! kunit_log_passed "$log" "${suites[@]}" >/dev/null; then
			grep -E 'FAILED|CRASHED|Testing complete' "$log.kunit" | head -20
			echo "prefix $n/$total: KUnit did not pass, or not all of ${suites[*]}"
			bad=1
			continue
		fi
		echo "prefix $n/$total boots; KUnit passed (${suites[*]}); ran '$cmd':" \
			"$(git -C "$AM" log -1 --format=%s)"
	done
	git -C "$AM" checkout -q am
	return $bad
}

# test_obj TREE OBJ: make OBJ a build directory of TREE with the test
# kernel's configuration.
test_obj() {
	mkdir -p "$2"
	cp "$OBJ_ROOT/test/.config" "$2/.config"
	make -C "$1" O="$2" CC="ccache gcc" -j"$JOBS" olddefconfig >/dev/null
}

# sparse_warnings TREE OBJ: what make C=2 (sparse on every file) reports in
# mm/damon of TREE built with the test config in OBJ, paths made relative
# to TREE as the kernel prints it, symbolic links resolved, line numbers
# dropped (patches move lines).
sparse_warnings() {
	local tree

	tree=$(realpath "$1")
	if [ "$2" != "$OBJ_ROOT/test" ]; then
		test_obj "$1" "$2"
	fi
	make -C "$1" O="$2" CC="ccache gcc" -j"$JOBS" C=2 mm/damon/ \
		kernel/events/core.o 2>&1 |
		grep -E '(mm/damon|kernel/events)/.*: (warning|error):' |
		sed -E "s|^$tree/||; s|^([^:]*):[0-9]+:[0-9]+:|\1:|" |
		sort || true
}

# Sparse on mm/damon and perf's core adds nothing to what it reports on
# the base, whose vaddr.c has warnings of its own.  The series moves the
# lines of the base's files (kernel/events/core.c, mm/damon/vaddr.c), so
# the warnings are compared without their line numbers.
check_sparse() {
	local base ours new

	base=$(sparse_warnings "$BASE_DIR" "$OBJ_ROOT/sparse-base")
	ours=$(sparse_warnings "$SRC_DIR" "$OBJ_ROOT/test")
	echo "sparse on mm/damon and kernel/events/core.c of the base:"
	echo "${base:-  clean}"
	new=$(comm -13 <(echo "$base") <(echo "$ours"))
	echo "sparse with the series, beyond the base: ${new:-nothing}"
	[ -z "$new" ]
}

check_w1() {
	local obj=$OBJ_ROOT/w1 out

	test_obj "$SRC_DIR" "$obj"
	out=$(make -C "$SRC_DIR" O="$obj" CC="ccache gcc" -j"$JOBS" W=1 mm/damon/ \
		kernel/events/ 2>&1 | grep -E '(mm/damon|kernel/events)/.*warning:' || true)
	echo "W=1 on mm/damon and kernel/events: ${out:-no warnings}"
	[ -z "$out" ]
}

case ${1:-} in
am) check_am ;;
checkpatch) check_checkpatch ;;
kernel-doc) check_kernel_doc ;;
maintainers) check_maintainers ;;
docs) check_docs ;;
prefixes) check_prefixes ;;
prefix-boots) check_prefix_boots ;;
kconfig) check_kconfig ;;
kconfig-each) check_kconfig_each ;;
sparse) check_sparse ;;
w1) check_w1 ;;
*) die "usage: $0 am|checkpatch|kernel-doc|maintainers|kconfig|kconfig-each|docs|prefixes|prefix-boots|sparse|w1" ;;
esac
