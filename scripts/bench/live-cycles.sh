#!/usr/bin/env bash
# live-cycles.sh - many attach/analyse/detach cycles of `heapwalk --pid`
# on a busy program, counting every harm done to it and every failure.
# A benchmark and soak test, not a CI test (N cycles take about N x 0.3 s).
#
# usage: scripts/bench/live-cycles.sh [-n N] [-a ptmalloc|jemalloc|both]
#                                     [-k K] [BUILD_DIR]
#   -n N   cycles per allocator (default 1000): odd cycles stop the
#          target (the default snapshot), even ones use --no-stop
#   -a A   ptmalloc (glibc's malloc, the default), jemalloc (Debian
#          bookworm's libjemalloc.so.2 5.3.0 through LD_PRELOAD, from
#          scripts/corpus/sysroot.sh jemalloc-5.3.0-amd64: network the
#          first time) or both
#   -k K   ask the target for its progress every K cycles (default 10)
#   BUILD_DIR (default build): heapwalk is BUILD_DIR/heapwalk unless
#          HEAPWALK names another; busy16 is built into BUILD_DIR/bench-live/
#   `make bench-live` runs it with the defaults; BUSY16_ARGS (default
#   empty) are passed to busy16, e.g. "-p 0" for every core busy.
#
# The target is scripts/bench/busy16.c: 16 threads allocating and freeing
# without end (mixed sizes, some mmapped), every block carrying a canary
# that is checked before it is freed (a changed block aborts it).  Each
# cycle runs `heapwalk --pid PID [--no-stop] --json summary` (60 s at
# most), then checks the target:
#   crash     it is gone (died of a signal: a canary abort, or a fault)
#   stopped   a thread is left stopped (state t or T) or traced (TracerPid);
#             it is sent SIGCONT / restarted and the count goes on
#   hang      every K cycles busy16 reports its threads' progress: no
#             answer within 10 s, or a thread that made no step since the
#             last report
# and heapwalk:
#   failure   any exit status but 0, a hang (timeout), except
#   torn      under --no-stop, a run that says its view was torn: exit 0
#             with "partial" or findings, or an error naming it (torn,
#             changed, moved, inconsistent) -- counted, not a failure
#   (stopped snapshots with findings or partial totals are counted too,
#   as a figure: a thread stopped inside malloc may leave a list half
#   updated)
# At the end: the counts, and the median and maximum of summary's
# live.stopped_ms and of the wall time, for each mode.  Exit status 0 when
# there was no crash, stopped, hang or failure; 1 otherwise; 77 when this
# heapwalk has no --pid (nothing is measured).
set -euo pipefail

die() { printf 'live-cycles: %s\n' "$*" >&2; exit 1; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
n=1000 alloc=ptmalloc every=10
while getopts n:a:k: opt; do
	case $opt in
	n) n=$OPTARG ;;
	a) alloc=$OPTARG ;;
	k) every=$OPTARG ;;
	*) die "usage: live-cycles.sh [-n N] [-a ptmalloc|jemalloc|both] [-k K] [BUILD_DIR]" ;;
	esac
done
shift $((OPTIND - 1))
[[ $n =~ ^[1-9][0-9]*$ ]] || die "-n must be a positive integer"
[[ $every =~ ^[1-9][0-9]*$ ]] || die "-k must be a positive integer"
case $alloc in ptmalloc | jemalloc | both) ;; *) die "-a must be ptmalloc, jemalloc or both" ;; esac
build=${1:-build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
hw=${HEAPWALK:-$build/heapwalk}
command -v "$hw" >/dev/null 2>&1 || die "heapwalk not found: $hw (run make first, or set HEAPWALK)"
read -r -a busy_args <<<"${BUSY16_ARGS:-}"
out=$build/bench-live
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/live-cycles.XXXXXX")

src=$top/scripts/bench/busy16.c
if [[ ! -x $out/busy16 || $src -nt $out/busy16 ]]; then
	"${CC:-cc}" -std=c11 -O2 -g -pthread -Wall -Wextra -Werror -o "$out/busy16.tmp" "$src" ||
		die "cannot build $src"
	mv -f "$out/busy16.tmp" "$out/busy16"
fi

# ---- the target ----------------------------------------------------------
pid='' fd='' preload=''
stop_target() {
	if [[ -n $fd ]]; then eval "exec $fd>&-"; fi
	fd=
	if [[ -n $pid ]]; then
		kill -KILL "$pid" 2>/dev/null || true
		{ wait "$pid"; } 2>/dev/null || true
	fi
	pid=
}
trap 'stop_target; rm -rf "$work"' EXIT

start_target() {
	local i
	rm -f "$work/in" "$work/out" "$work/err"
	mkfifo "$work/in"
	(exec env ${preload:+LD_PRELOAD=$preload} "$out/busy16" "${busy_args[@]}" \
		<"$work/in" >"$work/out" 2>"$work/err") &
	pid=$!
	exec {fd}>"$work/in"
	for ((i = 0; i < 300; i++)); do
		grep -qx ready "$work/out" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || die "busy16 exited at start: $(head -c 300 "$work/err")"
		sleep 0.05
	done
	grep -qx ready "$work/out" || die "busy16 did not start in 15 s"
	answers=0 last_min=-1
}

# progress: ask busy16; sets prog_ok=1 when it answered and every thread
# made progress since the last answer.
progress() {
	local i line min
	prog_ok=0
	echo >&"$fd" || return 0
	answers=$((answers + 1))
	for ((i = 0; i < 100; i++)); do
		line=$(grep '^ops ' "$work/out" | sed -n "${answers}p")
		[[ -n $line ]] && break
		sleep 0.1
	done
	[[ -n $line ]] || { prog_why="no answer in 10 s"; return 0; }
	min=${line##* }
	if ((min <= last_min)); then
		prog_why="a thread made no step since the last answer ($line)"
	else
		prog_ok=1
	fi
	last_min=$min
}

# state_bad: a thread of the target stopped or traced (prints which).
state_bad() {
	local f st tr
	for f in /proc/"$pid"/task/*/status; do
		st=$(sed -n 's/^State:[[:space:]]*//p' "$f" 2>/dev/null) || continue
		tr=$(sed -n 's/^TracerPid:[[:space:]]*//p' "$f" 2>/dev/null) || continue
		case $st in t* | T*)
			echo "thread ${f%/status}: State $st"
			return 0 ;;
		esac
		if [[ -n $tr && $tr != 0 ]]; then
			echo "thread ${f%/status}: TracerPid $tr"
			return 0
		fi
	done
	return 1
}

# stats NAME VALUES...: "median M, max X (K runs)".
stats() {
	local name=$1
	shift
	if (($# == 0)); then
		printf '%-34s n/a\n' "$name"
		return
	fi
	printf '%s\n' "$@" | sort -g | awk -v name="$name" '
		{ v[NR] = $1 }
		END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%-34s median %.3f, max %.3f (%d runs)\n", name, m, v[NR], NR }'
}

status=0
run_allocator() {
	local a=$1 i mode rc t0 t1 ms why line
	local crashes=0 stopped=0 hangs=0 failures=0 torn=0 ok=0 odd=0
	local -a stop_ms=() nostop_ms=() stop_wall=() nostop_wall=()
	preload=
	if [[ $a == jemalloc ]]; then
		preload=$("$top/scripts/bench/jemalloc-preload.sh" "$build") || exit 1
	fi
	start_target
	echo "live-cycles: $n cycles of $hw --pid on busy16 (${a}${preload:+, $preload}; ${BUSY16_ARGS:-default load}), pid $pid"
	for ((i = 1; i <= n; i++)); do
		mode=stop
		((i % 2)) || mode=no-stop
		local opt=()
		[[ $mode == stop ]] || opt=(--no-stop)
		t0=$(date +%s%N)
		rc=0
		timeout -k 5 60 "$hw" --pid "$pid" "${opt[@]}" --json summary \
			>"$work/hw.out" 2>"$work/hw.err" || rc=$?
		t1=$(date +%s%N)
		if ((i == 1)) && [[ $rc == 3 ]] && grep -q 'not supported' "$work/hw.err"; then
			echo "live-cycles: $hw has no --pid: $(head -n1 "$work/hw.err")" >&2
			exit 77
		fi
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')

		# The target first.
		if ! kill -0 "$pid" 2>/dev/null; then
			local trc=0
			wait "$pid" || trc=$?
			crashes=$((crashes + 1))
			echo "  cycle $i ($mode): busy16 is gone (exit $trc): $(tail -n 2 "$work/err" | tr '\n' ' ')"
			pid='' fd=''
			start_target
			continue
		fi
		if why=$(state_bad); then
			stopped=$((stopped + 1))
			echo "  cycle $i ($mode): the target is left stopped or traced: $why"
			kill -CONT "$pid" 2>/dev/null || true
			sleep 0.2
			if state_bad >/dev/null; then
				stop_target
				start_target
				continue
			fi
		fi
		if ((i % every == 0)); then
			progress
			if ((prog_ok == 0)); then
				hangs=$((hangs + 1))
				echo "  cycle $i ($mode): the target hangs: $prog_why"
				stop_target
				start_target
				continue
			fi
		fi

		# Then heapwalk.
		if [[ $rc == 0 ]]; then
			ok=$((ok + 1))
			ms=$(grep -o '"stopped_ms" *: *[0-9.eE+-]*' "$work/hw.out" | sed -n 1,1p | sed 's/.*: *//' || true)
			if [[ $mode == stop ]]; then
				stop_wall+=("$wall")
				[[ -z $ms ]] || stop_ms+=("$ms")
				if grep -qE '"partial" *: *true|"findings" *: *[1-9]' "$work/hw.out"; then
					odd=$((odd + 1))
				fi
			else
				nostop_wall+=("$wall")
				[[ -z $ms ]] || nostop_ms+=("$ms")
				if grep -qE '"partial" *: *true|"findings" *: *[1-9]' "$work/hw.out"; then
					torn=$((torn + 1))
				fi
			fi
		elif [[ $mode == no-stop && $rc != 124 && $rc != 137 ]] &&
			grep -qiE 'torn|chang|moved|inconsisten' "$work/hw.err"; then
			torn=$((torn + 1))
		else
			failures=$((failures + 1))
			line=$(head -n1 "$work/hw.err")
			((rc == 124 || rc == 137)) && line="hung (killed after 60 s)"
			if ((failures <= 10)); then
				echo "  cycle $i ($mode): heapwalk exit $rc: $line"
			fi
		fi
		if ((i % 100 == 0)); then
			echo "  ... $i cycles: $crashes crashes, $stopped stopped, $hangs hangs, $failures failures, $torn torn"
		fi
	done
	progress
	if ((prog_ok == 0)); then
		hangs=$((hangs + 1))
		echo "  at the end: the target hangs: $prog_why"
	fi
	stop_target

	echo
	echo "live-cycles ($a): $n cycles, heapwalk exit 0 in $ok"
	printf '%-34s %d\n' "target crashes" "$crashes" "target left stopped or traced" "$stopped" \
		"target hangs" "$hangs" "heapwalk failures" "$failures" \
		"torn reads declared (--no-stop)" "$torn" \
		"stopped snapshots with findings" "$odd"
	stats "live.stopped_ms (stop)" ${stop_ms[@]+"${stop_ms[@]}"}
	stats "live.stopped_ms (--no-stop)" ${nostop_ms[@]+"${nostop_ms[@]}"}
	stats "wall ms (stop)" ${stop_wall[@]+"${stop_wall[@]}"}
	stats "wall ms (--no-stop)" ${nostop_wall[@]+"${nostop_wall[@]}"}
	if ((crashes + stopped + hangs + failures == 0)); then
		echo "result ($a): 0 crashes, 0 hangs, 0 heapwalk failures: MET"
	else
		echo "result ($a): NOT MET"
		status=1
	fi
	echo
}

case $alloc in
both)
	run_allocator ptmalloc
	run_allocator jemalloc
	;;
*) run_allocator "$alloc" ;;
esac
exit $status
