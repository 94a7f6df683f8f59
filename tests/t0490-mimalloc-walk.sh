#!/bin/bash
# mimalloc 2.0.9 walked, against the truth its program records:
# corpora/mimalloc/mitruth1.c (workers allocating across small, medium,
# large and huge pages, aligned and reallocated blocks, frees by the
# owner and by other threads, a thread that exits before the core, hidden
# pointers) linked with Debian bookworm's libmimalloc.so.2 (stripped;
# libmimalloc-dev, scripts/setup-deps.sh), the program stripped too; and
# with bookworm's mimalloc source compiled in (src/static.c, release,
# scripts/corpus/mimalloc-libs.sh mimalloc-2.0.9-src), unstripped,
# stripped and secure (MI_SECURE=4: guard pages, encoded free lists).
# One worker and eight, each with the exited thread; most record
# mimalloc's own view of every block in use (mi_heap_visit_blocks:
# `visit`), which makes the set of blocks in use exact, the C library's
# own mallocs among them; one without it (no list collected: the frees
# stay on local_free and xthread_free).  Cores by the kernel where
# core_pattern names a plain file, else by gdb's gcore.
# Each truth is first checked by itself (mitruthcmp --check-truth), and
# for the unstripped static builds against gdb's own walk of mimalloc's
# structures (scripts/corpus/mi-oracle.py, from the DWARF types: every
# segment, page, list, the heaps' delayed lists, encoded lists decoded),
# which also proves the comparison; then heapwalk is held to it
# (tests/mimalloc-lib.sh's check, tests/tools/mitruthcmp's head says
# each check): every block in use at its block, of its page's block
# size, freed ones on the list the free put them on, address order, the
# exact set in use, each page's used count, leaks exactly the hidden
# blocks, summary mimalloc, no findings, `check` clean.
# Then --pid on the dynamic build (eight threads, the program left
# running, untraced and unstopped), and a damaged core: a block on a
# page's free list whose next pointer is overwritten (a copy of the
# eight-thread dynamic core): `check` exits 1 and names the block, every
# block the program holds still as recorded.
# shellcheck source=tests/mimalloc-lib.sh
. "$(dirname "$0")/mimalloc-lib.sh"
need_heapwalk
need_cmd gcc strip
if ! [ -f /usr/include/mimalloc.h ] || ! [ -e /usr/lib/x86_64-linux-gnu/libmimalloc.so ]; then
	skip "libmimalloc-dev is not installed (make deps)"
fi

cc=(gcc -std=c11 -O1 -g -pthread -DMI_HAVE_HEADER)
"${cc[@]}" -o "$T/td" "$MI_PROG" -lmimalloc || fail "cannot build mitruth1 against libmimalloc"
strip -o "$T/tds" "$T/td"

# The static builds, when bookworm's source can be had (network once).
src=$MI_CACHE/mimalloc-2.0.9-src
rc=0
"$TOP/scripts/corpus/mimalloc-libs.sh" mimalloc-2.0.9-src "$src" || rc=$?
static=false
if [ $rc = 0 ]; then
	mi_static_objects "$src" "$T/mi"
	"${cc[@]}" -I "$src/include" -o "$T/ts" "$MI_PROG" "$T/mi.o" ||
		fail "cannot build mitruth1 with mimalloc compiled in"
	strip -o "$T/tss" "$T/ts"
	"${cc[@]}" -I "$src/include" -o "$T/tsec" "$MI_PROG" "$T/mi-secure.o" ||
		fail "cannot build mitruth1 with the secure mimalloc compiled in"
	static=true
elif [ $rc = 77 ]; then
	say "static builds left out: no mimalloc 2.0.9 source here"
else
	fail "scripts/corpus/mimalloc-libs.sh mimalloc-2.0.9-src failed"
fi

# Dynamic: one worker (and the exited thread), eight; eight without the
# visit (frees on local_free and xthread_free as the program left them);
# the stripped program, one worker.
mi_core d1 "$T/td" 1 visit,mistats
check d1 "$T/d1/core"
mi_core d8 "$T/td" 8 visit
check d8 "$T/d8/core"
mi_core da8 "$T/td" 8 abort
check da8 "$T/da8/core"
mi_core ds1 "$T/tds" 1 visit
check ds1 "$T/ds1/core"

if $static; then
	mi_core s1 "$T/ts" 1 visit
	mi_oracle s1 "$T/ts"
	check s1 "$T/s1/core"
	mi_core sa8 "$T/ts" 8 abort
	mi_oracle sa8 "$T/ts"
	check sa8 "$T/sa8/core"
	mi_core ss8 "$T/tss" 8 visit
	check ss8 "$T/ss8/core"
	mi_core sec8 "$T/tsec" 8 visit
	mi_oracle sec8 "$T/tsec"
	check sec8 "$T/sec8/core"
fi

# Damage, in a copy of d8's core: a block its owner freed before the
# visit (which moved it to its page's free list) in a page still in use;
# its first word, the list's next pointer, made 0x4141414141414141 (no
# block of any page).  `check` exits 1 and names the block; past the
# damage every block the program holds is as recorded.
victim=$(awk '
	function num(h,    i, v) {
		h = tolower(h); sub(/^0x/, "", h); v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	$1 == "prog" { workers = $3 }
	$1 == "area" && $7 > 0 { n++; lo[n] = num($2); hi[n] = num($2) + $5 }
	$1 == "freed" && $4 == $5 && $6 == 2 && $4 < workers { f[++nf] = $2 }
	END {
		for (i = 1; i <= nf; i++) {
			a = num(f[i])
			for (k = 1; k <= n; k++)
				if (lo[k] <= a && a < hi[k]) { print f[i]; exit }
		}
	}' "$T/d8/truth.txt")
[ -n "$victim" ] || fail "d8: no block freed by its owner in a page in use (the truth?)"
mkdir -p "$T/dmg"
cp "$T/d8/truth.txt" "$T/dmg/truth.txt"
cp --sparse=always "$T/d8/core" "$T/dmg/core"
"$(tool corepatch)" "$T/dmg/core" "$victim" 4141414141414141 >/dev/null ||
	fail "cannot patch the free block at $victim"
if [ -z "${MI_TRUTH_ONLY:-}" ]; then
	hw "$T/dmg/check.out" "$T/dmg/check.out.err" "$T/dmg/core" check
	expect_rc 1
	has -i -e "$(printf '0x%016x' "$victim")" -e "$(printf '0x%x\\b' "$victim")" <"$T/dmg/check.out" ||
		fail "dmg: check does not name the damaged free block $victim: $(head -n 5 "$T/dmg/check.out")"
	say "dmg: check names $victim: $(grep -i -m 1 "$(printf '%x' "$victim")" "$T/dmg/check.out")"
fi
DAMAGED=1 check dmg "$T/dmg/core"

# Live: the dynamic build, eight threads, waiting on a pipe the test
# holds open; left running, untraced and unstopped.
mi_live "$T/td" 8
mi_truth_only_end
