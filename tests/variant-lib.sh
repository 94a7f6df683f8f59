# shellcheck shell=bash
# tests/variant-lib.sh - sourced by the glibc-variant tests
# (t03NN-*.sh): heapwalk on cores of another glibc or architecture, made
# by scripts/corpus/make-core.sh CASE DIR VARIANT from Debian packages
# (scripts/corpus/sysroot.sh downloads them the first time: network).
# Works from tests/pending/ and from tests/ once the tests move there.
here_=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f "$here_/lib.sh" ]; then
	# shellcheck source=tests/lib.sh
	. "$here_/lib.sh"
else
	# shellcheck source=tests/lib.sh
	. "$here_/../lib.sh"
fi

# variant_core VARIANT CASE: build the core once under $CORPUS/VARIANT/CASE
# and print that directory (skip when this machine cannot make it).
variant_core() {
	variant_core_or_none "$@"
	[ -n "$VARIANT_DIR" ] || skip "cannot produce a $1 core for $2 here"
	echo "$VARIANT_DIR"
}

# variant_core_or_none VARIANT CASE: the same, for a test whose other
# parts still count without it: sets VARIANT_DIR to the directory, or to
# "" when this machine cannot make it (call it outside $(...), so that a
# failure fails the test).
VARIANT_DIR=
variant_core_or_none() {
	local rc=0
	VARIANT_DIR=$CORPUS/$1/$2
	"$TOP/scripts/corpus/make-core.sh" "$2" "$VARIANT_DIR" "$1" >&2 || rc=$?
	case $rc in
	0) ;;
	77) VARIANT_DIR= ;;
	*) fail "make-core.sh $2 $VARIANT_DIR $1 failed" ;;
	esac
}

# variant_check VARIANT VERSION ARCH CASE...: for each case, heapwalk's
# chunks and summary match the truth three times: with the variant's
# libc6-dbg (--debug-dir), with --no-debuginfo, and "bare" (--no-debuginfo
# and an empty --sysroot: no libc file, so no version string, as when a
# device's libc is not at hand); the chunk lists are identical, summary
# names ARCH, and VERSION (or "unknown" when bare), and the layout the
# heap's data shows is consistent with VERSION; `arenas` lists each thread
# under the truth's arena (qemu-user cores: says the threads are unknown).
# arm64 cores are read
# with --sysroot (qemu-user cores name no files; bare, the executable is
# given with --exe); amd64 cores name the sysroot's files by their full
# paths already.
variant_check() {
	local variant=$1 version=$2 arch=$3 case dir sysroot mode truthcmp
	shift 3
	truthcmp=$(tool truthcmp)
	for case; do
		dir=$(variant_core "$variant" "$case")
		sysroot=$(readlink -f "$dir/sysroot")
		local base=()
		case $variant in
		*-arm64 | *-arm64-64k) base=(--sysroot "$sysroot") ;;
		esac
		mkdir -p "$T/empty"
		for mode in debug nodebug bare; do
			local opt=(--no-debuginfo) want=$version
			if [ $mode = debug ]; then opt=(--debug-dir "$sysroot/usr/lib/debug"); fi
			if [ $mode = bare ]; then
				want=unknown
				base=(--sysroot "$T/empty")
				case $variant in
				*-arm64 | *-arm64-64k) base+=(--exe "$dir/prog") ;;
				esac
			fi
			local out=$T/$case.$mode core=$dir/core
			# amd64 cores name their libc by its full path, which
			# is tried after the sysroot: bare, that name is hidden.
			if [ $mode = bare ] && [[ $variant != *-arm64* ]]; then
				core=$T/$case.bare.core
				hide_libc "$dir/core" "$core"
			fi
			hw "$out.chunks" "$out.chunks.err" --json "${base[@]}" "${opt[@]}" "$core" chunks
			expect_rc 0
			hw "$out.summary" "$out.summary.err" --json "${base[@]}" "${opt[@]}" "$core" summary
			expect_rc 0
			"$truthcmp" "$dir/truth.txt" "$out.chunks" "$out.summary" ||
				fail "$variant $case ($mode): heapwalk disagrees with the truth (core in $dir)"
			grep -qE "\"version\" *: *\"$want\"" "$out.summary" ||
				fail "$variant $case ($mode): summary does not say version $want: $(head -c 200 "$out.summary")"
			check_era "$out.summary" "$version"
			# What the core cannot tell is said, not guessed.
			local limits
			limits=$(sed -n 's/.*"target_limits":\[\([^]]*\)\].*/\1/p' "$out.summary")
			case $variant in
			*-arm64 | *-arm64-64k)
				[[ $limits == *"no NT_FILE"* && $limits == *"no NT_ARM_TLS"* ]] ||
					fail "$variant $case ($mode): a qemu core's missing notes are not reported: [$limits]" ;;
			*)
				if [ $mode = bare ]; then
					[[ $limits == *"missing"* ]] ||
						fail "$variant $case ($mode): the missing libc file is not reported: [$limits]"
				else
					[ -z "$limits" ] ||
						fail "$variant $case ($mode): a kernel core with its files lacks nothing, yet: [$limits]"
				fi ;;
			esac
			grep -qE "\"arch\" *: *\"$arch\"" "$out.summary" ||
				fail "$variant $case ($mode): summary does not say arch $arch"
			# Each thread on its arena; qemu cores have no thread
			# pointers, and arenas must say so instead.
			local unknown=()
			case $variant in *-arm64 | *-arm64-64k) unknown=(--unknown) ;; esac
			hw "$out.arenas" "$out.arenas.err" --json "${base[@]}" "${opt[@]}" "$dir/core" arenas
			expect_rc 0
			"$truthcmp" --arenas "$dir/truth.txt" "$out.arenas" "${unknown[@]}" ||
				fail "$variant $case ($mode): arenas' threads disagree with the truth"
		done
		for mode in nodebug bare; do
			cmp -s "$T/$case.debug.chunks" "$T/$case.$mode.chunks" || {
				diff "$T/$case.debug.chunks" "$T/$case.$mode.chunks" | sed -n 1,10p >&2
				fail "$variant $case: chunks differ with debug info and $mode"
			}
		done
		say "$variant $case: $(grep -c . "$T/$case.debug.chunks") chunks agree with the truth, with and without debug info, and without libc's file; the data says glibc $(json_str "$T/$case.bare.summary" data_says)"
	done
}
