#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make sure the pristine base kernel is extracted under build/base/linux as a
# git repository whose commit tagged "base" is the unmodified source.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# What make demo and make check need on the host.  The arm64 cross
# compiler and QEMU are installed by the scripts that use them
# (ARM64_PACKAGES in lib.sh), which only make check-full runs.
need_packages linux-source-6.12 build-essential flex bison bc libelf-dev \
	libssl-dev cpio xz-utils ccache qemu-system-x86 busybox-static \
	bash-static kmod git python3 perl rsync sparse python3-sphinx \
	python3-sphinx-rtd-theme stress-ng stress linux-perf trace-cmd \
	procps util-linux grep file binutils python3-matplotlib python3-numpy

[ -f "$BASE_TARBALL" ] || die "$BASE_TARBALL missing after installing linux-source-6.12"

# One extraction at a time: a second run waits for the first.
mkdir -p "$BUILD"
exec 9>"$BUILD/.base.lock"
flock 9

stamp=$BUILD/base/extracted
want="$(stat -c '%s %Y' "$BASE_TARBALL")"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   git -C "$BASE_DIR" rev-parse -q --verify base >/dev/null 2>&1; then
	exit 0
fi

note "extracting $BASE_TARBALL"
rm -rf "$BUILD/base"
mkdir -p "$BUILD/base/tmp"
tar -C "$BUILD/base/tmp" -xf "$BASE_TARBALL"
mv "$BUILD/base/tmp/"linux-source-6.12 "$BASE_DIR"
rmdir "$BUILD/base/tmp"

v=$(make -s -C "$BASE_DIR" kernelversion)
if [ "$v" != "$BASE_VERSION" ]; then
	echo "WARNING: tarball is $v, harness/base-version says $BASE_VERSION" >&2
fi
echo "$v" > "$BUILD/base/VERSION"

note "committing the pristine $v tree"
git -C "$BASE_DIR" init -q -b "base-$v"
git -C "$BASE_DIR" -c core.autocrlf=false add -A -f .
# Fixed identity and dates: the same tarball gives the same commit, so the
# series' base-commit line is the same on every machine.
GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' \
	git -C "$BASE_DIR" -c user.name=damon-perf -c user.email=harness@localhost \
	commit -q -m "Linux $v (Debian linux-source-6.12)"
git -C "$BASE_DIR" tag base
echo "$want" > "$stamp"
