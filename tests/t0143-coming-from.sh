#!/bin/bash
# doc/coming-from.md's tables (gef, pwndbg, chap, jemalloc's and
# tcmalloc's own commands beside heapwalk's): every heapwalk command in
# their last column runs, text and JSON, exit 0 (check: 0 or 1), nothing
# on stderr, valid JSON -- those of the gef/pwndbg and chap tables on
# bins1's core, the jemalloc table's on jemalloc 5.3's basic1, the
# tcmalloc table's on tcmalloc_minimal's basic1.  Placeholders are filled
# in: ADDR with a block of the truth, N with an arena, A and B with
# sizes, BASE with the core itself, heap.svg with a file under the test's
# directory.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
jsoncheck=$(tool jsoncheck)
dir=$(corpus_core bins1)
core=$dir/core
addr=$(awk '$1 == "alloc" && $5 == "smallbin" { print $2; exit }' "$dir/truth.txt")

"$HEAPWALK" --help | awk '/^commands/ { on = 1; next } on && /^  [a-z]/ { print $1 }' >"$T/names"
[ -s "$T/names" ] || fail "no command names in heapwalk --help"
# cmds [SECTION]: the code spans of each table row's last cell whose first
# word is a command (of the section whose title starts with SECTION).
cmds() {
	awk -v sec="${1:-}" '/^## / { on = sec == "" || index($0, "## " sec) == 1 }
		on' "$TOP/doc/coming-from.md" |
	awk -F'|' '/^\| / && NF > 2 { print $(NF - 1) }' |
	grep -o '`[^`]*`' | tr -d '`' |
	awk 'NR == FNR { cmd[$1] = 1; next } ($1 in cmd)' "$T/names" - | sort -u
}
{ cmds "gef"; cmds "chap"; } | sort -u >"$T/cmds"
[ "$(wc -l <"$T/cmds")" -ge 20 ] || fail "only $(wc -l <"$T/cmds") heapwalk commands in doc/coming-from.md"

# run_all CORE: each command of $T/cmds on CORE.
run_all() {
	local core=$1
	n=0
	while read -r line; do
		line=${line//ADDR/$addr}
		line=${line//BASE/$core}
		line=${line//heap.svg/$T/heap.svg}
		line=$(sed 's/--arena N/--arena 0/; s/^arena N$/arena 0/; s/--around \([^ ]*\) N$/--around \1 3/; s/--min-size A/--min-size 100/; s/--max-size B/--max-size 4096/' <<<"$line")
		# shellcheck disable=SC2206 # the command's words
		words=($line)
		for form in text json; do
			opt=()
			[ $form = json ] && opt=(--json)
			hw "$T/out" "$T/err" "${opt[@]}" "$core" "${words[@]}"
			expect_rc 0 1
			[ ! -s "$T/err" ] || fail "'$line' ($form) wrote to stderr: $(sed -n 1,3p "$T/err")"
			if [ $form = json ]; then
				case ${words[0]} in
				chunks | leaks) "$jsoncheck" --lines "$T/out" ;;
				map) [ -n "$(grep -e '-o' <<<"$line")" ] || "$jsoncheck" "$T/out" ;;
				*) "$jsoncheck" "$T/out" ;;
				esac || fail "'$line': invalid JSON"
			fi
		done
		n=$((n + 1))
	done <"$T/cmds"
}
run_all "$core"
say "$n heapwalk commands of doc/coming-from.md ran, text and JSON"

dir=$(variant_core jemalloc-5.3.0-amd64 basic1)
addr=$(awk '$1 == "tcfree" { print $3; exit }' "$dir/truth.txt")
cmds jemalloc >"$T/cmds"
[ "$(wc -l <"$T/cmds")" -ge 8 ] || fail "only $(wc -l <"$T/cmds") heapwalk commands in the jemalloc table"
run_all "$dir/core"
say "jemalloc: $n commands of its table ran on basic1, text and JSON"

dir=$(variant_core tcmalloc-minimal-amd64 basic1)
addr=$(awk '$1 == "alloc" && $5 == "used" { print $2; exit }' "$dir/truth.txt")
cmds "gperftools" >"$T/cmds"
[ "$(wc -l <"$T/cmds")" -ge 6 ] || fail "only $(wc -l <"$T/cmds") heapwalk commands in the tcmalloc table"
run_all "$dir/core"
say "tcmalloc: $n commands of its table ran on basic1, text and JSON"
