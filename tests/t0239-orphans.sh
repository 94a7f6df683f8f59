#!/bin/bash
# What the allocator itself could still tell after a write after free
# broke a list at its head: the corpus programs orphans1 (two chunks in a
# tcache bin, the only tcache entries of the process; the head's next
# overwritten: one key word reachable, the other entry's the orphan's)
# and orphans2 (eleven 40-byte chunks freed: up to glibc 2.41 the four
# past the tcache's seven go to a fastbin, whose head's fd is overwritten;
# from 2.43 all eleven are in the tcache, whose head's next is) and
# orphans3 (four chunks in a tcache bin, the only tcache entries; the
# head's next and key word both overwritten: no list reaches a key, the
# three orphans hold it).  Each records the damaged word and the chunks
# no list reaches after it.
# On the host's glibc, 2.41, 2.43, 2.44 (amd64) and 2.36 (aarch64, a
# qemu-user core), with libc's debug info, without it, and bare (no libc
# file at all):
#   - chunks and summary agree with the truth (truthcmp: every chunk's
#     state and list, the orphans free in theirs, and glibc's own
#     mallinfo2, which counted them before the damage);
#   - each orphan is flagged "orphaned" in chunks --json and has a
#     finding in check (exit 1); the damaged link has one too;
#   - leaks lists no orphan (it is free, so neither lost nor reachable).
# The tcache key that proves a tcache orphan is learnt from the one entry
# a list reaches, checked against glibc's own tcache_key (the symbol, or
# without symbols the same value found in libc's data); where no list
# reaches one (orphans3), from the chunks that hold it, checked the same
# way (2.34+) or against the tcache's address (2.29-2.33).  glibc 2.31's
# fastbin links are plain (no safe-linking), the same bytes as a
# program's own list: its fastbin orphans (orphans2) cannot be told from
# chunks in use, so they must keep the state their headers give and be
# marked "maybe_free", with a note each in check, and leaks must not call
# them lost; the rest of the truth still holds, glibc's mallinfo2 with
# their chunks (usable size + 8) moved from its fastbin figures to in use.  Its tcache orphans are still found (the key is
# the tcache's address there).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)
mkdir -p "$T/empty"

# check_case VARIANT CASE
check_case() {
	local variant=$1 case=$2 dir mode core name
	if [ "$variant" = host ]; then
		dir=$(corpus_core "$case")
	else
		dir=$(variant_core "$variant" "$case")
	fi
	local -a orphans
	mapfile -t orphans < <(awk '$1 == "#" && $2 == "orphan" { print $3 }' "$dir/truth.txt")
	local damage
	damage=$(awk '$1 == "#" && $2 == "damage" { print $3 }' "$dir/truth.txt")
	[ -n "$damage" ] || fail "$variant $case: the truth names no damaged word"
	((${#orphans[@]} > 0)) || fail "$variant $case: the truth names no orphan"
	local plain=
	[ "$variant" = glibc-2.31-amd64 ] && [ "$case" = orphans2 ] && plain=1
	for mode in debug nodebug bare; do
		local -a opt=()
		core=$dir/core
		name=$variant.$case.$mode
		case $variant in
		*-arm64) opt=(--sysroot "$(readlink -f "$dir/sysroot")") ;;
		esac
		case $mode in
		debug)
			[ "$variant" = host ] ||
				opt+=(--debug-dir "$(readlink -f "$dir/sysroot")/usr/lib/debug")
			;;
		nodebug) opt+=(--no-debuginfo) ;;
		bare)
			opt=(--no-debuginfo --sysroot "$T/empty")
			if [[ $variant == *-arm64 ]]; then
				opt+=(--exe "$dir/prog")
			else
				core=$T/$name.core
				hide_libc "$dir/core" "$core"
			fi
			;;
		esac
		hw "$T/$name.chunks" "$T/$name.err" --json "${opt[@]}" "$core" chunks
		expect_rc 0
		hw "$T/$name.summary" "$T/$name.err" --json "${opt[@]}" "$core" summary
		expect_rc 0
		local truth=$dir/truth.txt
		if [ -n "$plain" ]; then
			truth=$T/$name.truth
			awk 'NR == FNR { if ($1 == "#" && $2 == "orphan") o[$3] = 1
				    else if ($1 == "alloc" && ($2 in o)) { n++; b += $4 + 8 }
				    next }
			     $1 == "alloc" && ($2 in o) { next }
			     $1 == "mallinfo2" && $2 == "smblks" { $3 -= n }
			     $1 == "mallinfo2" && ($2 == "fsmblks" || $2 == "fordblks") { $3 -= b }
			     $1 == "mallinfo2" && $2 == "uordblks" { $3 += b }
			     { print }' "$dir/truth.txt" "$dir/truth.txt" >"$truth"
		fi
		"$truthcmp" "$truth" "$T/$name.chunks" "$T/$name.summary" ||
			fail "$name: heapwalk disagrees with the truth (core in $dir)"
		hw "$T/$name.check" "$T/$name.err" --json "${opt[@]}" "$core" check
		expect_rc 1
		hw "$T/$name.leaks" "$T/$name.err" --json "${opt[@]}" "$core" leaks --reachable
		expect_rc 0
		local o
		for o in "${orphans[@]}"; do
			if [ -n "$plain" ]; then
				grep -q "\"addr\":\"0x0*${o#0x}\".*\"state\":\"used\".*\"maybe_free\":true" "$T/$name.chunks" ||
					fail "$name: $o is not in use and maybe free in chunks --json: $(grep -m1 "${o#0x}" "$T/$name.chunks")"
				grep -qE "\"addr\":\"0x0*$(printf '%x' $((o - 16)))\",\"problem\":\"maybe an orphaned fastbin entry" "$T/$name.check" ||
					fail "$name: check has no note at $(printf '0x%x' $((o - 16)))"
				! grep -qE "\"addr\":\"0x0*${o#0x}\",\"size\":[0-9]+,\"kind\":\"(definite|indirect|possible)\"" "$T/$name.leaks" ||
					fail "$name: leaks calls the maybe-free $o lost"
				continue
			fi
			grep -q "\"addr\":\"0x0*${o#0x}\".*\"state\":\"free\".*\"orphaned\":true" "$T/$name.chunks" ||
				fail "$name: $o is not a free orphan in chunks --json: $(grep -m1 "${o#0x}" "$T/$name.chunks")"
			grep -qE "\"addr\":\"0x0*$(printf '%x' $((o - 16)))\",\"problem\":\"orphaned (tcache|fastbin) entry" "$T/$name.check" ||
				fail "$name: check has no orphan finding at $(printf '0x%x' $((o - 16)))"
			! grep -q "\"addr\":\"0x0*${o#0x}\"" "$T/$name.leaks" ||
				fail "$name: leaks lists the orphan $o"
		done
		grep -qE "\"addr\":\"0x0*${damage#0x}\",\"problem\"" "$T/$name.check" ||
			grep -qE "\"addr\":\"0x0*$(printf '%x' $((damage - 16)))\",\"problem\"" "$T/$name.check" ||
			fail "$name: check has no finding at the damaged link $damage"
		if [ -n "$plain" ]; then
			say "$name: ${#orphans[@]} possible orphan(s) kept in use, marked maybe free, noted, not called lost"
		else
			say "$name: ${#orphans[@]} orphan(s) free in their list, flagged, not leaked"
		fi
	done
}

for c in orphans1 orphans2 orphans3; do
	check_case host $c
	for v in glibc-2.31-amd64 glibc-2.41-amd64 glibc-2.43-amd64 glibc-2.44-amd64 glibc-2.36-arm64; do
		check_case $v $c
	done
done
