#!/bin/bash
# How the process died: `summary` and `check` give the signal (NT_SIGINFO:
# cause, faulting address, sender), the crashing thread, glibc's own abort
# message (__abort_msg, by symbol, and by a scan of libc's data when
# libc's file is missing), the crashing thread's backtrace (libdwfl's
# unwinder) and the chunk involved, as the crashing corpus programs
# record them (corpora/ptmalloc/doublefree1.c: a tcache double free;
# overflow1.c: an overflow free() catches, the block being freed named;
# segv1.c: a read through a stray pointer; segv2.c: the same, its
# crash reporter sending the signal again from its handler, as
# redis-server's does; "# crash" lines in their
# truth, compared by tests/tools/deathcmp), on the host's glibc, on
# glibc 2.31 and on aarch64 (qemu-user cores, which have no NT_SIGINFO),
# with and without debug info.  The message is also the line glibc
# itself wrote to stderr.  A live process (--pid) has not died: nothing
# is said.  And --json stays valid UTF-8 JSON (tests/tools/jsoncheck,
# strict) when the core's strings are not: a core whose abort message
# and libc path hold invalid UTF-8 and control bytes.
# shellcheck source=tests/live-lib.sh
. "$(dirname "$0")/live-lib.sh"
need_heapwalk
deathcmp=$(tool deathcmp)
jsoncheck=$(tool jsoncheck)
mkdir -p "$T/empty"

# death_check NAME DIR CORE DEATHCMP-OPTS -- HEAPWALK-OPTS: summary and
# check (JSON, strictly valid) against DIR's truth; the text says it too.
death_check() {
	local name=$1 dir=$2 core=$3 dopts=() hopts=() cmd out
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do dopts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	hopts=("$@")
	for cmd in summary check; do
		out=$T/$name.$cmd
		hw "$out.json" "$out.err" --json "${hopts[@]}" "$core" "$cmd"
		# glibc's malloc aborting on damage it saw is a finding of
		# check's (exit 1), at the chunk involved.
		if [ $cmd = check ] && grep -q '^# crash message ' "$dir/truth.txt"; then
			expect_rc 1
			grep -q '"problem":"glibc aborted the process: ' "$out.json" ||
				fail "$name: check does not count glibc's abort: $(head -c 400 "$out.json")"
		else
			expect_rc 0
		fi
		"$jsoncheck" "$out.json" || fail "$name: $cmd --json is not valid JSON"
		"$deathcmp" "$dir/truth.txt" "$out.json" "${dopts[@]}" ||
			fail "$name: $cmd's death disagrees with the truth (core in $dir)"
	done
	out=$T/$name
	hw "$out.text" "$out.text.err" "${hopts[@]}" "$core" summary
	expect_rc 0
	local sig
	sig=$(sed -n 's/^# crash signal //p' "$dir/truth.txt")
	case $sig in
	6) grep -q '^died of: *SIGABRT' "$out.text" ;;
	11) grep -q '^died of: *SIGSEGV' "$out.text" ;;
	*) false ;;
	esac || fail "$name: summary has no 'died of:' line for signal $sig: $(head -c 600 "$out.text")"
	grep -q '^backtrace of the crashing thread' "$out.text" ||
		fail "$name: summary shows no backtrace"
}

# The message the truth expects is the line glibc wrote to stderr.
glibc_said() {
	local dir=$1 msg
	msg=$(sed -n 's/^# crash message //p' "$dir/truth.txt")
	[ -z "$msg" ] || grep -Fxq "$msg" "$dir/build.log" ||
		fail "$dir: glibc did not write '$msg' to stderr (see build.log)"
}

# ---- the host's glibc --------------------------------------------------
for c in doublefree1 segv1 segv2; do
	check_truth "$c"
	dir=$(corpus_core "$c")
	glibc_said "$dir"
	death_check "$c" "$dir" "$dir/core"
	death_check "$c.nodebug" "$dir" "$dir/core" -- --no-debuginfo
	# (segv2's reporter re-raised the signal: without libc's CFI the
	# unwinder cannot step through the signal frame in libc.)
	[ "$c" != segv2 ] || continue
	# Without libc's file: no symbol, no CFI for libc's frames.  The
	# message is found by the scan; the freed pointer is among the
	# tcache chunks the stack holds (main's frame is no longer told
	# apart from free's).
	hide_libc "$dir/core" "$T/$c.bare.core"
	bare=(--no-debuginfo --sysroot "$T/empty")
	if [ "$c" = doublefree1 ]; then
		death_check "$c.bare" "$dir" "$T/$c.bare.core" --candidates \
			--skip free --skip double_free --skip main -- "${bare[@]}"
		grep -q '"abort_message_found":"scan"' "$T/$c.bare.summary.json" ||
			fail "$c: bare, the abort message was not found by the scan"
	else
		death_check "$c.bare" "$dir" "$T/$c.bare.core" -- "${bare[@]}"
	fi
done
# An overflow that free() caught: the block free() was given is named
# (not glibc's message buffer), as the program recorded it, and check
# counts the abort at that block.  (Its truth describes the heap before
# the overflow damaged the next chunk: only the crash lines are compared.)
dir=$(corpus_core overflow1)
glibc_said "$dir"
death_check overflow1 "$dir" "$dir/core"
death_check overflow1.nodebug "$dir" "$dir/core" -- --no-debuginfo
victim=$(sed -n 's/^# crash being_freed 0x//p' "$dir/truth.txt")
grep -qE "^chunk being freed: *0x0*$victim " "$T/overflow1.text" ||
	fail "summary's text does not name the chunk being freed (0x$victim): $(grep -m3 '^chunk\|^abort' "$T/overflow1.text")"
grep -qE "\"addr\":\"0x0*$victim\",\"problem\":\"glibc aborted the process: " "$T/overflow1.check.json" ||
	fail "check does not count glibc's abort at the chunk being freed (0x$victim)"
say "overflow1: free()'s 'invalid next size' names the block being freed, 0x$victim"

# The text names the chunk freed twice.
dir=$(corpus_core doublefree1)
victim=$(sed -n 's/^# crash freed_twice 0x//p' "$dir/truth.txt")
grep -qE "^chunk freed twice: *0x0*$victim " "$T/doublefree1.text" ||
	fail "summary's text does not name the chunk freed twice (0x$victim)"
grep -q '"death":{' "$T/doublefree1.check.json" || fail "check has no death"

# ---- --json from a core whose strings are not UTF-8 -------------------
# Two cores: the abort message gets an invalid sequence (0xc3 before '('),
# a control byte and a stray 0xff (libc is there: found by its symbol);
# the libc path a 0xff 0xfe ending (the file is then missing).  Every
# report must stay strict UTF-8 JSON, each bad byte U+FFFD (written
# \ufffd), the control byte escaped.
perl -0777 -pe 's{free\(\): double free detected}{fr\xc3(\x01\xff: double free detected}g' \
	"$dir/core" >"$T/utf8msg.core"
perl -0777 -pe 's{/libc\.so\.6\0}{/libc.so\xff\xfe\0}g' "$dir/core" >"$T/utf8path.core"
for core in utf8msg utf8path; do
	cmp -s "$dir/core" "$T/$core.core" && fail "the $core patch changed nothing"
	for cmd in summary check arenas bins maps frag sizes chunks leaks; do
		out=$T/$core.$cmd
		hw "$out" "$out.err" --json --no-debuginfo "$T/$core.core" $cmd
		# utf8path keeps glibc's message: check counts the abort.
		if [ "$core$cmd" = utf8pathcheck ]; then expect_rc 1; else expect_rc 0; fi
		lines=()
		case $cmd in chunks | leaks) lines=(--lines) ;; esac
		"$jsoncheck" "${lines[@]}" "$out" ||
			fail "$core: $cmd --json is not valid UTF-8 JSON"
	done
done
mkdir -p "$T/utf8"
sed 's/^# crash message free(): /# crash message fr\xef\xbf\xbd(\x01\xef\xbf\xbd: /' \
	"$dir/truth.txt" >"$T/utf8/truth.txt"
"$deathcmp" "$T/utf8/truth.txt" "$T/utf8msg.summary" ||
	fail "the patched abort message is not read back as expected"
grep -q '"abort_message":"fr\\ufffd(\\u0001\\ufffd: double free' "$T/utf8msg.summary" ||
	fail "the abort message is not escaped as documented: $(grep -o '"abort_message":"[^"]*"' "$T/utf8msg.summary")"
grep -q 'libc\.so\\ufffd\\ufffd"' "$T/utf8path.summary" ||
	fail "the libc path's bad bytes are not \\ufffd: $(grep -o '"module":"[^"]*"' "$T/utf8path.summary")"

# ---- glibc 2.31 and aarch64 (cores of other glibcs; the sysroots come
# from Debian's packages, made once: without them this part is skipped
# and said so, the rest still counts) ------------------------------------
variant_dir() {
	local dir=$CORPUS/$1/$2 rc=0
	"$TOP/scripts/corpus/make-core.sh" "$2" "$dir" "$1" >&2 || rc=$?
	case $rc in
	0) echo "$dir" ;;
	77) echo "" ;;
	*) fail "make-core.sh $2 $dir $1 failed" ;;
	esac
}
for c in doublefree1 segv1; do
	dir=$(variant_dir glibc-2.31-amd64 "$c")
	if [ -z "$dir" ]; then
		say "no glibc 2.31 core of $c here: that part is not tested"
	else
		glibc_said "$dir"
		death_check "$c.2.31" "$dir" "$dir/core" -- \
			--debug-dir "$(readlink -f "$dir/sysroot")/usr/lib/debug"
		# 2.31's free() tail-calls _int_free(): without libc's
		# .symtab no frame is named after free.
		death_check "$c.2.31.nodebug" "$dir" "$dir/core" --skip free -- \
			--no-debuginfo
	fi
	dir=$(variant_dir glibc-2.36-arm64 "$c")
	if [ -z "$dir" ]; then
		say "no aarch64 core of $c here: that part is not tested"
	else
		glibc_said "$dir"
		sysroot=$(readlink -f "$dir/sysroot")
		death_check "$c.arm64" "$dir" "$dir/core" --no-siginfo -- \
			--sysroot "$sysroot" --debug-dir "$sysroot/usr/lib/debug"
		death_check "$c.arm64.nodebug" "$dir" "$dir/core" --no-siginfo -- \
			--sysroot "$sysroot" --no-debuginfo
	fi
done

# ---- a live process has not died ----------------------------------------
if (need_live) 2>/dev/null; then
	dir=$(live_prog host doublefree1)
	live_start df env CORPUS_LIVE=1 "$dir/prog" "$T/df.truth"
	live_usr1 df
	hw_live df "$T/live.json" "$T/live.err" --json summary
	expect_rc 0
	grep -q '"death":null' "$T/live.json" ||
		fail "--pid: summary --json says the live process died"
	hw_live df "$T/live.text" "$T/live.text.err" summary
	expect_rc 0
	! grep -qE '^(died of|abort message|backtrace of the crashing)' "$T/live.text" ||
		fail "--pid: summary says the live process died"
	live_finish df
else
	say "ptrace is not permitted here: the --pid part is not tested"
fi
say "signal, thread, abort message, backtrace and chunk agree with the truth"
