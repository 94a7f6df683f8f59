/* walk.c - every mimalloc block in address order: segment by segment,
 * each page's blocks up to its capacity (in use unless lists.c found it
 * on a list), then what of the page is not blocks yet (`page-reserved`);
 * a free span of slices as unused pages, dirty where the segment's
 * commit mask says its slices are committed and retained where not.
 */
#include <stdlib.h>

#include "mimalloc.h"

/* The items a page gives: its blocks, its reserved tail; a free span's
   runs of committed and decommitted slices.  */
struct walk {
	struct mi_state *mi;
	hw_chunk_fn *fn;
	void *cookie;
};

static bool slice_committed(const struct mi_state *mi,
			    const struct mi_segment *sg, uint64_t a)
{
	uint64_t k = (a - sg->addr) >> mi->L->slice_shift;
	/* (3.x: an arena's own bitmap, as large as the arena.)  */
	if (sg->commit_bits)
		return sg->commit_bits[k / 64] >> (k % 64) & 1;
	/* (Past the mask, a huge segment's tail: committed with it.)  */
	return k >= 8 * 64 || (sg->commit[k / 64] >> (k % 64) & 1);
}

static bool walk_span(struct walk *w, const struct mi_page *pg)
{
	const struct mi_state *mi = w->mi;
	const struct mi_segment *sg = &mi->segments[pg->segment];
	uint64_t slice = 1ull << mi->L->slice_shift;
	for (uint64_t a = pg->area; a < pg->end;) {
		bool on = slice_committed(mi, sg, a);
		uint64_t b = a + slice;
		while (b < pg->end && slice_committed(mi, sg, b) == on)
			b += slice;
		struct hw_chunk c = {
			.addr = a, .size = b - a, .chunk = a, .chunk_size = b - a,
			.arena = sg->heap_index >= 0 ? sg->heap_index
						     : (int32_t)mi->nheaps,
			.where = on ? HW_WHERE_DIRTY : HW_WHERE_RETAINED,
		};
		if (!w->fn(w->cookie, &c))
			return false;
		a = b;
	}
	return true;
}

/* What mi_usable_size gives for block b of `bs` bytes, in use: builds
   with padding keep an 8-byte mi_padding_t {canary, delta} at a block's
   end, and those that check it (the encoded ones) give the size asked
   for, the block less the padding and delta.  */
static uint64_t usable(const struct mi_state *mi, uint64_t b, uint64_t bs)
{
	const struct mi_layout *L = mi->L;
	if (!L->padding || bs <= L->padding)
		return bs;
	uint64_t size = bs - L->padding;
	uint32_t delta;
	if (L->encoded && hw_read_u32(mi->t, b + bs - 4, &delta) &&
	    delta <= size)
		size -= delta;
	return size;
}

/* Page pg's items from block `from` on (its capacity: the tail).  */
static bool walk_page(struct walk *w, const struct mi_page *pg, uint64_t from)
{
	const struct mi_state *mi = w->mi;
	if (!pg->block_size)
		return walk_span(w, pg);
	bool huge = mi->segments[pg->segment].kind == MI_SEGMENT_HUGE;
	int32_t arena = pg->heap_index >= 0 ? pg->heap_index
					    : (int32_t)mi->nheaps;
	struct hw_chunk c = {
		.size = pg->block_size, .chunk_size = pg->block_size,
		.arena = arena, .szind = pg->bin,
	};
	for (uint64_t i = from; i < pg->capacity; i++) {
		c.addr = c.chunk = pg->start + i * pg->block_size;
		enum mi_list l = mi_block_list(mi, pg->states + i);
		c.used = l == MI_IN_USE;
		c.size = c.used ? usable(mi, c.addr, pg->block_size)
				: pg->block_size;
		c.maybe_free = c.used && mi_block_maybe_free(mi, pg->states + i);
		c.where = l == MI_ON_FREE    ? HW_WHERE_MI_FREE
			  : l == MI_ON_LOCAL ? HW_WHERE_MI_LOCAL
			  : l == MI_ON_THREAD ? HW_WHERE_MI_THREAD
			  : huge              ? HW_WHERE_MI_HUGE
					      : HW_WHERE_MI_PAGE;
		if (!w->fn(w->cookie, &c))
			return false;
	}
	uint64_t tail = pg->start + (uint64_t)pg->capacity * pg->block_size;
	if (tail >= pg->end)
		return true;
	struct hw_chunk r = {
		.addr = tail, .size = pg->end - tail, .chunk = tail,
		.chunk_size = pg->end - tail, .arena = arena,
		.szind = pg->bin, .where = HW_WHERE_MI_RESERVED,
	};
	return w->fn(w->cookie, &r);
}

bool mi_walk(struct mi_state *mi, hw_chunk_fn *fn, void *cookie)
{
	struct walk w = { mi, fn, cookie };
	for (uint32_t i = 0; i < mi->npages; i++)
		if (!walk_page(&w, &mi->pages[i], 0))
			return false;
	return true;
}

/* A page's items in a walk: its blocks and tail; a free span's runs
   (at most a few).  */
static uint64_t page_items(const void *ctx, size_t i)
{
	const struct mi_page *pg = &((const struct mi_state *)ctx)->pages[i];
	return pg->block_size ? pg->capacity + 1ull : 1;
}

/* A part of a parallel walk: pages [first, last).  */
struct part {
	struct mi_state *mi;
	size_t first, last;
	hw_chunk_fn *fn;
	void *cookie;
	bool ok;
};

static void *walk_part(void *arg)
{
	struct part *pt = arg;
	struct walk w = { pt->mi, pt->fn, pt->cookie };
	pt->ok = true;
	for (size_t i = pt->first; i < pt->last && pt->ok; i++)
		pt->ok = walk_page(&w, &pt->mi->pages[i], 0);
	return NULL;
}

/* The walk reads nothing of the target but a padded build's block ends
   (the lists were read at open), so its parts are independent: the
   pages split by their blocks, one part a thread.  */
bool mi_walk_parallel(void *state, unsigned nparts, hw_chunk_fn *fn,
		      void *const cookies[], hw_chunk_fn *restate)
{
	struct mi_state *mi = state;
	struct part parts[HW_MAX_PARTS];
	(void)restate;           /* every state is exact */
	if (nparts > HW_MAX_PARTS)
		nparts = HW_MAX_PARTS;
	if (nparts == 0)
		nparts = 1;
	size_t bounds[HW_MAX_PARTS + 1];
	hw_split_parts(mi->npages, page_items, mi, nparts, bounds);
	for (unsigned k = 0; k < nparts; k++)
		parts[k] = (struct part){ .mi = mi, .first = bounds[k],
					  .last = bounds[k + 1], .fn = fn,
					  .cookie = cookies[k] };
	hw_run_parts(parts, sizeof *parts, nparts, walk_part);
	bool ok = true;
	for (unsigned k = 0; k < nparts; k++)
		ok &= parts[k].ok;
	return ok;
}

/* Blocks in a piece of `chunks`: some 2,000 rows, a few hundred KiB of
   report a thread holds until its turn to write it.  */
#define PIECE_BLOCKS 2048

size_t mi_pieces(void *state, unsigned nthreads)
{
	struct mi_state *mi = state;
	(void)nthreads;
	free(mi->piece_start);
	mi->piece_start = NULL;
	mi->npieces = hw_cut_pieces(mi->npages, page_items, mi, PIECE_BLOCKS,
				    &mi->piece_start);
	return mi->npieces;
}

bool mi_walk_piece(void *state, size_t i, hw_chunk_fn *fn, void *cookie)
{
	struct mi_state *mi = state;
	if (i >= mi->npieces)
		return true;
	struct walk w = { mi, fn, cookie };
	size_t last = i + 1 < mi->npieces ? mi->piece_start[i + 1]
					  : mi->npages;
	for (size_t k = mi->piece_start[i]; k < last; k++)
		if (!walk_page(&w, &mi->pages[k], 0))
			return false;
	return true;
}

/* The blocks near addr: from `before` blocks before the one holding it
   (in its page, then whole pages before it), on while fn wants them.
   Every state is exact (lists.c read them all), so `after` needs no
   care.  */
bool mi_walk_around(void *state, uint64_t addr, size_t before, size_t after,
		    hw_chunk_fn *fn, void *cookie)
{
	struct mi_state *mi = state;
	(void)after;
	struct walk w = { mi, fn, cookie };
	uint32_t p = mi_page_of(mi, addr);
	if (p == MI_NONE) {
		/* Between pages (a segment's header): from the next one.  */
		p = 0;
		while (p < mi->npages && mi->pages[p].end <= addr)
			p++;
		if (p == mi->npages)
			return true;
	}
	uint64_t from = 0;
	const struct mi_page *pg = &mi->pages[p];
	if (pg->block_size && addr >= pg->start) {
		uint64_t i = (addr - pg->start) / pg->block_size;
		if (i > pg->capacity)
			i = pg->capacity;
		from = i > before ? i - before : 0;
		before = i > before ? 0 : before - i;
	}
	/* Whole pages before it, while they are wanted.  */
	while (before && p > 0 && !from) {
		const struct mi_page *q = &mi->pages[p - 1];
		uint64_t n = q->block_size ? q->capacity + 1 : 1;
		p--;
		if (n > before) {
			from = q->block_size ? n - 1 - before : 0;
			break;
		}
		before -= n;
	}
	for (uint32_t i = p; i < mi->npages; i++, from = 0)
		if (!walk_page(&w, &mi->pages[i], from))
			return false;
	return true;
}
