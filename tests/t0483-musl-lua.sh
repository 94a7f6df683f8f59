#!/bin/bash
# A real program nobody here wrote on musl's mallocng: Lua 5.4 (Debian
# bookworm's lua5.4 source, fetched through the private apt configuration
# with its deb-src line) built static with Debian's musl-gcc, and for
# aarch64 with bookworm's arm64 musl (the t0482 sysroot).  A Lua script
# builds and drops tables, strings and closures, collects twice, writes
# the bytes its allocator holds (collectgarbage("count"): the sum of the
# sizes Lua asked realloc for, which mallocng's malloc_usable_size gives
# back exactly) without allocating, then waits (x86_64: on stdin, read
# with --pid and gcore's core) or has its qemu killed by SIGABRT
# (aarch64: qemu's guest core).  heapwalk's bytes in use must be Lua's
# figure to the byte, nothing lost, `check` clean.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd musl-gcc gdb gcore apt-get dpkg-deb

# ---- Lua, fetched and built once under $CORPUS/musl-lua ----------------
cache=$CORPUS/musl-lua
mkdir -p "$cache"
if [ ! -x "$cache/lua" ] || [ "$0" -nt "$cache/lua" ]; then
	(
		me=t0483
		# shellcheck source=scripts/lib/debian-apt.sh
		. "$TOP/scripts/lib/debian-apt.sh"
		rc=0
		apt_private_init "$T/apt" bookworm amd64 with-deb-src || rc=$?
		[ $rc = 0 ] || exit 77
		apt_update || exit 77
		mkdir -p "$T/src"
		(cd "$T/src" && aptc source --download-only lua5.4) || exit 77
	) || skip "cannot fetch bookworm's lua5.4 source here (no Debian mirror)"
	tar -C "$T/src" -xzf "$(ls "$T"/src/lua5.4_*.orig.tar.gz)" ||
		fail "cannot unpack lua5.4's source"
	luasrc=$(ls -d "$T"/src/lua-5.4*/src)
	cp -r "$luasrc" "$cache/src.tmp" && rm -rf "$cache/src" &&
		mv "$cache/src.tmp" "$cache/src"
	srcs=()
	for f in "$cache"/src/*.c; do
		case $f in */luac.c) ;; *) srcs+=("$f") ;; esac
	done
	musl-gcc -std=gnu99 -O2 -g -DLUA_USE_POSIX -static -o "$cache/lua.tmp" \
		"${srcs[@]}" -lm || fail "cannot build Lua with musl-gcc"
	mv -f "$cache/lua.tmp" "$cache/lua"
fi

script='local t = {}
for i = 1, 20000 do
  t[i] = { name = "item" .. i, data = string.rep("x", i % 300), n = i }
end
for i = 1, 20000, 3 do t[i] = nil end
local f = {}
for i = 1, 500 do f[i] = function() return i end end
local big = string.rep("y", 300000)
collectgarbage("collect")
collectgarbage("collect")
-- (A number is written with fprintf: no allocation.)
io.stdout:write(math.floor(collectgarbage("count") * 1024 + 0.5), "\n")
io.stdout:flush()'

# used TARGET...: heapwalk's bytes in use of TARGET.
used() {
	hw "$T/sum" "$T/sum.err" --json "$@" summary
	expect_rc 0
	grep -q '"allocator":"mallocng"' "$T/sum" ||
		fail "not walked as mallocng: $(head -c 200 "$T/sum")"
	grep -o '"used":{"count":[0-9]*,"bytes":[0-9]*' "$T/sum" | sed -n 1,1p |
		sed 's/.*"bytes"://'
}
clean() {  # clean WHAT TARGET...: no block lost, check finds nothing
	local what=$1
	shift
	hw "$T/leaks" "$T/leaks.err" "$@" leaks
	expect_rc 0
	has "^definitely lost: *0 blocks" <"$T/leaks" &&
		has "^possibly lost: *0 blocks" <"$T/leaks" ||
		fail "$what: Lua holds every block, leaks says: $(sed -n 2,4p "$T/leaks")"
	hw "$T/check" "$T/check.err" "$@" check
	expect_rc 0
}

# ---- x86_64: live, then gcore's core -------------------------------------
mkfifo "$T/in"
# (Each chunk is compiled before it runs: what waits is in the same one.)
(exec "$cache/lua" -e "$script
io.read()" <"$T/in" >"$T/out") &
pid=$!
exec 3>"$T/in"
for _ in $(seq 1 6000); do
	[ -s "$T/out" ] && break
	sleep 0.01
done
want=$(head -n 1 "$T/out")
[ -n "$want" ] || fail "Lua wrote no count"
got=$(used --pid "$pid")
[ "$got" = "$want" ] || fail "live: heapwalk counts $got bytes in use, Lua $want"
clean live --pid "$pid"
timeout -k 5 120 gcore -o "$T/lua.core" "$pid" >"$T/gcore.log" 2>&1 ||
	fail "gcore failed: $(tail -n 2 "$T/gcore.log")"
exec 3>&-
wait "$pid" || fail "Lua did not exit cleanly"
got=$(used "$T/lua.core.$pid")
[ "$got" = "$want" ] || fail "core: heapwalk counts $got bytes in use, Lua $want"
clean core "$T/lua.core.$pid"
say "x86_64: Lua holds $want bytes; heapwalk counts the same live and in gcore's core; nothing lost"

# ---- aarch64, under qemu ------------------------------------------------
sysroot=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}/musl-1.2.3-arm64
rc=0
"$TOP/scripts/corpus/sysroot.sh" musl-1.2.3-arm64 "$sysroot" || rc=$?
[ $rc = 0 ] || { say "aarch64: skipped (no musl-1.2.3-arm64 sysroot: exit $rc)"; exit 0; }
need_cmd qemu-aarch64 aarch64-linux-gnu-gcc
lib=$sysroot/usr/lib/aarch64-linux-musl
if [ ! -x "$cache/lua-aarch64" ] || [ "$cache/lua" -nt "$cache/lua-aarch64" ]; then
	sed -e "s|/usr/include/aarch64-linux-musl|$sysroot/usr/include/aarch64-linux-musl|g" \
		-e "s|/usr/lib/aarch64-linux-musl|$lib|g" "$lib/musl-gcc.specs" >"$T/musl.specs"
	srcs=()
	for f in "$cache"/src/*.c; do
		case $f in */luac.c) ;; *) srcs+=("$f") ;; esac
	done
	aarch64-linux-gnu-gcc -specs "$T/musl.specs" -std=gnu99 -O2 -g \
		-DLUA_USE_POSIX -static -o "$cache/lua-aarch64.tmp" "${srcs[@]}" -lm ||
		fail "cannot build Lua for aarch64"
	mv -f "$cache/lua-aarch64.tmp" "$cache/lua-aarch64"
fi
mkdir -p "$T/a64"
# The guest's shell sends its parent (the guest, in qemu) SIGABRT; qemu
# writes the guest's core.  (The outer subshell takes the "Aborted".)
( (cd "$T/a64" && ulimit -c unlimited &&
   exec qemu-aarch64 "$cache/lua-aarch64" -e "$script
os.execute('kill -ABRT \$PPID')") >"$T/a64/out" 2>&1 || :) 2>/dev/null  # $PPID: pid just read, by the guest's shell
core=$(find "$T/a64" -maxdepth 1 -name 'qemu_*.core' | sed -n 1,1p)
[ -n "$core" ] || skip "qemu-aarch64 wrote no guest core (ulimit -c?)"
want=$(head -n 1 "$T/a64/out")
got=$(used --exe "$cache/lua-aarch64" "$core")
[ "$got" = "$want" ] || fail "aarch64: heapwalk counts $got bytes in use, Lua $want"
clean aarch64 --exe "$cache/lua-aarch64" "$core"
say "aarch64: Lua holds $want bytes; heapwalk counts the same in qemu's core; nothing lost"
