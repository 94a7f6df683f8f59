#!/bin/bash
# maps: the writable memory by what holds it.  On the threads8 corpus
# program (ten threads, eight arenas, mmapped chunks), for each glibc and
# jemalloc the corpus has (x86_64 and aarch64 under qemu-user), mapscheck
# checks `maps --mappings --json` against the program's own truth and
# against itself: rows and mappings sum to the writable total, the
# allocator's share is the sum of its kinds, summary's `writable` agrees,
# every thread the program recorded has its stack row, and on glibc the
# mmapped chunks equal glibc's own hblkhd and its `arena` lies between
# the heap and heap + metadata.  Text and JSON agree on the total; an
# unknown argument is a usage error.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
mapscheck=$(tool mapscheck)

check_variant() {
	local variant=$1 dir opt=() out=$T/$1
	mkdir -p "$out"
	if [ "$variant" = host ]; then
		dir=$(corpus_core threads8)
	else
		dir=$(variant_core "$variant" threads8)
	fi
	case $variant in
	*-arm64) opt=(--sysroot "$(readlink -f "$dir/sysroot")") ;;
	esac
	corpus_copy "$dir" "$out"
	hw "$out/maps.json" "$out/maps.err" "${opt[@]}" --json "$out/core" maps --mappings
	expect_rc 0
	hw "$out/sum.json" "$out/sum.err" "${opt[@]}" --json "$out/core" summary
	expect_rc 0
	"$mapscheck" "$out/truth.txt" "$out/maps.json" "$out/sum.json" >"$out/cmp" ||
		{ cat "$out/cmp"; fail "$variant: maps disagrees with threads8's truth (core in $dir)"; }
	say "$variant: $(tail -n1 "$out/cmp")"
	hw "$out/text" "$out/text.err" "${opt[@]}" "$out/core" maps
	expect_rc 0
	local n
	n=$(grep -o '"writable":{"bytes":[0-9]*,"mappings":[0-9]*' "$out/maps.json" |
		grep -o '[0-9]*$')
	grep -qE "^writable memory: +[0-9.]+ [KMG]?i?B in $n mappings$" "$out/text" ||
		{ cat "$out/text"; fail "$variant: text says another total than $n mappings"; }
	grep -q '^the allocator' "$out/text" ||
		fail "$variant: text has no allocator line"
}

for v in host glibc-2.31-amd64 glibc-2.36-arm64 jemalloc-5.3.0-amd64 \
	jemalloc-5.3.0-arm64; do
	check_variant "$v"
done

core=$(corpus_core threads8)
hw "$T/u.out" "$T/u.err" "$core/core" maps --nosuch
expect_rc 2
one_error_line "$T/u.err" "maps --nosuch"
