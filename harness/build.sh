#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh NAME [TARGET...]: build in build/obj/NAME (default target bzImage;
# with bzImage or Image, the modules too if the configuration has any).
# ARCH and CROSS_COMPILE, if set in the environment, pick the architecture
# and the cross-compiler, as for the kernel's make.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: $0 NAME [TARGET...]"
name=$1
shift
[ $# -gt 0 ] || set -- bzImage
[ "${ARCH:-}" != arm64 ] || need_packages "${ARM64_PACKAGES[@]}"
obj=$OBJ_ROOT/$name
[ -f "$obj/.config" ] || die "no config in $obj; run config.sh first"
# A bootable kernel with modules (the test PMUs' module) gets them built
# too, with the same configuration: boot.sh ships them to the guest.
if grep -qx 'CONFIG_MODULES=y' "$obj/.config"; then
	case " $* " in
	*" bzImage "* | *" Image "*) set -- "$@" modules ;;
	esac
fi
mkdir -p "$LOG_DIR"
log=$LOG_DIR/build-$name.log
note "building $name: $* (log: $log)"
if ! make -C "$SRC_DIR" O="$obj" CC="ccache ${CROSS_COMPILE:-}gcc" -j"$JOBS" "$@" >"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -40 >&2
	die "build $name failed; see $log"
fi
