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
# And no test signals a pid it noted earlier with a plain kill (below).
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

# No test signals a pid it noted earlier with a plain kill: bash reaps a
# background job as soon as it ends, and with pid_max 32768 two `make
# check` side by side give its pid to another process within minutes (a
# cleanup's SIGKILL so killed another test's live target once).  Signals
# go through kill_same (lib.sh), which checks the process's start time;
# allowed: kill -0 (a question), kill_same itself, lines marked "pid just
# read" (a pid found in /proc a moment before).
tests=(tests/*.sh tests/*/*.sh)
grep -nE '(^|[^_[:alnum:]])kill[[:space:]]+(-[[:alnum:]]+|-s[[:space:]]+[[:alnum:]]+|"?\$)' "${tests[@]}" |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' |
	grep -vE 'kill[[:space:]]+-0|pid just read|kill -s "\$1" "\$2"' >"$T/kills" || true
if [ -s "$T/kills" ]; then
	cat "$T/kills" >&2
	fail "$(wc -l <"$T/kills") plain kill(s) of a noted pid (above): use kill_same"
fi
say "${#tests[@]} test scripts: every signal to a noted pid goes through kill_same"
