/* fuzz-mallocng - libFuzzer harness for the musl mallocng walker: a valid
 * mallocng core (corpora/musl/ngtruth1.c built static with musl-gcc,
 * eight threads: groups of most classes, nested groups, mappings of
 * their own, freed and never-used slots) with the input's bytes patched
 * into the program's writable data and .bss (the context: its secret,
 * the meta areas' list, the active lists, usage_by_class) and the pages
 * of anonymous memory that hold anything (meta areas and their metas,
 * group headers, slot headers).  patch.h says how an input decodes;
 * tests/fuzz/run.sh makes fuzz-mallocng.core and fuzz-mallocng.ranges.
 *
 * Every walk a user can ask for runs on the same session, then the
 * views of one address (chunk with the slot's fields, view, chunks
 * --around) and the allocator's own checks.
 */
#include "patch.h"

PATCH_FUZZER("summary", "chunks", "bins", "arenas", "check", "leaks",
	     "sizes", "frag", "maps", "chunk @", "view @ 8",
	     "chunks --around @ 5")
