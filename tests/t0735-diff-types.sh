#!/bin/bash
# diff BASE per C++ class and diff --leaks: corpora/ptmalloc/cxxgrow1.cc
# writes a core of its heap as it was (a fork()ed child's, in base/),
# then allocates and deletes objects of known classes, blocks of no type,
# and adds leaks: objects of a base leak's class and size with other
# content, a new definite -> indirect chain, plain blocks, two base
# objects whose last pointer it drops (old blocks, new leaks) and one
# that points to a base leak (which turns indirect: no new leak).  It
# records the growth per class (count and usable bytes) and the new
# leaks per (kind, usable size, class).
#  - `diff --leaks --json` against the base core: each "types" row is
#    the recorded growth of its class (null: the blocks of no type), no
#    other row; each "new_leaks" record is a recorded one (kind, size,
#    count, class), no other; the totals are the sums;
#  - the base's saved `sizes --json`, `sizes --by=type --json` and
#    `leaks --json` give the same document as the base core; the types
#    JSON alone gives the same "types"; a `leaks --json` without heads
#    is matched by size and class, says so, and finds as many new leaks;
#  - text: the class rows and the loss records of the new leaks;
#  - a C program (grow1): no class section in text, "types":[] in JSON;
#  - --leaks with a base that has no leaks is refused with one error.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd g++

dir=$(corpus_core cxxgrow1)
base=$(find "$dir/base" -maxdepth 1 -type f -name 'core*' | sed -n 1,1p)
if [ -z "$base" ] || ! grep -qx 'base-core yes' "$dir/truth.txt"; then
	skip "no base core in $dir/base (core_pattern '$(cat /proc/sys/kernel/core_pattern)' puts the forked child's core elsewhere)"
fi
corpus_copy "$dir" "$T"
if command -v flock >/dev/null 2>&1; then
	flock "$dir/.lock" cp "$base" "$T/base.core"
else
	cp "$base" "$T/base.core"
fi
core=$T/core
truth=$T/truth.txt

# rows FILE KEY: the objects of the JSON array KEY of FILE, one a line.
rows() {
	sed -n "s/.*\"$2\":\[\([^]]*\)\].*/\1/p" "$1" | grep -o '{[^{}]*}' || true
}
# field KEY: the value of KEY in the one-line object on stdin (a string
# unquoted; null and absent as "-").
field() {
	local v
	v=$(sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p")
	[ -z "$v" ] || [ "$v" = null ] && v=-
	printf '%s\n' "$v"
}
# without_base JSON: the diff document less the members naming the base.
without_base() {
	sed 's/"base":"[^"]*","base_kind":"[^"]*",//' "$1"
}

hw "$T/diff.json" "$T/diff.err" --json "$core" diff --leaks "$T/base.core"
expect_rc 0

# Per class: "COUNT BYTES CLASS", sorted, from the truth and from diff.
awk '$1 == "type" { c = $2; b = $3; $1 = $2 = $3 = ""; sub(/^ +/, ""); print c, b, $0 }' \
	"$truth" | sort >"$T/want.types"
[ -s "$T/want.types" ] || fail "the truth records no growth per class"
while read -r line; do
	printf '%s %s %s\n' "$(field used_delta <<<"$line")" \
		"$(field used_bytes_delta <<<"$line")" "$(field type <<<"$line")"
done < <(rows "$T/diff.json" types) | sort >"$T/got.types"
diff -u "$T/want.types" "$T/got.types" ||
	fail "diff's rows per class are not the recorded growth (want, got above)"
say "per class: $(wc -l <"$T/got.types") rows as recorded"

# New leaks: "KIND SIZE COUNT CLASS".
awk '$1 == "leak" { k = $2; s = $3; c = $4; $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print k, s, c, $0 }' \
	"$truth" | sort >"$T/want.leaks"
while read -r line; do
	printf '%s %s %s %s\n' "$(field kind <<<"$line")" "$(field size <<<"$line")" \
		"$(field count <<<"$line")" "$(field type <<<"$line")"
done < <(rows "$T/diff.json" new_leaks) | sort >"$T/got.leaks"
diff -u "$T/want.leaks" "$T/got.leaks" ||
	fail "diff --leaks's new leaks are not the recorded ones (want, got above)"
for kind in definite indirect; do
	want_n=$(awk -v k=$kind '$1 == "leak" && $2 == k { n += $4 } END { print n + 0 }' "$truth")
	want_b=$(awk -v k=$kind '$1 == "leak" && $2 == k { n += $3 * $4 } END { print n + 0 }' "$truth")
	[ "$(json_num "$T/diff.json" "new_$kind")" = "$want_n" ] &&
		[ "$(json_num "$T/diff.json" "new_${kind}_bytes")" = "$want_b" ] ||
		fail "new $kind totals: diff says $(json_num "$T/diff.json" "new_$kind") blocks $(json_num "$T/diff.json" "new_${kind}_bytes") bytes, the program $want_n $want_b"
done
[ "$(json_str "$T/diff.json" leaks_matched_by)" = content ] ||
	fail "leaks against a core are not matched by content"
say "new leaks: $(wc -l <"$T/got.leaks") records as recorded"

# Saved JSON of the base stands for its core.
hw "$T/base.sizes" "$T/e1" --json "$T/base.core" sizes
expect_rc 0
hw "$T/base.types" "$T/e2" --json "$T/base.core" sizes --by=type
expect_rc 0
hw "$T/base.leaks" "$T/e3" --json "$T/base.core" leaks
expect_rc 0
grep -q '"head":"[0-9a-f]\{32\}"' "$T/base.leaks" || fail "leaks --json lines carry no 16-byte head"
hw "$T/saved.json" "$T/saved.err" --json "$core" diff "$T/base.sizes" "$T/base.types" "$T/base.leaks"
expect_rc 0
grep -q '"base_kind":"sizes-json+types-json+leaks-json"' "$T/saved.json" ||
	fail "saved files are not taken as such: $(head -c 200 "$T/saved.json")"
cmp -s <(without_base "$T/diff.json") <(without_base "$T/saved.json") ||
	fail "diff against the base's saved sizes, types and leaks JSON differs from diff against its core"
hw "$T/types-only.json" "$T/types-only.err" --json "$core" diff "$T/base.types"
expect_rc 0
[ "$(rows "$T/types-only.json" types)" = "$(rows "$T/diff.json" types)" ] ||
	fail "diff against a saved sizes --by=type --json alone gives other class rows"
grep -q '"classes"' "$T/types-only.json" && fail "a types-only base compared size classes"
sed 's/,"head":"[0-9a-f]*"//' "$T/base.leaks" >"$T/base.nohead"
hw "$T/nohead.json" "$T/nohead.err" --json "$core" diff "$T/base.nohead"
expect_rc 0
[ "$(json_str "$T/nohead.json" leaks_matched_by)" = size-type ] ||
	fail "leaks without heads are not said to be matched by size and class"
want_n=$(awk '$1 == "leak" { n += $4 } END { print n }' "$truth")
got_n=$(($(json_num "$T/nohead.json" new_definite) + $(json_num "$T/nohead.json" new_indirect)))
[ "$got_n" = "$want_n" ] || fail "leaks without heads: $got_n new leaks, the program $want_n"
say "saved JSON: same answer as the core"

# Text: the class rows and the loss records.
hw "$T/diff.txt" "$T/diff.txt.err" "$core" diff --leaks "$T/base.core"
expect_rc 0
while read -r c b name; do
	[ "$name" = - ] && name="(no type)"
	re=$(sed 's/[]().*^$+[]/\\&/g' <<<"$name")
	grep -qE "^ +\\+?$c +[-+0-9.]+ [KMG]?i?B .*  $re\$" "$T/diff.txt" ||
		{ cat "$T/diff.txt"; fail "text has no row for class $name ($c)"; }
done <"$T/want.types"
n=$(json_num "$T/diff.json" new_definite)
grep -qE "^new leaks: +$n definite chunks" "$T/diff.txt" ||
	{ cat "$T/diff.txt"; fail "text does not say $n new definite leaks"; }
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+  (definite|indirect) +0x' "$T/diff.txt")" = "$(wc -l <"$T/want.leaks")" ] ||
	{ cat "$T/diff.txt"; fail "text lists another number of new-leak records"; }

# A C program: no classes.
gdir=$(corpus_core grow1)
gbase=$(find "$gdir/base" -maxdepth 1 -type f -name 'core*' | sed -n 1,1p)
if [ -n "$gbase" ]; then
	mkdir -p "$T/grow1"
	corpus_copy "$gdir" "$T/grow1"
	flock "$gdir/.lock" cp "$gbase" "$T/grow1/base.core" 2>/dev/null || cp "$gbase" "$T/grow1/base.core"
	hw "$T/c.json" "$T/c.err" --json "$T/grow1/core" diff "$T/grow1/base.core"
	expect_rc 0
	grep -q '"types":\[\]' "$T/c.json" || fail "a C program's diff has class rows: $(head -c 300 "$T/c.json")"
	hw "$T/c.txt" "$T/c.txt.err" "$T/grow1/core" diff "$T/grow1/base.core"
	expect_rc 0
	grep -qE '  type$|\(no type\)|^\([0-9]+ class(es)? unchanged|^\(no class changed' "$T/c.txt" && { cat "$T/c.txt"; fail "a C program's diff text has a class section"; }
fi

# --leaks needs the base's leaks.
hw "$T/bad.out" "$T/bad.err" "$core" diff --leaks "$T/base.sizes"
expect_rc 2
one_error_line "$T/bad.err" "diff --leaks against a saved sizes --json"
exit 0
