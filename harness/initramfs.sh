#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest's base initramfs: busybox, bash, the guest init, the
# project's static programs and the in-guest tests and selftests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$BUILD/initramfs.cpio
root=$BUILD/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,root,etc}
mkdir -p "$root"/opt/damon-perf/{bin,tests}

cp /bin/busybox "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
rm -f "$root/bin/bash" "$root/bin/sh"
cp /bin/bash-static "$root/bin/bash"
ln -s bash "$root/bin/sh"
cp "$TOP/guest/init" "$root/init"
chmod 755 "$root/init"

# The project's own programs, built static.
for c in "$TOP"/guest/src/*.c; do
	[ -e "$c" ] || continue
	gcc -static -O2 -Wall -Wextra -Werror -o "$root/opt/damon-perf/bin/$(basename "$c" .c)" "$c"
done
cp "$TOP"/guest/tests/* "$root/opt/damon-perf/tests/" 2>/dev/null || true

# Kernel selftests from the applied tree, when they exist.
st=$SRC_DIR/tools/testing/selftests
if [ -d "$st/damon" ]; then
	mkdir -p "$root/opt/selftests"
	cp -r "$st/damon" "$st/kselftest" "$root/opt/selftests/"
	cp "$st/Makefile" "$st/lib.mk" "$root/opt/selftests/" 2>/dev/null || true
fi

echo 'root:x:0:0:root:/root:/bin/bash' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"

# /dev/console must exist before devtmpfs is mounted, for init's stdio.
# The device nodes come as a second archive from the kernel's own
# gen_init_cpio, so no mknod (and no root) is needed on the host.
gen=$BUILD/gen_init_cpio
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
