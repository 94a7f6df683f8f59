#!/bin/bash
# One source for the reference: each command's synopsis in
# doc/heapwalk.md (its heading), doc/heapwalk.1 (its .SS line),
# doc/heapwalk-gdb.7 (its `heap` entry) and the bash completion's
# fallback copy of --help are what the command table makes
# (scripts/gen-ref.sh writes them from `heapwalk help CMD` and --help;
# run it after changing a command's options).  The texts are compared,
# not only the names.  And gen-ref.sh does notice: a copy changed by one
# option is reported.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd perl
cd "$TOP"

"$TOP/scripts/gen-ref.sh" --check "$HEAPWALK" 2>"$T/check" || {
	cat "$T/check" >&2
	fail "the reference's copies differ from the command table (above): run scripts/gen-ref.sh"
}
say "doc/heapwalk.md, heapwalk.1, heapwalk-gdb.7 and the completion's fallback agree with the command table"

# The check itself: a copy of the tree's pages with one option dropped
# from chunks' .SS line must fail it.
mkdir -p "$T/tree/scripts/completion" "$T/tree/doc"
cp scripts/gen-ref.sh "$T/tree/scripts/"
cp scripts/completion/heapwalk.bash "$T/tree/scripts/completion/"
cp doc/heapwalk.md doc/heapwalk.1 doc/heapwalk-gdb.7 "$T/tree/doc/"
sed -i '/^\.SS "chunks /s/ \[\\-\\-thread \\fITID\\fP\]//' "$T/tree/doc/heapwalk.1"
cmp -s doc/heapwalk.1 "$T/tree/doc/heapwalk.1" && fail "t0031: the test's edit of heapwalk.1 changed nothing: update the test"
if "$T/tree/scripts/gen-ref.sh" --check "$HEAPWALK" 2>"$T/check2"; then
	fail "gen-ref.sh --check accepts a heapwalk.1 whose chunks lacks --thread"
fi
grep -q 'heapwalk.1 is not what the command table makes' "$T/check2" ||
	fail "gen-ref.sh --check does not name heapwalk.1: $(head -n 3 "$T/check2")"
