/* heapprof1 - prof1.cc (its comment says what it builds and records)
 * with gperftools' heap profiler instead of the sampler: started with
 * HeapProfilerStart before the sites run, it records every allocation
 * (its stack and size, per address) and counts them per stack; the
 * program writes the profiler's own table as GetHeapProfile gives it to
 * DIR/prof.heap ("heap profile: ... @ heapprofile").  No sampling: no
 * .env.  Linked with the full library (-ltcmalloc) only.
 */
#define PROF1_HEAP_PROFILER 1
#include "prof1.cc"
