#!/bin/bash
# `chunk ADDR`'s fields (ptmalloc: alloc/ptmalloc/anatomy.c) against the
# truth of bins1 (every kind of free list, mmapped chunks) on glibc 2.36
# (the host's: safe-linked links, a random tcache_key), 2.31 (Debian
# bullseye: plain links, each entry's key its tcache) and aarch64 2.36
# (a qemu-user core): for every block the truth records,
#  - the size field less its three bits is the chunk's size, IS_MMAPPED
#    set on the mmapped ones only, PREV_INUSE set exactly when the chunk
#    before is in use by its header (in use, or in a tcache or fastbin),
#    or there is none;
#  - a tcache entry's next, decoded, ends the list or is another tcache
#    block of the truth of the same size, and its key is the tcache key;
#    a fastbin entry's fd likewise (to a chunk header); the stored form
#    differs from the decoded one exactly where links are safe-linked;
#  - a small, large or unsorted bin chunk's fd and bk point back;
#  - damaged (2.36, a copy of the core patched with tests/tools/corepatch):
#    a small bin chunk's bk overwritten does not point back, its fd still
#    does; a tcache entry's key overwritten is not the key;
#  - `--bytes 40` gives the block's first 40 bytes (fewer for a smaller
#    block) as the core file holds them (read with od at the offset
#    tests/tools/coreloads gives).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd od

# member NAME: NAME's value in the fields object of $T/one (no quotes).
member() {
	sed -n 's/.*"fields":{\([^}]*\)}.*/\1/p' "$T/one" |
		tr ',' '\n' | sed -n "s/^\"$1\":\"*\([^\"]*\)\"*\$/\1/p"
}
# row KEY MEMBER: MEMBER of the row KEY (chunk, prev) of $T/one.
row() {
	sed -n "s/.*\"$1\":{\([^}]*\)}.*/\1/p" "$T/one" |
		tr ',' '\n' | sed -n "s/^\"$2\":\"*\([^\"]*\)\"*\$/\1/p"
}


check_case() {
	local name=$1 core=$2 truth=$3 safe=$4
	shift 4
	local opts=("$@") addr where n=0 size fieldsz next stored fd prev
	while read -r addr where; do
		hw "$T/one" "$T/err" --json "${opts[@]}" "$core" chunk "$addr"
		expect_rc 0
		size=$(row chunk chunk_size)
		fieldsz=$(member size_field)
		[ -n "$fieldsz" ] || fail "$name $addr: no size field: $(head -c 300 "$T/one")"
		[ $((fieldsz & ~7)) = "$size" ] ||
			fail "$name $addr: size field $fieldsz for a chunk of $size"
		if [ "$where" = mmapped ]; then
			[ "$(member is_mmapped)" = true ] || fail "$name $addr: mmapped, but IS_MMAPPED is clear"
		else
			[ "$(member is_mmapped)" = false ] || fail "$name $addr: IS_MMAPPED set on a heap chunk"
			prev=true
			if grep -q '"prev":{' "$T/one"; then
				case $(row prev state):$(row prev where) in
				used:* | *:tcache | *:fastbin) prev=true ;;
				*) prev=false ;;
				esac
			fi
			[ "$(member prev_inuse)" = "$prev" ] ||
				fail "$name $addr: PREV_INUSE $(member prev_inuse), the chunk before says $prev"
		fi
		case $where in
		tcache)
			next=$(member next)
			[ "$(member next_ok)" = true ] || fail "$name $addr: tcache next $next is not ok"
			[ "$next" = 0x0 ] || grep -q "^alloc $next .* tcache " "$truth" ||
				fail "$name $addr: tcache next $next is no tcache block of the truth"
			[ "$next" = 0x0 ] || [ "$(awk -v a="$next" '$2 == a { print $4 }' "$truth")" = \
				"$(awk -v a="$addr" '$2 == a { print $4 }' "$truth")" ] ||
				fail "$name $addr: tcache next $next is of another size"
			[ "$(member key_ok)" = true ] || fail "$name $addr: key $(member key) is not the tcache key"
			stored=$(member next_stored)
			if [ "$safe" = yes ]; then
				# (a list's end is stored as the address >> 12)
				[ -n "$stored" ] && [ "$stored" != "$next" ] ||
					fail "$name $addr: safe-linked, but no stored form apart ($stored)"
			else
				[ -z "$stored" ] || fail "$name $addr: plain links, yet a stored form $stored"
			fi
			;;
		fastbin)
			fd=$(member fd)
			[ "$(member fd_ok)" = true ] || fail "$name $addr: fastbin fd $fd is not ok"
			[ "$fd" = 0x0 ] || grep -q "^alloc $(printf '0x%x' $((fd + 16))) .* fastbin " "$truth" ||
				fail "$name $addr: fastbin fd $fd is no fastbin chunk of the truth"
			;;
		smallbin | largebin | unsorted)
			[ "$(member fd_ok)" = true ] && [ "$(member bk_ok)" = true ] ||
				fail "$name $addr ($where): fd $(member fd) or bk $(member bk) does not point back"
			;;
		esac
		n=$((n + 1))
	done < <(awk '$1 == "alloc" && $5 != "merged" { print $2, $5 }' "$truth")
	[ $n -gt 50 ] || fail "$name: only $n blocks in the truth"
	# --bytes: what the core file holds there.
	local usable want got
	while read -r addr usable; do
		hw "$T/one" "$T/err" --json "${opts[@]}" "$core" chunk "$addr" --bytes 40
		expect_rc 0
		# (at most the block's usable size)
		want=$(core_bytes "$core" "$addr" $((usable < 40 ? usable : 40))) ||
			fail "$name: $addr is in no PT_LOAD of the core"
		got=$(sed -n 's/.*"bytes":"\([0-9a-f]*\)".*/\1/p' "$T/one")
		[ "$got" = "$want" ] || fail "$name $addr --bytes 40: $got, the core holds $want"
	done < <(awk '$1 == "alloc" && ($5 == "tcache" || $5 == "heap" || $5 == "smallbin") { print $2, $4 }' "$truth" | sed -n '1p;9p;30p;50p')
	say "$name: the fields of $n blocks agree with the truth (links: $( [ "$safe" = yes ] && echo safe-linked || echo plain)); --bytes as the core file"
}

dir=$(corpus_core bins1)
check_case "bins1 2.36" "$dir/core" "$dir/truth.txt" yes

corepatch=$(tool corepatch)
cp "$dir/core" "$T/damaged.core"
small=$(awk '$1 == "alloc" && $5 == "smallbin" { print $2; exit }' "$dir/truth.txt")
tc=$(awk '$1 == "alloc" && $5 == "tcache" { print $2; exit }' "$dir/truth.txt")
"$corepatch" "$T/damaged.core" "$(printf '0x%x' $((small + 8)))" 4041414141414141 >/dev/null
"$corepatch" "$T/damaged.core" "$(printf '0x%x' $((tc + 8)))" 0102030405060708 >/dev/null
hw "$T/one" "$T/err" --json "$T/damaged.core" chunk "$small"
expect_rc 0
[ "$(member bk)" = 0x4141414141414140 ] && [ "$(member bk_ok)" = false ] &&
	[ "$(member fd_ok)" = true ] || fail "damaged bk: $(head -c 600 "$T/one")"
hw "$T/one" "$T/err" "$T/damaged.core" chunk "$small"
expect_rc 0
has -F "does NOT point back" <"$T/one" || fail "damaged bk: the text does not say so: $(cat "$T/one")"
hw "$T/one" "$T/err" --json "$T/damaged.core" chunk "$tc"
expect_rc 0
[ "$(member key)" = 0x807060504030201 ] && [ "$(member key_ok)" = false ] ||
	fail "damaged key: $(head -c 600 "$T/one")"
say "damaged: a small bin chunk's bk does not point back, a tcache key is not the key"
dir=$(variant_core glibc-2.31-amd64 bins1)
check_case "bins1 2.31" "$dir/core" "$dir/truth.txt" no --no-debuginfo
dir=$(variant_core glibc-2.36-arm64 bins1)
check_case "bins1 aarch64 2.36" "$dir/core" "$dir/truth.txt" yes \
	--sysroot "$(readlink -f "$dir/sysroot")"
