#!/bin/bash
# verify-gdb.sh CASE OUTDIR [EMITDIR] - check a corpus core's truth file
# against gdb's view of the core (gdb with Python and glibc debug info,
# e.g. Debian's libc6-dbg): every recorded chunk in the recorded list,
# mallinfo2 recomputed from the core equal to the recorded one.  Builds
# the core with make-core.sh first.  With EMITDIR, also writes gdb's idea
# of heapwalk's chunks.jsonl, summary.json and sizes.json there.
# Exit 0 all agree, 1 mismatch, 77 gdb/Python/debug info unavailable.
set -euo pipefail

me=verify-gdb.sh
if [ $# -lt 2 ] || [ $# -gt 3 ]; then echo "usage: $me CASE OUTDIR [EMITDIR]" >&2; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
"$here/make-core.sh" "$1" "$2"
dir=$(cd "$2" && pwd)

command -v gdb >/dev/null 2>&1 || { echo "$me: gdb is not installed" >&2; exit 77; }
emit=()
if [ $# -eq 3 ]; then
	mkdir -p "$3"
	emit=(-ex "python EMIT=\"$(cd "$3" && pwd)\"")
fi
out=$(cd "$dir" && gdb -batch -nx -ex 'set debuginfod enabled off' \
	-ex "python TRUTH=\"$dir/truth.txt\"" "${emit[@]}" \
	-x "$here/gdb-oracle.py" ./prog core 2>&1) || true
# shellcheck source=scripts/corpus/oracle-verdict.sh
. "$here/oracle-verdict.sh"
oracle_verdict "$out" 'No symbol "main_arena"|Python scripting is not supported|No symbol table' \
	"gdb lacks Python or glibc debug info (libc6-dbg)" ""
