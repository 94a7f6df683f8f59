#!/bin/bash
# mimalloc 3.x (arenas and pages, no segments; no heap delayed-free
# lists; an abandoned page taken over by a thread that frees into it):
# corpora/mimalloc/mitruth1.c linked with trixie's libmimalloc.so.3
# (3.0.1: one page map, found by its root in mimalloc's data) and sid's
# (3.6.0: a chunk map at every 256 MiB of its memory; its threads
# allocate from "theaps" and its full pages leave them: the main thread
# visits mimalloc's whole heap, mi_heap_main(), for everyone), both
# stripped, from their Debian packages (scripts/corpus/mimalloc-libs.sh:
# headers from libmimalloc-dev; run on this host's glibc through an
# RPATH); one worker and eight, with mimalloc's own view of every block
# in use and its statistics recorded.  Each truth is checked by itself
# (tests/tools/mitruthcmp --check-truth: every block in a page mimalloc
# reports, in its visit as the block's state says) and names the
# mimalloc it ran on; heapwalk (libheapwalk/alloc/mimalloc/v3.c) is held
# to every truth, as t0490 does for 2.0.9.
# 3.6.0 again with 32 MiB arenas (MIMALLOC_ARENA_RESERVE): several.
# Then 3.6.0 as a program with mimalloc built in would have it: the
# library under another name (its soname rewritten, so that nothing
# says "mimalloc"), found by its chunk maps alone; and 3.6.0 live
# (--pid, eight threads), left running, untraced and unstopped.
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
# 3.6.0 with small arenas (32 MiB: several, each at its own 256 MiB
# boundary, beside the OS pages of the blocks past them).
MIMALLOC_ARENA_RESERVE=32MiB mi_core small-8 "$T/v360" 8 visit,mistats
cases+=(small-8)
# own_stats CASE: 3.6.0's own counters in `summary` (read from its
# subprocess and heap) are what mi_stats_print printed (the truth's
# "mistats" lines: peak, total, current; sizes to a tenth of a unit).
# (mitruth1's last visit of the heap merges every thread's counts into
# it before the print and the core.)
own_stats() {
	local c=$1 sum=$T/$1/summary
	awk -v pages="$(json_num "$sum" own_pages)" \
	    -v pages_peak="$(json_num "$sum" own_pages_peak)" \
	    -v abandoned="$(json_num "$sum" own_pages_abandoned)" \
	    -v threads="$(json_num "$sum" own_threads)" \
	    -v arenas="$(json_num "$sum" own_arenas)" \
	    -v reserved="$(json_num "$sum" own_reserved)" \
	    -v committed="$(json_num "$sum" own_committed)" \
	    -v allocated="$(json_num "$sum" own_allocated)" '
	function bytes(n, u) {
		return n * (u == "GiB" ? 2^30 : u == "MiB" ? 2^20 : u == "KiB" ? 2^10 : 1)
	}
	function near(got, n, u,   want, unit) {
		want = bytes(n, u); unit = bytes(1, u)
		# (mimalloc prints a tenth of a unit, rounded or cut)
		return got > want - unit / 10 && got < want + unit / 10
	}
	function bad(what) { print c ": " what; fails++ }
	$1 != "mistats" { next }
	$2 == "pages" && $3 == ":" {
		seen++
		if ($4 != pages_peak || $6 != pages) bad("pages " $4 " peak, " $6 " current: heapwalk " pages_peak ", " pages)
	}
	$2 == "abandoned" && $3 == ":" { seen++; if ($6 != abandoned) bad("abandoned " $6 ": heapwalk " abandoned) }
	$2 == "threads" && $3 == ":" { seen++; if ($6 != threads) bad("threads " $6 ": heapwalk " threads) }
	$2 == "arenas" && $3 == ":" { seen++; if ($4 != arenas) bad("arenas " $4 ": heapwalk " arenas) }
	$2 == "reserved" && $3 == ":" {
		seen++
		if (!near(reserved, $(NF - 1), $NF)) bad("reserved " $(NF - 1) " " $NF ": heapwalk " reserved)
	}
	$2 == "committed" && $3 == ":" {
		seen++
		if (!near(committed, $(NF - 1), $NF)) bad("committed " $(NF - 1) " " $NF ": heapwalk " committed)
	}
	$2 == "allocated" && $3 == ":" {
		seen++
		if (!near(allocated, $(NF - 1), $NF)) bad("allocated " $(NF - 1) " " $NF ": heapwalk " allocated)
	}
	END {
		if (seen != 7) { print c ": " seen " of the 7 counters printed"; fails++ }
		exit fails != 0
	}' c="$c" "$T/$c/truth.txt" >"$T/$c/own" ||
		fail "$(cat "$T/$c/own")"
}

for c in "${cases[@]}"; do
	check "$c" "$T/$c/core"
	case $c in
	v360-* | small-8)
		own_stats "$c"
		say "$c: mimalloc's own counters equal mi_stats_print's" ;;
	esac
	[ "$c" != small-8 ] || continue
	# (the row's releases: "3.0.1, 3.0.7 to 3.0.12", "3.6.0")
	has '"version":"'"${c:1:1}.${c:2:1}.${c:3:1}"'[",]' <"$T/$c/summary" ||
		fail "$c: not walked as its release: $(head -c 300 "$T/$c/summary")"
done

# 3.6.0 under another name: the library's soname and file name say
# "mimalloq" (same length, nothing else touched).
dir=$(mi_libs mimalloc-3.6.0-amd64)
mkdir -p "$T/anon"
sed 's/libmimalloc\.so\.3/libmimalloq.so.3/g' \
	"$dir/usr/lib/x86_64-linux-gnu/libmimalloc.so.3.6" >"$T/anon/libmimalloq.so.3"
n=$( { cmp -l "$dir/usr/lib/x86_64-linux-gnu/libmimalloc.so.3.6" "$T/anon/libmimalloq.so.3" || :; } | wc -l)
[ "$n" -ge 1 ] && [ "$n" -le 4 ] ||
	fail "the library's soname was not rewritten as one byte a place ($n bytes differ)"
"${cc[@]}" -I "$dir/usr/include" -o "$T/anonprog" "$MI_PROG" \
	"$T/anon/libmimalloq.so.3" "-Wl,-rpath=$T/anon" ||
	fail "cannot build mitruth1 against the renamed mimalloc 3.6.0"
mi_core anon-8 "$T/anonprog" 8 visit
check anon-8 "$T/anon-8/core"
has "\"module\":\"$T/anon/libmimalloq.so.3\"" <"$T/anon-8/summary" ||
	fail "anon-8: mimalloc's file not named by where its main heap is: $(head -c 400 "$T/anon-8/summary")"

# Live: eight threads, waiting on a pipe the test holds open.
mi_live "$T/v360" 8
mi_truth_only_end
