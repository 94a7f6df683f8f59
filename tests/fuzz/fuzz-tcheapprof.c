/* fuzz-tcheapprof - libFuzzer harness for the reader of gperftools' heap
 * profiler table (alloc/tcmalloc/heapprof.c) and what uses it: a valid
 * tcmalloc 2.10 core taken under HeapProfilerStart (the corpus's
 * heapprof1 on the full library), with the input's bytes patched into
 * libtcmalloc's writable data and .bss (the static pointer to the
 * HeapProfileTable among them) and the non-zero pages of anonymous
 * memory (the table, its 179999 bucket chains, the buckets' stacks, the
 * address map's clusters and entries, and tcmalloc's own metadata).
 * patch.h says how an input decodes; tests/fuzz/run.sh makes
 * fuzz-tcheapprof.core and fuzz-tcheapprof.ranges.
 *
 * The profile in its forms, then `leaks` (every block's site, and the
 * table's memory left out of the roots) and `maps` (that memory counted
 * as the allocator's).
 */
#include "patch.h"

PATCH_FUZZER("prof", "prof --format=gperftools", "prof --collapsed",
	     "leaks --reachable", "maps")
