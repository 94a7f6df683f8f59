/* prof.h - tcmalloc's heap profiles, between the two readers: the
 * sampler's (prof.c: sampled spans and their StackTraces) and the heap
 * profiler's (heapprof.c: HeapProfileTable, every allocation).
 */
#ifndef HW_TCMALLOC_PROF_H
#define HW_TCMALLOC_PROF_H

#include "tcmalloc.h"

#define TC_STACK_DEPTH 31         /* the sampler's kMaxStackDepth */

/* A block the heap profiler recorded, and its stack's site.  */
struct tc_prof_obj {
	uint64_t addr;
	const struct hw_prof_site *site;
};

struct tc_prof {
	struct hw_profile p;
	/* The sampler's.  */
	struct hw_prof_sample *samples;   /* the heap sample's order */
	uint64_t *pcs;                    /* each sample's, TC_STACK_DEPTH
					     apart */
	unsigned *npcs;
	uint64_t *desc;                   /* each sample's span descriptor */
	/* The heap profiler's.  */
	uint64_t *stacks;                 /* the buckets' pcs */
	/* The heap profiler's own memory (its table, buckets, stacks,
	   address map), which points at every block it recorded without
	   keeping it alive: the `internal` op's ranges.  */
	struct hw_addr_range *meta;
	size_t nmeta, capmeta;
	/* Both.  */
	struct hw_prof_site *sites;
	/* The blocks with a site (each sample's object, or every block
	   the heap profiler recorded), by address: tc_prof_site_of().  */
	struct tc_prof_obj *objs;
	size_t nobjs;
	char allocator[64], found[160], period_from[96];
};

/* prof.c: tp->objs[0..n) sorted by address for tc_prof_site_of.  */
void tc_prof_index_objs(struct tc_prof *tp, size_t n);

/* heapprof.c: the heap profiler's table, when the profiler is on: its
   address (0: none) and how it was found.  */
uint64_t tc_find_heap_profile(struct tc_state *tc, const char **how);
/* Its buckets as sites (in the order GetHeapProfile writes them) and
   its recorded blocks, into tp.  */
enum hw_status tc_read_heap_profile(struct tc_state *tc, struct tc_prof *tp,
				    uint64_t table, const char *how);

#endif /* HW_TCMALLOC_PROF_H */
