#!/bin/bash
# The heap's data outranks libc's version string.  Distributions backport
# malloc changes, so a libc that says one release may lay its heap out as
# another.  Here the glibc 2.31 cores (bins1, threads8) are read with a
# copy of their libc whose version string was changed to say 2.36 (found
# through --sysroot at the path the core names): a 2.36 layout would read
# heap_info, malloc_par and every tcache and fastbin link wrongly.  heapwalk
# must still match the programs' truth exactly, report the version string
# (2.36), and say that the data shows glibc 2.30-2.31 and disagrees.  With
# the 2.31 libc's DWARF at hand, its layouts win: the open that began with
# 2.36's built-in ones is done again with them.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd eu-readelf
truthcmp=$(tool truthcmp)

for case in bins1 threads8; do
	dir=$(variant_core glibc-2.31-amd64 "$case")
	# The libc the core names (NT_FILE), copied under a private sysroot
	# with its version string changed in place (same length).
	libc=$(eu-readelf -n "$dir/core" | awk '$NF ~ /\/libc-2\.31\.so$/ && !p { p = $NF } END { print p }')
	[ -n "$libc" ] || fail "$case: the core names no libc-2.31.so"
	fake=$T/$case.sysroot
	mkdir -p "$fake$(dirname "$libc")"
	cp "$libc" "$fake$libc"
	grep -c "release version 2.31" "$fake$libc" >/dev/null ||
		fail "$libc has no version string to change"
	sed -i 's/release version 2\.31/release version 2.36/' "$fake$libc"
	grep -q "release version 2.36" "$fake$libc" || fail "could not patch $fake$libc"

	out=$T/$case
	hw "$out.chunks" "$out.chunks.err" --json --no-debuginfo --sysroot "$fake" "$dir/core" chunks
	expect_rc 0
	hw "$out.summary" "$out.summary.err" --json --no-debuginfo --sysroot "$fake" "$dir/core" summary
	expect_rc 0
	"$truthcmp" "$dir/truth.txt" "$out.chunks" "$out.summary" ||
		fail "$case: with a libc that claims 2.36, heapwalk disagrees with the truth"
	grep -q '"version":"2.36"' "$out.summary" ||
		fail "$case: the patched version string was not read: $(head -c 300 "$out.summary")"
	grep -q '"data_says":"2.30-2.31"' "$out.summary" ||
		fail "$case: the data should say 2.30-2.31: $(head -c 600 "$out.summary")"
	grep -q '"version_agrees":false' "$out.summary" ||
		fail "$case: summary does not say the version string disagrees"
	hw "$out.text" "$out.text.err" --no-debuginfo --sysroot "$fake" "$dir/core" summary
	expect_rc 0
	grep -q "NOT the version string's" "$out.text" ||
		fail "$case: text summary does not flag the disagreement: $(cat "$out.text")"
	# With libc's debug info (the 2.31 libc6-dbg: the build-id is
	# unchanged), its DWARF gives the layouts.  The open starts with
	# 2.36's built-in ones (DWARF is read only for the instance walked)
	# and is done again with DWARF's when they differ, as here.
	dbg=(--debug-dir "$(readlink -f "$dir/sysroot")/usr/lib/debug" --sysroot "$fake")
	hw "$out.dchunks" "$out.dchunks.err" --json "${dbg[@]}" "$dir/core" chunks
	expect_rc 0
	hw "$out.dsummary" "$out.dsummary.err" --json --stats "${dbg[@]}" "$dir/core" summary
	expect_rc 0
	"$truthcmp" "$dir/truth.txt" "$out.dchunks" "$out.dsummary" ||
		fail "$case: with a libc that claims 2.36 and 2.31's DWARF, heapwalk disagrees with the truth"
	grep -q '"layout":"DWARF"' "$out.dsummary" ||
		fail "$case: the layouts are not DWARF's: $(grep -o '"layout":"[^"]*"' "$out.dsummary")"
	has '; DWARF of 1 modules$' "$out.dsummary.err" ||
		fail "$case: libc's DWARF was not read: $(tail -n 1 "$out.dsummary.err")"
	say "$case: libc says 2.36, the data says 2.30-2.31; $(grep -c . "$out.chunks") chunks agree with the truth, with libc's DWARF too"
done
