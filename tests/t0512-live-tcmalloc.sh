#!/bin/bash
# heapwalk --pid on live programs on Debian's gperftools tcmalloc 2.10:
# corpora/tcmalloc basic1 and threads8 linked with the minimal library
# and with the full one (the heap checker and profiler), built as t0460
# builds them (make-core.sh --prog-only VARIANT) and run in their live
# mode (CORPUS_LIVE=1, corpora/common/live.h: the heap and truth file of
# their cores, then they wait, every thread alive).  A SIGUSR1 is sent,
# and left pending, before heapwalk attaches.  With --no-debuginfo (the
# libraries are stripped), as on the cores:
#  - heapwalk's chunks, summary (MallocExtension's seven figures), bins
#    and arenas (each thread cache's thread) agree with the truth
#    (tctruthcmp);
#  - summary --json has "live" and the text a "live:" line; the same
#    with --no-stop (the process is idle: its view cannot be torn);
#  - right after every heapwalk run no thread of the program is stopped
#    or traced and the SIGUSR1 is still pending.
# Then the program checks itself and says OK: every live block unchanged,
# the SIGUSR1 pending and delivered once unblocked, TracerPid 0, no
# thread stopped or missing.
# Skips while ptrace is not permitted or gperftools is not installed.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live
[ -f /usr/include/gperftools/tcmalloc.h ] ||
	skip "gperftools is not installed (make deps: libgoogle-perftools-dev)"
cmp=$(tool tctruthcmp)

for v in tcmalloc-minimal-amd64 tcmalloc-full-amd64; do
	for c in basic1 threads8; do
		name=$v.$c
		dir=$(live_prog "$v" "$c")
		truth=$T/$name.truth
		live_start "$name" env CORPUS_LIVE=1 "$dir/prog" "$truth"
		live_usr1 "$name"
		pid=${LIVE_PID[$name]}
		grep -qx "# tcmalloc 2.10" "$truth" ||
			fail "$v $c: the program did not run on tcmalloc 2.10"
		for mode in stop nostop; do
			opt=(--no-debuginfo)
			[ $mode = stop ] || opt+=(--no-stop)
			[ $mode = stop ] || [ "$LIVE_STANDIN" != gcore ] || continue
			o=$T/$name.$mode
			for cmd in chunks summary bins arenas; do
				hw_live "$name" "$o.$cmd" "$o.$cmd.err" --json "${opt[@]}" "$cmd"
				expect_rc 0
				live_untraced "$name" "heapwalk --pid $pid ${opt[*]} $cmd"
			done
			if [ $mode = stop ]; then
				hw_live "$name" "$o.text" "$o.text.err" "${opt[@]}" summary
				expect_rc 0
				live_untraced "$name" "heapwalk --pid $pid ${opt[*]} summary"
				check_live_summary "$o.summary" "$o.text" "$pid"
			else
				check_live_summary "$o.summary" "" "$pid" true
			fi
			"$cmp" "$truth" "$o.chunks" "$o.summary" "$o.bins" "$o.arenas" ||
				fail "$v $c (${opt[*]}): heapwalk --pid disagrees with the truth"
		done
		live_finish "$name"
		also=" (also with --no-stop)"
		[ "$LIVE_STANDIN" != gcore ] || also=" (on gcore's core: LIVE_STANDIN)"
		say "$v $c: $(grep -c . "$T/$name.stop.chunks") chunk lines, MallocExtension's figures, bins and thread caches agree with the truth$also; the program's self-check says OK"
	done
done
