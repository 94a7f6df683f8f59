#!/usr/bin/env bash
# demo.sh BUILD_DIR - make a sample core from corpora/ptmalloc/bins1.c (a
# program that fills every kind of glibc free list, records its own truth,
# and aborts) and show what heapwalk reports about it.
set -euo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
hw=$top/$build/heapwalk
out=$top/$build/corpus/bins1
"$top/scripts/corpus/make-core.sh" bins1 "$out"
# run [-n LINES] ARGS...: show the command, then its output (the first
# LINES lines of it).  heapwalk stops quietly and exits 0 when head has
# read enough, so the pipe is safe under pipefail.
run() {
	local lines=
	if [ "$1" = -n ]; then
		lines=$2
		shift 2
	fi
	printf '\n$ heapwalk %s%s\n' "$*" "${lines:+ | head -n $lines}"
	if [ -n "$lines" ]; then
		"$hw" "$@" | head -n "$lines" # SIGPIPE on purpose: heapwalk ends quietly
	else
		"$hw" "$@"
	fi
}
cd "$out"
run core summary
run core arenas
run core bins
run -n 12 core chunks
run -n 3 --json core chunks
run core frag
printf '\nThe program recorded its own view in %s/truth.txt.\n' "$out"
