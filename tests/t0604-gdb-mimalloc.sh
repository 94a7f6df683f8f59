#!/bin/bash
# gdb's `heap` commands (the plugin, no Python) on mimalloc: the program
# of t0490 (corpora/mimalloc/mitruth1.c, two workers and a thread that
# exited) linked with Debian's libmimalloc.so.2 (2.0.9), and with sid's
# libmimalloc.so.3 (3.6.0: its chunk maps read through gdb's memory;
# scripts/corpus/mimalloc-libs.sh), each core written by gdb's gcore;
# in gdb on each core, every command prints what the tool
# prints on the same core (the tool's reports are held to the program's
# record in t0490), `heap chunks --json` included.
# shellcheck source=tests/mimalloc-lib.sh
. "$(dirname "$0")/mimalloc-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
need_cmd gdb
[ -f /usr/include/mimalloc.h ] || skip "libmimalloc-dev is not installed (make deps)"

gcc -std=c11 -O1 -g -pthread -DMI_HAVE_HEADER -o "$T/td" "$MI_PROG" -lmimalloc ||
	fail "cannot build mitruth1 against libmimalloc"
mi3=$(mi_libs mimalloc-3.6.0-amd64)
gcc -std=c11 -O1 -g -pthread -DMI_HAVE_HEADER -I "$mi3/usr/include" \
	-o "$T/td3" "$MI_PROG" -L "$mi3/usr/lib/x86_64-linux-gnu" \
	"-Wl,-rpath=$mi3/usr/lib/x86_64-linux-gnu" -lmimalloc ||
	fail "cannot build mitruth1 against mimalloc 3.6.0"

# same_in_gdb DIR PROG VERSION: PROG's core, and every command in gdb
# against the tool.
same_in_gdb() {
	local d=$1 prog=$2 version=$3 addr i c cmds
	mkdir -p "$d"
	(cd "$d" && gdb -batch -nx -ex run -ex "gcore $d/core" \
		--args "$prog" 2 abort) >"$d/gdb.out" 2>&1 || true
	[ -s "$d/core" ] || {
		tail -n 20 "$d/gdb.out" >&2
		fail "gdb wrote no core of $prog"
	}
	addr=$(awk '$1 == "alloc" { print $2; exit }' "$d/truth.txt")
	cmds=(summary arenas bins chunks "chunks --json" sizes check frag
	      "chunks --free" "bins --json" "chunk $addr" "--json chunk $addr"
	      "leaks" mp "bins --list" tcache)
	gdb_heap "$d/g" gdb "$prog" "$d/core" -- "${cmds[@]}"
	i=0
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		[ "$(cat "$d/g.$i.rc")" = 0 ] || fail "$version: heap $c: status $(cat "$d/g.$i.rc")"
		# shellcheck disable=SC2086 # c holds the command and its words
		hw "$d/cli.$i" "$d/cli.$i.err" "$d/core" $c
		expect_rc 0
		# (leaks' roots: gdb gives fewer registers than the core's
		# notes hold; the blocks found must be the same.)
		[ "$c" != leaks ] || sed -i '/^roots: /d' "$d/g.$i" "$d/cli.$i"
		same_as_cli "$d/g.$i" "$d/cli.$i" "$version: heap $c"
	done
	has "allocator:  *mimalloc $version" "$d/g.1" ||
		fail "gdb's heap summary is not mimalloc $version's: $(head -n 2 "$d/g.1")"
	say "$version: ${#cmds[@]} heap commands in gdb print what the tool prints ($(grep -c . "$d/g.5") blocks)"
}
same_in_gdb "$T/d" "$T/td" 2.0.9
same_in_gdb "$T/d3" "$T/td3" 3.6.0
