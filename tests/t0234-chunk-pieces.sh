#!/bin/bash
# `chunks` in threads: the walk in address order cut into pieces at the
# marks a first walk left (every 256 KiB of a heap), each piece walked
# and rendered by whichever thread takes it, the pieces written in order.
# The report must be the one a single walker gives, byte for byte, text
# and JSON, stderr too — on the threads8 core (ten heaps, one of 64 MiB)
# and the leakstable1 core (800,000 chunks in a 24.5 MiB main heap: some
# hundred pieces),
# and on copies of leakstable1 whose live chunks' size fields were
# overwritten all through the big heap (so that the walk resynchronises
# inside pieces and across their marks).  The work is the same too: the
# walk that settles the lists, then the walk in order (--stats: 2 walks).
# On leakstable1 and its damaged copies the first walk itself is cut too
# (alloc/ptmalloc/split.c: one heap holds nearly everything, so one
# thread follows its chain of sizes and all of them walk the pieces
# behind it): summary, sizes and leaks, whose walks count, hash the free
# lists' links and guess the fastbin entries piece by piece, must say
# with two and three threads what they say with one, --stats' counts
# (entries guessed, proven by sums, walked) included.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/damage-lib.sh
. "$(dirname "$0")/damage-lib.sh"
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
corepatch=$(tool corepatch)

# same NAME CORE [WALKS]: chunks (text and JSON) with one thread and with
# two and three are the same, and each did WALKS walks (default 2).
same() {
	local name=$1 core=$2 walks=${3:-2} form n ref
	for form in text json; do
		local -a opt=()
		[ $form = json ] && opt=(--json)
		for n in 1 2 3; do
			hw "$T/$name.$form.$n" "$T/$name.$form.$n.err" --threads $n \
				--stats "${opt[@]}" "$core" chunks
			expect_rc 0 1
			grep -q "stats: .* walks $walks," "$T/$name.$form.$n.err" ||
				fail "$name: chunks --threads $n did not walk $walks times: $(grep stats: "$T/$name.$form.$n.err")"
			# (The stats line has times in it.)
			{ grep -v 'stats:' "$T/$name.$form.$n.err" || true; } >"$T/$name.$form.$n.msg"
		done
		ref=$T/$name.$form.1
		[ -s "$ref" ] || fail "$name: chunks ($form) printed nothing"
		for n in 2 3; do
			cmp -s "$ref" "$T/$name.$form.$n" ||
				fail "$name: chunks ($form) with $n threads differs from one thread: $(diff "$ref" "$T/$name.$form.$n" | sed -n 1,6p)"
			cmp -s "$ref.msg" "$T/$name.$form.$n.msg" ||
				fail "$name: chunks ($form) with $n threads says other things on stderr: $(diff "$ref.msg" "$T/$name.$form.$n.msg" | sed -n 1,6p)"
		done
		say "$name: chunks ($form): $(wc -l <"$ref") lines, the same with 1, 2 and 3 threads"
	done
}

# counts_same NAME CORE: summary, sizes and leaks (text and JSON) with
# one thread and with two and three are the same, and so is what their
# --stats line counts.
counts_same() {
	local name=$1 core=$2 cmd form n ref
	for cmd in summary sizes leaks; do
		for form in text json; do
			local -a opt=()
			[ $form = json ] && opt=(--json)
			for n in 1 2 3; do
				hw "$T/$name.$cmd.$form.$n" "$T/$name.$cmd.$form.$n.err" \
					--threads $n --stats "${opt[@]}" "$core" $cmd
				expect_rc 0 1
				# (times and memory vary, and whether a heap was
				# cut; the counts must not)
				sed -e 's/open [0-9.]* s, command [0-9.]* s, peak RSS .*; walks/walks/' \
					-e 's/, [0-9]* heap walks* cut into [0-9]* pieces for threads//' \
					"$T/$name.$cmd.$form.$n.err" >"$T/$name.$cmd.$form.$n.msg"
			done
			grep -q 'stats: .*, [0-9]* heap walks* cut into [0-9]* pieces for threads' \
				"$T/$name.$cmd.$form.2.err" ||
				fail "$name: $cmd with 2 threads did not cut the big heap: $(grep stats: "$T/$name.$cmd.$form.2.err")"
			ref=$T/$name.$cmd.$form.1
			[ -s "$ref" ] || fail "$name: $cmd ($form) printed nothing"
			for n in 2 3; do
				cmp -s "$ref" "$T/$name.$cmd.$form.$n" ||
					fail "$name: $cmd ($form) with $n threads differs from one thread: $(diff "$ref" "$T/$name.$cmd.$form.$n" | sed -n 1,6p)"
				cmp -s "$ref.msg" "$T/$name.$cmd.$form.$n.msg" ||
					fail "$name: $cmd ($form) with $n threads says other things on stderr: $(diff "$ref.msg" "$T/$name.$cmd.$form.$n.msg" | sed -n 1,6p)"
			done
		done
		say "$name: $cmd (text and JSON, --stats' counts): the same with 1, 2 and 3 threads"
	done
}

dir=$(corpus_core threads8)
same threads8 "$dir/core"

dir=$(corpus_core leakstable1)
corpus_copy "$dir" "$T"
mv "$T/core" "$T/orig.core"
same leakstable1 "$T/orig.core"
counts_same leakstable1 "$T/orig.core"

# The truth's blocks in the heap (not the table, which is mmapped), by
# address; the victims are spread over them, pieces apart.
awk '$1 == "block" && $3 < 131072 { print $2 }' "$T/truth.txt" |
	while read -r a; do printf '%d\n' "$a"; done | sort -n >"$T/live"
n=$(wc -l <"$T/live")
((n >= 100)) || fail "leakstable1's truth has only $n heap blocks"

# damage NAME PATTERN: PATTERN over the size fields of eight victims.
damage() {
	local name=$1 pattern=$2 k v core
	core=$(damaged "$name")
	for k in 1 2 3 4 5 6 7 8; do
		v=$(sed -n "$((k * n / 9))p" "$T/live")
		patch "$core" $((v - 8)) "$pattern"
	done
	same "$name" "$core"
	counts_same "$name" "$core"
	hw "$T/$name.check" "$T/$name.check.err" "$core" check
	expect_rc 1
	grep -q 'invalid chunk size' "$T/$name.check" ||
		fail "$name: check does not find the damage"
}

damage wild 4141414141414141
damage fits 2100000000000000
damage zero 0000000000000000

# jemalloc's pieces are runs of extents, tcmalloc's runs of spans, of
# some 2,000 blocks each: one walk, cut.
dir=$(variant_core jemalloc-5.3.0-amd64 prof2)
same jemalloc-prof2 "$dir/core" 1
dir=$(variant_core jemalloc-5.3.0-amd64 threads8)
same jemalloc-threads8 "$dir/core" 1
if [ -f "$(gcc -print-file-name=libtcmalloc_minimal.so.4)" ]; then
	dir=$(variant_core tcmalloc-minimal-amd64 threads8)
	same tcmalloc-threads8 "$dir/core" 1
else
	say "tcmalloc: not installed (make deps: libgoogle-perftools-dev), its pieces not checked"
fi
