/* fuzz-ptmalloc - libFuzzer harness for the ptmalloc walker: a valid
 * glibc core (the corpus's bins1: tcache, fastbins, unsorted, small and
 * large bins, mmapped chunks) with the input's bytes patched into the
 * main heap, libc's writable data (main_arena, mp_, tcache_key) and the
 * other memory the walk reads (thread heaps, TLS with the tcache
 * pointer).  patch.h says how an input decodes; tests/fuzz/run.sh makes
 * fuzz-ptmalloc.core and fuzz-ptmalloc.ranges.
 *
 * Every walk a user can ask for runs on the same session: chunks first
 * (its lists proven by a settling walk's sums, fuzz.h's session needs no
 * list), summary (the counting walk's sums and fastbin guesses), bins
 * (every list walked), check (every consistency rule) and leaks (which
 * scans the chunks' contents for pointers); then the views that read
 * the allocator's structures afresh: each list followed on its own (bins
 * --list), main_arena's malloc_state (arena 0), mp_ (mp) and the tcache
 * structs (tcache); then the walks around one address (chunk, view,
 * chunks --around at a block the truth knows: patch.h's '@').
 */
#include "patch.h"

PATCH_FUZZER("chunks", "summary", "bins", "check", "leaks", "bins --list",
	     "arena 0", "mp", "tcache", "chunk @", "view @ 8",
	     "chunks --around @ 5")
