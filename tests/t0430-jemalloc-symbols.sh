#!/bin/bash
# scripts/jemalloc-symbols.sh on Debian bookworm's stripped amd64
# libjemalloc.so.2 (5.3.0-1): the reproducible rebuild becomes
# $CORPUS/jemalloc-symbols/.build-id/NN/REST.debug (kept across runs; the
# first run downloads the source and builds it, about a minute on 2
# cores), with the shipped build-id, full DWARF (arena_t) and the
# internal symbols (je_arenas).  A second run must take the cache.  Bad
# usage and non-jemalloc input fail with one message line.
# Network (the host's Debian mirror); skips when this machine cannot.
here_=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -f "$here_/lib.sh" ]; then
	# shellcheck source=tests/lib.sh
	. "$here_/lib.sh"
else
	# shellcheck source=tests/lib.sh
	. "$here_/../lib.sh"
fi
need_cmd readelf apt-get dpkg-deb

script=$TOP/scripts/jemalloc-symbols.sh
variant=jemalloc-5.3.0-amd64
sysroot=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}/$variant
debugdir=$CORPUS/jemalloc-symbols

# One message line starting "jemalloc-symbols.sh: ", or the usage line.
one_line() {
	local err=$1 what=$2 n
	n=$(wc -l <"$err")
	if [ "$n" != 1 ] || ! grep -qE '^(jemalloc-symbols\.sh: |usage: jemalloc-symbols\.sh )' "$err"; then
		head -n 5 "$err" >&2
		fail "$what: expected one jemalloc-symbols.sh line on stderr, got $n"
	fi
}

# ---- usage and bad input (cheap, no network) -----------------------------

rc=0
"$script" >/dev/null 2>"$T/usage.err" || rc=$?
[ $rc = 2 ] || fail "no arguments: exit $rc, expected 2"
one_line "$T/usage.err" "no arguments"

rc=0
"$script" --bogus a b >/dev/null 2>"$T/opt.err" || rc=$?
[ $rc = 2 ] || fail "unknown option: exit $rc, expected 2"
one_line "$T/opt.err" "unknown option"

printf 'not an ELF file\n' >"$T/notelf"
rc=0
"$script" "$T/notelf" "$T/dbg" >/dev/null 2>"$T/notelf.err" || rc=$?
[ $rc = 1 ] || fail "non-ELF input: exit $rc, expected 1"
one_line "$T/notelf.err" "non-ELF input"

# An ELF library that is not jemalloc (the host's libc).
libc=$(readlink -f "$(gcc -print-file-name=libc.so.6 2>/dev/null || echo /lib/x86_64-linux-gnu/libc.so.6)")
if [ -f "$libc" ]; then
	rc=0
	"$script" "$libc" "$T/dbg" >/dev/null 2>"$T/libc.err" || rc=$?
	[ $rc = 1 ] || fail "libc as input: exit $rc, expected 1"
	one_line "$T/libc.err" "libc as input"
	grep -q 'version string' "$T/libc.err" || fail "libc as input: $(cat "$T/libc.err")"
fi

# ---- the shipped library -------------------------------------------------

rc=0
"$TOP/scripts/corpus/sysroot.sh" "$variant" "$sysroot" >&2 || rc=$?
case $rc in
0) ;;
77) skip "cannot fetch Debian's $variant packages here" ;;
*) fail "sysroot.sh $variant failed" ;;
esac
so=$(readlink -f "$sysroot/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")
[ -f "$so" ] || fail "no libjemalloc.so.2 in $sysroot"
bid=$(LC_ALL=C readelf -n "$so" | awk '/Build ID:/ && !n++ { print $3 }')
[ ${#bid} = 40 ] || fail "shipped $so has no 20-byte build-id ('$bid')"
if LC_ALL=C readelf -S -W "$so" | has ' \.symtab '; then
	fail "shipped $so is not stripped: this test would prove nothing"
fi
want=$debugdir/.build-id/${bid:0:2}/${bid:2}.debug

# ---- the rebuild (cached across runs) ------------------------------------

rc=0
start=$SECONDS
"$script" "$so" "$debugdir" >"$T/out" 2>"$T/err" || rc=$?
case $rc in
0) ;;
77) skip "jemalloc-symbols.sh cannot run here: $(tail -n1 "$T/err")" ;;
*)
	cat "$T/err" >&2
	fail "jemalloc-symbols.sh $so exited $rc"
	;;
esac
say "jemalloc-symbols.sh took $((SECONDS - start)) s (the first run builds, later ones hit the cache)"
[ "$(cat "$T/out")" = "$want" ] || fail "printed '$(cat "$T/out")', expected $want"
[ -f "$want" ] || fail "no $want"

got=$(LC_ALL=C readelf -n "$want" | awk '/Build ID:/ && !n++ { print $3 }')
[ "$got" = "$bid" ] || fail "debug file's build-id $got, shipped $bid"

# Symbols the walk needs, and DWARF with the arena type.
LC_ALL=C readelf -s -W "$want" >"$T/syms"
grep -qE ' je_arenas$' "$T/syms" || fail "no je_arenas in $want's .symtab"
grep -qE ' narenas_total$' "$T/syms" || fail "no narenas_total in $want's .symtab"
grep -qE ' je_arena_emap_global$' "$T/syms" || fail "no je_arena_emap_global in $want's .symtab"
LC_ALL=C readelf --debug-dump=info "$want" >"$T/info" 2>/dev/null
grep -qE 'DW_AT_name +:( \([^)]*\):)? arena_t$' "$T/info" ||
	fail "no arena_t in $want's DWARF"

# libdwfl takes it by build-id: eu-addr2line names a function of the
# stripped library through --debuginfo-path.
if command -v eu-addr2line >/dev/null 2>&1; then
	addr=$(awk '$8 == "je_arena_new" { print $2; exit }' "$T/syms")
	[ -n "$addr" ] || fail "no je_arena_new in $want's .symtab"
	fn=$(eu-addr2line --debuginfo-path="$debugdir" -f -e "$so" "0x$addr" | sed -n 1,1p)
	[ "$fn" = je_arena_new ] || fail "eu-addr2line with --debuginfo-path: '$fn' at 0x$addr, expected je_arena_new"
fi

# Second run: the cache, quickly, without touching the file.
before=$(stat -c %Y.%i "$want")
start=$SECONDS
rc=0
"$script" "$so" "$debugdir" >"$T/out2" 2>"$T/err2" || rc=$?
[ $rc = 0 ] || { cat "$T/err2" >&2; fail "second run exited $rc"; }
[ "$(cat "$T/out2")" = "$want" ] || fail "second run printed '$(cat "$T/out2")'"
[ "$(stat -c %Y.%i "$want")" = "$before" ] || fail "second run rewrote $want"
[ $((SECONDS - start)) -le 10 ] || fail "second run took $((SECONDS - start)) s: the cache was not used"
[ ! -s "$T/err2" ] || fail "second run wrote to stderr: $(head -n 3 "$T/err2")"

# ---- heapwalk with the symbol file ----------------------------------------

# On both corpus cases, heapwalk takes the roots from the symbol file
# (summary says so) and every report is the same as without it.
need_heapwalk
for case in basic1 threads8; do
	rc=0
	core_dir=$CORPUS/$variant/$case
	"$TOP/scripts/corpus/make-core.sh" "$case" "$core_dir" "$variant" >&2 || rc=$?
	case $rc in
	0) ;;
	77) skip "cannot produce a $variant core for $case here" ;;
	*) fail "make-core.sh $case $core_dir $variant failed" ;;
	esac
	for cmd in chunks sizes bins summary; do
		hw "$T/nodbg.$cmd" "$T/nodbg.$cmd.err" --json --no-debuginfo \
			"$core_dir/core" "$cmd"
		expect_rc 0
		hw "$T/dbg.$cmd" "$T/dbg.$cmd.err" --json --debug-dir "$debugdir" \
			"$core_dir/core" "$cmd"
		expect_rc 0
		[ "$cmd" = summary ] && continue
		cmp -s "$T/nodbg.$cmd" "$T/dbg.$cmd" ||
			fail "$case: '$cmd' differs with and without --debug-dir: $(diff "$T/nodbg.$cmd" "$T/dbg.$cmd" | sed -n 1,4p)"
	done
	for root in arenas rtree size_classes bin_infos; do
		grep -q "\"${root}_from\" *: *\"symbol " "$T/dbg.summary" ||
			fail "$case: with --debug-dir the $root root was not taken from the symbol file: $(grep -o '"roots".*' "$T/dbg.summary" | head -c 400)"
		grep -q "\"${root}_from\" *: *\"scan " "$T/nodbg.summary" ||
			fail "$case: without debug info the $root root was not found by a scan"
	done
	# The same numbers: strip the roots and compare what is left.  The
	# instance list is left out too: with libc's debug info glibc's idle
	# malloc (main_arena never initialised, so no scan finds it) is
	# found by symbol and listed as a second instance holding nothing;
	# and so is the crash's backtrace, whose frames the symbol file
	# names more precisely (static functions).
	strip_roots() {
		sed 's/"roots":{[^}]*}//; s/"instances":\[[^]]*\]//
		     s/"backtrace":\[[^]]*\]//' "$1"
	}
	strip_roots "$T/nodbg.summary" >"$T/nodbg.s"
	strip_roots "$T/dbg.summary" >"$T/dbg.s"
	cmp -s "$T/nodbg.s" "$T/dbg.s" ||
		fail "$case: summary differs with and without --debug-dir beyond the roots"
	say "$case: identical chunks, sizes, bins and summary with the rebuilt symbol file"
done
