# shellcheck shell=bash
# tests/live-lib.sh - sourced by the live-process tests (t05NN-live-*.sh):
# `heapwalk --pid` on programs that stay alive for it.
#
# The corpus programs have a live mode (CORPUS_LIVE=1, see
# corpora/common/live.h): the same heap and truth file as their core, then,
# instead of abort(), "ready" on stdout and a wait on stdin; a line on
# stdin makes them check that the tracer left them unharmed (live blocks'
# contents, a SIGUSR1 still pending, not traced, no thread stopped) and
# print "OK" or "FAIL <why>".  tests/helper/livetarget.c is a bigger (and
# a short-lived, and a thread-churning) target; tests/helper/tracer.c a
# minimal tracer.
#
#   need_live                 skip unless ptrace is permitted here and
#                             heapwalk supports --pid (it is probed on a
#                             live process: "not supported" is a skip)
#   helper NAME               build tests/helper/NAME.c (when stale) into
#                             $TOOLS/helper/NAME and print its path
#   live_prog VARIANT CASE    build the corpus program (make-core.sh
#                             --prog-only, the core corpus' build) into
#                             $CORPUS/live/VARIANT/CASE; print that dir
#   live_start NAME CMD...    run CMD with stdin from a pipe the test holds
#                             and stdout to $T/live.NAME.out; wait for "ready"
#                             (LIVE_PID[NAME]); killed at exit if still there
#   live_usr1 NAME            send SIGUSR1 and see it pending (ShdPnd)
#   hw_live NAME OUT ERR ARGS...   hw (lib.sh) with --pid LIVE_PID[NAME]
#   live_untraced NAME WHAT   every thread of NAME: not stopped (state t
#                             or T), TracerPid 0; and SIGUSR1 still pending
#                             when live_usr1 sent one
#   live_check NAME           (livetarget many) one more line: "OK"?
#   live_finish NAME          send the line; NAME must print OK and exit 0
#
# LIVE_STANDIN=gcore validates the harness without --pid: hw_live then
# takes a core of the live process with gdb's gcore (once per process) and
# runs heapwalk on it instead; the comparisons are the same, only the
# checks of summary's "live" object are left out.
here_live_=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib.sh
. "$here_live_/lib.sh"

LIVE_STANDIN=${LIVE_STANDIN:-}
declare -A LIVE_PID=() LIVE_BIRTH=() LIVE_FD=() LIVE_SENT_USR1=() LIVE_CORE=()

# Whatever happens, no live program outlives the test (closing its pipe
# ends it; SIGKILL also ends one left stopped).
live_cleanup() {
	local n
	for n in "${!LIVE_PID[@]}"; do
		if [ -n "${LIVE_FD[$n]:-}" ]; then
			eval "exec ${LIVE_FD[$n]}>&-" 2>/dev/null || true
		fi
		# (Only while the pid is still that program's: lib.sh's
		# kill_same.)
		kill_same KILL "${LIVE_PID[$n]}" "${LIVE_BIRTH[$n]:-}" || true
		{ wait "${LIVE_PID[$n]}"; } 2>/dev/null || true
	done
}
on_exit live_cleanup

# has_cap_sys_ptrace: this shell's effective capabilities hold
# CAP_SYS_PTRACE (bit 19).
has_cap_sys_ptrace() {
	local cap
	cap=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
	[ -n "$cap" ] && (((0x$cap >> 19) & 1))
}

helper() {
	local name=$1 bin=$TOOLS/helper/$1 src=$TOP/tests/helper/$1.c h stale=0
	[ -f "$src" ] || fail "no helper $src"
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then stale=1; fi
	for h in "$TOP"/corpora/common/*.h; do
		if [ "$h" -nt "$bin" ]; then stale=1; fi
	done
	if [ $stale = 1 ]; then
		mkdir -p "$TOOLS/helper"
		${CC:-cc} -std=c11 -O2 -g -pthread -Wall -Wextra -Werror \
			-o "$bin.tmp$$" "$src" || fail "cannot build $src"
		mv -f "$bin.tmp$$" "$bin"
	fi
	echo "$bin"
}

live_prog() {
	local dir=$CORPUS/live/$1/$2 rc=0
	"$TOP/scripts/corpus/make-core.sh" --prog-only "$2" "$dir" "$1" >&2 || rc=$?
	case $rc in
	0) echo "$dir" ;;
	77) skip "cannot build the $1 program $2 here" ;;
	*) fail "make-core.sh --prog-only $2 $dir $1 failed" ;;
	esac
}

live_start() {
	local name=$1 fd i f
	shift
	rm -f "$T/live.$name.in" "$T/live.$name.out" "$T/live.$name.err"
	mkfifo "$T/live.$name.in"
	(
		for f in "${LIVE_FD[@]}"; do eval "exec $f>&-"; done
		exec "$@" <"$T/live.$name.in" >"$T/live.$name.out" 2>"$T/live.$name.err"
	) &
	LIVE_PID[$name]=$!
	LIVE_BIRTH[$name]=$(proc_birth "$!")
	exec {fd}>"$T/live.$name.in"
	LIVE_FD[$name]=$fd
	LIVE_SENT_USR1[$name]=0
	for ((i = 0; i < ${LIVE_READY_TIMEOUT:-1200}; i++)); do
		if grep -qx ready "$T/live.$name.out" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "${LIVE_PID[$name]}" 2>/dev/null; then
			fail "$name exited before it was ready: $(head -c 300 "$T/live.$name.err")"
		fi
		sleep 0.1
	done
	fail "$name was not ready after $((i / 10)) s"
}

# shd_pending PID: the process's shared pending signals (hex), or "".
shd_pending() {
	sed -n 's/^ShdPnd:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null
}

live_usr1() {
	local name=$1 pid=${LIVE_PID[$1]} i p
	kill_same USR1 "$pid" "${LIVE_BIRTH[$name]}" || fail "$name has ended"
	for ((i = 0; i < 1000; i++)); do
		p=$(shd_pending "$pid")
		if [ -n "$p" ] && (((0x$p >> 9) & 1)); then
			LIVE_SENT_USR1[$name]=1
			return 0
		fi
		sleep 0.01
	done
	fail "$name: the SIGUSR1 sent is not pending (ShdPnd ${p:-?})"
}

hw_live() {
	local name=$1 out=$2 err=$3 pid=${LIVE_PID[$1]}
	shift 3
	if [ "$LIVE_STANDIN" = gcore ]; then
		if [ -z "${LIVE_CORE[$name]:-}" ]; then
			timeout -k 5 120 gcore -o "$T/$name.standin" "$pid" \
				>"$T/$name.gcore.log" 2>&1 ||
				fail "gcore $pid failed: $(tail -n 3 "$T/$name.gcore.log")"
			LIVE_CORE[$name]=$T/$name.standin.$pid
		fi
		hw "$out" "$err" "${LIVE_CORE[$name]}" "$@"
	else
		hw "$out" "$err" --pid "$pid" "$@"
	fi
}

live_untraced() {
	local name=$1 what=$2 pid=${LIVE_PID[$1]} st tr f n=0 p tid all
	kill -0 "$pid" 2>/dev/null || fail "$name is gone after $what"
	for f in /proc/"$pid"/task/*/status; do
		# One read of the file: a thread may end between two.
		all=$(cat "$f" 2>/dev/null) || continue
		st=$(sed -n 's/^State:[[:space:]]*//p' <<<"$all")
		[ -n "$st" ] || continue # the thread ended meanwhile
		tr=$(sed -n 's/^TracerPid:[[:space:]]*//p' <<<"$all")
		tid=${f%/status}
		tid=${tid##*/}
		case $st in
		t* | T*) fail "$name: thread $tid of $pid is left stopped after $what (State: $st, TracerPid $tr)" ;;
		esac
		[ "$tr" = 0 ] ||
			fail "$name: thread $tid of $pid is still traced after $what (TracerPid $tr)"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || fail "$name has no threads after $what"
	if [ "${LIVE_SENT_USR1[$name]}" = 1 ]; then
		p=$(shd_pending "$pid")
		if [ -z "$p" ] || ! (((0x$p >> 9) & 1)); then
			fail "$name: the pending SIGUSR1 was lost by $what (ShdPnd ${p:-?})"
		fi
	fi
}

# live_answer NAME N: wait for the N-th line after "ready" in NAME's
# output (5 minutes at most: a busy machine) and print it.
live_answer() {
	local name=$1 n=$2 i line
	for ((i = 0; i < 3000; i++)); do
		line=$(sed -n "/^ready\$/,\$p" "$T/live.$name.out" | sed -n "$((n + 1))p")
		if [ -n "$line" ]; then
			echo "$line"
			return 0
		fi
		sleep 0.1
	done
	fail "$name gave no answer $n in 5 minutes"
}

declare -A LIVE_CHECKS=()
live_check() {
	local name=$1 n line
	n=$((${LIVE_CHECKS[$name]:-0} + 1))
	LIVE_CHECKS[$name]=$n
	echo check >&"${LIVE_FD[$name]}"
	line=$(live_answer "$name" "$n")
	[ "$line" = OK ] || fail "$name's self-check: $line"
}

live_finish() {
	local name=$1 pid=${LIVE_PID[$1]} line rc=0 i
	echo go >&"${LIVE_FD[$name]}"
	line=$(live_answer "$name" 1)
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$pid" || rc=$?
	eval "exec ${LIVE_FD[$name]}>&-"
	unset "LIVE_PID[$name]" "LIVE_BIRTH[$name]" "LIVE_FD[$name]"
	[ "$line" = OK ] || fail "$name's self-check after heapwalk: $line"
	[ $rc = 0 ] || fail "$name exited $rc after its self-check"
}

need_live() {
	local scope pid probe out rc=0 tracer target
	need_heapwalk
	need_cmd timeout mkfifo
	if [ -r /proc/sys/kernel/yama/ptrace_scope ]; then
		scope=$(cat /proc/sys/kernel/yama/ptrace_scope)
		case $scope in
		3) skip "ptrace is disabled here (kernel.yama.ptrace_scope = 3)" ;;
		2) has_cap_sys_ptrace ||
			skip "kernel.yama.ptrace_scope = 2 and no CAP_SYS_PTRACE: only an admin may trace" ;;
		esac
	fi
	# A process that allows any tracer (as every live target here does)
	# and lives long enough for the probes.
	tracer=$(helper tracer)
	target=$(helper livetarget)
	live_start probe "$target" exit-after 120000
	pid=${LIVE_PID[probe]}
	probe=$("$tracer" probe "$pid") || {
		live_cleanup
		skip "ptrace is not permitted here: $probe"
	}
	if [ "$LIVE_STANDIN" = gcore ]; then
		need_cmd gdb gcore
	else
		out=$(timeout -k 5 60 "$HEAPWALK" --pid "$pid" summary 2>&1 >/dev/null) || rc=$?
		if [ $rc = 3 ] && [[ $out == *"not supported"* || $out == *"not yet supported"* ]]; then
			live_cleanup
			skip "this heapwalk does not support --pid yet ($out)"
		fi
	fi
	kill_same KILL "$pid" "${LIVE_BIRTH[probe]}" || true
	wait "$pid" 2>/dev/null || true
	eval "exec ${LIVE_FD[probe]}>&-"
	unset "LIVE_PID[probe]" "LIVE_BIRTH[probe]" "LIVE_FD[probe]"
}

# check_live_summary JSON TEXT PID [NO_STOP]: summary's "live" object
# names PID, says how long the process was stopped (ms) and how many bytes
# were copied (none without a stop), and no_stop NO_STOP (default false); the text (TEXT, or ""
# for none) has a line starting "live:".
check_live_summary() {
	local json=$1 text=$2 pid=$3 nostop=${4:-false} live
	if [ "$LIVE_STANDIN" = gcore ]; then return 0; fi
	live=$(grep -o '"live" *: *{[^}]*}' "$json" || true)
	[ -n "$live" ] || fail "summary --json has no \"live\" object: $(head -c 300 "$json")"
	[[ $live =~ \"pid\":\ *${pid}[,}] ]] || fail "summary's live object does not name pid $pid: $live"
	[[ $live =~ \"stopped_ms\":\ *[0-9]+(\.[0-9]+)?[,}] ]] ||
		fail "summary's live object has no stopped_ms number: $live"
	# Without a stop nothing is copied up front (memory is read on demand),
	# so the snapshot is empty; with a stop the writable mappings were copied.
	if [ "$nostop" = true ]; then
		[[ $live =~ \"snapshot_bytes\":\ *[0-9]+[,}] ]] ||
			fail "summary's live object has no snapshot_bytes: $live"
	else
		[[ $live =~ \"snapshot_bytes\":\ *[1-9][0-9]*[,}] ]] ||
			fail "summary's live object has no snapshot_bytes > 0: $live"
	fi
	[[ $live =~ \"no_stop\":\ *${nostop}[,}] ]] ||
		fail "summary's live object does not say no_stop $nostop: $live"
	[ -z "$text" ] || grep -q '^live:' "$text" ||
		fail "summary's text has no line starting 'live:'"
}
