#!/bin/bash
# musl's mallocng walked, against the truth its program records:
# corpora/musl/ngtruth1.c built with Debian's musl-gcc static (with
# -DNG_STATIC it also records mallocng's context and its usage_by_class),
# the same binary stripped, and dynamic; one thread and eight; cores by
# gdb's gcore.  For each: every block the program holds is a `chunks`
# line at its address, in use, of its malloc_usable_size; every block it
# freed lies in a free slot or in memory given back; the lines do not overlap and come in address
# order; blocks in use are exactly the program's (musl allocates none of
# its own here); `leaks` finds exactly the blocks whose pointer the
# program hid (definitely or possibly lost), no other; `bins`' slots per
# class add up to the context's usage_by_class (the allocator's own
# count); the context is where the symbol says, found by the secret in
# the stripped copy.  Damage: a byte written past a block, a meta area's
# check word and an active list's link overwritten: `check` names each.
# Then --pid on the dynamic build: the same check, and the program is
# left running.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
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

# check NAME TARGET...: heapwalk's reports of TARGET against $T/NAME's
# truth.
check() {
	local name=$1 d=$T/$1
	shift
	hw "$d/chunks" "$d/chunks.err" --json "$@" chunks
	expect_rc 0
	hw "$d/leaks" "$d/leaks.err" --json "$@" leaks
	expect_rc 0
	hw "$d/bins" "$d/bins.err" --json "$@" bins
	expect_rc 0
	hw "$d/summary" "$d/summary.err" --json "$@" summary
	expect_rc 0
	grep -q '"allocator":"mallocng"' "$d/summary" ||
		fail "$name: not walked as mallocng: $(head -c 300 "$d/summary")"
	grep -q '"findings":0' "$d/summary" ||
		fail "$name: findings on an undamaged heap: $(grep -o '"findings":[^]]*' "$d/summary" | head -c 600)"
	awk -v name="$name" '
	function field(line, key,    m) {
		if (match(line, "\"" key "\":\"?[^,\"}]*")) {
			m = substr(line, RSTART + length(key) + 3,
				   RLENGTH - length(key) - 3)
			sub(/^"/, "", m)
			return m
		}
		return ""
	}
	# A hex address as a number (user addresses fit a double exactly).
	function num(h,    i, v) {
		h = tolower(h); sub(/^0x/, "", h); v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	FILENAME ~ /chunks$/ {
		n++
		# (Arrays by the address as written: a number as a subscript
		# is cut to six digits.)
		addr[n] = field($0, "addr"); size[n] = field($0, "size")
		state[n] = field($0, "state")
		start[n] = num(field($0, "chunk")); len[n] = field($0, "chunk_size")
		at[addr[n]] = n
		if (n > 1 && start[n] < start[n - 1] + len[n - 1]) {
			print name ": chunks overlap or go back at line " n; bad++
		}
		if (state[n] == "used") used++
		next
	}
	FILENAME ~ /leaks$/ {
		if ($0 ~ /"kind":"(definite|possible)"/) lost[field($0, "addr")] = 1
		next
	}
	$1 == "alloc" || $1 == "lost" {
		p = $2; want++
		if (!(p in at)) { print name ": no block at " $2; bad++; next }
		k = at[p]
		if (state[k] != "used" || size[k] != $4) {
			print name ": " $2 " is " state[k] " of " size[k] ", the program says used of " $4; bad++
		}
		if (($1 == "lost") != (p in lost)) {
			print name ": " $2 (($1 == "lost") ? " is lost but leaks does not say so" : " is reachable but leaks calls it lost"); bad++
		}
		if ($1 == "lost") nlost++
		next
	}
	$1 == "freed" {
		p = num($2); hit = 0
		for (k = 1; k <= n; k++)
			if (start[k] <= p && p < start[k] + len[k]) { hit = k; break }
		# (Or in no slot at all: a group wholly free is given back.)
		if (hit && state[hit] != "free") {
			print name ": freed " $2 " is in a block in use"; bad++
		}
		nfreed++; released += !hit
		next
	}
	END {
		if (used != want) { print name ": " used " blocks in use, the program holds " want; bad++ }
		printf "%s: %d blocks in use (%d lost), %d freed (%d of them in groups given back): %s\n", name, want, nlost, nfreed, released, bad ? "MISMATCH" : "as recorded"
		exit bad ? 1 : 0
	}' "$d/chunks" "$d/leaks" "$d/truth.txt" >"$d/cmp" || {
		head -n 20 "$d/cmp" >&2
		fail "$name: heapwalk disagrees with the truth"
	}
	say "$(tail -n 1 "$d/cmp")"
	# The allocator's own count: slots in groups of each class.
	if grep -q '^usage ' "$d/truth.txt"; then
		local c slots got
		while read -r _ c slots; do
			got=$(grep -o "\"class\":$c,[^}]*" "$d/bins" |
			      awk -F'[:,]' '{ for (i = 1; i < NF; i++) { if ($i == "\"used\"" || $i == "\"avail\"" || $i == "\"freed\"") s += $(i + 1) } } END { print s + 0 }')
			[ "$got" = "$slots" ] ||
				fail "$name: class $c: bins counts $got slots, usage_by_class $slots"
		done < <(grep '^usage ' "$d/truth.txt")
		say "$name: bins' slots per class = usage_by_class ($(grep -c '^usage ' "$d/truth.txt") classes)"
	fi
}

run_core s1 ts 1
check s1 "$T/s1/core"
ctx=$(sed -n 's/^ctx //p' "$T/s1/truth.txt")
grep -q "\"context\":\"$ctx\"" "$T/s1/summary" ||
	fail "s1: the context is not the symbol's ($ctx): $(grep -o '"context[^,]*,[^,]*' "$T/s1/summary")"
run_core s8 ts 8
check s8 "$T/s8/core"
run_core ss8 tss 8
check ss8 "$T/ss8/core"
grep -q '"context_from":"the secret from AT_RANDOM' "$T/ss8/summary" ||
	fail "ss8: the stripped copy's context not found by the secret: $(grep -o '"context_from":"[^"]*"' "$T/ss8/summary")"
run_core d8 td 8
check d8 "$T/d8/core"

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
ctx=$(sed -n 's/^ctx //p' "$T/ov/truth.txt")
area=$("$corepatch" -r "$T/ov/core" $((ctx + 56)) 1)
cp "$T/ov/core" "$T/area.core"
"$corepatch" "$T/area.core" "$area" 4141414141414141 >/dev/null ||
	fail "cannot patch the meta area's check"
damaged "$T/area.core" "$area" "mallocng meta area: its check is 0x4141414141414141"
hw "$T/ov.bins" "$T/ov.bins.err" --json "$T/ov/core" bins
expect_rc 0
active=$(grep -o '"active":"0x[0-9a-f]*"' "$T/ov.bins" | head -n 1 | cut -d'"' -f4)
[ -n "$active" ] || fail "no class has an active list: $(head -c 300 "$T/ov.bins")"
cp "$T/ov/core" "$T/active.core"
"$corepatch" "$T/active.core" $((active + 8)) 0800000000000000 >/dev/null ||
	fail "cannot patch the active list"
damaged "$T/active.core" "$active" "mallocng active list of class"

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
