#!/bin/bash
# The counting walk's proof by sums (libheapwalk/alloc/ptmalloc/
# linksums.c: the small and large bins by hashed links, the fastbins by
# guesses added up fastbin by fastbin) held to the truth on thread arenas
# of two 64 MiB heaps each, whose lists cross from one heap to the other,
# and where glibc itself freed the first heap's old top when the arena
# grew and the program took it back (corpora/ptmalloc/multiheap1.c; its
# comment says how the heap is made and what the truth file holds).
# Two cores of the same heap operations:
#   multiheap1  clean: the program wrote every byte of its blocks
#   multiheap2  churn: the blocks glibc handed back from its lists (the
#               old top, and every malloc after the frees) keep the stale
#               link in their first word
# For each, tests/tools/blockcheck checks against the program's truth:
#   (i)   every live block used, of its malloc_usable_size, in its
#         worker's arena, and nothing else in use there; every freed
#         block free, or handed out again by a later malloc
#   (ii)  summary's mallinfo is the program's own mallinfo2()
#   (iii) bins (every list walked) counts per arena and list what the
#         chunk lines (the counting walk) put there, and per fastbin the
#         entries the program walked itself
#   (iv)  --stats (of summary and of chunks): a fastbin's sums fail
#         exactly where the truth has live blocks a guess takes for
#         entries -- none in the clean core (sums failed 0, guessed and
#         summed > 0), the churned fastbins and those of the old tops
#         taken back in the churn core, whose other fastbins stay proven
#         (guessed > 0); the second stats line names only such fastbins;
#         guessed is the proven fastbins' entries, summed the small and
#         large bins' chunks (summary's: and the unsorted bin's, which a
#         walk for counting sums with them instead of walking it)
#   (v)   each worker's arena has two heaps or more; sizes' totals per
#         arena are those of the chunk lines
# and, once, that blockcheck does fail on a chunk line made wrong.
# Needs safe-linked fastbins and malloc_state as glibc 2.32-2.42 lay them
# out (the program reads its arenas' fastbins itself); the host's glibc
# is 2.36.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd timeout getconf

glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
case $glibc in
"glibc 2."*) minor=${glibc#glibc 2.} minor=${minor%%.*} ;;
*) skip "the host's C library is not glibc ($glibc)" ;;
esac
if [ "$minor" -lt 32 ] || [ "$minor" -gt 42 ]; then
	skip "multiheap1 needs glibc 2.32-2.42 (safe-linked fastbins), the host has $glibc"
fi
blockcheck=$(tool blockcheck)

# check_case NAME: build NAME's core (its directory in case_dir), run
# heapwalk on it and blockcheck against its truth.
case_dir=
check_case() {
	local name=$1 dir out=$T/$1
	dir=$(corpus_core "$name")
	case_dir=$dir
	mkdir -p "$out"
	hw "$out/chunks.jsonl" "$out/chunks.stats" --stats --json "$dir/core" chunks
	expect_rc 0
	hw "$out/summary.json" "$out/summary.stats" --stats --json "$dir/core" summary
	expect_rc 0
	hw "$out/bins.json" "$out/bins.err" --json "$dir/core" bins
	expect_rc 0
	hw "$out/arenas.json" "$out/arenas.err" --json "$dir/core" arenas
	expect_rc 0
	say "$name: $(grep -c '^live' "$dir/truth.txt") live and $(grep -c '^freed' "$dir/truth.txt") freed blocks; $(sed -n 's/^worker \([0-9]*\) [0-9]* [^ ]* \([0-9]*\) .*/worker \1 \2 heaps/p' "$dir/truth.txt" | paste -sd, -)"
	sed "s/^/$name: summary: /" "$out/summary.stats" >&2
	local stats mode
	for stats in summary chunks; do
		mode=classify
		[ $stats = summary ] && mode=counting
		"$blockcheck" "$dir/truth.txt" "$out/chunks.jsonl" \
			"$out/summary.json" "$out/bins.json" "$out/arenas.json" \
			"$out/$stats.stats" $mode >"$out/check.$stats" 2>&1 || {
			cat "$out/check.$stats" >&2
			fail "$name: heapwalk disagrees with the truth (stats of $stats; core in $dir)"
		}
	done
	sed "s/^/$name: /" "$out/check.summary" >&2
	# sizes --json's per-arena totals (a counting walk whose wrong
	# guesses were given back as in use and the lists' entries as free)
	# are the chunk lines' of each arena.
	hw "$out/sizes.json" "$out/sizes.err" --json "$dir/core" sizes
	expect_rc 0
	local want got
	want=$(awk -F'"arena":' '{ split($2, a, ","); st = $0 ~ /"state":"used"/ ? "used" : "free"
		n[a[1] " " st]++ } END { for (k in n) print k, n[k] }' "$out/chunks.jsonl" | sort)
	got=$(grep -o '"arenas":\[.*\]' "$out/sizes.json" | grep -o '{"arena":[0-9]*,"addr":"[^"]*","used":[0-9]*,"used_bytes":[0-9]*,"free":[0-9]*' |
		sed 's/{"arena":\([0-9]*\),"addr":"[^"]*","used":\([0-9]*\),"used_bytes":[0-9]*,"free":\([0-9]*\)/\1 used \2\n\1 free \3/' |
		awk '$3 != 0' | sort)
	[ -n "$got" ] && [ "$got" = "$want" ] ||
		fail "$name: sizes' arenas count $(echo $got), the chunk lines $(echo $want)"
	say "$name: sizes' per-arena totals are the chunk lines'"
}

check_case multiheap1
check_case multiheap2

# The checker itself: one live block of the churn core's truth given as
# a fastbin entry, as a wrong guess would, must fail it.
out=$T/multiheap2
dir=$case_dir
victim=$(awk '$1 == "live" { a = $3 } END { print a }' "$dir/truth.txt")
[ -n "$victim" ] || fail "multiheap2's truth has no live block"
sed "s/^\(.*\"addr\":\"$victim\".*\)\"state\":\"used\",\"where\":\"heap\"/\1\"state\":\"free\",\"where\":\"fastbin\"/" \
	"$out/chunks.jsonl" >"$out/wrong.jsonl"
! cmp -s "$out/wrong.jsonl" "$out/chunks.jsonl" ||
	fail "could not make the chunk line of $victim wrong"
rc=0
"$blockcheck" "$dir/truth.txt" "$out/wrong.jsonl" "$out/summary.json" \
	"$out/bins.json" "$out/arenas.json" "$out/summary.stats" counting \
	>"$out/check.wrong" 2>&1 || rc=$?
if [ $rc != 1 ] || ! has -F "live $victim" <"$out/check.wrong"; then
	fail "blockcheck passed (exit $rc) a live block given as free: $(head -c 400 "$out/check.wrong")"
fi
say "the proof held on both cores"
