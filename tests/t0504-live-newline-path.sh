#!/bin/bash
# heapwalk --pid on a program whose path holds a newline (issue #55):
# /proc/PID/maps writes it "\012", and libdwfl, which reads the maps
# itself, took that for the file's name and never found it: the
# executable's symbols were lost without a word.  A program in a
# directory named "a<newline>b" keeps one block in a global variable;
# `refs` of that block names the variable (the symbol table was read),
# and summary's target line shows the newline as \x0a.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live
need_cmd cc

d="$T/a
b"
mkdir -p "$d"
cat >"$d/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
void *held_by_global;
int main(void)
{
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	held_by_global = malloc(100);
	printf("%p\nready\n", held_by_global);
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return 4;
	printf("OK\n");
	return 0;
}
C
cc -g -O0 -o "$d/prog" "$d/prog.c" || fail "cannot build the test program"
live_start nl "$d/prog"
addr=$(sed -n 1p "$T/live.nl.out")
hw_live nl "$T/refs" "$T/refs.err" refs "$addr"
expect_rc 0
has 'held_by_global' <"$T/refs" ||
	fail "refs does not name the global holding the block (the executable's symbols were lost): $(tail -n 2 "$T/refs")"
hw_live nl "$T/summary" "$T/summary.err" summary
expect_rc 0
has -F 'a\x0ab/prog' <"$T/summary" || fail "summary's target line: $(grep -m1 '^target:' "$T/summary")"
live_finish nl
say "a program at a path with a newline: its symbols are read (refs names held_by_global)"
