#!/bin/bash
# `bins --list` (ptmalloc, alloc/ptmalloc/chains.c): each free list's
# entries in its own order, against the truth of bins1 on glibc 2.36
# (safe-linked) and 2.31 (plain links) and aarch64 2.36:
#  - every list ends at its end ("list_end":"end"), its entries as many
#    as the row's count, no entry twice;
#  - each kind's entries are exactly the truth's blocks of that place
#    (tcache, fastbin, unsorted, smallbin, largebin), each in the list
#    of its size (tcache and fastbin rows: the row's chunk size);
#  - each large bin shows its range of chunk sizes (min_chunk_size,
#    max_chunk_size), and holds only chunks of that range;
#  - the text form shows the same entries, "->" between them, "end";
#  - a fastbin entry's fd overwritten (a copy of the core, patched with
#    tests/tools/corepatch): that list breaks there -- its end says how,
#    "list_broken_at" the pointer, the entries before it are listed, and
#    the text says the list breaks.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd perl

# rows FILE: "kind chunk_size count end entry..." per bin of bins --list
# --json FILE.
rows() {
	perl -ne 'while (/\{"kind":"(\w+)",[^\[]*?"chunk_size":(\d+),[^\[]*?"count":(\d+),[^\[]*?"list_end":"([\w-]+)"[^\[]*?"list":\[([^\]]*)\]/g) {
		my ($k, $s, $n, $end, $l) = ($1, $2, $3, $4, $5);
		my @a = $l =~ /"addr":"(0x[0-9a-f]+)"/g;
		print join(" ", $k, $s, $n, $end, @a), "\n" }
		while (/\{"kind":"(\w+)",[^\[]*?"count":(\d+),[^\[]*?"list_end":"([\w-]+)"[^\[]*?"list":\[([^\]]*)\]/g) {
		my ($k, $n, $end, $l) = ($1, $2, $3, $4);
		next unless $k eq "unsorted" || $k eq "large";
		my @a = $l =~ /"addr":"(0x[0-9a-f]+)"/g;
		print join(" ", $k, 0, $n, $end, @a), "\n" }' "$1"
}

check_case() {
	local name=$1 core=$2 truth=$3
	shift 3
	hw "$T/bins.json" "$T/err" --json "$@" "$core" bins --list
	expect_rc 0
	rows "$T/bins.json" >"$T/rows"
	[ -s "$T/rows" ] || fail "$name: no lists in $(head -c 300 "$T/bins.json")"
	local bad
	bad=$(awk '$4 != "end" || NF - 4 != $3 { print; exit }' "$T/rows")
	[ -z "$bad" ] || fail "$name: a list that does not end, or whose entries are not its count: $bad"
	local kind where
	for kind in tcache:tcache fast:fastbin unsorted:unsorted small:smallbin large:largebin; do
		where=${kind#*:} kind=${kind%:*}
		awk -v k="$kind" '$1 == k { for (i = 5; i <= NF; i++) print $i }' "$T/rows" | sort >"$T/got"
		[ -z "$(uniq -d "$T/got")" ] || fail "$name: an entry twice in the $kind lists: $(uniq -d "$T/got" | sed -n 1p)"
		awk -v w="$where" '$1 == "alloc" && $5 == w { print $2 }' "$truth" | sort >"$T/want"
		[ -z "$(comm -23 "$T/want" "$T/got")" ] ||
			fail "$name: the $kind lists miss the truth's $(comm -23 "$T/want" "$T/got" | sed -n 1,3p)"
		[ -z "$(comm -13 "$T/want" "$T/got")" ] ||
			fail "$name: the $kind lists hold what the truth does not put there: $(comm -13 "$T/want" "$T/got" | sed -n 1,3p)"
	done
	# Each tcache and fastbin entry in the list of its size.
	bad=$(awk 'NR == FNR { if ($1 == "alloc") usable[$2] = $4; next }
		($1 == "tcache" || $1 == "fast") {
			for (i = 5; i <= NF; i++) {
				c = usable[$i] + 8; c += (16 - c % 16) % 16
				if (c < 32) c = 32
				if (c != $2) { print $1, $2, $i, usable[$i]; exit }
			} }' "$truth" "$T/rows")
	[ -z "$bad" ] || fail "$name: an entry in the list of another size: $bad"
	# A large bin's entries are of its range of chunk sizes (the
	# truth's usable size + 8: a heap chunk's), and the text shows it.
	bad=$(perl -e 'my %u; open my $t, "<", $ARGV[0] or die;
		while (<$t>) { $u{$1} = $2 if /^alloc (0x[0-9a-f]+) \d+ (\d+) largebin/ }
		local $/; my $j = <STDIN>;
		while ($j =~ /"kind":"large",[^\[]*?"min_chunk_size":(\d+)(?:,"max_chunk_size":(\d+))?[^\[]*?"list":\[([^\]]*)\]/g) {
			my ($lo, $hi, $l) = ($1, $2, $3);
			for my $a ($l =~ /"addr":"(0x[0-9a-f]+)"/g) {
				my $c = $u{$a} + 8;
				print "$a: chunk $c not in $lo..", $hi // "", "\n"
					if !exists $u{$a} || $c < $lo || (defined $hi && $c > $hi);
			} }' "$truth" <"$T/bins.json")
	[ -z "$bad" ] || fail "$name: a large bin entry outside its bin's sizes: $bad"
	hw "$T/bins.txt" "$T/err" "$@" "$core" bins --list
	expect_rc 0
	local first
	first=$(awk '$1 == "fast" { print $5; exit }' "$T/rows")
	has -F "    $first -> " <"$T/bins.txt" || has -F "    $first -> end" <"$T/bins.txt" ||
		fail "$name: the text does not list $first: $(sed -n 1,12p "$T/bins.txt")"
	say "$name: $(wc -l <"$T/rows") lists, each to its end, entries as the truth's"
}

dir=$(corpus_core bins1)
check_case "bins1 2.36" "$dir/core" "$dir/truth.txt"

# A fastbin entry's fd overwritten: the list breaks there.
corepatch=$(tool corepatch)
head=$(awk '$1 == "fast" && NF >= 7 { print $5; exit }' "$T/rows")
[ -n "$head" ] || fail "bins1 has no fastbin of three entries"
cp "$dir/core" "$T/damaged.core"
"$corepatch" "$T/damaged.core" "$head" 4141414141414141 >/dev/null
hw "$T/d.json" "$T/err" --json "$T/damaged.core" bins fast --list
expect_rc 0
has -F '"list_end":"misaligned","list_broken_at":"0x' <"$T/d.json" ||
	has -F '"list_end":"wrong-size","list_broken_at":"0x' <"$T/d.json" ||
	has -F '"list_end":"unreadable","list_broken_at":"0x' <"$T/d.json" ||
	fail "damaged fd: no list says where it breaks: $(head -c 600 "$T/d.json")"
has -F "{\"addr\":\"$head\"}]" <"$T/d.json" ||
	fail "damaged fd: the list does not end with the entry before the break ($head): $(head -c 600 "$T/d.json")"
hw "$T/d.txt" "$T/err" "$T/damaged.core" bins fast --list
expect_rc 0
has -F "the list breaks here" <"$T/d.txt" || fail "damaged fd: the text does not say the list breaks: $(cat "$T/d.txt")"
say "damaged fastbin fd: the list ends at the entry before, saying where it breaks"

dir=$(variant_core glibc-2.31-amd64 bins1)
check_case "bins1 2.31" "$dir/core" "$dir/truth.txt" --no-debuginfo
dir=$(variant_core glibc-2.36-arm64 bins1)
check_case "bins1 aarch64 2.36" "$dir/core" "$dir/truth.txt" --sysroot "$(readlink -f "$dir/sysroot")"

# (jemalloc's lists: t0108; tcmalloc's: t0109.)
