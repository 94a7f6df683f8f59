#!/bin/bash
# `sizes --exact` totals agree with `summary` and with the `chunks` lines:
# sum(used_bytes) == used.bytes, sum(free_bytes) == free.bytes, the counts
# likewise, and sum(used) == number of "used" chunk lines (and free).
# `sizes` (the allocator's size classes) folds those exact rows: every
# exact size lies in one class's [min, size], and each class's counts
# (used, free, cached and their bytes) are the sums of its exact rows.
# The text form fits in 100 columns.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)
for c in bins1 threads8; do
	dir=$(corpus_core "$c")
	for cmd in chunks summary; do
		hw "$T/$c.$cmd" "$T/$c.$cmd.err" --json "$dir/core" $cmd
		expect_rc 0
	done
	hw "$T/$c.exact" "$T/$c.exact.err" --json "$dir/core" sizes --exact
	expect_rc 0
	hw "$T/$c.classes" "$T/$c.classes.err" --json "$dir/core" sizes
	expect_rc 0
	"$truthcmp" --sizes "$T/$c.exact" "$T/$c.summary" "$T/$c.chunks" ||
		fail "$c: sizes --exact, summary and chunks disagree"
	"$truthcmp" --classes "$T/$c.classes" "$T/$c.exact" ||
		fail "$c: sizes classes disagree with sizes --exact"
	hw "$T/$c.text" "$T/$c.text.err" "$dir/core" sizes
	expect_rc 0
	wide=$(awk 'length > 100' "$T/$c.text" | sed -n 1,3p)
	[ -z "$wide" ] || fail "$c: sizes text wider than 100 columns: $wide"
	nx=$(grep -o '"size"' "$T/$c.exact" | wc -l)
	nc=$(grep -o '"size"' "$T/$c.classes" | wc -l)
	say "$c: $nx exact sizes in $nc classes"
done
