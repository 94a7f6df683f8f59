#!/bin/bash
# gdb's `heap` commands (the plugin, no Python) on gperftools tcmalloc,
# and tcmalloc cores written by gdb's gcore:
#  - threads8 on Debian's minimal library (stripped): `heap chunks`,
#    `summary`, `bins` and `arenas` (--json --no-debuginfo) agree with
#    the program's own truth (tctruthcmp, as for the tool), and every
#    command's text equals the tool's on the same core (the views too:
#    tcache, bins --list, chunk ADDR, mp, arena 0);
#  - prof1 on the full library (sampling on): `heap prof` and `heap prof
#    --format=gperftools` print what the tool prints;
#  - basic1 run alive (CORPUS_LIVE=1) and dumped with gcore (no kernel
#    core): the tool on gcore's core agrees with the truth too.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
[ -f /usr/include/gperftools/tcmalloc.h ] ||
	skip "gperftools is not installed (make deps: libgoogle-perftools-dev)"
cmp=$(tool tctruthcmp)

dir=$(variant_core tcmalloc-minimal-amd64 threads8)
o=$T/t8
gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "chunks --json --no-debuginfo" \
	"summary --json --no-debuginfo" "bins --json --no-debuginfo" \
	"arenas --json --no-debuginfo"
"$cmp" "$dir/truth.txt" "$o.1" "$o.2" "$o.3" "$o.4" ||
	fail "threads8: gdb's heap disagrees with the truth"
addr=$(awk '$1 == "alloc" && $5 == "used" { print $2; exit }' "$dir/truth.txt")
cmds=(summary arenas bins chunks sizes check frag "chunks --free" "bins --json"
	tcache "tcache --json" "bins --list" "bins --list --json" "chunk $addr"
	"--json chunk $addr" mp "arena 0")
gdb_heap "$o.t" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
i=0
for c in "${cmds[@]}"; do
	i=$((i + 1))
	[ "$(cat "$o.t.$i.rc")" = 0 ] || fail "threads8: heap $c: status $(cat "$o.t.$i.rc")"
	# shellcheck disable=SC2086 # c holds the command and its words
	hw "$o.cli.$i" "$o.cli.$i.err" "$dir/core" $c
	expect_rc 0
	same_as_cli "$o.t.$i" "$o.cli.$i" "threads8: heap $c"
done
say "threads8: heap's chunks, summary, bins, arenas agree with the truth; ${#cmds[@]} commands print what the tool prints"

dir=$(variant_core tcmalloc-full-amd64 prof1)
o=$T/prof
gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "prof" "prof --format=gperftools"
i=0
for c in "prof" "prof --format=gperftools"; do
	i=$((i + 1))
	[ "$(cat "$o.$i.rc")" = 0 ] || fail "prof1: heap $c: status $(cat "$o.$i.rc")"
	# shellcheck disable=SC2086
	hw "$o.cli.$i" "$o.cli.$i.err" "$dir/core" $c
	expect_rc 0
	# The mappings' permissions are gdb's view of the core's sections,
	# which is coarser than its program headers (a guard page reads
	# r--): the file is compared up to its MAPPED_LIBRARIES.
	sed -i '/^MAPPED_LIBRARIES:/,$d' "$o.$i" "$o.cli.$i"
	same_as_cli "$o.$i" "$o.cli.$i" "prof1: heap $c"
done
say "prof1: heap prof (text and gperftools' file up to its mappings) prints what the tool prints"

# gcore's core of a live tcmalloc program.
need_live
dir=$(live_prog tcmalloc-minimal-amd64 basic1)
live_start gc env CORPUS_LIVE=1 "$dir/prog" "$T/gc.truth"
live_usr1 gc
pid=${LIVE_PID[gc]}
timeout -k 5 120 gcore -o "$T/gc.core" "$pid" >"$T/gc.log" 2>&1 ||
	fail "gcore $pid failed: $(tail -n 3 "$T/gc.log")"
core=$T/gc.core.$pid
[ -s "$core" ] || fail "gcore wrote no $core"
for c in chunks summary bins arenas; do
	hw "$T/gc.$c" "$T/gc.$c.err" --json --no-debuginfo "$core" "$c"
	expect_rc 0
done
"$cmp" "$T/gc.truth" "$T/gc.chunks" "$T/gc.summary" "$T/gc.bins" "$T/gc.arenas" ||
	fail "basic1: heapwalk on gcore's core disagrees with the truth"
live_finish gc
say "basic1 under gcore: every block and figure as tcmalloc says; the program's self-check says OK"
