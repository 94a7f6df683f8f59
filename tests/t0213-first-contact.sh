#!/bin/bash
# What a new user meets first says what to do, not what went wrong
# inside (issue #54, "the way in"):
#  - a target that is a device or a pipe is named as such (exit 3), not
#    "Invalid argument";
#  - two cores on the line suggest `diff` (exit 2);
#  - `chunks --arena N` past the last arena is a usage error naming the
#    arenas, as `arena N` is;
#  - `chunks --thread N` takes a thread's number as reports show it
#    ("thread 2") as well as a tid, and says which tid it took; a tid
#    wins over a number; --arena and --thread that disagree are refused
#    in either order;
#  - `refs` of an address in no block names the command to run, with no
#    literal "...";
#  - `help COMMAND` run from the build tree names the manual page in the
#    tree (man -l), which exists;
#  - `map` without -o refuses to write its SVG to a terminal (exit 2) and
#    writes it to a pipe;
#  - an --exe that is not the core's program is not used (the core keeps
#    its own executable's name) and summary says so, text and JSON; a
#    stripped copy of the right program is used.
# threads8's truth gives its threads' ids: the core lists the crashing
# (main) thread first, then the others by tid.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
dir=$(corpus_core threads8)
core=$dir/core

# ---- targets that are no file ----------------------------------------
hw "$T/out" "$T/err" /dev/null
expect_rc 3
one_error_line "$T/err" "heapwalk /dev/null"
has -F "character device" <"$T/err" || fail "/dev/null: $(cat "$T/err")"
mkfifo "$T/fifo"
hw "$T/out" "$T/err" "$T/fifo"
expect_rc 3
has -F "a pipe" <"$T/err" || fail "a FIFO: $(cat "$T/err")"
say "a device and a pipe as the target are named as such"

# ---- two cores --------------------------------------------------------
other=$(corpus_core bins1)/core
hw "$T/out" "$T/err" "$core" "$other"
expect_rc 2
one_error_line "$T/err" "heapwalk CORE CORE"
has -F "$other diff $core" <"$T/err" || fail "two cores: no diff suggested: $(cat "$T/err")"
say "two cores on the line suggest diff"

# ---- chunks --arena past the arenas ------------------------------------
narenas=$(awk '$1 == "thread" && $4 != "none" { print $4 }' "$dir/truth.txt" | sort -u | wc -l)
[ "$narenas" -ge 2 ] || fail "threads8's truth names $narenas arenas"
hw "$T/out" "$T/err" "$core" chunks --arena "$narenas"
expect_rc 2
one_error_line "$T/err" "chunks --arena $narenas"
has -F "the arenas are 0 to $((narenas - 1))" <"$T/err" || fail "chunks --arena $narenas: $(cat "$T/err")"
hw "$T/out" "$T/err" "$core" chunks --arena $((narenas - 1))
expect_rc 0
say "chunks --arena $narenas (of $narenas arenas) is a usage error naming 0 to $((narenas - 1))"

# ---- chunks --thread: a number or a tid --------------------------------
main_tid=$(awk '$1 == "thread" && $4 == "main" { print $3 }' "$dir/truth.txt")
second_tid=$(awk -v m="$main_tid" '$1 == "thread" && $3 != m { print $3 }' "$dir/truth.txt" | sort -n | sed -n 1p)
[ -n "$main_tid" ] && [ -n "$second_tid" ] || fail "no thread ids in threads8's truth"
hw "$T/by-number" "$T/err" "$core" chunks --thread 2
expect_rc 0
hw "$T/by-tid" "$T/err" "$core" chunks --thread "$second_tid"
expect_rc 0
[ "$(tail -n 1 "$T/by-number")" = "(--thread 2 is thread 2, tid $second_tid)" ] ||
	fail "chunks --thread 2 does not say which tid it took: $(tail -n 1 "$T/by-number")"
cmp -s <(sed '$d' "$T/by-number") "$T/by-tid" ||
	fail "chunks --thread 2 lists other blocks than --thread $second_tid"
[ "$(wc -l <"$T/by-tid")" -gt 1 ] || fail "chunks --thread $second_tid lists nothing"
grep -q '^(--thread' "$T/by-tid" && fail "chunks --thread TID says it took a number"
arena=$(awk 'NR == 2 { print $5 }' "$T/by-tid")
hw "$T/out" "$T/err" "$core" chunks --thread 2 --arena $(((arena + 1) % narenas))
expect_rc 2
one_error_line "$T/err" "chunks --thread 2 --arena OTHER"
hw "$T/out" "$T/err" "$core" chunks --arena $(((arena + 1) % narenas)) --thread 2
expect_rc 2
one_error_line "$T/err" "chunks --arena OTHER --thread 2"
say "chunks --thread 2 is thread 2 (tid $second_tid), said so; --arena against it refused in either order"

# ---- refs of an address in no block -------------------------------------
hw "$T/out" "$T/err" "$core" refs 0x1
expect_rc 0
grep -qF '...' "$T/out" && fail "refs 0x1 prints a literal '...': $(cat "$T/out")"
has -F "chunk 0x1" <"$T/out" || fail "refs 0x1 does not name the command to run: $(cat "$T/out")"
say "refs 0x1 names the command chunk 0x1"

# ---- help names the manual page in the tree ------------------------------
hw "$T/out" "$T/err" help chunks
expect_rc 0
page=$(sed -n 's/.*man -l \([^ ]*heapwalk\.1\).*/\1/p' "$T/out")
if [ "$(dirname "$HEAPWALK")" = "$TOP/build" ] || [ "$(dirname "$(dirname "$HEAPWALK")")" = "$TOP/build" ]; then
	[ -n "$page" ] && [ -f "$page" ] ||
		fail "help chunks from the build tree does not name doc/heapwalk.1: $(tail -n 1 "$T/out")"
	say "help chunks names $page"
else
	say "help from an installed heapwalk: $(tail -n 1 "$T/out")"
fi

# ---- map: not onto a terminal --------------------------------------------
hw "$T/svg" "$T/err" "$core" map
expect_rc 0
head -c 200 "$T/svg" | grep -q '<svg' || fail "map into a pipe wrote no SVG: $(head -c 100 "$T/svg")"
if command -v script >/dev/null 2>&1; then
	rc=0
	script -qec "$HEAPWALK $core map" /dev/null >"$T/tty" 2>&1 </dev/null || rc=$?
	[ "$rc" = 2 ] || fail "map on a terminal: status $rc, want 2: $(head -c 300 "$T/tty")"
	has -F -- "-o FILE" <"$T/tty" || fail "map on a terminal does not say -o FILE: $(head -c 300 "$T/tty")"
	grep -q '<svg' "$T/tty" && fail "map wrote its SVG to a terminal"
	say "map refuses a terminal (script(1)'s pty), writes to a pipe"
else
	say "script(1) is missing (bsdutils): map on a terminal not tried"
fi

# ---- --exe of another program ---------------------------------------------
# The core's executable is threads8's prog; bins1's is another program,
# and a stripped copy of the right one is the same program.
hw "$T/out" "$T/err" --exe "$(dirname "$other")/prog" "$core" summary
expect_rc 0
has -F -- "--exe $(dirname "$other")/prog: not used: it is not the program of this core" <"$T/out" ||
	fail "a wrong --exe is not refused: $(grep -m1 '^target:' "$T/out")"
has -F "(core of $dir/prog)" <"$T/out" ||
	fail "a wrong --exe relabels the core: $(grep -m1 '^target:' "$T/out")"
hw "$T/json" "$T/err" --json --exe "$(dirname "$other")/prog" "$core" summary
expect_rc 0
has -F '"target_limits":["--exe ' <"$T/json" || fail "--json does not list the unused --exe in target_limits"
if command -v strip >/dev/null 2>&1; then
	cp "$dir/prog" "$T/prog.stripped"
	strip "$T/prog.stripped"
	hw "$T/out" "$T/err" --exe "$T/prog.stripped" "$core" summary
	expect_rc 0
	grep -q -- '--exe .*not used' "$T/out" && fail "a stripped copy of the core's program is refused as --exe"
	has -F "(core of $T/prog.stripped)" <"$T/out" || fail "a stripped --exe is not used: $(grep -m1 '^target:' "$T/out")"
fi
say "--exe of another program is not used and said so; a stripped copy of the core's program is"

# ---- frag counts thread caches apart ---------------------------------------
# bins1's truth gives every free chunk's list and usable size: cached is
# its tcache chunks' bytes, largest the largest chunk in a bin, and frag
# is figured from them: 1 - largest / (free - cached).
b=$(dirname "$other")
read -r cached largest < <(awk '$1 == "alloc" && $5 == "tcache" { c += $4 }
	$1 == "alloc" && ($5 == "fastbin" || $5 == "smallbin" || $5 == "largebin" || $5 == "unsorted") && $4 > m { m = $4 }
	END { print c + 0, m + 0 }' "$b/truth.txt")
[ "$cached" -gt 0 ] && [ "$largest" -gt 0 ] || fail "bins1's truth has no tcache or binned chunks"
hw "$T/frag.json" "$T/err" --json "$b/core" frag
expect_rc 0
row=$(grep -o '"arena":0,[^}]*' "$T/frag.json")
num() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$row"; }
[ "$(num cached)" = "$cached" ] || fail "frag's cached $(num cached), the truth's tcache chunks $cached"
[ "$(num largest_free)" = "$largest" ] || fail "frag's largest $(num largest_free), the truth's largest binned chunk $largest"
want=$(awk -v l="$largest" -v f="$(num free)" -v c="$cached" 'BEGIN { printf "%.4f", 1 - l / (f - c) }')
[ "$(printf '%.4f' "$(num frag)")" = "$want" ] || fail "frag $(num frag), 1 - largest / (free - cached) is $want"
hw "$T/frag.txt" "$T/err" "$b/core" frag
expect_rc 0
has -F "cached: of free, the blocks in thread caches" <"$T/frag.txt" || fail "frag's legend does not say what cached is"
say "frag: cached = bins1's tcache chunks ($cached B), largest its largest binned chunk, frag from them"
