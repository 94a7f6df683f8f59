#!/bin/bash
# The jemalloc corpus (corpora/jemalloc: basic1, threads8) builds against
# Debian's libjemalloc2 5.2.1 and 5.3.0 (amd64) and 5.3.0 (arm64, under
# qemu-aarch64), every program dumps a core, and its truth file is
# complete and consistent with jemalloc's own statistics
# (jetruthcmp --check-truth).  Independent of heapwalk: a failure here is
# a corpus bug.  Skips when the packages cannot be downloaded.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
for v in jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64 jemalloc-5.3.0-arm64; do
	for c in basic1 threads8; do
		dir=$(jemalloc_truth "$v" "$c")
		[ -s "$dir/core" ] || fail "$v $c: no core in $dir"
		want=$(sed -n 's/^jemalloc //p' "$dir/sysroot/.sysroot")
		grep -qx "# jemalloc $want" "$dir/truth.txt" ||
			fail "$v $c: the program did not run on jemalloc $want"
		say "$v $c: $(grep -c '^alloc ' "$dir/truth.txt") allocations recorded"
	done
done
