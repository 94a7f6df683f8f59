/* fuzz-tcmalloc - libFuzzer harness for the gperftools tcmalloc walker
 * and its sampled profile: a valid tcmalloc 2.10 core (the corpus's
 * prof1 on the full library, TCMALLOC_SAMPLE_PARAMETER=4096: spans of
 * every class, thread caches in three threads, sampled spans with their
 * StackTraces) with the input's bytes patched into libtcmalloc's
 * writable data and .bss (the size map, the central lists and their
 * transfer slots, the page heap and the root of its page map, the list
 * of thread caches, the list of sampled spans) and the pages of
 * anonymous memory that hold anything (page map leaves, Span
 * descriptors, thread caches, free objects' links, StackTraces).
 * patch.h says how an input decodes; tests/fuzz/run.sh makes
 * fuzz-tcmalloc.core and fuzz-tcmalloc.ranges.
 *
 * Every walk a user can ask for runs on the same session, the views that
 * follow the lists afresh (bins --list, tcache, arena 0, mp), the walks
 * around one address (chunk, view, chunks --around), then the profile in
 * each of its forms.
 */
#include "patch.h"

PATCH_FUZZER("summary", "chunks", "bins", "arenas", "check", "leaks",
	     "bins --list", "tcache", "arena 0", "mp", "chunk @", "view @ 8",
	     "chunks --around @ 5", "prof", "prof --format=gperftools",
	     "prof --format=pprof")
