#!/usr/bin/env bash
# prof-bench.sh BUILD_DIR - time `heapwalk CORE prof` on a core with a
# million sampled allocations (issue target: under 2 s).
#
# Runs scripts/bench/profheap.c (1M blocks, 1024 stacks) under Debian
# bookworm's libjemalloc 5.3.0 (scripts/bench/jemalloc-preload.sh) with
# MALLOC_CONF=prof:true,lg_prof_sample:0, so that every allocation is
# sampled, keeps the core in BUILD_DIR/bench-prof/ (remade when
# profheap.c changes), and prints the best of BENCH_RUNS (default 3) wall
# times and peak anonymous memory of: prof (text), prof -o FILE
# (heap_v2), prof --collapsed, prof --format=pprof -o FILE.  PROF_OBJECTS sets the number of blocks.  Exit 77 when no
# core or no jemalloc can be had here.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
out=$build/bench-prof
mkdir -p "$out"
hw=${HEAPWALK:-$build/heapwalk}
runs=${BENCH_RUNS:-3}
nobj=${PROF_OBJECTS:-1000000}
preload=$("$top/scripts/bench/jemalloc-preload.sh" "$build") || exit 77
src=$top/scripts/bench/profheap.c
if [[ ! -x $out/profheap || $src -nt $out/profheap ]]; then
	${CC:-gcc} -std=c11 -O2 -g -fno-optimize-sibling-calls -Wall -Wextra -Werror \
		-o "$out/profheap" "$src"
fi
if [[ ! -s $out/core || $out/profheap -nt $out/core || ! -f $out/core.n ||
      $(cat "$out/core.n") != "$nobj" ]]; then
	rm -f "$out/core" "$out"/core.[0-9]*
	(
		cd "$out"
		ulimit -c unlimited
		MALLOC_CONF=prof:true,lg_prof_sample:0 LD_PRELOAD=$preload \
			./profheap "$nobj" || true
	) 2>"$out/run.log"
	for c in "$out"/core.[0-9]*; do [[ -e $c ]] && mv "$c" "$out/core"; done
	[[ -s $out/core ]] || { echo "prof-bench: no core (core_pattern?)" >&2; exit 77; }
	echo "$nobj" >"$out/core.n"
fi
probe=$build/bench/memprobe
if [[ ! -x $probe ]]; then
	mkdir -p "$build/bench"
	${CC:-gcc} -std=c11 -O2 -Wall -Wextra -o "$probe" "$top/scripts/bench/memprobe.c"
fi
echo "prof bench: $nobj sampled objects, core $(du -h --apparent-size "$out/core" | cut -f1) ($(du -h "$out/core" | cut -f1) on disk)"
cat "$out/core" >/dev/null
# best WALL and its peak RSS of `heapwalk core prof ARGS`
best() {
	local bw= br= line w r
	for ((i = 0; i < runs; i++)); do
		line=$("$probe" -o /dev/stdout -- "$hw" "$out/core" prof "$@" 2>/dev/null | tail -n1)
		w=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$line")
		r=$(sed -n 's/.*rss_anon_peak_kib=\([0-9]*\).*/\1/p' <<<"$line")
		if [[ -z $bw ]] || awk "BEGIN{exit !($w < $bw)}"; then bw=$w br=$r; fi
	done
	printf '  %-28s %6.2f s  peak anon %6d MiB\n' "prof $*" "$bw" "$((br / 1024))"
}
best
best -o "$out/out.heap"
best --collapsed
best --format=pprof -o "$out/out.pb.gz"
records=$(grep -c '^@' "$out/out.heap" || true)
echo "  heap_v2 written: $records stacks; target: prof under 2 s"
