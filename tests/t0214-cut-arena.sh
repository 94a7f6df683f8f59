#!/bin/bash
# A core cut short before libc's data (where main_arena lives) still
# holds the heap; no total may pretend to be whole (issue #54).  bins1's
# core is cut at the start of libc's writable data (its last libc.so.6
# mapping in NT_FILE, a PT_LOAD the core dumped): summary's totals are
# marked partial, with main_arena named as what is missing, in text and
# JSON; check reports it at main_arena's address; and nothing is read
# from libc.so.6 on disk in its place (its .data as loaded would say
# "malloc was never called").
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd eu-readelf
need_cmd readelf
dir=$(corpus_core bins1)
core=$dir/core

# libc's writable data: the last libc mapping NT_FILE names, and the
# PT_LOAD that starts there.
start=$(eu-readelf -n "$core" | awk '/libc\.so/ { split($1, r, "-"); s = r[1] } END { print s }')
[ -n "$start" ] || fail "no libc.so mapping in bins1's NT_FILE"
off=$(readelf -lW "$core" | awk -v s="$start" '$1 == "LOAD" && $3 ~ "0x0*" s "$" { print $2 }')
[ -n "$off" ] || fail "no PT_LOAD at 0x$start in bins1's core"
flags=$(readelf -lW "$core" | awk -v s="$start" '$1 == "LOAD" && $3 ~ "0x0*" s "$" { print $7 }')
[ "$flags" = RW ] || fail "libc's last mapping 0x$start is not RW ($flags)"
head -c $((off)) "$core" >"$T/cut.core"
[ -s "$T/cut.core" ] || fail "the cut core is empty"

hw "$T/summary" "$T/err" "$T/cut.core" summary
expect_rc 0
has '^partial: .*main_arena is not readable in the core' <"$T/summary" ||
	fail "summary does not say the totals are partial for want of main_arena: $(grep -m3 '^in use\|^partial\|^arenas' "$T/summary")"
has '^in use: .*(partial)' <"$T/summary" || fail "summary's 'in use' is not marked partial"
grep -q 'malloc has not been called' "$T/summary" &&
	fail "libc's .data was read from the file on disk in place of the cut core"
hw "$T/summary.json" "$T/err" --json "$T/cut.core" summary
expect_rc 0
has -F '"partial":true' <"$T/summary.json" || fail "summary --json is not partial"
hw "$T/check" "$T/err" "$T/cut.core" check
expect_rc 1
has 'main_arena is not readable in the core (cut short)' <"$T/check" ||
	fail "check does not name main_arena: $(tail -n 3 "$T/check")"
grep -q 'malloc has not been called\|mp_ counts' "$T/check" &&
	fail "check reads libc's data from the file: $(grep 'malloc has not\|mp_ counts' "$T/check")"
say "bins1 cut at libc's data (0x$start, file offset $off): totals partial, main_arena named, nothing read from libc.so.6 in its place"
