#!/bin/bash
# leaks, refs, why and maps on --pid targets: corpora/ptmalloc/leaks1.c
# in its live mode (CORPUS_LIVE=1, corpora/common/live.h: the heap and
# truth of its core, then it waits, every thread alive), on the host's
# glibc, on Debian's jemalloc 5.3.0 (amd64, corpora/jemalloc/leaks1.c
# as t0510 builds it) and on its gperftools tcmalloc 2.10 (the minimal
# library; the truth's "libleak" is gperftools' own).  A SIGUSR1 is sent, and left pending, before
# heapwalk attaches.  Checked against the program's own truth:
#  - `leaks --reachable --json` gives every block its recorded kind and
#    calls no other block definite or indirect (leakcmp, as on the core);
#  - `refs ADDR --json` names the recorded holder of the block held from
#    a global, main's frame, another thread's frame, the heap, and the
#    one held only from a callee-saved register of a thread parked in a
#    system call (read through ptrace while heapwalk has it stopped);
#    `why ADDR --json` is a chain from that holder to the block (the
#    register-held one: a single step from the register);
#  - `maps --mappings --json` adds up and has a stack row for each of the
#    program's threads (mapscheck);
#  - right after every heapwalk run no thread of the program is stopped
#    or traced and the SIGUSR1 is still pending.
# Then the program checks itself and says OK: every block in use
# unchanged, the SIGUSR1 pending and delivered once unblocked, TracerPid
# 0, no thread stopped or missing.
# Skips while heapwalk does not support --pid, or ptrace is not
# permitted (jemalloc: when the packages cannot be had).
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_live
leakcmp=$(tool leakcmp)
mapscheck=$(tool mapscheck)

# The truth's block with HOW (the first one), as "addr holder".
truth_block() {
	sed -n "s/^block \\(0x[0-9a-f]*\\) [0-9]* [a-z]* $2 \\([^ ]*\\)\$/\\1 \\2/p" "$1" | sed -n 1,1p
}

# check_refs NAME TRUTH HOW FILTER...: refs and why of the block the
# truth says HOW holds: every FILTER (a grep -E pattern) matches one
# referrer object of refs, and the first step of why's chain.
check_refs() {
	local name=$1 truth=$2 how=$3 o=$T/$1.$3 addr holder f
	shift 3
	read -r addr holder < <(truth_block "$truth" "$how") || true
	[ -n "$addr" ] || fail "$name: the truth has no block held by $how"
	hw_live "$name" "$o.refs" "$o.refs.err" --json refs "$addr"
	expect_rc 0
	live_untraced "$name" "heapwalk --pid refs $addr"
	grep -q "\"block\":{\"addr\":\"$addr\"" "$o.refs" ||
		fail "$name: refs $addr does not resolve to the block: $(head -c 300 "$o.refs")"
	grep -o '{"kind":"[^}]*}' "$o.refs" >"$o.refs.objs" || true
	cp "$o.refs.objs" "$o.match"
	for f in "$@"; do
		grep -E "$f" "$o.match" >"$o.match2" || true
		mv "$o.match2" "$o.match"
	done
	[ -s "$o.match" ] ||
		{ cat "$o.refs.objs"; fail "$name: refs $addr (held by $how) does not name its holder $holder"; }
	hw_live "$name" "$o.why" "$o.why.err" --json why "$addr"
	expect_rc 0
	live_untraced "$name" "heapwalk --pid why $addr"
	grep -q '"lost":false' "$o.why" || fail "$name: why $addr says a reachable block is lost"
	grep -o '{"kind":"[^}]*}' "$o.why" >"$o.why.objs" || true
	tail -n1 "$o.why.objs" | has "\"to\":\"$addr\"" ||
		fail "$name: why $addr: the chain does not end at the block: $(cat "$o.why")"
	head -n1 "$o.why.objs" >"$o.why.first"
	for f in "$@"; do
		[ "$how" = heap ] && break # the chain starts at g_keep
		grep -Eq "$f" "$o.why.first" ||
			{ cat "$o.why.objs"; fail "$name: why $addr does not start at $holder"; }
	done
	if [ "$how" = register ]; then
		[ "$(wc -l <"$o.why.objs")" = 1 ] ||
			{ cat "$o.why.objs"; fail "$name: why $addr: more than the register's step"; }
	fi
}

check_prog() {
	local name=$1 dir=$2 pid truth=$T/$1.truth o=$T/$1 reg addr holder
	local hheap
	live_start "$name" env CORPUS_LIVE=1 "$dir/prog" "$truth"
	live_usr1 "$name"
	pid=${LIVE_PID[$name]}
	grep -q '^end$' "$truth" || fail "$name: the truth is cut short"

	hw_live "$name" "$o.leaks" "$o.leaks.err" --json leaks --reachable
	expect_rc 0
	live_untraced "$name" "heapwalk --pid $pid leaks --reachable"
	"$leakcmp" "$truth" "$o.leaks" >"$o.cmp" ||
		{ cat "$o.cmp"; fail "$name: leaks --pid disagrees with leaks1's truth"; }

	read -r addr holder < <(truth_block "$truth" register) || true
	reg=${holder#reg:}
	[ -n "$reg" ] || fail "$name: the truth has no register-held block"
	grep -q "\"addr\":\"$addr\".*\"kind\":\"reachable\"" "$o.leaks" ||
		fail "$name: leaks does not call the register-held block $addr reachable"
	check_refs "$name" "$truth" register '"kind":"register"' '"thread":([2-9]|[1-9][0-9])' "\"register\":\"$reg\""
	check_refs "$name" "$truth" global '"kind":"data"' '"symbol":"g_keep"'
	check_refs "$name" "$truth" stack '"kind":"stack"' '"thread":1,' '"function":"main"'
	check_refs "$name" "$truth" thread-stack '"kind":"stack"' '"thread":([2-9]|[1-9][0-9])' '"function":"thread_main"'
	read -r _ hheap < <(truth_block "$truth" heap) || true
	check_refs "$name" "$truth" heap '"kind":"block"' "\"block\":\"${hheap%+*}\"" "\"offset\":${hheap#*+},"
	hw_live "$name" "$o.regtext" "$o.regtext.err" refs "$(truth_block "$truth" register | cut -d' ' -f1)"
	expect_rc 0
	grep -Eq "thread [1-9][0-9]* .*register $reg\\b" "$o.regtext" ||
		{ cat "$o.regtext"; fail "$name: refs text does not name register $reg of a thread"; }

	hw_live "$name" "$o.maps" "$o.maps.err" --json maps --mappings
	expect_rc 0
	live_untraced "$name" "heapwalk --pid $pid maps --mappings"
	hw_live "$name" "$o.sum" "$o.sum.err" --json summary
	expect_rc 0
	live_untraced "$name" "heapwalk --pid $pid summary"
	"$mapscheck" "$truth" "$o.maps" "$o.sum" >"$o.maps.cmp" ||
		{ cat "$o.maps.cmp"; fail "$name: maps --pid disagrees with leaks1's truth"; }

	live_finish "$name"
	say "$name: $(tail -n1 "$o.cmp"); refs/why name the holders (register $reg of a parked thread too); $(tail -n1 "$o.maps.cmp"); the program's self-check says OK"
}

for v in host jemalloc-5.3.0-amd64 tcmalloc-minimal-amd64; do
	dir=$(live_prog "$v" leaks1)
	check_prog "$v" "$dir"
done

# --exe with --pid: the running binary is stripped, the unstripped build
# is on disk.  Its symbols name the global holder; a file of another
# build is refused, and the summary says why.  No run warns of memory
# it could not scan (the kernel's [vvar] is neither copied nor scanned).
dir=$(live_prog host leaks1)
mkdir -p "$T/stripped"
strip -o "$T/stripped/prog" "$dir/prog"
live_start stripped env CORPUS_LIVE=1 "$T/stripped/prog" "$T/stripped.truth"
live_usr1 stripped
read -r addr _ < <(truth_block "$T/stripped.truth" global) || true
[ -n "$addr" ] || fail "stripped: the truth has no block held by a global"
hw_live stripped "$T/s.bare" "$T/s.bare.err" --json refs "$addr"
expect_rc 0
! grep -q '"symbol":"g_keep"' "$T/s.bare" ||
	fail "a stripped binary without --exe named g_keep: the test proves nothing"
hw_live stripped "$T/s.exe" "$T/s.exe.err" --exe "$dir/prog" --json refs "$addr"
expect_rc 0
grep -q '"symbol":"g_keep"' "$T/s.exe" ||
	fail "--exe with --pid: the unstripped file's g_keep is not named: $(head -c 400 "$T/s.exe")"
hw_live stripped "$T/s.wrong" "$T/s.wrong.err" --exe /bin/true summary
expect_rc 0
grep -q -- "--exe /bin/true: not used: its build-id is not that of the running" "$T/s.wrong" ||
	fail "--exe of another build with --pid: nothing says it was not used: $(grep -A3 lacks "$T/s.wrong")"
hw_live stripped "$T/s.leaks" "$T/s.leaks.err" leaks
expect_rc 0
! grep -q "not in the target" "$T/s.leaks" ||
	fail "leaks --pid warns of memory it could not scan: $(grep 'not in the target' "$T/s.leaks")"
live_untraced stripped "heapwalk --pid --exe"
live_finish stripped
say "--exe with --pid: a stripped process named through its unstripped build; another build refused and said; nothing unscannable"
