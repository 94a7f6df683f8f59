/* check.c - mimalloc's own counts against its lists, as its asserts
 * (mi_page_is_valid, mi_segment_is_valid) would weigh them: a page's
 * `used` is its capacity less the blocks on its free and local_free
 * lists (blocks other threads freed stay counted until their owner
 * collects them); a segment's `used` is its pages.  The lists
 * themselves were checked as they were read (lists.c).
 */
#include "mimalloc.h"

void mi_check(void *state)
{
	struct mi_state *mi = state;
	for (uint32_t i = 0; i < mi->npages; i++) {
		const struct mi_page *pg = &mi->pages[i];
		if (pg->lost)
			hw_finding(mi->s, pg->meta, "mimalloc page 0x%llx: its "
				   "lists lost %u free blocks (used %u of "
				   "capacity %u, %u on its free and local_free "
				   "lists): the blocks in use that may be them "
				   "are maybe_free", (unsigned long long)pg->area,
				   pg->lost, pg->used, pg->capacity,
				   pg->nfree + pg->nlocal);
		if (!pg->block_size || pg->lists_bad)
			continue;
		uint64_t expect = (uint64_t)pg->capacity - pg->nfree - pg->nlocal;
		if (pg->used != expect)
			hw_finding(mi->s, pg->meta, "mimalloc page 0x%llx: used "
				   "%u, but %u of its %u blocks are on its free "
				   "and local_free lists (%llu expected)",
				   (unsigned long long)pg->area, pg->used,
				   pg->nfree + pg->nlocal, pg->capacity,
				   (unsigned long long)expect);
		if (pg->nthread > pg->used)
			hw_finding(mi->s, pg->meta, "mimalloc page 0x%llx: %u "
				   "blocks freed by other threads, more than "
				   "its %u in use", (unsigned long long)pg->area,
				   pg->nthread, pg->used);
	}
	for (uint32_t i = 0; i < mi->nsegments; i++) {
		const struct mi_segment *sg = &mi->segments[i];
		if (sg->used != sg->npages)
			hw_finding(mi->s, sg->addr, "mimalloc segment 0x%llx: "
				   "used %u, but %u pages found in its slices",
				   (unsigned long long)sg->addr, sg->used,
				   sg->npages);
	}
}
