#!/usr/bin/env bash
# The gdb plugin on the benchmark cores: `heap bins` and `heap` (summary)
# inside gdb (`gdb PROGRAM core`, the plugin sourced), next to the tool on
# the same core, for every shape scripts/bench.sh made (BUILD_DIR/bench
# and BUILD_DIR/bench-SHAPE; the program is read off each core's stamp).
# Run by `make bench` after scripts/bench.sh.
#
# usage: scripts/bench/gdb-heap.sh [BUILD_DIR]
# Prints, per core and command, the best of BENCH_RUNS (default 3) wall
# times: gdb's whole run (start-up, loading the core and its symbols, the
# command), the plugin's own time (its HEAPWALK_GDB_DEBUG notes) and its
# ratio to the tool's (target: 1.2x), gdb alone (start-up and loading, no
# command), and how many of the core's segments the plugin read in place.
# Then one table: a row per shape.  Exit 77 when there is no core or no
# plugin.
set -euo pipefail

build=${1:-build}
build=$(cd "$build" && pwd)
script=$build/plugin/heapwalk.gdb
runs=${BENCH_RUNS:-3}
[ -f "$build/bench/core" ] && [ -x "$build/bench/bigheap" ] ||
	{ echo "gdb-heap: no $build/bench/core (run scripts/bench.sh first)" >&2; exit 77; }
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

# program_of DIR: the program whose core DIR/core is, from the first line
# of DIR/core.stamp (bench.sh's "KIND|ARGS...|COMMAND..."): redis's is
# redis-server, a program's the first absolute path not in a VAR=VALUE.
program_of() {
	local line f
	line=$(sed -n 1,1p "$1/core.stamp" 2>/dev/null) || return 1
	case $line in
	redis\|*) command -v redis-server; return ;;
	esac
	IFS='|' read -r -a f <<<"$line"
	for x in "${f[@]}"; do
		[[ $x == /* ]] && { printf '%s\n' "$x"; return; }
	done
	return 1
}

summary_rows=()
for dir in "$build/bench" "$build"/bench-*; do
	core=$dir/core
	[ -f "$core" ] || continue
	shape=${dir##*/bench-}
	[ "$dir" = "$build/bench" ] && shape=bigheap
	prog=$(program_of "$dir") && [ -x "$prog" ] ||
		{ echo "  $shape: no program for its core (stamp), skipped"; continue; }
	cat "$core" >/dev/null
	echo "gdb plugin on $core ($(du -h "$core" | cut -f1), $prog):"
	base=$(best gdb -nx -batch -x "$script" "$prog" "$core")
	printf '  %-26s %6s s\n' "gdb alone (load the core)" "$base"
	row="$shape"
	for cmd in bins ""; do
		dbg=$build/bench/gdb-heap.debug
		rm -f "$dbg"
		t=$(HEAPWALK_GDB_DEBUG=$dbg best gdb -nx -batch -iex 'set pagination off' \
			-x "$script" -ex "heap $cmd" "$prog" "$core")
		# The plugin's own time, best of the runs (its debug notes).
		own=$(sed -n 's/^served in \([0-9.]*\) s.*/\1/p' "$dbg" | sort -n | sed -n 1,1p)
		how=$(grep -m 1 '^core mapped' "$dbg" | sed 's/^core mapped: //')
		cli=$(best "$build/heapwalk" "$core" ${cmd:-summary})
		ratio=$(awk -v a="${own:-0}" -v b="$cli" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
		printf '  %-26s %6s s   (plugin %s s = %sx the tool: %s s; gdb beyond loading: %sx)\n' \
			"gdb heap ${cmd:-(summary)}" "$t" "${own:-?}" "$ratio" "$cli" \
			"$(awk -v a="$t" -v g="$base" -v b="$cli" 'BEGIN { printf "%.2f", (a - g) / b }')"
		[ -z "$how" ] || printf '  %-26s %s\n' "" "core: $how"
		row+=$(printf ' %8s %8s %6sx' "${own:-?}" "$cli" "$ratio")
	done
	summary_rows+=("$row")
done
echo
echo "gdb plugin vs the tool, each best of $runs (target: the plugin within 1.2x the tool):"
printf '%-10s %8s %8s %7s %8s %8s %7s\n' shape "bins s" "tool s" ratio "heap s" "tool s" ratio
for r in "${summary_rows[@]}"; do
	read -r -a f <<<"$r"
	printf '%-10s %8s %8s %7s %8s %8s %7s\n' "${f[@]}"
done
echo

# The unwinder's fast path: a 10,000-frame backtrace (a core of a program
# that recursed that deep), unwound afresh 5 times, with and without the
# plugin loaded.  gdb calls a JIT reader's unwind for every frame; the
# plugin answers with one fstatat when no request waits.
deep=$build/bench/deep
if [ ! -f "$deep.core" ] || [ "$deep.core" -ot "$0" ]; then
	printf '%s\n' '#include <stdlib.h>' \
		'__attribute__((noinline)) int down(int n) { if (n == 0) abort(); return down(n - 1) + 1; }' \
		'int main(void) { return down(10000); }' >"$deep.c"
	cc -O0 -g -o "$deep" "$deep.c"
	rm -f "$deep.core"
	# The kernel's core, wherever core_pattern puts it: ask gdb instead.
	gdb -nx -batch -ex run -ex "gcore $deep.core" "$deep" >/dev/null 2>&1 || true
fi
if [ -f "$deep.core" ]; then
	bts=()
	for _ in 1 2 3 4 5; do
		bts+=(-ex 'maintenance flush register-cache' -ex bt)
	done
	for w in without with; do
		load=()
		[ $w = with ] && load=(-x "$script")
		s=$(best gdb -nx -batch "${load[@]}" -ex 'set pagination off' "$deep" "$deep.core")
		b=$(best gdb -nx -batch "${load[@]}" -ex 'set pagination off' "${bts[@]}" "$deep" "$deep.core")
		per=$(awk -v s="$s" -v b="$b" 'BEGIN { printf "%.3f", (b - s) / 5 }')
		printf '  %-26s %6s s   (10,006 frames, %s the plugin)\n' "bt" "$per" "$w"
	done
else
	echo "  bt: no core of the deep program (gcore failed)"
fi
