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
	local dir=$CORPUS/$1/$2 rc=0
	"$TOP/scripts/corpus/make-core.sh" "$2" "$dir" "$1" >&2 || rc=$?
	case $rc in
	0) echo "$dir" ;;
	77) skip "cannot produce a $1 core for $2 here" ;;
	*) fail "make-core.sh $2 $dir $1 failed" ;;
	esac
}

# variant_check VARIANT VERSION ARCH CASE...: for each case, heapwalk's
# chunks and summary match the truth twice, with the variant's libc6-dbg
# (--debug-dir) and with --no-debuginfo; both chunk lists are identical,
# and summary names VERSION and ARCH.  arm64 cores are read with
# --sysroot (qemu-user cores name no files); amd64 cores name the
# sysroot's files by their full paths already.
variant_check() {
	local variant=$1 version=$2 arch=$3 case dir sysroot mode truthcmp
	shift 3
	truthcmp=$(tool truthcmp)
	for case; do
		dir=$(variant_core "$variant" "$case")
		sysroot=$(readlink -f "$dir/sysroot")
		local base=()
		case $variant in
		*-arm64) base=(--sysroot "$sysroot") ;;
		esac
		for mode in debug nodebug; do
			local opt=(--no-debuginfo)
			if [ $mode = debug ]; then opt=(--debug-dir "$sysroot/usr/lib/debug"); fi
			local out=$T/$case.$mode
			hw "$out.chunks" "$out.chunks.err" --json "${base[@]}" "${opt[@]}" "$dir/core" chunks
			expect_rc 0
			hw "$out.summary" "$out.summary.err" --json "${base[@]}" "${opt[@]}" "$dir/core" summary
			expect_rc 0
			"$truthcmp" "$dir/truth.txt" "$out.chunks" "$out.summary" ||
				fail "$variant $case ($mode): heapwalk disagrees with the truth (core in $dir)"
			grep -qE "\"version\" *: *\"$version\"" "$out.summary" ||
				fail "$variant $case ($mode): summary does not say version $version: $(head -c 200 "$out.summary")"
			grep -qE "\"arch\" *: *\"$arch\"" "$out.summary" ||
				fail "$variant $case ($mode): summary does not say arch $arch"
		done
		cmp -s "$T/$case.debug.chunks" "$T/$case.nodebug.chunks" || {
			diff "$T/$case.debug.chunks" "$T/$case.nodebug.chunks" | head -n 10 >&2
			fail "$variant $case: chunks differ with and without debug info"
		}
		say "$variant $case: $(grep -c . "$T/$case.debug.chunks") chunks agree with the truth, with and without debug info"
	done
}
