#!/bin/bash
# The corpus programs' ground truth agrees with gdb's view of their cores
# (needs gdb with Python and libc6-dbg; independent of heapwalk).  If this
# fails, the corpus is wrong, not heapwalk.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_cmd gdb
for c in bins1 threads8; do
	dir=$(corpus_core "$c")
	rc=0
	"$TOP/scripts/corpus/verify-gdb.sh" "$c" "$dir" || rc=$?
	case $rc in
	0) ;;
	77) skip "gdb cannot check the truth here (Python or glibc debug info missing)" ;;
	*) fail "$c: truth.txt disagrees with gdb" ;;
	esac
done
