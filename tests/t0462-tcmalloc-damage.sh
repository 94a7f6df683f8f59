#!/bin/bash
# A use after free on gperftools tcmalloc (corpora/tcmalloc/damage1.c):
# the head of a thread cache's list has its link overwritten.  `check`
# names that object (exit 1) and the thread cache whose count no longer
# matches its list; the walk goes on: every block in use that the truth
# records is still in use at its size, MallocExtension's figures are
# still tcmalloc's own, and no command crashes or hangs.
# damage2.c does the same in a program that kept no pointer to what it
# freed: the objects behind the break (its truth's "orphan" lines, and
# the others it freed, "freed") read as in use but unreachable; each must
# be free or marked "maybe_free" in chunks --json, check must say so, and
# leaks must never call one lost (definite, indirect or possible): they
# are "unknown".
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
[ -f /usr/include/gperftools/tcmalloc.h ] ||
	skip "gperftools is not installed (make deps: libgoogle-perftools-dev)"
dir=$(variant_core tcmalloc-minimal-amd64 damage1)
addr=$(sed -n 's/^damage 0x//p' "$dir/truth.txt")
[ -n "$addr" ] || fail "damage1's truth names no damaged object"
hw "$T/check" "$T/check.err" --no-debuginfo "$dir/core" check
expect_rc 1
grep -qE "^0x0*$addr: tcmalloc: a thread cache's list of class [0-9]+ \(48 bytes\) links to 0x4141414141414140" "$T/check" ||
	fail "check does not name the damaged object 0x$addr: $(grep '^0x' "$T/check" | sed -n 1,3p)"
grep -q "says its list of class" "$T/check" ||
	fail "check does not say the thread cache's count is off"
for cmd in chunks summary bins arenas sizes frag leaks maps map; do
	hw "$T/$cmd" "$T/$cmd.err" --json --no-debuginfo "$dir/core" $cmd
	expect_rc 0
done
# Every block in use is still in use; the objects the broken link cut
# off read as in use too (what the damage hides), so only used records
# and the figures are compared.
grep -v '^alloc .* freed ' "$dir/truth.txt" >"$T/truth.used"
"$(tool tctruthcmp)" "$T/truth.used" "$T/chunks" "$T/summary" "$T/bins" \
	>"$T/cmp" || true
if grep -v -e 'bins: class' -e 'mismatches$' -e '\.\.\. and' "$T/cmp" | has .; then
	cat "$T/cmp" >&2
	fail "after the damage, heapwalk disagrees with the truth's blocks in use or figures"
fi
say "the damaged link is named at 0x$addr; blocks in use and tcmalloc's figures still as recorded"

dir=$(variant_core tcmalloc-minimal-amd64 damage2)
addr=$(sed -n 's/^damage 0x//p' "$dir/truth.txt")
[ -n "$addr" ] || fail "damage2's truth names no damaged object"
mapfile -t orphans < <(sed -n 's/^orphan 0x//p' "$dir/truth.txt")
mapfile -t freed < <(sed -n 's/^freed 0x//p' "$dir/truth.txt")
((${#orphans[@]} == 4 && ${#freed[@]} == 64)) ||
	fail "damage2's truth names ${#orphans[@]} orphans and ${#freed[@]} freed objects, not 4 and 64"
hw "$T/d2.check" "$T/d2.err" --no-debuginfo "$dir/core" check
expect_rc 1
grep -qE "^0x0*$addr: tcmalloc: a thread cache's list of class [0-9]+ \(48 bytes\) links to 0x4141414141414140" "$T/d2.check" ||
	fail "damage2: check does not name the damaged object 0x$addr"
grep -q "read as in use but may be free ones a broken list lost" "$T/d2.check" ||
	fail "damage2: check does not say which objects may be the lost ones"
hw "$T/d2.chunks" "$T/d2.err" --json --no-debuginfo "$dir/core" chunks
expect_rc 0
hw "$T/d2.leaks" "$T/d2.err" --json --no-debuginfo "$dir/core" leaks
expect_rc 0
hw "$T/d2.summary" "$T/d2.err" --json --no-debuginfo "$dir/core" summary --leaks
expect_rc 0
# (sort -u: the five were among the 64.)
for o in $(printf '%s\n' "${orphans[@]}" "${freed[@]}" | sort -u); do
	row=$(grep "\"addr\":\"0x0*$o\"" "$T/d2.chunks" || true)
	[ -n "$row" ] || fail "damage2: chunks has no block at 0x$o"
	case $row in
	*'"state":"free"'*) ;;
	*'"state":"used"'*'"maybe_free":true'*) ;;
	*) fail "damage2: 0x$o, freed by the program, is neither free nor maybe free: $row" ;;
	esac
	! grep -qE "\"addr\":\"0x0*$o\",\"size\":[0-9]+,\"kind\":\"(definite|indirect|possible)\"" "$T/d2.leaks" ||
		fail "damage2: leaks calls 0x$o, freed by the program, lost: $(grep "0x0*$o" "$T/d2.leaks")"
done
for o in "${orphans[@]}"; do
	grep -q "\"addr\":\"0x0*$o\".*\"state\":\"used\".*\"maybe_free\":true" "$T/d2.chunks" ||
		fail "damage2: the orphan 0x$o is not marked maybe free: $(grep "0x0*$o" "$T/d2.chunks")"
	grep -q "\"addr\":\"0x0*$o\",\"size\":48,\"kind\":\"unknown\"" "$T/d2.leaks" ||
		fail "damage2: leaks does not list the unreachable orphan 0x$o as unknown"
done
grep -q '"unknown":{"count":[1-9]' "$T/d2.summary" ||
	fail "damage2: summary counts no lost-or-free block: $(grep -o '"leaks":{[^}]*}[^}]*}' "$T/d2.summary")"
say "damage2: ${#orphans[@]} orphans marked maybe free and unknown in leaks; none of the program's freed objects called lost"
