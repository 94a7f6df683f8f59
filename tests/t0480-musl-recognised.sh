#!/bin/bash
# A musl program is named as one, never taken for a glibc:
# corpora/musl/recognise1.c and bump1.c built with Debian's musl-gcc,
# their cores written by gdb's gcore (the same whatever core_pattern
# says).  mallocng's context is found by its symbol in a static build, at
# that address again in a stripped copy (by the secret AT_RANDOM gives,
# checked against its first meta area), and in musl's libc.so for a
# dynamic build: each is walked (summary exits 0 and says so; the blocks
# are checked against a program's own record in t0481).  What cannot be
# walked is named, exit 4 and one line: a static program that never frees
# has musl's bump allocator, one stopped before its first allocation a
# context not set up yet, one built with musl's oldmalloc (from musl's
# source) oldmalloc, by symbol and stripped.  A live dynamic program reads as its core, and
# it is left running.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd musl-gcc gdb nm strip

src=$TOP/corpora/musl
musl-gcc -O1 -g -static -o "$T/ngs" "$src/recognise1.c" ||
	fail "musl-gcc -static failed"
musl-gcc -O1 -g -o "$T/ngd" "$src/recognise1.c" || fail "musl-gcc failed"
musl-gcc -O1 -g -static -o "$T/bump" "$src/bump1.c" ||
	fail "musl-gcc -static (bump1.c) failed"
strip -o "$T/ngs-stripped" "$T/ngs"

# gcore_of NAME ARGS...: run $T/NAME ARGS under gdb to its abort and write
# $T/NAME.core.
gcore_of() {
	local name=$1
	shift
	(cd "$T" && gdb -batch -nx -ex run -ex "gcore $T/$name.core" \
		--args "$T/$name" "$@") >"$T/$name.gdb" 2>&1 || true
	[ -s "$T/$name.core" ] || {
		tail -n 20 "$T/$name.gdb" >&2
		fail "gdb wrote no core of $name"
	}
}

# named CORE WANT...: heapwalk summary of CORE exits 4 with one line that
# says each WANT and never calls the program a glibc one.
named() {
	local core=$1 w
	shift
	hw "$T/out" "$T/err" "$core" summary
	expect_rc 4
	one_error_line "$T/err" "heapwalk ${core##*/} summary"
	for w; do
		has -F -- "$w" <"$T/err" ||
			fail "${core##*/}: the message does not say '$w': $(cat "$T/err")"
	done
	# (Only where it says what heapwalk does walk.)
	! sed "s/walks glibc's ptmalloc//" "$T/err" | has -i glibc ||
		fail "${core##*/}: called a glibc program: $(cat "$T/err")"
	say "${core##*/}: $(sed "s|.*core': ||" "$T/err" | cut -c1-110)"
}

ctx=$(nm "$T/ngs" | sed -n 's/^0*\([0-9a-f]*\) [bBdD] __malloc_context$/0x\1/p')
[ -n "$ctx" ] || fail "no __malloc_context in the static build's symbols"

# walked CORE WANT...: heapwalk summary of CORE walks mallocng (exit 0)
# and says each WANT.
walked() {
	local core=$1 w
	shift
	hw "$T/out" "$T/err" "$core" summary
	expect_rc 0
	has -F "allocator:               mallocng" <"$T/out" ||
		fail "${core##*/}: not walked as mallocng: $(head -n 3 "$T/out")"
	for w; do
		has -F -- "$w" <"$T/out" ||
			fail "${core##*/}: summary does not say '$w': $(grep -A3 context: "$T/out")"
	done
	say "${core##*/}: $(grep 'context:' "$T/out" | sed 's/^ *//')"
}

gcore_of ngs alloc
walked "$T/ngs.core" "context:               $ctx (by symbol __malloc_context)"
gcore_of ngs-stripped alloc
walked "$T/ngs-stripped.core" "context:               $ctx (by the secret from AT_RANDOM"
gcore_of ngd alloc
walked "$T/ngd.core" "-linux-musl/libc.so"
cp "$T/ngs" "$T/idle"
gcore_of idle idle
named "$T/idle.core" "context at $ctx" "is not set up"
gcore_of bump
named "$T/bump.core" "musl libc's bump allocator"

# oldmalloc: musl's own source (bookworm's musl 1.2.3, through the private
# apt configuration's deb-src line) built as --with-malloc=oldmalloc
# builds it -- src/malloc/oldmalloc/ in place of mallocng/, the rest of
# libc.a as Debian's -- linked into recognise1.c; named by its symbol,
# and stripped by its emptied bins.
if (
	me=t0480
	# shellcheck source=scripts/lib/debian-apt.sh
	. "$TOP/scripts/lib/debian-apt.sh"
	apt_private_init "$T/apt" bookworm amd64 with-deb-src >/dev/null 2>&1 &&
		apt_update && mkdir -p "$T/src" &&
		cd "$T/src" && aptc source --download-only musl
) && tar -C "$T/src" -xzf "$(ls "$T"/src/musl_*.orig.tar.gz)"; then
	m=$(ls -d "$T"/src/musl-1.*/)
	old=()
	for f in malloc malloc_usable_size aligned_alloc; do
		gcc -std=c99 -nostdinc -ffreestanding -D_XOPEN_SOURCE=700 -Os \
			-I"$m/arch/x86_64" -I"$m/arch/generic" -I"$m/src/include" \
			-I"$m/src/internal" -I/usr/include/x86_64-linux-musl \
			-I"$m/include" -c -o "$T/old-$f.o" "$m/src/malloc/oldmalloc/$f.c" ||
			fail "cannot build musl's oldmalloc/$f.c"
		old+=("$T/old-$f.o")
	done
	musl-gcc -O1 -g -static -o "$T/old" "$src/recognise1.c" "${old[@]}" ||
		fail "cannot link recognise1.c with oldmalloc"
	nm "$T/old" >"$T/old.nm"
	! grep -q ' __malloc_context$' "$T/old.nm" ||
		fail "the oldmalloc build still has mallocng's context"
	strip -o "$T/old-stripped" "$T/old"
	gcore_of old alloc
	named "$T/old.core" "musl libc's oldmalloc" "(by symbol __bin_chunk)"
	gcore_of old-stripped alloc
	named "$T/old-stripped.core" "musl libc's oldmalloc" "of its bins, emptied"
else
	say "oldmalloc: left out (no deb-src of musl from a Debian mirror here)"
fi

# Live: the dynamic build waits on a pipe the test holds open.
mkfifo "$T/in"
"$T/ngd" wait <"$T/in" >"$T/ready" &
pid=$!
exec 3>"$T/in"
for _ in $(seq 1 6000); do
	grep -q ready "$T/ready" 2>/dev/null && break
	sleep 0.01
done
grep -q ready "$T/ready" || { exec 3>&-; fail "the live program never got ready"; }
hw "$T/out" "$T/err" --pid "$pid" summary
expect_rc 0
state=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$pid/status")
exec 3>&-
wait "$pid" || fail "the live program did not exit 0 once its input closed"
[ "$state" != T ] && [ "$state" != t ] ||
	fail "--pid left the musl program stopped (state $state)"
has -F "allocator:               mallocng" <"$T/out" ||
	fail "--pid: not walked as mallocng: $(head -n 3 "$T/out") $(cat "$T/err")"
say "live: $(grep 'context:' "$T/out" | sed 's/^ *//')"

# Asked for by name where there is none (a glibc core), mallocng is said
# to be missing, as jemalloc and tcmalloc are; an unknown name's error
# lists it with the others.
dir=$(corpus_core bins1)
for kind in mallocng jemalloc tcmalloc; do
	hw "$T/k.out" "$T/k.err" --allocator "$kind" "$dir/core" summary
	expect_rc 4
	one_error_line "$T/k.err" "--allocator $kind on a glibc core"
	has -F "no $kind in the target" <"$T/k.err" ||
		fail "--allocator $kind on a glibc core: $(cat "$T/k.err")"
done
usage_error "unknown allocator 'bogus' (auto," --allocator bogus "$dir/core" summary
for kind in ptmalloc jemalloc tcmalloc mallocng; do
	has -F " $kind," <"$T/usage.err" ||
		fail "--allocator bogus: $kind not among the names: $(cat "$T/usage.err")"
done
say "--allocator mallocng, jemalloc, tcmalloc on a glibc core: each named missing; --allocator bogus lists all five"
