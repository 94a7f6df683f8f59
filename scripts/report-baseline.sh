#!/usr/bin/env bash
# Record every report heapwalk prints for the corpus, to compare two builds
# byte for byte (a refactor of the report code must not change the output).
#
# usage: scripts/report-baseline.sh OUTDIR
#        diff -r OUTDIR.before OUTDIR.after
#
# For every core under $CORPUS (CORPUS/CASE/core and CORPUS/VARIANT/CASE/core,
# read with the options the tests use: --sysroot for qemu-user arm64 cores,
# --debug-dir or --no-debuginfo for the glibc variants, --no-debuginfo for
# jemalloc), the committed aarch64 kernel cores (corpora/aarch64-kernel),
# bins1 with a live chunk's size clobbered (t0230's case a: partial totals)
# and seeded, reproducible damaged copies of bins1 (tests/tools/corefuzz,
# as t0220 makes them), runs each command in text and --json:
#   summary arenas bins, each bins KIND of the allocator, chunks
#   (all, --used, --free), sizes (classes, --exact, --by=type), check,
#   frag, chunk ADDR for a few addresses taken from the chunk list (the
#   first, a middle and the last block, an address inside one, one in a
#   header, an mmapped one, one in no chunk), leaks (and --reachable),
#   refs and why of two blocks in use, maps (and --mappings), map,
#   prof (text, heap_v2, collapsed, --objects, --recent: an error
#   without a profile), diff against the core itself (and --leaks) and
#   against its saved sizes, types and leaks, and usage errors
# and keeps stdout, stderr and the exit status of each run as
# OUTDIR/CORE-NAME/COMMAND.{text,json}.{out,err,rc}.
#
# The damaged copies and unpacked cores live in $WORK, a fixed directory
# (summary prints the core's path, so it must be the same for both runs).
#
# Environment:
#   HEAPWALK  the binary (default build/heapwalk)
#   CORPUS    corpus cores (default build/corpus; not rebuilt here)
#   TOOLS     built tests/tools (default build/tools; built when missing)
#   WORK      scratch for derived cores (default ${TMPDIR:-/tmp}/heapwalk-report-baseline)
#   FUZZ      damaged copies of bins1 (default 24)
set -euo pipefail

die() { printf 'report-baseline: %s\n' "$*" >&2; exit 1; }

[ $# = 1 ] || die "usage: scripts/report-baseline.sh OUTDIR"
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$1
hw=$(readlink -f "${HEAPWALK:-$top/build/heapwalk}")
corpus=$(readlink -f "${CORPUS:-$top/build/corpus}")
tools=${TOOLS:-$top/build/tools}
work=${WORK:-${TMPDIR:-/tmp}/heapwalk-report-baseline}
fuzz=${FUZZ:-24}
[ -x "$hw" ] || die "no heapwalk at $hw (make, or set HEAPWALK)"
[ -d "$corpus" ] || die "no corpus at $corpus (set CORPUS)"
rm -rf "$out"
mkdir -p "$out" "$tools"

tool() {
	local bin=$tools/$1
	if [ ! -x "$bin" ] || [ "$top/tests/tools/$1.c" -nt "$bin" ]; then
		${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$bin" \
			"$top/tests/tools/$1.c" || die "cannot build $1"
	fi
	echo "$bin"
}

# run NAME SLUG OPTS... -- ARGS...: one command in both forms.
run() {
	local name=$1 slug=$2 opts=() form rc
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	mkdir -p "$out/$name"
	for form in text json; do
		local f=$out/$name/$slug.$form j=()
		[ $form = json ] && j=(--json)
		rc=0
		timeout -k 5 120 "$hw" "${j[@]}" "${opts[@]}" "$@" >"$f.out" 2>"$f.err" || rc=$?
		echo "$rc" >"$f.rc"
	done
}

# addresses JSONL: chunk ADDR queries from a chunk list.
addresses() {
	local n
	n=$(grep -c . "$1" || true)
	[ "$n" -gt 0 ] || { echo 10; return; }
	{
		sed -n '1p' "$1"
		sed -n "$(((n + 1) / 2))p" "$1"
		sed -n "${n}p" "$1"
		grep -m1 '"where":"mmapped"' "$1" || true
		grep -m1 '"where":"large"' "$1" || true
		grep -m1 '"state":"free"' "$1" || true
	} | sed -n 's/.*"addr":"\(0x[0-9a-f]*\)".*/\1/p' | sort -u | while read -r a; do
		echo "$a"
		printf '%x\n' $((a + 5))  # inside, given without 0x
		printf '0x%x\n' $((a - 1)) # in the header (ptmalloc), or before
	done
	echo 0x10                          # in no chunk
}

# core NAME OPTS... -- CORE: every report of one core.
core() {
	local name=$1 opts=() cmd kind a
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	local c=$2
	echo "  $name" >&2
	for cmd in summary arenas bins chunks "chunks --used" "chunks --free" \
		sizes "sizes --exact" check frag; do
		# shellcheck disable=SC2086 # the command's words
		run "$name" "${cmd// /_}" "${opts[@]}" -- "$c" $cmd
	done
	local alloc
	alloc=$(sed -n 's/^{"allocator":"\([a-z]*\)".*/\1/p' "$out/$name/summary.json.out")
	case $alloc in
	jemalloc) kinds="small slabs large tcache" ;;
	*) kinds="tcache fast fastbin unsorted small smallbin large largebin" ;;
	esac
	for kind in $kinds nosuch; do
		run "$name" "bins_$kind" "${opts[@]}" -- "$c" bins "$kind"
	done
	for a in $(addresses "$out/$name/chunks.json.out"); do
		run "$name" "chunk_$a" "${opts[@]}" -- "$c" chunk "$a"
	done
	# The analyses: leaks, refs and why of two blocks, the C++ classes,
	# the writable memory, the map, the profile (an error without one),
	# and diff against the core itself and against its saved sizes,
	# types and leaks (copied to one path: diff names its base).
	for cmd in "sizes --by=type" leaks "leaks --reachable" maps \
		"maps --mappings" map prof "prof --format=heap_v2" \
		"prof --format=collapsed" "prof --objects --top=5" \
		"prof --recent"; do
		# shellcheck disable=SC2086 # the command's words
		run "$name" "${cmd// /_}" "${opts[@]}" -- "$c" $cmd
	done
	for a in $(addresses "$out/$name/chunks_--used.json.out" | sed -n '1p;4p'); do
		run "$name" "refs_$a" "${opts[@]}" -- "$c" refs "$a"
		run "$name" "why_$a" "${opts[@]}" -- "$c" why "$a"
	done
	mkdir -p "$work/saved"
	cp "$out/$name/sizes.json.out" "$work/saved/sizes.json"
	cp "$out/$name/sizes_--by=type.json.out" "$work/saved/types.json"
	cp "$out/$name/leaks.json.out" "$work/saved/leaks.json"
	run "$name" diff_self "${opts[@]}" -- "$c" diff "$c"
	run "$name" diff_self_leaks "${opts[@]}" -- "$c" diff --leaks "$c"
	run "$name" diff_saved "${opts[@]}" -- "$c" diff "$work/saved/sizes.json" \
		"$work/saved/types.json" "$work/saved/leaks.json"
	# Usage errors (stderr and the exit status are kept too).
	run "$name" err_refs_noarg "${opts[@]}" -- "$c" refs
	run "$name" err_why_bad "${opts[@]}" -- "$c" why 0xzz
	run "$name" err_leaks_bad "${opts[@]}" -- "$c" leaks --bogus
	run "$name" err_diff_none "${opts[@]}" -- "$c" diff
	run "$name" err_maps_bad "${opts[@]}" -- "$c" maps --bogus
	run "$name" err_prof_bad "${opts[@]}" -- "$c" prof --format=bogus
	run "$name" err_frag_arg "${opts[@]}" -- "$c" frag extra
	run "$name" err_chunk_noarg "${opts[@]}" -- "$c" chunk
	run "$name" err_chunk_bad "${opts[@]}" -- "$c" chunk 0xzz
	run "$name" err_chunks_both "${opts[@]}" -- "$c" chunks --used --free
	run "$name" err_sizes_bad "${opts[@]}" -- "$c" sizes --bogus
	run "$name" err_summary_arg "${opts[@]}" -- "$c" summary extra
	run "$name" err_bins_two "${opts[@]}" -- "$c" bins small large
	run "$name" err_unknown "${opts[@]}" -- "$c" nosuchcommand
	run "$name" default "${opts[@]}" -- "$c"
}

echo "report-baseline: $hw -> $out" >&2

# ---- the corpus, with the tests' options -------------------------------
for c in "$corpus"/*/core "$corpus"/*/*/core; do
	[ -f "$c" ] || continue
	d=$(dirname "$c")
	rel=${d#"$corpus"/}
	name=${rel//\//-}
	variant=${rel%%/*}
	sysroot=
	[ -e "$d/sysroot" ] && sysroot=$(readlink -f "$d/sysroot")
	case $variant in
	jemalloc-*-arm64)
		core "$name" --no-debuginfo --sysroot "$sysroot" -- "$c" ;;
	jemalloc-*)
		core "$name" --no-debuginfo -- "$c" ;;
	glibc-*-arm64-hostcore)
		core "$name" -- "$c"
		core "$name-qemu" --allocator 2 -- "$c" ;;
	glibc-*-arm64 | glibc-*-arm64-64k)
		core "$name" --sysroot "$sysroot" -- "$c"
		mkdir -p "$work/empty"
		core "$name-bare" --sysroot "$work/empty" --exe "$d/prog" -- "$c" ;;
	glibc-*)
		core "$name" --debug-dir "$sysroot/usr/lib/debug" -- "$c"
		core "$name-nodebug" --no-debuginfo -- "$c" ;;
	*)
		core "$name" -- "$c"
		core "$name-nodebug" --no-debuginfo -- "$c" ;;
	esac
done

# ---- committed aarch64 kernel cores ------------------------------------
for src in "$top"/corpora/aarch64-kernel/*/; do
	[ -f "$src/core.xz" ] || continue
	case_name=$(basename "$src")
	w=$work/kernel/$case_name
	if [ ! -f "$w/core" ] || [ "$src/core.xz" -nt "$w/core" ]; then
		rm -rf "$w"
		mkdir -p "$w/sysroot/opt/heapwalk"
		xz -dc "$src/core.xz" >"$w/core"
		tar -xJf "$src/sysroot/sysroot.tar.xz" -C "$w/sysroot"
		cp "$src/prog" "$w/sysroot/opt/heapwalk/prog"
	fi
	core "aarch64-kernel-$case_name" --sysroot "$w/sysroot" --no-debuginfo -- "$w/core"
done

# ---- damaged copies of bins1 (partial walks, findings) -----------------
if [ "$fuzz" -gt 0 ] && [ -f "$corpus/bins1/core" ]; then
	corefuzz=$(tool corefuzz)
	coreloads=$(tool coreloads)
	mkdir -p "$work/fuzz"
	cp "$corpus/bins1/core" "$work/fuzz/orig.core"
	"$coreloads" "$work/fuzz/orig.core" >"$work/fuzz/loads"
	# The main heap, as t0220 finds it: the PT_LOAD holding the lowest
	# main-thread chunk of the truth, up to a page past the highest.
	lo='' hi=''
	for a in $(awk '$1 == "alloc" && $6 == "0" && $5 != "mmapped" &&
		$5 != "merged" { print $2 }' "$corpus/bins1/truth.txt"); do
		if [ -z "$lo" ] || ((a < lo)); then lo=$a; fi
		if [ -z "$hi" ] || ((a > hi)); then hi=$a; fi
	done
	ranges=()
	while read -r va _ _ fsz flags fname; do
		if ((va <= lo && lo < va + fsz)); then
			ranges+=("$(printf '0x%x:0x%x' "$va" $((hi + 4096 < va + fsz ? hi + 4096 : va + fsz)))")
		fi
		case ${fname##*/} in libc.so.6 | libc-2.*.so) ;; *) continue ;; esac
		if [ "$flags" = rw- ] && ((fsz > 0)); then
			ranges+=("$(printf '0x%x:0x%x' "$va" $((va + fsz)))")
		fi
	done <"$work/fuzz/loads"
	# A live chunk's size field clobbered (t0230's case a): the walk of
	# the main heap stops there, every total is partial.
	corepatch=$(tool corepatch)
	mapfile -t live < <(awk '$1 == "alloc" && $6 == "0" && $5 == "heap" {
		print $2 }' "$corpus/bins1/truth.txt" | sort -n)
	if [ ${#live[@]} -ge 3 ]; then
		victim=${live[$(((${#live[@]} - 1) / 2))]}
		below=${live[$(((${#live[@]} - 1) / 2 - 1))]}
		f=$work/fuzz/size.core
		cp "$work/fuzz/orig.core" "$f"
		"$corepatch" "$f" $((victim - 8)) 4141414141414141 >/dev/null
		core "damaged-bins1-size" -- "$f"
		for a in "$victim" "$below"; do
			run "damaged-bins1-size" "chunk_$a" -- "$f" chunk "$(printf '0x%x' "$a")"
		done
	fi
	for ((seed = 1; seed <= fuzz; seed++)); do
		f=$work/fuzz/seed$seed.core
		cp "$work/fuzz/orig.core" "$f"
		"$corefuzz" "$f" "$seed" "${ranges[@]}" >/dev/null
		core "fuzz-bins1-seed$seed" -- "$f"
	done
fi

n=$(find "$out" -name '*.rc' | wc -l)
echo "report-baseline: $n runs in $out" >&2
