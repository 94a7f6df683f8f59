#!/bin/bash
# glibc 2.42+'s large tcache bins on Debian sid's 2.43 (x86_64):
# tcachebig1 raises glibc.malloc.tcache_max and frees chunks of eight
# sizes above the small bins', two of them mmapped (2.43 keeps those in
# the tcache too); every chunk matches its truth (size, `tcache`) with
# and without debug info and without libc's file, and `check` finds
# nothing (bin 64's two chunks are in glibc's sorted order).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
variant_check glibc-2.43-amd64 2.43 x86_64 tcachebig1
dir=$(variant_core glibc-2.43-amd64 tcachebig1)
hw "$T/check" "$T/check.err" --debug-dir "$(readlink -f "$dir/sysroot")/usr/lib/debug" "$dir/core" check
expect_rc 0
grep -q ', 0 problems found' "$T/check" || fail "check finds problems in the large tcache bins: $(cat "$T/check")"
hw "$T/bins" "$T/bins.err" --json --no-debuginfo "$dir/core" bins tcache
expect_rc 0
for idx in 64 65 66 68 70 72 74; do
	grep -q "\"index\":$idx[,}]" "$T/bins" || fail "bins tcache lists no large bin $idx: $(head -c 400 "$T/bins")"
done
say "large tcache bins 64-74 (two mmapped chunks among them) as the program freed them"
