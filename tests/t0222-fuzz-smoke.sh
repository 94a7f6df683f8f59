#!/bin/bash
# The libFuzzer harnesses (tests/fuzz/fuzz-*.c: fuzz-core, fuzz-unpack,
# fuzz-ptmalloc, fuzz-jemalloc, fuzz-jeprof, fuzz-tcmalloc,
# fuzz-tcheapprof, fuzz-mallocng, fuzz-mimalloc, fuzz-mimalloc3, fuzz-heapv2,
# fuzz-diffjson,
# fuzz-layoutcache) still build and run: each replays its kept findings
# (tests/fuzz/regress/NAME/) and its seeds, then fuzzes for SMOKE_TIME
# seconds through tests/fuzz/run.sh, in a fresh corpus.  SMOKE_TIME
# defaults to 25 s shared among the harnesses (never under 3 s each):
# their set-up (copying the cores, replaying the kept findings and the
# seeds: 2 s each idle, up to 7 s on a loaded machine) takes about as
# long again.  Any crash, sanitizer report, leak, input slower than
# FUZZ_TIMEOUT or invalid JSON fails the test (the input is kept in
# FUZZ/artifacts-NAME/).  Skips when clang has no libFuzzer or the
# harnesses are not built (`make fuzzers`; make check builds them where
# clang can); a harness that cannot be set up here (fuzz-jemalloc needs
# Debian's libjemalloc2: network, once; fuzz-layoutcache libc6-dbg) is
# left out and said so.  Long runs: `make fuzz`.
#
#   FUZZ        the harnesses' directory (default $TOP/build/fuzz)
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_cmd xz perl
FUZZ=${FUZZ:-$TOP/build/fuzz}

why=$("$TOP/tests/fuzz/have-libfuzzer.sh" 2>&1) || skip "$why"
names=()
for src in "$TOP"/tests/fuzz/fuzz-*.c; do
	n=$(basename "$src" .c)
	[ -x "$FUZZ/$n" ] || skip "no harness $FUZZ/$n (make fuzzers)"
	[ "$FUZZ/$n" -nt "$src" ] || skip "$FUZZ/$n is older than its source (make fuzzers)"
	names+=("$n")
done

# Wall-clock time on a machine that may be busy: a slow input is a
# minute, not the campaigns' 10 s (tests/fuzz/run.sh).
export FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-60}
secs=${SMOKE_TIME:-$((25 / ${#names[@]}))}
[ "$secs" -ge 3 ] || secs=3
ran=0
for n in "${names[@]}"; do
	rc=0
	"$TOP/tests/fuzz/run.sh" -t "$secs" -c "$T/corpus-$n" "$n" "$FUZZ" \
		2>"$T/$n.err" || rc=$?
	cat "$T/$n.err" >&2
	case $rc in
	0) ran=$((ran + 1)) ;;
	77) say "note: $n left out: $(grep -m1 'skip: ' "$T/$n.err" | sed 's/.*skip: //')" ;;
	*) fail "$n found something or broke (exit $rc; log $FUZZ/$n.log)" ;;
	esac
done
[ $ran -gt 0 ] || skip "no harness could be set up here"
say "$ran of ${#names[@]} harnesses ran clean for $secs s each"
