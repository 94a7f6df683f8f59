#!/bin/bash
# diff --leaks across two runs of one program (issue #54): the kernel
# places the heap, the stacks and the libraries elsewhere each run
# (ASLR), so a leaked list node's first word -- a pointer -- differs
# between the runs' cores while the leak is the same.  Two cores of
# corpora/ptmalloc/leaks1.c (the corpus one, and a second run made
# here), whose truths list the same leaks at other addresses:
#  - their leaks' heads differ as raw bytes (so matching raw bytes would
#    call old leaks new: the test means something);
#  - `diff --leaks` of the second against the first finds no new leak,
#    with the first core as base and with its saved `leaks --json`;
#  - and a leak that is not in the base is still new: the second core
#    against a base without leaks (an empty saved leaks list).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
[ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" != 0 ] ||
	skip "ASLR is off (kernel.randomize_va_space = 0): two runs share their addresses"

dir=$(corpus_core leaks1)
"$TOP/scripts/corpus/make-core.sh" leaks1 "$T/run2" >"$T/run2.log" 2>&1 ||
	fail "a second run of leaks1 failed: $(tail -n 3 "$T/run2.log")"
one=$dir/core two=$T/run2/core

# The same leaks, elsewhere.
leaks_of() { awk '$1 == "block" && ($4 == "definite" || $4 == "indirect" || $4 == "cycle") { print $3, $4 }' "$1" | sort; }
[ "$(leaks_of "$dir/truth.txt")" = "$(leaks_of "$T/run2/truth.txt")" ] ||
	fail "the two runs of leaks1 recorded different leaks"
[ -n "$(leaks_of "$dir/truth.txt")" ] || fail "leaks1's truth lists no definite or indirect leak"
a1=$(awk '$1 == "block" { print $2; exit }' "$dir/truth.txt")
a2=$(awk '$1 == "block" { print $2; exit }' "$T/run2/truth.txt")
[ "$a1" != "$a2" ] || skip "the two runs placed the heap at the same address ($a1)"

# Their heads differ as bytes: pointers moved with the heap.
heads() {
	hw "$T/h.json" "$T/h.err" --json "$1" leaks
	expect_rc 0
	grep -E '"kind":"(definite|indirect)"' "$T/h.json" | sed 's/"addr":"[^"]*",//' | sort
}
heads "$one" >"$T/heads1"
heads "$two" >"$T/heads2"
[ -s "$T/heads1" ] || fail "leaks --json lists no definite or indirect leak of leaks1"
cmp -s "$T/heads1" "$T/heads2" &&
	fail "the leaks' heads are the same bytes in both runs: nothing here depends on ASLR"

# No new leak, against the core and against its saved leaks.
hw "$T/d.json" "$T/d.err" --json "$two" diff "$one" --leaks
expect_rc 0
for k in new_definite new_indirect; do
	[ "$(json_num "$T/d.json" $k)" = 0 ] ||
		fail "diff --leaks of two runs: $k $(json_num "$T/d.json" $k), want 0: $(grep -o '"new_leaks":\[[^]]*' "$T/d.json" | head -c 400)"
done
hw "$T/l1.json" "$T/l1.err" --json "$one" leaks
expect_rc 0
hw "$T/d2.json" "$T/d2.err" --json "$two" diff "$T/l1.json" --leaks
expect_rc 0
for k in new_definite new_indirect; do
	[ "$(json_num "$T/d2.json" $k)" = 0 ] ||
		fail "diff --leaks against the saved leaks --json: $k $(json_num "$T/d2.json" $k), want 0"
done
[ "$(json_str "$T/d2.json" leaks_matched_by)" = content ] || fail "the saved base was not matched by content"

# A base without these leaks: all of them are new.
printf '' >"$T/none.json"
hw "$T/d3.json" "$T/d3.err" --json "$two" diff "$T/none.json" --leaks
expect_rc 0
# (A cycle's blocks are one definite leak and the rest indirect.)
want=$(awk '$1 == "block" && ($4 == "definite" || $4 == "indirect" || $4 == "cycle")' "$T/run2/truth.txt" | wc -l)
got=$(($(json_num "$T/d3.json" new_definite) + $(json_num "$T/d3.json" new_indirect)))
[ "$got" = "$want" ] ||
	fail "against an empty base: $got new leaks, the truth's $want (definite, indirect and cycles)"
say "leaks1, two runs (heap at $a1 and $a2): diff --leaks finds no new leak against the core or its saved leaks; against none, the truth's $want"
