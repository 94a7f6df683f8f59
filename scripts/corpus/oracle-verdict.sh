# shellcheck shell=bash
# scripts/corpus/oracle-verdict.sh - sourced by verify-gdb.sh and
# verify-gdb-variant.sh (which set $me): judge what gdb printed running
# gdb-oracle.py.
#
# oracle_verdict OUT SKIP_RE SKIP_MSG WHAT: when OUT has no "oracle: N
# allocations, ..." line, exit 77 with SKIP_MSG if OUT matches the
# extended regex SKIP_RE (gdb cannot run the oracle here), else show
# OUT's tail and exit 1 ("the gdb oracle did not finish (WHAT)").
# Otherwise print the oracle's lines and return 0 iff it found 0
# mismatches.
oracle_verdict() {
	local out=$1 skip_re=$2 skip_msg=$3 what=$4
	if ! grep -q '^oracle: .* allocations, ' <<<"$out"; then
		if grep -qE "$skip_re" <<<"$out"; then
			echo "$me: $skip_msg" >&2
			exit 77
		fi
		echo "$out" | tail -n 20 >&2
		echo "$me: the gdb oracle did not finish${what:+ ($what)}" >&2
		exit 1
	fi
	grep '^oracle: ' <<<"$out"
	grep -q '^oracle: .* allocations, 0 mismatches$' <<<"$out"
}
