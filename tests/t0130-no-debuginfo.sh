#!/bin/bash
# --no-debuginfo: without symbols or DWARF, heapwalk finds main_arena by
# scanning libc's data and still gets bins1 and threads8 exactly right:
# its chunks pass truthcmp against the program's own truth, are byte for
# byte the chunks of the run with debug info, and summary "roots" says the
# main arena came from a scan, not from a symbol.  Once more "bare" (the
# core's libc renamed to a file that is nowhere: no version string): the same
# chunks, version "unknown", and the layout the heap's data shows is
# consistent with the host's glibc.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)

# main_arena_from JSON: the value of roots.main_arena_from ("" if none).
main_arena_from() {
	sed -n 's/.*"roots":{[^}]*"main_arena_from":"\([^"]*\)".*/\1/p' "$1"
}

for case_name in bins1 threads8; do
	dir=$(corpus_core $case_name)
	# A private copy: make-core.sh may rebuild the corpus meanwhile (it
	# holds $dir/.lock while it does).
	mkdir -p "$T/$case_name"
	c=$T/$case_name
	if command -v flock >/dev/null 2>&1; then
		flock "$dir/.lock" cp "$dir/core" "$dir/truth.txt" "$c/"
	else
		cp "$dir/core" "$dir/truth.txt" "$c/"
	fi

	mkdir -p "$T/empty"
	hide_libc "$c/core" "$c/core.bare"
	for mode in dbg nodbg bare; do
		opt=() core=$c/core
		[ $mode = dbg ] || opt=(--no-debuginfo)
		[ $mode != bare ] || opt+=(--sysroot "$T/empty") core=$c/core.bare
		hw "$c/$mode.chunks" "$c/$mode.chunks.err" "${opt[@]}" --json "$core" chunks
		expect_rc 0
		hw "$c/$mode.summary" "$c/$mode.summary.err" "${opt[@]}" --json "$core" summary
		expect_rc 0
		"$truthcmp" "$c/truth.txt" "$c/$mode.chunks" "$c/$mode.summary" ||
			fail "$case_name ${opt[*]:-(with debug info)}: heapwalk disagrees with the truth"
	done

	for mode in nodbg bare; do
		if ! cmp -s "$c/dbg.chunks" "$c/$mode.chunks"; then
			diff "$c/dbg.chunks" "$c/$mode.chunks" | sed -n 1,20p
			fail "$case_name: chunks differ with --no-debuginfo ($mode)"
		fi
	done
	grep -q '"version":"unknown"' "$c/bare.summary" ||
		fail "$case_name bare: a version without libc's file: $(head -c 200 "$c/bare.summary")"
	host_glibc=$(getconf GNU_LIBC_VERSION | sed -n 's/^glibc \([0-9.]*\)$/\1/p')
	for mode in dbg nodbg bare; do
		check_era "$c/$mode.summary" "$host_glibc"
	done
	say "$case_name bare: the data says glibc $(json_str "$c/bare.summary" data_says) (host $host_glibc)"

	from=$(main_arena_from "$c/dbg.summary")
	nfrom=$(main_arena_from "$c/nodbg.summary")
	say "$case_name: main_arena from '$from'; with --no-debuginfo from '$nfrom'"
	[ -n "$nfrom" ] ||
		fail "$case_name --no-debuginfo: summary has no roots.main_arena_from: $(cat "$c/nodbg.summary")"
	case $nfrom in
	*symbol*) fail "$case_name --no-debuginfo: main_arena still found by '$nfrom'" ;;
	*scan*) ;;
	*) fail "$case_name --no-debuginfo: main_arena_from '$nfrom' does not say it was a scan" ;;
	esac
	# No DWARF layouts either.
	nlayout=$(sed -n 's/.*"roots":{[^}]*"layout":"\([^"]*\)".*/\1/p' "$c/nodbg.summary")
	case $nlayout in
	*DWARF* | *dwarf*) fail "$case_name --no-debuginfo: structure layout from '$nlayout'" ;;
	esac
	# Same arena either way.
	ma=$(sed -n 's/.*"roots":{[^}]*"main_arena":"\([^"]*\)".*/\1/p' "$c/dbg.summary")
	nma=$(sed -n 's/.*"roots":{[^}]*"main_arena":"\([^"]*\)".*/\1/p' "$c/nodbg.summary")
	[ "$ma" = "$nma" ] ||
		fail "$case_name: main_arena $ma with debug info, $nma without"
done
