#!/bin/bash
# verify-gdb-variant.sh VARIANT CASE OUTDIR [EMITDIR] - verify-gdb.sh for
# the cores of another glibc or architecture (make-core.sh's VARIANT, e.g.
# glibc-2.31-amd64, glibc-2.41-amd64, glibc-2.36-arm64): builds the core
# with `make-core.sh CASE OUTDIR VARIANT`, then checks its truth file with
# gdb-oracle.py, using the variant's libc6-dbg from its sysroot (and, for
# arm64 qemu cores, gdb-multiarch with `set sysroot`; apt-get installs
# gdb-multiarch when it is missing and this runs as root).  With EMITDIR,
# also writes gdb's idea of heapwalk's chunks.jsonl, summary.json and
# sizes.json there.
# Exit 0 all agree, 1 mismatch, 77 gdb/Python unavailable.
set -euo pipefail

me=verify-gdb-variant.sh
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
	echo "usage: $me VARIANT CASE OUTDIR [EMITDIR]" >&2
	exit 2
fi
variant=$1
here=$(cd "$(dirname "$0")" && pwd)
"$here/make-core.sh" "$2" "$3" "$variant"
dir=$(cd "$3" && pwd)
sysroot=$(readlink -f "$dir/sysroot")

ver=${variant#glibc-}
ver=${ver%-*}
safe=True
if [ "${ver#2.}" -lt 32 ]; then safe=False; fi
case $variant in
*-arm64)
	arch=aarch64
	gdb="gdb-multiarch"
	if ! command -v $gdb >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q gdb-multiarch >/dev/null 2>&1 || true
	fi
	pre=(-iex "set sysroot $sysroot" -iex "set architecture aarch64")
	;;
*)
	arch=x86_64
	gdb=gdb
	pre=()
	;;
esac
command -v $gdb >/dev/null 2>&1 || { echo "$me: $gdb is not installed" >&2; exit 77; }

emit=()
if [ $# -eq 4 ]; then
	mkdir -p "$4"
	emit=(-ex "python EMIT=\"$(cd "$4" && pwd)\"")
fi
out=$(cd "$dir" && $gdb -batch -nx -iex 'set debuginfod enabled off' "${pre[@]}" \
	-iex "set debug-file-directory $sysroot/usr/lib/debug" \
	-ex "python TRUTH=\"$dir/truth.txt\"" -ex "python SAFE_LINKING=$safe" \
	-ex "python VERSION=\"$ver\"" -ex "python ARCH=\"$arch\"" "${emit[@]}" \
	-x "$here/gdb-oracle.py" ./prog core 2>&1) || true
# shellcheck source=scripts/corpus/oracle-verdict.sh
. "$here/oracle-verdict.sh"
oracle_verdict "$out" 'Python scripting is not supported' "$gdb lacks Python" \
	"$variant $2"
