#!/bin/bash
# A FIFO where heapwalk expects a file never makes it wait (a plain
# open() of a FIFO blocks until a writer comes): given as the core, as
# --exe, or standing (under --sysroot) where the core's NT_FILE names
# libc.  The first two are one error line; the third is no file at all,
# so libc is read from its own path and the walk goes on.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd mkfifo
dir=$(corpus_core bins1)
mkfifo "$T/fifo"
hw "$T/out" "$T/err" "$T/fifo" summary
expect_rc 2 3
grep -q "^heapwalk: .*fifo" "$T/err" || fail "a FIFO as the core: no error line: $(cat "$T/err")"
hw "$T/out" "$T/err" --exe "$T/fifo" "$dir/core" summary
expect_rc 1 2 3
grep -q "^heapwalk: .*fifo" "$T/err" || fail "a FIFO as --exe: no error line: $(cat "$T/err")"
# The core's name for libc, as a FIFO under a sysroot.
libc=$(grep -o '"module":"/[^"]*libc\.so[^"]*"' <("$HEAPWALK" --json "$dir/core" summary) |
	sed -n '1s/"module":"\(.*\)"/\1/p')
[ -n "$libc" ] || fail "summary names no libc file"
mkdir -p "$T/root$(dirname "$libc")"
mkfifo "$T/root$libc"
hw "$T/out" "$T/err" --sysroot "$T/root" "$dir/core" summary
expect_rc 0
grep -q "ptmalloc" "$T/out" || fail "with libc's name a FIFO, the walk did not go on: $(head -c 300 "$T/out")"
say "FIFOs as the core, as --exe and as the core's libc: no wait"
