#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# prepare.sh NAME FRAGMENT...: everything up to a bootable kernel: install
# what is missing, apply the repo onto a clean base, configure build/obj/NAME
# from tinyconfig plus FRAGMENTs, build it and the initramfs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: $0 NAME FRAGMENT..."
"$TOP/harness/apply.sh"
"$TOP/harness/config.sh" "$@"
"$TOP/harness/build.sh" "$1"
"$TOP/harness/initramfs.sh"
