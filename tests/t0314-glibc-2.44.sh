#!/bin/bash
# heapwalk on glibc 2.44 x86_64 cores (Debian experimental's libc6, the
# rest from sid): bins1 and threads8 match their truth with and without
# libc6-dbg and without libc's file.  2.44's malloc_par ends without
# tcache_unsorted_limit; otherwise its heap is laid out as 2.43's.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.44-amd64 2.44 x86_64 bins1 threads8

# A look ahead: the same core with its libc's banner made to say 2.45 (a
# release heapwalk does not know).  Its data shows 2.44's layouts, so it
# is read, every chunk still as in the truth, and a note says how; a 2.41
# core whose libc claims 2.45 shows older layouts than 2.44's, and is
# refused with one clear line rather than walked on a guess.
truthcmp=$(tool truthcmp)
fake_newer() { # fake_newer CORE_DIR OLD OUT_SYSROOT: libc's banner says 2.45
	local libc
	libc=$(readlink -f "$1/sysroot")/usr/lib/x86_64-linux-gnu/libc.so.6
	mkdir -p "$3$(dirname "$libc")"
	perl -0777 -pe "s{release version $2\\.}{release version 2.45.}g" "$libc" >"$3$libc"
	grep -q 'release version 2\.45\.' "$3$libc" || fail "could not patch the banner of $libc"
}
dir=$(variant_core glibc-2.44-amd64 bins1)
fake_newer "$dir" 2.44 "$T/fake44"
hw "$T/new.chunks" "$T/new.err" --json --sysroot "$T/fake44" --no-debuginfo "$dir/core" chunks
expect_rc 0
hw "$T/new.sum" "$T/new.err" --json --sysroot "$T/fake44" --no-debuginfo "$dir/core" summary
expect_rc 0
"$truthcmp" "$dir/truth.txt" "$T/new.chunks" "$T/new.sum" ||
	fail "a 2.44 heap under a 2.45 banner disagrees with the truth"
grep -q '"version":"2.45"' "$T/new.sum" || fail "summary does not say 2.45: $(head -c 300 "$T/new.sum")"
hw "$T/new.check" "$T/new.err" --sysroot "$T/fake44" --no-debuginfo "$dir/core" check
expect_rc 0
grep -q "glibc 2.45 is newer than the layouts heapwalk knows" "$T/new.check" ||
	fail "check does not say 2.45 is newer than the known layouts: $(cat "$T/new.check")"
dir=$(variant_core glibc-2.41-amd64 bins1)
fake_newer "$dir" 2.41 "$T/fake41"
hw "$T/old.sum" "$T/old.err" --sysroot "$T/fake41" --no-debuginfo "$dir/core" summary
expect_rc 4
grep -q "this glibc's heap layout is not known yet" "$T/old.err" ||
	fail "a 2.41 heap under a 2.45 banner is not refused clearly: $(cat "$T/old.err")"
say "glibc 2.45 (a patched banner): read as its 2.44 data shows, or refused when the data shows older layouts"
