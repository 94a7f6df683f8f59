#!/bin/bash
# heapwalk --pid PID prof: the heap profile of a running process.
# corpora/jemalloc/prof1.c in its live mode (CORPUS_LIVE=1, live.h) on
# Debian's amd64 jemalloc 5.3.0: it samples every allocation, writes its
# own prof.dump and its truth, then waits.  heapwalk --pid must write the
# same heap_v2 (tests/tools/heapv2cmp), its collapsed stacks must end in
# every site of the truth, `prof --recent -o` must equal its own
# experimental.prof_recent.alloc_dump, and the process must come out untraced and
# pass its own check (live.h: not traced, no thread stopped, the SIGUSR1
# sent before still pending).
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/prof-lib.sh
. "$(dirname "$0")/prof-lib.sh"
need_live
heapv2cmp=$(tool heapv2cmp)

v=jemalloc-5.3.0-amd64
name=prof1
dir=$(live_prog "$v" prof1)
live_start "$name" env CORPUS_LIVE=1 "$dir/prog" "$T/truth.txt"
live_usr1 "$name"
pid=${LIVE_PID[$name]}
[ -s "$T/prof.heap" ] || fail "the live program wrote no prof.heap next to its truth"
hw_live "$name" "$T/p.out" "$T/p.err" prof -o "$T/hw.heap"
expect_rc 0
live_untraced "$name" "heapwalk --pid $pid prof -o"
"$heapv2cmp" "$T/prof.heap" "$T/hw.heap" ||
	fail "heapwalk --pid prof: the heap_v2 differs from the process's own prof.dump"
hw_live "$name" "$T/c.out" "$T/c.err" prof --collapsed
expect_rc 0
live_untraced "$name" "heapwalk --pid $pid prof --collapsed"
while read -r site; do
	grep -qE "(^|;)$site [0-9]+\$" "$T/c.out" ||
		fail "heapwalk --pid prof --collapsed: no stack ends in $site"
done < <(awk '$1 == "site" { print $2 }' "$T/truth.txt")
check_recent "$T" "heapwalk --pid $pid prof --recent" --pid "$pid"
live_untraced "$name" "heapwalk --pid $pid prof --recent"
live_finish "$name"
say "$v prof1 live: heap_v2 equals the process's own prof.dump, every site's stack found, prof --recent equals its own alloc_dump; the program's self-check says OK"
