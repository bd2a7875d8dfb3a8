#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build.sh NAME [TARGET...]: build in build/obj/NAME (default target bzImage).
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
mkdir -p "$LOG_DIR"
log=$LOG_DIR/build-$name.log
note "building $name: $* (log: $log)"
if ! make -C "$SRC_DIR" O="$obj" CC="ccache ${CROSS_COMPILE:-}gcc" -j"$JOBS" "$@" >"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -40 >&2
	die "build $name failed; see $log"
fi
