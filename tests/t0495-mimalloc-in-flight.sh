#!/bin/bash
# heapwalk --pid stops a mimalloc process wherever its threads are,
# inside mi_malloc and mi_free too, where a block may be off one list and
# not yet counted by its page (t0503 does the same for glibc).
# corpora/ptmalloc/churn1.c (three threads malloc and free in a tight
# loop, forever) under LD_PRELOAD of Debian's libmimalloc.so.2, stopped
# 20 times:
#  - summary walks mimalloc, and `check` never counts corruption (exit
#    0): a thread the stop caught anywhere in libmimalloc's code (a
#    stripped library: its internal functions have no names) is said in
#    a note, and whatever the walk found half done is a note too;
#  - the program, let go after it all, stops its threads, frees
#    everything and says OK (a damaged heap would crash it).
# How many stops caught a thread inside is said, not asserted.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live
lib=$(gcc -print-file-name=libmimalloc.so.2)
[ -f "$lib" ] || skip "libmimalloc-dev is not installed (make deps)"

dir=$(live_prog host churn1)
live_start churn env LD_PRELOAD="$lib" "$dir/prog"
pid=${LIVE_PID[churn]}
hw_live churn "$T/summary.json" "$T/summary.err" --json summary
expect_rc 0
has '^{"allocator":"mimalloc"' <"$T/summary.json" ||
	fail "churn1 under libmimalloc not walked as mimalloc: $(head -c 300 "$T/summary.json")"
inside=0
for i in $(seq 1 20); do
	hw_live churn "$T/check.$i" "$T/check.$i.err" check
	if [ "$HW_RC" != 0 ]; then
		grep -v '^  #' "$T/check.$i" | tail -n 5 >&2
		fail "check of a mimalloc process stopped in its malloc loop counted corruption (run $i, exit $HW_RC)"
	fi
	if has 'when the process was stopped: what its operation had half done' <"$T/check.$i"; then
		inside=$((inside + 1))
	fi
	live_untraced churn "heapwalk --pid $pid check (run $i)"
done
live_finish churn
say "churn1 on libmimalloc stopped 20 times in its malloc loop: check counted no corruption ($inside stops caught a thread inside the allocator, said in a note); the program's heap intact after"
