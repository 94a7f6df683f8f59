#!/bin/bash
# `sizes` totals agree with `summary` and with the `chunks` lines:
# sum(used_bytes) == used.bytes, sum(free_bytes) == free.bytes, the counts
# likewise, and sum(used) == number of "used" chunk lines (and free).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)
for c in bins1 threads8; do
	dir=$(corpus_core "$c")
	for cmd in chunks summary sizes; do
		hw "$T/$c.$cmd" "$T/$c.$cmd.err" --json "$dir/core" $cmd
		expect_rc 0
	done
	"$truthcmp" --sizes "$T/$c.sizes" "$T/$c.summary" "$T/$c.chunks" ||
		fail "$c: sizes, summary and chunks disagree"
done
