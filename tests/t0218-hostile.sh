#!/bin/bash
# Hostile cores (found by fuzzing): real corpus cores with one
# hostile change each, made by tests/tools/corecraft.  Every run is under
# `timeout 30` and must finish: exit 0, 1 (check's findings), 3 or 4 (then
# with exactly one "heapwalk: " line on stderr), no sanitizer report.
#   huge-memsz     a PT_LOAD claims 1 TiB (ptmalloc bins1, jemalloc basic1)
#   vast-memsz     a PT_LOAD claims 64 TiB: leaks, why and refs scan what
#                  the core holds, not what the header claims (they used
#                  to step through the missing part a page at a time:
#                  ~100 s)
#   escape-names   NT_FILE names holding terminal escapes (a window title,
#                  a colour), a backspace and bytes of no valid UTF-8:
#                  text output (summary, maps, check, leaks, frag) holds
#                  no control byte but newlines and is valid UTF-8; each
#                  hostile byte shows as \xNN
#   junk-regs      every register of every thread is junk (and on top of
#                  huge-memsz)
#   many-threads   20,000 and 60,000 more NT_PRSTATUS notes: summary says
#                  1 + N threads, and 3 times the threads may cost at most
#                  QUAD_LIMIT (5) times the time (quadratic would be 9)
#   many-files     20,000 and 100,000 more NT_FILE names: 5 times the
#                  files at most 12 times the time (quadratic: 25)
#   xnum           65,535 and 131,070 program headers (PN_XNUM), all the
#                  added ones PT_NOTEs aliasing the one note segment (of
#                  bins1, and of bins1 with 100 more threads): the threads
#                  are those of the distinct notes (1, 101), and twice the
#                  headers at most 3 times the time
#   xnum-distinct  131,070 program headers, the added PT_NOTEs each one
#                  different byte of the file: the real note is still read
#                  (1 thread), and libdwfl never sees the 131,070 (its core
#                  reader is quadratic in them: 5 minutes before)
#   rtree-alias    every slot of jemalloc's radix tree root points at one
#                  real leaf: the root is refused (exit 4) without symbols
#   rtree-alias-late  the root passes a 64-slot check, then every empty
#                  slot after the first real one (some 131,000) aliases its
#                  leaf: a finding, and every allocation of the program's
#                  truth is still found (jetruthcmp)
#   --exe CORE     a core given as the executable: a usage error (exit 2,
#                  one line), not libdw's leak
# Times are printed; only their ratios are judged (the asan build is slow,
# the machine shared).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd timeout
corecraft=$(tool corecraft)
jetruthcmp=$(tool jetruthcmp)
bins=$(corpus_core bins1)
je=$(variant_core jemalloc-5.3.0-amd64 basic1) || je=

# craft MODE IN OUT [N]: corecraft, its line shown.
craft() {
	local line
	line=$("$corecraft" "$@") || fail "corecraft $* failed"
	say "$line"
}

# run NAME ARGS...: heapwalk ARGS under timeout 30; sets MS (wall time
# in milliseconds) and RC; fails on a hang, a crash, a sanitizer report,
# an unexpected exit status or a bad error line.
MS=0 RC=0
run() {
	local name=$1 t0 t1 n
	shift
	RC=0
	t0=${EPOCHREALTIME/./}
	timeout -k 5 30 "$HEAPWALK" "$@" >"$T/out" 2>"$T/err" || RC=$?
	t1=${EPOCHREALTIME/./}
	MS=$(((t1 - t0) / 1000))
	if [ $RC = 124 ] || [ $RC = 137 ]; then
		fail "$name: heapwalk $* hung (killed after 30 s)"
	fi
	if [ $RC -ge 128 ] || [ $RC = 98 ] || [ $RC = 99 ] ||
		grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$T/err"; then
		tail -n 30 "$T/err"
		fail "$name: heapwalk $* crashed or tripped a sanitizer (exit $RC)"
	fi
	case $RC in
	0 | 1) ;;
	3 | 4) one_error_line "$T/err" "$name" ;;
	2) [ "${USAGE_OK:-0}" = 1 ] || fail "$name: heapwalk $* exited 2 (usage)"
		one_error_line "$T/err" "$name" ;;
	*)
		head -n 5 "$T/err"
		fail "$name: heapwalk $* exited $RC"
		;;
	esac
	if [ $RC -ge 3 ]; then
		say "$name: exit $RC in ${MS} ms: $(head -c 160 "$T/err")"
	else
		say "$name: exit $RC in ${MS} ms"
	fi
}

# ratio_ok NAME MS_SMALL MS_BIG LIMIT: MS_BIG <= LIMIT * MS_SMALL (with
# 200 ms of slack for the fixed costs).
ratio_ok() {
	say "$1: ${2} ms -> ${3} ms"
	(($3 <= $4 * $2 + 200)) ||
		fail "$1: ${3} ms is more than $4 times ${2} ms: worse than linear"
}

# threads_said: the thread count of the last summary.
threads_said() {
	sed -n 's/^threads: *\([0-9]*\).*/\1/p' "$T/out" | sed -n 1,1p
}

# ---- ptmalloc: bins1 ------------------------------------------------------
core=$bins/core
craft huge-memsz "$core" "$T/huge.core"
run "bins1 huge-memsz summary" "$T/huge.core" summary
run "bins1 huge-memsz check" "$T/huge.core" check
craft escape-names "$core" "$T/esc.core"
for cmd in summary maps check leaks frag; do
	run "bins1 escape-names $cmd" "$T/esc.core" "$cmd"
	cat "$T/out" "$T/err" >"$T/esc.text"
	! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$T/esc.text") ||
		fail "escape-names $cmd: a control byte reaches the terminal: $(LC_ALL=C grep -a -m1 '[[:cntrl:]]' "$T/esc.text" | od -c | sed -n 1,3p)"
	iconv -f UTF-8 -t UTF-8 "$T/esc.text" >/dev/null 2>&1 ||
		fail "escape-names $cmd: the text is not valid UTF-8"
done
run "bins1 escape-names summary" "$T/esc.core" summary
grep -qF '\x1b]0;pwn\x07\x1b[31m\x08\x0a\xff\x80' "$T/out" ||
	fail "escape-names: summary does not show the name's bytes escaped: $(grep -m1 'missing' "$T/out")"
rm -f "$T/esc.core"
craft vast-memsz "$core" "$T/vast.core"
run "bins1 vast-memsz leaks" "$T/vast.core" leaks
run "bins1 vast-memsz why" "$T/vast.core" why "$(awk '$1 == "alloc" && $5 == "heap" { print $2; exit }' "$bins/truth.txt")"
run "bins1 vast-memsz refs" "$T/vast.core" refs "$(awk '$1 == "alloc" && $5 == "heap" { print $2; exit }' "$bins/truth.txt")"
rm -f "$T/vast.core"
craft junk-regs "$core" "$T/junk.core"
run "bins1 junk-regs summary" "$T/junk.core" summary
craft junk-regs "$T/huge.core" "$T/hugejunk.core"
run "bins1 huge-memsz+junk-regs check" "$T/hugejunk.core" check

craft many-threads "$core" "$T/t20k.core" 20000
craft many-threads "$core" "$T/t60k.core" 60000
run "bins1 20000 threads" "$T/t20k.core" summary
[ "$(threads_said)" = 20001 ] || fail "20000 more threads: summary says $(threads_said)"
ms20=$MS
rm -f "$T/t20k.core"
run "bins1 60000 threads" "$T/t60k.core" summary
[ "$(threads_said)" = 60001 ] || fail "60000 more threads: summary says $(threads_said)"
ratio_ok "threads x3" "$ms20" "$MS" 5
rm -f "$T/t60k.core"

craft many-files "$core" "$T/f20k.core" 20000
craft many-files "$core" "$T/f100k.core" 100000
run "bins1 20000 files" "$T/f20k.core" summary
msf=$MS
run "bins1 100000 files" "$T/f100k.core" summary
grep -q 'missing or different files.*/nonexistent/corecraft/f0000000' "$T/out" ||
	fail "100000 files: the summary does not name the missing ones"
ratio_ok "files x5" "$msf" "$MS" 12
rm -f "$T/f20k.core" "$T/f100k.core"

craft xnum "$core" "$T/x65535.core" 65535
craft xnum "$core" "$T/x131070.core" 131070
run "bins1 65535 program headers" "$T/x65535.core" summary
[ "$(threads_said)" = 1 ] || fail "PN_XNUM aliases: summary says $(threads_said) threads, the distinct notes hold 1"
msx=$MS
run "bins1 131070 program headers" "$T/x131070.core" summary
[ "$(threads_said)" = 1 ] || fail "PN_XNUM aliases: summary says $(threads_said) threads, the distinct notes hold 1"
ratio_ok "program headers x2" "$msx" "$MS" 3
craft many-threads "$core" "$T/t100.core" 100
craft xnum "$T/t100.core" "$T/t100x.core" 131070
run "bins1 101 threads, 131070 program headers" "$T/t100x.core" summary
[ "$(threads_said)" = 101 ] || fail "PN_XNUM aliases of 101 threads: summary says $(threads_said)"
run "bins1 131070 program headers check" "$T/t100x.core" check
craft xnum-distinct "$core" "$T/xd.core" 131070
run "bins1 131070 distinct PT_NOTEs" "$T/xd.core" summary
[ "$(threads_said)" = 1 ] || fail "distinct decoy PT_NOTEs: summary says $(threads_said) threads, the real note holds 1"
rm -f "$T"/x*.core "$T"/t100*.core

USAGE_OK=1 run "--exe naming a core" --exe "$core" "$core" summary
[ $RC = 2 ] || fail "--exe naming a core: exit $RC, want 2"
one_error_line "$T/err" "--exe naming a core"
grep -q "core file" "$T/err" || fail "--exe naming a core: the error does not say so: $(cat "$T/err")"

# ---- jemalloc: basic1 -----------------------------------------------------
if [ -z "$je" ]; then
	say "no jemalloc 5.3 core here: jemalloc cases skipped"
	exit 0
fi
core=$je/core
craft huge-memsz "$core" "$T/jhuge.core"
craft junk-regs "$core" "$T/jjunk.core"
craft junk-regs "$T/jhuge.core" "$T/jhugejunk.core"
for c in jhuge jjunk jhugejunk; do
	run "basic1 $c" "$T/$c.core" summary
	run "basic1 $c --no-debuginfo" --no-debuginfo "$T/$c.core" summary
done
rm -f "$T"/jhuge*.core "$T/jjunk.core"

craft rtree-alias "$core" "$T/jalias.core"
run "basic1 rtree-alias" "$T/jalias.core" summary
run "basic1 rtree-alias --no-debuginfo" --no-debuginfo "$T/jalias.core" summary
[ $RC = 4 ] || fail "rtree-alias: a root whose slots all name one leaf was taken (exit $RC)"
rm -f "$T/jalias.core"

craft rtree-alias-late "$core" "$T/jlate.core"
run "basic1 rtree-alias-late check" --no-debuginfo "$T/jlate.core" check
[ $RC = 1 ] && grep -q 'radix tree: [0-9]* slots point at arrays that overlap' "$T/out" ||
	fail "rtree-alias-late: no finding about the aliased slots (exit $RC)"
for cmd in chunks summary sizes bins arenas; do
	run "basic1 rtree-alias-late $cmd" --json --no-debuginfo "$T/jlate.core" $cmd
	[ $RC = 0 ] || fail "rtree-alias-late $cmd: exit $RC"
	cp "$T/out" "$T/late.$cmd"
done
"$jetruthcmp" "$je/truth.txt" "$T/late.chunks" "$T/late.summary" \
	"$T/late.sizes" "$T/late.bins" "$T/late.arenas" ||
	fail "rtree-alias-late: heapwalk disagrees with basic1's truth"
say "hostile cores: every run finished"
