#!/bin/bash
# A use after free on gperftools tcmalloc (corpora/tcmalloc/damage1.c):
# the head of a thread cache's list has its link overwritten.  `check`
# names that object (exit 1) and the thread cache whose count no longer
# matches its list; the walk goes on: every block in use that the truth
# records is still in use at its size, MallocExtension's figures are
# still tcmalloc's own, and no command crashes or hangs.
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
