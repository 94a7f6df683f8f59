#!/bin/bash
# heapwalk --pid on live programs on the host's glibc: corpora/ptmalloc
# bins1 (main arena; tcache, fast, unsorted, small and large bins, mmapped
# chunks) and threads8 (main + 8 thread arenas, a thread that never calls
# malloc), in their live mode (CORPUS_LIVE=1, corpora/common/live.h: the
# heap and truth file of their cores, then they wait, every thread alive).
# A SIGUSR1 is sent, and left pending, before heapwalk attaches.  With
# libc's debug info and with --no-debuginfo:
#  - chunks and summary agree with the program's own truth (truthcmp, as
#    on its core); bins hold exactly the chunk lines' free lists and at
#    least every chunk the truth puts in each (each tcache its thread's:
#    truthcmp --bins); sizes --exact adds up to summary and chunks, and
#    sizes folds it (--sizes, --classes); arenas lists each thread under
#    its arena (--arenas); the chunks are the same either way;
#  - summary --json has "live" (this pid, stopped_ms, snapshot_bytes,
#    no_stop false) and the text a "live:" line;
#  - with --no-stop (the process is idle: its view cannot be torn) chunks,
#    summary and bins agree with the truth as well, and "live" says
#    no_stop true;
#  - right after every heapwalk run no thread of the program is stopped or
#    traced (/proc/PID/task/*/status State, TracerPid) and the SIGUSR1 is
#    still pending.
# Then the program checks itself and says OK: every live chunk's contents
# unchanged, the SIGUSR1 pending and delivered once unblocked, TracerPid
# 0, no thread stopped or missing.
# Skips while heapwalk does not support --pid, or ptrace is not permitted.
# LIVE_STANDIN=gcore checks the harness on gcore's core instead (live-lib.sh).
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live
truthcmp=$(tool truthcmp)

for c in bins1 threads8; do
	dir=$(live_prog host "$c")
	live_start "$c" env CORPUS_LIVE=1 "$dir/prog" "$T/$c.truth"
	live_usr1 "$c"
	pid=${LIVE_PID[$c]}
	truth=$T/$c.truth
	for mode in debug nodebug; do
		opt=()
		[ $mode = debug ] || opt=(--no-debuginfo)
		o=$T/$c.$mode
		for cmd in chunks summary bins exact sizes arenas; do
			args=("$cmd")
			[ $cmd != exact ] || args=(sizes --exact)
			hw_live "$c" "$o.$cmd" "$o.$cmd.err" --json "${opt[@]}" "${args[@]}"
			expect_rc 0
			live_untraced "$c" "heapwalk --pid $pid ${opt[*]} ${args[*]}"
		done
		hw_live "$c" "$o.text" "$o.text.err" "${opt[@]}" summary
		expect_rc 0
		live_untraced "$c" "heapwalk --pid $pid ${opt[*]} summary"
		check_live_summary "$o.summary" "$o.text" "$pid"

		"$truthcmp" "$truth" "$o.chunks" "$o.summary" ||
			fail "$c ($mode): chunks or summary disagree with the truth"
		"$truthcmp" --bins "$truth" "$o.bins" "$o.chunks" ||
			fail "$c ($mode): bins disagree with the chunks or the truth"
		"$truthcmp" --sizes "$o.exact" "$o.summary" "$o.chunks" ||
			fail "$c ($mode): sizes --exact, summary and chunks disagree"
		"$truthcmp" --classes "$o.sizes" "$o.exact" ||
			fail "$c ($mode): sizes classes disagree with sizes --exact"
		"$truthcmp" --arenas "$truth" "$o.arenas" ||
			fail "$c ($mode): arenas' threads disagree with the truth"
	done
	if ! cmp -s "$T/$c.debug.chunks" "$T/$c.nodebug.chunks"; then
		diff "$T/$c.debug.chunks" "$T/$c.nodebug.chunks" | sed -n 1,10p >&2
		fail "$c: chunks differ with and without debug info"
	fi
	# --no-stop reads the process while it runs: idle, it is the truth too.
	if [ "$LIVE_STANDIN" != gcore ]; then
		o=$T/$c.nostop
		for cmd in chunks summary bins; do
			hw_live "$c" "$o.$cmd" "$o.$cmd.err" --json --no-stop "$cmd"
			expect_rc 0
			live_untraced "$c" "heapwalk --pid $pid --no-stop $cmd"
		done
		check_live_summary "$o.summary" "" "$pid" true
		"$truthcmp" "$truth" "$o.chunks" "$o.summary" ||
			fail "$c (--no-stop): chunks or summary disagree with the truth"
		"$truthcmp" --bins "$truth" "$o.bins" "$o.chunks" ||
			fail "$c (--no-stop): bins disagree with the chunks or the truth"
	fi
	live_finish "$c"
	also=" (chunks, bins also with --no-stop)"
	[ "$LIVE_STANDIN" != gcore ] || also=" (on gcore's core: LIVE_STANDIN)"
	stopped=$(grep -o '"stopped_ms" *: *[0-9.]*' "$T/$c.debug.summary" | sed 's/.*: *//' || true)
	say "$c: $(grep -c . "$T/$c.debug.chunks") chunks, bins, sizes and arenas agree with the truth, with and without debug info$also; stopped ${stopped:-?} ms; the program's self-check says OK"
done
