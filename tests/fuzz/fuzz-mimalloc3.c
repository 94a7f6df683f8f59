/* fuzz-mimalloc3 - libFuzzer harness for the mimalloc 3.x walker: a
 * valid core of corpora/mimalloc/mitruth1.c linked with Debian sid's
 * libmimalloc 3.6.0 (two threads and the one that exits: pages of most
 * size classes in a 1 GiB arena, pages whose structs sit in the chunk
 * map's slots, OS pages of their own, blocks other threads freed on
 * xthread_free, the exited thread's abandoned pages, mimalloc's own
 * theap) with the input's bytes patched into the library's writable
 * data (the main theap and heap, the tlds) and the pages of anonymous
 * memory that hold anything: the chunk maps and their stale slots, the
 * arena struct and its bitmaps, the page structs, the theaps, the
 * blocks and their free-list links.  patch.h says how an input decodes;
 * tests/fuzz/run.sh makes fuzz-mimalloc3.core and fuzz-mimalloc3.ranges.
 *
 * Every walk a user can ask for runs on the same session, then the
 * views of one address and the allocator's own checks.
 */
#include "patch.h"

PATCH_FUZZER("summary", "chunks", "bins", "bins --list", "arenas", "check",
	     "leaks", "sizes", "frag", "maps", "chunk @", "view @ 8",
	     "chunks --around @ 5")
