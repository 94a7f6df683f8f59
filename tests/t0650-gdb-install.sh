#!/bin/bash
# `make install` puts the tool and the gdb plugin where one line loads
# them, and `make uninstall` takes them away again:
#  - PREFIX=$T/prefix: the installed script names the installed reader by
#    its absolute path (whatever gdb's jit-reader-directory is); sourced
#    from there in gdb, `heap` on the bins1 core agrees with the program's
#    truth and `heap bins` prints what the installed tool prints;
#  - DESTDIR staging: the files land under DESTDIR, and the script inside
#    names the final paths, not DESTDIR's;
#  - uninstall leaves nothing of ours behind in either.
# (This builds the optimised build/heapwalk, which `make check` does not
# need otherwise.)
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_plugin
need_cmd make make
truthcmp=$(tool truthcmp)
dir=$(corpus_core bins1)

prefix=$T/prefix
make -C "$TOP" --no-print-directory install PREFIX="$prefix" >"$T/install.log" 2>&1 ||
	fail "make install PREFIX=$prefix: $(tail -n 5 "$T/install.log")"
script=$prefix/share/heapwalk/heapwalk.gdb
for f in "$prefix/bin/heapwalk" "$prefix/lib/heapwalk/heapwalk-gdb.so" "$script"; do
	[ -f "$f" ] || fail "make install did not install $f"
done
grep -qx "  jit-reader-load $prefix/lib/heapwalk/heapwalk-gdb.so" "$script" ||
	fail "the installed script does not load the installed reader: $(grep jit-reader-load "$script")"

# The installed plugin, from its one line, in a gdb whose JIT directory
# is elsewhere.
GDB_SCRIPT=$script
o=$T/inst
gdb_heap "$o" gdb -iex 'set jit-reader-directory /nonexistent' "$dir/prog" "$dir/core" \
	-- "chunks --json" "--json" bins
for i in 1 2 3; do
	[ "$(cat "$o.$i.rc")" = 0 ] || fail "installed plugin: heap command $i: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
done
"$truthcmp" "$dir/truth.txt" "$o.1" "$o.2" ||
	fail "installed plugin: heap chunks/summary disagree with the truth"
"$prefix/bin/heapwalk" "$dir/core" bins >"$o.cli" 2>"$o.cli.err" ||
	fail "the installed heapwalk: $(head -n 3 "$o.cli.err")"
same_as_cli "$o.3" "$o.cli" "installed plugin: heap bins"

# Staged: files under DESTDIR, paths inside without it.
dest=$T/dest
make -C "$TOP" --no-print-directory install DESTDIR="$dest" PREFIX=/opt/hw \
	>"$T/stage.log" 2>&1 || fail "make install DESTDIR=$dest: $(tail -n 5 "$T/stage.log")"
staged=$dest/opt/hw/share/heapwalk/heapwalk.gdb
[ -f "$staged" ] && [ -x "$dest/opt/hw/bin/heapwalk" ] &&
	[ -f "$dest/opt/hw/lib/heapwalk/heapwalk-gdb.so" ] ||
	fail "make install DESTDIR: files missing under $dest/opt/hw"
grep -qx '  jit-reader-load /opt/hw/lib/heapwalk/heapwalk-gdb.so' "$staged" ||
	fail "the staged script names $(grep jit-reader-load "$staged")"
if grep -q "$dest" "$staged"; then
	fail "the staged script names the staging directory"
fi

for args in "PREFIX=$prefix" "DESTDIR=$dest PREFIX=/opt/hw"; do
	# shellcheck disable=SC2086 # two make variables
	make -C "$TOP" --no-print-directory uninstall $args >"$T/uninstall.log" 2>&1 ||
		fail "make uninstall $args: $(tail -n 5 "$T/uninstall.log")"
done
left=$(find "$prefix" "$dest" -type f | sed -n 1,5p)
[ -z "$left" ] || fail "make uninstall left: $left"
say "make install (PREFIX and DESTDIR): the installed script loads the installed reader; heap agrees with the truth, heap bins with the installed tool; uninstall removes it all"
