#!/bin/bash
# Broken chunk headers, and the walk taking up the chain again after them.
# Copies of the bins1 and threads8 cores with chunk size fields overwritten
# as overflows leave them; every target and expectation comes from the
# program's own truth.txt and the core's raw bytes:
#   zero   a live chunk's size field = 0 (P clear, so the chunk below it
#          looks free by its header): a finding at that chunk saying the
#          walk resumed at the chunk's original end; the chunk below is
#          still in use
#   small  a live chunk's size field = 0x21 (a size that fits: the damage
#          shows one chunk later, inside the victim)
#   two    two live chunks far apart, both = 0x4141414141414141
#   first  the main heap's first chunk (the tcache's own, at the start of
#          the heap's mapping) = 0x4141414141414141
#   thread a live chunk of a thread arena's heap (threads8)
# In every case each allocation of the truth other than the victims is
# reported as in the truth, every command exits 0 or 1, and nothing
# crashes or hangs.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/damage-lib.sh
. "$(dirname "$0")/damage-lib.sh"
need_heapwalk
need_cmd timeout
corepatch=$(tool corepatch)
coreloads=$(tool coreloads)

# use_core CASE: the undamaged core and truth of corpus CASE, in $T.
use_core() {
	rm -f "$T/orig.core" "$T/core"
	corpus_copy "$(corpus_core "$1")" "$T"
	mv "$T/core" "$T/orig.core"
	truth=$T/truth.txt
	# Every heap-chunk allocation, of any thread: "addr usable where".
	awk '$1 == "alloc" && $5 != "merged" && $5 != "mmapped" {
		print $2, $4, $5 }' "$truth" >"$T/truth.rows"
}

# live_of THREAD: the truth's live heap allocations of THREAD, by address.
live_of() {
	awk -v t="$1" '$1 == "alloc" && $5 == "heap" && $6 == t { print $2 }' \
		"$truth" | while read -r a; do printf '%d\n' "$a"; done | sort -n
}

# nth N FILE: line N of FILE (1-based).
nth() { sed -n "${1}p" "$2"; }

# resumes CASE VICTIM: a finding inside VICTIM's chunk says the walk
# resumed where the chunk's original size (from the undamaged core) ends
# it.  (A broken size that fits shows at the header it leads to, inside
# the victim.)
resumes() {
	local name=$1 victim=$2 resume a rest
	resume=$((victim - 16 + ($(word $((victim - 8))) & ~7)))
	while read -r a rest; do
		if ((victim - 16 <= a && a < resume)) &&
			[[ $rest == *"walk resumed at $(hex "$resume")" ]]; then
			return 0
		fi
	done <"$T/$name.findings"
	head -n 10 "$T/$name.findings"
	fail "$name: no finding in [$(hex $((victim - 16))), $(hex "$resume")) resuming at $(hex "$resume")"
}

# others_intact CASE VICTIM...: every truth row but the victims' is
# reported as in the truth.
others_intact() {
	local name=$1 a u w v skip
	shift
	while read -r a u w; do
		skip=
		for v; do ((a == v)) && skip=1; done
		[ -n "$skip" ] || echo "$a $u $w"
	done <"$T/truth.rows" >"$T/$name.want"
	expect_rows "$T/$name.want" "$T/$name.rows" "$name"
	say "$name: $(wc -l <"$T/$name.want") truth allocations as in the truth"
}

# run_case CASE PATTERN VICTIM...: patch each victim's size field with
# PATTERN (16 hex digits, little-endian bytes), then check.
run_case() {
	local name=$1 pattern=$2 v core
	shift 2
	core=$(damaged "$name")
	for v; do patch "$core" $((v - 8)) "$pattern"; done
	expect_finding "$name" "$core" "invalid chunk size" $(($1 - 16)) \
		$(($1 + 16))
	for v; do resumes "$name" "$v"; done
	walk_damaged "$name" "$core"
	others_intact "$name" "$@"
}

use_core bins1
live_of 0 >"$T/live0"
n=$(wc -l <"$T/live0")
((n >= 6)) || fail "bins1's truth has fewer than 6 live main-arena chunks"
mid=$(nth $(((n + 1) / 2)) "$T/live0")

run_case zero 0000000000000000 "$mid"
# (others_intact covers the chunk below the victim: in use in the truth,
# whatever P bit the broken header shows.)

run_case small 2100000000000000 "$mid"
run_case two 4141414141414141 "$(nth $((n / 3)) "$T/live0")" \
	"$(nth $((2 * n / 3)) "$T/live0")"

# first: the main heap starts at the start of the PT_LOAD holding its
# lowest allocation (brk's start is page-aligned); glibc's first chunk
# there is the tcache's own.
"$coreloads" "$T/orig.core" >"$T/loads" || fail "coreloads cannot read bins1's core"
low=$(head -n 1 "$T/live0")
start=
while read -r va _ _ fsz _ _; do
	if ((va <= low && low < va + fsz)); then start=$((va)); fi
done <"$T/loads"
[ -n "$start" ] || fail "no PT_LOAD holds bins1's lowest allocation"
core=$(damaged first)
patch "$core" $((start + 8)) 4141414141414141
expect_finding first "$core" "invalid chunk size" "$start"
resumes first $((start + 16))
walk_damaged first "$core"
others_intact first

use_core threads8
live_of 3 >"$T/live3"
n=$(wc -l <"$T/live3")
((n >= 3)) || fail "threads8's truth has fewer than 3 live chunks of thread 3"
run_case thread 4141414141414141 "$(nth $(((n + 1) / 2)) "$T/live3")"
