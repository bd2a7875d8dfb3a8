#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# config.sh NAME FRAGMENT...: make build/obj/NAME/.config from tinyconfig (or
# $BASECONFIG, another make target such as defconfig) plus
# the fragments, then fail if any symbol a fragment names did not end up with
# the value it asked for (merge_config.sh only warns about those).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: $0 NAME FRAGMENT..."
name=$1
shift
obj=$OBJ_ROOT/$name
frags=()
for f in "$@"; do
	frags+=("$(realpath "$f")")
done
mkdir -p "$obj"
# configuring runs the compiler: the cross compiler must be there first
[ "${ARCH:-}" != arm64 ] || need_packages "${ARM64_PACKAGES[@]}"

cd "$SRC_DIR"
make -s O="$obj" "${BASECONFIG:-tinyconfig}" >/dev/null
scripts/kconfig/merge_config.sh -n -O "$obj" "$obj/.config" "${frags[@]}" \
	>"$obj/merge_config.log" 2>&1 ||
	{ cat "$obj/merge_config.log" >&2; die "merge_config.sh failed"; }

# Check each requested value against the result; the last fragment wins.
bad=0
declare -A want=()
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
		want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
		want[${BASH_REMATCH[1]}]=n
	fi
done < <(cat "${frags[@]}")

for sym in "${!want[@]}"; do
	got=$(grep -E "^$sym=" "$obj/.config" | cut -d= -f2- || true)
	[ -n "$got" ] || got=n
	if [ "$got" != "${want[$sym]}" ]; then
		echo "config $name: $sym wanted ${want[$sym]}, got $got" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] || die "config $name: fragment symbols not satisfied (dependencies unmet?)"
note "config $name: ${#want[@]} fragment symbols verified"
