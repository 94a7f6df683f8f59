#!/usr/bin/env bash
# live-big.sh - `heapwalk --pid` on a live process with a big heap
# (>= 1 GiB, >= 10 million chunks): how long the process is stopped, and
# the total time of `summary`, next to reading the same amount of memory.
#
# usage: scripts/bench/live-big.sh [BUILD_DIR]        (default: build)
#
# Builds scripts/bench/bigheap.c and memprobe.c into BUILD_DIR/bench-live/,
# runs `bigheap -w` (it builds its heap, prints its own counts and
# mallinfo2, says "ready" and waits alive), then measures, best of
# BENCH_RUNS runs (memprobe: wall time and peak RSS):
#   cat FILE > /dev/null          a file as big as heapwalk's snapshot of
#                                 the process (summary's live.snapshot_bytes,
#                                 else the heap's size), in the page cache
#   dd /proc/PID/mem              every writable private mapping of the
#                                 process, read while it runs
#   heapwalk --pid PID summary    (--json) stop time (live.stopped_ms) and
#                                 total time
#   heapwalk --pid PID --no-stop summary
#   gdb's `heap` and `heap bins` over gdbserver (the plugin), once, next
#                                 to gdb's own `dump binary memory` rate
# and prints the summary/cat ratio and whether heapwalk's mallinfo equals
# the program's own mallinfo2() (the process is idle: it must).
# `make bench` runs it after the core benchmarks (scripts/bench.sh).
#
# Environment (as scripts/bench.sh):
#   HEAPWALK       heapwalk to measure (default BUILD_DIR/heapwalk)
#   BENCH_RUNS     runs per command, the best wall time is reported (default 3)
#   BIGHEAP_ARGS   bigheap's arguments (default "4 2850000": 4 threads x
#                  2.85M allocations, about 10.7M chunks, 1.1 GiB)
#   BENCH_ALLOCATOR=jemalloc   bigheap on Debian bookworm's libjemalloc2
#                  (LD_PRELOAD, scripts/corpus/sysroot.sh jemalloc-5.3.0-amd64)
# Exit status: 0, 1 when a measured command failed, 77 (nothing measured)
# when this heapwalk has no --pid.  Needs about 2.5x the heap in memory
# (the process, heapwalk's copy) and the heap's size on disk for the file.
set -euo pipefail

die() { printf 'live-big: %s\n' "$*" >&2; exit 1; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
out=$build/bench-live
mkdir -p "$out"
hw=${HEAPWALK:-$build/heapwalk}
runs=${BENCH_RUNS:-3}
read -r -a bigheap_args <<<"${BIGHEAP_ARGS:-4 2850000}"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer"
command -v "$hw" >/dev/null 2>&1 || die "heapwalk not found: $hw (run make first, or set HEAPWALK)"
allocator=${BENCH_ALLOCATOR:-ptmalloc}
preload=
case $allocator in
ptmalloc) ;;
jemalloc)
	preload=$("$top/scripts/bench/jemalloc-preload.sh" "$build") || exit 1
	;;
*) die "BENCH_ALLOCATOR must be ptmalloc or jemalloc" ;;
esac

for prog in bigheap memprobe; do
	src=$top/scripts/bench/$prog.c
	if [[ ! -x $out/$prog || $src -nt $out/$prog ]]; then
		"${CC:-gcc}" -std=c11 -O2 -g -pthread -Wall -Wextra -Werror \
			-o "$out/$prog.tmp" "$src" -ldl || die "cannot build $prog"
		mv -f "$out/$prog.tmp" "$out/$prog"
	fi
done

work=$(mktemp -d "$out/run.XXXXXX")
pid=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [[ -n $pid ]]; then
		kill -KILL "$pid" 2>/dev/null || true
		{ wait "$pid"; } 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# ---- the process -------------------------------------------------------
t0=$(date +%s.%N)
(exec env ${preload:+LD_PRELOAD=$preload} "$out/bigheap" -w "${bigheap_args[@]}" \
	>"$work/bigheap.out" 2>&1 </dev/null) &
pid=$!
for ((i = 0; i < 6000; i++)); do # 10 minutes at most to build the heap
	grep -qx ready "$work/bigheap.out" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || die "bigheap exited early: $(tail -n 1 "$work/bigheap.out")"
	sleep 0.1
done
grep -qx ready "$work/bigheap.out" || die "bigheap did not get ready in 10 minutes"
t1=$(date +%s.%N)
field() { sed -n "s/^$1=//p" "$work/bigheap.out" | sed -n 1,1p; }
allocs=$(field allocs)
live=$(field live)
heap_bytes=$(field heap_bytes)

# Is there a --pid at all?
rc=0
"$hw" --pid "$pid" --json summary >"$work/probe.json" 2>"$work/probe.err" || rc=$?
if [[ $rc == 3 ]] && grep -q 'not supported' "$work/probe.err"; then
	echo "live-big: $hw has no --pid: $(head -n1 "$work/probe.err"); nothing measured" >&2
	exit 77
fi
snap=$(grep -o '"snapshot_bytes" *: *[0-9]*' "$work/probe.json" | sed -n 1,1p | sed 's/.*: *//' || true)
size=${snap:-$heap_bytes}

# ---- measurements ------------------------------------------------------
# measure OUTFILE CMD...: best wall time of $runs runs, largest peak RSS;
# sets m_wall m_rss m_status, and m_ms (the stopped_ms of each run).
measure() {
	local outfile=$1 rep line w r s ms
	shift
	m_wall='' m_rss=0 m_status=0 m_ms=()
	for ((rep = 0; rep < runs; rep++)); do
		s=0
		"$out/memprobe" -o "$work/probe.txt" -- "$@" >"$outfile" 2>"$work/probe.err" || s=$?
		line=$(cat "$work/probe.txt")
		w=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$line")
		r=$(sed -n 's/.*maxrss_kib=\([0-9-]*\).*/\1/p' <<<"$line")
		if [[ -z $m_wall ]] || awk -v x="$w" -v y="$m_wall" 'BEGIN { exit !(x < y) }'; then
			m_wall=$w
		fi
		((r > m_rss)) && m_rss=$r
		((s != 0)) && m_status=$s
		if [[ $outfile != /dev/null ]]; then
			ms=$(grep -o '"stopped_ms" *: *[0-9.eE+-]*' "$outfile" | sed -n 1,1p | sed 's/.*: *//' || true)
			m_ms+=("${ms:-?}")
		fi
	done
}

failed=0
rows=()
row() { # row LABEL [EXTRA]
	local st=
	if ((m_status != 0)); then
		st="  FAILED (exit $m_status: $(head -n 1 "$work/probe.err" | cut -c 1-200))"
		failed=1
	fi
	rows+=("$(printf '%-44s %9s %13s  %s%s' "$1" "$m_wall" \
		"$(awk -v k="$m_rss" 'BEGIN { printf "%.1f", k / 1024 }')" "${2:-}" "$st")")
}

# The same amount of memory from a file in the page cache.
mib=$(((size + 1048575) / 1048576))
dd if=/dev/zero of="$work/same-size" bs=1M count="$mib" status=none
cat "$work/same-size" >/dev/null
measure /dev/null cat "$work/same-size"
cat_wall=$m_wall
row "cat $mib MiB file > /dev/null"
rm -f "$work/same-size"

# The process's own writable memory, read while it runs.
cat >"$work/readmem.sh" <<'EOF'
pid=$1
while read -r range perms _ _ _ _; do
	[[ $perms == rw?p ]] || continue
	lo=$((16#${range%-*})) hi=$((16#${range#*-}))
	dd if=/proc/"$pid"/mem of=/dev/null bs=1M iflag=skip_bytes,count_bytes \
		skip="$lo" count=$((hi - lo)) status=none 2>/dev/null || true
done </proc/"$pid"/maps
EOF
mapped=0
while read -r range perms _; do
	[[ $perms == rw?p ]] || continue
	mapped=$((mapped + 16#${range#*-} - 16#${range%-*}))
done <"/proc/$pid/maps"
mapped=$((mapped / 1048576))
measure /dev/null bash "$work/readmem.sh" "$pid"
row "dd /proc/PID/mem (rw mappings, $mapped MiB)"

measure "$work/summary.json" "$hw" --pid "$pid" --json summary
sum_wall=$m_wall
sum_status=$m_status
row "heapwalk --pid PID --json summary" "stopped ms: ${m_ms[*]}"
measure "$work/nostop.json" "$hw" --pid "$pid" --no-stop --json summary
row "heapwalk --pid PID --no-stop --json summary" "stopped ms: ${m_ms[*]}"

# gdb's `heap` over gdbserver (attached to the running process, on a TCP
# port of this machine, as users run it; gdb's pipe route, `target remote
# | gdbserver -`, reads its replies a byte per read() and is several
# times slower), once each: it is bounded by gdb's remote protocol, which
# reads memory in hex `m` packets of at most about 9 KiB on gdb 13.  Next
# to it, gdb's own floor: `dump binary memory` of the process's largest
# writable mapping, as MiB/s, and that rate over all of them.
script=${GDB_SCRIPT:-$build/plugin/heapwalk.gdb}
gs_rows=()
if command -v gdb >/dev/null && command -v gdbserver >/dev/null && [[ -f $script ]]; then
	read -r big_lo big_hi < <(while read -r range perms _; do
		[[ $perms == rw?p ]] || continue
		echo "$((16#${range#*-} - 16#${range%-*})) ${range%-*} ${range#*-}"
	done <"/proc/$pid/maps" | sort -n | tail -n 1 | cut -d' ' -f2-)
	gs_time() { # gs_time GDB-ARGS...: wall seconds of one gdb run
		local s e port= i gs
		# Emptied here, not by the background job's redirection: that
		# one may come after the loop below has read the last run's
		# port, and gdb then waits on a port nobody listens on.
		: >"$work/gdbserver.log"
		gdbserver --once --attach 127.0.0.1:0 "$pid" >>"$work/gdbserver.log" 2>&1 &
		gs=$!
		for ((i = 0; i < 100 && !port; i++)); do
			port=$(sed -n 's/^Listening on port \([0-9]*\)$/\1/p' "$work/gdbserver.log")
			[[ $port ]] || sleep 0.1
		done
		s=$(date +%s.%N)
		local ok=1
		timeout -k 10 1200 gdb -nx -batch -iex 'set pagination off' \
			-ex "target remote 127.0.0.1:${port:-0}" "$@" -ex detach "$out/bigheap" \
			>"$work/gs.out" 2>&1 || { ok=0; echo "FAILED" >>"$work/gs.out"; }
		e=$(date +%s.%N)
		# A gdb that failed (maybe never connected) leaves gdbserver
		# --once waiting; one that detached has let it end.
		((ok)) || kill "$gs" 2>/dev/null || true
		wait "$gs" 2>/dev/null || true
		awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }'
	}
	attach=$(gs_time)
	dump=$(gs_time -ex "dump binary memory /dev/null 0x$big_lo 0x$big_hi")
	big_mib=$(((16#$big_hi - 16#$big_lo) / 1048576))
	rate=$(awk -v d="$dump" -v a="$attach" -v m="$big_mib" 'BEGIN { t = d - a; printf "%.1f", (t > 0 ? m / t : 0) }')
	gs_rows+=("$(printf '%-44s %9s   (gdb attach and detach alone: %s s)' \
		"gdb dump binary memory, $big_mib MiB" "$dump" "$attach")")
	gs_rows+=("$(printf '%-44s %9s   (%s MiB/s; all %s MiB of rw mappings at that rate)' \
		"  = gdb's floor for the whole heap" \
		"$(awk -v r="$rate" -v m="$mapped" 'BEGIN { printf "%.1f", (r > 0 ? m / r : 0) }')" "$rate" "$mapped")")
	for cmd in "heap" "heap bins"; do
		t=$(gs_time -x "$script" -ex "$cmd")
		own=$(sed -n 's/^(heapwalk: \([0-9.]*\) s)$/\1/p' "$work/gs.out")
		st=$(grep -m1 -E '^FAILED|^heapwalk: ' "$work/gs.out" || true)
		[[ $st == FAILED ]] && failed=1
		gs_rows+=("$(printf '%-44s %9s   (plugin %s s)%s' "gdb $cmd over gdbserver" "$t" \
			"${own:-<1}" "${st:+  $st}")")
	done
else
	gs_rows+=("gdb over gdbserver: skipped (no gdb, gdbserver or $script)")
fi

# ---- report --------------------------------------------------------------
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }
echo "heapwalk live bench: $hw --pid on bigheap ($allocator${preload:+, $preload})"
printf '%-22s %s (%s bytes, %s); heapwalk snapshot %s\n' "heap" "$(gib "$heap_bytes")" \
	"$heap_bytes" "$(field heap_how)" "$(if [[ -n $snap ]]; then gib "$snap"; else echo "unknown (no live.snapshot_bytes)"; fi)"
printf '%-22s %s (%s live; bigheap %s), built in %s s\n' "chunks allocated" "$allocs" "$live" \
	"${bigheap_args[*]}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
echo
printf '%-44s %9s %13s\n' "command" "wall(s)" "peak RSS(MiB)"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${gs_rows[@]}"
echo
if ((sum_status == 0)) && awk -v c="$cat_wall" 'BEGIN { exit !(c > 0) }'; then
	awk -v s="$sum_wall" -v c="$cat_wall" 'BEGIN {
		printf "summary/cat time ratio  %.2fx (--pid, the copy of the process included)\n", s / c }'
fi
mi_line=$(sed -n 's/^mallinfo //p' "$work/bigheap.out")
if [[ -n $mi_line && $allocator == ptmalloc ]] && grep -q '"mallinfo"' "$work/summary.json"; then
	mi_json=$(grep -o '"mallinfo":{[^}]*}' "$work/summary.json" || true)
	mismatch=()
	for kv in $mi_line; do
		k=${kv%%=*} v=${kv#*=}
		got=$(grep -o "\"$k\":[0-9]*" <<<"$mi_json" | sed -n 1,1p | cut -d: -f2 || true)
		[[ $got == "$v" ]] || mismatch+=("$k: program $v, heapwalk ${got:-missing}")
	done
	if ((${#mismatch[@]} == 0)); then
		echo "mallinfo vs program     equal"
	else
		printf 'mallinfo vs program     DIFFERENT: %s\n' "$(printf '%s; ' "${mismatch[@]}")"
		failed=1
	fi
fi
if ! kill -0 "$pid" 2>/dev/null; then
	echo "bigheap is gone after the measurements"
	failed=1
elif grep -qE '^State:[[:space:]]*[tT]' /proc/"$pid"/task/*/status 2>/dev/null; then
	echo "bigheap is left stopped after the measurements"
	failed=1
fi
exit "$failed"
