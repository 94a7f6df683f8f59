#!/bin/bash
# One source for the reference.  Each command's synopsis in
# doc/heapwalk.md (its heading) and doc/heapwalk-gdb.7 (its `heap`
# entry), and the bash completion's fallback copy of --help, are what
# the command table makes; doc/heapwalk.1 from its DESCRIPTION on is
# what doc/heapwalk.md makes (scripts/gen-ref.sh writes them all from
# `heapwalk help CMD`, --help and the Markdown; run it after changing a
# command's options or the reference).  The texts are compared, not
# only the names.  And gen-ref.sh does notice: a synopsis changed by one
# option, a word changed in the manual page's prose, are reported.
# Beyond the synopses, each option `heapwalk help CMD` lists is
# explained in the command's section of doc/heapwalk.md (and so of
# heapwalk.1).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd perl
cd "$TOP"

"$TOP/scripts/gen-ref.sh" --check "$HEAPWALK" 2>"$T/check" || {
	cat "$T/check" >&2
	fail "the reference's copies differ from their sources (above): run scripts/gen-ref.sh"
}
say "doc/heapwalk.md, heapwalk-gdb.7 and the completion's fallback agree with the command table, heapwalk.1 with doc/heapwalk.md"

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

# The check itself, on copies of the tree's pages: one option dropped
# from chunks' heading in the Markdown, one word of the manual page's
# prose changed, must each fail it, naming the page.
tree() {
	rm -rf "$T/tree"
	mkdir -p "$T/tree/scripts/completion" "$T/tree/doc"
	cp scripts/gen-ref.sh scripts/md2man.pl "$T/tree/scripts/"
	cp scripts/completion/heapwalk.bash "$T/tree/scripts/completion/"
	cp doc/heapwalk.md doc/heapwalk.1 doc/heapwalk-gdb.7 "$T/tree/doc/"
}
# edited PAGE WHAT SED: gen-ref.sh --check must refuse PAGE after SED.
edited() {
	tree
	sed -i "$3" "$T/tree/$1"
	cmp -s "$1" "$T/tree/$1" && fail "t0031: the test's edit of $1 changed nothing: update the test"
	if "$T/tree/scripts/gen-ref.sh" --check "$HEAPWALK" 2>"$T/check2"; then
		fail "gen-ref.sh --check accepts $1 with $2"
	fi
	grep -q "$1 is not what" "$T/check2" ||
		fail "gen-ref.sh --check does not name $1: $(head -n 3 "$T/check2")"
}
edited doc/heapwalk.md "chunks' heading lacking --thread" '/^### chunks /s/ \[--thread TID\]//'
edited doc/heapwalk.1 "a word of leaks' prose changed" '/^\.SS "leaks /,/^\.SS /s/definite/certain/'
say "gen-ref.sh --check notices a synopsis out of step and a manual page edited by hand"
