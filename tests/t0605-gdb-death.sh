#!/bin/bash
# gdb's `heap summary` and `heap check` say how a core's process died as
# the tool does (the plugin hands the library gdb's $_siginfo, its
# $_exitsignal and the thread they belong to; the library unwinds the
# crashing thread with the registers gdb gives):
#  - cores of the crashing corpus programs doublefree1 (a tcache double
#    free: SIGABRT, glibc's abort message, the chunk freed twice) and
#    segv1 (SIGSEGV at a known address): text and JSON equal the tool's,
#    and the death agrees with what the program recorded (deathcmp);
#  - threads8 with another thread selected in gdb: the crashing thread
#    is still the one the signal hit, named as the tool names it;
#  - a live process has not died (`heapwalk --pid` says nothing of one):
#    segv1 under gdb stopped at a breakpoint, and stopped by the SIGSEGV
#    about to kill it, gets no death, text or JSON; `gcore` of it there
#    is a core whose death (gdb's NT_SIGINFO) gdb and the tool tell
#    alike.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
need_heapwalk
need_plugin
deathcmp=$(tool deathcmp)

cmds=(summary check "summary --json" "check --json")

# same_death OUT DIR CORE WHAT: gdb_heap's reports OUT.1-4 (cmds) equal
# the tool's on CORE, and they say a death.
same_death() {
	local o=$1 dir=$2 core=$3 what=$4 i=0 c
	for c in "${cmds[@]}"; do
		i=$((i + 1))
		# glibc's own abort on damage is a finding: check exits 1.
		local want=0
		case $c in
		check*) grep -q '^# crash message ' "$dir/truth.txt" && want=1 ;;
		esac
		[ "$(cat "$o.$i.rc")" = $want ] || fail "$what: heap $c: status $(cat "$o.$i.rc"), want $want: $(head -c 300 "$o.$i")"
		# shellcheck disable=SC2086 # c holds the command and its words
		hw "$o.cli.$i" "$o.cli.$i.err" "$core" $c
		expect_rc $want
		same_as_cli "$o.$i" "$o.cli.$i" "$what: heap $c"
	done
	grep -q '^died of: ' "$o.1" || fail "$what: heap summary says no death: $(head -c 600 "$o.1")"
	grep -q '^backtrace of the crashing thread' "$o.1" ||
		fail "$what: heap summary has no backtrace"
	grep -q '"death":{' "$o.4" || fail "$what: heap check --json has no death"
}

for c in doublefree1 segv1; do
	dir=$(corpus_core "$c")
	o=$T/$c
	gdb_heap "$o" gdb "$dir/prog" "$dir/core" -- "${cmds[@]}"
	same_death "$o" "$dir" "$dir/core" "$c"
	"$deathcmp" "$dir/truth.txt" "$o.3" ||
		fail "$c: gdb's heap summary --json: the death disagrees with the truth"
	"$deathcmp" "$dir/truth.txt" "$o.4" ||
		fail "$c: gdb's heap check --json: the death disagrees with the truth"
done
addr=$(sed -n 's/^# crash addr //p' "$(corpus_core segv1)/truth.txt")
grep -q "^died of: *SIGSEGV: .* at $addr\$" "$T/segv1.1" ||
	fail "segv1: gdb's heap summary does not give the fault at $addr: $(grep '^died' "$T/segv1.1")"
grep -q '^chunk freed twice: ' "$T/doublefree1.1" ||
	fail "doublefree1: gdb's heap summary names no chunk freed twice"
say "doublefree1, segv1: gdb's summary and check (text, JSON) tell the tool's death, which agrees with the truth"

# Another thread selected: the death is still the crashing thread's.
dir=$(corpus_core threads8)
o=$T/threads8
gdb_heap "$o" gdb "$dir/prog" "$dir/core" -ex 'thread 3' -- "${cmds[@]}"
same_death "$o" "$dir" "$dir/core" "threads8 (thread 3 selected)"
say "threads8 with thread 3 selected: the crashing thread and its backtrace are the tool's"

# A live process under gdb: no death, at a breakpoint or at the fatal
# signal; gcore of the latter is a core that died.
dir=$(live_prog host segv1)
live=("summary" "summary --json" "check" "check --json")
no_death() {
	local o=$1 what=$2 i
	for i in 1 2 3 4; do
		[ "$(cat "$o.$i.rc")" = 0 ] || fail "$what: heap ${live[$((i - 1))]}: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
	done
	grep -qE '^target: +pid [0-9]+' "$o.1" || fail "$what: not a process: $(head -n 4 "$o.1")"
	! grep -qE '^(died of|crashing thread|abort message|backtrace of the crashing)' "$o.1" "$o.3" ||
		fail "$what: heap summary/check say the live process died"
	grep -q '"death":null' "$o.2" || fail "$what: heap summary --json has a death"
	grep -q '"death":null' "$o.4" || fail "$what: heap check --json has a death"
}
gdb_heap "$T/brk" gdb -ex 'break sum_list' -ex "run $T/brk.truth" "$dir/prog" -- "${live[@]}"
grep -q 'Breakpoint 1, sum_list' "$T/brk.log" || fail "segv1 did not stop at sum_list: $(tail -n 5 "$T/brk.log")"
no_death "$T/brk" "segv1 at a breakpoint"
rm -f "$T/segv1.gcore"
GDB_HEAP_END=(-ex "gcore $T/segv1.gcore" -ex kill)
gdb_heap "$T/sig" gdb -ex "run $T/sig.truth" "$dir/prog" -- "${live[@]}"
GDB_HEAP_END=()
grep -q 'received signal SIGSEGV' "$T/sig.log" || fail "segv1 was not stopped by SIGSEGV: $(tail -n 5 "$T/sig.log")"
no_death "$T/sig" "segv1 stopped by SIGSEGV"
say "live under gdb (a breakpoint; the fatal SIGSEGV, not delivered yet): no death, as heapwalk --pid"

# (Only the death is held against the tool here: in gdb a gcore's
# read-only file mappings, which gcore leaves out, are not part of the
# plugin's view, so libc's version string is not found there.)
[ -s "$T/segv1.gcore" ] || fail "gdb's gcore wrote no core: $(tail -n 5 "$T/sig.log")"
o=$T/gcore
gdb_heap "$o" gdb "$dir/prog" "$T/segv1.gcore" -- "${cmds[@]}"
death_lines() {
	grep -E '^(died of|crashing thread|abort message|chunk |backtrace of the crashing)|^  #[0-9]' "$1" || true
}
i=0
for c in "${cmds[@]}"; do
	i=$((i + 1))
	[ "$(cat "$o.$i.rc")" = 0 ] || fail "gcore: heap $c: status $(cat "$o.$i.rc"): $(head -c 300 "$o.$i")"
	# shellcheck disable=SC2086 # c holds the command and its words
	hw "$o.cli.$i" "$o.cli.$i.err" "$T/segv1.gcore" $c
	expect_rc 0
	case $c in
	*--json)
		"$deathcmp" "$T/sig.truth" "$o.cli.$i" ||
			fail "gcore of segv1: the tool's $c: the death disagrees with the truth"
		"$deathcmp" "$T/sig.truth" "$o.$i" ||
			fail "gcore of segv1: gdb's heap $c: the death disagrees with the truth" ;;
	*)
		death_lines "$o.$i" >"$o.$i.death"
		death_lines "$o.cli.$i" >"$o.cli.$i.death"
		[ -s "$o.cli.$i.death" ] || fail "gcore of segv1: the tool's $c says no death"
		same_as_cli "$o.$i.death" "$o.cli.$i.death" "gcore of segv1: heap $c's death" ;;
	esac
done
addr=$(sed -n 's/^# crash addr //p' "$T/sig.truth")
grep -q "^died of: *SIGSEGV: .* at $addr\$" "$o.1" ||
	fail "gcore of segv1: no SIGSEGV at $addr: $(grep '^died' "$o.1")"
say "gdb's gcore of it at the SIGSEGV: gdb and the tool tell the same death (SIGSEGV at $addr), which agrees with the truth"
