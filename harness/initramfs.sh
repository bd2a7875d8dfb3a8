#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's base initramfs: busybox, bash, the guest init, the
# project's static programs and the in-guest tests and selftests.
#
# ARCH=arm64 initramfs.sh builds build/initramfs-arm64.cpio instead, for
# boot.sh -A arm64: Debian's busybox-static and bash-static for arm64,
# fetched with apt-get download (nothing is installed on the host), the
# programs cross-built static with aarch64-linux-gnu-gcc, and what the data
# path tests (smoke.sh, perf.sh) source; no kselftests, tools or python3.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case ${ARCH:-x86} in
x86 | x86_64)
	guest_arch=x86
	out=$BUILD/initramfs.cpio
	root=$BUILD/initramfs
	cc=gcc
	;;
arm64)
	guest_arch=arm64
	out=$BUILD/initramfs-arm64.cpio
	root=$BUILD/initramfs-arm64
	cc=aarch64-linux-gnu-gcc
	;;
*) die "ARCH=$ARCH: only x86 and arm64 guests are built" ;;
esac

# arm64_userspace: Debian's busybox-static and bash-static for arm64,
# unpacked in build/arm64-debs/root.  They are fetched once with apt-get
# download through a package list of their own in build/arm64-debs, so
# that neither dpkg's architectures nor the host's package lists change.
arm64_userspace() {
	local debs=$BUILD/arm64-debs deb
	local apt=(apt-get -qq -o "Dir::State::Lists=$debs/lists"
		-o "Dir::Cache=$debs/cache" -o APT::Architecture=arm64
		-o APT::Architectures::=arm64 -o APT::Sandbox::User=root)

	[ -x "$debs/root/bin/busybox" ] && [ -x "$debs/root/bin/bash-static" ] &&
		return 0
	note "fetching busybox-static and bash-static for arm64"
	rm -rf "$debs"
	mkdir -p "$debs"/lists/partial "$debs"/cache/archives/partial "$debs/root"
	"${apt[@]}" update || die "apt-get update for arm64 failed"
	(cd "$debs" && "${apt[@]}" download busybox-static:arm64 bash-static:arm64) ||
		die "apt-get download of the arm64 busybox-static and bash-static failed"
	rm -rf "$debs/lists" "$debs/cache"
	for deb in "$debs"/busybox-static_*_arm64.deb "$debs"/bash-static_*_arm64.deb; do
		dpkg-deb -x "$deb" "$debs/root"
	done
}

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,root,etc}
mkdir -p "$root"/opt/damon-perf/{bin,tests}

if [ "$guest_arch" = arm64 ]; then
	need_packages "${ARM64_PACKAGES[@]}"
	arm64_userspace
	cp "$BUILD/arm64-debs/root/bin/busybox" "$root/bin/busybox"
	bash_static=$BUILD/arm64-debs/root/bin/bash-static
	# The arm64 busybox cannot run here to list its applets: the host's
	# busybox-static, from the same Debian release, has the same ones.
	applets=$(/bin/busybox --list)
else
	cp /bin/busybox "$root/bin/busybox"
	bash_static=/bin/bash-static
	applets=$("$root/bin/busybox" --list)
fi
for applet in $applets; do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
rm -f "$root/bin/bash" "$root/bin/sh"
cp "$bash_static" "$root/bin/bash"
ln -s bash "$root/bin/sh"
cp "$TOP/guest/init" "$root/init"
chmod 755 "$root/init"

# The project's own programs, built static (with libm: benchwl's Zipf
# weights).  The hot/cold workload is the kselftest's, so the boot tests
# and the selftest run the same one.
cc_static() {
	"$cc" -static -O2 -Wall -Wextra -Werror -o "$root/opt/damon-perf/bin/$1" "$2" -lm
}
for c in "$TOP"/guest/src/*.c; do
	cc_static "$(basename "$c" .c)" "$c"
done
cc_static hotcold "$SRC_DIR/tools/testing/selftests/damon/damon_perf_hotcold.c"
cp "$TOP"/guest/tests/* "$root/opt/damon-perf/tests/"

# /dev/console must exist before devtmpfs is mounted, for init's stdio.
# The device nodes come as a second archive from the kernel's own
# gen_init_cpio, so no mknod (and no root) is needed on the host.
pack() {
	local gen=$BUILD/gen_init_cpio

	echo 'root:x:0:0:root:/root:/bin/bash' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	[ "$gen" -nt "$BASE_DIR/usr/gen_init_cpio.c" ] ||
		gcc -O2 -o "$gen" "$BASE_DIR/usr/gen_init_cpio.c"
	(
		cd "$root"
		find . -print0 | LC_ALL=C sort -z |
			cpio --null -o -H newc --owner=0:0 --quiet
		printf '%s\n' 'nod /dev/console 0600 0 0 c 5 1' \
			'nod /dev/null 0666 0 0 c 1 3' | "$gen" /dev/stdin
	) >"$out.tmp"
	mv "$out.tmp" "$out"
	note "initramfs: $out"
}

# The arm64 guest runs the data path tests only: they source the
# kselftest's helpers, which are all it needs of the selftests.
if [ "$guest_arch" = arm64 ]; then
	mkdir -p "$root/opt/kselftest/damon"
	cp "$SRC_DIR/tools/testing/selftests/damon/_damon_perf_common.sh" \
		"$root/opt/kselftest/damon/"
	pack
	exit 0
fi

# The damon kselftests, installed from the applied tree the way a CI system
# installs them on a target, with static binaries for the busybox guest.
ksft=$BUILD/kselftest
rm -rf "$ksft"
make -s -C "$SRC_DIR/tools/testing/selftests" TARGETS=damon O="$BUILD/kselftest-obj" \
	KSFT_INSTALL_PATH="$ksft" LDFLAGS=-static install >"$BUILD/kselftest.log" 2>&1 ||
	{ tail -n 20 "$BUILD/kselftest.log" >&2; die "kselftest install failed"; }
cp -r "$ksft" "$root/opt/kselftest"

# The selftests source tree too, built in place, with GNU make and the
# libraries it needs, so that the guest can also run
# "make -C tools/testing/selftests TARGETS=damon run_tests" as is.
tree=$BUILD/ksft-tree
rm -rf "$tree"
mkdir -p "$tree/scripts" "$tree/tools/testing/selftests"
cp -a "$SRC_DIR/scripts/subarch.include" "$tree/scripts/"
(cd "$SRC_DIR/tools/testing/selftests" &&
	cp -a Makefile lib.mk kselftest kselftest.h kselftest_harness.h damon \
		"$tree/tools/testing/selftests/")
make -s -C "$tree/tools/testing/selftests" TARGETS=damon LDFLAGS=-static \
	>>"$BUILD/kselftest.log" 2>&1 ||
	{ tail -n 20 "$BUILD/kselftest.log" >&2; die "kselftest build failed"; }
mkdir -p "$root/opt/linux"
cp -a "$tree/scripts" "$tree/tools" "$root/opt/linux/"

# Copy the dynamically linked program $1 to $2 in the guest, and the
# shared libraries it needs to their host paths.
copy_with_libs() {
	local lib

	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2"
	for lib in $(ldd "$1" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

copy_with_libs /usr/bin/make /usr/bin/make
# stress-ng and stress for the selftest's workload choice, outside PATH so
# that by default the selftest uses its own fault workload; the guest
# tests put them on PATH where they test that choice.
copy_with_libs /usr/bin/stress-ng /opt/stress/bin/stress-ng
copy_with_libs /usr/bin/stress /opt/stress/bin/stress
# The base's DAMON selftests use options busybox lacks (grep --max-count,
# dmesg -C) and pgrep, which it does not have: Debian's, off PATH, for
# the guest test that runs them.  The rest of the guest, the series'
# selftest included, keeps to busybox, as minimal CI root file systems do.
copy_with_libs /bin/grep /opt/gnu/bin/grep
copy_with_libs /bin/dmesg /opt/gnu/bin/dmesg
copy_with_libs /usr/bin/pgrep /opt/gnu/bin/pgrep
# Debian's perf and trace-cmd, the tools admins read tracepoints with.
copy_with_libs /usr/bin/perf /usr/bin/perf
copy_with_libs /usr/bin/trace-cmd /usr/bin/trace-cmd

# Debian's python3 and the part of its standard library that the base's
# Python DAMON selftests, damo and the fuzzer use; /usr/bin/env for the
# scripts' "#!/usr/bin/env python3".
copy_with_libs /usr/bin/python3.11 /usr/bin/python3
ln -s /bin/busybox "$root/usr/bin/env"
py=/usr/lib/python3.11
mkdir -p "$root$py"
(cd "$py" && find . \( -name test -o -name tests -o -name __pycache__ \
	-o -name idlelib -o -name tkinter -o -name turtledemo \
	-o -name ensurepip -o -name lib2to3 -o -name 'site-packages' \
	-o -name 'dist-packages' -o -name 'config-3.11-*' \) -prune -o \
	-print | cpio -pdm --quiet "$root$py")
for so in "$py"/lib-dynload/*.so; do
	for lib in $(ldd "$so" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done

# damo, the DAMON user-space tool, from the snapshot beside the repository
# (../shared/damo, or $DAMO_DIR).  Without the snapshot the damo test skips.
damo=${DAMO_DIR:-$TOP/../shared/damo}
if [ -f "$damo/src/damo.py" ]; then
	mkdir -p "$root/opt/damo"
	cp -r "$damo/src" "$root/opt/damo/"
fi

pack
