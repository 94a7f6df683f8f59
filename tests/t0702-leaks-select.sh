#!/bin/bash
# leaks' selections, against leaks1's own truth (corpora/ptmalloc/
# leaks1.c records each block's kind: "block ADDR REQUEST KIND HOLDER";
# a lost cycle's blocks are "cycle": one of them definite, the others
# indirect, as the scan meets them; "freed" ones are no block):
#  - --kind K[,K] (JSON): exactly the truth's blocks of those kinds
#    (definite: the definite ones and one block of the cycle); reachable
#    lists the reachable ones too, never glibc's tcache structs;
#  - --min-size (JSON): exactly the lost blocks of that size or more;
#  - text: the loss records numbered "N of M" in order, M the records
#    there are; their blocks add up to the truth's lost blocks; --top N
#    shows N and says how many more (blocks and bytes); --top 0 all; by
#    default at most 20; --min-bytes keeps the records of that many bytes
#    and numbers them among themselves; the totals above stay the
#    whole truth's whatever is selected;
#  - bad values: one usage line, exit 2.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
dir=$(corpus_core leaks1)
core=$dir/core truth=$dir/truth.txt

# listed ARGS...: the addresses leaks --json ARGS lists, sorted.
listed() {
	hw "$T/out" "$T/err" --json "$core" leaks "$@"
	expect_rc 0
	sed -n 's/^{"addr":"\(0x[0-9a-f]*\)".*/\1/p' "$T/out" | sort
}
# truth_of AWK-CONDITION: the truth's blocks meeting it ($3 request
# size, $4 kind), sorted.
truth_of() {
	awk "\$1 == \"block\" && ($1) { print \$2 }" "$truth" | sort
}
same() {
	local what=$1 want=$2 got=$3
	[ "$want" = "$got" ] ||
		fail "$what: expected $(echo "$want" | wc -w) blocks, got $(echo "$got" | wc -w): $(diff <(echo "$want") <(echo "$got") | sed -n 1,5p)"
	say "$what: the truth's $(echo "$want" | wc -w) blocks"
}

LOST='$4 == "definite" || $4 == "indirect" || $4 == "possible" || $4 == "cycle"'
same "--kind definite,indirect" "$(truth_of '$4 == "definite" || $4 == "indirect" || $4 == "cycle"')" \
	"$(listed --kind definite,indirect)"
same "--kind possible" "$(truth_of '$4 == "possible"')" "$(listed --kind=possible)"
got=$(listed --kind definite)
[ -z "$(comm -23 <(truth_of '$4 == "definite"') <(echo "$got"))" ] ||
	fail "--kind definite misses a definite block of the truth"
[ -z "$(comm -13 <(truth_of '$4 == "definite" || $4 == "cycle"') <(echo "$got"))" ] ||
	fail "--kind definite lists a block the truth does not call definite"
[ "$(comm -12 <(truth_of '$4 == "cycle"') <(echo "$got") | wc -l)" = 1 ] ||
	fail "--kind definite does not list exactly one block of the lost cycle"
say "--kind definite: the truth's definite blocks and one of the cycle"
got=$(listed --kind reachable)
want=$(truth_of '$4 == "reachable"')
missing=$(comm -23 <(echo "$want") <(echo "$got") | sed -n 1,3p)
[ -z "$missing" ] || fail "--kind reachable does not list the truth's $missing"
lost=$(truth_of "$LOST")
[ -z "$(comm -12 <(echo "$lost") <(echo "$got"))" ] || fail "--kind reachable lists lost blocks"
say "--kind reachable: every reachable block of the truth, no lost one"
# glibc's tcache structs are no program block (Valgrind never sees them):
# listed as no kind at all.
hw "$T/tc" "$T/err" --json "$core" chunks --where tcache-struct
expect_rc 0
tcs=$(sed -n 's/^{"addr":"\(0x[0-9a-f]*\)".*/\1/p' "$T/tc" | sort)
nt=$(awk '$1 == "thread" && $4 != "none"' "$truth" | wc -l)
[ "$(echo "$tcs" | wc -w)" = "$nt" ] || fail "leaks1: expected $nt tcache structs (threads that called malloc), got: $tcs"
[ -z "$(comm -12 <(echo "$tcs") <(echo "$got"))" ] ||
	fail "leaks lists glibc's tcache struct as a reachable block"
say "glibc's $nt tcache structs are no block of leaks'"
# No request in the truth is within a chunk's slack (24 bytes) below 500,
# so a usable size of 500 or more is a request of 500 or more.
[ -z "$(awk '$1 == "block" && $3 >= 476 && $3 < 500' "$truth")" ] ||
	fail "leaks1's truth has a request just under 500: the test's threshold must move"
same "--min-size 500" "$(truth_of "($LOST) && \$3 >= 500")" "$(listed --min-size 500)"
same "--kind definite --min-size 0x1f4" "$(truth_of '$4 == "definite" && $3 >= 500')" \
	"$(listed --kind definite --min-size 0x1f4)"

# The text's loss records: "N of M" first, then bytes and blocks.
records() {
	hw "$T/text" "$T/err" "$core" leaks "$@"
	expect_rc 0
	awk '$2 == "of" && $1 ~ /^[0-9]+$/' "$T/text" >"$T/records"
}
records --top 0
m=$(wc -l <"$T/records")
[ "$m" -gt 2 ] || fail "leaks1 has only $m loss records"
awk -v m="$m" '$1 != NR || $3 != m { print "record line " NR ": " $0; exit 1 }' "$T/records" ||
	fail "loss records are not numbered 1 of $m, 2 of $m, ..."
nblocks=$(awk '{ n += $5 } END { print n }' "$T/records")
[ "$nblocks" = "$(truth_of "$LOST" | wc -l)" ] ||
	fail "the loss records hold $nblocks blocks, the truth $(truth_of "$LOST" | wc -l) lost ones"
# Totals: the truth's whatever is selected.
definite=$(($(truth_of '$4 == "definite"' | wc -l) + 1))   # and one of the cycle
records --top 1 --kind possible --min-size 1G
has "^definitely lost: *$definite chunks" <"$T/text" ||
	fail "the totals changed with the selection: $(grep 'definitely lost' "$T/text")"
records --top 2
[ "$(wc -l <"$T/records")" = 2 ] || fail "--top 2 shows $(wc -l <"$T/records") records"
rest_blocks=$((nblocks - $(awk '{ n += $5 } END { print n }' "$T/records")))
has "^($((m - 2)) more loss records, .* in $rest_blocks blocks: leaks --top 0 lists them all)\$" <"$T/text" ||
	fail "--top 2 does not say what it left out: $(tail -n 1 "$T/text")"
records
[ "$(wc -l <"$T/records")" = "$((m < 20 ? m : 20))" ] || fail "by default $(wc -l <"$T/records") records of $m"
records --top 0 --min-bytes 200
k=$(wc -l <"$T/records")
awk -v k="$k" '$4 < 200 || $3 != k { print; exit 1 }' "$T/records" >/dev/null ||
	fail "--min-bytes 200: a record under 200 bytes, or not numbered of $k"
[ "$k" -gt 0 ] && [ "$k" -lt "$m" ] || fail "--min-bytes 200 kept $k of $m records"
say "text: $m loss records numbered N of $m holding the truth's $nblocks lost blocks; --top, --min-bytes"

bad() {
	local words=$1
	shift
	usage_error "$words" "$core" leaks "$@"
}
bad "is not a kind" --kind definite,lost
bad "is not a number of records" --top many
bad "is not a size" --min-size -1
bad "is not a size" --min-bytes
bad "unknown argument" --reach
say "bad selections: one usage line each, exit 2"
