#!/bin/bash
# The manual pages and the bash completion.  doc/heapwalk.1 and
# doc/heapwalk-gdb.7 format without a single warning from groff -ww (and
# from mandoc's linter above its style notes, where mandoc is installed)
# and render with man -l; every command `heapwalk --help` lists has a
# subsection in heapwalk.1 and a `heap COMMAND` entry in heapwalk-gdb.7,
# and every global option it lists is an entry under OPTIONS.
# scripts/completion/heapwalk.bash loads into a plain bash without a
# word on stderr, registers a function for heapwalk, completes
# `heapwalk core.1 pr<TAB>` to `prof` both from a heapwalk it can run and
# from its own word lists, and those lists hold every command and option
# of --help.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TOP"
need_heapwalk
need_cmd groff

pages=(doc/heapwalk.1 doc/heapwalk-gdb.7)
completion=scripts/completion/heapwalk.bash
for f in "${pages[@]}" "$completion"; do
	[ -f "$f" ] || fail "no $f"
done

# ---- formatting: no warnings ---------------------------------------------
for p in "${pages[@]}"; do
	groff -ww -z -man "$p" 2>"$T/groff" || fail "groff failed on $p"
	if [ -s "$T/groff" ]; then
		cat "$T/groff" >&2
		fail "groff -ww warns about $p (above)"
	fi
done
if command -v mandoc >/dev/null 2>&1; then
	for p in "${pages[@]}"; do
		# -W warning: style notes are not reported, everything above is.
		mandoc -T lint -W warning "$p" >"$T/lint" 2>&1 || true
		if [ -s "$T/lint" ]; then
			cat "$T/lint" >&2
			fail "mandoc -T lint finds problems in $p (above)"
		fi
	done
else
	say "mandoc is not installed: its lint is skipped (apt-get install mandoc)"
fi
if command -v man >/dev/null 2>&1; then
	for p in "${pages[@]}"; do
		MANWIDTH=80 env -u MAN_KEEP_FORMATTING man --warnings -l "$p" \
			>"$T/man.txt" 2>"$T/man.err" </dev/null ||
			fail "man -l $p failed: $(head -3 "$T/man.err")"
		if [ -s "$T/man.err" ]; then
			cat "$T/man.err" >&2
			fail "man -l $p warns (above)"
		fi
		grep -q '^NAME' "$T/man.txt" || fail "man -l $p rendered no NAME section"
	done
else
	say "man is not installed: man -l is skipped"
fi

# ---- coverage: every command and global option of --help ----------------
"$HEAPWALK" --help >"$T/help"
sed -n '/^commands/,$p' "$T/help" | awk 'NR > 1 && /^  [a-z]/ { print $1 }' >"$T/commands"
[ -s "$T/commands" ] || fail "no commands found in heapwalk --help"
# Every --long and -s word in the options part (names and descriptions:
# a description names only real options, such as "with --pid").
sed -n '/^options:/,/^$/p' "$T/help" |
	grep -oE '(^|[ ,;(])--?[a-zA-Z][a-z0-9-]*' | sed 's/^[ ,;(]*//' |
	sort -u >"$T/options"
[ -s "$T/options" ] || fail "no options found in heapwalk --help"

bad=0
# The first word of each .SS heading, and of each ".B heap ..." entry.
sections=" $(sed -n 's/^\.SS "\{0,1\}\([^ "]*\).*/\1/p' doc/heapwalk.1 | tr '\n' ' ') "
entries=" $(sed -n 's/^\.B "\{0,1\}heap \([^ "]*\).*/\1/p' doc/heapwalk-gdb.7 | tr '\n' ' ') "
while read -r cmd; do
	[[ $sections == *" $cmd "* ]] ||
		{ say "command '$cmd' has no .SS subsection in doc/heapwalk.1"; bad=1; }
	[[ $entries == *" $cmd "* ]] ||
		{ say "command '$cmd' has no 'heap $cmd' entry in doc/heapwalk-gdb.7"; bad=1; }
done <"$T/commands"
# The tags of OPTIONS (the line after each .TP), with roff's \- as -.
awk '/^\.SH/ { on = ($2 == "OPTIONS") } on && prev == ".TP" { print } { prev = $0 }' \
	doc/heapwalk.1 | sed 's/\\-/-/g; s/\\f[BIRP]//g' >"$T/tags"
tags=" $(tr '",\n' '   ' <"$T/tags" | sed 's/=/ /g') "
while read -r opt; do
	[[ $tags == *" $opt "* ]] ||
		{ say "option '$opt' of --help is not an entry under OPTIONS in doc/heapwalk.1"; bad=1; }
done <"$T/options"
[ $bad = 0 ] || fail "the manual page misses commands or options (above)"

# ---- the completion -------------------------------------------------------
mkdir -p "$T/bin" "$T/cwd"
ln -s "$HEAPWALK" "$T/bin/heapwalk"
touch "$T/cwd/core.1"
# complete.sh: loads the completion in a bash without start-up files
# (set -u: no unset variable may be touched), finds the function
# `complete -p heapwalk` names, and for each line of stdin (words split
# at spaces) calls it as bash would, with the cursor at the last word;
# prints COMPREPLY on one line, words separated by spaces.  One bash for
# every query keeps the test fast.
cat >"$T/complete.sh" <<'EOF'
set -u
. "$COMPLETION" || exit 1
spec=$(complete -p heapwalk) || exit 1
fn=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
[ -n "$fn" ] || { echo "no -F function in: $spec" >&2; exit 1; }
while read -ra COMP_WORDS; do
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	echo "${COMPREPLY[*]}"
done
EOF

nobin=$T/none/heapwalk                # no heapwalk to run: its own lists
{
	echo "heapwalk core.1 pr"
	echo "$nobin core.1 pr"
	echo "heapwalk co"
	echo "heapwalk core.1 chunks --f"
	echo "heapwalk --pid $$"
	while read -r cmd; do echo "$nobin core.1 $cmd"; done <"$T/commands"
	while read -r opt; do echo "$nobin core.1 $opt"; done <"$T/options"
} >"$T/queries"
(cd "$T/cwd" && PATH=$T/bin:$PATH COMPLETION=$TOP/$completion \
	bash --norc --noprofile "$T/complete.sh") <"$T/queries" >"$T/answers" 2>"$T/err" ||
	fail "the completion failed: $(head -3 "$T/err")"
if [ -s "$T/err" ]; then
	cat "$T/err" >&2
	fail "loading or running the completion wrote to stderr (above)"
fi
[ "$(wc -l <"$T/answers")" = "$(wc -l <"$T/queries")" ] ||
	fail "the completion answered $(wc -l <"$T/answers") of $(wc -l <"$T/queries") queries"
# answer N: the words completed for query N.
mapfile -t answers <"$T/answers"
answer() { echo "${answers[$1 - 1]}"; }

[ "$(answer 1)" = prof ] ||
	fail "'heapwalk core.1 pr<TAB>' (heapwalk on PATH) gives '$(answer 1)', not 'prof'"
[ "$(answer 2)" = prof ] ||
	fail "'heapwalk core.1 pr<TAB>' without a heapwalk to run gives '$(answer 2)', not 'prof'"
[ "$(answer 3)" = core.1 ] || fail "a core file is not completed: '$(answer 3)'"
[[ " $(answer 4) " == *" --free "* ]] || fail "chunks --f<TAB> does not give --free: '$(answer 4)'"
[[ " $(answer 5) " == *" $$ "* ]] || fail "--pid <TAB> does not offer this shell's pid $$"

# The completion's own lists know every command and option --help lists.
n=5
while read -r cmd; do
	n=$((n + 1))
	[[ " $(answer $n) " == *" $cmd "* ]] ||
		{ say "the completion's own list lacks the command '$cmd'"; bad=1; }
done <"$T/commands"
while read -r opt; do
	n=$((n + 1))
	[[ " $(answer $n) " == *" $opt "* || " $(answer $n) " == *" $opt= "* ]] ||
		{ say "the completion's own list lacks the option '$opt'"; bad=1; }
done <"$T/options"
[ $bad = 0 ] || fail "scripts/completion/heapwalk.bash is behind heapwalk --help (above)"
