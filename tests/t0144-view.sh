#!/bin/bash
# `view ADDR [COUNT] [--bytes N]` on bins1: the COUNT blocks from the one
# holding ADDR are the ones `chunks` lists there, in its order; each
# block's bytes (JSON "bytes", from its chunk header: "from") are what the
# core file holds there (od at the offset tests/tools/coreloads gives),
# as many as the chunk has up to --bytes; the text shows each row over its
# dump lines, each block in a colour of its own with --color=always and
# in none without; COUNT 0xADDR (gdb's order) is ADDR COUNT; an address
# in no block says so; bad words exit 2.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd od perl
dir=$(corpus_core bins1)
core=$dir/core


hw "$T/all" "$T/err" --json "$core" chunks
expect_rc 0
sed -n 's/^{"addr":"\(0x[0-9a-f]*\)".*/\1/p' "$T/all" >"$T/order"
x=$(awk '$1 == "alloc" && $5 == "smallbin" { print $2; exit }' "$dir/truth.txt")
for cap in 256 16; do
	hw "$T/v" "$T/err" --json "$core" view "$(printf '0x%x' $((x + 3)))" 4 --bytes "$cap"
	expect_rc 0
	perl -ne 'while (/\{"addr":"(0x[0-9a-f]+)".*?"chunk_size":(\d+),"from":"(0x[0-9a-f]+)","bytes":"([0-9a-f]*)"\}/g) { print "$1 $2 $3 $4\n" }' "$T/v" >"$T/rows"
	want=$(awk -v x="$x" '$1 == x { h = NR } { a[NR] = $1 } END { for (i = h; i < h + 4; i++) print a[i] }' "$T/order")
	[ "$(awk '{ print $1 }' "$T/rows")" = "$want" ] ||
		fail "view $x 4: blocks $(awk '{ print $1 }' "$T/rows" | tr '\n' ' '), chunks has $(echo $want)"
	while read -r a size from bytes; do
		n=$((size < cap ? size : cap))
		[ "$from" = "$(printf '0x%x' $((a - 16)))" ] || fail "view: block $a's bytes from $from, not its header"
		[ "$bytes" = "$(core_bytes "$core" "$from" "$n")" ] || fail "view: block $a's $n bytes differ from the core file's"
	done <"$T/rows"
done
hw "$T/v.txt" "$T/err" "$core" view "$x" 2
expect_rc 0
has "^  $(printf '0x%016x' $((x - 16)))  " <"$T/v.txt" || fail "view: the text has no dump line at $x's header: $(sed -n 1,6p "$T/v.txt")"
# Colours (--color=always, as on a terminal): each block's row and bytes
# in a colour of its own, the next block's another, reset after each;
# none without.
hw "$T/c.txt" "$T/err" --color=always "$core" view "$x" 3
expect_rc 0
esc=$(printf '\033')
# (A block's reset is where the next line starts.)
colours=$(sed -n "s/^\(${esc}\[0m\)*${esc}\[\(3[0-9]\)m0x.*/\2/p" "$T/c.txt" | tr '\n' ' ')
[ "$(wc -w <<<"$colours")" = 3 ] || fail "view --color=always: $(wc -w <<<"$colours") coloured rows of 3: $(cat -v "$T/c.txt" | sed -n 1,4p)"
[ "$(tr ' ' '\n' <<<"$colours" | sed '/^$/d' | uniq | wc -l)" = 3 ] || fail "view --color=always: two blocks in a row share a colour ($colours)"
[ "$(grep -c "${esc}\[0m" "$T/c.txt")" -ge 3 ] || fail "view --color=always: a block's colour is not reset"
! grep -q "$esc" "$T/v.txt" || fail "view without --color has escapes"
# COUNT ADDR, the address written with 0x, is ADDR COUNT.
hw "$T/a.txt" "$T/err" "$core" view "$x" 2
expect_rc 0
hw "$T/b.txt" "$T/err" "$core" view 2 "$x"
expect_rc 0
cmp -s "$T/a.txt" "$T/b.txt" || fail "view 2 $x differs from view $x 2"
hw "$T/v.txt" "$T/err" "$core" view 0x10
expect_rc 0
has -F "(0x10 is in no block)" <"$T/v.txt" || fail "view 0x10: $(cat "$T/v.txt")"
for bad in "" "zz" "$x 0" "$x 4 --bytes 0" "$x 4 5"; do
	# shellcheck disable=SC2086 # the words
	hw "$T/out" "$T/err" "$core" view $bad
	expect_rc 2
	one_error_line "$T/err" "view $bad"
done
say "bins1: view's blocks are chunks' from ADDR, their bytes the core file's from each header, capped by --bytes"
