#!/bin/bash
# The repository's documentation stands alone: every relative link in the
# README, doc/ (and its folders), tests/README.md and plugin/ points at a
# file (and, for #anchors into Markdown, a heading) inside this
# repository; nothing refers to files outside it.  Every command in heapwalk's own help is in the reference.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TOP"

docs=(README.md plugin/README.md)
[ -f tests/README.md ] && docs+=(tests/README.md)
[ -f libheapwalk/alloc/README.md ] && docs+=(libheapwalk/alloc/README.md)
while IFS= read -r f; do docs+=("$f"); done < <(find doc -name '*.md' | sort)
[ -f doc/heapwalk.md ] || fail "no doc/heapwalk.md (the reference)"

# anchor_of "Heading text": GitHub's anchor for a Markdown heading.
anchor_of() {
	tr 'A-Z' 'a-z' <<<"$1" | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

bad=0
for f in "${docs[@]}"; do
	base=$(dirname "$f")
	# Markdown links [text](target), one per line.
	while read -r target; do
		case $target in
		http://* | https://* | mailto:*) continue ;;
		esac
		path=${target%%#*}
		anchor=${target#"$path"}
		anchor=${anchor#\#}
		[ -n "$path" ] || path=$(basename "$f")
		full=$base/$path
		resolved=$(realpath -m "$full")
		case $resolved in
		"$TOP"/*) ;;
		*)
			say "$f: link '$target' leaves the repository"
			bad=1
			continue
			;;
		esac
		if [ ! -e "$full" ]; then
			say "$f: link '$target': no such file"
			bad=1
			continue
		fi
		if [ -n "$anchor" ]; then
			found=0
			while read -r h; do
				[ "$(anchor_of "$h")" = "$anchor" ] && found=1
			done < <(sed -n 's/^#\{1,6\} \{1,\}//p' "$full")
			[ $found = 1 ] || { say "$f: link '$target': no such heading"; bad=1; }
		fi
	done < <({ grep -o '\](\([^)]*\))' "$f" || true; } | sed 's/^](//; s/)$//')
done

# No pointers to what a clone does not have.
if git grep -n -e '\.\./shared' -e 'INTERFACE\.md' -e 'the issues' -e 'roadmap in' \
	-- '*.md' '*.h' '*.c' '*.sh' Makefile ':!tests/t0020-docs.sh' >"$T/out" 2>/dev/null; then
	cat "$T/out" >&2
	fail "references to files or trackers outside the repository"
fi

# Every command the tool lists is documented in the reference.
if [ -x "${HEAPWALK:-}" ]; then
	"$HEAPWALK" --help >"$T/help"
	while read -r cmd; do
		grep -q "^### $cmd\b" doc/heapwalk.md || { say "command '$cmd' is not in doc/heapwalk.md"; bad=1; }
	done < <(sed -n '/^commands/,$p' "$T/help" | awk 'NR > 1 && /^  [a-z]/ { print $1 }')
fi
[ $bad = 0 ] || fail "documentation links or coverage broken (above)"
