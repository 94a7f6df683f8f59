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
# out.tmp exists while the plugin writes an answer: the walk is on.
CTRL_C_AFTER=(-ex 'echo @@THREADS\n' -ex 'info threads' -ex 'echo @@BT\n' -ex bt)
gdb_ctrl_c out.tmp HEAPWALK_GDB_TEST_STALL -iex 'set sysroot /' "$dir/prog" \
	-ex "target remote 127.0.0.1:$GS_PORT"
wait "$GS_PID" 2>/dev/null || true
"$truthcmp" --bins "$T/$c.truth" "$T/after.1" "$T/after.2" ||
	fail "heap bins after Ctrl-C disagree with the chunks or the truth"
n=$(sed -n '/^@@THREADS$/,$p' "$T/gdb.log" | grep -cE '^\*? +[0-9]+ +Thread ')
[ "$n" = 10 ] || fail "info threads after Ctrl-C lists $n threads, want 10"
sed -n '/^@@BT$/,$p' "$T/gdb.log" | has '^#0 .*read' ||
	fail "bt after Ctrl-C: $(sed -n '/^@@BT$/,$p' "$T/gdb.log" | head -c 300)"
live_untraced "$c" "gdb after Ctrl-C"
live_finish "$c"
say "Ctrl-C stopped heap chunks (interrupted, status 130); heap bins, heap chunks, info threads and bt then worked; the program runs on unharmed"
