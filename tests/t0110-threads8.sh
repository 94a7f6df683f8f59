#!/bin/bash
# heapwalk finds every allocation of corpora/ptmalloc/threads8.c where the
# program left it (live or in its free list, right usable size, arena),
# reports no overlapping chunks, and its mallinfo equals mallinfo2().
# `arenas` lists each thread (by tid) under the arena the truth says it
# uses, with libc's symbols (thread_arena's offset from tcache's) and
# without (the thread pointer scan), and its text fits in 100 columns.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
check_truth threads8
dir=$(corpus_core threads8)
for mode in debug nodebug; do
	opt=()
	if [ $mode = nodebug ]; then opt=(--no-debuginfo); fi
	hw "$T/arenas.$mode" "$T/arenas.$mode.err" --json "${opt[@]}" "$dir/core" arenas
	expect_rc 0
	"$(tool truthcmp)" --arenas "$dir/truth.txt" "$T/arenas.$mode" ||
		fail "arenas ($mode): threads are not on the arenas the truth says"
	say "$mode: $(json_str "$T/arenas.$mode" threads_from)"
done
hw "$T/arenas.txt" "$T/arenas.err" "$dir/core" arenas
expect_rc 0
wide=$(awk 'length > 100' "$T/arenas.txt" | sed -n 1,3p)
[ -z "$wide" ] || fail "arenas text wider than 100 columns: $wide"
