#!/bin/bash
# heapwalk CORE prof on aarch64: jemalloc 5.3.0 built with --enable-prof
# for arm64 (Debian bookworm's source and configure flags, 64 KiB pages;
# Debian's own arm64 package has no prof), stripped as Debian strips it,
# corpora/jemalloc/prof1.c cross-built -no-pie and run under qemu-aarch64,
# its qemu-user core (no NT_FILE, no NT_ARM_TLS) read on the x86_64 host
# with --sysroot.  The variant jemalloc-5.3.0-arm64-prof of
# scripts/corpus/make-core.sh (library: scripts/corpus/jemalloc-prof.sh;
# the first run downloads the source and compiles it: ~7 minutes on 2
# busy cores, then cached under build/sysroot).  Checks as
# tests/t0440-jemalloc-prof.sh's for prof1:
#  (own) the program's own prof.heap matches its truth (no heapwalk);
#  (a) `prof --format=heap_v2 -o OUT`: header and records equal the
#      program's own prof.heap (heapv2cmp, with both MAPPED_LIBRARIES
#      left out: see (m));
#  (b) `prof -o OUT` writes the same file;
#  (c) `prof --collapsed` (and --objects): per truth site the stacks sum
#      to the truth's bytes (objects); prof_inner under prof_outer,
#      prof_middle; the inlined site under prof_inline_host; the thread's
#      site under prof_worker;
#  (d) the text profile names every site;
#  (e) with the library's own debug file (--debug-dir), the same heap_v2;
#  (l) `prof --recent -o` equals the program's own alloc_dump, and the
#      table's live records are the truth's objects (prof-lib.sh);
#  (g) Debian's arm64 libjemalloc2 (no prof), basic1: `prof` exits 4
#      with one line;
#  (m) MAPPED_LIBRARIES: every code mapping of the guest's files is in
#      heapwalk's, with its addresses, offset and file.  The truth is the
#      program's own list, less what qemu-user adds to it: qemu's
#      /proc/self/maps also lists qemu's own host mappings (dropped here:
#      only the program and files under the sysroot are kept), shows the
#      guest's code pages without x (restored from the files' PT_LOADs)
#      and names files by their host paths (the sysroot prefix is taken
#      off; heapwalk's paths, the names ld.so opened, are compared by the
#      file they lead to in the sysroot: /lib/... is /usr/lib/...);
#  (s) every frame of the --collapsed stacks is symbolized (no bare
#      address), as on x86_64.
# Network on the first run (Debian's packages and source); skips when the
# library cannot be built here.
# shellcheck source=tests/jemalloc-lib.sh
. "$(dirname "$0")/jemalloc-lib.sh"
# shellcheck source=tests/prof-lib.sh
. "$(dirname "$0")/prof-lib.sh"
need_cmd awk readelf realpath

heapv2cmp=$(tool heapv2cmp)

# The library takes minutes to build on a fresh machine: `make check`
# runs this test once it is cached, `make check-slow` (HEAPWALK_SLOW=1)
# builds it.
cached=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}/jemalloc-5.3.0-arm64-prof/.sysroot
if [ "${HEAPWALK_SLOW:-0}" != 1 ] && [ ! -f "$cached" ]; then
	skip "the prof-enabled aarch64 jemalloc is not built yet (cross-compiling it takes 4-10 minutes): make check-slow builds it and runs this test"
fi

dir=$(variant_core jemalloc-5.3.0-arm64-prof prof1)
sysroot=$(readlink -f "$dir/sysroot")
lib=$sysroot/usr/lib/aarch64-linux-gnu/libjemalloc.so.2
grep -qx 'variant jemalloc-5.3.0-arm64-prof' "$sysroot/.sysroot" ||
	fail "$dir/sysroot is not the prof-enabled sysroot"
# As Debian ships it: no symbol table, no debug info (only .dynsym).
if LC_ALL=C readelf -SW "$lib" | has -E '\.symtab|\.debug_info'; then
	fail "$lib is not stripped"
fi
build_s=$(sed -n 's/^build_seconds //p' "$sysroot/.sysroot")

# (own)
check_own_exact "$dir"
say "arm64 prof1: jemalloc's own profile matches the truth: $(awk '$1 == "total" { print $2 " objects, " $3 " bytes" }' "$dir/truth.txt") (library built in ${build_s:-?} s)"

need_heapwalk
opt=(--sysroot "$sysroot")
core=$dir/core

# records_only PROFILE OUT: PROFILE with its MAPPED_LIBRARIES emptied.
records_only() {
	sed '/^MAPPED_LIBRARIES:$/q' "$1" >"$2"
}

# (a), (b)
hw "$T/a.out" "$T/a.err" "${opt[@]}" "$core" prof --format=heap_v2 -o "$T/a.heap"
expect_rc 0
records_only "$dir/prof.heap" "$T/own.rec"
records_only "$T/a.heap" "$T/a.rec"
[ "$(grep -c '^@' "$T/own.rec")" -gt 0 ] || fail "prof.heap has no records"
"$heapv2cmp" "$T/own.rec" "$T/a.rec" ||
	fail "arm64 prof1: heapwalk's heap_v2 header and records differ from the program's own prof.heap (core in $dir)"
hw "$T/b.out" "$T/b.err" "${opt[@]}" "$core" prof -o "$T/b.heap"
expect_rc 0
cmp -s "$T/a.heap" "$T/b.heap" ||
	fail "arm64 prof1: 'prof -o' does not write the same heap_v2 as '--format=heap_v2 -o'"
say "arm64 prof1: heap_v2 header and $(grep -c '^@' "$T/a.rec") records equal the program's own prof.heap"

# (c)
hw "$T/c.out" "$T/c.err" "${opt[@]}" "$core" prof --collapsed
expect_rc 0
check_sites "$dir" "$T/c.out" "arm64 prof1 --collapsed" 6
grep -qE '(^|;)main;(.*;)?prof_outer;prof_middle;prof_inner [0-9]+$' "$T/c.out" ||
	fail "arm64 prof1: no stack main;...;prof_outer;prof_middle;prof_inner: $(grep prof_inner "$T/c.out" | sed -n 1,2p)"
grep -qE ';prof_inline_host;prof_site_inline [0-9]+$' "$T/c.out" ||
	fail "arm64 prof1: the inlined site is not a frame of its own under prof_inline_host: $(grep prof_site_inline "$T/c.out" | sed -n 1,2p)"
grep -qE ';prof_worker;prof_site_thread [0-9]+$' "$T/c.out" ||
	fail "arm64 prof1: no stack ...;prof_worker;prof_site_thread: $(grep prof_site_thread "$T/c.out" | sed -n 1,2p)"
hw "$T/co.out" "$T/co.err" "${opt[@]}" "$core" prof --collapsed --objects
expect_rc 0
check_sites "$dir" "$T/co.out" "arm64 prof1 --collapsed --objects" 5

# (d)
hw "$T/d.out" "$T/d.err" "${opt[@]}" "$core" prof
expect_rc 0
while read -r name; do
	grep -qw -- "$name" "$T/d.out" ||
		fail "arm64 prof1: the text profile does not name $name: $(head -n 12 "$T/d.out")"
done < <(awk '$1 == "site" { print $2 }' "$dir/truth.txt")
say "arm64 prof1: collapsed bytes and objects per site, call chains and text agree with the truth"

# (l) the recent-allocation records (tests/prof-lib.sh check_recent).
check_recent "$dir" "arm64 prof1 --recent" "${opt[@]}" "$core"
read -r live matched freed <"$T/rc.check"
say "arm64 prof1: prof --recent -o equals the program's own alloc_dump; $live live records ($matched the truth's objects), $freed freed"

# (e) the unstripped build as a debug file (jemalloc-prof.sh keeps it
# outside the sysroot's usr/lib/debug).
if [ -d "$sysroot/.debug/.build-id" ]; then
	hw "$T/e.out" "$T/e.err" "${opt[@]}" --debug-dir "$sysroot/.debug" "$core" prof --format=heap_v2 -o "$T/e.heap"
	expect_rc 0
	cmp -s "$T/a.heap" "$T/e.heap" ||
		fail "arm64 prof1: the heap_v2 with libjemalloc's debug file differs from the one without"
	say "arm64 prof1: the same heap_v2 with libjemalloc's debug file"
fi

# (g) Debian's arm64 jemalloc: no prof.
nd=$(jemalloc_truth jemalloc-5.3.0-arm64 basic1)
hw "$T/g.out" "$T/g.err" --sysroot "$(readlink -f "$nd/sysroot")" "$nd/core" prof
expect_rc 4
one_error_line "$T/g.err" "Debian arm64 jemalloc basic1 (no prof)"
if ! grep -q 'prof' "$T/g.err" || ! grep -qw 'leaks' "$T/g.err" || ! grep -qw 'sizes' "$T/g.err"; then
	fail "Debian arm64 basic1: the error line does not say prof and point to leaks and sizes: $(cat "$T/g.err")"
fi
[ ! -s "$T/g.out" ] || fail "Debian arm64 basic1: prof printed something on stdout without a profile"
say "Debian arm64 jemalloc (built without prof): exit 4 and one line"

# ---- (m) MAPPED_LIBRARIES -------------------------------------------------

# The executable PT_LOADs' file ranges, "HOSTPATH LO HI", of every file
# the program's own list names (the program and the sysroot's files).
sed '1,/^MAPPED_LIBRARIES:$/d' "$dir/prof.heap" >"$T/own.maps"
: >"$T/code"
while read -r path; do
	[ -f "$path" ] || continue
	LC_ALL=C readelf -lW "$path" 2>/dev/null | awk -v p="$path" '
		$1 == "LOAD" {
			flags = ""
			for (i = 7; i < NF; i++) flags = flags $i
			if (flags ~ /E/) print p, $2, $2 "+" $5
		}'
done < <(awk -v s="$sysroot/" -v prog="$dir/prog" \
	'$6 == prog || index($6, s) == 1 { print $6 }' "$T/own.maps" | sort -u) >"$T/code"
[ -s "$T/code" ] || fail "no executable segment found in the files prof.heap names"
{
	sed '/^MAPPED_LIBRARIES:$/q' "$dir/prof.heap"
	awk -v s="$sysroot/" -v prog="$dir/prog" "$AWK_HEX"'
	FNR == NR {
		split($3, e, "+")
		k = ++n[$1]; lo[$1, k] = hex($2); hi[$1, k] = hex(e[1]) + hex(e[2])
		next
	}
	{
		path = $6
		if (path != prog && index(path, s) != 1) next   # qemu host mapping
		perm = $2; off = hex($3)
		if (substr(perm, 1, 1) == "r")
			for (k = 1; k <= n[path]; k++)
				if (off >= lo[path, k] - lo[path, k] % 4096 && off < hi[path, k])
					perm = substr(perm, 1, 2) "x" substr(perm, 4)
		if (index(path, s) == 1) path = substr(path, length(s))
		print $1, perm, $3, $4, $5, path
	}' "$T/code" "$T/own.maps"
} >"$T/own.fixed"
ncode=$(awk '/^MAPPED_LIBRARIES:$/ { m = 1; next } m && $2 ~ /x/ && $6 ~ /^\// { n++ } END { print n + 0 }' "$T/own.fixed")
[ "$ncode" -ge 5 ] || fail "the corrected prof.heap names only $ncode code mappings (prog, ld.so, libjemalloc, libc, libm, libgcc_s expected)"
# heapwalk's paths, as the files they lead to inside the sysroot.
awk '/^MAPPED_LIBRARIES:$/ { m = 1; next } m && $6 ~ /^\// { print $6 }' "$T/a.heap" | sort -u |
	while read -r path; do
		real=$(realpath -e "$sysroot$path" 2>/dev/null) || continue
		case $real in "$sysroot"/*) echo "$path ${real#"$sysroot"}" ;; esac
	done >"$T/canon"
awk 'FNR == NR { to[$1] = $2; next }
	/^MAPPED_LIBRARIES:$/ { m = 1 }
	m && ($6 in to) { $6 = to[$6] }
	{ print }' "$T/canon" "$T/a.heap" >"$T/a.canon"

# (m) and (s) last: heapwalk's MAPPED_LIBRARIES and symbols of a qemu
# core, after everything that depends only on the profile itself.
if ! "$heapv2cmp" "$T/own.fixed" "$T/a.canon" >"$T/m.out" 2>&1; then
	cat "$T/m.out" >&2
	fail "arm64 prof1: MAPPED_LIBRARIES lacks or misnames code mappings of the program's own list (above). Known cause for ld.so's: a qemu-user core has no NT_FILE, so heapwalk takes the files from ld.so's link_map chain (libheapwalk/target/linkmap.c, hw_link_map_files); ld.so's own entry's l_name points at the executable's PT_INTERP string (glibc rtld.c: l_name = l_libname->name, in the executable's .interp), whose page a qemu-user core does not hold (the executable's read-only PT_LOAD has p_filesz 0) and no file backs it yet while the chain is read, so read_string fails and the entry is skipped. Taking the name from the executable file's PT_INTERP when l_name == bias + PT_INTERP's p_vaddr cannot be read makes this pass"
fi
say "arm64 prof1: MAPPED_LIBRARIES has all $ncode code mappings of the program's own list"

# (s)
bare=$(tr ';' '\n' <"$T/c.out" | sed 's/ [0-9]*$//' | grep -E '^0x[0-9a-f]+$' | sort -u | tr '\n' ' ' || true)
if [ -n "$bare" ]; then
	where=$(for a in $bare; do
		awk -v a="$a" "$AWK_HEX"'
			/^MAPPED_LIBRARIES:$/ { m = 1; next }
			m { split($1, r, "-"); if (hex(a) >= hex(r[1]) && hex(a) < hex(r[2])) { print a " in " $6; exit } }' "$T/own.fixed"
	done | tr '\n' ',')
	fail "arm64 prof1: frames left unsymbolized in --collapsed: ${where%,} (on x86_64 the same stack reads ...;allocate_stack;_dl_allocate_tls;allocate_dtv): heapwalk has no module for ld.so, whose link_map entry it skipped (see (m))"
fi
say "arm64 prof1: every frame symbolized"
