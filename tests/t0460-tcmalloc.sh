#!/bin/bash
# heapwalk on gperftools tcmalloc cores: Debian bookworm's 2.10, the
# minimal library (libtcmalloc_minimal.so.4) and the full one with the
# heap checker and profiler (libtcmalloc.so.4), both stripped, linked
# into corpora/tcmalloc's basic1 (one thread) and threads8 (nine threads,
# each with its thread cache).  Each program's truth (every block's
# address, usable size and state, MallocExtension's figures, the free
# objects per class of its own statistics) must equal heapwalk's chunks,
# summary and bins (tests/tools/tctruthcmp), with --no-debuginfo.  With
# glibc's debug info (libc6-dbg) the summary still walks tcmalloc and
# lists the idle glibc malloc as a second instance, and `check` finds
# nothing.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
[ -f /usr/include/gperftools/tcmalloc.h ] ||
	skip "gperftools is not installed (make deps: libgoogle-perftools-dev)"
cmp=$(tool tctruthcmp)
for variant in tcmalloc-minimal-amd64 tcmalloc-full-amd64; do
	for case in basic1 threads8; do
		dir=$(variant_core "$variant" "$case")
		grep -qx "# tcmalloc 2.10" "$dir/truth.txt" ||
			fail "$variant $case: the program did not run on tcmalloc 2.10"
		out=$T/$variant-$case
		for cmd in chunks summary bins; do
			hw "$out.$cmd" "$out.$cmd.err" --json --no-debuginfo \
				"$dir/core" "$cmd"
			expect_rc 0
		done
		"$cmp" "$dir/truth.txt" "$out.chunks" "$out.summary" "$out.bins" ||
			fail "$variant $case: heapwalk disagrees with the truth (core in $dir)"
		hw "$out.sum2" "$out.sum2.err" --json "$dir/core" summary
		expect_rc 0
		grep -q '"allocator":"tcmalloc","version":"2.10"' "$out.sum2" ||
			fail "$variant $case: with glibc's debug info, tcmalloc is not walked"
		grep -q '"allocator":"ptmalloc"' "$out.sum2" ||
			fail "$variant $case: the idle glibc malloc is not listed as an instance"
		hw "$out.check" "$out.check.err" "$dir/core" check
		expect_rc 0
		grep -q ' 0 problems found' "$out.check" ||
			fail "$variant $case: check finds problems in an undamaged heap: $(head -5 "$out.check")"
		say "$variant $case: $(grep -c '^alloc ' "$dir/truth.txt") allocations, every block and figure as tcmalloc says"
	done
done
