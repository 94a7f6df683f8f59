#!/bin/bash
# `chunk ADDR` against the corpus programs' own truth.  A lookup walks
# only the heap that holds ADDR and only the free lists its three chunks
# could be on (the rest of the lists is never read), so it must still
# classify exactly: for a sample of the truth's blocks (every tcache,
# fastbin, unsorted, small and large one, and a share of those in use),
# asked by their address and by an address inside them, the block shown
# has the truth's address, usable size, state and list, and so have its
# neighbours whenever the truth knows them.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk

# field OBJ KEY: a member of a flat JSON object, quotes dropped.
field() {
	sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$1"
}

# check_row CASE QUERY NAME OBJ: OBJ (the "chunk", "prev" or "next" row)
# agrees with the truth's block at its address, if the truth has one.
check_row() {
	local c=$1 q=$2 name=$3 obj=$4 addr t
	addr=$(field "$obj" addr)
	[ -n "$addr" ] || return 0
	t=${truth[$((addr))]:-}
	[ -n "$t" ] || return 0
	local size where state want_state
	read -r size where <<<"$t"
	state=$(field "$obj" state)
	case $where in heap | mmapped) want_state=used ;; *) want_state=free ;; esac
	[ "$(field "$obj" size)" = "$size" ] ||
		fail "$c: chunk $q: $name $addr has size $(field "$obj" size), truth $size"
	[ "$(field "$obj" where)" = "$where" ] ||
		fail "$c: chunk $q: $name $addr is in $(field "$obj" where), truth $where"
	[ "$state" = "$want_state" ] ||
		fail "$c: chunk $q: $name $addr is $state, truth $want_state"
	checked=$((checked + 1))
}

check_case() {
	local c=${1//\//-} dir=$2
	local -A truth=()
	local addr usable where n=0 checked=0 q out hit
	while read -r addr usable where; do
		truth[$((addr))]="$usable $where"
	done < <(awk '$1 == "alloc" && $5 != "merged" { print $2, $4, $5 }' "$dir/truth.txt")
	# Up to 8 blocks of each list (tcache, fastbin, unsorted, small,
	# large) and state, spread over the truth.
	while read -r addr usable where; do
		n=$((n + 1))
		# The last 8 usable bytes are the next chunk's prev_size: the
		# last byte of this chunk's own is 9 before the end.
		for q in "$addr" "$(printf '0x%x' $((addr + usable - 9)))"; do
			hw "$T/$c.out" "$T/$c.err" --json "$dir/core" chunk "$q"
			expect_rc 0
			out=$(cat "$T/$c.out")
			hit=$(grep -o '"chunk":{[^}]*}' <<<"$out" | sed -n 1,1p)
			[ "$(field "$hit" addr)" = "$addr" ] ||
				fail "$c: chunk $q: found $(field "$hit" addr), truth $addr ($where)"
			check_row "$c" "$q" chunk "$hit"
			check_row "$c" "$q" prev "$(grep -o '"prev":{[^}]*}' <<<"$out" || true)"
			check_row "$c" "$q" next "$(grep -o '"next":{[^}]*}' <<<"$out" || true)"
		done
	done < <(awk '$1 == "alloc" && $5 != "merged" && $4 > 0 { n[$5]++; a[$5, n[$5]] = $2 " " $4 " " $5 }
		      END { for (w in n) for (i = 1; i <= 8 && i <= n[w]; i++)
				print a[w, int((i - 1) * n[w] / 8) + 1] }' \
		 "$dir/truth.txt")
	[ "$n" -gt 0 ] || fail "$c: no blocks in the truth"
	say "$c: $n blocks looked up twice each, $checked rows agree with the truth"
}

for c in bins1 threads8; do
	check_case "$c" "$(corpus_core "$c")"
done
check_case glibc-2.31-amd64/threads8 "$(variant_core glibc-2.31-amd64 threads8)"
