#!/bin/bash
# tcmalloc's side of the heap debuggers' views, against the corpus
# programs' own record (corpora/tcmalloc/truth.h) and tcmalloc's own
# statistics:
#  - `bins --list`: every list followed to its end; per size class the
#    thread caches', transfer slots' and spans' lists together hold
#    exactly the free objects tcmalloc's stats count for the class (the
#    truth's freeclass lines); no entry is a block the program holds, and
#    a recorded one is a freed block of the class's size; a thread
#    cache's list holds what its length says;
#  - `tcache`: each cache's lengths times sizes are its size_, the caches
#    together tcmalloc.thread_cache_free_bytes, each owned by one of the
#    truth's threads, each head its list's first entry;
#  - `chunk ADDR` fields: a live block is held by no list, its span of
#    its size class, at span start + index * size; an entry of a thread
#    cache's list is held by that cache, at its place in the list;
#  - `mp`: the page size, the thread caches and the size map's classes
#    (those the stats name: every class that holds free objects) as the
#    stats give them; `arena 0` (the page heap): generic.heap_size and
#    the page heap's free and unmapped bytes; `arena 1`: a usage line.
# On tcmalloc_minimal (Debian's gperftools 2.10) basic1 and threads8.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd perl

views() {
	local name=$1 dir=$2 truth=$2/truth.txt
	hw "$T/l.json" "$T/err" --json "$dir/core" bins --list
	expect_rc 0
	# "kind thread class size count listed entries,..." per list.
	perl -ne 'while (/\{"kind":"(\w+)",(?:"thread":(\d+),)?"owner":"[^"]*","class":(\d+),"size":(\d+),"count":(\d+|null),"listed":(\d+),"list_end":"end","list":\[([^\]]*)\]/g) {
		my @f = ($1, $2 // "-", $3, $4, $5, $6);
		my @a = ($7 =~ /"addr":"(0x[0-9a-f]+)"/g);
		print join(" ", @f, join(",", @a) || "-"), "\n" }' "$T/l.json" >"$T/lists"
	[ -s "$T/lists" ] || fail "$name: no lists: $(head -c 300 "$T/l.json")"
	has -F '"list_end":"broken"' <"$T/l.json" && fail "$name: a list that breaks"
	awk '$6 != split($7, a, ",") && $7 != "-" { print; exit 1 }' "$T/lists" >/dev/null ||
		fail "$name: a list whose listed count is not its entries"
	awk '$1 == "thread" && $5 != $6 { print; exit 1 }' "$T/lists" >/dev/null ||
		fail "$name: a thread cache list that does not hold its length: $(awk '$1 == "thread" && $5 != $6' "$T/lists" | head -2)"
	awk '{ n[$3] += $6 } END { for (c in n) print c, n[c] }' "$T/lists" | sort -n >"$T/got"
	awk '$1 == "freeclass" { print $2, $4 }' "$truth" | sort -n >"$T/want"
	cmp -s "$T/got" "$T/want" || fail "$name: free objects per class differ from tcmalloc's stats (class objs): $(diff "$T/want" "$T/got" | head -6)"
	perl -e 'my %rec;
		open my $t, "<", $ARGV[0] or die;
		while (<$t>) { my @f = split; $rec{$f[1]} = [$f[3], $f[4]] if $f[0] eq "alloc" }
		open my $l, "<", $ARGV[1] or die;
		while (<$l>) {
			my ($kind, $tid, $cls, $size, $count, $listed, $e) = split;
			next if $e eq "-";
			for my $a (split /,/, $e) {
				my $r = $rec{$a} or next;
				die "$a on a $kind list is a live block of the program\n" if $r->[1] eq "used";
				die "$a on a $kind list of size $size was freed at $r->[0] bytes\n" if $r->[0] != $size;
			}
		}' "$truth" "$T/lists" 2>"$T/bad" || fail "$name: $(cat "$T/bad")"

	# tcache: size_ per cache, their sum, owners, heads.
	hw "$T/tc.json" "$T/err" --json "$dir/core" tcache
	expect_rc 0
	perl -ne 'while (/\{"thread":(\d+|null),"addr":"(0x[0-9a-f]+)","bytes":(\d+),"bins":\[([^\]]*)\]/g) {
		my ($t, $a, $b, $l) = ($1, $2, $3, $4); my $sum = 0;
		while ($l =~ /"index":(\d+),"size":(\d+),"count":(\d+),"low_water":\d+,"max":\d+,"head":"(0x[0-9a-f]+)"/g) {
			$sum += $2 * $3; print "head $t $1 $4\n" }
		print "cache $t $a $b $sum\n" }' "$T/tc.json" >"$T/tc"
	[ -n "$(awk '$1 == "cache"' "$T/tc")" ] || fail "$name: no thread caches"
	awk '$1 == "cache" && $4 != $5 { print; exit 1 }' "$T/tc" >/dev/null ||
		fail "$name: a cache whose lists do not add up to its size_: $(awk '$1 == "cache" && $4 != $5' "$T/tc")"
	local sum want
	sum=$(awk '$1 == "cache" { s += $4 } END { print s + 0 }' "$T/tc")
	want=$(awk '$1 == "prop" && $2 == "tcmalloc.thread_cache_free_bytes" { print $3 }' "$truth")
	[ "$sum" = "$want" ] || fail "$name: the caches hold $sum bytes, tcmalloc.thread_cache_free_bytes $want"
	awk 'NR == FNR { if ($1 == "thread") t[$3] = 1; next } $1 == "cache" && !($2 in t) { print; exit 1 }' "$truth" "$T/tc" >/dev/null ||
		fail "$name: a thread cache owned by no thread of the truth"
	while read -r _ tid cls head; do
		has -E "^thread $tid $cls [0-9]+ [0-9]+ [0-9]+ $head(,|$)" <"$T/lists" ||
			fail "$name: tcache $tid class $cls: head $head is not its list's first entry"
	done < <(awk '$1 == "head"' "$T/tc")

	# chunk ADDR: a live block, a thread cache's entry.
	local addr usize
	read -r addr usize < <(awk '$1 == "alloc" && $5 == "used" && $4 <= 1024 { print $2, $4; exit }' "$truth")
	hw "$T/c.json" "$T/err" --json "$dir/core" chunk "$addr"
	expect_rc 0
	has -F '"holder":"in use (no free list holds it)"' <"$T/c.json" &&
		has -F "\"object_size\":$usize," <"$T/c.json" ||
		fail "$name: chunk $addr (live, $usize bytes): $(head -c 900 "$T/c.json")"
	perl -e 'my $j = do { local $/; <STDIN> };
		my ($s) = $j =~ /"start":"0x([0-9a-f]+)"/; my ($i) = $j =~ /"object":(\d+)/;
		exit(hex($s) + $i * $ARGV[0] == hex($ARGV[1]) ? 0 : 1)' "$usize" "$addr" <"$T/c.json" ||
		fail "$name: chunk $addr: span start + object * $usize is not the address"
	local row tid entries pos=0 e
	row=$(awk '$1 == "thread" && $2 != "-" { print; exit }' "$T/lists")
	if [ -n "$row" ]; then
		read -r _ tid _ _ _ _ entries <<<"$row"
		for e in ${entries//,/ }; do
			pos=$((pos + 1))
			addr=$e
		done
		hw "$T/c.json" "$T/err" --json "$dir/core" chunk "$addr"
		expect_rc 0
		has -F "\"holder\":\"a thread cache's list\",\"tcache_thread\":$tid," <"$T/c.json" &&
			has -F "\"tcache_pos\":$pos,\"tcache_count\":$pos}" <"$T/c.json" ||
			fail "$name: chunk $addr (entry $pos of thread $tid's list): $(head -c 900 "$T/c.json")"
	fi
	# mp: the page and the size map; arena 0: the page heap.
	hw "$T/mp.json" "$T/err" --json "$dir/core" mp
	expect_rc 0
	has -F "\"page\":$(awk '$1 == "config" && $2 == "page" { print $3 }' "$truth")," <"$T/mp.json" ||
		fail "$name: mp: not the page size $(awk '$1 == "config" && $2 == "page" { print $3 }' "$truth")"
	has -F "\"thread_caches\":$(awk '$1 == "stat" && $2 == "thread_heaps" { print $3 }' "$truth")}" <"$T/mp.json" ||
		fail "$name: mp: thread caches are not the stats' thread_heaps"
	perl -ne 'print "$1 $2\n" while /\{"class":(\d+),"size":(\d+),/g' "$T/mp.json" >"$T/classes"
	# (The stats name the classes that hold free objects.)
	awk '$1 == "freeclass" { print $2, $3 }' "$truth" >"$T/want"
	[ -s "$T/want" ] && [ -z "$(comm -13 <(sort "$T/classes") <(sort "$T/want"))" ] ||
		fail "$name: classes of the stats that mp's size map lacks: $(comm -13 <(sort "$T/classes") <(sort "$T/want") | head -4)"
	hw "$T/a.json" "$T/err" --json "$dir/core" arena 0
	expect_rc 0
	local k v
	for k in system_bytes:generic.heap_size free_bytes:tcmalloc.pageheap_free_bytes \
		unmapped_bytes:tcmalloc.pageheap_unmapped_bytes; do
		v=$(awk -v p="${k#*:}" '$1 == "prop" && $2 == p { print $3 }' "$truth")
		has -F "\"${k%%:*}\":$v," <"$T/a.json" || fail "$name: arena 0: ${k%%:*} is not ${k#*:} $v: $(cat "$T/a.json")"
	done
	usage_error "one page heap" "$dir/core" arena 1
	say "$name: mp's page, size map and thread caches, arena 0's page heap as tcmalloc's stats"
	say "$name: $(wc -l <"$T/lists") lists, per class tcmalloc's own free counts; $(awk '$1 == "cache"' "$T/tc" | wc -l) thread caches as thread_cache_free_bytes; chunk fields"
}

for c in basic1 threads8; do
	dir=$(variant_core tcmalloc-minimal-amd64 "$c")
	views "tcmalloc $c" "$dir"
done
tid=$(awk '$1 == "cache" && $2 != "null" { print $2; exit }' "$T/tc")
hw "$T/one.json" "$T/err" --json "$dir/core" tcache "$tid"
expect_rc 0
[ "$(perl -ne 'print "$1\n" while /\{"thread":(\d+),/g' "$T/one.json")" = "$tid" ] ||
	fail "threads8: tcache $tid shows other threads too"
usage_error "bins: unknown kind" "$dir/core" bins fast --list
