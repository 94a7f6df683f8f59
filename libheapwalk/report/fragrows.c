/* fragrows.c - what `frag` and `map` count per arena: how much free
 * memory the heap holds and how scattered it is.
 *
 * "free" is memory the allocator can hand out again without new pages:
 * ptmalloc's binned and cached chunks (top excluded), jemalloc's free slab
 * regions and thread-cached ones, mallocng's free slots.  Page-level
 * reserves are separate, each in the column its place says
 * (alloc/where.c): top for ptmalloc; dirty, muzzy and retained extents
 * for jemalloc, tcmalloc's free spans as dirty or retained (retained is
 * address space only: nothing is behind it).  jemalloc's summary counts
 * free the same way (ptmalloc's summary adds top to it).
 *   free_ratio = free / (used + free)
 *   frag       = 1 - largest / (free - cached)  (0: one free block;
 *                near 1: many small ones, as in malloc_info's
 *                fragmentation)
 * A thread cache's blocks (cached) are free but kept for their thread's
 * next malloc of that size: how many of them there are and how small is
 * the cache doing its job, not memory scattered beyond use; counted in
 * free, they are left out of largest and frag.  (A slab allocator's free
 * regions are small by nature, each serving its size class: there frag
 * is near 1 on any heap, and slab utilisation says more.)
 */
#include "../alloc/alloc.h"
#include "fragrows.h"

/* Is c a small object of a slab (a region, an object of a span, a
   slot)?  A cached block is one when it takes exactly its size class,
   no more: a cached jemalloc large extent spans its pad too, a glibc
   tcache chunk has its header.  */
static bool in_slab(const struct hw_chunk *c, const struct hw_place *p)
{
	if (!(p->flags & HW_PLACE_SLOT))
		return false;
	return !(p->flags & HW_PLACE_CACHED) ||
	       (c->chunk_size == c->size && c->chunk == c->addr);
}

bool hw_frag_add(void *rows, const struct hw_chunk *c)
{
	struct hw_frag_row *r =
		&((struct hw_frag_row *)rows)[(uint32_t)c->arena %
					      HW_FRAG_MAX_ARENAS];
	const struct hw_place *p = hw_place(c->where);
	r->any = true;
	if (p->reserve != HW_RESERVE_NONE) {
		r->reserve[p->reserve] += c->size;
		return true;
	}
	if (in_slab(c, p)) {
		r->slab_bytes += c->size;
		if (c->used)
			r->slab_used += c->size;
	}
	if (c->used) {
		r->used += c->size;
		return true;
	}
	r->free += c->size;
	r->nfree++;
	if (p->flags & HW_PLACE_CACHED)
		r->cached += c->size;
	else if (c->size > r->largest)
		r->largest = c->size;
	return true;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

double hw_frag_free_ratio(const struct hw_frag_row *r)
{
	return ratio(r->free, r->used + r->free);
}

double hw_frag_scatter(const struct hw_frag_row *r)
{
	uint64_t outside = r->free - r->cached;
	return outside ? 1 - ratio(r->largest, outside) : 0;
}

double hw_frag_slab_util(const struct hw_frag_row *r)
{
	return ratio(r->slab_used, r->slab_bytes);
}

void hw_frag_sum(struct hw_frag_row *total, const struct hw_frag_row *r)
{
	total->used += r->used;
	total->free += r->free;
	total->nfree += r->nfree;
	total->cached += r->cached;
	if (r->largest > total->largest)
		total->largest = r->largest;
	for (unsigned k = 0; k < HW_RESERVES; k++)
		total->reserve[k] += r->reserve[k];
	total->slab_bytes += r->slab_bytes;
	total->slab_used += r->slab_used;
	total->any |= r->any;
}
