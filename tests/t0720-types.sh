#!/bin/bash
# C++ types from vtable pointers: corpora/ptmalloc/cxx1.cc allocates
# objects of known classes (plain, with a virtual base, a diamond,
# multiple inheritance, templates, namespaces, an anonymous namespace;
# held from std::vector, std::map and arrays; a class with no vtable),
# deletes some, leaks some, and records each live object's address and
# class as typeid(*p).name() demangled by the program itself.
#  - `sizes --by=type --json` counts exactly the recorded objects of
#    each class, names no other class, and adds up to every block in use
#    (`sizes`); its bytes hold the objects; the text has the same lines;
#  - `leaks --json` gives each leaked object its recorded class, and no
#    type to the leaked objects with no vtable; the text's loss records
#    name the classes;
#  - --no-debuginfo gives the same answers (the program's vtables are in
#    the executable's own .symtab);
#  - with the executable stripped (--exe), nothing is named: its _ZTV
#    symbols were only in .symtab.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd g++ strip

dir=$(corpus_core cxx1)
corpus_copy "$dir" "$T"
core=$T/core
truth=$T/truth.txt

# COUNT CLASS per recorded class (the class is the rest of the line).
awk '$1 == "obj" { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' "$truth" |
	sort | uniq -c | sed 's/^ *//' >"$T/want"
[ "$(wc -l <"$T/want")" -ge 10 ] || fail "cxx1's truth has too few classes: $(cat "$T/want")"

# COUNT CLASS per named type of a `sizes --by=type --json` document.
types_of() {
	grep -o '{"type":"[^"]*","count":[0-9]*' "$1" |
		sed 's/^{"type":"\(.*\)","count":\([0-9]*\)$/\2 \1/' | sort
}

hw "$T/types.json" "$T/types.err" --json "$core" sizes --by=type
expect_rc 0
types_of "$T/types.json" >"$T/got"
sort "$T/want" >"$T/want.sorted"
diff "$T/want.sorted" "$T/got" >"$T/diff" ||
	{ cat "$T/diff" >&2; fail "sizes --by=type disagrees with cxx1's truth (< truth, > heapwalk; core in $dir)"; }
say "$(wc -l <"$T/got") classes, $(awk '{ n += $1 } END { print n }' "$T/got") objects as recorded"

# Every block in use is counted once: typed or on the "(no type)" line.
all=$(grep -o '"count":[0-9]*' "$T/types.json" | awk -F: '{ n += $2 } END { print n }')
hw "$T/sizes.json" "$T/sizes.err" --json "$core" sizes
expect_rc 0
used=$(grep -o '"classes":\[[^]]*\]' "$T/sizes.json" | grep -o '"used":[0-9]*' |
	awk -F: '{ n += $2 } END { print n }')
[ "$all" = "$used" ] || fail "sizes --by=type counts $all blocks, sizes $used in use"
pods=$(grep -c '^pod ' "$truth")
untyped=$(grep -o '{"type":null,"count":[0-9]*' "$T/types.json" | grep -o '[0-9]*$')
[ "${untyped:-0}" -ge "$pods" ] ||
	fail "(no type) has ${untyped:-0} blocks, fewer than cxx1's $pods objects with no vtable"

# Each class's bytes hold its objects (usable sizes: at least sizeof).
while read -r n name; do
	size=$(awk -v c="$name" '$1 == "obj" { s = $3; $1 = $2 = $3 = $4 = "";
		sub(/^ +/, ""); if ($0 == c) { print s; exit } }' "$truth")
	bytes=$(grep -o '{"type":"[^"]*","count":[0-9]*,"bytes":[0-9]*' "$T/types.json" |
		awk -v c="{\"type\":\"$name\"," 'index($0, c) == 1 { sub(/.*"bytes":/, ""); print }')
	if [ -z "$bytes" ] || [ "$bytes" -lt $((n * size)) ]; then
		fail "$name: ${bytes:-no} bytes for $n objects of $size bytes"
	fi
done <"$T/want"

# has_line FILE WORD TAIL: FILE has a line with WORD in it that ends
# with TAIL (fixed strings: class names have regex characters).
has_line() {
	awk -v w="$2" -v t="$3" 'index($0, w) &&
		substr($0, length($0) - length(t) + 1) == t { f = 1 }
		END { exit !f }' "$1"
}

# The text form: one line per class, "BYTES  COUNT  CLASS", the most
# bytes first, then "(no type)" and the total.
hw "$T/types.txt" "$T/types.txt.err" "$core" sizes --by=type
expect_rc 0
while read -r n name; do
	has_line "$T/types.txt" "B " " $n  $name" ||
		{ cat "$T/types.txt" >&2; fail "text: no line for $n $name"; }
done <"$T/want"
grep -qE '^ +[0-9.]+ [KMGT]?i?B +[0-9]+  \(no type\)$' "$T/types.txt" ||
	fail "text: no (no type) line"
tail -n1 "$T/types.txt" | grep -qE "^ +[0-9.]+ [KMGT]?i?B +$all  total\$" ||
	fail "text: the last line is not the total of $all blocks"

# leaks: each leaked object with its class; the ones with no vtable with
# no type at all.
hw "$T/leaks.jsonl" "$T/leaks.err" --json "$core" leaks
expect_rc 0
nleaked=0
while read -r rec addr _ _ name; do
	line=$(grep -F "{\"addr\":\"$addr\"," "$T/leaks.jsonl") ||
		fail "leaks does not list the leaked $name at $addr"
	case $rec in
	obj)
		grep -qF "\"type\":\"$name\"}" <<<"$line" ||
			fail "leaks: $addr should be a $name: $line"
		;;
	pod)
		if grep -q '"type"' <<<"$line"; then
			fail "leaks: $addr has no vtable, yet: $line"
		fi
		;;
	esac
	nleaked=$((nleaked + 1))
done < <(awk '$4 == "leaked"' "$truth")
[ "$nleaked" -ge 10 ] || fail "cxx1 recorded only $nleaked leaked objects"
say "$nleaked leaked objects with their classes"
hw "$T/leaks.txt" "$T/leaks.txt.err" "$core" leaks
expect_rc 0
for name in Circle Bat 'Box<int>' '(anonymous namespace)::Local'; do
	has_line "$T/leaks.txt" " definite " "  $name" ||
		{ cat "$T/leaks.txt" >&2; fail "leaks text: no loss record of $name"; }
done

# Without separate debug info: the same (the executable's .symtab).
hw "$T/nodebug.json" "$T/nodebug.err" --no-debuginfo --json "$core" sizes --by=type
expect_rc 0
cmp -s "$T/types.json" "$T/nodebug.json" || fail "sizes --by=type --no-debuginfo differs"
hw "$T/nodebug.jsonl" "$T/nodebug.err" --no-debuginfo --json "$core" leaks
expect_rc 0
cmp -s "$T/leaks.jsonl" "$T/nodebug.jsonl" || fail "leaks --no-debuginfo differs"

# A stripped executable has no .symtab: the program's own classes have
# no name any more (they are not exported to .dynsym).
strip -o "$T/prog.stripped" "$dir/prog"
hw "$T/stripped.json" "$T/stripped.err" --exe "$T/prog.stripped" --json "$core" sizes --by=type
expect_rc 0
if [ -n "$(types_of "$T/stripped.json")" ]; then
	fail "a stripped executable still names classes: $(types_of "$T/stripped.json" | sed -n 1,3p)"
fi
grep -q "{\"type\":null,\"count\":$all," "$T/stripped.json" ||
	fail "stripped: not every block is (no type): $(head -c 300 "$T/stripped.json")"
hw "$T/stripped.txt" "$T/stripped.txt.err" --exe "$T/prog.stripped" "$core" sizes --by=type
expect_rc 0
grep -q '_ZTV symbols are not at hand' "$T/stripped.txt" ||
	fail "stripped: the text does not say why nothing is named"
say "stripped executable: no class named, as expected"
