# shellcheck shell=bash
# tests/jemalloc-lib.sh - sourced by the jemalloc tests (t039N, t04NN):
# cores of corpora/jemalloc programs linked against Debian's libjemalloc2
# (scripts/corpus/make-core.sh CASE DIR jemalloc-VERSION-ARCH; the first
# run downloads the packages: network), compared with the programs' own
# ground truth by tests/tools/jetruthcmp.  Works from tests/ and from
# tests/pending/.
here_je_=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f "$here_je_/variant-lib.sh" ]; then
	# shellcheck source=tests/variant-lib.sh
	. "$here_je_/variant-lib.sh"
else
	# shellcheck source=tests/variant-lib.sh
	. "$here_je_/../variant-lib.sh"
fi

# jemalloc_truth VARIANT CASE: build the core once (variant_core) and
# check that its truth file is complete and consistent; print the
# directory.
jemalloc_truth() {
	local dir
	dir=$(variant_core "$1" "$2")
	"$(tool jetruthcmp)" --check-truth "$dir/truth.txt" >&2 ||
		fail "$1 $2: the corpus truth contradicts itself (corpus bug, not heapwalk's; $dir)"
	echo "$dir"
}

# jemalloc_check VARIANT VERSION ARCH CASE...: for each case, heapwalk
# --json --no-debuginfo (arm64: also --sysroot, qemu-user cores name no
# files) prints chunks, summary, sizes, bins and arenas that agree with
# the truth (jetruthcmp: jemalloc's stats.* figures, each thread's arena),
# and the summary names VERSION and ARCH.  A qemu core has no thread
# pointers: arenas must say so rather than name threads.
jemalloc_check() {
	local variant=$1 version=$2 arch=$3 case dir sysroot cmd jetruthcmp
	shift 3
	jetruthcmp=$(tool jetruthcmp)
	for case; do
		dir=$(jemalloc_truth "$variant" "$case")
		local opt=(--json --no-debuginfo)
		case $variant in
		*-arm64)
			sysroot=$(readlink -f "$dir/sysroot")
			opt+=(--sysroot "$sysroot")
			;;
		esac
		local out=$T/$case
		for cmd in chunks summary sizes bins arenas; do
			hw "$out.$cmd" "$out.$cmd.err" "${opt[@]}" "$dir/core" "$cmd"
			expect_rc 0
		done
		"$jetruthcmp" "$dir/truth.txt" "$out.chunks" "$out.summary" \
			"$out.sizes" "$out.bins" "$out.arenas" ||
			fail "$variant $case: heapwalk disagrees with the truth (core in $dir)"
		grep -qE "\"version\" *: *\"$version\"" "$out.summary" ||
			fail "$variant $case: summary does not say version $version: $(head -c 200 "$out.summary")"
		grep -qE "\"arch\" *: *\"$arch\"" "$out.summary" ||
			fail "$variant $case: summary does not say arch $arch"
		case $variant in
		*-arm64)
			grep -q '"threads_unknown":"[^"]*NT_ARM_TLS' "$out.arenas" ||
				fail "$variant $case: arenas does not say that thread pointers are unknown"
			;;
		esac
		say "$variant $case: $(grep -c . "$out.chunks") chunk lines, stats.* and thread bindings agree with the truth"
	done
}
