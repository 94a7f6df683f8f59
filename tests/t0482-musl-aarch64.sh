#!/bin/bash
# musl's mallocng on aarch64, read on this x86_64 host:
# corpora/musl/ngtruth1.c built with Debian bookworm's arm64 musl (the
# musl-1.2.3-arm64 sysroot: scripts/corpus/sysroot.sh, a private apt
# configuration; aarch64-linux-gnu-gcc with musl's specs pointed into
# it), static (recording mallocng's context and usage_by_class; also
# stripped: the context found by its secret) and dynamic (musl's libc.so as its dynamic linker, found through the
# link_map: qemu's cores name no files), eight threads each, run under
# qemu-aarch64 to their abort; qemu writes the aarch64 cores.  Each core
# is checked against its program's record as in t0481 (tests/musl-lib.sh).
# shellcheck source=tests/musl-lib.sh
. "$(dirname "$0")/musl-lib.sh"
need_heapwalk
need_cmd apt-get dpkg-deb

musl_arm64_setup || skip "no arm64 musl to build with here (above)"
sysroot=$MUSL_ARM64_SYSROOT
lib=$MUSL_ARM64_LIB
src=$TOP/corpora/musl/ngtruth1.c
cc=("${MUSL_ARM64_CC[@]}")
"${cc[@]}" -static -DNG_STATIC -o "$T/ngs" "$src" || fail "static aarch64 build failed"
# (libc.so is not in the specs' -L directory's view of a dynamic link
# without -L: the link would take libc.a.)
"${cc[@]}" -L "$lib" -o "$T/ngd" "$src" || fail "dynamic aarch64 build failed"

# qemu_core NAME BIN [QEMU-ARGS...]: run BIN (8 threads) under qemu to its
# abort in $T/NAME/; qemu's core of the guest there as $T/NAME/core.
qemu_core() {
	local name=$1 bin=$2
	shift 2
	qemu_guest_core "$T/$name" "$@" "$T/$bin" 8 abort
}

qemu_core as ngs
check as "$T/as/core" --exe "$T/ngs"
ctx=$(sed -n 's/^ctx //p' "$T/as/truth.txt")
grep -q "\"context\":\"$ctx\"" "$T/as/summary" ||
	fail "as: the context is not the symbol's ($ctx): $(grep -o '"context[^,]*,[^,]*' "$T/as/summary")"
grep -q '"arch":"aarch64"' "$T/as/summary" ||
	fail "as: not read as aarch64: $(grep -o '"arch":"[^"]*"' "$T/as/summary" | sed -n 1,1p)"
# The same static build stripped: the context by the secret.
aarch64-linux-gnu-strip -o "$T/ngss" "$T/ngs" || fail "aarch64-linux-gnu-strip failed"
qemu_core ass ngss
check ass "$T/ass/core" --exe "$T/ngss"
grep -q '"context_from":"the secret from AT_RANDOM' "$T/ass/summary" ||
	fail "ass: the stripped build's context not found by the secret: $(grep -o '"context_from":"[^"]*"' "$T/ass/summary")"
qemu_core ad ngd -L "$sysroot"
check ad "$T/ad/core" --exe "$T/ngd" --sysroot "$sysroot"
grep -q '"module":"/lib/ld-musl-aarch64.so.1"' "$T/ad/summary" ||
	fail "ad: the context is not in musl's libc.so: $(grep -o '"module":"[^"]*"' "$T/ad/summary")"
