# shellcheck shell=bash
# tests/damage-lib.sh - sourced by the damage tests (t0230, t0232, ...):
# patch copies of a corpus core, read heapwalk's chunk rows and findings.
# The caller sets T, truth (its copy of the truth file) and keeps the
# undamaged core at $T/orig.core; `corepatch` is the tool's path.

hex() { printf '0x%x' "$1"; }

# le64 VALUE: the 8 bytes of VALUE, little-endian, as hex digits.
le64() {
	local h out='' i
	h=$(printf '%016x' "$1")
	for ((i = 14; i >= 0; i -= 2)); do out+=${h:i:2}; done
	echo "$out"
}

# word ADDR: the 64-bit word at ADDR in the original core.
word() {
	"$corepatch" -r "$T/orig.core" "$1" 1
}

# allocs WHERE [USABLE]: the truth's user addresses of main-thread
# allocations left in WHERE (of that usable size), in the program's order.
allocs() {
	awk -v w="$1" -v u="${2:-}" '$1 == "alloc" && $5 == w && $6 == "0" &&
		(u == "" || $4 == u) { print $2 }' "$truth"
}

# chunk_rows JSONL: "addr size where" of each chunk heapwalk printed.
chunk_rows() {
	sed -n 's/.*"addr":"\(0x[0-9a-fA-F]*\)".*"size":\([0-9]*\).*"where":"\([a-z]*\)".*/\1 \2 \3/p' "$1" |
		tr 'A-F' 'a-f' | sed 's/^0x0*\([0-9a-f]\)/0x\1/'
}

# expect_rows WANT GOT WHAT: every "addr usable where" line of WANT is a
# line of GOT.
expect_rows() {
	local missing
	missing=$(awk 'NR == FNR { have[$0] = 1; next } !($0 in have)' "$2" "$1")
	if [ -n "$missing" ]; then
		echo "--- expected (from the truth) but not reported as such:"
		head -n 20 <<<"$missing"
		echo "--- heapwalk's lines for those addresses:"
		local a
		for a in $(head -n 20 <<<"$missing" | awk '{ print $1 }'); do
			grep -F "$a " "$2" || echo "$a: (none)"
		done
		fail "$3: $(wc -l <<<"$missing") truth allocation(s) not reported as in the truth"
	fi
}

# findings JSON: "addr problem" per finding of `heapwalk --json check`.
findings() {
	grep -o '{"addr":"0x[0-9a-fA-F]*","problem":"\([^"\\]\|\\.\)*"' "$1" |
		sed 's/^{"addr":"\(0x[0-9a-fA-F]*\)","problem":"\(.*\)"$/\1 \2/' |
		tr 'A-F' 'a-f' | sed 's/^0x0*\([0-9a-f]\)/0x\1/' || true
}

# expect_finding CASE CORE PATTERN ADDR...: `check` exits 1 and reports a
# finding at one of ADDR (first = preferred) whose problem matches the
# extended regex PATTERN ("" = any problem).
expect_finding() {
	local name=$1 core=$2 pat=$3 a hit=
	shift 3
	hw "$T/$name.check" "$T/$name.check.err" --json "$core" check
	expect_rc 1
	findings "$T/$name.check" >"$T/$name.findings"
	for a; do
		a=$(hex "$a")
		if grep -E "^$a ${pat:+.*($pat)}" "$T/$name.findings" >/dev/null; then
			hit=$a
			break
		fi
	done
	if [ -z "$hit" ]; then
		echo "--- findings of $name (wanted at: $(for a; do hex "$a"; printf ' '; done)${pat:+problem /$pat/}):"
		head -n 20 "$T/$name.findings"
		fail "$name: no finding at the damaged address"
	fi
	say "$name: finding $(grep -m1 -E "^$hit " "$T/$name.findings")"
}

# all_commands CASE CORE: every reporting command exits 0 or 1 and neither
# crashes nor hangs: in text, and summary in JSON too (walk_damaged and
# expect_finding read chunks and check in JSON).
all_commands() {
	local cmd
	for cmd in summary chunks bins sizes arenas check; do
		hw "$T/$1.out" "$T/$1.err" "$2" $cmd
		expect_rc 0 1
	done
	hw "$T/$1.out" "$T/$1.err" --json "$2" summary
	expect_rc 0 1
}

# walk_damaged CASE CORE: all_commands, then CASE's chunk rows (as
# chunk_rows prints them) in $T/CASE.rows.
walk_damaged() {
	all_commands "$1" "$2"
	hw "$T/$1.chunks" "$T/$1.chunks.err" --json "$2" chunks
	expect_rc 0 1
	chunk_rows "$T/$1.chunks" >"$T/$1.rows"
}

# damaged CASE: a fresh copy of the core to damage.
damaged() {
	cp "$T/orig.core" "$T/$1.core"
	echo "$T/$1.core"
}

patch() {
	local core=$1 addr=$2 bytes=$3 out
	out=$("$corepatch" "$core" "$addr" "$bytes") ||
		fail "corepatch $core $(hex "$addr") $bytes failed"
	say "$(basename "$core" .core): $out"
}

