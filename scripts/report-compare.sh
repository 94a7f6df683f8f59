#!/usr/bin/env bash
# Compare every report of this tree's heapwalk with those of an earlier
# revision, byte for byte, on the corpus (scripts/report-baseline.sh's
# set): the check of a refactor that must not change any output.
#
# usage: scripts/report-compare.sh [REV]      (default: HEAD)
#
# REV is built in a git worktree of its own (${TMPDIR:-/tmp}/heapwalk-
# compare-REV, kept for the next run), this tree's build/heapwalk is
# built with make, both record their reports with report-baseline.sh
# over the same corpus cores (build/corpus, made by `make check`), and
# the two trees are compared.  Exit 0 when every report is the same,
# 1 with the differing files listed (diff -r's first lines) when not.
set -euo pipefail

die() { printf 'report-compare: %s\n' "$*" >&2; exit 2; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rev=${1:-HEAD}
sha=$(git -C "$top" rev-parse --verify --quiet "$rev^{commit}") ||
	die "no such revision: $rev"
tmp=${TMPDIR:-/tmp}
wt=$tmp/heapwalk-compare-${sha:0:12}
[ -d "$top/build/corpus" ] || die "no corpus in build/corpus: run make check first"

if [ ! -d "$wt" ]; then
	git -C "$top" worktree add --detach "$wt" "$sha" >/dev/null 2>&1 ||
		die "cannot make a worktree of $rev at $wt"
fi
make -s -C "$wt" build/heapwalk >/dev/null || die "$rev does not build"
make -s -C "$top" build/heapwalk >/dev/null || die "this tree does not build"

# One scratch directory for both runs: summary prints the cores' paths.
# REV's reports are kept for the next run while REV, the baseline
# script and the corpus cores stay the same (a refactor compares often).
work=$tmp/heapwalk-compare-work
key=$({ cat "$top/scripts/report-baseline.sh"
	find "$top/build/corpus" -name core -printf '%p %s %T@\n' | sort; } |
	sha1sum | cut -c1-12)
before=$tmp/heapwalk-compare-before-${sha:0:12}-$key
after=$tmp/heapwalk-compare-after
if [ ! -f "$before.done" ]; then
	rm -f "$tmp"/heapwalk-compare-before-"${sha:0:12}"-*.done
	HEAPWALK=$wt/build/heapwalk WORK=$work CORPUS=$top/build/corpus \
		"$top/scripts/report-baseline.sh" "$before"
	touch "$before.done"
else
	echo "report-compare: ${sha:0:12}'s reports from an earlier run ($before)" >&2
fi
HEAPWALK=$top/build/heapwalk WORK=$work CORPUS=$top/build/corpus \
	"$top/scripts/report-baseline.sh" "$after"
if diff -r "$before" "$after" >"$tmp/heapwalk-compare.diff"; then
	echo "report-compare: every report the same as ${sha:0:12}'s ($(find "$after" -type f | wc -l) files)"
	exit 0
fi
echo "report-compare: reports differ from ${sha:0:12}'s (all of it: $tmp/heapwalk-compare.diff)" >&2
grep -E '^(diff|Only in)' "$tmp/heapwalk-compare.diff" | sed -n 1,20p >&2
exit 1
