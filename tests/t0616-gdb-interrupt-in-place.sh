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
CTRL_C_AFTER=(-ex 'echo @@END\n')
gdb_ctrl_c stalled HEAPWALK_GDB_TEST_STALL_IN_PLACE "$dir/prog" "$dir/core"
! grep -qx 'Quit' "$T/gdb.log" || fail "gdb still had the Ctrl-C pending (it said Quit)"
grep -qx '@@END' "$T/gdb.log" || fail "gdb did not run every command after Ctrl-C: $(tail -n 5 "$T/gdb.log")"
"$truthcmp" --bins "$dir/truth.txt" "$T/after.1" "$T/after.2" ||
	fail "heap bins after Ctrl-C disagree with the chunks or the truth"
say "Ctrl-C during heap chunks walked in place: interrupted, status 130, no Quit left; heap bins and heap chunks then agree with the truth"
