#!/bin/bash
# Statically linked glibc programs: no libc.so is mapped, main_arena, mp_
# and the tcache TLS variable are in the executable itself.  bins1 and
# threads8 linked with -static and with -static-pie (make-core.sh's
# host-static and host-static-pie variants, the host glibc's libc.a) are
# walked four ways, each passing truthcmp
# against the program's own truth, with byte-identical chunk lists:
#   sym       the executable that ran, its .symtab: main_arena by symbol
#   nodebug   --no-debuginfo: .symtab is not debug info, still by symbol
#   stripped  --exe prog.stripped: no symbols, main_arena from the scan of
#             the executable's data; the version from glibc's banner in
#             the stripped copy (it verifies: strip changes only the
#             section header fields of the ELF header)
#   bare      the core's name for the executable changed to one no
#             machine has: no file serves its read-only pages, so no
#             version string either; the data alone says which glibc
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
truthcmp=$(tool truthcmp)

# roots_str SUMMARY KEY: a string value inside summary's "roots".
roots_str() {
	sed -n "s/.*\"roots\":{[^}]*\"$2\":\"\\([^\"]*\\)\".*/\\1/p" "$1"
}

for variant in host-static host-static-pie; do
	for case_name in bins1 threads8; do
		dir=$(variant_core $variant "$case_name")
		c=$T/$variant/$case_name
		mkdir -p "$c" "$T/empty"
		corpus_copy "$dir" "$c"
		cp "$dir/prog.stripped" "$c/"
		# The glibc that ran (truth.h records gnu_get_libc_version()).
		version=$(sed -n 's/^# glibc \([0-9.]*\)$/\1/p' "$c/truth.txt")
		[ -n "$version" ] || fail "$variant $case_name: no '# glibc' line in its truth"
		for mode in sym nodebug stripped bare; do
			opt=()
			case $mode in
			nodebug) opt=(--no-debuginfo) ;;
			stripped) opt=(--exe "$c/prog.stripped") ;;
			esac
			# bare: the core's own name for the executable made one
			# no machine has, so only what the core holds of it is
			# there (its read-only data, the version string, is not).
			core=$c/core
			if [ $mode = bare ]; then
				core=$c/core.bare
				perl -0777 -pe 's{/prog\0}{/prqg\0}g' "$c/core" >"$core"
			fi
			out=$c/$mode
			hw "$out.chunks" "$out.chunks.err" "${opt[@]}" --json "$core" chunks
			expect_rc 0
			hw "$out.summary" "$out.summary.err" "${opt[@]}" --json "$core" summary
			expect_rc 0
			"$truthcmp" "$c/truth.txt" "$out.chunks" "$out.summary" ||
				fail "$variant $case_name ($mode): heapwalk disagrees with the truth (core in $dir)"
			want=$version
			[ $mode != bare ] || want=unknown
			[ "$(json_str "$out.summary" version)" = "$want" ] ||
				fail "$variant $case_name ($mode): summary does not say version $want: $(head -c 300 "$out.summary")"
			check_era "$out.summary" "$version"
			from=$(roots_str "$out.summary" main_arena_from)
			case $mode:$from in
			sym:*symbol*executable* | nodebug:*symbol*executable*) ;;
			stripped:*scan*executable* | bare:*scan*executable*) ;;
			*) fail "$variant $case_name ($mode): main_arena found by '$from'" ;;
			esac
			say "$variant $case_name ($mode): main_arena from '$from', version $(json_str "$out.summary" version)"
		done
		ma=$(roots_str "$c/sym.summary" main_arena)
		mp=$(roots_str "$c/sym.summary" mp_)
		for mode in nodebug stripped bare; do
			cmp -s "$c/sym.chunks" "$c/$mode.chunks" || {
				diff "$c/sym.chunks" "$c/$mode.chunks" | sed -n 1,10p >&2
				fail "$variant $case_name: chunks differ with symbols and $mode"
			}
			[ "$(roots_str "$c/$mode.summary" main_arena)" = "$ma" ] &&
				[ "$(roots_str "$c/$mode.summary" mp_)" = "$mp" ] ||
				fail "$variant $case_name ($mode): main_arena/mp_ differ from the symbols' $ma/$mp"
		done
		say "$variant $case_name: $(grep -c . "$c/sym.chunks") chunks agree with the truth with symbols, --no-debuginfo, stripped and bare; the data says glibc $(json_str "$c/bare.summary" data_says)"
	done
done
