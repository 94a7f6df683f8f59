#!/bin/bash
# heapwalk on gperftools tcmalloc cores: Debian bookworm's 2.10, the
# minimal library (libtcmalloc_minimal.so.4) and the full one with the
# heap checker and profiler (libtcmalloc.so.4), both stripped, linked
# into corpora/tcmalloc's basic1 (one thread) and threads8 (nine threads,
# each with its thread cache); and the arm64 minimal library under
# qemu-aarch64 (its core has no NT_FILE: --sysroot); and Debian trixie's
# 2.16 (amd64, on trixie's glibc), whose thread caches keep no thread id:
# their threads are found through the thread pointers (a TLS pointer to
# the cache); bullseye's 2.8.1 (on its glibc 2.31); and 2.10's
# libtcmalloc_minimal.a linked into the
# executable, with its symbols and stripped (--exe prog.stripped).  Each program's truth (every block's
# address, usable size and state, MallocExtension's figures, the free
# objects per class of its own statistics, each thread) must equal
# heapwalk's chunks, summary, bins and arenas (tests/tools/tctruthcmp),
# with --no-debuginfo.  With
# glibc's debug info (libc6-dbg) the summary still walks tcmalloc and
# lists the idle glibc malloc as a second instance without reading libc's
# DWARF (--stats; read when glibc is walked, --allocator ptmalloc), and
# `check` finds nothing.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
[ -f /usr/include/gperftools/tcmalloc.h ] ||
	skip "gperftools is not installed (make deps: libgoogle-perftools-dev)"
cmp=$(tool tctruthcmp)
for variant in tcmalloc-minimal-amd64 tcmalloc-full-amd64 tcmalloc-2.10-arm64 \
	tcmalloc-2.16-amd64 tcmalloc-2.8-amd64 tcmalloc-static-amd64; do
	version=2.10 full=2.10
	case $variant in
	tcmalloc-2.16-*) version=2.16 full=2.16 ;;
	tcmalloc-2.8-*) version=2.8 full=2.8.1 ;;
	esac
	for case in basic1 threads8; do
		dir=$(variant_core "$variant" "$case")
		opt=()
		case $variant in
		*-arm64) opt=(--sysroot "$(readlink -f "$dir/sysroot")") ;;
		esac
		grep -qx "# tcmalloc $version" "$dir/truth.txt" ||
			fail "$variant $case: the program did not run on tcmalloc $version"
		out=$T/$variant-$case
		for cmd in chunks summary bins; do
			hw "$out.$cmd" "$out.$cmd.err" --json --no-debuginfo \
				"${opt[@]}" "$dir/core" "$cmd"
			expect_rc 0
		done
		# A qemu core has no thread pointers: no cache names a thread.
		arenas=()
		if [ ${#opt[@]} = 0 ]; then
			hw "$out.arenas" "$out.arenas.err" --json --no-debuginfo \
				"$dir/core" arenas
			expect_rc 0
			arenas=("$out.arenas")
		fi
		"$cmp" "$dir/truth.txt" "$out.chunks" "$out.summary" "$out.bins" \
			"${arenas[@]}" ||
			fail "$variant $case: heapwalk disagrees with the truth (core in $dir)"
		# glibc's debug info: the host's libc6-dbg, or the sysroot's.
		dbg=()
		case $variant in
		tcmalloc-2.*-amd64) dbg=(--debug-dir "$(readlink -f "$dir/sysroot")/usr/lib/debug") ;;
		esac
		hw "$out.sum2" "$out.sum2.err" --json "${opt[@]}" "${dbg[@]}" "$dir/core" summary
		expect_rc 0
		grep -q "\"allocator\":\"tcmalloc\",\"version\":\"$full\"" "$out.sum2" ||
			fail "$variant $case: with glibc's debug info, tcmalloc is not walked"
		grep -q '"allocator":"ptmalloc"' "$out.sum2" ||
			fail "$variant $case: the idle glibc malloc is not listed as an instance"
		# The idle glibc is listed, not walked: its layouts stay the
		# version's built-in ones, and libc's DWARF (inflating it would
		# be most of the open) is not read.  Walked, it is.
		hw "$out.sum3" "$out.sum3.err" --stats "${opt[@]}" "${dbg[@]}" "$dir/core" summary
		expect_rc 0
		has '; DWARF of 0 modules$' "$out.sum3.err" ||
			fail "$variant $case: summary of tcmalloc read DWARF: $(tail -n 1 "$out.sum3.err")"
		hw "$out.pm" "$out.pm.err" --stats --allocator ptmalloc "${opt[@]}" "${dbg[@]}" "$dir/core" summary
		expect_rc 0
		if has 'struct layouts: *DWARF' "$out.pm"; then
			has '; DWARF of 1 modules$' "$out.pm.err" ||
				fail "$variant $case: glibc walked with DWARF layouts, but: $(tail -n 1 "$out.pm.err")"
		elif [ ${#dbg[@]} -gt 0 ]; then
			fail "$variant $case: glibc walked without the sysroot's libc DWARF: $(grep layouts "$out.pm")"
		fi
		hw "$out.check" "$out.check.err" "${opt[@]}" "${dbg[@]}" "$dir/core" check
		expect_rc 0
		grep -q ' 0 problems found' "$out.check" ||
			fail "$variant $case: check finds problems in an undamaged heap: $(head -5 "$out.check")"
		say "$variant $case: $(grep -c '^alloc ' "$dir/truth.txt") allocations, every block and figure as tcmalloc says"
	done
done

# The static library stripped with its executable: no symbol at all, the
# module found by its version string, every root by its shape.
for case in basic1 threads8; do
	dir=$(variant_core tcmalloc-static-amd64 "$case")
	out=$T/static-bare-$case
	for cmd in chunks summary bins arenas; do
		hw "$out.$cmd" "$out.$cmd.err" --json --no-debuginfo \
			--exe "$dir/prog.stripped" "$dir/core" "$cmd"
		expect_rc 0
	done
	grep -q '"module_from":"gperftools version string in the executable"' "$out.summary" ||
		fail "static $case: the linked-in tcmalloc is not found by its version string: $(grep -o '"module_from":"[^"]*"' "$out.summary")"
	"$cmp" "$dir/truth.txt" "$out.chunks" "$out.summary" "$out.bins" "$out.arenas" ||
		fail "static $case, stripped: heapwalk disagrees with the truth (core in $dir)"
	say "tcmalloc-static-amd64 $case, stripped (--exe): every block and figure as tcmalloc says"
done
