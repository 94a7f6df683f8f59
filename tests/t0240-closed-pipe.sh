#!/bin/bash
# A reader that goes away (`heapwalk core chunks | head -n1`) ends the run
# quietly: heapwalk exits 0 with nothing on stderr, so the pipeline holds
# under `set -o pipefail` as well.  Every command, text and JSON, on the
# threads8 core: the chunk lists forty times each (PIPE_ROUNDS=N for
# more; they are larger than a pipe's buffer, so heapwalk is still
# writing when head leaves: that is where the race was), the other
# reports, which fit in one write, a tenth as often.
# A write error other than a closed pipe (a full disk) still is an error:
# one line and exit 3.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd timeout
dir=$(corpus_core threads8)
core=$dir/core
addr=$(awk '$1 == "alloc" && $5 == "heap" { print $2; exit }' "$dir/truth.txt")
[ -n "$addr" ] || fail "no live heap chunk in threads8's truth"
big_rounds=${PIPE_ROUNDS:-40}
small_rounds=$(((big_rounds + 9) / 10))

commands=(chunks "chunks --used" summary arenas bins sizes "chunk $addr" check frag)
for json in "" --json; do
	for c in "${commands[@]}"; do
		rounds=$small_rounds
		case $c in chunks*) rounds=$big_rounds ;; esac
		for ((i = 0; i < rounds; i++)); do
			# shellcheck disable=SC2086 # word-split the command on purpose
			if ! timeout -k 5 60 "$HEAPWALK" $json "$core" $c 2>"$T/err" |
				head -n1 >/dev/null; then
				st=("${PIPESTATUS[@]}")
				fail "heapwalk $json core $c | head -n1: exit statuses ${st[*]} (round $i)"
			fi
			[ ! -s "$T/err" ] || fail "heapwalk $json core $c | head -n1 wrote to stderr (round $i): $(head -n3 "$T/err")"
		done
	done
	say "${json:-text}: ${#commands[@]} commands into head -n1 ($big_rounds or $small_rounds times)"
done

# The pipe really closed early: heapwalk was still writing (the chunk list
# is bigger than a pipe buffer).
hw "$T/all" "$T/err" "$core" chunks
expect_rc 0
size=$(stat -c %s "$T/all")
((size > 2 * 65536)) || fail "threads8's chunk list is only $size bytes: too small to outlast the pipe buffer"

if [ -w /dev/full ]; then
	hw /dev/full "$T/err" "$core" chunks
	expect_rc 3
	one_error_line "$T/err" "heapwalk core chunks >/dev/full"
fi
