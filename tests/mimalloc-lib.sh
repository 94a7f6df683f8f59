# shellcheck shell=bash
# tests/mimalloc-lib.sh - sourced by the mimalloc tests (t0490-t0492):
# corpora/mimalloc/mitruth1.c built against a mimalloc, its truth and
# core made, and heapwalk's reports of the core held to that truth
# (tests/tools/mitruthcmp).
# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shellcheck disable=SC2034 # MI_PROG is for the tests
MI_PROG=$TOP/corpora/mimalloc/mitruth1.c
MI_CACHE=${HEAPWALK_MIMALLOC:-$TOP/build/mimalloc}

# mi_libs VARIANT: scripts/corpus/mimalloc-libs.sh's VARIANT, made once
# under $MI_CACHE (network the first time); prints its directory.
# Skips when this machine cannot make it (no mirror, another version).
mi_libs() {
	local dir=$MI_CACHE/$1 rc=0
	mkdir -p "$MI_CACHE"
	"$TOP/scripts/corpus/mimalloc-libs.sh" "$1" "$dir" || rc=$?
	case $rc in
	0) echo "$dir" ;;
	77) skip "cannot make $1 here (scripts/corpus/mimalloc-libs.sh says why above)" ;;
	*) fail "scripts/corpus/mimalloc-libs.sh $1 failed" ;;
	esac
}

# mi_static_objects SRCDIR OUT: mimalloc's src/static.c of the source
# tree SRCDIR compiled as its CMake build compiles the library for a
# static link that takes malloc over (-DMI_MALLOC_OVERRIDE), release
# (-DNDEBUG: no assertions, no padding, plain free lists), -O2, with
# debug info (for scripts/corpus/mi-oracle.py): OUT.o; and the secure
# one (-DMI_SECURE=4: guard pages, encoded free lists, randomised free
# list order): OUT-secure.o.
mi_static_objects() {
	local src=$1 out=$2
	local f=(-O2 -g -DNDEBUG -DMI_MALLOC_OVERRIDE -DMI_STATIC_LIB
		-fvisibility=hidden -ftls-model=initial-exec -fno-builtin-malloc
		-I "$src/include")
	gcc "${f[@]}" -c -o "$out.o" "$src/src/static.c" ||
		fail "cannot compile mimalloc's src/static.c"
	gcc "${f[@]}" -DMI_SECURE=4 -c -o "$out-secure.o" "$src/src/static.c" ||
		fail "cannot compile mimalloc's src/static.c with MI_SECURE=4"
}

# mi_cross_build OUT MIDIR SYSROOT: corpora/mimalloc/mitruth1.c for
# aarch64 against the mimalloc unpacked in MIDIR (mi_libs) and the
# glibc-2.36-arm64 sysroot SYSROOT, -no-pie, the library found by RPATH.
mi_cross_build() {
	local cc=aarch64-linux-gnu-gcc milib=$2/usr/lib/aarch64-linux-gnu
	local libdir=$3/usr/lib/aarch64-linux-gnu
	$cc -nostdinc -isystem "$($cc -print-file-name=include)" \
		-isystem "$3/usr/include/aarch64-linux-gnu" -isystem "$3/usr/include" \
		--sysroot="$3" -B"$libdir/" -L"$libdir" \
		-std=c11 -O1 -g -pthread -DMI_HAVE_HEADER -I "$2/usr/include" \
		-o "$1" "$MI_PROG" -L "$milib" "-Wl,-rpath=$milib" -lmimalloc -no-pie ||
		fail "cannot cross-build mitruth1 against the arm64 libmimalloc of $2"
}

# mi_core NAME BIN THREADS MODE: run BIN THREADS MODE in $T/NAME to its
# abort: its truth.txt and a core there ($T/NAME/core), the kernel's
# where core_pattern names a plain file (sparse: untouched pages are
# holes), else gdb's gcore (which writes every mapped page, 32 MiB a
# segment: 250 MB for eight threads).  The truth is checked by itself
# (mitruthcmp --check-truth) before any heapwalk runs.
mi_core() {
	local name=$1 bin=$2 threads=$3 mode=$4 d=$T/$1 pattern c
	mkdir -p "$d"
	if plain_core_pattern; then
		pattern=$(cat /proc/sys/kernel/core_pattern)
		# (The outer subshell reports the abort, to /dev/null; `|| :`
		# keeps it from handing its place to the inner one.)
		( (cd "$d" && ulimit -c unlimited 2>/dev/null; exec "$bin" "$threads" "$mode") \
			>"$d/out" 2>&1 || :) 2>/dev/null
		c=$(find "$d" -maxdepth 1 -type f -name "$pattern*" | sed -n 1,1p)
		if [ -n "$c" ]; then
			[ "$c" = "$d/core" ] || mv "$c" "$d/core"
			echo kernel >"$d/core.how"
		fi
	fi
	if ! [ -s "$d/core" ]; then
		command -v gdb >/dev/null 2>&1 ||
			skip "no core of $bin: core_pattern is not a plain file name (or ulimit -c) and gdb is not installed"
		(cd "$d" && gdb -batch -nx -ex run -ex "gcore $d/core" \
			--args "$bin" "$threads" "$mode") >"$d/out" 2>&1 || true
		echo gcore >"$d/core.how"
	fi
	if ! [ -s "$d/core" ] || ! grep -q '^end$' "$d/truth.txt" 2>/dev/null; then
		tail -n 20 "$d/out" >&2
		fail "$name: no core or no truth"
	fi
	mi_truth_ok "$name"
}

# mi_truth_ok NAME: $T/NAME/truth.txt agrees with itself (every block in
# a page of its heap, in mimalloc's own visit as its state says, the
# pages' used counts adding up; tests/tools/mitruthcmp --check-truth).
mi_truth_ok() {
	"$(tool mitruthcmp)" --check-truth "$T/$1/truth.txt" >"$T/$1/selfcheck" || {
		head -n 25 "$T/$1/selfcheck" >&2
		fail "$1: the program's truth contradicts itself (a corpus bug, not heapwalk's)"
	}
	say "$1: $(tail -n 1 "$T/$1/selfcheck")"
}

# mi_oracle NAME PROG: gdb's own walk of mimalloc's structures in
# $T/NAME/core (scripts/corpus/mi-oracle.py: PROG has mimalloc compiled
# in with debug info), written as heapwalk's JSON, held to the truth by
# the same comparison as heapwalk: the truth and mitruthcmp checked by
# an oracle that is not heapwalk.  Left out (said) without gdb's Python.
mi_oracle() {
	local d=$T/$1
	if ! command -v gdb >/dev/null 2>&1 ||
		! gdb -batch -nx -ex 'python print(1)' >/dev/null 2>&1; then
		say "$1: gdb oracle left out (no gdb with Python)"
		return 0
	fi
	mkdir -p "$d/oracle"
	gdb -batch -nx -ex "python TRUTH='$d/truth.txt'" \
		-ex "python EMIT='$d/oracle'" -x "$TOP/scripts/corpus/mi-oracle.py" \
		"$2" "$d/core" >"$d/oracle.out" 2>&1 || true
	has '^mi-oracle: 0 problems$' <"$d/oracle.out" || {
		grep 'mi-oracle' "$d/oracle.out" >&2 || tail -n 20 "$d/oracle.out" >&2
		fail "$1: gdb's walk of mimalloc's structures found problems or did not finish"
	}
	"$(tool mitruthcmp)" "$d/truth.txt" "$d/oracle/chunks" "$d/oracle/leaks" \
		"$d/oracle/summary" >"$d/oracle.cmp" || {
		head -n 25 "$d/oracle.cmp" >&2
		fail "$1: gdb's walk of mimalloc disagrees with the truth (a corpus or mitruthcmp bug)"
	}
	say "$1: gdb's walk: $(grep -o 'mi-oracle: [0-9]* pages; .*' "$d/oracle.out")"
	say "$1: gdb's walk against the truth: $(tail -n 1 "$d/oracle.cmp")"
}

# MI_TRUTH_ONLY=1 (by hand, while no walker reads a kind of core yet):
# the tests build, make their cores and check each truth by itself and
# against gdb's walk, and run no heapwalk; they then skip, never pass
# (mi_truth_only_end, a test's last line).
# mi_live BIN THREADS: BIN run live in $T/live (MODE wait,visit), waiting
# on a pipe the test holds open until its truth is written; heapwalk
# held to it with --pid (check); the program left running, untraced and
# unstopped, then let go and waited for.
mi_live() {
	local bin=$1 threads=$2 pid birth
	mkdir -p "$T/live"
	mkfifo "$T/in"
	(cd "$T/live" && exec "$bin" "$threads" wait,visit <"$T/in" >"$T/live/ready") &
	pid=$!
	exec 3>"$T/in"
	birth=$(proc_birth "$pid")
	for _ in $(seq 1 6000); do
		has ready <"$T/live/ready" && break
		sleep 0.01
	done
	has ready <"$T/live/ready" || fail "the live program did not get ready"
	mi_truth_ok live
	check live --pid "$pid"
	[ "$(proc_birth "$pid")" = "$birth" ] || fail "the live program is gone after heapwalk"
	grep -q '^State:.*[RS]' "/proc/$pid/status" ||
		fail "the live program was left stopped: $(grep State "/proc/$pid/status")"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$pid/status" ||
		fail "the live program was left traced: $(grep TracerPid "/proc/$pid/status")"
	exec 3>&-
	wait "$pid" || fail "the live program did not exit cleanly"
}

mi_truth_only_end() {
	[ -z "${MI_TRUTH_ONLY:-}" ] ||
		skip "MI_TRUTH_ONLY: programs, cores and truths made and checked; heapwalk not compared"
}

# check NAME TARGET...: heapwalk's reports of TARGET (a core and the
# options it needs, or --pid PID) against $T/NAME/truth.txt
# (tests/tools/mitruthcmp, whose head says every check): summary says
# mimalloc; every block the program holds is a `chunks` line in use,
# ending where the block ends, of the page's block size; every block it
# freed lies in a free block (mimalloc 2.x: on the list the free put it
# on) or in memory given back; the lines come in address order without
# overlap; with the program's visit records, the blocks in use are
# exactly mimalloc's own view (the C library's blocks too); each page's
# used count is its blocks in use and freed by other threads; `leaks`
# finds exactly the blocks whose pointer the program hid (an aligned
# block's pointer inside it holds it; the C library's own blocks may be
# possibly lost, as an exited thread's dtv is); `bins` runs;
# no finding, and `check` exits 0 (with DAMAGED set: `check` exits 1,
# the heap having been damaged on purpose, and every block the program
# holds is still as recorded).
check() {
	local name=$1 d=$T/$1 got
	shift
	if [ -n "${MI_TRUTH_ONLY:-}" ]; then
		say "$name: heapwalk not run (MI_TRUTH_ONLY)"
		return 0
	fi
	hw "$d/summary" "$d/summary.err" --json "$@" summary
	expect_rc 0
	got=$(json_str "$d/summary" allocator)
	[ "$got" = mimalloc ] ||
		fail "$name: not walked as mimalloc (allocator: ${got:-none}): $(head -c 300 "$d/summary")"
	hw "$d/chunks" "$d/chunks.err" --json "$@" chunks
	expect_rc 0
	hw "$d/leaks" "$d/leaks.err" --json "$@" leaks
	expect_rc 0
	hw "$d/bins" "$d/bins.err" --json "$@" bins
	expect_rc 0
	hw "$d/check" "$d/check.err" "$@" check
	if [ -n "${DAMAGED:-}" ]; then
		expect_rc 1
	else
		expect_rc 0
	fi
	"$(tool mitruthcmp)" ${DAMAGED:+--damaged} "$d/truth.txt" "$d/chunks" \
		"$d/leaks" "$d/summary" >"$d/cmp" || {
		head -n 25 "$d/cmp" >&2
		fail "$name: heapwalk disagrees with the truth"
	}
	say "$name: $(tail -n 1 "$d/cmp")"
}
