#!/bin/bash
# The counting walk (summary, sizes) does not walk the small and large
# bins or the fastbins: it checks them by sums of hashed links and
# guesses the fastbin entries (libheapwalk/alloc/ptmalloc/linksums.c).
# On copies of the bins1 core, every target taken from the program's own
# truth.txt and the core's raw bytes:
#   s1  a live chunk of a non-empty fastbin's size whose first word is a
#       safe-linked NULL (what a chunk malloc took from the end of a
#       fastbin keeps when the program leaves its first word alone): a
#       false guess
#   s2  the same, the word naming a real fastbin entry of its size
#   for both, the guesses of that one fastbin (0x20, arena 0) are
#   dropped and its list alone is walked: --stats names it and no other,
#   and the 40-byte fastbin's entries are still guessed and proven; and
#   heapwalk still agrees with the truth everywhere (truthcmp: every chunk, and summary's mallinfo with
#   the program's mallinfo2()), `check` finds nothing, and summary's,
#   sizes' and leaks' counts are those of the undamaged core (one word of
#   a block's data changes no block's state; leaks' block map guesses
#   the fastbin entries too)
#   s3  a small-bin chunk's bk pointing at a live chunk, s4 a fastbin
#       entry's fd = 0x4141414141414141: the sums of that one list
#       disagree (--stats names it alone: for summary, which sums all of
#       an arena's bins at once, the small bin's arena), it is walked,
#       and summary
#       counts exactly the findings `check` lists (among them the one at
#       the damaged chunk)
# Needs safe-linking (glibc 2.32+); the host's glibc is 2.36.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd timeout
corepatch=$(tool corepatch)
dir=$(corpus_core bins1)
corpus_copy "$dir" "$T"
mv "$T/core" "$T/orig.core"
truth=$T/truth.txt
# shellcheck source=tests/damage-lib.sh
. "$(dirname "$0")/damage-lib.sh"

mapfile -t fa24 < <(allocs fastbin 24)
mapfile -t fa40 < <(allocs fastbin 40)
mapfile -t sb < <(allocs smallbin)
mapfile -t live24 < <(allocs heap 24)
[ ${#fa24[@]} -ge 1 ] && [ ${#fa40[@]} -ge 2 ] && [ ${#sb[@]} -ge 1 ] &&
	[ ${#live24[@]} -ge 2 ] ||
	fail "bins1's truth lacks fastbin chunks of 24 and 40, a small-bin chunk or two live 24-byte chunks"
# Safe-linking: a fastbin's tail (the first freed) holds its own
# address >> 12.
(($(word "${fa40[0]}") == fa40[0] >> 12)) ||
	skip "this core's fastbin links are not safe-linked (glibc < 2.32)"

# counts JSON: summary's blocks and bytes in use and free.
counts() {
	grep -o '"\(used\|free\)":{"count":[0-9]*,"bytes":[0-9]*' "$1" || true
}
hw "$T/orig.summary" "$T/orig.summary.err" --json "$T/orig.core" summary
expect_rc 0
hw "$T/orig.sizes" "$T/orig.sizes.err" --json "$T/orig.core" sizes
expect_rc 0
hw "$T/orig.leaks" "$T/orig.leaks.err" "$T/orig.core" leaks
expect_rc 0
[ "$(counts "$T/orig.summary" | wc -l)" = 2 ] ||
	fail "summary --json has no used and free counts: $(head -c 300 "$T/orig.summary")"

# A damaged copy agrees with the whole truth (chunks and mallinfo).
agrees() {
	local name=$1 core=$2
	truth_agrees "$truth" "$core" "$T/$name.chunks" "$T/$name.summary" \
		"bins1's truth ($name)"
	[ "$(json_num "$T/$name.summary" findings)" = 0 ] ||
		fail "$name: summary reports findings: $(head -c 300 "$T/$name.summary")"
	[ "$(counts "$T/$name.summary")" = "$(counts "$T/orig.summary")" ] ||
		fail "$name: summary counts $(counts "$T/$name.summary" | tr '\n' ' '), the undamaged core $(counts "$T/orig.summary" | tr '\n' ' ')"
	hw "$T/$name.sizes" "$T/$name.sizes.err" --json "$core" sizes
	expect_rc 0
	cmp -s "$T/$name.sizes" "$T/orig.sizes" ||
		fail "$name: sizes differs from the undamaged core's: $(diff "$T/orig.sizes" "$T/$name.sizes" | head -c 400)"
	hw "$T/$name.leaks" "$T/$name.leaks.err" "$core" leaks
	expect_rc 0
	sed "s|$name.core|orig.core|g" "$T/$name.leaks" | cmp -s - "$T/orig.leaks" ||
		fail "$name: leaks differs from the undamaged core's: $(sed "s|$name.core|orig.core|g" "$T/$name.leaks" | diff "$T/orig.leaks" - | head -c 400)"
	hw "$T/$name.check" "$T/$name.check.err" "$core" check
	expect_rc 0
	say "$name: chunks, summary, sizes, leaks and check agree with the truth"
}

# summary counts what check lists, and check has the damaged chunk.
same_findings() {
	local name=$1 core=$2 at=$3 n
	expect_finding "$name" "$core" "" "$at"
	n=$(wc -l <"$T/$name.findings")
	hw "$T/$name.summary" "$T/$name.summary.err" --json "$core" summary
	expect_rc 0 1
	[ "$(json_num "$T/$name.summary" findings)" = "$n" ] ||
		fail "$name: summary counts $(json_num "$T/$name.summary" findings) findings, check lists $n"
	hw "$T/$name.sizes" "$T/$name.sizes.err" --json "$core" sizes
	expect_rc 0 1
	say "$name: summary counts the $n findings check lists"
}

# Only the fastbin of the false guess falls back (--stats says which):
# the other fastbins' guesses stand.
# The false guess is one more guess of that fastbin, and one more list
# end when its word decodes to NULL (ends: 2) rather than to an entry
# (ends: 1).
one_fastbin_falls_back() {
	local name=$1 core=$2 ends=$3 line
	hw "$T/$name.stats" "$T/$name.stats.err" --stats "$core" summary
	expect_rc 0
	line=$(grep 'stats: sums that disagreed' "$T/$name.stats.err" || true)
	[ "$line" = "heapwalk: stats: sums that disagreed, their lists walked instead: arena 0 fastbin 0x20 ($((${#fa24[@]} + 1)) guesses, $ends list ends)" ] ||
		fail "$name: --stats does not name fastbin 0x20 of arena 0 alone with $((${#fa24[@]} + 1)) guesses and $ends ends: ${line:-nothing}"
	grep -q "stats: .* guessed [1-9][0-9]*, summed [0-9]*, sums failed 1;" "$T/$name.stats.err" ||
		fail "$name: the other fastbins were not guessed, or more sums failed: $(grep 'stats: open' "$T/$name.stats.err")"
	say "$name: only fastbin 0x20 fell back; the others stayed proven"
}

case_s1() {
	local core u=${live24[0]}
	core=$(damaged s1)
	patch "$core" "$u" "$(le64 $((u >> 12)))"
	agrees s1 "$core"
	one_fastbin_falls_back s1 "$core" 2
}

case_s2() {
	local core u=${live24[1]}
	core=$(damaged s2)
	patch "$core" "$u" "$(le64 $(((u >> 12) ^ (fa24[0] - 16))))"
	agrees s2 "$core"
	one_fastbin_falls_back s2 "$core" 1
}

# --stats of CMD names the one list that fell back: $4, a pattern.
falls_back_alone() {
	local name=$1 core=$2 cmd=$3 want=$4 line re
	hw "$T/$name.stats" "$T/$name.stats.err" --stats "$core" $cmd
	line=$(grep 'stats: sums that disagreed' "$T/$name.stats.err" || true)
	re="^heapwalk: stats: sums that disagreed, their lists walked instead: $want \\([0-9]+ [^;]*\\)\$"
	[[ $line =~ $re ]] ||
		fail "$name: --stats does not name $want alone: ${line:-nothing}"
	say "$name: $cmd: only $want fell back"
}

case_s3() {
	local core c=${sb[0]}
	core=$(damaged s3)
	patch "$core" $((c + 8)) "$(le64 $((live24[0] - 16)))"
	same_findings s3 "$core" $((c - 16))
	# (summary, a walk for counting, sums all of an arena's bins at
	# once, the unsorted one with them; chunks, bin by bin.)
	falls_back_alone s3 "$core" summary "arena 0 bins"
	falls_back_alone s3 "$core" chunks "arena 0 small bin [0-9]+"
}

case_s4() {
	local core c=${fa40[${#fa40[@]} - 1]}
	core=$(damaged s4)
	patch "$core" "$c" 4141414141414141
	same_findings s4 "$core" $((c - 16))
	falls_back_alone s4 "$core" summary "arena 0 fastbin 0x30"
	falls_back_alone s4 "$core" chunks "arena 0 fastbin 0x30"
}

failed=0
for c in s1 s2 s3 s4; do
	("case_$c") || failed=1
done
[ $failed = 0 ] || fail "some cases failed"
say "all cases behaved"
