# shellcheck shell=bash
# tests/musl-lib.sh - sourced by the musl tests (t0481, t0482): heapwalk's
# reports of a core of corpora/musl/ngtruth1.c against the truth the
# program recorded.
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# check NAME TARGET...: heapwalk's reports of TARGET (a core and the
# options it needs, or --pid PID) against $T/NAME/truth.txt: every block
# the program holds is a `chunks` line at its address, in use, of its
# malloc_usable_size; every block it freed lies in a free slot or in
# memory given back; the lines come in address order without overlap;
# the blocks in use are exactly the program's; `leaks` finds exactly the
# blocks whose pointer it hid; with the context's usage_by_class recorded
# (static builds), `bins`' slots per class equal it; no finding, and
# `check` finds nothing (with DAMAGED set: `check` exits 1, the heap
# having been damaged on purpose, and every block is still as recorded).
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
	# mallocng's own checks too (its lists, its next meta).
	hw "$d/check" "$d/check.err" "$@" check
	grep -q '"allocator":"mallocng"' "$d/summary" ||
		fail "$name: not walked as mallocng: $(head -c 300 "$d/summary")"
	if [ -n "${DAMAGED:-}" ]; then
		expect_rc 1
	else
		expect_rc 0
		grep -q '"findings":0' "$d/summary" ||
			fail "$name: findings on an undamaged heap: $(grep -o '"findings":[^]]*' "$d/summary" | head -c 600)"
	fi
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


# musl_arm64_setup: Debian bookworm's arm64 musl (the musl-1.2.3-arm64
# sysroot: scripts/corpus/sysroot.sh, made once) and a compiler for it:
# MUSL_ARM64_SYSROOT, MUSL_ARM64_LIB (its library directory) and
# MUSL_ARM64_CC (an array: aarch64-linux-gnu-gcc with musl's specs
# pointed into the sysroot, -std=c11 -O1 -g).  Returns 1 (and says why)
# when this machine cannot have them: no Debian mirror, no cross
# compiler or qemu.
MUSL_ARM64_SYSROOT= MUSL_ARM64_LIB= MUSL_ARM64_CC=()
musl_arm64_setup() {
	local variant=musl-1.2.3-arm64 rc=0 sysroot lib
	sysroot=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}/$variant
	"$TOP/scripts/corpus/sysroot.sh" "$variant" "$sysroot" || rc=$?
	case $rc in
	0) ;;
	77) say "cannot make the $variant sysroot here (no Debian mirror)"; return 1 ;;
	*) fail "scripts/corpus/sysroot.sh $variant failed" ;;
	esac
	local c
	for c in qemu-aarch64 aarch64-linux-gnu-gcc aarch64-linux-gnu-strip; do
		command -v "$c" >/dev/null 2>&1 || { say "no $c here"; return 1; }
	done
	# musl's specs name /usr/lib/aarch64-linux-musl and its headers'
	# directory absolutely: point them into the sysroot.
	lib=$sysroot/usr/lib/aarch64-linux-musl
	sed -e "s|/usr/include/aarch64-linux-musl|$sysroot/usr/include/aarch64-linux-musl|g" \
		-e "s|/usr/lib/aarch64-linux-musl|$lib|g" "$lib/musl-gcc.specs" >"$T/musl.specs"
	MUSL_ARM64_SYSROOT=$sysroot
	MUSL_ARM64_LIB=$lib
	MUSL_ARM64_CC=(aarch64-linux-gnu-gcc -specs "$T/musl.specs" -std=c11 -O1 -g)
}
