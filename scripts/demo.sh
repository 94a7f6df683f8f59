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
	printf '\n$ %s %s%s\n' "$shown" "$*" "${lines:+ | head -n $lines}"
	if [ -n "$lines" ]; then
		"$hw" "$@" | head -n "$lines" # SIGPIPE on purpose: heapwalk ends quietly
	else
		"$hw" "$@"
	fi
}
# The commands as they run from the top of the tree, so that each can be
# pasted there as it is shown.
cd "$top"
shown=$build/heapwalk
core=$build/corpus/bins1/core
run "$core" summary
run "$core" arenas
run "$core" bins
run -n 12 "$core" chunks
run -n 3 --json "$core" chunks
run "$core" frag
printf '\nThe program recorded its own view in %s.\n\nNext, your own program:\n' \
	"$build/corpus/bins1/truth.txt"
printf '  %-40s # %s\n' \
	"ulimit -c unlimited; ./your-program" "a crash leaves a core (where:" \
	"" "/proc/sys/kernel/core_pattern)" \
	"$shown core.PID" "or, running: $shown --pid PID" \
	"$shown core.PID leaks" "what nothing points to any more" \
	"$shown help" "every command"
printf "'make install' puts heapwalk on PATH (and 'man heapwalk'); doc/guide.md\nwalks through a first analysis.\n"
