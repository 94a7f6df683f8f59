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
run() {
	printf '\n$ heapwalk %s\n' "$*"
	"$hw" "$@"
}
cd "$out"
run core summary
run core arenas
run core bins
run core chunks | head -n 12
printf '...\n'
run --json core chunks | head -n 3
printf '\nThe program recorded its own view in %s/truth.txt.\n' "$out"
