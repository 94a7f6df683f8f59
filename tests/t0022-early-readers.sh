#!/bin/bash
# No pipeline in the tests or scripts ends in a reader that leaves early
# (`| head`, `| grep -q`) where the pipeline's status counts.  Under
# `set -o pipefail` the writer's next write after such a reader left dies
# of SIGPIPE (exit 141) and fails the pipeline -- or not, as the scheduler
# decides: a test that passes on a quiet machine and fails under load (the
# CI run of stop 44 failed so, in t0155).  Read whole files with head, or
# pipe into `has` (lib.sh) or `sed -n 1,Np`, which read to the end.
# Allowed: messages being built for fail/say (the test fails anyway) or
# shown by printf, and lines marked "SIGPIPE on purpose" (heapwalk's own
# closed-pipe tests).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TOP"

files=(tests/*.sh tests/*/*.sh scripts/*.sh scripts/*/*.sh)
[ -f .ci/run ] && files+=(.ci/run)
grep -nE '(^|[^|])\|[[:space:]]*(head|grep[[:space:]]+-[a-zA-Z]*q)\b' "${files[@]}" |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' |
	grep -vE 'fail "|say "|printf |SIGPIPE on purpose' >"$T/early" || true
# t0240 reads heapwalk's output with head -n1 to test exactly that.
grep -v '^tests/t0240-closed-pipe.sh:' "$T/early" >"$T/bad" || true
if [ -s "$T/bad" ]; then
	cat "$T/bad" >&2
	fail "$(wc -l <"$T/bad") pipeline(s) end in a reader that leaves early (above)"
fi
say "${#files[@]} scripts: no pipeline ends in head or grep -q"
