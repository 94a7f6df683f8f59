#!/bin/bash
# --pid of a process that holds no heap heapwalk could read, whoever runs
# it, is refused in one line that says what the process is, not as a
# question of rights ("run heapwalk as root" said to root): heapwalk
# itself, a zombie (exited, not reaped: a shell's child that exec'd a
# program which never waits), a kernel thread (found by PF_KTHREAD in
# /proc/PID/stat; skipped when this system shows none).  Exit 3 each time.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
[ "$LIVE_STANDIN" != gcore ] || skip "needs heapwalk --pid itself (no stand-in)"
need_cmd timeout

# refused NAME WANT PID: exit 3, one "heapwalk: " line matching WANT.
refused() {
	local name=$1 want=$2 pid=$3
	hw "$T/$name.out" "$T/$name.err" --pid "$pid" summary
	expect_rc 3
	one_error_line "$T/$name.err" "$name"
	grep -qE "$want" "$T/$name.err" ||
		fail "$name: the message does not say what pid $pid is: $(cat "$T/$name.err")"
	! grep -q "as root" "$T/$name.err" ||
		fail "$name: the message asks for root: $(cat "$T/$name.err")"
	say "$name: $(cat "$T/$name.err")"
}

# Itself: the shell's pid, taken over by heapwalk through exec.
timeout -k 5 60 sh -c 'exec "$0" --pid $$ summary' "$HEAPWALK" \
	>"$T/self.out" 2>"$T/self.err" && fail "--pid of itself: exit 0"
grep -q "is heapwalk itself" "$T/self.err" ||
	fail "--pid of itself: $(cat "$T/self.err")"
say "self: $(cat "$T/self.err")"

# A zombie: the child `true` exits; the program exec'd in its parent's
# place (sleep) never waits for it.  Its state is polled until the kernel
# shows it a zombie (a state, not a time).
sh -c 'true & exec sleep 600' &
parent=$!
parent_birth=$(proc_birth "$parent")
zombie=
for _ in $(seq 1 6000); do
	for c in /proc/[0-9]*/stat; do
		read -r -a f <"$c" 2>/dev/null || continue
		[ "${f[3]:-}" = "$parent" ] && [ "${f[2]:-}" = Z ] && zombie=${f[0]}
	done
	[ -n "$zombie" ] && break
	sleep 0.01
done
[ -n "$zombie" ] || { kill_same TERM "$parent" "$parent_birth"; fail "no zombie child of $parent appeared"; }
refused zombie "is a zombie" "$zombie"
kill_same TERM "$parent" "$parent_birth" || true
wait "$parent" 2>/dev/null || true

# A kernel thread: PF_KTHREAD (0x00200000) in the flags field of its stat.
kthread=
for c in /proc/[0-9]*/stat; do
	line=$(cat "$c" 2>/dev/null) || continue
	rest=${line##*) }
	read -r -a f <<<"$rest"
	if [ -n "${f[6]:-}" ] && (( f[6] & 0x00200000 )); then
		kthread=${c#/proc/}
		kthread=${kthread%/stat}
		break
	fi
done
if [ -n "$kthread" ]; then
	refused kthread "is a kernel thread" "$kthread"
else
	say "kthread: this system shows no kernel thread in /proc: not checked"
fi
