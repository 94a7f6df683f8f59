#!/usr/bin/env bash
# jemalloc-preload.sh BUILD_DIR - print the libjemalloc.so.2 the benchmarks
# LD_PRELOAD into their programs: Debian bookworm's jemalloc 5.3.0,
# unpacked under BUILD_DIR/sysroot/ by scripts/corpus/sysroot.sh (network
# the first time).  Exit 1 with one line on stderr when it cannot be had.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sysroot=$1/sysroot/jemalloc-5.3.0-amd64
if ! "$top/scripts/corpus/sysroot.sh" jemalloc-5.3.0-amd64 "$sysroot" >&2; then
	echo "no jemalloc sysroot (scripts/corpus/sysroot.sh jemalloc-5.3.0-amd64)" >&2
	exit 1
fi
preload=$sysroot/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[[ -f $preload ]] || { echo "no $preload" >&2; exit 1; }
echo "$preload"
