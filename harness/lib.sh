#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Common settings for the damon-perf harness scripts.  Sourced, not run.
# shellcheck disable=SC2034 # the variables are used by the sourcing scripts

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
BASE_VERSION=$(cat "$TOP/harness/base-version")
BASE_TARBALL=${BASE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
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

die() {
	echo "error: $*" >&2
	exit 1
}

note() {
	echo ">>> $*" >&2
}

# Repo files that land in the kernel tree: everything under the kernel-path
# folders (new files, and patches to the base's files), plus
# MAINTAINERS.patch.
kernel_files() {
	(cd "$TOP" && git ls-files --cached --others --exclude-standard -- \
		mm include Documentation tools MAINTAINERS.patch \
		2>/dev/null | sort -u)
}
