#!/bin/bash
# Targeted damage to copies of the bins1 core, every target and every
# expectation taken from the program's own truth.txt (and the core's raw
# bytes), never from heapwalk's output:
#   a      a live chunk's size field = 0x4141414141414141: `check` exits 1
#          with a finding at that chunk's header saying where the walk
#          resumed; every command exits 0 or 1; every other chunk, below
#          and above the damaged one, is reported as in the truth
#   b      a tcache entry's next = 0x4141414141414141: a finding at that
#          entry; the entries past the break are found by their key word
#          (orphans: free, in the tcache, each with a finding); the rest of
#          the heap as in the truth
#   c1/c2  a fastbin made to cycle (tail -> head; head -> itself), with
#          glibc's safe-linking: a finding, no hang
#   g      a fastbin entry's fd = 0x4141414141414141: a finding there, and
#          (safe-linked glibc) each entry past the break found by its fd
#          chain (orphans: free, in the fastbin, each with a finding)
#   f      a tcache entry's key word = 0x4141414141414141 (a write after
#          free): a finding at that word, every chunk as in the truth
#   d1/d2  a smallbin chunk's bk pointing at a live chunk, a largebin
#          chunk's bk = 0x4141414141414141: "corrupted double-linked list"
#          at that chunk
#   e1/e2  mp_.sbrk_base (found as the one word of libc's writable data
#          holding the heap's start) = a small number / garbage: `check`
#          exits 1, nothing crashes
#   e3/e4  main_arena.top (the one word of libc's writable data holding the
#          top chunk's address: bins1's last big chunk was freed into top,
#          so top starts at that chunk's header) = an address in libc's
#          data / garbage: likewise
# Every run is under a 60 s timeout; a crash, a hang or a sanitizer report
# fails the test.  The host's glibc safe-links tcache and fastbin pointers;
# with DAMAGE_VARIANT=glibc-2.31-amd64 (t0235) the same cases run on a
# glibc whose links are plain.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd timeout
corepatch=$(tool corepatch)
coreloads=$(tool coreloads)
if [ -n "${DAMAGE_VARIANT:-}" ]; then
	dir=$(variant_core "$DAMAGE_VARIANT" bins1)
else
	dir=$(corpus_core bins1)
fi

# Work on a private copy of core and truth.
corpus_copy "$dir" "$T"
mv "$T/core" "$T/orig.core"
truth=$T/truth.txt

# shellcheck source=tests/damage-lib.sh
. "$(dirname "$0")/damage-lib.sh"

# The truth's heap-chunk allocations of the main thread (live or in a
# free list): "addr usable where".
awk '$1 == "alloc" && $6 == "0" && $5 != "merged" && $5 != "mmapped" {
	print $2, $4, $5 }' "$truth" >"$T/truth.rows"
[ -s "$T/truth.rows" ] || fail "no heap allocations in bins1's truth"

# Safe-linking (glibc >= 2.32): a single-linked free-list pointer stored
# at FIELD is (FIELD >> 12) ^ target.  Learn whether this core uses it
# from the tail of a fastbin (target NULL), from the raw core bytes; a
# glibc without fastbins (2.43+) from the tail of a tcache bin.
mapfile -t fa < <(allocs fastbin 40)
mapfile -t tc40 < <(allocs tcache 40)
if [ ${#fa[@]} -ge 3 ]; then
	tail_at=${fa[0]}
elif [ ${#fa[@]} = 0 ] && [ ${#tc40[@]} -ge 3 ]; then
	tail_at=${tc40[0]}
else
	fail "bins1's truth has neither 3 fastbin nor (without fastbins) 3 tcache chunks of 40 bytes"
fi
tail_fd=$(word "$tail_at")
if ((tail_fd == tail_at >> 12)); then
	safe=1
elif ((tail_fd == 0)); then
	safe=0
else
	fail "the list tail $(hex "$tail_at") holds $tail_fd: neither NULL nor safe-linked NULL"
fi
say "safe-linking: $safe"
protect() { # protect FIELD TARGET
	if [ $safe = 1 ]; then echo $((($1 >> 12) ^ $2)); else echo $(($2)); fi
}

# The fastbin list, head first: freed in the truth's order, LIFO.  Check it
# against the core: each chunk's fd names the one freed before it.
for ((i = 1; i < ${#fa[@]}; i++)); do
	want=$(protect "${fa[i]}" $((fa[i - 1] - 16)))
	got=$(word "${fa[i]}")
	((got == want)) || fail "fastbin model: fd at $(hex "${fa[i]}") is $got, expected $(hex "$want")"
done

# A case that this glibc's heap cannot have (exit 77 from its subshell).
not_here() {
	say "$*"
	exit 77
}

# ---- the cases ---------------------------------------------------------
# Each runs in a subshell, so that one failing case does not hide the
# others; the test fails at the end if any did.

# a: a live chunk's size field clobbered.  The live chunk in the middle of
# the main heap (by address).
case_a() {
	local victim core a u w
	mapfile -t live < <(allocs heap)
	[ ${#live[@]} -ge 3 ] || fail "bins1's truth has fewer than 3 live heap chunks"
	victim=$(for a in "${live[@]}"; do printf '%d\n' "$a"; done | sort -n |
		sed -n "$(((${#live[@]} + 1) / 2))p")
	core=$(damaged a)
	patch "$core" $((victim - 8)) 4141414141414141
	expect_finding a "$core" "" $((victim - 16))
	walk_damaged a "$core"
	# Every other chunk is still listed as in the truth: the walk takes
	# up the chain again after the broken header.
	while read -r a u w; do
		if ((a != victim)); then echo "$a $u $w"; fi
	done <"$T/truth.rows" >"$T/a.want"
	[ -s "$T/a.want" ] || fail "a: no truth allocation but the victim"
	say "a: checking the $(wc -l <"$T/a.want") truth allocations other than $(hex "$victim")"
	expect_rows "$T/a.want" "$T/a.rows" a
	# The victim's own chunk is all that is lost: the walk resumes where
	# its original size (from the undamaged core) ends it.
	local resume=$((victim - 16 + ($(word $((victim - 8))) & ~7)))
	grep -q "^$(hex $((victim - 16))) .*walk resumed at $(hex $resume)\$" "$T/a.findings" ||
		fail "a: the finding does not say where the walk resumed: $(head -n 3 "$T/a.findings")"
	# The chunk just below the victim (the truth's nearest allocation
	# under it) is named as the likely culprit; the totals are partial,
	# and the culprit has no "next" across the skipped range.
	local culprit
	culprit=$(while read -r a u w; do
		if ((a < victim)); then printf '%d\n' "$a"; fi
	done <"$T/a.want" | sort -n | tail -n 1)
	grep -q "overrun by the .* chunk at $(hex "$culprit")" "$T/a.findings" ||
		fail "a: the finding does not name $(hex "$culprit") as the likely culprit: $(head -n 3 "$T/a.findings")"
	hw "$T/a.sum" "$T/a.sum.err" --json "$core" summary
	expect_rc 0
	grep -q '"partial":true' "$T/a.sum" || fail "a: summary --json does not say partial"
	hw "$T/a.sum" "$T/a.sum.err" "$core" summary
	grep -q '(partial)' "$T/a.sum" || fail "a: summary's totals are not marked partial"
	hw "$T/a.lookup" "$T/a.lookup.err" --json "$core" chunk "$(hex "$culprit")"
	expect_rc 0
	grep -q '"next":null' "$T/a.lookup" ||
		fail "a: chunk $(hex "$culprit") names a next chunk past the damage: $(cat "$T/a.lookup")"
}

# b: a tcache entry's next pointer = garbage.  The 40-byte tcache bin: 7
# entries, head = the last freed.  Damage the middle one; the entries from
# the head down to it stay listed, everything outside that bin too.
case_b() {
	local i want got mid entry core
	mapfile -t tc < <(allocs tcache 40)
	[ ${#tc[@]} -ge 3 ] || fail "bins1's truth has fewer than 3 tcache chunks of 40 bytes"
	for ((i = 1; i < ${#tc[@]}; i++)); do
		want=$(protect "${tc[i]}" "${tc[i - 1]}")
		got=$(word "${tc[i]}")
		((got == want)) || fail "tcache model: next at $(hex "${tc[i]}") is $got, expected $(hex "$want")"
	done
	mid=$((${#tc[@]} / 2))
	entry=${tc[mid]}
	core=$(damaged b)
	patch "$core" "$entry" 4141414141414141
	walk_damaged b "$core"
	# Every entry is still free in the tcache: those past the break are
	# found by their key word (orphans), each with a finding, and the
	# rest of the heap is as in the truth.
	expect_rows "$T/truth.rows" "$T/b.rows" b
	expect_finding b "$core" "" "$entry" $((entry - 16))
	for ((i = 0; i < mid; i++)); do
		grep -q "^$(hex $((tc[i] - 16))) orphaned tcache entry" "$T/b.findings" ||
			fail "b: no orphan finding for the entry at $(hex "${tc[i]}") past the break"
		grep -q "\"addr\":\"0x0*${tc[i]#0x}\".*\"orphaned\":true" "$T/b.chunks" ||
			fail "b: the entry at $(hex "${tc[i]}") is not marked orphaned in chunks --json"
	done
	say "b: $mid entries past the break found as orphans"
}

# c1: the 40-byte fastbin's tail fd -> its head chunk (the whole list
# becomes a ring).
case_c1() {
	local head core a
	[ ${#fa[@]} -ge 3 ] || not_here "c1: bins1's heap has no fastbin (glibc 2.43+ has none)"
	head=${fa[${#fa[@]} - 1]}
	core=$(damaged c1)
	patch "$core" "${fa[0]}" "$(le64 "$(protect "${fa[0]}" $((head - 16)))")"
	walk_damaged c1 "$core"
	awk '!($3 == "fastbin" && $2 == 40)' "$T/truth.rows" >"$T/c1.want"
	expect_rows "$T/c1.want" "$T/c1.rows" c1
	args=()
	for a in "${fa[@]}"; do args+=($((a - 16)) "$a"); done
	expect_finding c1 "$core" "" "${args[@]}"
}

# c2: the head of the 24-byte fastbin points at itself.
case_c2() {
	local head core
	mapfile -t fb < <(allocs fastbin 24)
	[ ${#fa[@]} -ge 3 ] || not_here "c2: bins1's heap has no fastbin (glibc 2.43+ has none)"
	[ ${#fb[@]} -ge 1 ] || fail "bins1's truth has no 24-byte fastbin chunk"
	head=${fb[${#fb[@]} - 1]}
	core=$(damaged c2)
	patch "$core" "$head" "$(le64 "$(protect "$head" $((head - 16)))")"
	all_commands c2 "$core"
	expect_finding c2 "$core" "" $((head - 16)) "$head"
}

# g: the 40-byte fastbin's middle entry's fd = garbage.  The entries past
# the break (freed before it) are orphans (glibc 2.32+'s safe-linking
# makes their chain recognisable: each fd leads through chunks of the
# bin's size to the list's NULL end): free, in the fastbin, flagged and
# each with a finding; everything else is as in the truth.  With plain
# links they keep the state their headers give.
case_g() {
	local i mid core
	[ ${#fa[@]} -ge 3 ] || not_here "g: bins1's heap has no fastbin (glibc 2.43+ has none)"
	mid=$((${#fa[@]} / 2))
	core=$(damaged g)
	patch "$core" "${fa[mid]}" 4141414141414141
	walk_damaged g "$core"
	if [ $safe = 1 ]; then
		cp "$T/truth.rows" "$T/g.want"
	else
		awk '!($3 == "fastbin" && $2 == 40)' "$T/truth.rows" >"$T/g.want"
	fi
	expect_rows "$T/g.want" "$T/g.rows" g
	expect_finding g "$core" "" "${fa[mid]}" $((fa[mid] - 16))
	[ $safe = 1 ] || { say "g: plain links: no orphan can be recognised"; return 0; }
	for ((i = 0; i < mid; i++)); do
		grep -q "^$(hex $((fa[i] - 16))) orphaned fastbin entry" "$T/g.findings" ||
			fail "g: no orphan finding for the entry at $(hex "${fa[i]}") past the break"
		grep -q "\"addr\":\"0x0*${fa[i]#0x}\".*\"orphaned\":true" "$T/g.chunks" ||
			fail "g: the entry at $(hex "${fa[i]}") is not marked orphaned in chunks --json"
	done
	say "g: $mid entries past the break found as orphans"
}

# d1: a smallbin chunk's bk -> the live chunk right after it (readable,
# but that chunk's fd is not this chunk).
case_d1() {
	local victim next_live core a u w
	mapfile -t sm < <(allocs smallbin)
	# 2.43+ has room for every small chunk bins1 frees in its tcache.
	[ ${#sm[@]} -ge 1 ] || [ ${#fa[@]} -ge 3 ] ||
		not_here "d1: bins1's heap has no smallbin chunk (glibc 2.43+ keeps them in the tcache)"
	[ ${#sm[@]} -ge 1 ] || fail "bins1's truth has no smallbin chunk"
	victim=${sm[0]}
	next_live=
	while read -r a u w; do
		if [ "$w" = heap ] && ((a > victim)) &&
			{ [ -z "$next_live" ] || ((a < next_live)); }; then
			next_live=$a
		fi
	done <"$T/truth.rows"
	[ -n "$next_live" ] || fail "no live chunk above the smallbin chunk $victim"
	core=$(damaged d1)
	patch "$core" $((victim + 8)) "$(le64 $((next_live - 16)))"
	walk_damaged d1 "$core"
	u=$(awk -v a="$victim" '$1 == a { print $2 }' "$T/truth.rows")
	awk -v u="$u" '!($3 == "smallbin" && $2 == u)' "$T/truth.rows" >"$T/d1.want"
	expect_rows "$T/d1.want" "$T/d1.rows" d1
	expect_finding d1 "$core" "corrupted double-linked list" $((victim - 16)) "$victim"
}

# d2: a largebin chunk's bk = garbage.
case_d2() {
	local victim core
	mapfile -t lb < <(allocs largebin)
	[ ${#lb[@]} -ge 1 ] || fail "bins1's truth has no largebin chunk"
	victim=${lb[0]}
	core=$(damaged d2)
	patch "$core" $((victim + 8)) 4141414141414141
	walk_damaged d2 "$core"
	awk '$3 != "largebin"' "$T/truth.rows" >"$T/d2.want"
	expect_rows "$T/d2.want" "$T/d2.rows" d2
	expect_finding d2 "$core" "corrupted double-linked list" $((victim - 16)) "$victim"
}

# f: a tcache entry's key word (its second word, set by free) overwritten,
# as a write after free would: a finding at that word; every chunk still
# where the truth has it.
case_f() {
	local entry core
	mapfile -t tc < <(allocs tcache 40)
	[ ${#tc[@]} -ge 3 ] || fail "bins1's truth has fewer than 3 tcache chunks of 40 bytes"
	entry=${tc[${#tc[@]} / 2]}
	core=$(damaged f)
	patch "$core" $((entry + 8)) 4141414141414141
	walk_damaged f "$core"
	expect_rows "$T/truth.rows" "$T/f.rows" f
	expect_finding f "$core" "key" $((entry + 8))
}

# libc_word VALUE: the addresses of the aligned words of libc's writable
# data (the rw PT_LOADs NT_FILE says map libc) that hold VALUE.
libc_word() {
	local va fsz flags fname
	"$coreloads" "$T/orig.core" >"$T/loads"
	while read -r va _ _ fsz flags fname; do
		case ${fname##*/} in libc.so.6 | libc-2.*.so) ;; *) continue ;; esac
		if [ "$flags" != rw- ] || ((fsz == 0)); then continue; fi
		"$corepatch" -s "$T/orig.core" "$va" $((va + fsz)) "$1"
	done <"$T/loads"
}

# e: the libc word holding WHAT (the value OLD) = NEW; `check` exits 1,
# every command 0 or 1 (3 or 4 with one error line), nothing crashes.
case_e() {
	local name=$1 what=$2 old=$3 new=$4 at core cmd json
	at=$(libc_word "$old")
	if [ "$(wc -w <<<"$at")" != 1 ]; then
		say "$name: note: not exactly one word of libc's data holds $what ($(hex "$old")): ${at:-none}; case skipped"
		return 0
	fi
	say "$name: $what is at $at"
	core=$(damaged "$name")
	patch "$core" "$at" "$new"
	for cmd in summary chunks bins sizes arenas check; do
		for json in "" --json; do
			hw "$T/$name.out" "$T/$name.err" $json "$core" $cmd
			expect_rc 0 1 3 4
			[ "$HW_RC" -lt 3 ] || one_error_line "$T/$name.err" "heapwalk $json $name.core $cmd"
		done
	done
	hw "$T/$name.out" "$T/$name.err" --json "$core" check
	expect_rc 1
	say "$name: first finding: $(findings "$T/$name.out" | sed -n 1,1p)"
}

# The heap's start: the PT_LOAD holding the truth's lowest heap chunk.
heap_start() {
	local lo va fsz
	lo=$(awk '$1 == "alloc" && $6 == "0" && $5 != "mmapped" &&
		$5 != "merged" { print $2 }' "$truth" | sort | sed -n 1,1p)
	"$coreloads" "$T/orig.core" >"$T/loads"
	while read -r va _ _ fsz _ _; do
		if ((va <= lo && lo < va + fsz)); then echo $((va)); fi
	done <"$T/loads"
}
# The top chunk: where the truth's one "merged" allocation's chunk was.
top_chunk() {
	local m
	m=$(awk '$1 == "alloc" && $6 == "0" && $5 == "merged" { print $2 }' "$truth")
	[ "$(wc -w <<<"$m")" = 1 ] || fail "bins1's truth has not exactly one merged chunk"
	echo $((m - 16))
}
case_e1() { case_e e1 mp_.sbrk_base "$(heap_start)" "$(le64 0x4c90)"; }
case_e2() { case_e e2 mp_.sbrk_base "$(heap_start)" 4141414141414141; }
case_e3() {
	local top at
	top=$(top_chunk)
	at=$(libc_word "$top")
	case_e e3 main_arena.top "$top" "$(le64 $((${at:-0} & ~4095)))"
}
case_e4() { case_e e4 main_arena.top "$(top_chunk)" 4141414141414141; }

failed=()
errtrap=$(trap -p ERR)
for c in a b c1 c2 d1 d2 e1 e2 e3 e4 f g; do
	# Not `( ... ) || rc=$?`: set -e would be off inside.  The ERR trap is
	# lib.sh's "where did it die", wanted inside the case only.
	set +e
	trap - ERR
	(
		set -e
		eval "$errtrap"
		"case_$c"
	)
	rc=$?
	eval "$errtrap"
	set -e
	if [ $rc = 0 ]; then
		say "case $c: ok"
	elif [ $rc = 77 ]; then
		say "case $c: not applicable to this glibc"
	else
		say "case $c: FAILED"
		failed+=("$c")
	fi
done
[ ${#failed[@]} = 0 ] || fail "damage case(s) failed: ${failed[*]}"
say "all damage cases behaved"
