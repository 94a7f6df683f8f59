/* fragrows.c - what `frag` and `map` count per arena: how much free
 * memory the heap holds and how scattered it is.
 *
 * "free" is memory the allocator can hand out again without new pages:
 * ptmalloc's binned and cached chunks (top excluded), jemalloc's free slab
 * regions and thread-cached ones.  Page-level reserves are separate: top
 * for ptmalloc; dirty, muzzy and retained extents for jemalloc (retained
 * is address space only: nothing is behind it).  jemalloc's summary
 * counts free the same way (ptmalloc's summary adds top to it).
 *   free_ratio = free / (used + free)
 *   frag       = 1 - largest_free / free  (0: one free block; near 1:
 *                many small ones, as in malloc_info's fragmentation)
 */
#include "../alloc/alloc.h"
#include "fragrows.h"

bool hw_frag_add(void *rows, const struct hw_chunk *c)
{
	struct hw_frag_row *r =
		&((struct hw_frag_row *)rows)[(uint32_t)c->arena %
					      HW_FRAG_MAX_ARENAS];
	r->any = true;
	switch (c->where) {
	case HW_WHERE_TOP: r->top += c->size; return true;
	case HW_WHERE_DIRTY: r->dirty += c->size; return true;
	case HW_WHERE_MUZZY: r->muzzy += c->size; return true;
	case HW_WHERE_RETAINED: r->retained += c->size; return true;
	case HW_WHERE_PAGEHEAP: r->dirty += c->size; return true;
	case HW_WHERE_RETURNED: r->retained += c->size; return true;
	default: break;
	}
	/* A cached jemalloc region is a slab's when it takes exactly its
	   size class (a cached large extent spans its pad too).  */
	bool in_slab = c->where == HW_WHERE_SLAB ||
		       c->where == HW_WHERE_SLAB_FREE ||
		       (c->where == HW_WHERE_TCACHE && c->extent &&
			c->chunk_size == c->size && c->chunk == c->addr);
	if (in_slab) {
		r->slab_bytes += c->size;
		if (c->where == HW_WHERE_SLAB)
			r->slab_used += c->size;
	}
	if (c->used) {
		r->used += c->size;
		return true;
	}
	r->free += c->size;
	r->nfree++;
	if (c->size > r->largest)
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
	return r->free ? 1 - ratio(r->largest, r->free) : 0;
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
	if (r->largest > total->largest)
		total->largest = r->largest;
	total->top += r->top;
	total->dirty += r->dirty;
	total->muzzy += r->muzzy;
	total->retained += r->retained;
	total->slab_bytes += r->slab_bytes;
	total->slab_used += r->slab_used;
	total->any |= r->any;
}
