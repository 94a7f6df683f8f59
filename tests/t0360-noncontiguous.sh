#!/bin/bash
# heapwalk on a main arena in pieces (corpora/ptmalloc/noncontig1.c: the
# program break blocked, glibc goes on in mmapped memory and marks the
# arena NONCONTIGUOUS): every allocation is found where the program left
# it, in the brk heap and in each mmapped piece, mallinfo equals
# mallinfo2(), nothing is partial and `check` finds nothing; with one
# piece's chain broken, the totals are partial and `check` says where; the
# same truth on glibc 2.31 (with and without debug info and libc's file).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
check_truth noncontig1
dir=$(corpus_core noncontig1)
grep -q '"partial":false' "$T/summary.json" ||
	fail "summary of a complete non-contiguous heap says partial: $(head -c 400 "$T/summary.json")"
hw "$T/check.txt" "$T/check.err" "$dir/core" check
expect_rc 0
hw "$T/arenas.txt" "$T/arenas.err" "$dir/core" arenas
expect_rc 0
say "host: $(grep -c . "$T/chunks.jsonl") chunks agree with the truth; $(grep -o 'non-contiguous[^"]*' "$T/summary.err" "$T/check.txt" | sed -n 1,1p)"
# A piece that cannot be followed (a free chunk's size smashed) is not
# silently dropped: the totals say partial and a finding names the place.
victim=$(awk '$1 == "alloc" && $5 == "unsorted" { n++; if (n == 5) print $2 }' "$dir/truth.txt")
[ -n "$victim" ] || fail "noncontig1's truth has fewer than 5 unsorted chunks"
cp "$dir/core" "$T/smashed.core"
"$(tool corepatch)" "$T/smashed.core" $((victim - 8)) 4141414141414141 >/dev/null ||
	fail "corepatch $victim failed"
hw "$T/smashed.sum" "$T/smashed.err" --json "$T/smashed.core" summary
expect_rc 0 1
grep -q '"partial":true' "$T/smashed.sum" ||
	fail "summary with a broken piece does not say partial"
hw "$T/smashed.check" "$T/smashed.check.err" "$T/smashed.core" check
expect_rc 1
grep -q 'non-contiguous' "$T/smashed.check" ||
	fail "check does not say which piece is missing: $(head -c 400 "$T/smashed.check")"
say "smashed piece: $(grep -o 'non-contiguous[^"]*' "$T/smashed.check" | sed -n 1,1p)"
variant_check glibc-2.31-amd64 2.31 x86_64 noncontig1
