#!/bin/bash
# `mp` (glibc's malloc_par, mp_), against what the programs did and
# glibc's documented defaults:
#  - bins1 (2.36): n_mmaps and mmapped_mem are mallinfo2's hblks and
#    hblkhd (the truth); the tcache limits are glibc's defaults (64 bins,
#    7 entries, 1032 bytes), n_mmaps_max DEFAULT_MMAP_MAX (65536),
#    arena_test 8 (64-bit), the mmap threshold unchanged (128 KiB, no
#    mmapped chunk freed); sbrk_base is where main_arena's heap starts;
#  - threads8 sets M_ARENA_MAX to 16 (2 x its 8 threads): arena_max 16;
#  - on glibc 2.31, 2.41, 2.43, 2.44 and aarch64 2.36, the members read
#    with libc's DWARF and with the built-in layouts are the same (the
#    members only `mp` shows have their offsets derived from the others);
#    2.43+ call tcache_bins tcache_small_bins, 2.44 has no
#    tcache_unsorted_limit.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk

# member NAME: NAME in $T/mp (mp --json), quotes off.
member() {
	sed -n "s/.*\"$1\":\"*\\([0-9a-fx]*\\)\"*[,}].*/\\1/p" "$T/mp"
}
truth_val() {
	awk -v k="$2" '$1 == "mallinfo2" && $2 == k { print $3 }' "$1"
}

dir=$(corpus_core bins1)
hw "$T/mp" "$T/err" --json "$dir/core" mp
expect_rc 0
[ "$(member n_mmaps)" = "$(truth_val "$dir/truth.txt" hblks)" ] ||
	fail "bins1: n_mmaps $(member n_mmaps), mallinfo2 hblks $(truth_val "$dir/truth.txt" hblks)"
[ "$(member mmapped_mem)" = "$(truth_val "$dir/truth.txt" hblkhd)" ] ||
	fail "bins1: mmapped_mem $(member mmapped_mem), mallinfo2 hblkhd $(truth_val "$dir/truth.txt" hblkhd)"
for kv in tcache_bins=64 tcache_count=7 tcache_max_bytes=1032 n_mmaps_max=65536 \
	arena_test=8 mmap_threshold=131072 no_dyn_threshold=0; do
	[ "$(member "${kv%=*}")" = "${kv#*=}" ] || fail "bins1: ${kv%=*} $(member "${kv%=*}"), glibc's default ${kv#*=}"
done
hw "$T/a" "$T/err" --json "$dir/core" arena 0
expect_rc 0
start=$(sed -n 's/.*"heaps":\[{"start":"\(0x[0-9a-f]*\)".*/\1/p' "$T/a")
[ "$(member sbrk_base)" = "$start" ] || fail "bins1: sbrk_base $(member sbrk_base), main_arena's heap at $start"
hw "$T/mp.txt" "$T/err" "$dir/core" mp
expect_rc 0
has "^  tcache_count: *7\$" <"$T/mp.txt" || fail "bins1: the text has no tcache_count line: $(cat "$T/mp.txt")"
say "bins1: n_mmaps and mmapped_mem as mallinfo2's, glibc's defaults, sbrk_base at the heap"

dir=$(corpus_core threads8)
hw "$T/mp" "$T/err" --json "$dir/core" mp
expect_rc 0
[ "$(member arena_max)" = 16 ] || fail "threads8: arena_max $(member arena_max), the program set 16"
say "threads8: arena_max 16, as the program set it"

for v in glibc-2.31-amd64 glibc-2.41-amd64 glibc-2.43-amd64 glibc-2.44-amd64 glibc-2.36-arm64; do
	vdir=$(variant_core "$v" bins1)
	sysroot=$(readlink -f "$vdir/sysroot")
	base=()
	case $v in *-arm64) base=(--sysroot "$sysroot") ;; esac
	hw "$T/dwarf" "$T/err" --json "${base[@]}" --debug-dir "$sysroot/usr/lib/debug" "$vdir/core" mp
	expect_rc 0
	hw "$T/plain" "$T/err" --json "${base[@]}" --no-debuginfo "$vdir/core" mp
	expect_rc 0
	a=$(sed 's/.*"members"//' "$T/dwarf") b=$(sed 's/.*"members"//' "$T/plain")
	[ "$a" = "$b" ] || fail "$v: mp with DWARF $a, without $b"
	case $v in
	glibc-2.43-* | glibc-2.44-*) has -F '"tcache_small_bins":' <"$T/dwarf" || fail "$v: no tcache_small_bins" ;;
	*) has -F '"tcache_bins":' <"$T/dwarf" || fail "$v: no tcache_bins" ;;
	esac
	case $v in
	glibc-2.44-*) ! has -F tcache_unsorted_limit <"$T/dwarf" || fail "$v: tcache_unsorted_limit, which 2.44 dropped" ;;
	*) has -F tcache_unsorted_limit <"$T/dwarf" || fail "$v: no tcache_unsorted_limit" ;;
	esac
	say "$v: the same members with DWARF and without"
done

# (jemalloc's mp: t0108; tcmalloc's: t0109.)
