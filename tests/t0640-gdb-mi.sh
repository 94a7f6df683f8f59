#!/bin/bash
# gdb's `heap` commands under gdb/MI, as IDE front ends (VS Code, Eclipse
# CDT, Emacs gud) drive gdb: `gdb -i=mi`, each command sent both as a
# plain CLI line and as `-interpreter-exec console "..."`.  What the
# front end's console shows (the ~"..." records, decoded by
# tests/tools/miconsole) must be the report itself:
#  - on the glibc bins1 core, chunks/summary/bins --json agree with the
#    program's truth, and the text of heap, bins, chunk ADDR equals the
#    tool's;
#  - no command answers ^error, and nothing of gdb's captures (sections,
#    mappings, auxv, threads) leaks into the console;
#  - few =cmd-param-changed notifications (the script's logging).
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
truthcmp=$(tool truthcmp)
miconsole=$(tool miconsole)

dir=$(corpus_core bins1)
o=$T/mi
addr=$(sed -n 's/^alloc \(0x[0-9a-f]*\) .*/\1/p' "$dir/truth.txt" | sed -n 1,1p)
[ -n "$addr" ] || addr=0x0
# The commands, each as a CLI line (odd) or through -interpreter-exec.
cmds=("chunks --json" "--json" "bins --json" "" bins "chunk $addr")
{
	i=0
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		echo "echo @@HW $i\\n"
		if [ $((i % 2)) = 1 ]; then
			echo "heap $c"
		else
			echo "-interpreter-exec console \"heap $c\""
		fi
		echo "echo @@RC $i\\n"
		echo 'output $_heapwalk_status'
		echo 'echo \n'
	done
	echo '-gdb-exit'
} >"$T/mi.in"
rc=0
timeout -k 5 120 gdb -nx -i=mi -iex 'set pagination off' -iex 'set width 0' \
	-x "$GDB_SCRIPT" "$dir/prog" "$dir/core" <"$T/mi.in" >"$T/mi.out" 2>&1 || rc=$?
[ $rc -lt 124 ] || fail "gdb -i=mi: hung or crashed (exit $rc)"
"$miconsole" <"$T/mi.out" >"$T/mi.console" || fail "gdb -i=mi: malformed console records"
split_reports "$o" "$T/mi.console" "${#cmds[@]}" "gdb -i=mi"
for ((i = 1; i <= ${#cmds[@]}; i++)); do
	[ "$(cat "$o.$i.rc")" = 0 ] || fail "MI: heap ${cmds[i - 1]}: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
done
if grep -n '^\^error' "$T/mi.out" >&2; then
	fail "gdb -i=mi answered ^error"
fi
"$truthcmp" "$dir/truth.txt" "$o.1" "$o.2" ||
	fail "MI: heap chunks/summary disagree with the truth"
"$truthcmp" --bins "$dir/truth.txt" "$o.3" "$o.1" ||
	fail "MI: heap bins disagree with the chunks or the truth"
hw "$o.cli.4" "$o.cli.4.err" "$dir/core" summary
same_as_cli "$o.4" "$o.cli.4" "MI: heap"
hw "$o.cli.5" "$o.cli.5.err" "$dir/core" bins
same_as_cli "$o.5" "$o.cli.5" "MI: heap bins"
hw "$o.cli.6" "$o.cli.6.err" "$dir/core" chunk "$addr"
same_as_cli "$o.6" "$o.cli.6" "MI: heap chunk $addr"
# gdb's captured text would start like this in the console.
if grep -nE '^(Exec file:|Mapped address spaces:|[0-9]+ +AT_|  Id +Target Id)' \
	"$T/mi.console" >&2; then
	fail "gdb's captured output leaked into the MI console"
fi
# Every setting the script changes is an =cmd-param-changed notification a
# front end must process, twice (set and restore); the script changes 7
# per command (two `with logging` chains; it was 32 before they were
# merged).  Bound it: 16 notifications per command.
notes=$(grep -c '^=cmd-param-changed' "$T/mi.out" || true)
[ "$notes" -le $((16 * ${#cmds[@]} + 2)) ] ||
	fail "MI: $notes =cmd-param-changed notifications for ${#cmds[@]} commands"
say "MI (CLI lines and -interpreter-exec): chunks, summary, bins agree with the truth; heap, bins, chunk print what the tool prints; no captures leak; $notes setting notifications for ${#cmds[@]} commands"
