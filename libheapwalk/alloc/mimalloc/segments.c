/* segments.c - each mimalloc segment's pages, read once, and the heaps
 * they belong to.
 *
 * A segment's slice entries are runs: the first, the segment's own
 * header and slice array; then pages (a block size) and free spans (no
 * block size), each run's first entry its mi_page_t.  A page's blocks
 * start at its first slice, or 3 x 128 bytes in for blocks of 8 to 1024
 * bytes (mimalloc keeps small blocks off the page alignment); a huge
 * segment's one page has one block, the page's size.  Each page names
 * its heap (xheap; none once its thread exited and the segment was
 * abandoned); a heap's tld lists its thread's other heaps.
 */
#include <stdlib.h>
#include <string.h>

#include "../module.h"
#include "mimalloc.h"

/* A thread has no more heaps than this (its tld's list).  */
#define MAX_THREAD_HEAPS 4096

bool mi_grow(void **v, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return true;
	uint32_t c = *cap ? 2 * *cap : 256;
	void *nv = realloc(*v, (size_t)c * size);
	if (!nv)
		return false;
	*v = nv;
	*cap = c;
	return true;
}

bool mi_page_decode(const struct mi_layout *L, uint64_t seg, bool huge,
		    uint64_t i, uint64_t count, const uint8_t *p,
		    struct mi_page *pg, const char **bad)
{
	uint64_t bs = mi_get(p, L->page_block_size, L->page_block_size_width);
	memset(pg, 0, sizeof *pg);
	*bad = NULL;
	pg->meta = seg + L->seg_slices + i * L->page_size;
	pg->area = seg + (i << L->slice_shift);
	pg->end = pg->area + (count << L->slice_shift);
	pg->start = mi_layout_page_start(L, pg->area, pg->end - pg->area, bs);
	if (L->page_page_start != MI_NO_FIELD) {
		uint64_t stored = mi_get(p, L->page_page_start, 8);
		if (stored != pg->start)
			*bad = "its page_start is not where its block size puts "
			       "the first block";
	}
	if (pg->start >= pg->end) {
		pg->start = pg->area;
		*bad = "its first block lies past its end";
	}
	/* (A block size past any a segment holds is a huge page's
	   sentinel, whatever the release's.)  */
	if ((L->huge_block_size && bs >= L->huge_block_size) || huge ||
	    bs >= 1ull << 30)
		bs = pg->end - pg->start;
	pg->block_size = bs;
	pg->heap_index = -1;
	pg->capacity = (uint32_t)mi_get(p, L->page_capacity, 2);
	pg->reserved = (uint32_t)mi_get(p, L->page_reserved, 2);
	pg->used = (uint32_t)mi_get(p, L->page_used, L->page_used_width);
	pg->flags = p[L->page_flags];
	pg->free = mi_get(p, L->page_free, 8);
	pg->local_free = mi_get(p, L->page_local_free, 8);
	uint64_t xt = mi_get(p, L->page_xthread_free, 8);
	pg->thread_free = xt & ~3ull;
	pg->delayed = xt & 3;
	pg->heap = mi_get(p, L->page_xheap, 8);
	if (L->page_keys != MI_NO_FIELD) {
		pg->keys[0] = mi_get(p, L->page_keys, 8);
		pg->keys[1] = mi_get(p, L->page_keys + 8, 8);
	}
	if (L->page_heap_tag != MI_NO_FIELD)
		pg->tag = (uint8_t)((p[L->page_heap_tag] >>
				     L->page_heap_tag_shift) &
				    ((1u << L->page_heap_tag_bits) - 1));
	pg->bin = (uint16_t)mi_bin_of(bs);
	uint64_t room = (pg->end - pg->start) / bs;
	const uint64_t heads[3] = { pg->free, pg->local_free, pg->thread_free };
	for (unsigned k = 0; k < 3 && !*bad; k++)
		if (heads[k] && (heads[k] < pg->start ||
				 (heads[k] - pg->start) % bs ||
				 (heads[k] - pg->start) / bs >= pg->capacity))
			*bad = "a list's head is none of its blocks";
	if (pg->reserved > room) {
		*bad = "more blocks reserved than it holds";
		pg->reserved = (uint32_t)room;
	}
	if (pg->capacity > pg->reserved) {
		*bad = "capacity past the blocks reserved";
		pg->capacity = pg->reserved;
	}
	if (pg->used > pg->capacity && !*bad)
		*bad = "more blocks used than its capacity";
	if (pg->heap & 7)
		*bad = "its heap pointer is not a heap's";
	return !*bad;
}

/* Segment si's pages appended to mi->pages.  */
static enum hw_status read_segment(struct mi_state *mi, uint32_t si,
				   uint8_t *buf, uint32_t *cap)
{
	const struct mi_layout *L = mi->L;
	struct mi_segment *sg = &mi->segments[si];
	if (!hw_read(mi->t, sg->addr, buf, L->seg_slices)) {
		hw_partial(mi->s, sg->addr, "mimalloc segment 0x%llx: its "
			   "header is no longer readable",
			   (unsigned long long)sg->addr);
		return HW_OK;
	}
	uint64_t entries = mi_get(buf, L->seg_slice_entries, 8);
	uint64_t info = mi_get(buf, L->seg_info_slices, 8);
	sg->kind = (uint8_t)mi_get(buf, L->seg_kind, 4);
	sg->used = (uint32_t)mi_get(buf, L->seg_used, 8);
	sg->abandoned = (uint32_t)mi_get(buf, L->seg_abandoned, 8);
	sg->thread_id = mi_get(buf, L->seg_thread_id, 8);
	sg->info_size = info << L->slice_shift;
	if (L->seg_commit_mask_bytes <= sizeof sg->commit)
		memcpy(sg->commit, buf + L->seg_commit_mask,
		       L->seg_commit_mask_bytes);
	sg->first_page = mi->npages;
	uint8_t *sl = buf + L->seg_slices;
	if (!hw_read(mi->t, sg->addr + L->seg_slices, sl,
		     entries * L->page_size))
		return HW_OK;   /* (detect.c read them: cannot fail) */
	uint64_t nslices = sg->size >> L->slice_shift;
	for (uint64_t i = info; i < entries;) {
		const uint8_t *p = sl + i * L->page_size;
		uint64_t count = mi_get(p, L->page_slice_count, 4);
		if (count > nslices - i)
			count = nslices - i;
		if (!mi_grow((void **)&mi->pages, mi->npages, cap,
			  sizeof *mi->pages))
			return hw_error(mi->s, HW_NO_ALLOCATOR,
					"out of memory");
		struct mi_page *pg = &mi->pages[mi->npages++];
		if (mi_get(p, L->page_block_size, L->page_block_size_width)) {
			const char *bad;
			if (!mi_page_decode(L, sg->addr,
					    sg->kind == MI_SEGMENT_HUGE, i,
					    count, p, pg, &bad)) {
				hw_finding(mi->s, pg->meta, "mimalloc page "
					   "0x%llx: %s (%u blocks of %llu "
					   "bytes)", (unsigned long long)pg->area,
					   bad, pg->capacity,
					   (unsigned long long)pg->block_size);
				pg->lists_bad = true;
			}
			pg->segment = si;
			sg->npages++;
		} else {
			/* A free span: a page of no blocks.  */
			memset(pg, 0, sizeof *pg);
			pg->meta = sg->addr + L->seg_slices + i * L->page_size;
			pg->area = pg->start = sg->addr + (i << L->slice_shift);
			pg->end = pg->area + (count << L->slice_shift);
			pg->segment = si;
			pg->heap_index = -1;
			sg->free_slices += (uint32_t)count;
		}
		i += count;
	}
	return HW_OK;
}

static int heap_cmp(const void *x, const void *y)
{
	const struct mi_heap *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

void mi_sort_heaps(struct mi_state *mi)
{
	if (mi->nheaps)
		qsort(mi->heaps, mi->nheaps, sizeof *mi->heaps, heap_cmp);
}

int32_t mi_heap_index(const struct mi_state *mi, uint64_t addr)
{
	uint32_t lo = 0, hi = mi->nheaps;
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (mi->heaps[m].addr < addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < mi->nheaps && mi->heaps[lo].addr == addr ? (int32_t)lo
							     : -1;
}

/* Add the heap at a (once), read; false when out of memory.  */
static bool add_heap(struct mi_state *mi, uint64_t a, uint32_t *cap)
{
	for (uint32_t k = 0; k < mi->nheaps; k++)
		if (mi->heaps[k].addr == a)
			return true;
	const struct mi_layout *L = mi->L;
	uint8_t *h = malloc(L->heap_size);
	if (!h)
		return false;
	if (!hw_read(mi->t, a, h, L->heap_size)) {
		hw_finding(mi->s, a, "mimalloc heap 0x%llx, named by its "
			   "pages, is not readable", (unsigned long long)a);
		free(h);
		return true;
	}
	if (!mi_grow((void **)&mi->heaps, mi->nheaps, cap, sizeof *mi->heaps)) {
		free(h);
		return false;
	}
	struct mi_heap *hp = &mi->heaps[mi->nheaps++];
	memset(hp, 0, sizeof *hp);
	hp->addr = a;
	hp->tld = mi_get(h, L->heap_tld, 8);
	hp->thread_id = mi_get(h, L->heap_thread_id, 8);
	hp->cookie = mi_get(h, L->heap_cookie, 8);
	hp->keys[0] = mi_get(h, L->heap_keys, 8);
	hp->keys[1] = mi_get(h, L->heap_keys + 8, 8);
	hp->delayed = mi_get(h, L->heap_thread_delayed_free, 8);
	hp->page_count = mi_get(h, L->heap_page_count, 8);
	hp->tag = L->heap_tag != MI_NO_FIELD ? h[L->heap_tag] : -1;
	hp->main = hp->cookie == mi->key;
	uint64_t backing;
	hp->backing = hp->tld &&
		      hw_read_u64(mi->t, hp->tld + L->tld_heap_backing,
				  &backing) &&
		      backing == a;
	free(h);
	return true;
}

/* The main heap when no page names it (CPython never allocates from
   it): in some file's writable data, the word equal to the key at the
   heap's cookie, in a heap whose tld names it its backing heap.  */
struct main_search {
	struct mi_state *mi;
	uint64_t found;
};

static bool main_word(void *cookie, uint64_t x, uint64_t w, const char *file)
{
	struct main_search *ms = cookie;
	struct mi_state *mi = ms->mi;
	const struct mi_layout *L = mi->L;
	uint64_t h = x - L->heap_cookie, tld, back;
	(void)file;
	if (w != mi->key || !hw_read_u64(mi->t, h + L->heap_tld, &tld) ||
	    !tld || !hw_read_u64(mi->t, tld + L->tld_heap_backing, &back) ||
	    back != h)
		return false;
	ms->found = h;
	return true;
}

static uint64_t find_main_heap(struct mi_state *mi)
{
	struct main_search ms = { mi, 0 };
	mi_file_words(mi->t, mi->L->heap_cookie, main_word, &ms);
	return ms.found;
}

/* The heaps the pages name, and the others their threads' tlds list.  */
static enum hw_status read_heaps(struct mi_state *mi)
{
	uint32_t cap = 0;
	uint64_t last = 0;
	for (uint32_t i = 0; i < mi->npages; i++) {
		uint64_t a = mi->pages[i].heap;
		if (!a || a == last)
			continue;
		last = a;
		if (!add_heap(mi, a, &cap))
			return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	}
	const struct mi_layout *L = mi->L;
	for (uint32_t k = 0, n = mi->nheaps; k < n; k++) {
		uint64_t tld = mi->heaps[k].tld, h;
		if (!tld || !hw_read_u64(mi->t, tld + L->tld_heaps, &h))
			continue;
		for (unsigned j = 0; h && j < MAX_THREAD_HEAPS; j++) {
			if (!add_heap(mi, h, &cap))
				return hw_error(mi->s, HW_NO_ALLOCATOR,
						"out of memory");
			if (!hw_read_u64(mi->t, h + L->heap_next, &h))
				break;
		}
	}
	bool have_main = false;
	for (uint32_t k = 0; k < mi->nheaps; k++)
		have_main |= mi->heaps[k].main;
	uint64_t h;
	if (!have_main && (h = find_main_heap(mi)) && !add_heap(mi, h, &cap))
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	mi_sort_heaps(mi);
	for (uint32_t k = 0; k < mi->nheaps; k++)
		if (mi->heaps[k].main)
			mi->main_heap = mi->heaps[k].addr;
	/* A segment's free slices count with its owner's backing heap.  */
	for (uint32_t i = 0; i < mi->nsegments; i++) {
		struct mi_segment *sg = &mi->segments[i];
		sg->heap_index = -1;
		for (uint32_t k = 0; k < mi->nheaps && sg->thread_id; k++)
			if (mi->heaps[k].backing &&
			    mi->heaps[k].thread_id == sg->thread_id)
				sg->heap_index = (int32_t)k;
	}
	for (uint32_t i = 0; i < mi->npages; i++) {
		struct mi_page *pg = &mi->pages[i];
		if (!pg->heap)
			continue;
		pg->heap_index = mi_heap_index(mi, pg->heap);
		if (pg->heap_index >= 0)
			mi->heaps[pg->heap_index].npages++;
	}
	return HW_OK;
}

enum hw_status mi_read_pages(struct mi_state *mi)
{
	const struct mi_layout *L = mi->L;
	uint8_t *buf = malloc(L->seg_slices +
			      (size_t)L->slices_per_segment * L->page_size);
	if (!buf)
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	uint32_t cap = 0;
	enum hw_status st = HW_OK;
	for (uint32_t si = 0; si < mi->nsegments && st == HW_OK; si++)
		st = read_segment(mi, si, buf, &cap);
	free(buf);
	if (st != HW_OK)
		return st;
	st = read_heaps(mi);
	if (st != HW_OK)
		return st;
	if (mi->main_heap)
		mi->home = mi_file_holding(mi->t, mi->main_heap);
	return HW_OK;
}

uint32_t mi_page_of(const struct mi_state *mi, uint64_t addr)
{
	uint32_t lo = 0, hi = mi->npages;
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (mi->pages[m].end <= addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < mi->npages && mi->pages[lo].area <= addr ? lo : MI_NONE;
}

uint32_t mi_segment_of(const struct mi_state *mi, uint64_t addr)
{
	uint32_t lo = 0, hi = mi->nsegments;
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (mi->segments[m].addr + mi->segments[m].size <= addr)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < mi->nsegments && mi->segments[lo].addr <= addr ? lo
								   : MI_NONE;
}
