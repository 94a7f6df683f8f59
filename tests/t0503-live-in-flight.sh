#!/bin/bash
# heapwalk --pid stops a process wherever its threads are, inside malloc()
# and free() too, where a chunk may be off one list and not yet on
# another (issue #54: `check` said "free chunk ... is in no bin" about one
# run in ten).  corpora/ptmalloc/churn1.c: three threads malloc and free
# in a tight loop, forever, on the host's glibc; the test stops it 20
# times:
#  - `check` never counts corruption (exit 0): a thread the stop caught
#    inside the allocator (its innermost frames name one of its
#    functions) is said in a note, and whatever the walk found half done
#    is a note too;
#  - `summary --json` has "in_flight": null or the threads named;
#  - after it all the program stops its threads, frees everything and
#    says OK: glibc found its heap intact (a damaged heap aborts).
# How many of the 20 stops caught a thread inside is said, not asserted:
# it depends on where the threads were.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live

dir=$(live_prog host churn1)
live_start churn "$dir/prog"
pid=${LIVE_PID[churn]}
inside=0
for i in $(seq 1 20); do
	hw_live churn "$T/check.$i" "$T/check.$i.err" check
	if [ "$HW_RC" != 0 ]; then
		grep -v '^  #' "$T/check.$i" | tail -n 5 >&2
		fail "check of a process stopped in its malloc loop counted corruption (run $i, exit $HW_RC)"
	fi
	if grep -q 'when the process was stopped: what its operation had half done' "$T/check.$i"; then
		inside=$((inside + 1))
	fi
	live_untraced churn "heapwalk --pid $pid check (run $i)"
done
hw_live churn "$T/summary.json" "$T/summary.err" --json summary
expect_rc 0
grep -qE '"in_flight":(null|"thread [0-9]+ \(tid [0-9]+\) in [^"]+ at the stop: )' "$T/summary.json" ||
	fail "summary --json of a live process has no \"in_flight\": $(grep -o '"in_flight":[^,]*' "$T/summary.json")"
live_finish churn
say "churn1 stopped 20 times in its malloc loop: check counted no corruption ($inside stops caught a thread inside the allocator, said in a note); the program's heap intact after"
