#!/bin/bash
# leaks where one block holds 700,000 pointers (corpora/ptmalloc/
# leakstable1.c): marking pushes more blocks than its stacks hold (2^19
# entries a thread), leaves them marked and finds them again by sweeping
# the block map: in threads, each over a part of the map (the table
# itself scanned in slices that any thread takes, what they mark left to
# the sweep), or in one thread with --threads 1.
#  - `leaks --reachable --json` agrees with the program's truth
#    (leakcmp: the sampled table entries and their second blocks
#    reachable, the 64 lost blocks definite, what they hold indirect,
#    nothing else lost), and counts every block of the table reachable;
#  - --threads 1, 2 and 4 give the same blocks, byte for byte;
#  - `leaks` lists exactly the lost blocks of `leaks --reachable`.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
leakcmp=$(tool leakcmp)

dir=$(corpus_core leakstable1)
corpus_copy "$dir" "$T"
entries=$(sed -n 's/^table \([0-9]*\)$/\1/p' "$T/truth.txt")
[ -n "$entries" ] || fail "leakstable1's truth has no table line"

hw "$T/all.jsonl" "$T/all.err" --json "$T/core" leaks --reachable
expect_rc 0
"$leakcmp" "$T/truth.txt" "$T/all.jsonl" >"$T/cmp" ||
	{ cat "$T/cmp"; fail "leaks disagrees with leakstable1's truth (core in $dir)"; }
reachable=$(grep -c '"kind":"reachable"' "$T/all.jsonl" || true)
[ "$reachable" -gt "$entries" ] ||
	fail "only $reachable blocks reachable: the table alone holds $entries"
say "leakstable1: $(tail -n 1 "$T/cmp"); $reachable blocks reachable"

for nt in 1 2 4; do
	hw "$T/t$nt.jsonl" "$T/t$nt.err" --threads $nt --json "$T/core" leaks --reachable
	expect_rc 0
	cmp -s "$T/all.jsonl" "$T/t$nt.jsonl" ||
		fail "leaks --reachable with --threads $nt differs from the default's"
done
say "--threads 1, 2 and 4: the same blocks"

hw "$T/lost.jsonl" "$T/lost.err" --json "$T/core" leaks
expect_rc 0
grep -v '"kind":"reachable"' "$T/all.jsonl" >"$T/lost.want"
cmp -s "$T/lost.want" "$T/lost.jsonl" ||
	fail "leaks lists other blocks than leaks --reachable's lost ones"
[ "$(grep -c '"kind":"definite"' "$T/lost.jsonl")" = 64 ] ||
	fail "leaks does not list leakstable1's 64 definite blocks"
say "leaks lists the 64 definite and 64 indirect blocks and nothing else"
