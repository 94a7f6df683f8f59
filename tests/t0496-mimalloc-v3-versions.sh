#!/bin/bash
# mimalloc 3.0 to 3.4, each layout row of libheapwalk/alloc/mimalloc/
# v3layout.c that Debian ships no library of, from the cores committed
# under corpora/mimalloc/cores-v3/ (scripts/corpus/mimalloc-versions.sh:
# corpora/mimalloc/mitruth1.c, eight workers and a thread that exited,
# built with the release's src/static.c; its truth and mimalloc's own
# visit of every block recorded): 3.0.12, 3.1.6, 3.2.8, 3.3.2 and 3.4.3,
# one release of each row.  Each truth is checked by itself, then
# heapwalk, given the program (its symbols name mimalloc: the page map's
# root is searched for), is held to it as t0491 holds it on Debian's
# 3.0.1: every block, leaks, `check` clean; and `summary` names the row
# the release is of.
# shellcheck source=tests/mimalloc-lib.sh
. "$(dirname "$0")/mimalloc-lib.sh"
need_heapwalk
need_cmd xz

dir=$TOP/corpora/mimalloc/cores-v3
# release, mi_version() (mimalloc's own numbering: 3.0.12 is 3012,
# 3.1.6 316, 3.2.8 3208, 3.3.2 30302), and the row (v3layout.c's
# releases) it must be read by
want=(v3.0.12 3012 "3.0.1, 3.0.7 to 3.0.12"
      v3.1.6 316 "3.0.3, 3.1.4 to 3.1.6"
      v3.2.8 3208 "3.2.6 to 3.2.8"
      v3.3.2 30302 "3.3.0 to 3.3.2"
      v3.4.3 30403 "3.4.0 to 3.4.3")
for ((i = 0; i < ${#want[@]}; i += 3)); do
	tag=${want[i]} exp=${want[i + 1]} row=${want[i + 2]} c=$dir/${want[i]}-release
	for f in core.xz truth.txt mitruth1.xz; do
		[ -f "$c/$f" ] || fail "corpora/mimalloc/cores-v3/$tag-release: no $f"
	done
	name=$tag
	mkdir -p "$T/$name"
	cp "$c/truth.txt" "$T/$name/"
	xz -dc "$c/mitruth1.xz" >"$T/$name/mitruth1"
	got=$(sed -n 's/^mimalloc //p' "$T/$name/truth.txt")
	[ "$got" = "$exp" ] || fail "$name: its truth is of mimalloc $got, not $exp"
	mi_truth_ok "$name"
	check "$name" "$c/core.xz" --exe "$T/$name/mitruth1"
	has "\"version\":\"$row\"" <"$T/$name/summary" ||
		fail "$name: not read by the row of $row: $(grep -o '"version":"[^"]*"' "$T/$name/summary" | sed -n 2p)"
done
mi_truth_only_end
