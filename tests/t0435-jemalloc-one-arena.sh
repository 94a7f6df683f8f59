#!/bin/bash
# jemalloc with a single arena (corpora/jemalloc/onearena1: one thread, no
# allocation large enough for 5.3's huge arena) on Debian's 5.3.0 and
# 5.2.1 (amd64) and 5.3.0 (arm64): the truth must show that one arena
# only, and heapwalk must still find arena 0's base_t, so that chunks,
# bins, sizes, arenas and every stats.* figure (metadata, resident and
# mapped included) agree with jemalloc's own (jetruthcmp), the roots say
# the bases were found and `maps` names the base blocks allocator
# metadata.  Regression: with one arena the index that base_t starts with
# is 0, and 5.3's arena_t holds, before its base pointer, pointers to
# zeroed free extents just below it; taking the first of those for
# arena_t.base lost metadata, resident and mapped, and let `leaks` scan
# the base blocks (edata_t's slab pointers) as roots (seen on redis).
# Then, on a copy of the 5.3.0 amd64 core with arena 0's base_t.blocks
# zeroed (5.3.0 x86_64 layout: arena 0 lies 0x1000 after its base_t,
# whose blocks list is at +160): the arena is still found, the bases not,
# and metadata, resident and mapped are unknown (null) with one reason,
# the same in text, in JSON's stats.approximate and in the bases root.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
need_heapwalk
for v in jemalloc-5.3.0-amd64:5.3.0:x86_64 jemalloc-5.2.1-amd64:5.2.1:x86_64 \
	jemalloc-5.3.0-arm64:5.3.0:aarch64; do
	IFS=: read -r variant version arch <<<"$v"
	dir=$(jemalloc_truth "$variant" onearena1)
	# One arena in the truth: every allocation's and every bin's.
	others=$(awk '($1 == "alloc" && $7 != 0) || ($1 == "thread" && $4 != 0) ||
		(($1 == "bin" || $1 == "large") && $2 != 0)' "$dir/truth.txt" | sed -n 1,3p)
	[ -z "$others" ] ||
		fail "$variant: onearena1 used another arena than 0 (corpus bug): $others"
	jemalloc_check "$variant" "$version" "$arch" onearena1
	opt=(--json --no-debuginfo)
	case $variant in
	*-arm64) opt+=(--sysroot "$(readlink -f "$dir/sysroot")") ;;
	esac
	grep -q '"bases_from" *: *"each arena'"'"'s base_t: block list and counters"' \
		"$T/onearena1.summary" ||
		fail "$variant: summary's roots do not say the base_t was found: $(grep -o '"bases_from"[^,]*' "$T/onearena1.summary")"
	hw "$T/maps" "$T/maps.err" "${opt[@]}" "$dir/core" maps
	expect_rc 0
	grep -q '"kind" *: *"metadata"' "$T/maps" ||
		fail "$variant: maps does not name the base blocks allocator metadata"
	say "$variant onearena1: one arena, its base_t found"
done

corepatch=$(tool corepatch)
dir=$(jemalloc_truth jemalloc-5.3.0-amd64 onearena1)
cp "$dir/core" "$T/damaged.core"
hw "$T/arenas" "$T/arenas.err" --json --no-debuginfo "$dir/core" arenas
expect_rc 0
arena=$(sed -n 's/.*"index":0,"addr":"\(0x[0-9a-f]*\)".*/\1/p' "$T/arenas")
[ -n "$arena" ] || fail "arenas --json names no arena 0: $(head -c 200 "$T/arenas")"
blocks=$((arena - 0x1000 + 160))
first=$("$corepatch" -r "$T/damaged.core" "$blocks" 1)
# The word must look like a base block's address: page-aligned, not 0.
if [ $((first & 0xfff)) != 0 ] || [ $((first)) = 0 ]; then
	fail "no base block list at $(printf 0x%x "$blocks"): $first (5.3.0 layout changed?)"
fi
"$corepatch" "$T/damaged.core" "$blocks" 0000000000000000 >/dev/null ||
	fail "corepatch failed"
hw "$T/dmg.txt" "$T/dmg.err" --no-debuginfo "$T/damaged.core" summary
expect_rc 0
hw "$T/dmg.json" "$T/dmg.jerr" --json --no-debuginfo "$T/damaged.core" summary
expect_rc 0
why="a base_t's block list did not check out"
grep -q "arenas: *1\$" "$T/dmg.txt" || fail "damaged base: the arena is lost: $(grep arenas "$T/dmg.txt")"
grep -q "bases *not found ($why)" "$T/dmg.txt" ||
	fail "damaged base: roots do not say why the bases were not found: $(grep bases "$T/dmg.txt")"
for f in metadata resident mapped; do
	grep -q "^ *$f *unknown  no base_t: $why\$" "$T/dmg.txt" ||
		fail "damaged base: text $f: $(grep "^ *$f " "$T/dmg.txt")"
	grep -q "\"$f\":null" "$T/dmg.json" ||
		fail "damaged base: JSON $f is not null"
	grep -q "\"$f\":{\"from\":\"no base_t: $why\"}" "$T/dmg.json" ||
		fail "damaged base: stats.approximate.$f: $(grep -o "\"approximate\":{.*" "$T/dmg.json" | head -c 300)"
done
say "damaged base_t: arena kept, metadata/resident/mapped unknown with one reason"
