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
#                             gdb crashes or hangs (120 s).  The array
#                             GDB_HEAP_END holds gdb options for after the
#                             commands (e.g. -ex detach).
#   split_reports OUT TEXT N WHAT
#                             gdb_heap's split of what gdb printed (TEXT)
#                             into OUT.1..N and OUT.i.rc
#   gdbserver_start PID       gdbserver --once --attach PID on a random
#                             local port (GS_PORT; its pid GS_PID, its log
#                             $T/gdbserver.log), once it listens
#   same_as_cli GOT WANT WHAT the plugin's report GOT equals the tool's WANT
#                             (but for the time a slow command prints)
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

gdb_heap() {
	local out=$1 gdb=$2 rc=0 i=0 c
	shift 2
	local args=() cmds=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	for c; do
		i=$((i + 1))
		cmds+=(-ex "echo @@HW $i\\n" -ex "heap $c" -ex "echo @@RC $i\\n"
			-ex 'output $_heapwalk_status' -ex 'echo \n')
	done
	timeout -k 5 120 "$gdb" -nx -batch -iex 'set pagination off' \
		-iex 'set width 0' -x "$GDB_SCRIPT" "${args[@]}" "${cmds[@]}" \
		"${GDB_HEAP_END[@]}" \
		>"$out.log" 2>&1 </dev/null || rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		fail "$gdb ${args[*]}: hung (killed after 120 s)"
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

gdbserver_start() {
	GS_PORT=$((20000 + RANDOM % 20000))
	gdbserver --once --attach "127.0.0.1:$GS_PORT" "$1" >"$T/gdbserver.log" 2>&1 &
	GS_PID=$!
	for _ in $(seq 50); do
		grep -q "Listening on port" "$T/gdbserver.log" && return 0
		sleep 0.1
	done
}

same_as_cli() {
	# A slow command ends with the time it took: "(heapwalk: 6.69 s)".
	grep -vE '^\(heapwalk: [0-9.]+ s\)$' "$1" >"$1.notime" || true
	if ! cmp -s "$1.notime" "$2"; then
		diff "$2" "$1.notime" | head -n 20 >&2 || true
		fail "$3: gdb's report differs from the tool's"
	fi
}
