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
