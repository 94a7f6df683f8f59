#!/bin/bash
# Command-line errors exit 2 with one "heapwalk: " line; --help and
# --version exit 0 and print to stdout.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
dir=$(corpus_core bins1)
core=$dir/core

usage_error() {
	hw "$T/out" "$T/err" "$@"
	expect_rc 2
	one_error_line "$T/err" "heapwalk $*"
}
usage_error                                  # missing target
usage_error --json                           # still missing
usage_error --no-such-option "$core"         # unknown option
usage_error "$core" no-such-command          # unknown command
usage_error --json "$core" no-such-command
usage_error --exe                            # option without its argument
usage_error "$core" chunks --no-such-flag    # unknown command argument

for opt in --help -h --version; do
	hw "$T/out" "$T/err" $opt
	expect_rc 0
	[ -s "$T/out" ] || fail "heapwalk $opt printed nothing on stdout"
	[ ! -s "$T/err" ] || fail "heapwalk $opt wrote to stderr: $(head -n3 "$T/err")"
done
grep -q 'heapwalk' "$T/out" || fail "--version does not say heapwalk: $(cat "$T/out")"

# Paths the options name must exist and be of the right kind.
usage_error --sysroot "$T/no-such-dir" "$core"
usage_error --debug-dir "$T/no-such-dir" "$core"
usage_error --exe "$T/no-such-file" "$core"
usage_error --exe "$T" "$core"                 # a directory, not a file
touch "$T/plain-file"
usage_error --sysroot "$T/plain-file" "$core"  # a file, not a directory
grep -q "no-such-dir\|plain-file\|no-such-file\|$T" "$T/err" ||
	fail "the error does not name the bad path: $(cat "$T/err")"

# Command words no command takes, and arguments that exclude each other.
usage_error "$core" summary extra
usage_error "$core" arenas extra
usage_error "$core" check extra
usage_error "$core" frag extra
usage_error "$core" bins tcache extra
usage_error "$core" chunks --used --free
usage_error "$core" chunk
usage_error "$core" chunk 0x1 0x2
usage_error "$core" chunk not-hex
usage_error "$core" chunk 0x
usage_error "$core" chunk 12345678901234567
usage_error "$core" bins no-such-kind
grep -q 'tcache' "$T/err" || fail "bins' error does not list the kinds: $(cat "$T/err")"

# chunk ADDR: hex with or without 0x, as gdb users paste it; the answer
# is the same.  The address is a live heap chunk of the program's truth.
addr=$(awk '$1 == "alloc" && $5 == "heap" { print $2; exit }' "$dir/truth.txt")
[ -n "$addr" ] || fail "no live heap chunk in bins1's truth"
hw "$T/with0x" "$T/err" --json "$core" chunk "$addr"
expect_rc 0
hw "$T/bare" "$T/err" --json "$core" chunk "${addr#0x}"
expect_rc 0
cmp -s "$T/with0x" "$T/bare" || fail "chunk ${addr#0x} and chunk $addr differ"
grep -q "\"addr\":\"$addr\"" "$T/bare" || fail "chunk ${addr#0x} did not find $addr: $(cat "$T/bare")"

# An mmapped chunk has no neighbours: prev and next are null.
maddr=$(awk '$1 == "alloc" && $5 == "mmapped" { print $2; exit }' "$dir/truth.txt")
[ -n "$maddr" ] || fail "no mmapped chunk in bins1's truth"
hw "$T/m" "$T/err" --json "$core" chunk "$maddr"
expect_rc 0
grep -q '"prev":null,"next":null' "$T/m" || fail "chunk $maddr (mmapped) names neighbours: $(cat "$T/m")"

# A compression heapwalk does not read (zstd, xz, lz4 and gzip are read:
# t0155): its name and the command that unpacks it.
for z in "bzip2 -c"; do
	prog=${z%% *}
	command -v "$prog" >/dev/null 2>&1 || { say "no $prog: not tried"; continue; }
	head -c 65536 "$core" | $z >"$T/core.z"
	hw "$T/out" "$T/err" "$T/core.z" summary
	expect_rc 3
	one_error_line "$T/err" "heapwalk on a $prog core"
	grep -q "$prog -d" "$T/err" || fail "the $prog core's error does not say '$prog -d': $(cat "$T/err")"
done

# The exit statuses, one table for every command (doc/heapwalk.md): an
# ADDR in no block is an answer (0, for chunk, refs and why alike), on
# stdout, naming the address with its 0x; the command before the core is
# a usage error that says the order; output that cannot be written is 3.
for c in chunk refs why; do
	hw "$T/out" "$T/err" "$core" "$c" 0x1
	expect_rc 0
	[ ! -s "$T/err" ] || fail "$c 0x1 wrote to stderr: $(cat "$T/err")"
	grep -q '0x1 is ' "$T/out" || fail "$c 0x1 does not say where 0x1 is: $(cat "$T/out")"
done
usage_error summary "$core"
grep -q "the target comes first: heapwalk $core summary" "$T/err" ||
	fail "the command-first error does not give the order: $(cat "$T/err")"
usage_error chunks
grep -q "heapwalk CORE chunks" "$T/err" ||
	fail "a command alone: $(cat "$T/err")"
for c in "map -o $T/no-such-dir/x.svg" "chunks -o x"; do
	# shellcheck disable=SC2086 # the command's words
	hw "$T/out" "$T/err" "$core" $c
	case $c in
	map*) expect_rc 3 ;;
	*) expect_rc 2 ;;
	esac
	one_error_line "$T/err" "heapwalk $c"
done
hw "$T/out" "$T/err" "$T/no-such-core" summary
expect_rc 3
one_error_line "$T/err" "heapwalk on a missing core"
# help COMMAND: usage, every option, an example.
hw "$T/out" "$T/err" help prof
expect_rc 0
for w in '^usage: heapwalk \[OPTIONS\] CORE prof ' '^  --top=N ' '^  --recent ' '^example:' '^  heapwalk core prof'; do
	grep -q -- "$w" "$T/out" || fail "help prof lacks '$w': $(cat "$T/out")"
done
