#!/usr/bin/env bash
# The soak of "a live target never dies of heapwalk": heapwalk --pid on a
# live process, signalled (SIGINT, SIGTERM or SIGHUP, at random) a random
# 0-99 ms after it starts, thousands of times, while busy loops keep every
# CPU loaded; after each run the target must be alive, no thread of it
# stopped or traced; at the end the target's own check must pass (every
# kept block unchanged, not traced, the SIGUSR1 sent before the first run
# still pending and delivered once).
#
# usage: scripts/bench/live-signals.sh [BUILD_DIR] [RUNS]
#        (default build, 2000 runs; SOAK_SEED fixes the delays; SOAK_LOAD=0
#        runs without the busy loops)
# Exit 0 clean, 1 on a finding (the run number, its delay and signal are
# printed), 77 when this heapwalk cannot trace a process here.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
runs=${2:-2000}
hw=${HEAPWALK:-$build/heapwalk}
seed=${SOAK_SEED:-$RANDOM}
RANDOM=$seed
work=$(mktemp -d)
pid= loads=()
cleanup() {
	exec 3>&- 2>/dev/null || true
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	for l in "${loads[@]}"; do kill "$l" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -ge 1 ] &&
	[ "$(id -u)" != 0 ]; then
	echo "live-signals: kernel.yama.ptrace_scope forbids tracing here" >&2
	exit 77
fi
"${CC:-gcc}" -std=c11 -D_GNU_SOURCE -O1 -pthread -o "$work/live-mix" \
	"$top/tests/helper/live-mix.c"

mkfifo "$work/in"
"$work/live-mix" <"$work/in" >"$work/out" &
pid=$!
exec 3>"$work/in"
# Ready is a line the program writes once every thread parked: a state.
for _ in $(seq 3000); do
	grep -q ready "$work/out" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
grep -q ready "$work/out" || { echo "live-signals: live-mix did not start" >&2; exit 1; }
kill -USR1 "$pid"

if [ "${SOAK_LOAD:-1}" != 0 ]; then
	for _ in $(seq "$(nproc)"); do
		sh -c 'while :; do :; done' &
		loads+=($!)
	done
fi

# The target's state after a run: alive, untraced, no thread stopped.
check_target() {
	local f st tr
	[ -e "/proc/$pid/status" ] || return 1
	for f in /proc/"$pid"/task/*/status; do
		st=$(awk '/^State:/ { print $2 }' "$f" 2>/dev/null) || continue
		tr=$(awk '/^TracerPid:/ { print $2 }' "$f" 2>/dev/null) || continue
		case $st in t | T) return 2 ;; esac
		[ -z "$tr" ] || [ "$tr" = 0 ] || return 3
	done
	return 0
}

sigs=(INT TERM HUP)
by_sig=0 finished=0
t0=$(date +%s)
for ((i = 1; i <= runs; i++)); do
	delay=$((RANDOM % 100)) sig=${sigs[RANDOM % 3]}
	"$hw" --pid "$pid" chunks >/dev/null 2>&1 &
	h=$!
	sleep "$(printf '0.%03d' "$delay")"
	kill -"$sig" "$h" 2>/dev/null || true
	rc=0
	wait "$h" 2>/dev/null || rc=$?
	if [ $rc -ge 128 ]; then by_sig=$((by_sig + 1)); else finished=$((finished + 1)); fi
	st=0
	check_target || st=$?
	if [ $st != 0 ]; then
		what=(alive gone stopped traced)
		echo "live-signals: run $i (seed $seed, SIG$sig after $delay ms): the target is ${what[st]}" >&2
		[ $st = 1 ] && { wait "$pid" 2>/dev/null; echo "live-signals: its exit status: $?" >&2; }
		pid=
		exit 1
	fi
done
echo signal >&3
wait "$pid" || { echo "live-signals: the target's own check: $(tail -n 1 "$work/out")" >&2; pid=; exit 1; }
pid=
echo "live-signals: $runs runs in $(($(date +%s) - t0)) s (seed $seed, $(nproc) busy loops: ${SOAK_LOAD:-1}):" \
	"$by_sig ended by the signal, $finished finished first; the target alive, untraced and" \
	"intact after each, its pending SIGUSR1 kept: $(tail -n 1 "$work/out")"
