/* fuzz-jemalloc - libFuzzer harness for the jemalloc walker: a valid
 * jemalloc 5.3 core (the corpus's basic1) with the input's bytes patched
 * into libjemalloc's writable data (the rtree root, the arenas array,
 * the emap), the anonymous memory jemalloc manages (base blocks with the
 * extents and rtree leaves, slabs, large extents) and the TLS holding
 * each thread's tcache.  patch.h says how an input decodes;
 * tests/fuzz/run.sh makes fuzz-jemalloc.core and fuzz-jemalloc.ranges.
 *
 * Every walk a user can ask for runs on the same session: summary,
 * chunks, bins, check and leaks, then the views that read the target
 * afresh: bins --list, tcache, arena 0 and mp; then the walks around one
 * address (chunk, view, chunks --around at a block the truth knows).
 */
#include "patch.h"

PATCH_FUZZER("summary", "chunks", "bins", "check", "leaks", "bins --list",
	     "tcache", "arena 0", "mp", "chunk @", "view @ 8",
	     "chunks --around @ 5")
