# shellcheck shell=bash
# tests/lib.sh - sourced by every tests/tNNNN-*.sh (bash, set -euo pipefail).
#
# Environment (tests/run.sh sets it; the defaults let a test run alone):
#   TOP       the repository top
#   HEAPWALK  the heapwalk binary under test   (default $TOP/build/heapwalk)
#   TOOLS     the built tests/tools/*.c         (default $TOP/build/tools)
#   CORPUS    where corpus cores are kept       (default $TOP/build/corpus)
# A test exits 0 = pass, 77 = skip, anything else = fail.
set -euo pipefail
set -o errtrace
# Say where a test died of set -e (77 is a skip passing through $(...)).
# shellcheck disable=SC2154 # rc_ is set inside the trap
trap 'rc_=$?; [ $rc_ = 77 ] ||
	echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \"$BASH_COMMAND\" failed (exit $rc_)" >&2' ERR

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
HEAPWALK=${HEAPWALK:-$TOP/build/heapwalk}
TOOLS=${TOOLS:-$TOP/build/tools}
CORPUS=${CORPUS:-$TOP/build/corpus}
export TOP HEAPWALK TOOLS CORPUS

# Sanitizer reports must be told apart from heapwalk's own exit statuses
# (ASan exits 1 by default, which is also "check found corruption").
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=98}

TEST_NAME=$(basename "$0" .sh)

# A fresh scratch directory per test, removed at exit unless KEEP=1.
# Once: a test that sources several of the helper libraries sources this
# file through each (not exported: each test makes its own).
if [ -z "${HW_LIB_T:-}" ]; then
	T=$(mktemp -d "${TMPDIR:-/tmp}/heapwalk-$TEST_NAME.XXXXXX")
	HW_LIB_T=$T
	if [ "${KEEP:-0}" = 1 ]; then
		trap 'echo "kept $T" >&2' EXIT
	else
		trap 'rm -rf "$T"' EXIT
	fi
fi

# on_exit CMD: run CMD at the test's exit, before what was to run then
# (the scratch directory's removal last), not instead of it.
on_exit() {
	local prev
	prev=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT\$/\1/")
	# shellcheck disable=SC2064 # the previous trap's text, expanded now
	trap "$1; $prev" EXIT
}

# Messages go to stderr, so that they survive being called in $(...).
skip() {
	echo "skip: $*" >&2
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

say() {
	echo "$TEST_NAME: $*" >&2
}

# has [GREP-OPTIONS] PATTERN: some line of stdin matches.  Unlike `grep -q`
# it reads stdin to its end: grep -q leaves at the first match, and the
# writer's next write then dies of SIGPIPE, which under pipefail fails the
# whole pipeline -- now and then, as the scheduler decides.  (grep -c, as
# its output is no /dev/null, counts every line.)
has() {
	local n
	n=$(grep -c "$@") || true
	[ "${n:-0}" -gt 0 ]
}

# child_pid PARENT NAME: the pid of PARENT's child whose command name is
# NAME, read from /proc (a fresh machine has no procps); empty if none.
child_pid() {
	local f stat comm fields
	for f in /proc/[0-9]*/stat; do
		stat=$(cat "$f" 2>/dev/null) || continue
		# "pid (comm) state ppid ...": comm may hold spaces and ')'.
		comm=${stat#*(}
		comm=${comm%) *}
		read -r -a fields <<<"${stat##*) }"
		if [ "${fields[1]}" = "$1" ] && [ "$comm" = "$2" ]; then
			echo "${stat%% *}"
			return 0
		fi
	done
}

# core_bytes CORE ADDR N: the N bytes the core file holds at virtual
# address ADDR, in hex (od at the file offset tests/tools/coreloads gives:
# heapwalk not involved); false when no PT_LOAD's data holds ADDR.
core_bytes() {
	local off
	off=$("$(tool coreloads)" "$1" | awk -v a="$2" '
		function h(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
			for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
			return v }
		{ if (h(a) >= h($1) && h(a) < h($1) + h($4)) { printf "%.0f\n", h($3) + h(a) - h($1); exit } }')
	[ -n "$off" ] || return 1
	od -An -v -tx1 -j "$off" -N "$3" "$1" | tr -d ' \n'
}

# proc_birth PID: when process PID started (clock ticks since boot: field
# 22 of /proc/PID/stat), empty when there is none.  A pid names the
# process a test started only while it runs: bash reaps a background job
# as soon as it ends, and with pid_max 32768 (Debian's default) a busy
# machine -- two `make check` side by side -- gives the same pid to
# another process within a minute or two.  A signal to a noted pid that
# ended long ago killed an unrelated test's live target once.
proc_birth() {
	local stat fields
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	read -r -a fields <<<"${stat##*) }"  # from field 3 on
	echo "${fields[19]}"
}

# kill_same SIGNAL PID BIRTH: send SIGNAL to PID if it is still the
# process that started at BIRTH (proc_birth, noted when it was started);
# false when it is not (gone, or the pid is another's now).
kill_same() {
	[ -n "$3" ] && [ "$(proc_birth "$2")" = "$3" ] &&
		kill -s "$1" "$2" 2>/dev/null
}

need_heapwalk() {
	[ -x "$HEAPWALK" ] || skip "no heapwalk binary at $HEAPWALK"
}

need_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
	done
}

# tool NAME: the path of a tests/tools program.  The Makefile builds them;
# when a test runs alone they are compiled here on demand (also when
# its source or a tests/tools/*.h header is newer than the binary).
tool() {
	local name=$1 bin=$TOOLS/$1 src=$TOP/tests/tools/$1.c h stale=0
	if [ ! -x "$bin" ] || { [ -f "$src" ] && [ "$src" -nt "$bin" ]; }; then
		stale=1
	fi
	for h in "$TOP"/tests/tools/*.h; do
		if [ -f "$h" ] && [ -f "$src" ] && [ "$h" -nt "$bin" ]; then stale=1; fi
	done
	if [ $stale = 1 ]; then
		[ -f "$src" ] || fail "no tool $name"
		mkdir -p "$TOOLS"
		${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$bin.tmp$$" "$src" ||
			fail "cannot build $src"
		mv -f "$bin.tmp$$" "$bin"
	fi
	echo "$bin"
}

# corpus_core CASE: build corpora/ptmalloc/CASE.c into $CORPUS/CASE once
# (prog, core, truth.txt) and print that directory.
corpus_core() {
	local dir=$CORPUS/$1 rc=0
	"$TOP/scripts/corpus/make-core.sh" "$1" "$dir" >&2 || rc=$?
	case $rc in
	0) echo "$dir" ;;
	77) skip "cannot produce a core for $1 here" ;;
	*) fail "make-core.sh $1 failed" ;;
	esac
}

# corpus_copy DIR DEST: a private copy of DIR's core and truth.txt in
# DEST (another make-core.sh may be rebuilding the corpus meanwhile; it
# holds DIR/.lock while it does).
corpus_copy() {
	if command -v flock >/dev/null 2>&1; then
		flock "$1/.lock" cp "$1/core" "$1/truth.txt" "$2/"
	else
		cp "$1/core" "$1/truth.txt" "$2/"
	fi
}

# edit_loads CORE OUT PERL: a copy of CORE (64-bit, little-endian) in
# which PERL runs once per PT_LOAD program header with $type, $flags,
# $vaddr, $filesz and $memsz set; what it leaves in them is written back.
# Fails when no header changed.
edit_loads() {
	perl -e '
		use strict; use warnings;
		my ($in, $out, $code) = @ARGV;
		open my $f, "<:raw", $in or die "$in: $!\n";
		my $c = do { local $/; <$f> };
		my $phoff = unpack "Q<", substr($c, 32, 8);
		my ($entsz, $num) = unpack "S<S<", substr($c, 54, 4);
		my $changed = 0;
		for my $i (0 .. $num - 1) {
			my $o = $phoff + $i * $entsz;
			my $old = substr($c, $o, 56);
			our ($type, $flags, $offset, $vaddr, $paddr, $filesz, $memsz, $align) =
				unpack "L<L<Q<Q<Q<Q<Q<Q<", $old;
			next unless $type == 1;
			eval $code;
			die $@ if $@;
			my $new = pack "L<L<Q<Q<Q<Q<Q<Q<", $type, $flags, $offset,
				$vaddr, $paddr, $filesz, $memsz, $align;
			$changed++ if $new ne $old;
			substr($c, $o, 56) = $new;
		}
		$changed or die "edit_loads: no program header changed\n";
		open my $g, ">:raw", $out or die "$out: $!\n";
		print $g $c;
	' "$@"
}

# hide_libc CORE OUT: a copy of CORE whose mapped libc is renamed
# (libc.so.6 to libc.so.0, libc-2.NN.so to libc-2.NN.sx: same length,
# still a libc name) to a file no machine has: heapwalk then has only
# what the core holds of libc, as when a device's libc is not at hand.
# (An empty --sysroot does not hide it: after SYSROOT + path the plain
# path is tried, as libdwfl does.)
hide_libc() {
	perl -0777 -pe 's{/libc\.so\.6\0}{/libc.so.0\0}g;
		s{(/libc-2\.[0-9]+)\.so\0}{$1.sx\0}g' "$1" >"$2"
}

# plain_core_pattern: does core_pattern name a plain file in the crashing
# program's directory (the kernel then writes its cores where the tests
# run their programs)?
plain_core_pattern() {
	local p
	p=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '|')
	[ "${p:0:1}" != "|" ] && [ "${p:0:1}" != / ] && [[ "$p" != *%* ]] &&
		[[ "$p" != */* ]]
}

# qemu_guest_core DIR QEMU-ARGS...: run `qemu-aarch64 QEMU-ARGS` in DIR/run
# (core limit lifted) to the guest program's death: qemu's core of the
# guest becomes DIR/core, the truth.txt the program wrote DIR/truth.txt.
# Where core_pattern names a plain file, a directory of that name in
# DIR/run keeps the kernel from writing its core of qemu itself there.
# Fails when the program wrote no finished truth ("end"); skips when
# qemu wrote no core (ulimit -c).
qemu_guest_core() {
	local d=$1 c
	shift
	mkdir -p "$d/run"
	if plain_core_pattern; then mkdir -p "$d/run/$(cat /proc/sys/kernel/core_pattern)"; fi
	# (The outer subshell reports the guest's abort, to /dev/null; the
	# `|| :` keeps it from handing its place to the inner one.)
	( (cd "$d/run" && ulimit -c unlimited 2>/dev/null; exec qemu-aarch64 "$@") \
		>"$d/qemu.out" 2>&1 || :) 2>/dev/null
	c=$(find "$d/run" -maxdepth 1 -name 'qemu_*.core' | sed -n 1,1p)
	if ! grep -q '^end$' "$d/run/truth.txt" 2>/dev/null; then
		tail -n 5 "$d/qemu.out" >&2
		fail "$d: the program under qemu-aarch64 wrote no truth"
	fi
	if [ -z "$c" ]; then
		tail -n 5 "$d/qemu.out" >&2
		skip "qemu-aarch64 wrote no guest core of $* (ulimit -c?)"
	fi
	mv "$c" "$d/core"
	mv "$d/run/truth.txt" "$d/truth.txt"
	rm -rf "$d/run"
}

# hw OUT ERR ARGS...: run heapwalk (60 s at most) with stdout to OUT and
# stderr to ERR; sets HW_RC.  Fails the test on a crash, a hang or any
# sanitizer report, whatever the exit status.
HW_RC=0
HW_ERR=
HW_ARGS=
hw() {
	local out=$1 err=$2
	shift 2
	HW_RC=0
	HW_ERR=$err
	HW_ARGS="$*"
	timeout -k 5 60 "$HEAPWALK" "$@" >"$out" 2>"$err" || HW_RC=$?
	if [ "$HW_RC" = 124 ] || [ "$HW_RC" = 137 ]; then
		fail "heapwalk $* hung (killed after 60 s)"
	fi
	if [ "$HW_RC" -ge 128 ] || [ "$HW_RC" = 99 ] || [ "$HW_RC" = 98 ] ||
		grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$err"; then
		tail -n 30 "$err"
		fail "heapwalk $* crashed or tripped a sanitizer (exit $HW_RC)"
	fi
	return 0
}

# expect_rc WANT... (after hw): the exit status was one of WANT.
expect_rc() {
	local w all="$*"
	for w; do
		[ "$HW_RC" = "$w" ] && return 0
	done
	echo "--- stderr:" >&2
	tail -n 20 "$HW_ERR" >&2
	fail "heapwalk $HW_ARGS exited $HW_RC, expected ${all// / or }"
}

# one_error_line ERR WHAT: ERR holds exactly one line, starting "heapwalk: ".
one_error_line() {
	local err=$1 what=$2 n
	n=$(wc -l <"$err")
	if [ "$n" != 1 ] || ! head -n1 "$err" | has '^heapwalk: '; then
		echo "--- stderr of $what:"
		head -n 10 "$err"
		fail "$what: expected exactly one stderr line starting 'heapwalk: ', got $n"
	fi
}

# usage_error WORDS ARGS...: heapwalk ARGS is refused as a usage error:
# exit 2, one "heapwalk: " line that says WORDS.
usage_error() {
	local words=$1
	shift
	hw "$T/usage.out" "$T/usage.err" "$@"
	expect_rc 2
	one_error_line "$T/usage.err" "heapwalk $*"
	has -F "$words" <"$T/usage.err" ||
		fail "heapwalk $*: the error does not say '$words': $(cat "$T/usage.err")"
}

# check_truth CASE: heapwalk's chunks and summary of CASE's core agree
# with the program's own truth file (tests/tools/truthcmp).
check_truth() {
	local case_name=$1 dir
	dir=$(corpus_core "$case_name")
	truth_agrees "$dir/truth.txt" "$dir/core" "$T/chunks.jsonl" \
		"$T/summary.json" "$case_name's truth (core in $dir)"
}

# truth_agrees TRUTH CORE CHUNKS SUMMARY WHAT: `chunks --json` and
# `summary --json` of CORE, written to the files CHUNKS and SUMMARY,
# agree with the truth file TRUTH (truthcmp: every block, mallinfo);
# fails naming WHAT otherwise.
truth_agrees() {
	hw "$3" "$3.err" --json "$2" chunks
	expect_rc 0
	hw "$4" "$4.err" --json "$2" summary
	expect_rc 0
	"$(tool truthcmp)" "$1" "$3" "$4" ||
		fail "heapwalk disagrees with $5"
}

# json_num FILE KEY / json_str FILE KEY: the first number / string value
# KEY has in the JSON in FILE ("" if none).
json_num() {
	grep -o "\"$2\" *: *[0-9-]*" "$1" | sed -n '1s/.*: *//p'
}
json_str() {
	grep -o "\"$2\" *: *\"[^\"]*\"" "$1" | sed -n '1s/.*: *"\(.*\)"/\1/p'
}

# check_era SUMMARY_JSON VERSION: the heap's own data (summary "roots":
# data_says "2.A-2.B") is consistent with glibc VERSION (2.N with
# A <= N <= B), and when libc's version string was read, it agrees.
check_era() {
	local sum=$1 version=$2 range lo hi n
	range=$(sed -n 's/.*"data_says":"2\.\([0-9]*\)-2\.\([0-9]*\)".*/\1 \2/p' "$sum")
	[ -n "$range" ] || fail "$sum: no data_says range in summary: $(head -c 300 "$sum")"
	read -r lo hi <<<"$range"
	n=${version#2.}
	[ "$lo" -le "$n" ] && [ "$n" -le "$hi" ] ||
		fail "$sum: the data says glibc 2.$lo-2.$hi, the core's glibc is $version"
	if ! grep -q '"version":"unknown"' "$sum"; then
		grep -q '"version_agrees":true' "$sum" ||
			fail "$sum: version string and data disagree"
	fi
}
