/* fuzz-jeprof - libFuzzer harness for the jemalloc heap profile reader
 * (alloc/jemalloc/prof.c) and the writers of `prof`: a valid jemalloc
 * 5.3 core taken with profiling on and every allocation sampled (the
 * corpus's prof1), with the input's bytes patched where the profile
 * lives: libjemalloc's writable data and .bss (the statics bt2gctx and
 * tdatas, opt_prof, lg_prof_sample) and the pages of anonymous memory
 * that hold anything (base blocks with the extents and their
 * e_prof_tctx, the slabs with the gctx, tctx and tdata objects and the
 * bt2gctx table, the large extents each sampled object was promoted
 * to).  patch.h says how an input decodes; tests/fuzz/run.sh makes
 * fuzz-jeprof.core and fuzz-jeprof.ranges (only the non-zero pages:
 * the sampled objects' zero contents hold nothing the walk reads).
 *
 * prof1 keeps jemalloc 5.3's recent-allocation records too (a ring of
 * prof_recent_t in the heap, its head in .bss), read by `prof --recent`.
 *
 * Every form of the profile runs on the same session, then `leaks`,
 * which asks the profile for the leaked objects' allocation sites.
 */
#include "patch.h"

PATCH_FUZZER("prof", "prof --collapsed", "prof --format=heap_v2",
	     "prof --format=pprof", "prof --recent", "prof --recent -o /dev/null",
	     "leaks")
