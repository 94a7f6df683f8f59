#!/bin/bash
# heapwalk finds every allocation of corpora/ptmalloc/bins1.c where the
# program left it (live or in its free list, right usable size, arena),
# reports no overlapping chunks, and its mallinfo equals mallinfo2().
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
check_truth bins1
