#!/bin/bash
# Shared code does not branch on which allocator it runs on, nor spell out
# what a place means: what differs between allocators is data of their
# struct hw_allocator_ops (alloc/alloc.h), what a place means is a row of
# alloc/where.c's table, so that a new allocator is a folder and a line
# in session/session.c.  Checked on the source outside libheapwalk/alloc/ (the
# library's commands, reports, analyses, session, cli, api and the gdb
# plugin), comments left out, string literals kept:
#  - no string literal that is an allocator's name ("ptmalloc",
#    "jemalloc", "tcmalloc", "mallocng", "musl"): a comparison with one
#    needs it (strcmp(s->alloc->name, "jemalloc"));
#  - no comparison of an allocator's name (alloc->name, ops->name) with
#    a literal, whatever its spelling (a prefix such as "je");
#  - no one allocator's ops or header (hw_jemalloc_ops, alloc/jemalloc/)
#    but in session/session.c, which lists the allocators;
#  - no place compared (== HW_WHERE_TOP, case HW_WHERE_DIRTY: ...): a
#    report asks the place's row (hw_place) instead; HW_WHERE_COUNT, the
#    bound, may be.
# Names in prose (help text, legends: "jemalloc's dirty extents") are
# longer literals, and are not matches.  What is allowed is listed below,
# each with why.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TOP"
need_cmd perl

# FILE:LINE-TEXT pairs allowed to match, as extended regular expressions
# on grep -n's "FILE:LINE:TEXT" (LINE left out: lines move), each with
# why.
allowed=(
	# session/session.c lists the allocators and recognises a musl
	# program that is none of them: it may name each.
	'^libheapwalk/session/session\.c:'
)

# C source without comments, string literals kept, one FILE:LINE:TEXT a
# line.
code() {
	perl -0777 -ne '
		s{/\*.*?\*/}{ my $c = $&; $c =~ s/[^\n]//g; $c }gse;
		s{//[^\n]*}{}g;
		my $n = 0;
		for (split /\n/, $_, -1) { $n++; print "$ARGV:$n:$_\n" }
	' "$@"
}

files=()
while IFS= read -r f; do
	files+=("$f")
done < <(find libheapwalk plugin -name '*.[ch]' -o -name '*.cc' | grep -v '^libheapwalk/alloc/' | sort)
[ ${#files[@]} -ge 50 ] || fail "t0028 finds too few files (${#files[@]}): update the test"
code "${files[@]}" >"$T/code"

# Leave out the allowed lines (none left is no error).
not_allowed() {
	local a re=
	for a in "${allowed[@]}"; do
		re=${re:+$re|}$a
	done
	grep -Ev "$re" || true
}

bad=0
report() {  # report WHAT FILE: the matches in FILE, if any
	if [ -s "$2" ]; then
		say "$1:"
		sed 's/^/  /' "$2" >&2
		bad=1
	fi
}

# matching ERE: the lines of the code that match (none is no error).
matching() {
	grep -E "$1" "$T/code" || true
}

names='ptmalloc|jemalloc|tcmalloc|mallocng|musl'
matching "\"($names)\"" | not_allowed >"$T/literal"
report "an allocator's name as a literal outside alloc/ (compare data of its ops instead)" "$T/literal"

matching '\b(strn?cmp|strn?casecmp|memcmp|strstr)[[:space:]]*\(' |
	{ grep -E '(alloc|ops)->name.*"|"[^,]*,[^,]*(alloc|ops)->name' || true; } |
	not_allowed >"$T/cmp"
report "an allocator's name compared with a literal" "$T/cmp"

matching "\bhw_($names)_ops\b|#include[[:space:]]*\"([^\"]*/)?alloc/($names)/" |
	not_allowed >"$T/ops"
report "one allocator's ops or header used outside alloc/ and session/session.c" "$T/ops"

# (HW_WHERE_COUNT is the places' bound, HW_WHERE_NAME_ROOM no place.)
place='HW_WHERE_([A-Z_]+)'
matching "(==|!=)[[:space:]]*$place|$place[[:space:]]*(==|!=)|\bcase[[:space:]]+$place" |
	{ grep -Ev '(==|!=)[[:space:]]*HW_WHERE_(COUNT|NAME_ROOM)\b|HW_WHERE_(COUNT|NAME_ROOM)[[:space:]]*(==|!=)|case[[:space:]]+HW_WHERE_COUNT\b' || true; } |
	not_allowed >"$T/places"
report "a place compared outside alloc/ (ask its row: hw_place(), alloc/where.c)" "$T/places"

# The checks must see something: the code they read compares names.
grep -q 'strcmp(want, allocators\[i\]->name)' "$T/code" ||
	fail "t0028 no longer sees session/session.c compare --allocator's name: update the test"

[ $bad = 0 ] || fail "shared code branches on an allocator or a place (see above)"
say "${#files[@]} files outside alloc/: no allocator named or compared, no place compared"
