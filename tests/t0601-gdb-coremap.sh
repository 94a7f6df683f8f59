#!/bin/bash
# gdb's `heap` commands on a core read the core's segments in place
# (plugin/coremap.c: gdb's own file, mapped, checked against gdb's reads)
# and walk in threads; what they print must not depend on it:
#  - on threads8 (a kernel core, 9 threads) the plugin maps every segment
#    gdb reads from the core and runs with the library's threads
#    (HEAPWALK_GDB_DEBUG says so), and each report equals the one made
#    with the segments copied through gdb (HEAPWALK_GDB_NO_COREMAP), and
#    the tool's;
#  - a walk thread that needs a segment only gdb can read (the test hook
#    HEAPWALK_GDB_TEST_HOLE leaves every one to gdb; the walk's second
#    thread always starts on a heap of its own) is refused gdb, and the
#    request runs again on gdb's thread: same report;
#  - the core file replaced after gdb opened it (renamed away, junk put
#    at its path) is not mapped: gdb's reads serve, same report.
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin

cmds=(summary bins chunks check leaks "chunks --json" "sizes --json")
dir=$(corpus_core threads8)

# drop_times OUT N: OUT.1..N without the time a slow command prints
# ("(heapwalk: 1.29 s)", after a second: on a busy machine any of them).
drop_times() {
	local i
	for ((i = 1; i <= $2; i++)); do
		grep -vE '^\(heapwalk: [0-9.]+ s\)$' "$1.$i" >"$1.$i.t" || true
		mv "$1.$i.t" "$1.$i"
	done
}

# inplace DEBUG WHAT: the plugin's notes say every segment was mapped.
inplace() {
	grep -q "^core mapped: \([1-9][0-9]*\) of \1 segments in place" "$1" ||
		fail "$2: not every segment mapped in place: $(grep '^core mapped' "$1" | sed -n 1,1p)"
}

# Mapped in place, in threads.
export HEAPWALK_GDB_DEBUG=$T/debug.in
gdb_heap "$T/in" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
drop_times "$T/in" ${#cmds[@]}
inplace "$T/debug.in" "threads8"
grep -q "^served in .* threads 0, 0 reads refused" "$T/debug.in" ||
	fail "threads8: not walked in threads, or reads refused: $(grep '^served' "$T/debug.in" | sed -n 1,3p)"

# Copied through gdb, one thread.
export HEAPWALK_GDB_DEBUG=$T/debug.copy
HEAPWALK_GDB_NO_COREMAP=1 gdb_heap "$T/copy" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
drop_times "$T/copy" ${#cmds[@]}
grep -q "^served in .* threads 1," "$T/debug.copy" ||
	fail "HEAPWALK_GDB_NO_COREMAP: still in threads"
i=0
for c in "${cmds[@]}"; do
	i=$((i + 1))
	[ "$(cat "$T/in.$i.rc")" = "$(cat "$T/copy.$i.rc")" ] ||
		fail "heap $c: status $(cat "$T/in.$i.rc") in place, $(cat "$T/copy.$i.rc") copied"
	same_as_cli "$T/in.$i" "$T/copy.$i" "heap $c (in place vs copied)"
	# shellcheck disable=SC2086 # c holds the command and its words
	hw "$T/cli.$i" "$T/cli.$i.err" "$dir/core" $c
	# leaks' roots line counts what gdb gives (its registers, its
	# writable segments), not what the core's notes say: all else equal.
	grep -v '^roots: ' "$T/in.$i" >"$T/in.$i.cmp"
	grep -v '^roots: ' "$T/cli.$i" >"$T/cli.$i.cmp"
	same_as_cli "$T/in.$i.cmp" "$T/cli.$i.cmp" "heap $c (in place vs the tool)"
done
say "threads8: ${#cmds[@]} reports with the core mapped in place (in threads) equal those copied through gdb and the tool's"

# A walk thread refused gdb: the request runs again.
export HEAPWALK_GDB_DEBUG=$T/debug.hole
# (The segments a walk thread needs may all have been read on gdb's
# thread before the walk: the mimalloc walker's segment scan, at every
# 32 MiB boundary of anonymous memory, reads the start of each glibc
# thread heap while the allocators are opened.  Then no read is
# refused; a read refused must still make the request run again.)
HEAPWALK_GDB_TEST_HOLE=1 gdb_heap "$T/hole" gdb "$dir/prog" "$dir/core" -- bins leaks
if grep -q "reads refused off" "$T/debug.hole" &&
	! grep -q " 0 reads refused off" "$T/debug.hole"; then
	grep -q "^served in .* (ran again), [1-9][0-9]* reads refused" "$T/debug.hole" ||
		fail "HEAPWALK_GDB_TEST_HOLE: reads refused, but no second run: $(grep '^served' "$T/debug.hole" | sed -n 1,2p)"
	refused="reads refused to walk threads: the request ran again on gdb's thread"
else
	grep -q "^served in " "$T/debug.hole" ||
		fail "HEAPWALK_GDB_TEST_HOLE: the requests were not served: $(sed -n 1,3p "$T/debug.hole")"
	refused="no read refused (every segment the walk threads needed was read before the walk)"
fi
same_as_cli "$T/hole.1" "$T/cli.2" "heap bins with holes"
same_as_cli "$T/hole.2" "$T/in.5" "heap leaks with holes"
say "$refused: same bins and leaks"

# The file replaced under gdb.
cp "$dir/core" "$T/core"
export HEAPWALK_GDB_DEBUG=$T/debug.gone
GDB_HEAP_FIRST=1
gdb_heap "$T/gone" gdb "$dir/prog" "$T/core" \
	-ex "shell mv $T/core $T/core.old && printf 'not a core' > $T/core" -- bins summary
grep -q "^core mapped: 0 of " "$T/debug.gone" ||
	fail "a replaced core file was mapped: $(grep '^core mapped' "$T/debug.gone" | sed -n 1,1p)"
same_as_cli "$T/gone.1" "$T/cli.2" "heap bins, core file replaced"
sed "s|$T/core |$dir/core |" "$T/gone.2" >"$T/gone.2.named"
same_as_cli "$T/gone.2.named" "$T/cli.1" "heap summary, core file replaced"
say "core file replaced after gdb opened it: not mapped, gdb's reads give the same reports"

# A segment whose p_memsz claims 1 TiB past what the file holds
# (corecraft huge-memsz): gdb shows it as a writable section without
# contents, which it would read as a terabyte of zeros; the plugin gives
# it to the library as a hole (never read), as the tool has no bytes
# there: summary and leaks come back at once, equal to the tool's.
"$(tool corecraft)" huge-memsz "$dir/core" "$T/huge.core" >/dev/null ||
	fail "corecraft huge-memsz failed"
export HEAPWALK_GDB_DEBUG=$T/debug.huge
GDB_HEAP_FIRST=1
gdb_heap "$T/huge" gdb "$dir/prog" "$T/huge.core" -- summary leaks
grep -q "^core: [1-9][0-9]* writable segments without contents (not read)" "$T/debug.huge" ||
	fail "huge-memsz: the plugin read the segment without contents: $(grep -m1 '^core' "$T/debug.huge")"
hw "$T/huge.cli" "$T/huge.cli.err" "$T/huge.core" leaks
grep -E '^(definitely|indirectly|possibly) lost|^still reachable' "$T/huge.2" >"$T/huge.2.k"
grep -E '^(definitely|indirectly|possibly) lost|^still reachable' "$T/huge.cli" >"$T/huge.cli.k"
same_as_cli "$T/huge.2.k" "$T/huge.cli.k" "heap leaks on a core claiming 1 TiB"
rm -f "$T/huge.core"
say "a segment claiming 1 TiB it does not hold: a hole, not read; leaks as the tool's"
