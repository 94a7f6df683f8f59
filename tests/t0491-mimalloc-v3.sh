#!/bin/bash
# mimalloc 3.x (arenas and pages, no segments; no heap delayed-free
# lists; an abandoned page taken over by a thread that frees into it):
# corpora/mimalloc/mitruth1.c linked with trixie's libmimalloc.so.3
# (3.0.1) and sid's (3.6.0, whose threads allocate from "theaps" and
# whose full pages leave them: the main thread visits mimalloc's whole
# heap, mi_heap_main(), for everyone), both stripped, from their Debian
# packages (scripts/corpus/mimalloc-libs.sh: headers from libmimalloc-dev;
# run on this host's glibc through an RPATH); one worker and eight, with
# mimalloc's own view of every block in use and its statistics recorded.
# Each truth is checked by itself (tests/tools/mitruthcmp --check-truth:
# every block in a page mimalloc reports, in its visit as the block's
# state says) and names the mimalloc it ran on.
# heapwalk walks 3.0.1 (libheapwalk/alloc/mimalloc/v3.c: the page map,
# its pages, arenas and heaps) and is held to its truths, as t0490 does
# for 2.0.9.  3.6.0's layout is not the 3.0.1 or 3.4.3 one v3.c knows
# (its source is not at hand, its page map root not of their shape):
# heapwalk refuses it, and its truths are made and checked by
# themselves only (MI_V3_WALKER=1 compares them anyway, for whoever
# adds its row).
# shellcheck source=tests/mimalloc-lib.sh
. "$(dirname "$0")/mimalloc-lib.sh"
need_heapwalk
need_cmd gcc

cc=(gcc -std=c11 -O1 -g -pthread -DMI_HAVE_HEADER)
cases=()
for v in 3.0.1 3.6.0; do
	dir=$(mi_libs "mimalloc-$v-amd64")
	lib=$dir/usr/lib/x86_64-linux-gnu
	name=v${v//./}
	"${cc[@]}" -I "$dir/usr/include" -o "$T/$name" "$MI_PROG" \
		-L "$lib" "-Wl,-rpath=$lib" -lmimalloc ||
		fail "cannot build mitruth1 against mimalloc $v"
	# mi_version(): 301 for 3.0.1 (major, two digits of minor), 30600
	# for 3.6.0 (and two of patch).
	case $v in
	3.0.1) want=301 ;;
	3.6.0) want=30600 ;;
	esac
	for threads in 1 8; do
		mi_core "$name-$threads" "$T/$name" "$threads" visit,mistats
		got=$(sed -n 's/^mimalloc //p' "$T/$name-$threads/truth.txt")
		[ "$got" = "$want" ] ||
			fail "$name-$threads ran on mimalloc $got, not $v ($want)"
		cases+=("$name-$threads")
	done
done

for c in "${cases[@]}"; do
	case $c in
	v360-*)
		if [ "${MI_V3_WALKER:-0}" != 1 ]; then
			hw "$T/$c/summary" "$T/$c/summary.err" "$T/$c/core" summary
			has "mimalloc 3.x" <"$T/$c/summary.err" ||
				has "mimalloc 3.x" <"$T/$c/summary" ||
				fail "$c: mimalloc 3.6.0 not refused with its reason"
			say "$c: refused, as it should be (its layout is not known)"
			continue
		fi ;;
	esac
	check "$c" "$T/$c/core"
done
mi_truth_only_end
