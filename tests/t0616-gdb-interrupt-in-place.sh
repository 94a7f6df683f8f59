#!/bin/bash
# Ctrl-C in gdb during a `heap` command on a core walked in place
# (plugin/coremap.c): no read goes through gdb, so gdb's own Ctrl-C (an
# exception thrown by a read, t0615) never comes; the plugin's SIGINT
# handler (plugin/ctrlc.c) raises the library's cancel flag instead.  The
# test hook HEAPWALK_GDB_TEST_STALL_IN_PLACE holds the request, with the
# handler in place, until the signal comes (the file "stalled" in the
# plugin's directory says when), so it lands inside the request on a fast
# machine as on a busy one:
#  - the command says "heapwalk: interrupted after N s (...): no report",
#    and $_heapwalk_status is 130;
#  - gdb has no Ctrl-C left pending (the handler kept it): the commands
#    after it run, and `heap bins --json` and `heap chunks --json` agree
#    with the program's truth;
#  - gdb exits normally.
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
truthcmp=$(tool truthcmp)

c=threads8
dir=$(corpus_core "$c")
mkdir -p "$T/tmp"
TMPDIR=$T/tmp HEAPWALK_GDB_TEST_STALL_IN_PLACE=1 timeout -k 5 300 gdb -nx -batch \
	-iex 'set pagination off' -x "$GDB_SCRIPT" "$dir/prog" "$dir/core" \
	-ex 'echo @@CHUNKS\n' -ex 'heap chunks' \
	-ex 'echo @@STATUS ' -ex 'output $_heapwalk_status' -ex 'echo \n' \
	-ex 'echo @@HW 1\n' -ex 'heap bins --json' -ex 'echo @@RC 1\n' \
	-ex 'output $_heapwalk_status' -ex 'echo \n' \
	-ex 'echo @@HW 2\n' -ex 'heap chunks --json' -ex 'echo @@RC 2\n' \
	-ex 'output $_heapwalk_status' -ex 'echo \n' \
	-ex 'echo @@END\n' \
	>"$T/gdb.log" 2>&1 </dev/null &
gdbpid=$!
stalled=
for _ in $(seq 6000); do
	if compgen -G "$T/tmp/heapwalk-*/stalled" >/dev/null; then
		stalled=1
		break
	fi
	kill -0 "$gdbpid" 2>/dev/null || break
	sleep 0.05
done
[ -n "$stalled" ] || fail "the plugin never held heap chunks in place: $(tail -n 5 "$T/gdb.log")"
# To gdb itself: timeout would pass the signal on, then kill gdb 5 s on.
kill -INT "$(child_pid "$gdbpid" gdb)" 2>/dev/null || fail "no gdb under timeout ($gdbpid)"
rc=0
wait "$gdbpid" || rc=$?
[ $rc = 0 ] || fail "gdb exited with status $rc after Ctrl-C: $(tail -n 5 "$T/gdb.log")"
grep -q '^heapwalk: interrupted after [0-9.]* s (Ctrl-C, or gdb lost the target): no report$' "$T/gdb.log" ||
	fail "heap chunks did not say it was interrupted: $(sed -n '/^@@CHUNKS/,/^@@STATUS/p' "$T/gdb.log" | grep -v '^ *0x' | head -c 400)"
status=$(sed -n 's/^@@STATUS *//p' "$T/gdb.log")
[ "$status" = 130 ] || { grep -v "^ *0x" "$T/gdb.log" | sed -n 1,20p >&2; fail "\$_heapwalk_status after Ctrl-C is '$status', want 130"; }
! grep -qx 'Quit' "$T/gdb.log" || fail "gdb still had the Ctrl-C pending (it said Quit)"
grep -qx '@@END' "$T/gdb.log" || fail "gdb did not run every command after Ctrl-C: $(tail -n 5 "$T/gdb.log")"
split_reports "$T/after" "$T/gdb.log" 2 "gdb after Ctrl-C"
for i in 1 2; do
	[ "$(cat "$T/after.$i.rc")" = 0 ] || fail "heap command $i after Ctrl-C: status $(cat "$T/after.$i.rc"): $(head -c 300 "$T/after.$i")"
done
"$truthcmp" --bins "$dir/truth.txt" "$T/after.1" "$T/after.2" ||
	fail "heap bins after Ctrl-C disagree with the chunks or the truth"
say "Ctrl-C during heap chunks walked in place: interrupted, status 130, no Quit left; heap bins and heap chunks then agree with the truth"
