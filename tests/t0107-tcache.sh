#!/bin/bash
# `tcache [TID]` (ptmalloc's tcache_perthread_structs) against the truth:
#  - bins1 (2.36): one tcache, of the main thread; per bin, counts[] and
#    the entries listed are the truth's tcache blocks of that chunk size,
#    and the head is one of them;
#  - threads8: one tcache per thread that called malloc (the truth's
#    threads with an arena), each where `chunks --where tcache-struct`
#    has a block; `tcache TID` shows that thread's alone;
#  - glibc 2.44 (16 entries a bin, counted as free slots): counts[] is the
#    truth's tcache blocks per size too;
#  - a thread with no tcache: one usage line, exit 2.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd perl

# bins FILE: "tid index chunk_size count listed head" per bin of tcache --json.
bins() {
	perl -ne 'while (/\{"thread":(\d+),"addr":"(0x[0-9a-f]+)"[^\[]*"bins":\[([^\]]*)\]/g) {
		my ($t, $l) = ($1, $3);
		while ($l =~ /"index":(\d+),"chunk_size":(\d+),"count":(\d+),"listed":(\d+),"head":"(0x[0-9a-f]+)"/g) {
			print "$t $1 $2 $3 $4 $5\n" } }' "$1"
}

check_counts() {
	local name=$1 core=$2 truth=$3
	shift 3
	hw "$T/tc.json" "$T/err" --json "$@" "$core" tcache
	expect_rc 0
	bins "$T/tc.json" >"$T/bins"
	[ -s "$T/bins" ] || fail "$name: no tcache bins: $(head -c 300 "$T/tc.json")"
	# The truth's tcache blocks per chunk size (usable + 8, rounded).
	awk '$1 == "alloc" && $5 == "tcache" { c = $4 + 8; c += (16 - c % 16) % 16; n[c]++ }
		END { for (c in n) print c, n[c] }' "$truth" | sort -n >"$T/want"
	awk '{ n[$3] += $4 } END { for (c in n) print c, n[c] }' "$T/bins" | sort -n >"$T/got"
	cmp -s "$T/want" "$T/got" || fail "$name: counts[] per chunk size $(tr '\n' ' ' <"$T/got"), the truth $(tr '\n' ' ' <"$T/want")"
	local bad
	bad=$(awk '$4 != $5' "$T/bins")
	[ -z "$bad" ] || fail "$name: a bin whose list does not hold counts[] entries: $bad"
	while read -r _ _ _ _ _ head; do
		grep -q "^alloc $head .* tcache " "$truth" || fail "$name: head $head is no tcache block of the truth"
	done <"$T/bins"
	say "$name: counts[] and the heads as the truth's tcache blocks ($(wc -l <"$T/bins") bins)"
}

dir=$(corpus_core bins1)
check_counts "bins1 2.36" "$dir/core" "$dir/truth.txt"
[ "$(awk '{ print $1 }' "$T/bins" | sort -u | wc -l)" = 1 ] || fail "bins1: more than one tcache"
hw "$T/out" "$T/err" "$dir/core" tcache 1
expect_rc 2
one_error_line "$T/err" "tcache of a thread that has none"

dir=$(corpus_core threads8)
hw "$T/tc.json" "$T/err" --json "$dir/core" tcache
expect_rc 0
perl -ne 'print "$1 $2\n" while /\{"thread":(\d+),"addr":"(0x[0-9a-f]+)"/g' "$T/tc.json" | sort >"$T/tcs"
awk '$1 == "thread" && $4 != "none" { print $3 }' "$dir/truth.txt" | sort >"$T/want"
[ "$(awk '{ print $1 }' "$T/tcs")" = "$(cat "$T/want")" ] ||
	fail "threads8: tcaches of $(awk '{ print $1 }' "$T/tcs" | tr '\n' ' '), the truth's threads that called malloc $(tr '\n' ' ' <"$T/want")"
hw "$T/structs" "$T/err" --json "$dir/core" chunks --where tcache-struct
expect_rc 0
while read -r tid addr; do
	has -F "{\"addr\":\"$addr\"," <"$T/structs" || fail "threads8: thread $tid's tcache $addr is no tcache-struct block"
done <"$T/tcs"
one=$(sed -n 3p "$T/want")
hw "$T/one.json" "$T/err" --json "$dir/core" tcache "$one"
expect_rc 0
[ "$(perl -ne 'print "$1\n" while /\{"thread":(\d+),/g' "$T/one.json")" = "$one" ] ||
	fail "threads8: tcache $one shows $(perl -ne 'print "$1 " while /\{"thread":(\d+),/g' "$T/one.json")"
say "threads8: $(wc -l <"$T/tcs") tcaches, one per thread that called malloc, each a tcache-struct block; tcache TID alone"

dir=$(variant_core glibc-2.44-amd64 bins1)
check_counts "bins1 2.44" "$dir/core" "$dir/truth.txt" --no-debuginfo
