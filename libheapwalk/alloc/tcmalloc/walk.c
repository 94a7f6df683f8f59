/* walk.c - tcmalloc's blocks, span by span in address order: a free
 * span is one block of the page heap, an in-use span of class 0 one
 * large block, and an in-use span of a class its objects, each free when
 * a list holds it (lists.c).  The tail of a span that no object fills is
 * no block: the last object takes it (its chunk_size reaches the span's
 * end, as the page's waste is the object's overhead), so that the blocks
 * of a heap tile it.
 */
#include <stdlib.h>

#include "tcmalloc.h"

static const uint8_t holder_where[] = {
	[TC_IN_USE] = HW_WHERE_SPAN,
	[TC_IN_SPAN] = HW_WHERE_CENTRAL,
	[TC_IN_TRANSFER] = HW_WHERE_TRANSFER,
	[TC_IN_THREAD] = HW_WHERE_TCACHE,
};

static bool span_blocks(const struct tc_state *tc, const struct tc_span *sp,
			hw_chunk_fn *fn, void *cookie)
{
	struct hw_chunk c = { .chunk = sp->addr, .chunk_size = sp->bytes,
			      .addr = sp->addr, .size = sp->bytes };
	if (sp->location) {
		c.where = sp->location == 2 ? HW_WHERE_RETURNED
					    : HW_WHERE_PAGEHEAP;
		return fn(cookie, &c);
	}
	if (!sp->objsize) {
		c.used = true;
		c.where = HW_WHERE_LARGE;
		if (sp->sampled_usable)
			c.size = sp->sampled_usable;
		return fn(cookie, &c);
	}
	uint64_t n = sp->bytes / sp->objsize;
	c.size = c.chunk_size = sp->objsize;
	for (uint64_t k = 0; k < n; k++) {
		c.addr = c.chunk = sp->addr + k * sp->objsize;
		if (k + 1 == n)
			c.chunk_size = sp->addr + sp->bytes - c.chunk;
		enum tc_holder h = tc_holder_of(tc, sp->slot + k);
		c.used = h == TC_IN_USE;
		c.maybe_free = c.used && tc_maybe_free(tc, sp->slot + k);
		c.where = holder_where[h];
		if (!fn(cookie, &c))
			return false;
	}
	return true;
}

bool tc_walk(struct tc_state *tc, hw_chunk_fn *fn, void *cookie)
{
	for (size_t i = 0; i < tc->nspans; i++)
		if (!span_blocks(tc, &tc->spans[i], fn, cookie))
			return false;
	return true;
}

/* A part of a parallel walk: spans [first, last).  */
struct part {
	const struct tc_state *tc;
	size_t first, last;
	hw_chunk_fn *fn;
	void *cookie;
	bool ok;
};

static void *walk_part(void *arg)
{
	struct part *pt = arg;
	pt->ok = true;
	for (size_t i = pt->first; i < pt->last && pt->ok; i++)
		pt->ok = span_blocks(pt->tc, &pt->tc->spans[i], pt->fn,
				     pt->cookie);
	return NULL;
}

/* Objects in a piece: some 2,000 rows of `chunks`, a few hundred KiB
   of report that a thread holds until its turn to write it.  */
#define PIECE_OBJECTS 2048

uint64_t tc_span_blocks(const void *tc, size_t i)
{
	const struct tc_span *sp = &((const struct tc_state *)tc)->spans[i];
	return !sp->location && sp->objsize ? sp->bytes / sp->objsize : 1;
}

size_t tc_pieces(struct tc_state *tc)
{
	free(tc->piece_start);
	tc->npieces = hw_cut_pieces(tc->nspans, tc_span_blocks, tc,
				    PIECE_OBJECTS, &tc->piece_start);
	return tc->npieces;
}

bool tc_walk_piece(const struct tc_state *tc, size_t i, hw_chunk_fn *fn,
		   void *cookie)
{
	if (i >= tc->npieces)
		return true;
	size_t last = i + 1 < tc->npieces ? tc->piece_start[i + 1]
					  : tc->nspans;
	for (size_t k = tc->piece_start[i]; k < last; k++)
		if (!span_blocks(tc, &tc->spans[k], fn, cookie))
			return false;
	return true;
}

#define TC_MAX_PARTS 16

/* The walk reads nothing of the target (the spans and the holder map
   were read at open), so its parts are independent, and each block
   costs its consumer about the same: the spans are split by blocks (a
   free span of any size is one), one part per thread.  */
bool tc_walk_parallel(struct tc_state *tc, unsigned nparts, hw_chunk_fn *fn,
		      void *const cookies[])
{
	struct part parts[TC_MAX_PARTS];
	if (nparts > TC_MAX_PARTS)
		nparts = TC_MAX_PARTS;
	if (nparts == 0)
		nparts = 1;
	size_t bounds[TC_MAX_PARTS + 1];
	hw_split_parts(tc->nspans, tc_span_blocks, tc, nparts, bounds);
	for (unsigned k = 0; k < nparts; k++)
		parts[k] = (struct part){ .tc = tc, .first = bounds[k],
					  .last = bounds[k + 1], .fn = fn,
					  .cookie = cookies[k] };
	hw_run_parts(parts, sizeof *parts, nparts, walk_part);
	bool ok = true;
	for (unsigned k = 0; k < nparts; k++)
		ok &= parts[k].ok;
	return ok;
}

/* The span holding addr and its neighbours (a block's neighbours in
   `chunk ADDR` are the spans' blocks around it).  */
bool tc_walk_around(struct tc_state *tc, uint64_t addr, size_t before,
		    size_t after, hw_chunk_fn *fn, void *cookie)
{
	const struct tc_span *sp = tc_span_of(tc, addr);
	if (!sp)
		return true;
	size_t i = (size_t)(sp - tc->spans);
	size_t lo = i ? i - 1 : i, hi = i + 1 < tc->nspans ? i + 1 : i;
	/* As many spans before it as `before` blocks take; with `after`, on
	   to the last span while fn wants more.  */
	for (uint64_t have = i ? tc_span_blocks(tc, lo) : 0;
	     lo && have < before; have += tc_span_blocks(tc, lo))
		lo--;
	if (after)
		hi = tc->nspans - 1;
	for (size_t k = lo; k <= hi; k++)
		if (!span_blocks(tc, &tc->spans[k], fn, cookie))
			return false;
	return true;
}
