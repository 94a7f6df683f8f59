#!/bin/bash
# gdb's `heap` commands in Debian's gdb-minimal: a gdb built without
# Python (as many device and distribution gdbs are), unpacked from its
# package (scripts/gdb-minimal.sh; it conflicts with gdb).  The plugin
# needs nothing Python gives:
#  - on the glibc bins1 core, `heap chunks/--json/bins --json` agree with
#    the program's truth, and the text of heap, bins, chunks, sizes,
#    check and frag equals the tool's;
#  - on the jemalloc 5.3 basic1 core (stripped libjemalloc2), chunks,
#    summary, sizes, bins and arenas agree with jemalloc's statistics;
#  - on the live threads8 program (`gdb-minimal -p`), chunks, summary and
#    bins agree with its truth, and it is left running, untraced.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
truthcmp=$(tool truthcmp)
jetruthcmp=$(tool jetruthcmp)

rc=0
gdbmin=$("$TOP/scripts/gdb-minimal.sh" "$CORPUS/gdb-minimal") || rc=$?
[ $rc = 77 ] && skip "gdb-minimal cannot be fetched here"
[ $rc = 0 ] || fail "scripts/gdb-minimal.sh failed (status $rc)"
if "$gdbmin" -nx -batch -ex 'python print(1)' >"$T/py" 2>&1 &&
	grep -qx 1 "$T/py"; then
	fail "$gdbmin has Python: not the gdb this test is for"
fi

dir=$(corpus_core bins1)
o=$T/bins1
text=(summary bins chunks sizes check frag)
gdb_heap "$o" "$gdbmin" "$dir/prog" "$dir/core" -- "chunks --json" "--json" \
	"bins --json" "${text[@]}"
"$truthcmp" "$dir/truth.txt" "$o.1" "$o.2" ||
	fail "bins1: gdb-minimal's heap chunks/summary disagree with the truth"
"$truthcmp" --bins "$dir/truth.txt" "$o.3" "$o.1" ||
	fail "bins1: gdb-minimal's heap bins disagree with the chunks or the truth"
i=3
for c in "${text[@]}"; do
	i=$((i + 1))
	[ "$(cat "$o.$i.rc")" = 0 ] || fail "bins1: heap $c: status $(cat "$o.$i.rc")"
	hw "$o.cli.$i" "$o.cli.$i.err" "$dir/core" "$c"
	expect_rc 0
	same_as_cli "$o.$i" "$o.cli.$i" "bins1: heap $c"
done
say "core: heap's chunks, summary and bins agree with the truth; ${#text[@]} text reports are the tool's"

dir=$(jemalloc_truth jemalloc-5.3.0-amd64 basic1)
o=$T/je
gdb_heap "$o" "$gdbmin" "$dir/prog" "$dir/core" -- "chunks --json --no-debuginfo" \
	"summary --json --no-debuginfo" "sizes --json --no-debuginfo" \
	"bins --json --no-debuginfo" "arenas --json --no-debuginfo"
"$jetruthcmp" "$dir/truth.txt" "$o.1" "$o.2" "$o.3" "$o.4" "$o.5" ||
	fail "jemalloc basic1: gdb-minimal's heap disagrees with jemalloc's own statistics"
say "jemalloc 5.3 core: heap agrees with jemalloc's statistics"

need_live
c=threads8
dir=$(live_prog host "$c")
live_start "$c" env CORPUS_LIVE=1 "$dir/prog" "$T/$c.truth"
live_usr1 "$c"
o=$T/live
gdb_heap "$o" "$gdbmin" -p "${LIVE_PID[$c]}" -- "chunks --json" "--json" "bins --json"
"$truthcmp" "$T/$c.truth" "$o.1" "$o.2" ||
	fail "gdb-minimal -p: heap chunks/summary disagree with the truth"
"$truthcmp" --bins "$T/$c.truth" "$o.3" "$o.1" ||
	fail "gdb-minimal -p: heap bins disagree with the chunks or the truth"
live_untraced "$c" "gdb-minimal -p"
live_finish "$c"
say "gdb-minimal -p: heap chunks, summary and bins agree with the truth; the program runs on unharmed"
