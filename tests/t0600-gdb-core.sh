#!/bin/bash
# gdb's `heap` commands (the plugin, no Python) on cores of the corpus
# programs, in gdb as a user runs it (`gdb prog core`, the plugin sourced):
#  - glibc bins1 and threads8: `heap chunks --json` and `heap --json`
#    agree with the program's own truth (truthcmp, as for the tool), bins
#    hold every chunk the truth puts in a free list;
#  - jemalloc 5.3 basic1 (Debian's stripped libjemalloc2): chunks, summary,
#    sizes, bins and arenas agree with jemalloc's own statistics
#    (jetruthcmp); its views (tcache, bins --list, arena 0, chunk ADDR, mp)
#    print as the tool's;
#  - every command's text and JSON equals the tool's on the same core
#    (one renderer), `heap chunk EXPR` and `heap chunks --around EXPR N`
#    take a gdb expression (the latter's the plugin has gdb evaluate and
#    runs again: plugin/reask.h), `-o FILE`
#    writes the report to a file, a bad command and an expression gdb
#    cannot evaluate set $_heapwalk_status 2;
#  - the heap commands leave gdb's state alone: registers, selected thread
#    and frame, and `bt` are the same before and after, and the same as
#    without the plugin.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
truthcmp=$(tool truthcmp)
jetruthcmp=$(tool jetruthcmp)

cmds=(summary arenas bins chunks sizes "sizes --exact" check frag
	"bins tcache" "chunks --free" "summary --json" "chunks --json"
	"bins --json" "sizes --json" "arenas --json" "frag --json")

# compare_all DIR OUTPREFIX TOOLOPTS...: every command of cmds, gdb vs tool.
compare_all() {
	local dir=$1 out=$2 i=0 c
	shift 2
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		[ "$(cat "$out.$i.rc")" = 0 ] || fail "$dir: heap $c: status $(cat "$out.$i.rc")"
		# shellcheck disable=SC2086 # c holds the command and its words
		hw "$out.cli.$i" "$out.cli.$i.err" "$@" "$dir/core" $c
		expect_rc 0
		same_as_cli "$out.$i" "$out.cli.$i" "$dir: heap $c"
	done
}

for c in bins1 threads8; do
	dir=$(corpus_core "$c")
	o=$T/$c
	gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
	compare_all "$dir" "$o"
	# 11: summary --json, 12: chunks --json, 13: bins --json
	"$truthcmp" "$dir/truth.txt" "$o.12" "$o.11" ||
		fail "$c: gdb's heap chunks/summary disagree with the truth"
	"$truthcmp" --bins "$dir/truth.txt" "$o.13" "$o.12" ||
		fail "$c: gdb's heap bins disagree with the chunks or the truth"
	say "$c: heap's chunks, summary and bins agree with the truth; ${#cmds[@]} commands print what the tool prints"
done

# jemalloc: Debian's libjemalloc2, no debug info.
dir=$(jemalloc_truth jemalloc-5.3.0-amd64 basic1)
o=$T/je
gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "chunks --json --no-debuginfo" \
	"summary --json --no-debuginfo" "sizes --json --no-debuginfo" \
	"bins --json --no-debuginfo" "arenas --json --no-debuginfo"
"$jetruthcmp" "$dir/truth.txt" "$o.1" "$o.2" "$o.3" "$o.4" "$o.5" ||
	fail "jemalloc basic1: gdb's heap disagrees with jemalloc's own statistics"
gdb_heap "$o.t" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
compare_all "$dir" "$o.t"
say "jemalloc 5.3 basic1: heap's chunks, summary, sizes, bins, arenas agree with jemalloc's statistics; text equals the tool's"
# Its views (t0108 checks them against the truth): as the tool's.
addr=$(awk '$1 == "tcfree" { print $3; exit }' "$dir/truth.txt")
cmds=(tcache "tcache --json" "bins --list" "bins --list --json" "arena 0"
	"arena 0 --json" "chunk $addr" "--json chunk $addr" mp "mp --json")
gdb_heap "$o.v" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
compare_all "$dir" "$o.v"
say "jemalloc 5.3 basic1: heap tcache, bins --list, arena 0, chunk ADDR and mp print what the tool prints"

# An address as a gdb expression, -o FILE, a bad command.
dir=$(corpus_core bins1)
addr=$(sed -n 's/.*"addr":"\(0x[0-9a-f]*\)".*"state":"free".*/\1/p' "$T/bins1.12" | sed -n 1,1p)
[ -n "$addr" ] || fail "no free chunk in bins1's chunks"
o=$T/expr
gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "chunk $addr+8" "chunk --json $addr" \
	"chunks -o $T/expr.file" "nosuch" "bins --allocator nosuch" \
	"frag" "chunk no_such_symbol" "chunks --around $addr+8 2" \
	"chunks --json --around ($addr) 1 --free" "frag" \
	"chunks --around no_such_symbol 2" "chunk $addr+8 --bytes 16" \
	"view $addr+8 2" "--json view ($addr+8) 1 --bytes 8"
hw "$o.cli" "$o.cli.err" "$dir/core" chunk "$(printf '%#x' $((addr + 8)))"
same_as_cli "$o.1" "$o.cli" "heap chunk $addr+8"
grep -q "\"query\":\"$addr\"" "$o.2" || fail "heap chunk --json $addr: $(head -c 200 "$o.2")"
hw "$o.cli3" "$o.cli3.err" "$dir/core" chunks
cmp -s "$T/expr.file" "$o.cli3" || fail "heap chunks -o FILE: the file is not the report"
grep -q "bytes written to $T/expr.file" "$o.3" || fail "heap chunks -o: no line saying so: $(cat "$o.3")"
[ "$(cat "$o.4.rc")" = 2 ] || fail "heap nosuch: status $(cat "$o.4.rc"), want 2"
grep -q "^heapwalk: .*nosuch" "$o.4" || fail "heap nosuch: no error line: $(cat "$o.4")"
[ "$(cat "$o.5.rc")" = 2 ] || fail "heap bins --allocator nosuch: status $(cat "$o.5.rc")"
# An expression gdb cannot evaluate: 2, not the status frag left (0).
[ "$(cat "$o.6.rc")" = 0 ] || fail "heap frag: status $(cat "$o.6.rc")"
[ "$(cat "$o.7.rc")" = 2 ] || fail "heap chunk no_such_symbol: status $(cat "$o.7.rc"), want 2"
# --around EXPR: gdb evaluates it (the plugin asks, plugin/reask.h).
hw "$o.cli8" "$o.cli8.err" "$dir/core" chunks --around "$(printf '%#x' $((addr + 8)))" 2
[ "$(cat "$o.8.rc")" = 0 ] || fail "heap chunks --around $addr+8 2: status $(cat "$o.8.rc")"
same_as_cli "$o.8" "$o.cli8" "heap chunks --around $addr+8 2"
hw "$o.cli9" "$o.cli9.err" --json "$dir/core" chunks --around "$addr" 1 --free
same_as_cli "$o.9" "$o.cli9" "heap chunks --json --around ($addr) 1 --free"
[ "$(cat "$o.11.rc")" = 2 ] || fail "heap chunks --around no_such_symbol: status $(cat "$o.11.rc"), want 2"
# ADDR where the tool's usage puts it, options after it.
x=$(printf '%#x' $((addr + 8)))
hw "$o.cli12" "$o.cli12.err" "$dir/core" chunk "$x" --bytes 16
same_as_cli "$o.12" "$o.cli12" "heap chunk $addr+8 --bytes 16"
hw "$o.cli13" "$o.cli13.err" "$dir/core" view "$x" 2
same_as_cli "$o.13" "$o.cli13" "heap view $addr+8 2"
hw "$o.cli14" "$o.cli14.err" --json "$dir/core" view "$x" 1 --bytes 8
same_as_cli "$o.14" "$o.cli14" "heap --json view ($addr+8) 1 --bytes 8"
say "heap chunk EXPR [--bytes N], view EXPR [COUNT], chunks --around EXPR, -o FILE and errors as the tool has them"

# gdb's state: the same before and after every heap command.
dir=$(corpus_core threads8)
state=(-ex 'thread 3' -ex 'frame 1' -ex 'echo @@STATE\n' -ex 'info registers'
	-ex 'thread' -ex 'frame' -ex 'bt' -ex 'echo @@END\n')
with=() c=
for c in summary bins chunks "chunk 0" check frag; do
	with+=(-ex "heap $c")
done
timeout 120 gdb -nx -batch -iex 'set pagination off' "$dir/prog" "$dir/core" \
	"${state[@]}" >"$T/state.without" 2>&1 || fail "gdb without the plugin failed"
timeout 120 gdb -nx -batch -iex 'set pagination off' -x "$GDB_SCRIPT" \
	"$dir/prog" "$dir/core" "${state[@]:0:4}" "${with[@]}" "${state[@]:4}" \
	>"$T/state.with" 2>&1 || fail "gdb with the plugin failed"
extract() { sed -n '/^@@STATE$/,/^@@END$/p' "$1"; }
if ! diff <(extract "$T/state.without") <(extract "$T/state.with") >"$T/state.diff"; then
	head -n 20 "$T/state.diff" >&2
	fail "registers, thread, frame or bt differ after the heap commands"
fi
[ "$(extract "$T/state.with" | grep -c .)" -gt 10 ] || fail "no state printed: $(head -c 300 "$T/state.with")"
say "registers, selected thread and frame, bt: unchanged by 6 heap commands"

# leaks, refs, why, maps in gdb: the same blocks and kinds as the tool,
# and every thread's registers are roots there too (the script passes
# gdb's general registers in NT_PRSTATUS order): leaks1 keeps one block
# only in a register of a thread parked in a system call.
dir=$(corpus_core leaks1)
reg=$(awk '$1 == "block" && $6 ~ /^reg:/ { print $2; exit }' "$dir/truth.txt")
o=$T/leaks
gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "leaks --reachable --json" \
	"leaks" ${reg:+"why --json $reg"} "maps --json"
hw "$o.cli1" "$o.cli1.err" "$dir/core" --json leaks --reachable
expect_rc 0
cmp -s "$o.1" "$o.cli1" || fail "heap leaks --reachable --json differs from the tool's"
n=$(sed -n 's/^roots: \([0-9]*\) registers.*/\1/p' "$o.2")
[ "${n:-0}" -gt 0 ] || fail "heap leaks: no register roots in gdb: $(head -n 1 "$o.2")"
if [ -n "$reg" ]; then
	grep -q '"register"' "$o.3" ||
		fail "heap why $reg: the chain does not start at a register: $(head -c 300 "$o.3")"
	say "heap why: the register-held block $reg is held by a register in gdb too"
fi
grep -q '"writable":{"bytes":[1-9]' "$o.4" || fail "heap maps --json: $(head -c 200 "$o.4")"
say "heap leaks: the tool's blocks and kinds, $n register roots"
