#!/bin/bash
# musl's mallocng walked, against the truth its program records:
# corpora/musl/ngtruth1.c built with Debian's musl-gcc static (with
# -DNG_STATIC it also records mallocng's context and its usage_by_class),
# the same binary stripped, and dynamic; one thread and eight; cores by
# gdb's gcore, and one by the kernel where core_pattern names a file.
# For each (tests/musl-lib.sh): every block the program holds is a
# `chunks` line at its address, in use, of its malloc_usable_size; every
# block it freed lies in a free slot or in memory given back; the lines
# do not overlap and come in address order; blocks in use are exactly
# the program's (musl allocates none of its own here); `leaks` finds
# exactly the blocks whose pointer the program hid (definitely or
# possibly lost), no other; `bins`' slots per class add up to the
# context's usage_by_class (the allocator's own count); `check` is clean;
# the context is where the symbol says, found by the secret in the
# stripped copy; `frag` has no reserve column (no `top`: mallocng keeps
# none), its free the bytes of the free slots, avail and freed.  Damage: a byte written past a block, a meta area's
# check word, an active list's link and the meta areas' list (made a
# loop) overwritten: `check` names each, and past the overflow, the bad
# check word and the bad link every block is still as recorded; no meta
# area readable (its
# segment left out of the core): every command ends, summary says the
# heap is partial.  Then --pid on the dynamic
# build: the same check, and the program is left running.
# shellcheck source=tests/musl-lib.sh
. "$(dirname "$0")/musl-lib.sh"
need_heapwalk
need_cmd musl-gcc gdb strip

src=$TOP/corpora/musl/ngtruth1.c
musl-gcc -std=c11 -O1 -g -static -DNG_STATIC -o "$T/ts" "$src" ||
	fail "musl-gcc -static failed"
strip -o "$T/tss" "$T/ts"
musl-gcc -std=c11 -O1 -g -o "$T/td" "$src" || fail "musl-gcc failed"

# run_core NAME BIN THREADS [MODE]: BIN's truth and core in $T/NAME/.
run_core() {
	local name=$1 bin=$2 threads=$3 mode=${4:-abort} d=$T/$1
	mkdir -p "$d"
	(cd "$d" && gdb -batch -nx -ex run -ex "gcore $d/core" \
		--args "$T/$bin" "$threads" "$mode") >"$d/gdb.out" 2>&1 || true
	[ -s "$d/core" ] && grep -q '^end$' "$d/truth.txt" 2>/dev/null || {
		tail -n 20 "$d/gdb.out" >&2
		fail "$name: no core or no truth"
	}
}

run_core s1 ts 1
check s1 "$T/s1/core"
ctx=$(sed -n 's/^ctx //p' "$T/s1/truth.txt")
grep -q "\"context\":\"$ctx\"" "$T/s1/summary" ||
	fail "s1: the context is not the symbol's ($ctx): $(grep -o '"context[^,]*,[^,]*' "$T/s1/summary")"

# frag: mallocng keeps no page-level reserve (a group wholly free is
# given back to the system), so frag has no reserve column, glibc's
# `top` least of all: its free memory is its free slots, `avail` (in
# its group's avail_mask: ready to hand out) and `freed` (in the
# freed_mask: freed, or never handed out), and frag's free is their
# bytes, as `chunks` lists them.
hw "$T/s1/frag" "$T/s1/frag.err" "$T/s1/core" frag
expect_rc 0
hw "$T/s1/frag.json" "$T/s1/frag.json.err" --json "$T/s1/core" frag
expect_rc 0
head=$(sed -n 1p "$T/s1/frag" | tr -s ' ')
[ "$head" = " arena used free largest free% frag" ] ||
	fail "s1: frag's columns are not the free ones alone: '$head'"
if grep -qw top "$T/s1/frag" || grep -q '"top"' "$T/s1/frag.json"; then
	fail "s1: frag speaks of a top on mallocng: $(grep -w top "$T/s1/frag" | head -n 2) $(head -c 300 "$T/s1/frag.json")"
fi
grep -q 'free slots of groups, avail or freed' "$T/s1/frag" ||
	fail "s1: frag's legend does not say what mallocng's free is: $(sed -n '/^used, free/p' "$T/s1/frag")"
want=$(awk -F'"size":|,"state":"free","where":"' '
	NF == 3 { split($3, w, "\""); if (w[1] != "avail" && w[1] != "freed") bad = 1
		  split($2, n, ","); s += n[1] }
	END { print bad ? "bad" : s + 0 }' "$T/s1/chunks")
[ "$want" != bad ] || fail "s1: a free block neither avail nor freed in chunks"
got=$(sed -n 's/.*"total":{"used":[0-9]*,"free":\([0-9]*\),.*/\1/p' "$T/s1/frag.json")
[ "$got" = "$want" ] ||
	fail "s1: frag's free is ${got:-missing}, the free slots in chunks hold $want bytes"
say "s1: frag has no reserve column; its free, $got bytes, is the avail and freed slots'"

run_core s8 ts 8
check s8 "$T/s8/core"
run_core ss8 tss 8
check ss8 "$T/ss8/core"
grep -q '"context_from":"the secret from AT_RANDOM' "$T/ss8/summary" ||
	fail "ss8: the stripped copy's context not found by the secret: $(grep -o '"context_from":"[^"]*"' "$T/ss8/summary")"
run_core d8 td 8
check d8 "$T/d8/core"

# A kernel core too, where core_pattern names a plain file in the
# program's directory ("core", or core.PID with core_uses_pid).
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '|')
if [ "${pattern:0:1}" != "|" ] && [ "${pattern:0:1}" != / ] &&
	[[ "$pattern" != *%* ]] && [[ "$pattern" != */* ]]; then
	mkdir -p "$T/k8"
	( (cd "$T/k8" && ulimit -c unlimited && exec "$T/td" 8 abort) \
		>"$T/k8/out" 2>&1 || :) 2>/dev/null
	kc=$(find "$T/k8" -maxdepth 1 -type f -name "$pattern*" | sed -n 1,1p)
	[ -n "$kc" ] || fail "the kernel wrote no core ($pattern) of td"
	[ "$kc" = "$T/k8/core" ] || mv "$kc" "$T/k8/core"
	check k8 "$T/k8/core"
else
	say "kernel core: left out (core_pattern '$pattern' is not a plain file name)"
fi

# Damage: one byte written past a block (the program's record says
# which); then, in copies of that core, the first meta area's check
# word and the `next` of a class's active list overwritten.  `check`
# exits 1 and names each at its address; the walk goes on.
corepatch=$(tool corepatch)
run_core ov ts 1 overflow
victim=$(sed -n 's/^overflow //p' "$T/ov/truth.txt")
damaged() {  # damaged CORE WANT-ADDR WANT-TEXT
	hw "$T/dmg.out" "$T/dmg.err" "$1" check
	expect_rc 1
	has -F "$(printf '0x%016x' "$2"): $3" <"$T/dmg.out" ||
		fail "${1##*/}: check does not say '$3' at $2: $(grep -i mallocng "$T/dmg.out")"
	say "${1##*/}: $(grep -c ': mallocng' "$T/dmg.out") mallocng finding(s), among them $2: $3"
}
damaged "$T/ov/core" "$victim" "mallocng block overflowed: the byte after its"
# Past the damage, every block as the program recorded it.
DAMAGED=1 check ov "$T/ov/core"
ctx=$(sed -n 's/^ctx //p' "$T/ov/truth.txt")
area=$("$corepatch" -r "$T/ov/core" $((ctx + 56)) 1)
cp "$T/ov/core" "$T/area.core"
"$corepatch" "$T/area.core" "$area" 4141414141414141 >/dev/null ||
	fail "cannot patch the meta area's check"
damaged "$T/area.core" "$area" "mallocng meta area: its check is 0x4141414141414141"
hw "$T/ov.bins" "$T/ov.bins.err" --json "$T/ov/core" bins
expect_rc 0
active=$(grep -o '"active":"0x[0-9a-f]*"' "$T/ov.bins" | sed -n 1,1p | cut -d'"' -f4)
[ -n "$active" ] || fail "no class has an active list: $(head -c 300 "$T/ov.bins")"
cp "$T/ov/core" "$T/active.core"
"$corepatch" "$T/active.core" $((active + 8)) 0800000000000000 >/dev/null ||
	fail "cannot patch the active list"
damaged "$T/active.core" "$active" "mallocng active list of class"
# Past each, every block as recorded: the damage is to the allocator's
# bookkeeping, not to what it holds.
for c in area active; do
	mkdir -p "$T/$c"
	cp "$T/ov/truth.txt" "$T/$c/truth.txt"
	DAMAGED=1 check "$c" "$T/$c.core"
done
# The second meta area's next pointing back at the first (s8 has three):
# each area is read once, the rest of the heap is partial.
ctx8=$(sed -n 's/^ctx //p' "$T/s8/truth.txt")
first=$("$corepatch" -r "$T/s8/core" $((ctx8 + 56)) 1)
second=$("$corepatch" -r "$T/s8/core" $((first + 8)) 1)
[ "$((second))" != 0 ] || fail "s8 has one meta area: no loop to make"
cp "$T/s8/core" "$T/loop.core"
"$corepatch" "$T/loop.core" $((second + 8)) "$(printf '%016x' "$((first))" |
	sed 's/\(..\)/\1 /g' | awk '{ for (i = NF; i > 0; i--) printf "%s", $i }')" >/dev/null ||
	fail "cannot patch the second meta area's next"
damaged "$T/loop.core" "$ctx8" "mallocng: the meta areas' list comes back on itself"
# No meta area readable: the segment holding the first left out of the
# core (p_filesz 0), as a cut or filtered core leaves it.  Every command
# ends, trips no sanitizer, and summary says the heap is not all there.
edit_loads "$T/s8/core" "$T/nometa.core" \
	"\$filesz = 0 if \$vaddr <= $((first)) && $((first)) < \$vaddr + \$memsz" ||
	fail "no segment holds the first meta area ($first)"
for cmd in summary chunks bins check leaks; do
	hw "$T/nometa.$cmd" "$T/nometa.$cmd.err" "$T/nometa.core" $cmd
	expect_rc 0 1 3 4
done
grep -qi "partial\|not readable\|cannot be read\|unreadable" "$T/nometa.summary" ||
	fail "no meta area readable: summary does not say the heap is partial: $(head -n 12 "$T/nometa.summary")"
say "no meta area readable: every command ends; summary: $(grep -i -m 1 "partial\|readable" "$T/nometa.summary")"

# Live: the dynamic build, eight threads, waiting on a pipe the test
# holds open.
mkdir -p "$T/live"
mkfifo "$T/in"
(cd "$T/live" && exec "$T/td" 8 wait <"$T/in" >"$T/live/ready") &
pid=$!
exec 3>"$T/in"
for _ in $(seq 1 6000); do
	grep -q ready "$T/live/ready" 2>/dev/null && break
	sleep 0.01
done
grep -q ready "$T/live/ready" || fail "the live program did not get ready"
check live --pid "$pid"
kill -0 "$pid" 2>/dev/null || fail "the live program is gone after heapwalk"
grep -q '^State:.*[RS]' "/proc/$pid/status" ||
	fail "the live program was left stopped: $(grep State "/proc/$pid/status")"
exec 3>&-
wait "$pid" || fail "the live program did not exit cleanly"
