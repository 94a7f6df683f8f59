#!/bin/bash
# The device route (qemu-aarch64 -g, gdb-multiarch with `set sysroot` and
# `file`) with aarch64 programs linked as programs usually are: -O1, a
# 2.3 MiB .bss beside 64 KiB-aligned segments, as a PIE
# (glibc-2.36-arm64-pie), at a fixed address (-nopie) and statically
# linked (glibc-2.36-arm64-static, where no link_map exists: the
# executable's program headers give its mappings).  t0625 has the -O0 -no-pie layout of the corpus.  For each:
#  - gdb stopped at `main` (the PIE's malloc never called: main_arena as
#    loaded) has `heap check` find nothing, status 0;
#  - at the read() where the live program waits, `heap chunks --json` and
#    `heap --json` agree with the program's own truth, status 0, and no
#    error asks for a CLI option;
#  - the qemu-user core of the same program, run as `./prog` (AT_EXECFN
#    relative), is read with --sysroot alone from another directory (the
#    executable is found beside the core) with backtrace symbols, and
#    from a copy of the core where no prog is at hand "core lacks:" says
#    the executable is missing.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
need_gdb gdb-multiarch
need_cmd qemu-aarch64
truthcmp=$(tool truthcmp)
on_exit qemu_stub_stop

for layout in pie nopie static; do
	dir=$(variant_core "glibc-2.36-arm64-$layout" bins1)
	sysroot=$(readlink -f "$dir/sysroot")
	run=$T/$layout.run
	mkdir -p "$run"
	qemu_stub_start "$dir" "$sysroot" "$run" "$run/truth.txt"
	o=$T/$layout
	GDB_HEAP_END=(-ex kill)
	GDB_HEAP_FIRST=2
	heap_ex 1 check
	gdb_heap "$o" gdb-multiarch -iex "set sysroot $sysroot" \
		-ex "file $dir/prog" -ex "target remote 127.0.0.1:$QEMU_PORT" \
		-ex 'break main' -ex continue "${HEAP_EX[@]}" \
		-ex 'break read' -ex continue -- "chunks --json" "--json"
	grep -Eq '^[0-9]+ chunks? checked, 0 problems found$' "$o.1" ||
		fail "$layout at main (malloc never called): $(tail -n 3 "$o.1")"
	qemu_stub_stop
	exec 7>&-
	for i in 1 2 3; do
		[ "$(cat "$o.$i.rc")" = 0 ] ||
			fail "$layout: heap command $i: status $(cat "$o.$i.rc"): $(head -c 400 "$o.$i")"
		! grep -q -- '--exe\|--sysroot' "$o.$i" ||
			fail "$layout: heap command $i asks for a CLI option: $(grep -- '--exe\|--sysroot' "$o.$i" | sed -n 1,2p)"
	done
	"$truthcmp" "$run/truth.txt" "$o.2" "$o.3" ||
		fail "$layout over qemu's gdbstub: heap chunks/summary disagree with the truth"

	# The core of `./prog`, made in a directory of its own.
	crun=$T/$layout.crash
	mkdir -p "$crun"
	cp "$dir/prog" "$crun/prog"
	# qemu writes the guest's core itself; a directory named like a
	# plain core_pattern keeps the kernel from writing qemu's own.
	pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo core)
	case $pattern in
	'|'* | /* | *%* | */*) ;;
	*) mkdir -p "$crun/$pattern" ;;
	esac
	# It aborts (bash says so): the guest's core is the point.
	( (
		cd "$crun"
		ulimit -c unlimited 2>/dev/null || true
		exec qemu-aarch64 -L "$sysroot" ./prog "$crun/truth.txt" \
			>"$crun/out" 2>&1 </dev/null
	) ) 2>/dev/null || true
	core=$(find "$crun" -maxdepth 1 -name 'qemu_prog_*.core' | sed -n 1,1p)
	[ -n "$core" ] || fail "$layout: qemu wrote no core of ./prog ($(cat "$crun/out"))"
	mkdir -p "$T/elsewhere"
	(cd "$T/elsewhere" && "$HEAPWALK" --sysroot "$sysroot" "$core") \
		>"$o.core" 2>"$o.core.err" ||
		fail "$layout: the core of ./prog: $(cat "$o.core.err")"
	grep -q "^target: .*(core of $crun/prog)\$" "$o.core" ||
		fail "$layout: the executable beside the core was not taken: $(grep '^target:' "$o.core")"
	grep -Eq '^  #[0-9]+ +0x[0-9a-f]+ +main\+' "$o.core" ||
		fail "$layout: no main in the backtrace: $(sed -n '/^backtrace/,/^threads/p' "$o.core")"
	(cd "$T/elsewhere" && "$HEAPWALK" --sysroot "$sysroot" "$core" chunks --json) >"$o.core.chunks"
	(cd "$T/elsewhere" && "$HEAPWALK" --sysroot "$sysroot" "$core" --json) >"$o.core.json"
	"$truthcmp" "$crun/truth.txt" "$o.core.chunks" "$o.core.json" ||
		fail "$layout: the core of ./prog disagrees with its truth"
	# Without the executable: said, not silently guessed around.
	mkdir -p "$T/alone"
	cp "$core" "$T/alone/core"
	rc=0
	(cd "$T/elsewhere" && "$HEAPWALK" --sysroot "$sysroot" "$T/alone/core") \
		>"$o.alone" 2>"$o.alone.err" || rc=$?
	grep -q "the executable './prog' (AT_EXECFN) is not at hand" "$o.alone" "$o.alone.err" ||
		fail "$layout: nothing says the executable is missing (status $rc): $(head -c 400 "$o.alone.err") $(grep -A3 'lacks:' "$o.alone")"
	say "aarch64 bins1 -O1 $layout with a 2.3 MiB .bss: gdb-multiarch over qemu's stub at main (empty heap) and at read (the truth); the qemu core of ./prog found beside the core, and its absence said"
done
