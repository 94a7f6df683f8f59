#!/bin/bash
# gdb's `heap` commands on the "crashed device" route: a core of an
# aarch64 program (glibc 2.36, Debian's arm64 libc6, run under
# qemu-aarch64: no NT_FILE, no thread pointer) read on this x86_64 host by
# gdb-multiarch with `set sysroot` to the device's files.  bins1 and
# threads8: chunks and summary agree with the program's own truth, and
# the text reports (bins too) equal the tool's with --sysroot.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
need_gdb gdb-multiarch
truthcmp=$(tool truthcmp)

for c in bins1 threads8; do
	dir=$(variant_core glibc-2.36-arm64 "$c")
	sysroot=$(readlink -f "$dir/sysroot")
	o=$T/$c
	gdb_heap "$o" gdb-multiarch -iex "set sysroot $sysroot" "$dir/prog" \
		"$dir/core" -- "chunks --json" "--json" "bins --json" "" bins \
		arenas check
	for i in 1 2 3 4 5 6 7; do
		[ "$(cat "$o.$i.rc")" = 0 ] || fail "$c: heap command $i: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
	done
	"$truthcmp" "$dir/truth.txt" "$o.1" "$o.2" ||
		fail "$c: gdb-multiarch's heap chunks/summary disagree with the truth"
	# (bins are not held against the truth: a qemu core has no thread
	# pointers, so its tcaches have no owner to compare; the tool's
	# bins, which t0320 checks, must be the same instead)
	grep -q '"kind":"tcache"' "$o.3" || fail "$c: heap bins --json lists no tcache"
	i=4
	for cmd in summary bins arenas check; do
		hw "$o.cli.$cmd" "$o.cli.$cmd.err" --sysroot "$sysroot" "$dir/core" "$cmd"
		expect_rc 0
		same_as_cli "$o.$i" "$o.cli.$cmd" "aarch64 $c: heap $cmd"
		i=$((i + 1))
	done
	say "aarch64 $c (qemu-user core, gdb-multiarch, set sysroot): chunks and summary agree with the truth; summary, bins, arenas and check equal the tool's"
done
