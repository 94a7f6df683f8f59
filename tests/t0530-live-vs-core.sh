#!/bin/bash
# heapwalk --pid on a live process (tests/helper/live-mix.c: 5 threads, 4
# with arenas of their own, small, large and mmapped blocks, a third
# freed) reads what a core of the same process holds: every command's
# JSON equals heapwalk's on a gcore of it (the core path is the one the
# corpus tests check against the programs' own truth), and the mmapped
# chunk count is the program's own (5 threads x 28).  With --no-stop too.
# Around it: the process is never left traced or stopped, a SIGUSR1 sent
# before the attach is still pending after it, every kept block is
# unchanged (the program checks itself at the end); SIGINT at random
# moments and a closed output pipe release it; a dead pid is exit 3.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd gcc timeout
if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -ge 1 ] &&
	[ "$(id -u)" != 0 ]; then
	skip "kernel.yama.ptrace_scope forbids tracing a non-child as non-root"
fi
gcc -std=c11 -D_GNU_SOURCE -O1 -pthread -o "$T/live-mix" "$TOP/tests/helper/live-mix.c"

mkfifo "$T/in"
"$T/live-mix" <"$T/in" >"$T/out" &
pid=$!
birth=$(proc_birth "$pid")
exec 3>"$T/in"
cleanup() {
	exec 3>&- 2>/dev/null || true
	kill_same TERM "$pid" "$birth" || true
	rm -rf "$T"
}
trap cleanup EXIT
# As long as it takes (a busy machine), while it lives.
for _ in $(seq 3000); do
	grep -q ready "$T/out" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
grep -q ready "$T/out" || fail "live-mix did not start"
kill_same USR1 "$pid" "$birth" || fail "live-mix has ended"

# The process is running, untraced, and no thread of it is stopped.
released() {
	local st tr
	tr=$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")
	[ "$tr" = 0 ] || fail "$1: pid $pid still traced by $tr"
	for st in /proc/"$pid"/task/*/status; do
		case $(awk '/^State:/ { print $2 }' "$st") in
		t | T) fail "$1: a thread of pid $pid is left stopped ($st)" ;;
		esac
	done
}

hw() { timeout -k 5 120 "$HEAPWALK" "$@"; }

hw --pid "$pid" --json summary >"$T/summary.json"
released "summary"
grep -q '"live":{"pid":'"$pid"',"stopped_ms":[0-9.]*,"snapshot_bytes":[1-9][0-9]*,"no_stop":false' \
	"$T/summary.json" || fail "summary has no live object: $(head -c 300 "$T/summary.json")"
grep -q '"mmapped_chunks":140,' "$T/summary.json" ||
	fail "expected 140 mmapped chunks: $(grep -o '"mmapped_chunks":[0-9]*' "$T/summary.json")"
grep -q '"arenas":5,' "$T/summary.json" || fail "expected 5 arenas"
hw --pid "$pid" summary | has "^live: *pid $pid, stopped" || fail "no live: line"

if command -v gcore >/dev/null 2>&1; then
	gcore -o "$T/core" "$pid" >/dev/null 2>&1 || fail "gcore failed"
	released "gcore"
	core=$T/core.$pid
	for c in chunks bins sizes arenas frag check "chunks --free"; do
		# shellcheck disable=SC2086 # the command's words
		hw --json --pid "$pid" $c >"$T/live.json" || [ $? = 1 ]
		# shellcheck disable=SC2086
		hw --json "$core" $c >"$T/core.json" || [ $? = 1 ]
		cmp -s "$T/live.json" "$T/core.json" ||
			fail "$c: --pid differs from the core: $(diff "$T/live.json" "$T/core.json" | sed -n 1,4p)"
		# shellcheck disable=SC2086
		hw --json --no-stop --pid "$pid" $c >"$T/nostop.json" || [ $? = 1 ]
		cmp -s "$T/nostop.json" "$T/core.json" ||
			fail "$c --no-stop: differs from the core"
	done
	released "commands"
	say "every command's JSON equal to the gcore core's, with and without --no-stop"
else
	say "gdb's gcore missing: comparison with a core skipped"
fi

# A closed output pipe: quiet exit 0, process let go.
hw --pid "$pid" chunks | head -n 1 >/dev/null # SIGPIPE on purpose
released "closed pipe"

# SIGINT, SIGTERM, SIGHUP at random moments of runs on the process.
seed=${LIVE_SEED:-$RANDOM}
RANDOM=$seed
say "signal delays from seed $seed"
for sig in INT TERM HUP INT TERM HUP; do
	"$HEAPWALK" --pid "$pid" chunks >/dev/null 2>&1 &
	h=$!
	hb=$(proc_birth "$h")
	sleep "0.0$((RANDOM % 10))"
	kill_same "$sig" "$h" "$hb" || true
	wait "$h" || true
	released "SIG$sig"
done

# A process that is gone: one line, exit 3.
true &
dead=$!
wait "$dead"
st=0
hw --pid "$dead" summary 2>"$T/err" >/dev/null || st=$?
[ "$st" = 3 ] || fail "dead pid: exit $st, expected 3"
grep -q "^heapwalk: pid $dead: no such process" "$T/err" || fail "dead pid: $(cat "$T/err")"

# The program checks itself: blocks intact, SIGUSR1 still pending.
echo signal >&3
for _ in $(seq 3000); do
	grep -q -e '^OK' -e '^FAIL' "$T/out" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
grep -q '^OK' "$T/out" || fail "live-mix: $(tail -n 1 "$T/out")"
wait "$pid" || fail "live-mix exited $?"
say "the process resumed intact, its pending signal kept"
