#!/bin/bash
# heapwalk --pid never harms its target, whatever happens to heapwalk.
# a) A large live process (tests/helper/livetarget.c many: 4 threads, 2.8
#    million chunks, every block filled with a pattern): SIGINT, SIGTERM
#    and SIGHUP sent to heapwalk at random points 0-300 ms into a run
#    (seeded: LIVE_SEED, printed), several runs of each, `summary` and
#    `chunks --json`.  After each: heapwalk ended (no hang, no sanitizer
#    report), no thread of the target is stopped or traced (State,
#    TracerPid), and the target's self-check says OK (every block's
#    contents unchanged, not traced, no thread stopped or missing).
# b) `heapwalk --pid N chunks | head -n1` (text and JSON): heapwalk exits 0
#    with nothing on stderr, and the target is let go.
# c) Errors: a pid no process has: exit 3, one "heapwalk: " line; a
#    process that ends during the run: killed (SIGKILL) 0-60 ms into it,
#    its heap built before: exit 0, or 3 with one line that does not
#    speak of rights (its dying threads refuse ptrace as zombies), never
#    4 ("no allocator"); ending by itself about when heapwalk starts (livetarget
#    exit-after, maybe before its first malloc): exit 0, 3 or 4; never a
#    hang; a process whose threads come and go all the time
#    (livetarget churn): a result or exit 3, never a hang, and not left
#    stopped; a process another tracer holds (tests/helper/tracer.c):
#    exit 3, one line that names the other tracer; a program under
#    qemu-aarch64 (qemu-user; corpora bins1 for glibc-2.36-arm64, live
#    mode, a SIGUSR1 pending): an error (exit 3) or a result that says
#    it is qemu, and the program is let go and says OK (skipped, with a
#    note, without qemu-aarch64 or the arm64 sysroot).
# Every heapwalk run is under a timeout.  About 15-25 s.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
[ "$LIVE_STANDIN" != gcore ] || skip "safety needs heapwalk --pid itself (no stand-in)"
need_live
target=$(helper livetarget)
tracer=$(helper tracer)

# ---- a) signals during a run ------------------------------------------
live_start big "$target" many 4 "${LIVE_BIG_CHUNKS:-700000}"
pid=${LIVE_PID[big]}
seed=${LIVE_SEED:-$(($(date +%s%N) / 1000 % 1000000))}
RANDOM=$seed
say "seed $seed (LIVE_SEED=$seed repeats these delays)"
runs=${LIVE_SIGNAL_RUNS:-4}
died=0 finished=0 during=0
for ((r = 0; r < runs; r++)); do
	for sig in INT TERM HUP; do
		delay=$((RANDOM % 301))
		cmd=(summary)
		((RANDOM % 2)) && cmd=(--json chunks)
		# Background jobs of a script ignore SIGINT: give heapwalk the
		# default disposition, as a terminal's Ctrl-C would find it.
		# (In a subshell that reaps it: no "Hangup" notice.)
		rm -f "$T/hw.pid"
		(
			env --default-signal=INT "$HEAPWALK" --pid "$pid" "${cmd[@]}" \
				>/dev/null 2>"$T/sig.err" &
			echo $! >"$T/hw.pid"
			{ wait $!; } 2>/dev/null || exit $?
		) &
		sub=$!
		until [ -s "$T/hw.pid" ]; do sleep 0.001; done
		hp=$(cat "$T/hw.pid")
		hb=$(proc_birth "$hp")   # (none: heapwalk is done already)
		sleep "$(printf '0.%03d' "$delay")"
		# Was the target stopped just then (a state t thread)?
		when=running
		if grep -qs '^State:[[:space:]]*t' /proc/"$pid"/task/*/status; then
			when=stopped
			during=$((during + 1))
		fi
		kill_same "$sig" "$hp" "$hb" || true
		for ((i = 0; i < 1200; i++)); do
			kill -0 "$sub" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$sub" 2>/dev/null; then
			kill_same KILL "$hp" "$hb" || true
			wait "$sub" 2>/dev/null || true
			fail "heapwalk --pid $pid ${cmd[*]} still runs 2 minutes after SIG$sig (at $delay ms)"
		fi
		rc=0
		wait "$sub" || rc=$?
		if [ $rc = 99 ] || [ $rc = 98 ] ||
			grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$T/sig.err"; then
			tail -n 30 "$T/sig.err" >&2
			fail "heapwalk --pid ${cmd[*]} tripped a sanitizer after SIG$sig at $delay ms (exit $rc)"
		fi
		if [ $rc = 0 ]; then finished=$((finished + 1)); else died=$((died + 1)); fi
		live_untraced big "SIG$sig to heapwalk ${cmd[*]} at $delay ms (exit $rc)"
		live_check big
		say "SIG$sig at $delay ms into heapwalk --pid ${cmd[*]} (target $when): exit $rc; target let go, self-check OK"
	done
done
say "a) $((died + finished)) runs: $died ended by the signal, $finished finished first; $during signals came while the target was stopped"

# ---- b) the reader goes away ---------------------------------------------
for json in "" --json; do
	for ((i = 0; i < 3; i++)); do
		# shellcheck disable=SC2086 # $json is one word or none
		if ! timeout -k 5 60 "$HEAPWALK" --pid "$pid" $json chunks 2>"$T/pipe.err" |
			head -n1 >/dev/null; then
			st=("${PIPESTATUS[@]}")
			fail "heapwalk --pid $pid $json chunks | head -n1: exit statuses ${st[*]}"
		fi
		[ ! -s "$T/pipe.err" ] ||
			fail "heapwalk --pid $json chunks | head -n1 wrote to stderr: $(head -n3 "$T/pipe.err")"
		live_untraced big "heapwalk --pid $pid $json chunks | head -n1" # SIGPIPE on purpose
	done
done
live_check big
say "b) heapwalk --pid chunks | head -n1: exit 0, quiet, target let go (text and JSON, 3 times each)"
live_finish_many() {
	eval "exec ${LIVE_FD[big]}>&-"
	wait "$pid" || fail "livetarget many exited $? at the end"
	unset "LIVE_PID[big]" "LIVE_FD[big]"
}
live_finish_many

# ---- c) errors ---------------------------------------------------------
# A pid no process has: one of ours, reaped.
"$target" exit-after 0 >/dev/null &
gone=$!
wait "$gone" || true
if ! kill -0 "$gone" 2>/dev/null; then
	hw "$T/gone.out" "$T/gone.err" --pid "$gone" summary
	expect_rc 3
	one_error_line "$T/gone.err" "heapwalk --pid $gone (no such process)"
	say "c) no such process: $(cat "$T/gone.err")"
fi

# A process that ends during the attach.  run_reaped ARGS...: livetarget
# ARGS with stdout to $T/exit.out, its pid in $T/exit.pid, in a subshell
# that reaps it at once (as a real parent would; sets sub).
run_reaped() {
	rm -f "$T/exit.pid" "$T/exit.out"
	(
		"$target" "$@" </dev/null >"$T/exit.out" &
		echo $! >"$T/exit.pid"
		{ wait $!; } 2>/dev/null || exit 0
	) &
	sub=$!
	for ((i = 0; i < 3000; i++)); do
		[ -s "$T/exit.pid" ] && break
		sleep 0.01
	done
	tp=$(cat "$T/exit.pid")
	tb=$(proc_birth "$tp")
}
# First killed (SIGKILL: it ends even while stopped) 0-60 ms into a run
# on a heap of 600000 chunks: the heap was there before heapwalk started,
# so "no allocator found" (exit 4) would be wrong; ...
codes=()
for ((k = 0; k < 6; k++)); do
	run_reaped exit-after 60000 4 150000
	for ((i = 0; i < 1200; i++)); do
		grep -qx ready "$T/exit.out" 2>/dev/null && break
		sleep 0.05
	done
	delay=$((RANDOM % 61))
	timeout -k 5 60 "$HEAPWALK" --pid "$tp" summary >"$T/exit.hw" 2>"$T/exit.err" &
	hp=$!
	sleep "$(printf '0.%03d' "$delay")"
	kill_same KILL "$tp" "$tb" || true
	rc=0
	wait "$hp" || rc=$?
	HW_RC=$rc HW_ERR=$T/exit.err HW_ARGS="--pid $tp summary (killed at $delay ms)"
	if [ $rc = 124 ] || [ $rc = 137 ]; then fail "heapwalk $HW_ARGS hung"; fi
	! grep -qE 'AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$T/exit.err" ||
		fail "heapwalk $HW_ARGS tripped a sanitizer: $(tail -n 20 "$T/exit.err")"
	expect_rc 0 3
	if [ $rc = 3 ]; then
		one_error_line "$T/exit.err" "heapwalk $HW_ARGS"
		# A dying process's threads refuse PTRACE_SEIZE with EPERM
		# (zombies): an exit, not a question of rights.
		! grep -qiE 'permit|refuses|root|CAP_SYS_PTRACE' "$T/exit.err" ||
			fail "heapwalk $HW_ARGS: a process that died is made a question of rights: $(cat "$T/exit.err")"
		say "c) killed at $delay ms: $(cat "$T/exit.err")"
	fi
	codes+=("$delay:$rc")
	wait "$sub" || true
done
say "c) a process killed during the run (ms:exit): ${codes[*]}"
# ... then ending by itself about when heapwalk starts (maybe before its
# first malloc: exit 4 is right then).
codes=()
for ms in 0 5 10 15 20 25 30 40 60; do
	run_reaped exit-after "$ms"
	hw "$T/exit.hw" "$T/exit.err" --pid "$tp" summary
	expect_rc 0 3 4
	if [ "$HW_RC" = 3 ]; then
		one_error_line "$T/exit.err" "heapwalk --pid of a process exiting after $ms ms"
	fi
	codes+=("$ms:$HW_RC")
	wait "$sub" || true
done
say "c) a process exiting by itself (ms:exit): ${codes[*]}"

# Threads created and ended without pause.
live_start churn "$target" churn
for ((i = 0; i < 3; i++)); do
	hw "$T/hw.churn.out" "$T/hw.churn.err" --pid "${LIVE_PID[churn]}" summary
	expect_rc 0 3
	[ "$HW_RC" = 0 ] || one_error_line "$T/hw.churn.err" "heapwalk --pid of a thread-churning process"
	live_untraced churn "heapwalk --pid of a thread-churning process (exit $HW_RC)"
done
say "c) a process churning threads: exit $HW_RC, let go"

# Another tracer holds the process.
live_start held "$target" exit-after 120000
hpid=${LIVE_PID[held]}
mkfifo "$T/tracer.in"
"$tracer" hold "$hpid" <"$T/tracer.in" >"$T/tracer.out" 2>&1 &
tracer_pid=$!
exec {tfd}>"$T/tracer.in"
for ((i = 0; i < 6000; i++)); do
	grep -qx held "$T/tracer.out" 2>/dev/null && break
	kill -0 "$tracer_pid" 2>/dev/null || fail "the tracer could not hold $hpid: $(cat "$T/tracer.out")"
	sleep 0.05
done
hw "$T/hw.held.out" "$T/hw.held.err" --pid "$hpid" summary
expect_rc 3
one_error_line "$T/hw.held.err" "heapwalk --pid of a traced process"
grep -qiE 'tracer|traced|debugger|strace' "$T/hw.held.err" ||
	fail "the error does not say another tracer holds the process: $(cat "$T/hw.held.err")"
tr=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$hpid/status")
[ "$tr" = "$tracer_pid" ] ||
	fail "heapwalk changed the other tracer's hold (TracerPid $tr, the tracer is $tracer_pid)"
exec {tfd}>&-
wait "$tracer_pid" || true
live_untraced held "the other tracer let go"
# Ended now, while its pid is surely its own (it would end by itself
# after 120 s, and the cleanup's kill would then find the pid free).
kill_same KILL "$hpid" "${LIVE_BIRTH[held]}" || true
wait "$hpid" 2>/dev/null || true
eval "exec ${LIVE_FD[held]}>&-"
unset "LIVE_PID[held]" "LIVE_FD[held]"
say "c) a traced process: $(cat "$T/hw.held.err")"

# A program under qemu-user.
qemu_note=
if ! command -v qemu-aarch64 >/dev/null 2>&1; then
	qemu_note="qemu-aarch64 is not installed"
else
	rc=0
	qdir=$("$TOP/scripts/corpus/make-core.sh" --prog-only bins1 \
		"$CORPUS/live/glibc-2.36-arm64/bins1" glibc-2.36-arm64 >&2 &&
		echo "$CORPUS/live/glibc-2.36-arm64/bins1") || rc=$?
	if [ $rc != 0 ]; then
		qemu_note="no arm64 program (make-core.sh --prog-only bins1 glibc-2.36-arm64: exit $rc)"
	fi
fi
if [ -n "$qemu_note" ]; then
	say "c) qemu-user: skipped: $qemu_note"
else
	sysroot=$(readlink -f "$qdir/sysroot")
	live_start qemu env CORPUS_LIVE=1 qemu-aarch64 -L "$sysroot" "$qdir/prog" "$T/qemu.truth"
	live_usr1 qemu
	hw "$T/hw.qemu.out" "$T/hw.qemu.err" --pid "${LIVE_PID[qemu]}" summary
	expect_rc 0 3
	if [ "$HW_RC" = 3 ]; then
		one_error_line "$T/hw.qemu.err" "heapwalk --pid of a qemu-user process"
		grep -qi qemu "$T/hw.qemu.err" ||
			fail "the error on a qemu-user process does not say qemu: $(cat "$T/hw.qemu.err")"
		qemu_said=$(cat "$T/hw.qemu.err")
	else
		grep -qi qemu "$T/hw.qemu.out" ||
			fail "summary of a qemu-user process does not say it is qemu: $(head -n 12 "$T/hw.qemu.out")"
		qemu_said=$(grep -i -m1 qemu "$T/hw.qemu.out")
	fi
	live_untraced qemu "heapwalk --pid of a qemu-user process"
	live_finish qemu
	say "c) qemu-user: exit $HW_RC: $qemu_said; the guest is let go and says OK"
fi
