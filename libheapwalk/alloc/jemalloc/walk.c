/* walk.c - every region, large allocation and free extent, in address
 * order: slabs region by region from their bitmaps, with the tcache's
 * pointers merged in from the sorted list as the walk passes them.
 */
#include <stdlib.h>
#include <string.h>

#include "jemalloc.h"

struct walker {
	struct je_state *j;
	size_t first, last;            /* extents [first, last) */
	size_t cursor;                 /* into j->cached */
	bool report;                   /* record findings (first walk) */
	hw_chunk_fn *fn;
	void *cookie;
	bool stopped;
};

/* Is p in a tcache?  p never decreases between calls.  */
static bool cached(struct walker *w, uint64_t p)
{
	const struct je_state *j = w->j;
	while (w->cursor < j->ncached && j->cached[w->cursor] < p)
		w->cursor++;
	return w->cursor < j->ncached && j->cached[w->cursor] == p;
}

static size_t lower_bound(const uint64_t *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool walk_slab(struct walker *w, const struct je_extent *x)
{
	struct je_state *j = w->j;
	size_t words = (x->nregs + 63) / 64;
	const uint8_t *bm = hw_peek(j->t, x->edata + JE_EDATA_BITMAP, words * 8);
	if (!bm) {
		if (w->report)
			hw_finding(j->s, x->edata, "jemalloc slab at 0x%llx: its "
				   "bitmap is not in the %s; regions not listed",
				   (unsigned long long)x->base,
				   hw_target_noun(j->t));
		return true;
	}
	struct hw_chunk c = {
		.size = x->reg_size, .chunk_size = x->reg_size,
		.extent = x->edata, .arena = (int32_t)x->arena,
		.szind = x->szind,
	};
	for (uint32_t r = 0; r < x->nregs; r++) {
		uint64_t word;
		memcpy(&word, bm + 8 * (r / 64), 8);
		bool is_free = (word >> (r % 64)) & 1;
		c.addr = c.chunk = x->base + (uint64_t)r * x->reg_size;
		bool in_cache = cached(w, c.addr);
		if (in_cache && is_free && w->report)
			hw_finding(j->s, c.addr, "jemalloc: region is in a "
				   "thread cache but free in its slab's bitmap "
				   "(double free?)");
		c.used = !is_free && !in_cache;
		c.maybe_free = c.used && x->szind < JE_MAX_SIZES &&
			       j->class_lost[x->szind];
		c.where = in_cache ? HW_WHERE_TCACHE :
			  is_free ? HW_WHERE_SLAB_FREE : HW_WHERE_SLAB;
		if (!w->fn(w->cookie, &c))
			return false;
	}
	return true;
}

static bool walk_extent(struct walker *w, const struct je_extent *x)
{
	struct je_state *j = w->j;
	if (x->state == JE_ACTIVE && x->slab)
		return walk_slab(w, x);
	struct hw_chunk c = {
		.chunk = x->base, .chunk_size = x->size, .extent = x->edata,
		.arena = (int32_t)x->arena, .szind = x->szind,
	};
	switch (x->state) {
	case JE_ACTIVE:
		c.addr = x->addr;
		c.size = j->sizes[x->szind];
		c.used = !cached(w, c.addr);
		c.maybe_free = c.used && x->szind < JE_MAX_SIZES &&
			       j->class_lost[x->szind];
		c.where = c.used ? HW_WHERE_LARGE : HW_WHERE_TCACHE;
		break;
	case JE_DIRTY:
	case JE_MUZZY:
	case JE_RETAINED:
		c.addr = x->base;
		c.size = x->size;
		c.where = x->state == JE_DIRTY ? HW_WHERE_DIRTY :
			  x->state == JE_MUZZY ? HW_WHERE_MUZZY :
			  HW_WHERE_RETAINED;
		break;
	default:
		/* Being moved between caches or merged right now.  */
		if (w->report)
			hw_note(j->s, x->edata, "jemalloc extent at 0x%llx is "
				"in transition (state %u); not listed",
				(unsigned long long)x->base, x->state);
		return true;
	}
	return w->fn(w->cookie, &c);
}

static void *walk_part(void *arg)
{
	struct walker *w = arg;
	w->cursor = w->first < w->j->next ?
		lower_bound(w->j->cached, w->j->ncached, w->j->ext[w->first].base) :
		w->j->ncached;
	for (size_t i = w->first; i < w->last && !w->stopped; i++)
		if (!walk_extent(w, &w->j->ext[i]))
			w->stopped = true;
	return NULL;
}

bool je_walk(struct je_state *j, hw_chunk_fn *fn, void *cookie)
{
	struct walker w = { j, 0, j->next, 0, !j->walked, fn, cookie, false };
	walk_part(&w);
	j->walked = true;
	return !w.stopped;
}

/* The blocks an extent gives the walk.  */
static uint64_t extent_blocks(const struct je_extent *x)
{
	return x->slab && x->nregs ? x->nregs : 1;
}

bool je_walk_around(struct je_state *j, uint64_t addr, size_t before,
		    size_t after, hw_chunk_fn *fn, void *cookie)
{
	const struct je_extent *x = je_extent_of(j, addr);
	if (!x)
		return true;
	size_t i = (size_t)(x - j->ext);
	/* Its neighbours too: the region before or after it may be the last
	   or first of the extent next to it in memory; and as many extents
	   before it as `before` blocks take.  Findings are the full walk's
	   to record.  */
	size_t first = i ? i - 1 : 0, last = i + 2 < j->next ? i + 2 : j->next;
	for (uint64_t have = i ? extent_blocks(&j->ext[first]) : 0;
	     first && have < before; have += extent_blocks(&j->ext[first]))
		first--;
	struct walker w = { j, first, last, 0, false, fn, cookie, false };
	walk_part(&w);
	if (after && !w.stopped && last < j->next) {
		w.first = last;
		w.last = j->next;
		walk_part(&w);
	}
	return !w.stopped;
}

static uint64_t extent_regions(const void *j, size_t i)
{
	const struct je_extent *x = &((const struct je_state *)j)->ext[i];
	return x->slab ? x->nregs : 1;
}

/* Regions in a piece: some 2,000 rows of `chunks`, a few hundred KiB of
   report that a thread holds until its turn to write it.  */
#define PIECE_REGIONS 2048

size_t je_pieces(struct je_state *j)
{
	free(j->piece_start);
	j->npieces = hw_cut_pieces(j->next, extent_regions, j, PIECE_REGIONS,
				   &j->piece_start);
	/* Each extent is in one piece: the first walk's findings are taken
	   once, by whichever thread walks it.  */
	if (j->npieces) {
		j->pieces_report = !j->walked;
		j->walked = true;
	}
	return j->npieces;
}

bool je_walk_piece(struct je_state *j, size_t i, hw_chunk_fn *fn,
		   void *cookie)
{
	if (i >= j->npieces)
		return true;
	size_t last = i + 1 < j->npieces ? j->piece_start[i + 1] : j->next;
	struct walker w = { j, j->piece_start[i], last, 0, j->pieces_report,
			    fn, cookie, false };
	walk_part(&w);
	return !w.stopped;
}

#define MAX_PARTS 16

bool je_walk_parallel(struct je_state *j, unsigned nparts, hw_chunk_fn *fn,
		      void *const cookies[])
{
	if (nparts > MAX_PARTS)
		nparts = MAX_PARTS;
	if (nparts <= 1)
		return je_walk(j, fn, cookies[0]);
	/* Split by regions, the unit of work.  */
	struct walker w[MAX_PARTS];
	size_t bounds[MAX_PARTS + 1];
	hw_split_parts(j->next, extent_regions, j, nparts, bounds);
	for (unsigned k = 0; k < nparts; k++)
		w[k] = (struct walker){ j, bounds[k], bounds[k + 1], 0,
					!j->walked, fn, cookies[k], false };
	hw_run_parts(w, sizeof *w, nparts, walk_part);
	bool ok = true;
	for (unsigned k = 0; k < nparts; k++)
		ok &= !w[k].stopped;
	j->walked = true;
	return ok;
}
