#!/bin/bash
# mimalloc's 2.x releases other than Debian's 2.0.9, walked from the
# cores committed under corpora/mimalloc/cores/ (one a release and
# variant, xz -9: scripts/corpus/mimalloc-versions.sh made them from
# upstream's tags, each release's src/static.c compiled into
# corpora/mimalloc/miversions.c, plain and MI_SECURE=4; their executables
# are not kept), against the truth each recorded: the main thread and two
# workers allocating 1 B to 200 KiB, a 1 MiB large and a 40 MiB huge
# block, posix_memalign'd to 64 and 4096 (pointers inside their blocks);
# frees by owners and other threads before mimalloc's visit of each heap
# and after it (left on local_free, xthread_free and the heaps' delayed
# lists); a thread that exited (its pages abandoned); and the C
# library's own blocks, which mimalloc's visit found (the dtv glibc
# callocs for each thread the main thread creates).  This checks the
# layout rows (libheapwalk/alloc/mimalloc/layout.c) the other tests
# cannot: Debian ships 2.0.9 alone.
# For each core (held by tests/tools/mivercmp, whose head says each
# check):
#   - summary, heapwalk reading the .xz as committed (it unpacks it: a
#     GiB from 2.1 on, the arena mimalloc reserves, zeros but for its
#     segments; under the default --unpack-max, at least 2 GiB, and half
#     a second to two of xz's time): mimalloc, walked with the layout row
#     whose releases hold the truth's release (its tag, which is the
#     directory's; mi_version() of the same major and minor); free lists
#     encoded exactly in the secure variant; no findings; its blocks in
#     use exactly the alloc and libc lines;
#   - chunks (of a copy xz unpacks meanwhile): every alloc block a line
#     in use at its address of size mi_usable_size (an aligned pointer
#     inside its block: the line ends where the pointer's usable size
#     does), every libc block one too, no other line in use; every freed
#     block in a free line, on no list a visit collects from if it was
#     freed before the visits, on local_free or a thread-free list (or
#     in a freed page) if after;
#   - check (of that copy) exits 0.
# Every release the script makes by default must be here, both variants.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd xz

dir=$TOP/corpora/mimalloc/cores
want=(v2.0.2 v2.0.6 v2.1.2 v2.1.4 v2.1.7 v2.1.9 v2.2.7 v2.4.1)
for tag in "${want[@]}"; do
	for v in release secure; do
		if ! [ -f "$dir/$tag-$v/core.xz" ] || ! [ -f "$dir/$tag-$v/truth.txt" ]; then
			fail "corpora/mimalloc/cores/$tag-$v: no core.xz or truth.txt"
		fi
	done
done

cmp=$(tool mivercmp)
n=0
for core in "$dir"/*/core.xz; do
	d=${core%/core.xz} name=${core%/core.xz}
	name=${name##*/}
	tag=${name%-*} variant=${name##*-}
	case $variant in
	release) enc=() ;;
	secure) enc=(--encoded) ;;
	*) fail "corpora/mimalloc/cores/$name: variant neither release nor secure" ;;
	esac
	# The directory's tag is the release the program was built from (its
	# `release` line), and mi_version() has its major and minor
	# (major*100 + minor*10 + patch to 2.2.x, then major*10000 +
	# minor*100 + patch; 2.0.2's says 201, 2.1.7a's 217).
	rel=$(sed -n 's/^release //p' "$d/truth.txt")
	[ "$rel" = "$tag" ] || fail "$name: its truth is of release ${rel:-unknown}"
	ver=$(sed -n 's/^version //p' "$d/truth.txt")
	if [ "${ver:-0}" -ge 10000 ]; then
		mm=$((ver / 10000)).$((ver / 100 % 100))
	else
		mm=$((ver / 100)).$((ver / 10 % 10))
	fi
	case $tag in
	"v$mm".*) ;;
	*) fail "$name: its truth says mi_version() ${ver:-none}, not of $tag" ;;
	esac

	# summary from the compressed core itself; chunks and check from a
	# copy xz unpacks meanwhile (sparse: its zeros are holes), which
	# saves heapwalk two more unpackings of a GiB (half a second to two
	# seconds each: most of this test's time).
	o=$T/$name
	xz -dc "$core" >"$o.core" &
	xzpid=$!
	hw "$o.summary" "$o.summary.err" --json "$core" summary
	expect_rc 0
	wait "$xzpid" || fail "$name: xz cannot unpack $core"
	hw "$o.chunks" "$o.chunks.err" --json "$o.core" chunks
	expect_rc 0
	hw "$o.check" "$o.check.err" "$o.core" check
	[ "$HW_RC" = 0 ] || {
		sed -n 1,20p "$o.check" >&2
		fail "$name: heapwalk check exited $HW_RC on an undamaged heap"
	}
	rm -f "$o.core"
	"$cmp" "${enc[@]}" "$d/truth.txt" "$o.chunks" "$o.summary" >"$o.cmp" || {
		sed -n 1,25p "$o.cmp" >&2
		fail "$name: heapwalk disagrees with the truth of mimalloc $tag ($variant)"
	}
	say "$name: $(json_str "$o.summary" version): $(tail -n 1 "$o.cmp")"
	n=$((n + 1))
done
say "$n cores of ${#want[@]} releases walked as recorded"
