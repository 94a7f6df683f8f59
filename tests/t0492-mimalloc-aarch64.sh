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
cc=aarch64-linux-gnu-gcc
libdir=$sysroot/usr/lib/aarch64-linux-gnu
# cross_build OUT MIDIR: mitruth1 against the mimalloc unpacked in MIDIR.
cross_build() {
	local milib=$2/usr/lib/aarch64-linux-gnu
	$cc -nostdinc -isystem "$($cc -print-file-name=include)" \
		-isystem "$sysroot/usr/include/aarch64-linux-gnu" -isystem "$sysroot/usr/include" \
		--sysroot="$sysroot" -B"$libdir/" -L"$libdir" \
		-std=c11 -O1 -g -pthread -DMI_HAVE_HEADER -I "$2/usr/include" \
		-o "$1" "$MI_PROG" -L "$milib" "-Wl,-rpath=$milib" -lmimalloc -no-pie ||
		fail "cannot cross-build mitruth1 against the arm64 libmimalloc of $2"
}
cross_build "$T/ta" "$(mi_libs mimalloc-2.0.9-arm64)"
cross_build "$T/ta3" "$(mi_libs mimalloc-3.6.0-arm64)"

qemu_core() {
	local name=$1 bin=$2 d=$T/$1 c pattern
	mkdir -p "$d/run"
	pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '|')
	if mi_plain_pattern; then mkdir -p "$d/run/$pattern"; fi
	( (cd "$d/run" && ulimit -c unlimited 2>/dev/null;
		exec qemu-aarch64 -L "$sysroot" "$bin" "$3" "$4") \
		>"$d/qemu.out" 2>&1 || :) 2>/dev/null
	c=$(find "$d/run" -maxdepth 1 -name 'qemu_*.core' | sed -n 1,1p)
	if ! grep -q '^end$' "$d/run/truth.txt" 2>/dev/null; then
		tail -n 5 "$d/qemu.out" >&2
		fail "$name: the program under qemu-aarch64 wrote no truth"
	fi
	if [ -z "$c" ]; then
		tail -n 5 "$d/qemu.out" >&2
		skip "qemu-aarch64 wrote no guest core of $bin (ulimit -c?)"
	fi
	mv "$c" "$d/core"
	mv "$d/run/truth.txt" "$d/truth.txt"
	rm -rf "$d/run"
	mi_truth_ok "$name"
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
