#!/bin/bash
# gdb's `heap` commands on live programs, the ways a user reaches one:
#  - `gdb -p PID` (attach), and
#  - gdbserver --attach on this machine with `target remote` (gdb then
#    reads memory over the remote protocol, files with vFile).
# corpora/ptmalloc threads8 in its live mode (9 arenas, a thread that
# never calls malloc): `heap chunks --json`, `heap --json` and `heap bins
# --json` agree with the program's own truth, and the text summary equals
# the tool's --pid summary but for the tool's "live:" line (gdb holds the
# process still; the tool stops and copies it itself).  After each gdb
# run the program is neither stopped nor traced, its SIGUSR1 still
# pending; at the end it checks its own heap and says OK.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
need_live
truthcmp=$(tool truthcmp)

c=threads8
dir=$(live_prog host "$c")
live_start "$c" env CORPUS_LIVE=1 "$dir/prog" "$T/$c.truth"
live_usr1 "$c"
pid=${LIVE_PID[$c]}
hw_live "$c" "$T/cli.summary" "$T/cli.err" summary
expect_rc 0
grep -v '^live: ' "$T/cli.summary" >"$T/cli.summary.nolive"

check_run() {
	local o=$1 how=$2 i
	for i in 1 2 3 4; do
		[ "$(cat "$o.$i.rc")" = 0 ] || fail "$how: heap command $i: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
	done
	"$truthcmp" "$T/$c.truth" "$o.1" "$o.2" ||
		fail "$how: heap chunks/summary disagree with the truth"
	"$truthcmp" --bins "$T/$c.truth" "$o.3" "$o.1" ||
		fail "$how: heap bins disagree with the chunks or the truth"
	same_as_cli "$o.4" "$T/cli.summary.nolive" "$how: heap"
	live_untraced "$c" "$how"
}

gdb_heap "$T/attach" gdb -p "$pid" -- "chunks --json" "--json" "bins --json" ""
check_run "$T/attach" "gdb -p"
say "gdb -p: heap chunks, summary and bins agree with the truth; the text summary is the tool's"

if command -v gdbserver >/dev/null 2>&1; then
	gdbserver_start "$pid"
	gdb_heap "$T/remote" gdb "$dir/prog" -ex "target remote 127.0.0.1:$GS_PORT" -- \
		"chunks --json" "--json" "bins --json" ""
	wait "$GS_PID" 2>/dev/null || true
	check_run "$T/remote" "gdbserver"
	say "gdbserver (target remote): the same"
else
	say "gdbserver not installed: the remote case was not run"
fi
live_finish "$c"
