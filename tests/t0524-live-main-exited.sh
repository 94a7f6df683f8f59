#!/bin/bash
# --pid of a process whose main thread has ended (pthread_exit) while its
# other threads run on: the main thread is a zombie, and the kernel shows
# nothing under its /proc/PID (maps empty, exe and auxv unreadable, mem
# without memory) -- the process's memory is seen through a running
# thread's /proc/TID.  heapwalk must read the process (not call it a
# zombie, as it once did), attach the live threads (the zombie one
# refuses PTRACE_SEIZE with EPERM: no question of rights), and let all
# go.  The target (livetarget main-exit) says how many blocks its threads
# hold; every one must be counted in use.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
[ "$LIVE_STANDIN" != gcore ] || skip "needs heapwalk --pid itself (no stand-in)"
need_live

target=$(helper livetarget)
live_start gone "$target" main-exit 2 3000
pid=${LIVE_PID[gone]}
state=$(sed -n 's/^State:[[:space:]]*//p' "/proc/$pid/status")
case $state in
Z*) ;;
*) fail "the main thread of $pid is not a zombie: State $state" ;;
esac
[ ! -s "/proc/$pid/maps" ] ||
	say "note: this kernel shows a zombie main thread's maps"
held=$(sed -n 's/^live //p' "$T/live.gone.out")
[ -n "$held" ] || fail "the target did not say how many blocks it holds"

hw_live gone "$T/summary" "$T/summary.err" --json summary
expect_rc 0
live_untraced gone "heapwalk --pid summary"
hw_live gone "$T/leaks" "$T/leaks.err" leaks
expect_rc 0
live_untraced gone "heapwalk --pid leaks"
used=$(grep -o '"used":{"count":[0-9]*' "$T/summary" | sed -n '1s/.*://p')
[ -n "$used" ] || fail "summary has no used count: $(head -c 300 "$T/summary")"
# The workers' blocks, their two arrays each, and what the threads'
# start-up took: at most a few dozen more.
((used >= held && used <= held + 64)) ||
	fail "summary counts $used blocks in use; the threads hold $held (+ at most 64)"
grep -qE '^definitely lost: +0 chunks' "$T/leaks" ||
	fail "leaks: blocks the workers hold are called lost: $(head -c 400 "$T/leaks")"
live_check gone
# It ends at the end of its stdin (as "many" does).
eval "exec ${LIVE_FD[gone]}>&-"
wait "$pid" || fail "livetarget main-exit exited $? at the end"
unset "LIVE_PID[gone]" "LIVE_FD[gone]"
say "main thread a zombie (State $state): summary $used in use (the threads hold $held), leaks none lost; let go, self-check OK"
