# shellcheck shell=bash
# tests/gdb-lib.sh - sourced by the gdb plugin tests (t06NN-gdb-*.sh):
# gdb's `heap` commands (plugin/, loaded by build/plugin/heapwalk.gdb) run
# in real gdb binaries in batch mode.
#
#   need_plugin               skip unless the plugin was built (GDB_SCRIPT)
#   need_gdb GDB              skip unless the gdb binary GDB runs here
#   gdb_heap OUT GDB ARGS... -- CMD...
#                             one gdb run (GDB -nx -batch ARGS, the plugin
#                             loaded) doing `heap CMD` for each CMD in turn;
#                             the report of the i-th goes to OUT.i (from 1),
#                             its $_heapwalk_status to OUT.i.rc, everything
#                             gdb printed to OUT.log.  Fails the test when
#                             gdb crashes or hangs (5 minutes).  The array
#                             GDB_HEAP_END holds gdb options for after the
#                             commands (e.g. -ex detach); GDB_HEAP_FIRST
#                             numbers the first report (heap_ex N CMD
#                             gives the -ex words of a report the test
#                             places itself, as HEAP_EX).
#   split_reports OUT TEXT N WHAT
#                             gdb_heap's split of what gdb printed (TEXT)
#                             into OUT.1..N and OUT.i.rc
#   gdbserver_start PID       gdbserver --once --attach PID on a random
#                             local port (GS_PORT; its pid GS_PID, its log
#                             $T/gdbserver.log), once it listens
#   same_as_cli GOT WANT WHAT the plugin's report GOT equals the tool's WANT
#                             (but for the time a slow command prints)
#   port_listening PORT       something listens on TCP PORT (/proc)
#   gdb_ctrl_c MARK HOOK GDBARGS...
#                             gdb (the plugin loaded, the test hook HOOK=1
#                             in its environment, ARGS) runs `heap chunks`
#                             (its status after "@@STATUS "), then `heap
#                             bins --json` and `heap chunks --json`
#                             (gdb_heap's reports 1 and 2, into
#                             $T/after.N), then CTRL_C_AFTER's options;
#                             all it prints to $T/gdb.log.  Once the
#                             plugin's directory holds the file MARK, gdb
#                             gets SIGINT.  Fails unless gdb exits 0, heap
#                             chunks says it was interrupted with status
#                             130, and the two reports after it have 0.
#   qemu_stub_start DIR SYSROOT RUN ARGS...
#                             DIR/prog live under qemu-aarch64 -g, once it
#                             listens (QEMU_PORT, QEMU_PID; stdin a FIFO
#                             on fd 7); qemu_stub_stop kills it
here_gdb_=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/lib.sh
. "$here_gdb_/lib.sh"

GDB_SCRIPT=${GDB_SCRIPT:-$TOP/build/plugin/heapwalk.gdb}
GDB_HEAP_END=()

need_plugin() {
	[ -f "$GDB_SCRIPT" ] || skip "no gdb plugin built ($GDB_SCRIPT)"
	need_cmd gdb gdb
}

need_gdb() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"
}

# heap_ex N CMD: the gdb -ex arguments of gdb_heap's report N, `heap CMD`
# between markers, then its $_heapwalk_status (into HEAP_EX).  For a test
# that runs a report before the stop gdb_heap's commands run at: its
# reports are then numbered from GDB_HEAP_FIRST.
heap_ex() {
	HEAP_EX=(-ex "echo @@HW $1\\n" -ex "heap $2" -ex "echo @@RC $1\\n"
		-ex 'output $_heapwalk_status' -ex 'echo \n')
}
GDB_HEAP_FIRST=1

# gdb_heap OUT GDB GDBARGS... -- CMD...: gdb with the plugin, each `heap
# CMD`'s report in OUT.N (N from GDB_HEAP_FIRST on) and its status in
# OUT.N.rc.  A hang is a failure after 5 minutes (a report over qemu's
# stub on a busy machine takes seconds, never minutes).
gdb_heap() {
	local out=$1 gdb=$2 rc=0 i=$((GDB_HEAP_FIRST - 1)) c
	shift 2
	local args=() cmds=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	for c; do
		i=$((i + 1))
		heap_ex "$i" "$c"
		cmds+=("${HEAP_EX[@]}")
	done
	timeout -k 5 300 "$gdb" -nx -batch -iex 'set pagination off' \
		-iex 'set width 0' -x "$GDB_SCRIPT" "${args[@]}" "${cmds[@]}" \
		"${GDB_HEAP_END[@]}" \
		>"$out.log" 2>&1 </dev/null || rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		fail "$gdb ${args[*]}: hung (killed after 300 s)"
	fi
	if [ $rc -ge 128 ]; then
		tail -n 20 "$out.log" >&2
		fail "$gdb ${args[*]}: crashed (exit $rc)"
	fi
	split_reports "$out" "$out.log" "$i" "$gdb ${args[*]}"
}

# split_reports OUT TEXT N WHAT: the reports between gdb_heap's markers in
# TEXT into OUT.1...OUT.N and their statuses into OUT.i.rc.
split_reports() {
	local out=$1 text=$2 n=$3 what=$4 c
	awk -v out="$out" '
		/^@@HW [0-9]+$/ { f = out "." $2; printf "" > f; mode = 1; next }
		/^@@RC [0-9]+$/ { f = out "." $2 ".rc"; printf "" > f; mode = 2; next }
		mode == 1 { print > f }
		mode == 2 { print > f; mode = 0 }
	' "$text"
	for ((c = 1; c <= n; c++)); do
		[ -f "$out.$c.rc" ] || {
			tail -n 20 "$text" >&2
			fail "$what: heap command $c never finished"
		}
	done
}

CTRL_C_AFTER=()
gdb_ctrl_c() {
	local mark=$1 hook=$2 gdbpid rc=0 seen= status i
	shift 2
	# The plugin's private directory is made under TMPDIR: watch it.
	mkdir -p "$T/tmp"
	env TMPDIR="$T/tmp" "$hook=1" timeout -k 5 300 gdb -nx -batch \
		-iex 'set pagination off' -x "$GDB_SCRIPT" "$@" \
		-ex 'echo @@CHUNKS\n' -ex 'heap chunks' \
		-ex 'echo @@STATUS ' -ex 'output $_heapwalk_status' -ex 'echo \n' \
		-ex 'echo @@HW 1\n' -ex 'heap bins --json' -ex 'echo @@RC 1\n' \
		-ex 'output $_heapwalk_status' -ex 'echo \n' \
		-ex 'echo @@HW 2\n' -ex 'heap chunks --json' -ex 'echo @@RC 2\n' \
		-ex 'output $_heapwalk_status' -ex 'echo \n' \
		"${CTRL_C_AFTER[@]}" >"$T/gdb.log" 2>&1 </dev/null &
	gdbpid=$!
	# As long as gdb lives (5 minutes at most).
	for ((i = 0; i < 6000; i++)); do
		if compgen -G "$T/tmp/heapwalk-*/$mark" >/dev/null; then
			seen=1
			break
		fi
		kill -0 "$gdbpid" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$seen" ] || fail "$hook: the plugin never made $mark in heap chunks: $(tail -n 5 "$T/gdb.log")"
	# To gdb itself (env execs timeout): timeout would pass the signal
	# on, then kill gdb 5 s on.
	# (A pid just read from /proc, of a process that is running.)
	kill -INT "$(child_pid "$gdbpid" gdb)" 2>/dev/null || fail "no gdb under timeout ($gdbpid)" # pid just read
	wait "$gdbpid" || rc=$?
	[ $rc = 0 ] || fail "gdb exited with status $rc after Ctrl-C: $(tail -n 5 "$T/gdb.log")"
	grep -q '^heapwalk: interrupted after [0-9.]* s (Ctrl-C, or gdb lost the target): no report$' "$T/gdb.log" ||
		fail "heap chunks did not say it was interrupted: $(sed -n '/^@@CHUNKS/,/^@@STATUS/p' "$T/gdb.log" | grep -v '^ *0x' | head -c 400)"
	status=$(sed -n 's/^@@STATUS *//p' "$T/gdb.log")
	[ "$status" = 130 ] || { grep -v "^ *0x" "$T/gdb.log" | sed -n 1,20p >&2; fail "\$_heapwalk_status after Ctrl-C is '$status', want 130"; }
	split_reports "$T/after" "$T/gdb.log" 2 "gdb after Ctrl-C"
	for i in 1 2; do
		[ "$(cat "$T/after.$i.rc")" = 0 ] || fail "heap command $i after Ctrl-C: status $(cat "$T/after.$i.rc"): $(head -c 300 "$T/after.$i")"
	done
}

# gdbserver_start PID: gdbserver attached to PID on a free port (GS_PORT,
# GS_PID), once it listens.  Waits as long as gdbserver lives (a busy
# machine may take seconds), at most 5 minutes.
gdbserver_start() {
	GS_PORT=$((20000 + RANDOM % 20000))
	gdbserver --once --attach "127.0.0.1:$GS_PORT" "$1" >"$T/gdbserver.log" 2>&1 &
	GS_PID=$!
	for _ in $(seq 3000); do
		grep -q "Listening on port" "$T/gdbserver.log" && return 0
		kill -0 "$GS_PID" 2>/dev/null || return 0
		sleep 0.1
	done
}

# port_listening PORT: something listens on TCP PORT (from /proc: a fresh
# machine has no iproute2).
port_listening() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
		END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# qemu_stub_start DIR SYSROOT RUN [ARGS...]: DIR/prog in its live mode
# under qemu-aarch64 -g on a free port (QEMU_PORT, QEMU_PID), its stdin a
# FIFO held open on fd 7 and its output in RUN/out, with RUN as its
# working directory; ARGS are the program's.  Returns once the stub
# listens (however long a busy machine takes, while qemu lives).
qemu_stub_start() {
	local dir=$1 sysroot=$2 run=$3 port
	shift 3
	QEMU_PID=
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 20000))
		mkfifo "$run/in.$port"
		(
			cd "$run"
			ulimit -c unlimited 2>/dev/null || true
			CORPUS_LIVE=1 exec qemu-aarch64 -L "$sysroot" -g "$port" \
				"$dir/prog" "$@" <"$run/in.$port" >"$run/out" 2>&1
		) &
		QEMU_PID=$!
		QEMU_BIRTH=$(proc_birth "$QEMU_PID")
		exec 7>"$run/in.$port"
		for _ in $(seq 3000); do
			port_listening "$port" && break
			kill -0 "$QEMU_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$QEMU_PID" 2>/dev/null && port_listening "$port" && break
		exec 7>&-
		{ kill_same KILL "$QEMU_PID" "$QEMU_BIRTH" && wait "$QEMU_PID"; } 2>/dev/null || true
		QEMU_PID=
	done
	[ -n "$QEMU_PID" ] || fail "qemu-aarch64 -g would not start: $(cat "$run/out")"
	# shellcheck disable=SC2034 # read by the tests that source this
	QEMU_PORT=$port
}

# Kill the qemu of qemu_stub_start, if it still runs (gdb's kill may
# have ended it: then its pid may be another process's by now).
qemu_stub_stop() {
	if [ -n "${QEMU_PID:-}" ]; then
		kill_same KILL "$QEMU_PID" "${QEMU_BIRTH:-}" || true
		{ wait "$QEMU_PID"; } 2>/dev/null || true
	fi
	QEMU_PID=
}

same_as_cli() {
	# A slow command ends with the time it took: "(heapwalk: 6.69 s)".
	grep -vE '^\(heapwalk: [0-9.]+ s\)$' "$1" >"$1.notime" || true
	if ! cmp -s "$1.notime" "$2"; then
		diff "$2" "$1.notime" | sed -n 1,20p >&2 || true
		fail "$3: gdb's report differs from the tool's"
	fi
}
