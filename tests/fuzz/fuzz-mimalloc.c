/* fuzz-mimalloc - libFuzzer harness for the mimalloc walker: a valid
 * mimalloc core (corpora/mimalloc/mitruth1.c linked with Debian's
 * libmimalloc 2.0.9, two threads and the one that exits: pages of most
 * size classes, blocks freed by other threads on xthread_free and on
 * the heaps' delayed lists, an abandoned segment, a huge segment) with
 * the input's bytes patched into the library's writable data (the main
 * heap) and the pages of anonymous memory that hold anything: segment
 * headers and their slice entries (every page's mi_page_t), the
 * thread heaps, the blocks and their free-list links.  patch.h says how
 * an input decodes; tests/fuzz/run.sh makes fuzz-mimalloc.core and
 * fuzz-mimalloc.ranges.
 *
 * Every walk a user can ask for runs on the same session, then the
 * views of one address and the allocator's own checks.
 */
#include "patch.h"

PATCH_FUZZER("summary", "chunks", "bins", "bins --list", "arenas", "check",
	     "leaks", "sizes", "frag", "maps", "chunk @", "view @ 8",
	     "chunks --around @ 5")
