#!/bin/bash
# One source for the reference: each command's synopsis in
# doc/heapwalk.md (its heading), doc/heapwalk.1 (its .SS line),
# doc/heapwalk-gdb.7 (its `heap` entry) and the bash completion's
# fallback copy of --help are what the command table makes
# (scripts/gen-ref.sh writes them from `heapwalk help CMD` and --help;
# run it after changing a command's options).  The texts are compared,
# not only the names.  And gen-ref.sh does notice: a copy changed by one
# option is reported.  Beyond the synopses, each option `heapwalk help
# CMD` lists is explained in the command's section of doc/heapwalk.md
# and of heapwalk.1 (the prose is the pages' own: it must not skip one).
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

# Every option of every command, in its sections' prose.
"$HEAPWALK" --help | sed -n '/^commands/,$p' | awk 'NR > 1 && /^  [a-z]/ { print $1 }' >"$T/names"
missing=0 checked=0
while read -r c; do
	"$HEAPWALK" help "$c" >"$T/help.$c" 2>&1 || true
	awk -v c="$c" '$0 ~ "^### " c "( |$)" { on = 1; next } on && /^### / { exit } on' \
		doc/heapwalk.md >"$T/md.$c"
	awk -v c="$c" '$0 ~ "^\\.SS \"?" c "([ \"]|$)" { on = 1; next } on && /^\.S[SH] / { exit } on' \
		doc/heapwalk.1 | sed 's/\\-/-/g' >"$T/man.$c"
	[ -s "$T/md.$c" ] || { say "doc/heapwalk.md has no section for $c"; missing=1; }
	[ -s "$T/man.$c" ] || { say "heapwalk.1 has no section for $c"; missing=1; }
	while read -r o; do
		checked=$((checked + 1))
		grep -q -e "$o" "$T/md.$c" || { say "doc/heapwalk.md's $c does not explain $o"; missing=1; }
		grep -q -e "$o" "$T/man.$c" || { say "heapwalk.1's $c does not explain $o"; missing=1; }
	done < <(sed -n '/^options:/,/^$/p' "$T/help.$c" | { grep -oE '^  --?[a-z][a-z0-9-]*' || true; } | tr -d ' ')
done <"$T/names"
[ $missing = 0 ] || fail "options the command table lists are missing from the reference (above)"
((checked >= 20)) || fail "t0031 found only $checked command options in the help: update the test"
say "$checked command options: each explained in doc/heapwalk.md and heapwalk.1"

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
