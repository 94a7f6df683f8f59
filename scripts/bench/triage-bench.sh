#!/usr/bin/env bash
# triage-bench.sh BUILD_DIR - how fast a fleet is triaged.
#
# The fleet: every core the test corpus holds (BUILD_DIR/corpus/**/core,
# made by `make check`: ~100 cores of every allocator, x86_64 and
# aarch64, a few KiB to 500 MiB of heap each), read as one machine reads
# a directory of cores.  Prints the best of BENCH_RUNS (default 3) wall
# times, and cores per second, of:
#   heapwalk --json triage -j 1 --no-leaks CORES   (no reachability scan)
#   heapwalk --json triage -j 1 CORES              (the full record)
#   heapwalk --json triage -j NPROC CORES          (every CPU)
#   parallel -j NPROC heapwalk --json triage -j 1 {}   (GNU parallel, one
#                                                   heapwalk per core)
# then, when the bigheap bench core exists (BUILD_DIR/bench/core, made by
# scripts/bench.sh: 1.6 GiB, 10.9 M chunks), one record of it against
# summary and leaks, the record's own "seconds" beside.
# Exit 77 when the corpus holds fewer than 10 cores (run make check).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
hw=${HEAPWALK:-$build/heapwalk}
runs=${BENCH_RUNS:-3}
ncpu=$(nproc)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/triage-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

find "$build/corpus" -name core -type f | sort >"$tmp/cores"
n=$(wc -l <"$tmp/cores")
if [ "$n" -lt 10 ]; then
	echo "triage-bench: only $n cores under $build/corpus (make check makes them)" >&2
	exit 77
fi
bytes=$(xargs -d '\n' stat -c %s <"$tmp/cores" | awk '{ s += $1 } END { print s }')

# best SECONDS of runs of "$@" (output to /dev/null), into $best.
best=
timed() {
	local i t
	best=
	for ((i = 0; i < runs; i++)); do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s.%N)
		t=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }')
		if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
			best=$t
		fi
	done
}

printf 'triage-bench: %d cores, %.1f GiB of core files, %d CPUs\n\n' "$n" \
	"$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')" "$ncpu"
printf '%-52s %9s %10s\n' "run" "seconds" "cores/s"
row() {
	printf '%-52s %9.2f %10.1f\n' "$1" "$best" \
		"$(awk -v n="$n" -v b="$best" 'BEGIN { print n / b }')"
}
mapfile -t cores <"$tmp/cores"
# (Page cache warm first: the runs measure heapwalk, not the disk.)
cat "${cores[@]}" >/dev/null
timed "$hw" --json triage -j 1 --no-leaks "${cores[@]}"
row "triage -j 1 --no-leaks"
timed "$hw" --json triage -j 1 "${cores[@]}"
row "triage -j 1"
timed "$hw" --json triage -j "$ncpu" "${cores[@]}"
row "triage -j $ncpu"
if command -v parallel >/dev/null 2>&1; then
	timed parallel --will-cite -j "$ncpu" "$hw" --json triage -j 1 {} :::: "$tmp/cores"
	row "parallel -j $ncpu heapwalk --json triage -j 1 {}"
else
	echo "(GNU parallel is not installed: its row is left out)"
fi

big=$build/bench/core
if [ -s "$big" ]; then
	echo
	cat "$big" >/dev/null
	printf 'the bigheap core (%s, %.2f GiB):\n' "$big" \
		"$(awk -v b="$(stat -c %s "$big")" 'BEGIN { print b / 1073741824 }')"
	for cmd in summary leaks; do
		timed "$hw" "$big" "$cmd"
		printf '  %-20s %8.2f s\n' "$cmd" "$best"
	done
	timed "$hw" --json triage "$big"
	printf '  %-20s %8.2f s\n' "triage" "$best"
	"$hw" --json triage "$big" >"$tmp/big.json"
	printf '  %-20s %8s s  (the record'"'"'s own "seconds")\n' "" \
		"$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' "$tmp/big.json")"
fi
