#!/bin/bash
# tests/run.sh [-jN] [TEST...] - run the heapwalk tests.
#
# Runs every tests/t[0-9]*.sh (or only the named ones: a path, a file name
# or a prefix such as t0200) with HEAPWALK, TOOLS, CORPUS and TOP in the
# environment, one after the other, or N at a time with -jN (the corpus
# cores a test makes are locked while made: make-core.sh, sysroot.sh;
# the results are still printed in the tests' order).  A test passes with exit 0, is skipped with 77, fails
# otherwise.  Prints "ok NAME", "FAIL NAME" (followed by the last 30 lines
# of its output) or "skip NAME: reason", then "N passed, N failed, N
# skipped"; exits 0 iff nothing failed.  Each test's full output is kept in
# build/tests/NAME.log.
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
HEAPWALK=${HEAPWALK:-$TOP/build/heapwalk}
TOOLS=${TOOLS:-$TOP/build/tools}
CORPUS=${CORPUS:-$TOP/build/corpus}
# Make relative paths survive the tests' own cd's.
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
HEAPWALK=$(abs "$HEAPWALK")
TOOLS=$(abs "$TOOLS")
CORPUS=$(abs "$CORPUS")
export TOP HEAPWALK TOOLS CORPUS
# Nothing kept between runs (the struct layouts heapwalk keeps in
# ~/.cache/heapwalk): each test reads DWARF as it says, whatever ran
# before; t0132 turns the cache on to test it.
export HEAPWALK_CACHE_DIR=

logdir=$TOP/build/tests
mkdir -p "$logdir" "$CORPUS"

jobs=1
case ${1:-} in
-j[0-9]*) jobs=${1#-j}; shift ;;
-j) jobs=${2:-}; shift 2 || true ;;
esac
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -j wants a number of jobs" >&2; exit 2; }

tests=()
if [ $# -eq 0 ]; then
	for t in "$TOP"/tests/t[0-9]*.sh; do
		[ -e "$t" ] && tests+=("$t")
	done
else
	# A path or a file name is that test; a prefix, every test it
	# begins (t07: t0700 to t0799).
	for a; do
		matched=0
		for t in "$a" "$TOP/tests/$a" "$TOP/tests/$a".sh; do
			if [ -f "$t" ]; then
				tests+=("$t")
				matched=1
				break
			fi
		done
		if [ $matched = 0 ]; then
			for t in "$TOP/tests/$a"*.sh; do
				[ -f "$t" ] || continue
				tests+=("$t")
				matched=1
			done
		fi
		[ $matched = 1 ] || { echo "run.sh: no test matches '$a'" >&2; exit 2; }
	done
fi

# run_one TEST: run it, its output to its log, its exit status after it
# in LOG.rc.
run_one() {
	local name log rc=0
	name=$(basename "$1" .sh)
	log=$logdir/$name.log
	(cd "$TOP" && bash "$1") >"$log" 2>&1 </dev/null || rc=$?
	echo $rc >"$log.rc.tmp" && mv -f "$log.rc.tmp" "$log.rc"
}

pass=0 failed=0 skipped=0
# report TEST: print its result from its log.
report() {
	local name log rc
	name=$(basename "$1" .sh)
	log=$logdir/$name.log
	rc=$(cat "$log.rc")
	rm -f "$log.rc"
	case $rc in
	0)
		echo "ok $name"
		pass=$((pass + 1))
		;;
	77)
		why=$(grep -i -m1 '^skip: ' "$log" | sed 's/^[sS][kK][iI][pP]: *//' || true)
		echo "skip $name${why:+: $why}"
		skipped=$((skipped + 1))
		;;
	*)
		echo "FAIL $name (exit $rc)"
		tail -n 30 "$log" | sed 's/^/    /'
		failed=$((failed + 1))
		;;
	esac
}

for t in "${tests[@]}"; do
	rm -f "$logdir/$(basename "$t" .sh).log.rc"
done
if [ "$jobs" = 1 ]; then
	for t in "${tests[@]}"; do
		run_one "$t"
		report "$t"
	done
else
	# Up to $jobs at once; each result is printed once every test
	# before it has been.
	running=0 shown=0
	for t in "${tests[@]}"; do
		if [ $running -ge "$jobs" ]; then
			wait -n || true
			running=$((running - 1))
		fi
		run_one "$t" &
		running=$((running + 1))
		while [ $shown -lt ${#tests[@]} ] &&
			[ -f "$logdir/$(basename "${tests[$shown]}" .sh).log.rc" ]; do
			report "${tests[$shown]}"
			shown=$((shown + 1))
		done
	done
	wait
	while [ $shown -lt ${#tests[@]} ]; do
		report "${tests[$shown]}"
		shown=$((shown + 1))
	done
fi

echo "$pass passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
