#!/bin/bash
# heapwalk --pid on live programs on Debian's jemalloc: corpora/jemalloc
# basic1 and threads8 linked against libjemalloc2 5.3.0 and 5.2.1 (amd64,
# on the host's glibc), built as the jemalloc core tests build them
# (make-core.sh --prog-only VARIANT) and run in their live mode
# (CORPUS_LIVE=1, corpora/common/live.h: the heap and truth file of their
# cores, then they wait, every thread alive).  A SIGUSR1 is sent, and left
# pending, before heapwalk attaches.  With --no-debuginfo (Debian's
# libjemalloc.so.2 is stripped), as on the cores:
#  - the live truth is consistent (jetruthcmp --check-truth) and heapwalk's
#    chunks, summary (jemalloc's stats.* figures), sizes, bins and arenas
#    agree with it (jetruthcmp); summary names the version and x86_64;
#  - summary --json has "live" (this pid, stopped_ms, snapshot_bytes,
#    no_stop false) and the text a "live:" line;
#  - the same with --no-stop (the process is idle: its view cannot be
#    torn), and "live" says no_stop true;
#  - right after every heapwalk run no thread of the program is stopped or
#    traced and the SIGUSR1 is still pending.
# Then the program checks itself and says OK: every live region and
# extent unchanged, the SIGUSR1 pending and delivered once unblocked,
# TracerPid 0, no thread stopped or missing.
# Skips while heapwalk does not support --pid, when ptrace is not
# permitted, or when the jemalloc packages cannot be had.
# LIVE_STANDIN=gcore checks the harness on gcore's core instead (live-lib.sh).
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live
jetruthcmp=$(tool jetruthcmp)

for v in jemalloc-5.3.0-amd64 jemalloc-5.2.1-amd64; do
	version=${v#jemalloc-}
	version=${version%-amd64}
	for c in basic1 threads8; do
		name=$v.$c
		dir=$(live_prog "$v" "$c")
		live_start "$name" env CORPUS_LIVE=1 "$dir/prog" "$T/$name.truth"
		live_usr1 "$name"
		pid=${LIVE_PID[$name]}
		truth=$T/$name.truth
		"$jetruthcmp" --check-truth "$truth" >&2 ||
			fail "$v $c: the live program's truth contradicts itself (corpus bug)"
		grep -qx "# jemalloc $version" "$truth" ||
			fail "$v $c: the program did not run on jemalloc $version"
		for mode in stop nostop; do
			opt=(--no-debuginfo)
			[ $mode = stop ] || opt+=(--no-stop)
			# --no-stop reads the process while it runs: the
			# stand-in's core has nothing to add.
			[ $mode = stop ] || [ "$LIVE_STANDIN" != gcore ] || continue
			o=$T/$name.$mode
			for cmd in chunks summary sizes bins arenas; do
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
			"$jetruthcmp" "$truth" "$o.chunks" "$o.summary" "$o.sizes" \
				"$o.bins" "$o.arenas" ||
				fail "$v $c (${opt[*]}): heapwalk --pid disagrees with the truth"
		done
		o=$T/$name.stop
		grep -qE "\"version\" *: *\"$version\"" "$o.summary" ||
			fail "$v $c: summary does not say version $version: $(head -c 200 "$o.summary")"
		grep -qE '"arch" *: *"x86_64"' "$o.summary" ||
			fail "$v $c: summary does not say arch x86_64"
		live_finish "$name"
		also=" (also with --no-stop)"
		[ "$LIVE_STANDIN" != gcore ] || also=" (on gcore's core: LIVE_STANDIN)"
		stopped=$(grep -o '"stopped_ms" *: *[0-9.]*' "$o.summary" | sed 's/.*: *//' || true)
		say "$v $c: $(grep -c . "$o.chunks") chunk lines, stats.*, sizes, bins and thread bindings agree with the truth$also; stopped ${stopped:-?} ms; the program's self-check says OK"
	done
done
