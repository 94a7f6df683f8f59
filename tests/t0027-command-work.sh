#!/bin/bash
# The command-needs seam: each command does the work it needs and no
# more, as `heapwalk --stats` counts it (walks of every block, walks
# around one address, free-list entries followed one by one, fastbin
# entries guessed and small/large bin chunks summed instead of followed).
# On the bins1 core (glibc 2.36: safe-linked fastbins), the expected
# counts come from the program's truth.txt: how many of its blocks it
# left in each tcache, fastbin, unsorted, small and large bin.
#   summary, sizes     one walk; only the tcache entries are followed,
#                      the fastbin entries guessed, the unsorted, small
#                      and large bin chunks summed (a count needs no
#                      free chunk's bin)
#   leaks, maps        one walk for states alone: the tcaches followed,
#                      the fastbin entries guessed, no bin touched
#   chunk ADDR, view ADDR, chunks --around ADDR
#                      no walk of everything: the blocks around ADDR
#   bins, arenas       no walk of the heap; every list followed
#   chunks, frag       a walk that settles the lists as summary's does
#                      but follows the unsorted bin's entries, then the
#                      walk in address order (each free chunk's bin
#                      shown, but no list)
#   check              one walk, every list followed
#   refs, why ADDR     leaks' walk and one more
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
dir=$(corpus_core bins1)
truth=$dir/truth.txt
core=$dir/core

n_of() { awk -v w="$1" '$1 == "alloc" && $5 == w' "$truth" | wc -l; }
tc=$(n_of tcache)
fa=$(n_of fastbin)
un=$(n_of unsorted)
sb=$(n_of smallbin)
lb=$(n_of largebin)
((tc > 0 && fa > 0 && un > 0 && sb > 0 && lb > 0)) ||
	fail "bins1's truth lacks a tcache, fastbin, unsorted, small or large bin block"
all=$((tc + fa + un + sb + lb))
addr=$(awk '$1 == "alloc" && $5 == "heap" { print $2; exit }' "$truth")
[ -n "$addr" ] || fail "bins1's truth has no live heap block"

# work CMD...: "walks around list guessed summed failed" of `--stats`.
work() {
	hw "$T/out" "$T/err" --stats "$core" "$@"
	expect_rc 0 4
	sed -n 's/.*; walks \([0-9]*\), around \([0-9]*\), list entries \([0-9]*\), guessed \([0-9]*\), summed \([0-9]*\), sums failed \([0-9]*\); .*$/\1 \2 \3 \4 \5 \6/p' "$T/err"
}

# expect CMD... = WALKS AROUND LIST GUESSED SUMMED: '-' matches any.
failed=0
expect() {
	local -a cmd=() want
	while [ "$1" != = ]; do cmd+=("$1"); shift; done
	shift
	want=("$@")
	local got
	got=$(work "${cmd[@]}")
	[ -n "$got" ] || fail "${cmd[*]}: no --stats line: $(cat "$T/err")"
	read -r -a g <<<"$got"
	local names=(walks around "list entries" guessed summed) k
	for k in 0 1 2 3 4; do
		if [ "${want[k]}" != - ] && [ "${want[k]}" != "${g[k]}" ]; then
			say "${cmd[*]}: ${names[k]} ${g[k]}, expected ${want[k]}"
			failed=1
		fi
	done
	[ "${g[5]}" = 0 ] || { say "${cmd[*]}: the sums failed on an intact core"; failed=1; }
	say "${cmd[*]}: walks ${g[0]}, around ${g[1]}, list entries ${g[2]}, guessed ${g[3]}, summed ${g[4]}"
}

expect summary = 1 0 "$tc" "$fa" $((un + sb + lb))
expect sizes = 1 0 "$tc" "$fa" $((un + sb + lb))
expect leaks = 1 0 "$tc" "$fa" 0
expect maps = 1 0 "$tc" "$fa" 0
expect chunk "$addr" = 0 1 - - -
# A block with blocks of its heap on both sides: view and --around read
# only the heap around it, as chunk ADDR does.
mid=$(awk '$1 == "alloc" && $5 == "heap" && ++n == 10 { print $2; exit }' "$truth")
expect view "$mid" 4 = 0 1 - - -
expect chunks --around "$mid" 3 = 0 1 - - -
expect bins = 0 0 "$all" 0 0
expect arenas = 0 0 "$all" 0 0
expect chunks = 2 0 $((tc + un)) "$fa" $((sb + lb))
expect frag = 2 0 $((tc + un)) "$fa" $((sb + lb))
expect check = 1 0 "$all" 0 0
expect refs "$addr" = 2 0 "$tc" "$fa" 0
expect why "$addr" = 2 0 "$tc" "$fa" 0
[ $failed = 0 ] || fail "a command did work it does not need (or less than it needs)"
say "every command did the work it needs"
