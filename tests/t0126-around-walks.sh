#!/bin/bash
# `chunks --around ADDR N` and `view ADDR COUNT` read only the heap (or
# extents, or spans) around ADDR when they can, and the walk of
# everything otherwise: either way their blocks are the ones `chunks`
# lists there, row for row (address, size, state, place, arena, chunk),
# in its order.  Checked where the two differ most: the first and last
# blocks, each heap's first and last (ptmalloc: where the walk of one
# heap ends and the next begins, and where the neighbourhood walk must
# fall back), free chunks whose lists only a walk of everything would
# have classified, and the middle; on glibc (bins1: one heap; threads8:
# thread arenas with heaps of their own), jemalloc 5.3 and tcmalloc.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd perl

# picks ALL: the row numbers to try: 1-3, the last three, each row that
# does not start where the one before it ends (a new heap or extent run)
# and the row before it, every free row up to 40 of them, the middle.
picks() {
	perl -ne 'BEGIN { $n = 0 }
		next unless /^\{"addr":"0x([0-9a-f]+)","size":(\d+),"state":"(\w+)"/;
		$n++; my ($c, $sz, $st) = (hex($1), $2, $3);
		($c, $sz) = (hex($1), $2) if /"chunk":"0x([0-9a-f]+)","chunk_size":(\d+)/;
		if ($n > 1 && $c != $end) { $p{$n} = 1; $p{$n - 1} = 1 }
		$end = $c + $sz;
		if ($st eq "free" && $free++ < 40) { $p{$n} = 1 }
		END { $p{$_} = 1 for 1, 2, 3, $n - 2, $n - 1, $n, int($n / 2);
			print join("\n", grep { $_ >= 1 && $_ <= $n } sort { $a <=> $b } keys %p), "\n" }' "$1"
}

# around NAME CORE: every pick's --around 3 and view 4 against chunks.
around() {
	local name=$1 core=$2 n k addr lo hi tried=0
	hw "$T/all" "$T/err" --json "$core" chunks
	expect_rc 0
	n=$(grep -c '^{"addr"' "$T/all")
	[ "$n" -gt 10 ] || fail "$name: only $n blocks"
	for k in $(picks "$T/all"); do
		addr=$(sed -n "${k}s/^{\"addr\":\"\(0x[0-9a-f]*\)\".*/\1/p" "$T/all")
		lo=$((k > 3 ? k - 3 : 1))
		hi=$((k + 3 < n ? k + 3 : n))
		hw "$T/near" "$T/err" --json "$core" chunks --around "$addr" 3
		expect_rc 0
		sed -n "${lo},${hi}p" "$T/all" >"$T/want"
		cmp -s "$T/near" "$T/want" ||
			fail "$name: chunks --around $addr 3 (row $k of $n) is not rows $lo-$hi of chunks: $(diff "$T/want" "$T/near" | head -4)"
		hi=$((k + 3 < n ? k + 3 : n))
		hw "$T/view" "$T/err" --json "$core" view "$addr" 4 --bytes 16
		expect_rc 0
		perl -pe 's/\},\{/}\n{/g; s/^\{"blocks":\[//; s/\]\}$//; s/,"from":"[^"]*","bytes":(?:"[^"]*"|null)\}/}/g' "$T/view" >"$T/vrows"
		sed -n "${k},${hi}p" "$T/all" >"$T/want"
		cmp -s "$T/vrows" "$T/want" ||
			fail "$name: view $addr 4 (row $k of $n) is not rows $k-$hi of chunks: $(diff "$T/want" "$T/vrows" | head -4)"
		tried=$((tried + 1))
	done
	say "$name: chunks --around and view at $tried places of $n blocks are the rows chunks lists there"
}

dir=$(corpus_core bins1)
around "glibc bins1" "$dir/core"
dir=$(corpus_core threads8)
around "glibc threads8" "$dir/core"
dir=$(variant_core jemalloc-5.3.0-amd64 basic1)
around "jemalloc 5.3 basic1" "$dir/core"
dir=$(variant_core tcmalloc-minimal-amd64 basic1)
around "tcmalloc basic1" "$dir/core"
