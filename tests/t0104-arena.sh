#!/bin/bash
# `arena N` (ptmalloc's malloc_state) against the truth of threads8 (nine
# arenas: main_arena and one per thread that called malloc; the truth
# names each thread's arena by address) and bins1 (one arena, mallinfo2):
#  - arenas 0 to 8 are the truth's arena addresses, each once, 0 main;
#  - each lists exactly the truth's threads of that arena, and
#    attached_threads counts them;
#  - following next from arena 0 meets every arena once and comes back
#    to 0 (glibc's ring);
#  - NONCONTIGUOUS_BIT is set exactly on the thread arenas;
#  - the top chunk is in one of the arena's heaps and ends it;
#  - bins1: main_arena's system_mem is mallinfo2's arena;
#  - arena 9: one usage line, exit 2.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk

# val NAME: NAME's value in $T/a (a JSON document of arena N; quotes off).
val() {
	sed -n "s/.*\"$1\":\\(\"[^\"]*\"\\|\\[[^]]*\\]\\|[^,}]*\\).*/\\1/p" "$T/a" | tr -d '"[]'
}

dir=$(corpus_core threads8)
core=$dir/core truth=$dir/truth.txt
nt=$(awk '$1 == "thread" && $4 != "none" { print $4 }' "$truth" | sort -u | wc -l)
[ "$nt" = 9 ] || fail "threads8's truth has $nt arenas"
: >"$T/seen"
for ((n = 0; n < nt; n++)); do
	hw "$T/a" "$T/err" --json "$core" arena "$n"
	expect_rc 0
	addr=$(val addr) kind=$(val kind)
	if [ $n = 0 ]; then
		[ "$kind" = main ] || fail "arena 0 is $kind"
		tname=main
	else
		[ "$kind" = thread ] || fail "arena $n is $kind"
		tname=$addr
	fi
	want=$(awk -v a="$tname" '$1 == "thread" && $4 == a { print $3 }' "$truth" | sort | tr '\n' ' ')
	[ -n "$want" ] || fail "arena $n at $addr is no arena of the truth"
	got=$(val threads | tr ',' '\n' | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "arena $n: threads $got, the truth $want"
	[ "$(val attached_threads)" = "$(wc -w <<<"$want")" ] ||
		fail "arena $n: attached_threads $(val attached_threads), the truth has $(wc -w <<<"$want") threads"
	[ "$(val noncontiguous)" = "$([ $n = 0 ] && echo false || echo true)" ] ||
		fail "arena $n ($kind): noncontiguous $(val noncontiguous)"
	# The top chunk ends one of its heaps.
	top=$(val top) size=$(val top_size)
	heaps=$(sed -n 's/.*"heaps":\[\(.*\)\].*/\1/p' "$T/a")
	end=$(printf '0x%x' $((top + size)))
	grep -q "\"end\":\"$end\"" <<<"$heaps" ||
		fail "arena $n: top $top + $size = $end ends none of its heaps: $heaps"
	echo "$n $(val next_arena) $addr" >>"$T/seen"
done
[ "$(awk '{ print $3 }' "$T/seen" | sort -u | wc -l)" = "$nt" ] || fail "two arenas at one address: $(cat "$T/seen")"
# The ring from arena 0.
a=0 steps=0
while :; do
	a=$(awk -v a="$a" '$1 == a { print $2 }' "$T/seen")
	steps=$((steps + 1))
	[ "$a" = 0 ] && break
	[ -n "$a" ] && [ $steps -le "$nt" ] || fail "the next ring from arena 0 breaks: $(cat "$T/seen")"
done
[ $steps = "$nt" ] || fail "the next ring has $steps arenas, not $nt"
say "threads8: $nt arenas, each the truth's with its threads, one ring by next"

dir=$(corpus_core bins1)
hw "$T/a" "$T/err" --json "$dir/core" arena 0
expect_rc 0
[ "$(val system_mem)" = "$(awk '$1 == "mallinfo2" && $2 == "arena" { print $3 }' "$dir/truth.txt")" ] ||
	fail "bins1: system_mem $(val system_mem), mallinfo2 arena $(awk '$1 == "mallinfo2" && $2 == "arena" { print $3 }' "$dir/truth.txt")"
hw "$T/a" "$T/err" "$dir/core" arena 1
expect_rc 2
one_error_line "$T/err" "arena 1 of one"
say "bins1: system_mem as mallinfo2's arena; arena 1 of one: a usage error"

# (jemalloc's arena N: t0108; tcmalloc's page heap: t0109.)
