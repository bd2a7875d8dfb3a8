#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Common settings for the damon-perf harness scripts.  Sourced, not run.
# shellcheck disable=SC2034 # the variables are used by the sourcing scripts

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
BASE_VERSION=$(cat "$TOP/harness/base-version")
# The base's source tarball: by default the one base.sh downloads, of
# Debian's linux-source-6.12 at BASE_VERSION
BASE_PACKAGE=linux-source-6.12
BASE_DOWNLOAD=$BUILD/base-pkg/$BASE_PACKAGE-$BASE_VERSION.tar.xz
BASE_TARBALL=${BASE_TARBALL:-$BASE_DOWNLOAD}
BASE_DIR=$BUILD/base/linux
SRC_DIR=$BUILD/src
OBJ_ROOT=$BUILD/obj
LOG_DIR=$BUILD/logs

# ccache: rewrite absolute paths so that clones in other folders share hits.
export CCACHE_BASEDIR=$BUILD
export CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export KBUILD_BUILD_TIMESTAMP='2026-01-01'
export KBUILD_BUILD_USER=damon-perf KBUILD_BUILD_HOST=harness

JOBS=${JOBS:-$(nproc)}

# The test kernel's fragments: the distro builder's fragment that turns the
# series on, then what the guest and the tests need.
TEST_FRAGMENTS=("$TOP/Kconfig.damon-perf" "$TOP/configs/test.config")
# the folders of the flattened tree, at their kernel paths
KERNEL_DIRS=(mm include kernel Documentation tools)

die() {
	echo "error: $*" >&2
	exit 1
}

note() {
	echo ">>> $*" >&2
}

# need_packages PACKAGE...: install the Debian packages that are missing,
# as root; as another user, stop and print the apt-get line to run.
need_packages() {
	local missing=() pkg

	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages: ${missing[*]}; run as root:
    apt-get update && apt-get install -y ${missing[*]}"
	fi
	note "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# What the arm64 builds and boots need besides need_packages in base.sh.
ARM64_PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm)

# The series: series/0000-cover-letter.patch and one NNNN-*.patch per
# commit, as git format-patch writes them.  It is the source of the kernel
# code; build/src is the base with the series applied as commits on the
# branch $SERIES_BRANCH.
SERIES_DIR=$TOP/series
SERIES_BRANCH=damon-perf
SERIES_PREFIX="RFC PATCH v2"
SERIES_NAME="damon-perf developers"
SERIES_EMAIL=damon-perf@example.org

# git with the identity and dates that make applying the series give the
# same commits everywhere.
sgit() {
	GIT_COMMITTER_NAME=$SERIES_NAME GIT_COMMITTER_EMAIL=$SERIES_EMAIL \
		git -c core.abbrev=12 -c user.name="$SERIES_NAME" \
		-c user.email="$SERIES_EMAIL" "$@"
}

# series_patches DIR: the patch files of the series in DIR, in order, the
# cover letter left out.
series_patches() {
	local p

	for p in "$1"/[0-9][0-9][0-9][0-9]-*.patch; do
		case $p in
		*/0000-cover-letter.patch) ;;
		*) [ -e "$p" ] && echo "$p" ;;
		esac
	done
}

# Files of the repository that the layout rule derives from the series:
# everything under the kernel-path folders, and MAINTAINERS.patch.
# build_missing NAME [FRAGMENT...]: build kernel NAME as make check does
# (tinyconfig, the test kernel's fragments, then FRAGMENTs), unless it is
# there.
build_missing() {
	local name=$1

	shift
	[ -f "$OBJ_ROOT/$name/arch/x86/boot/bzImage" ] && return 0
	note "no $name kernel: building it as make check does"
	[ -d "$SRC_DIR/.git" ] || "$TOP/harness/apply.sh"
	"$TOP/harness/config.sh" "$name" "${TEST_FRAGMENTS[@]}" "$@" &&
		"$TOP/harness/build.sh" "$name"
}

# kunit_log_passed LOG SUITE...: the KUnit results in a console log, parsed
# by the kernel's own kunit.py into LOG.kunit and shown, say that tests ran,
# that every one passed, and that each SUITE is among the suites passed.
kunit_log_passed() {
	local log=$1 parsed=$1.kunit suite

	shift
	python3 "$SRC_DIR/tools/testing/kunit/kunit.py" parse "$log" >"$parsed" || true
	cat "$parsed"
	# What failed, as [FAIL] lines for make check's summary: each failed
	# expectation with the line after it, then the failed cases and suites.
	# shellcheck disable=SC2016 # an awk program
	awk '{ sub(/^\[[0-9:]+\] +/, "") }
		/(EXPECTATION|ASSERTION) FAILED/ { print "[FAIL] " $0; n = 1; next }
		n { print "[FAIL] " $0; n = 0 }
		/^\[(FAILED|CRASHED)\] / { print "[FAIL] " $0 }' "$parsed"
	grep -q 'Testing complete. Ran [1-9][0-9]* tests: passed: [1-9]' "$parsed" &&
		! grep -q 'failed: [1-9]\|crashed: [1-9]\|errors: [1-9]' "$parsed" ||
		return 1
	for suite in "$@"; do
		grep -q "\[PASSED\] $suite =" "$parsed" || return 1
	done
}

kernel_files() {
	(cd "$TOP" && git ls-files --cached --others --exclude-standard -- \
		"${KERNEL_DIRS[@]}" MAINTAINERS.patch 2>/dev/null | sort -u)
}

# With =n the data path (perf.o, and the rings in perf_observe.o) reads no
# clock and calls nothing of the observability: the symbols its objects
# use from elsewhere name neither.  The =y objects are the control.  A test
# of make check, and a goal of make bench.
test_no_observe_data_path() {
	local pattern='^(local_clock|sched_clock|sched_clock_cpu|ktime_get.*|__traceiter_damon_perf_.*|damon_perf_obs_.*)$'
	local y n f

	for f in perf.o perf_observe.o; do
		[ -f "$OBJ_ROOT/no-observe/mm/damon/$f" ] || { echo "no =n $f"; return 1; }
	done
	y=$(nm -u "$OBJ_ROOT/test/mm/damon/perf.o" "$OBJ_ROOT/test/mm/damon/perf_observe.o" |
		awk '{print $NF}' | grep -E "$pattern" | sort -u | tr '\n' ' ')
	n=$(nm -u "$OBJ_ROOT/no-observe/mm/damon/perf.o" \
		"$OBJ_ROOT/no-observe/mm/damon/perf_observe.o" |
		awk '{print $NF}' | grep -E "$pattern" | sort -u | tr '\n' ' ')
	echo "clock and observability symbols the data path uses, =y: ${y:-none}"
	echo "the same with =n: ${n:-none}"
	[ -n "$y" ] && [ -z "$n" ]
}

# v1_commit: the commit of this repository whose series/ is v1, as posted:
# the parent of the commit that took v1's 24th patch away for v2 (by its
# name: v2's patches are renumbered as patches come in).  Found in the
# history, which every clone has; a tag need not be fetched.
v1_commit() {
	local v2

	v2=$(git -C "$TOP" log -1 --format=%H --diff-filter=D -- \
		'series/0024-Docs-admin-guide-mm-damon-document-the-AUX-drain.patch')
	[ -n "$v2" ] || die "no commit of $TOP's history takes v1's patch 24 away"
	git -C "$TOP" rev-parse "$v2^"
}
