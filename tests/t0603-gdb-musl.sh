#!/bin/bash
# gdb's `heap` commands (the plugin, no Python) on musl's mallocng: a
# static and a dynamic build of corpora/musl/ngtruth1.c (eight threads),
# their cores written by gdb's gcore; in gdb on each core, every command
# prints what the tool prints on the same core (the tool's reports are
# checked against the program's record in t0481), `heap chunks --json`
# included.
# shellcheck source=tests/musl-lib.sh
. "$(dirname "$0")/musl-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
need_cmd musl-gcc gdb

src=$TOP/corpora/musl/ngtruth1.c
musl-gcc -std=c11 -O1 -g -static -DNG_STATIC -o "$T/ngs" "$src" ||
	fail "musl-gcc -static failed"
musl-gcc -std=c11 -O1 -g -o "$T/ngd" "$src" || fail "musl-gcc failed"

for bin in ngs ngd; do
	d=$T/$bin.d
	mkdir -p "$d"
	(cd "$d" && gdb -batch -nx -ex run -ex "gcore $d/core" \
		--args "$T/$bin" 8 abort) >"$d/gdb.out" 2>&1 || true
	[ -s "$d/core" ] || {
		tail -n 20 "$d/gdb.out" >&2
		fail "$bin: gdb wrote no core"
	}
	addr=$(awk '$1 == "alloc" { print $2; exit }' "$d/truth.txt")
	cmds=(summary arenas bins chunks "chunks --json" sizes check frag
	      "chunks --free" "bins --json" "chunk $addr" "--json chunk $addr"
	      "leaks" mp "bins --list" tcache)
	gdb_heap "$d/g" gdb "$T/$bin" "$d/core" -- "${cmds[@]}"
	i=0
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		[ "$(cat "$d/g.$i.rc")" = 0 ] || fail "$bin: heap $c: status $(cat "$d/g.$i.rc")"
		# shellcheck disable=SC2086 # c holds the command and its words
		hw "$d/cli.$i" "$d/cli.$i.err" "$d/core" $c
		expect_rc 0
		# (leaks' roots: gdb gives fewer registers than the core's
		# notes hold; the blocks found must be the same.)
		[ "$c" != leaks ] || sed -i '/^roots: /d' "$d/g.$i" "$d/cli.$i"
		# (A frame in musl's libc.so: the tool names the module as
		# the dynamic linker's path, ld-musl-x86_64.so.1, gdb by the
		# file that link leads to, libc.so.)
		sed -i 's/(ld-musl-x86_64\.so\.1+/(libc.so+/' "$d/g.$i" "$d/cli.$i"
		same_as_cli "$d/g.$i" "$d/cli.$i" "$bin: heap $c"
	done
	grep -q "allocator:  *mallocng" "$d/g.1" ||
		fail "$bin: gdb's heap summary is not mallocng's: $(head -n 2 "$d/g.1")"
	say "$bin: ${#cmds[@]} heap commands in gdb print what the tool prints ($(grep -c . "$d/g.5") chunks)"
done
