#!/bin/bash
# Damage to jemalloc's thread cache, in copies of the jemalloc 5.3.0 basic1
# core (Debian's libjemalloc2, amd64), located from the program's own
# truth and the core's raw bytes:
#   j1  a cache-bin stack slot holding a cached region = a pointer to no
#       region: a finding at that slot; the other cached region of the bin
#       is still reported in the tcache; the region the slot held, which
#       now reads as in use, is marked maybe free (so are regions of its
#       size in use, none of another size): leaks never calls it lost
#   j2  the same slot = the other cached region of its bin (the region is
#       now cached twice: jemalloc's double free): a finding at that region
#   j3  no damage, but a stale copy of the thread cache's bins on the main
#       thread's stack, below its sp (as redis-server's crash report leaves
#       one in its cores): one thread cache, no finding (a note names the
#       copy), every block as in the core without it
# Two regions of one size that the truth puts in a thread cache are found
# in the core as two neighbouring 8-byte slots holding their addresses
# (a bin's stack is an array of pointers).  Every command exits 0 or 1,
# nothing crashes or hangs.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
need_heapwalk
need_cmd timeout
corepatch=$(tool corepatch)
coreloads=$(tool coreloads)
dir=$(jemalloc_truth jemalloc-5.3.0-amd64 basic1)
cp "$dir/core" "$T/orig.core"

hex() { printf '0x%x' "$1"; }

# slots VALUE: the addresses of the 8-byte words of anonymous writable
# memory that hold VALUE.
"$coreloads" "$T/orig.core" >"$T/loads" || fail "coreloads cannot read basic1's core"
slots() {
	local va fsz flags name
	while read -r va _ _ fsz flags name; do
		[ "$flags" = rw- ] && [ "$name" = - ] && ((fsz > 0)) || continue
		"$corepatch" -s "$T/orig.core" "$va" $((va + fsz)) "$1"
	done <"$T/loads"
}

# Two cached regions of one usable size, in neighbouring slots.
r1='' r2='' s1=''
while read -r usable; do
	mapfile -t regs < <(awk -v u="$usable" '$1 == "alloc" && $5 == "tcache" &&
		$4 == u { print $2 }' "$dir/truth.txt")
	((${#regs[@]} >= 2)) || continue
	for a in "${regs[@]}"; do
		for sa in $(slots "$a"); do
			for b in "${regs[@]}"; do
				[ "$a" = "$b" ] && continue
				for sb in $(slots "$b"); do
					if ((sb == sa + 8 || sb == sa - 8)); then
						r1=$a r2=$b s1=$sa
						break 4
					fi
				done
			done
		done
	done
done < <(awk '$1 == "alloc" && $5 == "tcache" { print $4 }' "$dir/truth.txt" | sort -n | uniq)
[ -n "$s1" ] || fail "no two cached regions of one size in neighbouring slots of basic1's core"
say "cached $r1 at slot $(hex "$s1"), $r2 next to it"

# run CASE CORE: every command (text, or --json for the ones whose JSON
# is read below) exits 0 or 1 within 60 s; check's findings in
# $T/CASE.findings ("addr problem").
run() {
	local cmd
	for cmd in summary bins sizes arenas; do
		hw "$T/$1.out" "$T/$1.err" "$2" $cmd
		expect_rc 0 1
	done
	hw "$T/$1.check" "$T/$1.check.err" --json "$2" check
	expect_rc 1
	grep -o '{"addr":"0x[0-9a-fA-F]*","problem":"\([^"\\]\|\\.\)*"' "$T/$1.check" |
		sed 's/^{"addr":"\(0x[0-9a-fA-F]*\)","problem":"\(.*\)"$/\1 \2/' |
		sed 's/^0x0*\([0-9a-f]\)/0x\1/' >"$T/$1.findings" || true
	hw "$T/$1.chunks" "$T/$1.chunks.err" --json "$2" chunks
	expect_rc 0 1
}

# where_of CASE ADDR: the "where" heapwalk gives the block at ADDR.
where_of() {
	grep "\"addr\":\"0x0*${2#0x}\"" "$T/$1.chunks" |
		sed -n 's/.*"where":"\([a-z_]*\)".*/\1/p' | sed -n 1,1p
}

cp "$T/orig.core" "$T/j1.core"
"$corepatch" "$T/j1.core" "$s1" 4041414141414141 >/dev/null || fail "j1: patch refused"
run j1 "$T/j1.core"
grep -q "^$(hex "$s1") .*is not a region" "$T/j1.findings" ||
	fail "j1: no finding at the slot $(hex "$s1"): $(head -n 3 "$T/j1.findings")"
[ "$(where_of j1 "$r2")" = tcache ] ||
	fail "j1: the other cached region $r2 is not reported in the tcache: $(where_of j1 "$r2")"
# The region the slot held (r1) reads as in use now (jemalloc writes
# nothing into a cached region that would tell): it and only regions of
# its size are marked maybe free, which leaks never calls lost.
grep "\"addr\":\"0x0*${r1#0x}\"" "$T/j1.chunks" | has '"state":"used".*"maybe_free":true' ||
	fail "j1: the lost cached region $r1 is not marked maybe free: $(grep "\"addr\":\"0x0*${r1#0x}\"" "$T/j1.chunks")"
usize=$(awk -v a="$r1" '$1 == "alloc" && $2 == a { print $4 }' "$dir/truth.txt")
other=$(grep '"maybe_free":true' "$T/j1.chunks" | grep -vc "\"size\":$usize,") || true
[ "$other" = 0 ] || fail "j1: $other regions of other sizes than $usize marked maybe free"
say "j1: $(grep "^$(hex "$s1") " "$T/j1.findings"); $r1 and $(grep -c '"maybe_free":true' "$T/j1.chunks") region(s) of its size marked maybe free"

cp "$T/orig.core" "$T/j2.core"
le=$(printf '%016x' "$r2" | sed 's/\(..\)/\1 /g' | awk '{ for (i = NF; i > 0; i--) printf "%s", $i }')
"$corepatch" "$T/j2.core" "$s1" "$le" >/dev/null || fail "j2: patch refused"
run j2 "$T/j2.core"
grep -q "^$r2 .*cached twice" "$T/j2.findings" ||
	fail "j2: no double-free finding at $r2: $(head -n 3 "$T/j2.findings")"
[ "$(where_of j2 "$r2")" = tcache ] ||
	fail "j2: $r2 is not reported in the tcache: $(where_of j2 "$r2")"
say "j2: $(grep "^$r2 " "$T/j2.findings" | sed -n 1,1p)"

# j3: the tcache's bins (where `bins --json` says it is) copied 64 KiB
# below the crashing thread's sp.
hw "$T/orig.bins" "$T/orig.bins.err" --json "$T/orig.core" bins
expect_rc 0
tcache=$(grep -o '"tcaches":\[{"addr":"0x[0-9a-f]*","thread":[0-9]*,"bins":[0-9]*' "$T/orig.bins") ||
	fail "j3: no tcache in basic1's bins: $(head -c 300 "$T/orig.bins")"
tcaddr=$(sed 's/.*"addr":"\(0x[0-9a-f]*\)".*/\1/' <<<"$tcache")
nbins=${tcache##*:}
sp=$(eu-readelf --notes "$T/orig.core" | sed -n 's/.*rsp: *\(0x[0-9a-f]*\).*/\1/p' | sed -n 1,1p)
[ -n "$sp" ] || fail "j3: no rsp in the core's notes"
copy_at=$(((sp - 65536) & ~63))
bytes=$("$corepatch" -r "$T/orig.core" "$tcaddr" $((nbins * 3)) |
	while read -r w; do printf '%016x' "$w" | sed 's/\(..\)/\1 /g' |
		awk '{ for (i = NF; i > 0; i--) printf "%s", $i }'; done)
[ ${#bytes} = $((nbins * 48)) ] || fail "j3: could not read the tcache's $nbins bins at $tcaddr"
cp "$T/orig.core" "$T/j3.core"
"$corepatch" "$T/j3.core" "$copy_at" "$bytes" >/dev/null || fail "j3: patch at $(hex "$copy_at") refused"
hw "$T/j3.check" "$T/j3.check.err" --json "$T/j3.core" check
expect_rc 0
has "\"addr\":\"$(hex "$copy_at")\",\"problem\":\"jemalloc: a copy of the thread cache at $tcaddr" <"$T/j3.check" ||
	fail "j3: no note of the copy at $(hex "$copy_at"): $(head -c 600 "$T/j3.check")"
hw "$T/j3.bins" "$T/j3.bins.err" --json "$T/j3.core" bins
grep -o '"tcaches":\[[^]]*\]' "$T/j3.bins" >"$T/j3.tc"
grep -o '"tcaches":\[[^]]*\]' "$T/orig.bins" >"$T/orig.tc"
cmp -s "$T/j3.tc" "$T/orig.tc" || fail "j3: other thread caches than without the copy: $(cat "$T/j3.tc")"
# Every block as the program recorded it (jetruthcmp), the copy or not.
for cmd in chunks summary sizes; do
	hw "$T/j3.$cmd" "$T/j3.$cmd.err" --json "$T/j3.core" $cmd
	expect_rc 0
done
"$(tool jetruthcmp)" "$dir/truth.txt" "$T/j3.chunks" "$T/j3.summary" \
	"$T/j3.sizes" "$T/j3.bins" >"$T/j3.cmp" 2>&1 ||
	fail "j3: the blocks are not the program's: $(tail -n 5 "$T/j3.cmp")"
say "j3: the copy at $(hex "$copy_at") noted, not counted"
