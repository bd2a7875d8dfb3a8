#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make sure the pristine base kernel is extracted under build/base/linux as a
# git repository whose commit tagged "base" is the unmodified source.
#
# The base is the source of Debian's linux-source-6.12 at exactly the
# version harness/base-version names.  Debian's security archive keeps
# earlier point releases beside the newest, so that version is downloaded
# (apt-get download, into build/base-pkg) rather than installed: whatever
# linux-source-6.12 the machine has installed, or apt would install, does
# not move the base.  BASE_TARBALL names another tarball to use instead.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# What make demo and make check need on the host.  The arm64 cross
# compiler and QEMU are installed by the scripts that use them
# (ARM64_PACKAGES in lib.sh), which only make check-full runs.
need_packages build-essential flex bison bc libelf-dev \
	libssl-dev cpio xz-utils ccache qemu-system-x86 busybox-static \
	bash-static kmod git python3 perl rsync sparse python3-sphinx \
	python3-sphinx-rtd-theme stress-ng stress linux-perf trace-cmd \
	procps util-linux grep file binutils python3-matplotlib python3-numpy

# base_package_version: the Debian version of BASE_PACKAGE whose upstream
# version is $BASE_VERSION, as the archive lists it (6.12.117-1~deb12u1)
base_package_version() {
	apt-cache madison "$BASE_PACKAGE" 2>/dev/null |
		awk -F' *[|] *' -v v="$BASE_VERSION-" 'index($2, v) == 1 { print $2; exit }' |
		grep .
}

# fetch_base TARBALL: download BASE_PACKAGE at $BASE_VERSION and keep its
# source tarball as TARBALL
fetch_base() {
	local dir=$BUILD/base-pkg ver deb

	if ! ver=$(base_package_version); then
		[ "$(id -u)" -ne 0 ] ||
			apt-get update -qq || die "apt-get update failed"
		ver=$(base_package_version) ||
			die "Debian's archive has no $BASE_PACKAGE $BASE_VERSION (apt-cache madison $BASE_PACKAGE lists the versions it has): rebase the series onto one of them and update harness/base-version, or set BASE_TARBALL"
	fi
	note "downloading $BASE_PACKAGE $ver"
	rm -rf "$dir"
	mkdir -p "$dir"
	# apt's sandbox user cannot write to a folder of root's: it says so,
	# and downloads as root
	if ! (cd "$dir" && apt-get download -q "$BASE_PACKAGE=$ver") \
			>"$dir/download.log" 2>&1; then
		cat "$dir/download.log" >&2
		die "apt-get download $BASE_PACKAGE=$ver failed"
	fi
	deb=$(find "$dir" -name "${BASE_PACKAGE}_*.deb")
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/src/$BASE_PACKAGE.tar.xz" >"$1.part"
	mv "$1.part" "$1"
	rm -f "$deb"
}

# One download and extraction at a time: a second run waits for the first.
mkdir -p "$BUILD"
exec 9>"$BUILD/.base.lock"
flock 9

if [ "$BASE_TARBALL" = "$BASE_DOWNLOAD" ] && [ ! -f "$BASE_TARBALL" ]; then
	fetch_base "$BASE_TARBALL"
fi
[ -f "$BASE_TARBALL" ] || die "no $BASE_TARBALL"

stamp=$BUILD/base/extracted
# the form v1's base.sh writes too: make reproduce shares the extraction
want="$(stat -c '%s %Y' "$BASE_TARBALL")"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   git -C "$BASE_DIR" rev-parse -q --verify base >/dev/null 2>&1; then
	exit 0
fi

note "extracting $BASE_TARBALL"
rm -rf "$BUILD/base"
mkdir -p "$BUILD/base/tmp"
tar -C "$BUILD/base/tmp" -xf "$BASE_TARBALL"
mv "$BUILD/base/tmp/$BASE_PACKAGE" "$BASE_DIR"
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
	commit -q -m "Linux $v (Debian $BASE_PACKAGE)"
git -C "$BASE_DIR" tag base
echo "$want" > "$stamp"
