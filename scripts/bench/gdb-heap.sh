#!/usr/bin/env bash
# The gdb plugin on the benchmark core: `heap bins` and `heap` (summary)
# inside gdb (`gdb bigheap core`, the plugin sourced), next to the tool on
# the same core.  Run by `make bench` after scripts/bench.sh made
# BUILD_DIR/bench/core.
#
# usage: scripts/bench/gdb-heap.sh [BUILD_DIR]
# Prints, per command, the best of BENCH_RUNS (default 3) wall times: gdb's
# whole run (start-up, loading the core and its symbols, the command), the
# plugin's own time (the "(heapwalk: N s)" line, when it took >= 1 s), gdb
# alone (start-up and loading, no command), and the tool's.  Exit 77 when
# there is no core or no plugin.
set -euo pipefail

build=${1:-build}
build=$(cd "$build" && pwd)
core=$build/bench/core
prog=$build/bench/bigheap
script=$build/plugin/heapwalk.gdb
runs=${BENCH_RUNS:-3}
[ -f "$core" ] && [ -x "$prog" ] || { echo "gdb-heap: no $core (run scripts/bench.sh first)" >&2; exit 77; }
[ -f "$script" ] || { echo "gdb-heap: no plugin ($script)" >&2; exit 77; }
command -v gdb >/dev/null || { echo "gdb-heap: no gdb" >&2; exit 77; }

# best CMD...: the smallest wall time of $runs runs, in seconds.
best() {
	local b= t s e
	for _ in $(seq "$runs"); do
		s=$(date +%s.%N)
		"$@" >"$build/bench/gdb-heap.out" 2>&1
		e=$(date +%s.%N)
		t=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')
		if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then
			b=$t
		fi
	done
	printf '%.2f' "$b"
}

cat "$core" >/dev/null
echo "gdb plugin on $core ($(du -h "$core" | cut -f1)):"
base=$(best gdb -nx -batch -x "$script" "$prog" "$core")
printf '  %-26s %6s s\n' "gdb alone (load the core)" "$base"
for cmd in bins ""; do
	t=$(best gdb -nx -batch -iex 'set pagination off' -x "$script" \
		-ex "heap $cmd" "$prog" "$core")
	own=$(sed -n 's/^(heapwalk: \([0-9.]*\) s)$/\1/p' "$build/bench/gdb-heap.out")
	cli=$(best "$build/heapwalk" "$core" ${cmd:-summary})
	printf '  %-26s %6s s   (plugin %s s; tool: %s s)\n' "gdb heap ${cmd:-(summary)}" \
		"$t" "${own:-<1}" "$cli"
done
