#!/bin/bash
# mimalloc 2.0.9 and 3.6.0 on aarch64, read on this x86_64 host:
# corpora/mimalloc/mitruth1.c cross-built with aarch64-linux-gnu-gcc
# against Debian bookworm's arm64 glibc (scripts/corpus/sysroot.sh's
# glibc-2.36-arm64) and bookworm's arm64 libmimalloc.so.2 or sid's
# libmimalloc.so.3 (stripped; with libmimalloc-dev's headers:
# scripts/corpus/mimalloc-libs.sh mimalloc-2.0.9-arm64 and
# mimalloc-3.6.0-arm64, found by the program's RPATH, a host path qemu
# falls back to), run under qemu-aarch64 to its abort, eight workers and
# the exited thread, recording mimalloc's own view of every block in use;
# qemu writes the aarch64 core (no NT_FILE: heapwalk is given --exe and
# --sysroot).  The truth is checked by itself, then heapwalk against it
# as in t0490 (tests/mimalloc-lib.sh).
# shellcheck source=tests/mimalloc-lib.sh
. "$(dirname "$0")/mimalloc-lib.sh"
need_heapwalk
need_cmd apt-get dpkg-deb

variant=glibc-2.36-arm64
sysroot=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}/$variant
rc=0
"$TOP/scripts/corpus/sysroot.sh" "$variant" "$sysroot" || rc=$?
case $rc in
0) ;;
77) skip "cannot make the $variant sysroot here (no Debian mirror)" ;;
*) fail "scripts/corpus/sysroot.sh $variant failed" ;;
esac
need_cmd qemu-aarch64 aarch64-linux-gnu-gcc
mi_cross_build "$T/ta" "$(mi_libs mimalloc-2.0.9-arm64)" "$sysroot"
mi_cross_build "$T/ta3" "$(mi_libs mimalloc-3.6.0-arm64)" "$sysroot"

qemu_core() {
	qemu_guest_core "$T/$1" -L "$sysroot" "$2" "$3" "$4"
	mi_truth_ok "$1"
}

for c in a8:ta a38:ta3; do
	name=${c%%:*}
	qemu_core "$name" "$T/${c#*:}" 8 visit
	check "$name" "$T/$name/core" --exe "$T/${c#*:}" --sysroot "$sysroot"
	if [ -z "${MI_TRUTH_ONLY:-}" ]; then
		grep -q '"arch":"aarch64"' "$T/$name/summary" ||
			fail "$name: not read as aarch64: $(grep -o '"arch":"[^"]*"' "$T/$name/summary" | sed -n 1,1p)"
	fi
done
has '"version":"3.6.0"' <"$T/a38/summary" || [ -n "${MI_TRUTH_ONLY:-}" ] ||
	fail "a38: not walked as mimalloc 3.6.0: $(head -c 300 "$T/a38/summary")"
mi_truth_only_end
