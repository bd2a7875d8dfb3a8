#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# boot.sh [-A ARCH] [-k CONFIG] [-t SECONDS] [-n NAME] [-a APPEND] [-c CPUS]
#         [-m MEM] [-T TCG_OPTS] [-Q QEMU_ARG]... -- COMMAND...
#
# Boot build/obj/CONFIG's bzImage in QEMU (TCG, with TCG_OPTS such as
# thread=single, CPUS CPUs (4), MEM of memory (1G), and each QEMU_ARG added
# to QEMU's command line) with the base
# initramfs plus a second archive holding COMMAND, and exit with COMMAND's
# exit status as printed by the guest init.  With -A arm64, boot
# build/obj/CONFIG's (default arm64-boot) arm64 Image instead, in
# qemu-system-aarch64 -M virt -cpu max, with build/initramfs-arm64.cpio
# (ARCH=arm64 initramfs.sh) and the console on virt's PL011, ttyAMA0.
# The console log is kept in build/logs/NAME.log and scanned: a panic,
# Oops, BUG, WARNING, KASAN, lockdep or kmemleak report fails the run even
# if COMMAND passed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

arch=x86
config=
timeout=300
name=
append=
cpus=4
mem=1G
tcg=tcg
qemu_args=()
usage="usage: $0 [-A x86|arm64] [-k CONFIG] [-t SECONDS] [-n NAME] [-a APPEND] [-c CPUS] [-m MEM] [-T TCG_OPTS] [-Q QEMU_ARG]... -- COMMAND..."
while getopts A:k:t:n:a:c:m:T:Q: opt; do
	case $opt in
	A) arch=$OPTARG ;;
	k) config=$OPTARG ;;
	t) timeout=$OPTARG ;;
	n) name=$OPTARG ;;
	a) append=$OPTARG ;;
	c) cpus=$OPTARG ;;
	m) mem=$OPTARG ;;
	T) tcg=tcg,$OPTARG ;;
	Q) qemu_args+=("$OPTARG") ;;
	*) die "$usage" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || die "no guest command given"

case $arch in
x86)
	config=${config:-test}
	kernel=$OBJ_ROOT/$config/arch/x86/boot/bzImage
	initramfs=$BUILD/initramfs.cpio
	mkinitramfs=initramfs.sh
	qemu=(qemu-system-x86_64)
	console=ttyS0
	;;
arm64)
	config=${config:-arm64-boot}
	kernel=$OBJ_ROOT/$config/arch/arm64/boot/Image
	initramfs=$BUILD/initramfs-arm64.cpio
	mkinitramfs="ARCH=arm64 initramfs.sh"
	need_packages "${ARM64_PACKAGES[@]}"
	qemu=(qemu-system-aarch64 -M "virt,gic-version=3" -cpu max)
	console=ttyAMA0
	;;
*) die "$usage" ;;
esac
[ -n "$name" ] || name=boot-$config
[ -f "$kernel" ] || die "$kernel missing; build config $config first"
[ -f "$initramfs" ] || die "$initramfs missing; run $mkinitramfs"

mkdir -p "$LOG_DIR"
log=$LOG_DIR/$name.log
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

nonce=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$*" >"$work/cmd"
echo "$nonce" >"$work/nonce"
printf '%s\n' "file /run/cmd $work/cmd 0755 0 0" \
	"file /run/nonce $work/nonce 0644 0 0" >"$work/list"
# The modules built with this kernel (modules.order names them, and not
# those left over from an earlier configuration), for the guest init to
# load from /lib/modules.
obj=$OBJ_ROOT/$config
if grep -qx 'CONFIG_MODULES=y' "$obj/.config" && [ -s "$obj/modules.order" ]; then
	echo "dir /lib/modules 0755 0 0" >>"$work/list"
	while read -r mod; do
		ko=$obj/${mod%.o}
		ko=${ko%.ko}.ko
		[ -f "$ko" ] || die "$ko missing; build config $config again"
		echo "file /lib/modules/$(basename "$ko") $ko 0644 0 0" >>"$work/list"
	done <"$obj/modules.order"
fi
cat "$initramfs" >"$work/initrd"
"$BUILD/gen_init_cpio" "$work/list" >>"$work/initrd"

set +e
timeout -k 10 "$timeout" "${qemu[@]}" -accel "$tcg" -smp "$cpus" -m "$mem" \
	"${qemu_args[@]}" -nographic -no-reboot -kernel "$kernel" -initrd "$work/initrd" \
	-append "console=$console panic=-1 rdinit=/init loglevel=7 $append" \
	</dev/null >"$log" 2>&1
qrc=$?
set -e

# Pass through what the console printed once the guest command started.
tr -d '\r' <"$log" | sed -n "/^@@guest-start $nonce@@\$/,\$p" |
	grep -v "^@@guest-.*$nonce" || true

if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	echo "boot: timed out after ${timeout}s (log: $log)" >&2
	exit 124
fi
status=0
if ! "$TOP/harness/scan-log.sh" "$log"; then
	echo "boot: kernel reported a problem (log: $log)" >&2
	status=125
fi
rc=$(tr -d '\r' <"$log" | sed -n "s/^@@guest-exit $nonce rc=\([0-9]*\)@@\$/\1/p" | tail -n 1)
if [ -z "$rc" ]; then
	echo "boot: guest never reported an exit status (log: $log)" >&2
	exit 126
fi
[ "$status" -eq 0 ] || exit "$status"
exit "$rc"
