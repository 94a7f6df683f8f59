#!/bin/bash
# heapwalk finds every allocation of corpora/ptmalloc/threads8.c where the
# program left it (live or in its free list, right usable size, arena),
# reports no overlapping chunks, and its mallinfo equals mallinfo2().
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)
dir=$(corpus_core threads8)

hw "$T/chunks.jsonl" "$T/chunks.err" --json "$dir/core" chunks
expect_rc 0
hw "$T/summary.json" "$T/summary.err" --json "$dir/core" summary
expect_rc 0
"$truthcmp" "$dir/truth.txt" "$T/chunks.jsonl" "$T/summary.json" ||
	fail "heapwalk disagrees with threads8's truth (core in $dir)"
