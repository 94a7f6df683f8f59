#!/bin/bash
# jemalloc's side of the heap debuggers' views, against the corpus
# programs' own record (corpora/jemalloc/truth.h):
#  - `bins tcache --list`: each tcache bin's stack is exactly the truth's
#    tcache frees of that thread and size class, the last freed first
#    (its `tcfree` lines, in free order), owned by that thread's tid;
#  - `tcache`: per thread the same counts, each head the stack's first;
#    `tcache TID` that thread's alone; a TID with none: one usage line;
#  - `chunk ADDR` fields: for a cached region its tcache, bin, entry and
#    count, its slab's geometry as the truth's binfo says (size index,
#    nregs, slab size), region index * size from the slab's start, its
#    bitmap bit allocated; for a live region and a large one, in use and
#    in no tcache;
#  - `bins small --list`: the slabs listed with free regions add up to
#    each row's free count; each bin's current slab (listed first) holds
#    the region the program allocated last of that class past the
#    tcache (truth slabcur lines), and on 5.3 the others are as many as
#    jemalloc's nonfull_slabs;
#  - `arena N`, for each arena the truth's stats list: its slabs, regions
#    in use and large extents are jemalloc's own curslabs, curregs and
#    curlextents summed over its classes; its threads (and nthreads) are
#    the truth's threads bound to it; an arena that is not: a usage line;
#  - `mp`: page, quantum, nbins, nlextents, the largest small class and
#    narenas as mallctl gave them to the program.
# On jemalloc 5.3 (basic1, threads8) and 5.2 (basic1) amd64, and 5.3
# arm64 (a qemu-user core: no thread pointers, so stacks are compared
# without their owners).
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
need_heapwalk
need_cmd perl

# stacks FILE: "tid size addr,addr,..." per row of bins tcache --list --json.
stacks() {
	perl -ne 'while (/\{"tcache":"0x[0-9a-f]+","thread":(\d+|null),"bin":\d+,"size":(\d+),"count":(\d+),[^\[]*"list":\[([^\]]*)\]/g) {
		my ($t, $s, $n, $l) = ($1, $2, $3, $4);
		my @a = ($l =~ /"addr":"(0x[0-9a-f]+)"/g);
		die "count $n, listed " . scalar(@a) . "\n" if $n != @a;
		print "$t $s " . join(",", @a) . "\n" }' "$1"
}

# want_stacks TRUTH: the same from the truth: per (thread, usize) its
# tcache frees, the last one first.
want_stacks() {
	perl -e 'my (%tid, %us, %st);
		while (<>) {
			my @f = split;
			$tid{$f[1]} = $f[2] if $f[0] eq "thread";
			$us{$f[1]} = $f[3] if $f[0] eq "alloc";
			if ($f[0] eq "tcfree") {
				my $k = "$tid{$f[1]} $us{$f[2]}";
				unshift @{$st{$k}}, $f[2];
			}
		}
		print "$_ " . join(",", @{$st{$_}}) . "\n" for keys %st' "$1"
}

views() {
	local name=$1 dir=$2 owners=$3
	shift 3
	local opt=(--json --no-debuginfo "$@")
	hw "$T/list.json" "$T/err" "${opt[@]}" "$dir/core" bins tcache --list
	expect_rc 0
	stacks "$T/list.json" | sort >"$T/got" || fail "$name: a stack whose count is not its entries"
	want_stacks "$dir/truth.txt" | sort >"$T/want"
	[ -s "$T/want" ] || fail "$name: the truth has no tcfree lines"
	if [ "$owners" = no ]; then
		cut -d' ' -f2- "$T/got" | sort >"$T/got2"
		cut -d' ' -f2- "$T/want" | sort >"$T/want2"
		cmp -s "$T/got2" "$T/want2" || fail "$name: tcache stacks differ from the truth's frees: $(diff "$T/want2" "$T/got2" | head -5)"
	else
		cmp -s "$T/got" "$T/want" || fail "$name: tcache stacks (tid size entries) differ from the truth's frees: $(diff "$T/want" "$T/got" | head -5)"
	fi

	# tcache: per thread and size the count and the head.
	hw "$T/tc.json" "$T/err" "${opt[@]}" "$dir/core" tcache
	expect_rc 0
	perl -ne 'while (/\{"thread":(\d+|null),"addr":"0x[0-9a-f]+"[^\[]*"bins":\[([^\]]*)\]/g) {
		my ($t, $l) = ($1, $2);
		while ($l =~ /"size":(\d+),"count":(\d+),"max":(?:\d+|null),"low_water":-?\d+,"nrequests":\d+,"head":"(0x[0-9a-f]+)"/g) {
			print "$t $1 $2 $3\n" } }' "$T/tc.json" | sort >"$T/tc"
	awk '{ n = split($3, a, ","); print $1, $2, n, a[1] }' "$T/got" | sort >"$T/tcwant"
	cmp -s "$T/tc" "$T/tcwant" || fail "$name: tcache counts and heads differ from bins --list: $(diff "$T/tcwant" "$T/tc" | head -5)"

	# chunk ADDR on the last freed entry of one stack, on a live slab
	# region and on a live large allocation.
	local row tid size addr count
	row=$(awk 'NR == 1' "$T/want")
	read -r tid size addr <<<"$row"
	count=$(awk -F, '{ print NF }' <<<"$addr")
	addr=${addr%%,*}
	hw "$T/c.json" "$T/err" "${opt[@]}" "$dir/core" chunk "$addr"
	expect_rc 0
	local binfo
	binfo=$(awk -v s="$size" '$1 == "binfo" && $3 == s { print $2, $4, $5 }' "$dir/truth.txt")
	local szind nregs slab
	read -r szind nregs slab <<<"$binfo"
	[ -n "$slab" ] || fail "$name: no binfo line for size $size"
	has -F "\"slab\":true,\"state\":\"active\",\"szind\":$szind,\"size_class\":$size," <"$T/c.json" ||
		fail "$name: chunk $addr: e_bits not a slab of szind $szind: $(head -c 600 "$T/c.json")"
	has -F "\"extent_size\":$slab," <"$T/c.json" || fail "$name: chunk $addr: its slab is not $slab bytes"
	has -F "\"nregs\":$nregs," <"$T/c.json" || fail "$name: chunk $addr: not $nregs regions"
	has -E '"bitmap_free":false,"current_slab":(true|false),"tcache_thread":' <"$T/c.json" || fail "$name: chunk $addr: not allocated in the bitmap and cached"
	has -F "\"tcache_pos\":1,\"tcache_count\":$count,\"consistent\":true}" <"$T/c.json" ||
		fail "$name: chunk $addr: not entry 1 of $count: $(head -c 900 "$T/c.json")"
	if [ "$owners" != no ]; then
		has -F "\"tcache_thread\":$tid," <"$T/c.json" || fail "$name: chunk $addr: not in thread $tid's tcache"
	fi
	perl -e 'my $j = do { local $/; <STDIN> };
		my ($base) = $j =~ /"base":"0x([0-9a-f]+)"/;
		my ($r) = $j =~ /"region":(\d+)/;
		exit(hex($base) + $r * $ARGV[0] == hex($ARGV[1]) ? 0 : 1)' "$size" "$addr" <"$T/c.json" ||
		fail "$name: chunk $addr: base + region * $size is not the address"

	addr=$(awk '$1 == "alloc" && $5 == "slab" { print $2; exit }' "$dir/truth.txt")
	hw "$T/c.json" "$T/err" "${opt[@]}" "$dir/core" chunk "$addr"
	expect_rc 0
	has -E '"bitmap_free":false,"current_slab":(true|false),"consistent":true}' <"$T/c.json" ||
		fail "$name: chunk $addr (live slab region): $(head -c 900 "$T/c.json")"
	# The region the program allocated last of a class past the tcache:
	# its slab is the bin's current one.
	addr=$(awk '$1 == "slabcur" && $3 == 3 { print $4 }' "$dir/truth.txt")
	hw "$T/c.json" "$T/err" "${opt[@]}" "$dir/core" chunk "$addr"
	expect_rc 0
	has -F '"bitmap_free":false,"current_slab":true,"consistent":true}' <"$T/c.json" ||
		fail "$name: chunk $addr (truth: in its bin's current slab): $(head -c 900 "$T/c.json")"
	addr=$(awk '$1 == "alloc" && $5 == "large" { print $2; exit }' "$dir/truth.txt")
	size=$(awk -v a="$addr" '$1 == "alloc" && $2 == a { print $4; exit }' "$dir/truth.txt")
	hw "$T/c.json" "$T/err" "${opt[@]}" "$dir/core" chunk "$addr"
	expect_rc 0
	has -F "\"slab\":false,\"state\":\"active\"," <"$T/c.json" &&
		has -F "\"size_class\":$size," <"$T/c.json" &&
		! has -F '"tcache_thread"' <"$T/c.json" ||
		fail "$name: chunk $addr (live large, $size bytes): $(head -c 900 "$T/c.json")"

	# bins small --list: the slabs with free regions hold each row's free.
	hw "$T/small.json" "$T/err" "${opt[@]}" "$dir/core" bins small --list
	expect_rc 0
	perl -ne 'my $bad = 0; my $rows = 0;
		while (/\{"arena":(\d+),"bin":(\d+),[^\[]*"free":(\d+),"util":[0-9.]+,"list":\[([^\]]*)\]/g) {
			my ($a, $b, $free, $l) = ($1, $2, $3, $4);
			my $sum = 0; $sum += $1 while $l =~ /"free":(\d+)/g;
			$rows++;
			if ($sum != $free) { print "arena $a bin $b: free $free, listed $sum\n"; $bad++ }
		}
		print "no rows\n" unless $rows' "$T/small.json" >"$T/bad"
	[ ! -s "$T/bad" ] || fail "$name: bins small --list: $(head -3 "$T/bad")"
	# Each bin's current slab: the truth's last region of each class
	# allocated past the tcache lies in it (slabcur lines); 5.3: the other
	# listed slabs are jemalloc's own count of its heap of non-full slabs
	# (nonfull lines).
	perl -e 'my (%slab, %cur, %want, %nonfull, $bad);
		open(my $t, "<", $ARGV[0]) or die;
		while (<$t>) {
			my @f = split;
			$slab{$f[1]} = $f[4] if $f[0] eq "binfo";
			$want{"$f[1] $f[2]"} = hex($f[3]) if $f[0] eq "slabcur";
			$nonfull{"$f[1] $f[2]"} = $f[3] if $f[0] eq "nonfull";
		}
		my $j = do { local $/; open(my $h, "<", $ARGV[1]) or die; <$h> };
		while ($j =~ /\{"arena":(\d+),"bin":(\d+),[^\[]*"list":\[([^\]]*)\]/g) {
			my ($k, $l) = ("$1 $2", $3);
			my @c = ($l =~ /"addr":"0x([0-9a-f]+)","free":\d+,"current":true/g);
			my $others = () = $l =~ /"current":false/g;
			print "$k: ", scalar(@c), " current slabs\n" if @c > 1;
			print "$k: no current member (slabcur unknown)\n" if $l ne "" && $l !~ /"current"/;
			$cur{$k} = hex($c[0]) if @c;
			print "$k: $others other slabs, nonfull_slabs $nonfull{$k}\n"
				if exists $nonfull{$k} && $nonfull{$k} != $others;
		}
		for my $k (sort keys %want) {
			my (undef, $b) = split / /, $k;
			my $c = $cur{$k};
			printf "%s: the region 0x%x is not in the current slab (%s)\n", $k, $want{$k},
				defined $c ? sprintf("0x%x", $c) : "none"
				unless defined $c && $want{$k} >= $c && $want{$k} < $c + $slab{$b};
		}
		print "no slabcur lines in the truth\n" unless %want;' "$dir/truth.txt" "$T/small.json" >"$T/bad"
	[ ! -s "$T/bad" ] || fail "$name: bins small --list: current slabs: $(head -3 "$T/bad")"
	# arena N: jemalloc's stats per arena.
	awk '$1 == "bin" { s[$2] += $6; r[$2] += $5; a[$2] = 1 }
		$1 == "large" { l[$2] += $5; a[$2] = 1 }
		END { for (k in a) print k, s[k] + 0, r[k] + 0, l[k] + 0 }' "$dir/truth.txt" | sort -n >"$T/astats"
	[ -s "$T/astats" ] || fail "$name: the truth has no bin lines"
	local arena slabs regs large tids
	while read -r arena slabs regs large; do
		hw "$T/a.json" "$T/err" "${opt[@]}" "$dir/core" arena "$arena"
		expect_rc 0
		has -F "\"slabs\":$slabs,\"regions_used\":$regs," <"$T/a.json" &&
			has -F "\"large\":$large," <"$T/a.json" ||
			fail "$name: arena $arena: not curslabs $slabs, curregs $regs, curlextents $large: $(cat "$T/a.json")"
		[ "$owners" = no ] && continue
		tids=$(awk -v a="$arena" '$1 == "thread" && $4 == a { print $3 }' "$dir/truth.txt" | sort -n | paste -sd, -)
		[ "$(perl -ne 'print join(",", sort { $a <=> $b } split /,/, $1) if /"threads":\[([0-9,]*)\]/' "$T/a.json")" = "$tids" ] ||
			fail "$name: arena $arena: threads are not the truth's $tids: $(cat "$T/a.json")"
		has -F "\"nthreads\":$(awk -F, '{ print NF }' <<<"$tids")," <"$T/a.json" ||
			fail "$name: arena $arena: nthreads is not the $tids bound to it"
	done <"$T/astats"
	# mp: the build's parameters as mallctl gives them.
	hw "$T/mp.json" "$T/err" "${opt[@]}" "$dir/core" mp
	expect_rc 0
	local key cfg v
	for key in page:arenas.page quantum:arenas.quantum nbins:arenas.nbins \
		nlextents:arenas.nlextents small_max:small.max narenas:arenas.narenas; do
		cfg=${key#*:}
		v=$(awk -v k="$cfg" '$1 == "config" && $2 == k { print $3 }' "$dir/truth.txt")
		[ -n "$v" ] || fail "$name: no config $cfg in the truth"
		has -F "\"${key%%:*}\":$v," <"$T/mp.json" || fail "$name: mp: ${key%%:*} is not $cfg $v: $(cat "$T/mp.json")"
	done
	hw "$T/a.json" "$T/err" "${opt[@]}" "$dir/core" arena 4095
	expect_rc 2
	one_error_line "$T/err" "arena 4095"
	say "$name: $(wc -l <"$T/astats") arenas' slabs, regions and large extents as jemalloc's stats$([ "$owners" = no ] || echo ", their threads the truth's")"
	say "$name: $(wc -l <"$T/got") tcache stacks in the truth's free order$([ "$owners" = no ] || echo ", each its thread's"); tcache counts and heads; chunk fields; slab lists, current slabs"
}

dir=$(jemalloc_truth jemalloc-5.3.0-amd64 basic1)
views "5.3 basic1" "$dir" yes
tid=$(awk 'NR == 1 { print $1 }' "$T/got")
hw "$T/one.json" "$T/err" --json "$dir/core" tcache "$tid"
expect_rc 0
[ "$(perl -ne 'print "$1\n" while /\{"thread":(\d+),/g' "$T/one.json")" = "$tid" ] ||
	fail "5.3 basic1: tcache $tid shows other threads too"
hw "$T/out" "$T/err" "$dir/core" tcache 1
expect_rc 2
one_error_line "$T/err" "tcache of a thread that has none"
hw "$T/out" "$T/err" "$dir/core" bins --list
expect_rc 0
has -E '^    0x[0-9a-f]+ -> .*end$' <"$T/out" || fail "5.3 basic1: bins --list text shows no stack line"
has -E '^    current 0x[0-9a-f]+ \([0-9]+ free\); 0x[0-9a-f]+ \([0-9]+ free\).*; [0-9]+ full$' <"$T/out" || fail "5.3 basic1: bins --list text shows no slab line with its current slab first"
# view names what holds a block as chunks does (extent, not chunk).
hw "$T/chunks" "$T/err" "$dir/core" chunks
expect_rc 0
addr=$(sed -n '2s/^\(0x[0-9a-f]*\) .*/\1/p' "$T/chunks")
hw "$T/view" "$T/err" "$dir/core" view "$addr" 1
expect_rc 0
[ "$(sed -n 1p "$T/view")" = "$(sed -n 1p "$T/chunks")" ] ||
	fail "5.3 basic1: view's header is not chunks': $(sed -n 1p "$T/view")"
has -F 'extent size' <"$T/view" || fail "5.3 basic1: view does not say extent: $(sed -n 1p "$T/view")"

dir=$(jemalloc_truth jemalloc-5.3.0-amd64 threads8)
views "5.3 threads8" "$dir" yes
[ "$(awk '{ print $1 }' "$T/got" | sort -u | wc -l)" -gt 1 ] || fail "5.3 threads8: the stacks of one thread only"

dir=$(jemalloc_truth jemalloc-5.2.1-amd64 basic1)
views "5.2 basic1" "$dir" yes

dir=$(jemalloc_truth jemalloc-5.3.0-arm64 basic1)
views "5.3 arm64 basic1" "$dir" no --sysroot "$(readlink -f "$dir/sysroot")"
