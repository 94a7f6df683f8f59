#!/bin/bash
# gdb's `heap` commands over qemu-user's gdbstub: an aarch64 program
# (glibc 2.36, Debian's arm64 libc6) run by `qemu-aarch64 -g PORT` on this
# x86_64 host, debugged by gdb-multiarch with `set sysroot` and `target
# remote` - the route to a device program without a device.  The stub
# has no /proc, so gdb gives no memory map: the plugin probes one.
# bins1 and threads8 in their live mode, stopped by gdb at the read()
# where they wait:
#  - `heap chunks --json` and `heap --json` agree with the program's own
#    truth, and the summary says the map was probed (once: the commands
#    after the first at the same stop take it again), names glibc 2.36 and
#    no made-up pid;
#  - after gdb detaches, the program is made to dump a core (qemu writes
#    the guest's); the text of `heap bins` (and for bins1 `heap chunks`
#    and `heap sizes`) equals the tool's on that core (the same heap).
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

for c in bins1 threads8; do
	# Each command reads the heap through the stub again (~5 MB/s):
	# the bigger program gets one text report.
	text=(bins chunks sizes)
	[ $c = bins1 ] || text=(bins)
	dir=$(variant_core glibc-2.36-arm64 "$c")
	sysroot=$(readlink -f "$dir/sysroot")
	run=$T/$c.run
	mkdir -p "$run"
	qemu_stub_start "$dir" "$sysroot" "$run" "$run/truth.txt"
	o=$T/$c
	GDB_HEAP_END=(-ex detach)
	gdb_heap "$o" gdb-multiarch -iex "set sysroot $sysroot" "$dir/prog" \
		-ex "target remote 127.0.0.1:$QEMU_PORT" -ex 'break read' \
		-ex continue -- "chunks --json" "--json" "" "${text[@]}"
	for ((i = 1; i <= 3 + ${#text[@]}; i++)); do
		[ "$(cat "$o.$i.rc")" = 0 ] || fail "$c: heap command $i: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
	done
	"$truthcmp" "$run/truth.txt" "$o.1" "$o.2" ||
		fail "$c over qemu's gdbstub: heap chunks/summary disagree with the truth"
	grep -q '"no memory map from gdb: ' "$o.2" ||
		fail "$c: the JSON summary does not say the map was probed"
	grep -q '^heapwalk: memory map probed (gdb gave none): ' "$o.3" ||
		fail "$c: the text summary does not say the map was probed"
	# All the commands ran at one stop: the first probed the map, the
	# others took it again.
	grep -q '^heapwalk: memory map probed (gdb gave none): .*as for the last command (the program has not run since)$' "$o.3" ||
		fail "$c: the map was probed again at the same stop: $(grep -m1 '^heapwalk: memory map' "$o.3")"
	# libc is a region of its own (its version string is found), and
	# qemu's "process 1" is not taken for a pid.
	grep -q '^allocator: *ptmalloc 2\.36 (aarch64)$' "$o.3" ||
		fail "$c: the summary does not name glibc 2.36: $(grep '^allocator' "$o.3")"
	grep -q '^target: *a process through gdb (pid unknown)' "$o.3" ||
		fail "$c: the summary's target: $(grep '^target:' "$o.3")"
	# gdb detached: the program is parked in read() again.  SIGABRT
	# makes qemu write the guest's core.
	kill_same ABRT "$QEMU_PID" "$QEMU_BIRTH" || fail "$c: qemu-aarch64 is gone after gdb"
	{ wait "$QEMU_PID"; } 2>/dev/null || true
	QEMU_PID=
	exec 7>&-
	core=$(find "$run" -maxdepth 1 -name 'qemu_prog_*.core' | sed -n 1,1p)
	[ -n "$core" ] || fail "$c: qemu wrote no core after gdb detached ($(cat "$run/out"))"
	i=4
	for cmd in "${text[@]}"; do
		hw "$o.cli.$cmd" "$o.cli.$cmd.err" --sysroot "$sysroot" --exe "$dir/prog" "$core" "$cmd"
		expect_rc 0
		grep -v '^heapwalk: memory map probed' "$o.$i" >"$o.$i.text"
		same_as_cli "$o.$i.text" "$o.cli.$cmd" "$c over qemu's gdbstub: heap $cmd"
		i=$((i + 1))
	done
	rm -f "$core"
	say "aarch64 $c under qemu-aarch64 -g (gdb-multiarch, probed map): chunks and summary agree with the truth; ${text[*]} equal the tool's on the guest's core"
done
