#!/bin/bash
# The README's examples run as written.  Every line "$ heapwalk ARGS" in
# a code block of README.md is run on the core it was shown on (the
# leaks1 corpus program's: corpora/ptmalloc/leaks1.c), with `core` in
# ARGS standing for that core; it must exit 0, and the output shown under
# it must be what that command prints, line by line, up to what differs
# from run to run:
#   - a line "label: value" must have its label in the output, as the
#     start of a line, with a value of the same form (numbers, addresses
#     and sizes may differ, the words around them may not);
#   - a line of words only (a table's header) must be in the output as
#     it is, blanks squeezed;
#   - a table row (it starts with a number) must be matched by a row of
#     the same form (every number, address and hex byte a placeholder).
# And the README keeps its promises to a newcomer: its first screen (40
# lines) names every allocator heapwalk walks, the architectures, and the
# two commands.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
cd "$TOP"

readme=README.md
[ -f $readme ] || fail "no README.md"

# ---- the first screen ----
head -40 $readme >"$T/screen"
for word in ptmalloc jemalloc tcmalloc mallocng x86_64 aarch64 'make demo' 'make check'; do
	grep -q -- "$word" "$T/screen" || fail "README's first screen (40 lines) does not name '$word'"
done
[ "$(wc -l <$readme)" -le 220 ] || fail "README.md has $(wc -l <$readme) lines: a landing page, at most ~200"

# ---- the examples ----
dir=$(corpus_core leaks1)
core=$dir/core

# form LINE: the line with what varies between runs made a placeholder:
# hex numbers, decimal numbers with their units, the hex dump's bytes and
# its printable column, runs of blanks.
form() {
	sed -E -e 's/\|[^|]*\|$/|X|/' \
		-e 's/0x[0-9a-f]+/A/g' \
		-e 's/\b[0-9a-f]{2}( [0-9a-f]{2})+\b/H/g' \
		-e 's/[0-9]+(\.[0-9]+)?/N/g' \
		-e 's/[[:space:]]+/ /g; s/^ //; s/ $//' <<<"$1"
}

# Split README's code blocks into examples: $T/ex.K.cmd (the arguments)
# and $T/ex.K.out (the lines shown under it).
awk -v dir="$T" '
	/^```/ { inblock = !inblock; k_open = 0; next }
	!inblock { next }
	/^\$ heapwalk( |$)/ {
		k++; k_open = 1
		sub(/^\$ heapwalk ?/, "")
		print > (dir "/ex." k ".cmd")
		printf "" > (dir "/ex." k ".out")
		next
	}
	/^\$ / || /^\(gdb\)/ { k_open = 0; next }
	k_open { print > (dir "/ex." k ".out") }
' $readme
n=$(find "$T" -name 'ex.*.cmd' | wc -l)
((n >= 2)) || fail "README.md shows $n heapwalk examples: expected at least summary and leaks"

for cmdfile in "$T"/ex.*.cmd; do
	k=${cmdfile%.cmd}
	k=${k##*.}
	read -r -a args <"$cmdfile"
	for i in "${!args[@]}"; do
		[ "${args[$i]}" = core ] && args[i]=$core
	done
	rc=0
	"$HEAPWALK" "${args[@]}" >"$T/run.$k" 2>"$T/run.$k.err" || rc=$?
	[ $rc = 0 ] || fail "README example 'heapwalk $(cat "$cmdfile")' exits $rc: $(head -3 "$T/run.$k.err")"
	while IFS= read -r line; do
		form "$line"
	done <"$T/run.$k" >"$T/run.$k.form"
	shown=0
	while IFS= read -r line; do
		[ -n "${line// /}" ] || continue
		shown=$((shown + 1))
		if [[ $line =~ ^([A-Za-z][A-Za-z0-9\ \'_()-]*):[[:space:]] ]]; then
			label=${BASH_REMATCH[1]}
			got=$(awk -v l="$label:" 'index($0, l) == 1 { print; exit }' "$T/run.$k")
			[ -n "$got" ] ||
				fail "README example 'heapwalk $(cat "$cmdfile")': no line '$label:' in its output"
			[ "$(form "$got")" = "$(form "$line")" ] ||
				fail "README example 'heapwalk $(cat "$cmdfile")': shown '$line', prints '$got'"
		else
			f=$(form "$line")
			grep -qxF -- "$f" "$T/run.$k.form" ||
				fail "README example 'heapwalk $(cat "$cmdfile")': no line of the form of '$line' in its output"
		fi
	done <"$T/ex.$k.out"
	say "heapwalk $(cat "$cmdfile"): runs, and its $shown lines shown are in its output"
done
