/* v3map.c - every page mimalloc 3.x's page maps name.
 *
 * 3.0 to 3.4 keep one map, _mi_page_map, hidden in .bss: a table
 * of sub-map pointers, and _mi_page_map_init points its first entry
 * just past the table (the reserved first sub-map), so a word P of
 * mimalloc's data with *P == P + the table's size is the root.  Every
 * non-null sub-map entry is a page (a page names itself in each of its
 * first slices).
 *
 * 3.6 keeps no global map: each 256 MiB chunk of its memory (arenas
 * are aligned so, and so is what it takes from the OS alone) begins
 * with the map of that chunk's slices.  Those chunks are found as
 * 2.x's segments are, at every aligned address of anonymous memory the
 * target holds; a slot's first word is the candidate, and v3.c keeps
 * the candidates a page's own memory vouches for.
 */
#include <stdlib.h>
#include <string.h>

#include "v3map.h"

/* No process has more pages than this (4 M pages of 64 KiB: 256 GiB).  */
#define MAX_PAGES (1u << 22)

static bool push(struct mi_words *w, uint64_t x)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;
		uint64_t *v = realloc(w->v, cap * sizeof *v);
		if (!v)
			return false;
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = x;
	return true;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Sort and keep each value once.  */
static void uniq(struct mi_words *w)
{
	if (!w->n)
		return;
	qsort(w->v, w->n, sizeof *w->v, u64_cmp);
	size_t k = 1;
	for (size_t i = 1; i < w->n; i++)
		if (w->v[i] != w->v[k - 1])
			w->v[k++] = w->v[i];
	w->n = k;
}

/* The page map's root: in some file's writable data, a word P (page
   aligned, nonzero) whose own first word is P + map_size.  (A copy of
   P in the map's memid is the same root.)  */
struct root_search {
	struct hw_target *t;
	uint32_t map_size;
	uint64_t root;
	const char *file;
};

static bool root_word(void *cookie, uint64_t at, uint64_t w, const char *file)
{
	struct root_search *rs = cookie;
	uint64_t x;
	(void)at;
	if (!w || (w & 0xfff) || !hw_read_u64(rs->t, w, &x) ||
	    x != w + rs->map_size)
		return false;
	rs->root = w;
	rs->file = file;
	return true;
}

uint64_t mi_v3_find_root(struct mi_state *mi, uint32_t map_size,
			 const char **file)
{
	struct root_search rs = { mi->t, map_size, 0, NULL };
	mi_file_words(mi->t, 0, root_word, &rs);
	*file = rs.file;
	return rs.root;
}

/* The nonzero words every `stride` bytes of [a, a + n * stride) into
   out (the core's holes, never written, are zeros), but for the first
   when skip_first; a word equal to the one before it is kept once (a
   page names itself in each of its slices).  False when out would
   outgrow limit or memory runs out.  */
static bool nonzero_words(struct hw_target *t, uint64_t a, uint64_t n,
			  unsigned stride, bool skip_first,
			  struct mi_words *out, size_t limit)
{
	uint64_t end = a + n * stride;
	for (uint64_t x = a; x < end;) {
		const uint8_t *p;
		uint64_t run = hw_readable_run(t, x, &p);
		if (!run) {
			/* On to the next slot the target holds.  */
			uint64_t next = hw_next_readable(t, x, end);
			uint64_t up = a + (next - a + stride - 1) / stride * stride;
			x = up > x ? up : x + stride;
			continue;
		}
		uint64_t stop = x + run < end ? x + run : end, w;
		for (uint64_t y = x; y + 8 <= stop; y += stride) {
			memcpy(&w, p + (y - x), 8);
			if (!w || (skip_first && y == a))
				continue;
			if (out->n && out->v[out->n - 1] == w)
				continue;
			if (out->n >= limit || !push(out, w))
				return false;
		}
		/* The next slot at or after stop.  */
		x = a + (stop - a + stride - 1) / stride * stride;
	}
	return true;
}

static enum hw_status too_many(struct mi_state *mi, const struct mi_words *pages,
			       const char *what, uint64_t at)
{
	if (pages->n < MAX_PAGES)
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	return hw_error(mi->s, HW_NO_ALLOCATOR, "mimalloc %s 0x%llx: more "
			"than %u pages", what, (unsigned long long)at, MAX_PAGES);
}

enum hw_status mi_v3_root_pages(struct mi_state *mi, uint64_t root,
				const struct mi_v3_layout *V,
				struct mi_words *pages)
{
	struct mi_words subs = { 0 };
	enum hw_status st = HW_OK;
	if (!nonzero_words(mi->t, root, V->map_size / 8, 8, false, &subs,
			   V->map_size / 8))
		st = hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	for (size_t i = 0; i < subs.n && st == HW_OK; i++) {
		if (subs.v[i] & 7) {
			hw_finding(mi->s, root, "mimalloc page map 0x%llx: a "
				   "sub-map pointer 0x%llx is not aligned",
				   (unsigned long long)root,
				   (unsigned long long)subs.v[i]);
			continue;
		}
		/* (Sub-map 0's first entry is mimalloc's empty page, what
		   a NULL pointer maps to: no page of memory.)  */
		if (!nonzero_words(mi->t, subs.v[i], V->sub_count, 8,
				   subs.v[i] == root + V->map_size, pages,
				   MAX_PAGES))
			st = too_many(mi, pages, "page map", root);
	}
	free(subs.v);
	uniq(pages);
	return st;
}

enum hw_status mi_v3_chunk_pages(struct mi_state *mi,
				 const struct mi_v3_layout *V,
				 struct mi_words *pages)
{
	struct hw_target *t = mi->t;
	uint64_t align = 1ull << V->chunk_shift;
	uint64_t slots = align >> V->base.slice_shift;
	enum hw_status st = HW_OK;
	for (size_t ri = 0; ri < t->nregions && st == HW_OK; ri++) {
		const struct hw_region *r = &t->regions[ri];
		if (r->file >= 0)
			continue;
		/* As far as the target holds the region (a core may claim
		   terabytes it does not hold).  */
		uint64_t end = r->start + hw_region_held(r);
		uint64_t a = (r->start + align - 1) & ~(align - 1);
		while (a >= r->start && a < end && st == HW_OK) {
			const uint8_t *p;
			if (!hw_readable_run(t, a, &p)) {
				uint64_t next = hw_next_readable(t, a, end);
				uint64_t up = (next + align - 1) & ~(align - 1);
				a = up > a ? up : a + align;
				continue;
			}
			if (!nonzero_words(t, a, slots, V->slot_size, false,
					   pages, MAX_PAGES))
				st = too_many(mi, pages, "chunk map", a);
			a += align;
		}
	}
	uniq(pages);
	return st;
}
