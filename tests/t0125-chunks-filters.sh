#!/bin/bash
# `chunks` narrowed by its filters (--used/--free, --where, --arena,
# --min-size, --max-size), against the programs' own truth (bins1: every
# kind of free list in one arena; threads8: nine arenas): for each
# filter, every block the truth puts there is listed (its address, its
# usable size), and every row listed meets the filter.  The combination
# of all of them too.  --thread TID: the blocks of its arena (a thread
# that never called malloc: exit 2).  --around ADDR N: the block holding ADDR and N on
# each side, in the list's order (with --used: used ones).  glibc's tcache structs (--where tcache-struct): one
# per thread that called malloc, in use, 0x290 bytes on 2.36.  Bad
# filters are one usage line, exit 2: a place
# no block can be in, a size that is none, --min-size past --max-size,
# --used with --free.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk

# rows FILE: the chunks --json rows of FILE as "addr size state where
# arena" lines.
rows() {
	sed -n 's/^{"addr":"\(0x[0-9a-f]*\)","size":\([0-9]*\),"state":"\([a-z]*\)","where":"\([a-z-]*\)","arena":\([0-9]*\),.*/\1 \2 \3 \4 \5/p' "$1"
}

# check CORE TRUTH NAME TRUTH-CONDITION ROW-CONDITION FILTER...: chunks
# FILTER lists each truth block meeting TRUTH-CONDITION (on $2 usable,
# $3 where, $4 arena: truth_blocks' fields shifted by one), and each row
# meets ROW-CONDITION (on $2 size, $3 state, $4 where, $5 arena).
check() {
	local core=$1 truth=$2 name=$3 tcond=$4 rcond=$5 missing bad n
	shift 5
	hw "$T/out" "$T/err" --json "$core" chunks "$@"
	expect_rc 0
	rows "$T/out" >"$T/rows"
	awk '$1 == "alloc" && $5 != "merged" { print $2, $4, $5, $6 }' "$truth" |
		awk "$tcond { print \$1 }" | sort >"$T/want"
	awk '{ print $1 }' "$T/rows" | sort >"$T/got"
	missing=$(comm -23 "$T/want" "$T/got" | sed -n 1,3p)
	[ -z "$missing" ] ||
		fail "$name: chunks $* does not list the truth's $missing"
	bad=$(awk "!($rcond)" "$T/rows" | sed -n 1,3p)
	[ -z "$bad" ] || fail "$name: chunks $* lists rows it should not: $bad"
	n=$(wc -l <"$T/rows")
	[ "$n" -gt 0 ] || fail "$name: chunks $* lists nothing"
	say "$name: chunks $*: $n rows, the truth's $(wc -l <"$T/want") among them"
}

dir=$(corpus_core bins1)
core=$dir/core truth=$dir/truth.txt
check "$core" "$truth" bins1 '$3 == "tcache"' '$4 == "tcache" && $3 == "free"' \
	--where tcache
check "$core" "$truth" bins1 '$3 == "tcache" || $3 == "fastbin"' \
	'$4 == "tcache" || $4 == "fastbin"' --where tcache,fastbin
check "$core" "$truth" bins1 '$3 == "smallbin" || $3 == "largebin" || $3 == "unsorted"' \
	'($4 == "smallbin" || $4 == "largebin" || $4 == "unsorted") && $3 == "free"' \
	--free --where=smallbin,largebin,unsorted
check "$core" "$truth" bins1 '$3 == "heap" || $3 == "mmapped"' '$3 == "used"' --used
check "$core" "$truth" bins1 '$2 >= 100 && $2 <= 4008' '$2 >= 100 && $2 <= 4008' \
	--min-size 100 --max-size 0xfa8
check "$core" "$truth" bins1 '$2 >= 1048576' '$2 >= 1048576' --min-size=1M
check "$core" "$truth" bins1 '$3 == "tcache" && $2 <= 40' \
	'$3 == "free" && $4 == "tcache" && $2 <= 40 && $5 == 0' \
	--free --where tcache --max-size 40 --arena 0

# threads8: the truth names each block's arena by its own numbering (the
# thread that made it); heapwalk numbers arenas as glibc lists them.  So
# each truth arena is given the number heapwalk shows for its blocks
# (one number for all of them, or the test fails), and --arena N must list
# every block of the truth arena numbered N.  (A chunk mmapped on its own
# belongs to no arena's heap: heapwalk shows arena 0, the truth the
# thread that made it.)
dir=$(corpus_core threads8)
core=$dir/core truth=$dir/truth.txt
hw "$T/all" "$T/err" --json "$core" chunks
expect_rc 0
rows "$T/all" >"$T/all.rows"
awk 'NR == FNR { arena[$1] = $5; next }
	$1 == "alloc" && $5 != "merged" && $5 != "mmapped" && ($2 in arena) {
		n = arena[$2]
		if (($6 in num) && num[$6] != n) { print "split", $6; exit }
		num[$6] = n
	}
	END { for (t in num) print t, num[t] }' "$T/all.rows" "$truth" >"$T/arenas"
! grep -q '^split' "$T/arenas" ||
	fail "threads8: the blocks of one truth arena are in several of heapwalk's: $(grep '^split' "$T/arenas")"
[ "$(wc -l <"$T/arenas")" = 9 ] || fail "threads8: expected 9 arenas, the truth maps to $(wc -l <"$T/arenas")"
# (Which thread gets which number in the truth varies from run to run:
# the truth arenas are taken from the mapping, not by number.)
keys=$(awk '{ print $1 }' "$T/arenas" | sort -n)
for t in $(sed -n '1p;4p;$p' <<<"$keys"); do
	a=$(awk -v t="$t" '$1 == t { print $2 }' "$T/arenas")
	check "$core" "$truth" threads8 "\$4 == $t && \$3 != \"mmapped\"" "\$5 == $a" --arena "$a"
done
# --thread TID: the blocks of the arena the thread allocates from.
t=$(sed -n 5p <<<"$keys")
tid=$(awk -v t="$t" '$1 == "thread" && $2 == t { print $3 }' "$truth")
a=$(awk -v t="$t" '$1 == t { print $2 }' "$T/arenas")
check "$core" "$truth" threads8 "\$4 == $t && \$3 != \"mmapped\"" "\$5 == $a" --thread "$tid"
none=$(awk '$1 == "thread" && $4 == "none" { print $3; exit }' "$truth")
if [ -n "$none" ]; then
	hw "$T/out" "$T/err" "$core" chunks --thread "$none"
	expect_rc 2
	has -F "never called malloc" <"$T/err" || fail "chunks --thread $none (no malloc): $(cat "$T/err")"
fi
t=$(sed -n 6p <<<"$keys")
a=$(awk -v t="$t" '$1 == t { print $2 }' "$T/arenas")
check "$core" "$truth" threads8 "\$4 == $t && \$3 == \"fastbin\"" \
	"\$5 == $a && \$4 == \"fastbin\" && \$3 == \"free\"" --arena="$a" --where fastbin --free

# glibc's own tcache_perthread_structs: one per thread that made one (the
# truth's threads with an arena: each called malloc), in use, of the
# struct's chunk size (2.36: 64 16-bit counts and 64 pointers, 0x290).
for c in bins1:1 threads8:; do
	name=${c%:*}
	dir=$(corpus_core "$name")
	want=$(awk '$1 == "thread" && $4 != "none"' "$dir/truth.txt" | wc -l)
	hw "$T/out" "$T/err" --json "$dir/core" chunks --where tcache-struct
	expect_rc 0
	rows "$T/out" >"$T/rows"
	[ "$(wc -l <"$T/rows")" = "$want" ] ||
		fail "$name: $(wc -l <"$T/rows") tcache structs, the truth has $want threads that called malloc"
	[ -z "$(awk '$3 != "used" || $4 != "tcache-struct"' "$T/rows")" ] ||
		fail "$name: a tcache struct not in use: $(cat "$T/rows")"
	[ -z "$(grep -v '"chunk_size":656}' "$T/out")" ] ||
		fail "$name: a tcache struct of another size than 0x290: $(head -c 300 "$T/out")"
	say "$name: $want tcache structs, in use, 0x290 bytes each"
done

# --around ADDR N: the block holding ADDR (a truth block, or an address
# inside one) and the N before and after it, in the order the whole list
# has them; with --used, the N used ones on each side.
dir=$(corpus_core bins1)
hw "$T/all" "$T/err" --json "$dir/core" chunks
expect_rc 0
rows "$T/all" | awk '{ print $1, $3 }' >"$T/all.rows"
x=$(awk '$1 == "alloc" && $5 == "fastbin" { print $2; exit }' "$dir/truth.txt")
inside=$(printf '0x%x' $((x + 5)))
hw "$T/out" "$T/err" --json "$dir/core" chunks --around "$inside" 2
expect_rc 0
want=$(awk -v x="$x" '{ a[NR] = $1 } $1 == x { h = NR } END { for (i = h - 2; i <= h + 2; i++) print a[i] }' "$T/all.rows")
got=$(rows "$T/out" | awk '{ print $1 }')
[ "$got" = "$want" ] || fail "bins1: chunks --around $inside 2: $(echo $got), the list has $(echo $want)"
hw "$T/out" "$T/err" --json "$dir/core" chunks --around "$x" 3 --used
expect_rc 0
want=$(awk -v x="$x" '$1 == x { h = NR } { a[NR] = $1; s[NR] = $2 }
	END { n = 0; for (i = h - 1; i >= 1 && n < 3; i--) if (s[i] == "used") b[++n] = a[i]
		for (i = n; i >= 1; i--) print b[i]; print x
		n = 0; for (i = h + 1; i <= NR && n < 3; i++) if (s[i] == "used") { print a[i]; n++ } }' "$T/all.rows")
got=$(rows "$T/out" | awk '{ print $1 }')
[ "$got" = "$want" ] || fail "bins1: chunks --around $x 3 --used: $(echo $got), expected $(echo $want)"
hw "$T/out" "$T/err" "$dir/core" chunks --around 0x10
expect_rc 0
has -F "(0x10 is in no block)" <"$T/out" || fail "chunks --around 0x10: $(cat "$T/out")"
say "bins1: chunks --around an address inside a block: it and its neighbours in order; with --used, used ones"

# Bad filters: one line, exit 2.
bad_filter() {
	local words=$1
	shift
	usage_error "$words" "$core" chunks "$@"
}
bad_filter "no place a block can be in" --where tcache,nowhere
bad_filter "not a size" --min-size 12Q
bad_filter "not a size" --max-size -5
bad_filter "is more than --max-size" --min-size 100 --max-size 50
bad_filter "not an arena's number" --arena x
bad_filter "exclude each other" --used --free
bad_filter "unknown argument" --wher tcache
bad_filter "not an address" --around 12zz
bad_filter "blocks on each side" --around 0x1000 0
say "bad filters: one usage line each, exit 2"
