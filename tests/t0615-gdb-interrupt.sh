#!/bin/bash
# Ctrl-C in gdb during a long `heap` command: corpora/ptmalloc threads8 in
# its live mode behind gdbserver (each command reads ~140 MiB through the
# remote protocol, seconds).  gdb gets SIGINT (what Ctrl-C sends) once
# the plugin is serving `heap chunks`, which HEAPWALK_GDB_TEST_STALL makes
# it go on reading from gdb until then (plugin/reader.c), so the signal
# lands in the middle of the request on a fast machine as on a busy one:
#  - the command stops, says "heapwalk: interrupted after N s (...): no
#    report", and $_heapwalk_status is 130 (the plugin catches gdb's
#    quit: thrown through gdb's frame sniffer it would break `bt`);
#  - gdb stays usable: the next `heap bins --json` and `heap chunks
#    --json` agree with the program's truth, `info threads` lists its 10
#    threads, `bt` shows the parked read();
#  - gdb exits normally, and the program runs on unharmed (not stopped,
#    not traced, its heap intact: it says OK).
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
need_live
need_gdb gdbserver
truthcmp=$(tool truthcmp)

c=threads8
dir=$(live_prog host "$c")
live_start "$c" env CORPUS_LIVE=1 "$dir/prog" "$T/$c.truth"
live_usr1 "$c"
pid=${LIVE_PID[$c]}
gdbserver_start "$pid"
# The plugin's private directory is made under TMPDIR: watch it.
mkdir -p "$T/tmp"
TMPDIR=$T/tmp HEAPWALK_GDB_TEST_STALL=1 timeout -k 5 300 gdb -nx -batch -iex 'set pagination off' \
	-iex 'set sysroot /' -x "$GDB_SCRIPT" "$dir/prog" \
	-ex "target remote 127.0.0.1:$GS_PORT" \
	-ex 'echo @@CHUNKS\n' -ex 'heap chunks' \
	-ex 'echo @@STATUS ' -ex 'output $_heapwalk_status' -ex 'echo \n' \
	-ex 'echo @@HW 1\n' -ex 'heap bins --json' -ex 'echo @@RC 1\n' \
	-ex 'output $_heapwalk_status' -ex 'echo \n' \
	-ex 'echo @@HW 2\n' -ex 'heap chunks --json' -ex 'echo @@RC 2\n' \
	-ex 'output $_heapwalk_status' -ex 'echo \n' \
	-ex 'echo @@THREADS\n' -ex 'info threads' -ex 'echo @@BT\n' -ex bt \
	>"$T/gdb.log" 2>&1 </dev/null &
gdbpid=$!
# out.tmp exists while the plugin writes an answer: the walk is on.
serving=
for _ in $(seq 3000); do
	if compgen -G "$T/tmp/heapwalk-*/out.tmp" >/dev/null; then
		serving=1
		break
	fi
	kill -0 "$gdbpid" 2>/dev/null || break
	sleep 0.05
done
[ -n "$serving" ] || fail "the plugin never started serving heap chunks: $(tail -n 5 "$T/gdb.log")"
# To gdb itself: timeout would pass the signal on, then kill gdb 5 s on.
kill -INT "$(child_pid "$gdbpid" gdb)" 2>/dev/null || fail "no gdb under timeout ($gdbpid)"
rc=0
wait "$gdbpid" || rc=$?
wait "$GS_PID" 2>/dev/null || true
[ $rc = 0 ] || fail "gdb exited with status $rc after Ctrl-C: $(tail -n 5 "$T/gdb.log")"
grep -q '^heapwalk: interrupted after [0-9.]* s (Ctrl-C, or gdb lost the target): no report$' "$T/gdb.log" ||
	fail "heap chunks did not say it was interrupted: $(sed -n '/^@@CHUNKS/,/^@@STATUS/p' "$T/gdb.log" | grep -v '^ *0x' | head -c 400)"
status=$(sed -n 's/^@@STATUS *//p' "$T/gdb.log")
[ "$status" = 130 ] || { grep -v "^ *0x" "$T/gdb.log" | sed -n 1,20p >&2; fail "\$_heapwalk_status after Ctrl-C is '$status', want 130"; }
split_reports "$T/after" "$T/gdb.log" 2 "gdb after Ctrl-C"
for i in 1 2; do
	[ "$(cat "$T/after.$i.rc")" = 0 ] || fail "heap command $i after Ctrl-C: status $(cat "$T/after.$i.rc"): $(head -c 300 "$T/after.$i")"
done
"$truthcmp" --bins "$T/$c.truth" "$T/after.1" "$T/after.2" ||
	fail "heap bins after Ctrl-C disagree with the chunks or the truth"
n=$(sed -n '/^@@THREADS$/,$p' "$T/gdb.log" | grep -cE '^\*? +[0-9]+ +Thread ')
[ "$n" = 10 ] || fail "info threads after Ctrl-C lists $n threads, want 10"
sed -n '/^@@BT$/,$p' "$T/gdb.log" | has '^#0 .*read' ||
	fail "bt after Ctrl-C: $(sed -n '/^@@BT$/,$p' "$T/gdb.log" | head -c 300)"
live_untraced "$c" "gdb after Ctrl-C"
live_finish "$c"
say "Ctrl-C stopped heap chunks (interrupted, status 130); heap bins, heap chunks, info threads and bt then worked; the program runs on unharmed"
