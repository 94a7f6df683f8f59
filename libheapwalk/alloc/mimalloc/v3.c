/* v3.c - mimalloc 3.x: every page its page maps name (v3map.c finds
 * them), and the arenas and heaps its pages name, read into the state
 * 2.x's segments fill (mimalloc.h), so that lists.c, walk.c and the
 * reports work on it unchanged.
 *
 * 3.x has no segments and no cookie to find them by.  A word a map
 * names is a page when it decodes under a layout row (v3layout.c): its
 * memid names its arena (or the OS memory it has alone), its first
 * block and counts fit there, and the map's entry for that first block
 * names it and its pages bitmap has it (maps keep the entries of pages
 * freed).  Its owner field names its heap (3.2 on: a thread's theap).
 * An arena stands for a segment: its header slices, its pages, its
 * free slices between them (committed or not by the arena's own
 * bitmap); an OS page for a huge segment.  There is no heap delayed-
 * free list: every block another thread frees is on its page's
 * xthread_free (whose low bit is 3.x's "owned" flag, not v2's delayed
 * state).  3.6.0's own counters are read from its subprocess and heaps.
 */
#include <stdlib.h>
#include <string.h>

#include "../../sym/sym.h"
#include "../module.h"
#include "mimalloc.h"
#include "v3layout.h"
#include "v3map.h"

/* No thread has more heaps than this.  */
#define MAX_THREAD_HEAPS 4096
/* An arena is at most this many slices (mimalloc's largest, 2^26 of
   64 KiB: 4 TiB).  */
#define MAX_ARENA_SLICES (1ull << 26)

/* The page whose struct is at a, under row V, into pg: false (with
   *bad) when its memory cannot be placed (its memid, its first block,
   its block counts disagree); true with *bad set when only its lists'
   heads are wrong.  *arena: its arena, 0 for OS memory.  */
static bool page_decode(struct hw_target *t, const struct mi_v3_layout *V,
			uint64_t a, struct mi_page *pg, uint64_t *arena,
			const char **bad)
{
	uint8_t p[256];
	memset(pg, 0, sizeof *pg);
	pg->meta = a;
	pg->heap_index = -1;
	*bad = NULL;
	*arena = 0;
	if (V->base.page_size > sizeof p || !hw_read(t, a, p, V->base.page_size)) {
		*bad = "its page struct is not readable";
		return false;
	}
	uint64_t bs = mi_get(p, V->pg_block_size, 8);
	uint64_t kind = mi_get(p, V->pg_memid + V->mem_kind, 4);
	uint64_t m0 = mi_get(p, V->pg_memid + V->mem_arena, 8);
	if (kind == V->kind_arena) {
		uint64_t idx = mi_get(p, V->pg_memid + V->mem_slice_index, 4);
		uint64_t cnt = mi_get(p, V->pg_memid + V->mem_slice_count, 4);
		/* (3.6: the arena's slices begin where its struct says, its
		   chunk map before the struct.)  */
		uint64_t base = m0;
		if (V->ar_start != MI_NO_FIELD &&
		    (!m0 || !hw_read_u64(t, m0 + V->ar_start, &base) ||
		     base > m0))
			base = 0;
		if (!m0 || (m0 & 0x7f) || !base || (base & 0xffff) || !cnt ||
		    idx + cnt > MAX_ARENA_SLICES) {
			*bad = "its memid names no arena slices";
			return false;
		}
		*arena = m0;
		pg->area = base + (idx << 16);
		pg->end = pg->area + (cnt << 16);
	} else if (kind >= V->kind_os && kind <= V->kind_os_last) {
		uint64_t size = mi_get(p, V->pg_memid + V->mem_os_size, 8);
		if (!m0 || !size || size > (1ull << 44)) {
			*bad = "its memid names no OS memory";
			return false;
		}
		pg->area = m0;
		pg->end = m0 + size;
	} else {
		*bad = "its memid is of no kind a page has";
		return false;
	}
	uint64_t s;
	switch (V->start_kind) {
	case MI_V3_START_WORDS:
		s = a + 8 * mi_get(p, V->pg_start, 4);
		break;
	case MI_V3_START_BYTES:
		s = a + mi_get(p, V->pg_start, 8);
		break;
	default:
		s = mi_get(p, V->pg_start, 8);
		break;
	}
	pg->start = s;
	pg->block_size = bs;
	pg->capacity = (uint32_t)mi_get(p, V->pg_capacity, 2);
	pg->reserved = (uint32_t)mi_get(p, V->pg_reserved, 2);
	pg->used = (uint32_t)mi_get(p, V->pg_used, 2);
	if (!bs || bs >= 1ull << 44 || s < pg->area || s >= pg->end ||
	    pg->reserved > (pg->end - s) / bs || pg->capacity > pg->reserved ||
	    pg->used > pg->capacity) {
		*bad = "its first block and counts do not fit its memory";
		return false;
	}
	uint64_t tid = mi_get(p, V->pg_thread_id, 8);
	pg->flags = (uint8_t)(tid & 3);
	pg->free = mi_get(p, V->pg_free, 8);
	pg->local_free = mi_get(p, V->pg_local_free, 8);
	uint64_t xt = mi_get(p, V->pg_xthread_free, 8);
	pg->thread_free = xt & ~3ull;
	pg->delayed = (uint8_t)(xt & 1);        /* 3.x: "owned" */
	pg->heap = mi_get(p, V->pg_heap, 8);
	if (V->pg_keys != MI_NO_FIELD) {
		pg->keys[0] = mi_get(p, V->pg_keys, 8);
		pg->keys[1] = mi_get(p, V->pg_keys + 8, 8);
	}
	if (V->pg_tag != MI_NO_FIELD)
		pg->tag = p[V->pg_tag];
	pg->bin = (uint16_t)mi_bin_of(bs);
	const uint64_t heads[3] = { pg->free, pg->local_free, pg->thread_free };
	for (unsigned k = 0; k < 3 && !*bad; k++)
		if (heads[k] && (heads[k] < s || (heads[k] - s) % bs ||
				 (heads[k] - s) / bs >= pg->capacity))
			*bad = "a list's head is none of its blocks";
	if (pg->heap & 7)
		*bad = "its heap pointer is not a heap's";
	return true;
}

/* Is the page at a, decoded into pg, the one its map names for its
   first block?  (A chunk map's slot of a page freed and reused names
   the page that reused it; the old struct, in a slot still, names
   itself.)  */
static bool named_by_map(struct hw_target *t, const struct mi_v3_layout *V,
			 uint64_t a, const struct mi_page *pg)
{
	uint64_t w;
	return V->map != MI_V3_MAP_CHUNKS ||
	       (hw_read_u64(t, mi_v3_slot(V, pg->start), &w) && w == a);
}

/* Does the arena of an arena page (its struct at arena) hold the page
   by its header, under V?  Its slices must cover the page, and its
   bitmaps be where V says: slices_free and slices_committed, one after
   the other, point into its header slices, and the word before them
   (a time, a callback's argument or a parent arena, never a bitmap)
   does not.  Releases whose pages look alike (3.0 and 3.1, 3.2 and 3.3)
   differ there; memory at a chunk's boundary that only looks like a
   page's struct names no arena at all.  */
static bool arena_holds(struct hw_target *t, const struct mi_v3_layout *V,
			uint64_t arena, const struct mi_page *pg)
{
	uint64_t count, info, base = arena, w[3];
	if (!arena)
		return true;
	if (V->ar_start != MI_NO_FIELD &&
	    !hw_read_u64(t, arena + V->ar_start, &base))
		return false;
	if (!hw_read_u64(t, arena + V->ar_slice_count, &count) || !count ||
	    count > MAX_ARENA_SLICES || pg->area < base ||
	    pg->end > base + (count << 16) ||
	    !hw_read_u64(t, arena + V->ar_info_slices, &info) ||
	    !info || info >= count || !hw_read(t, arena + V->ar_committed - 16,
					       w, sizeof w))
		return false;
	uint64_t lo = arena, hi = base + (info << 16);
	return w[1] > lo && w[1] < hi && w[2] > w[1] && w[2] < hi &&
	       (w[0] <= lo || w[0] >= hi);
}

/* The row of map kind `map` most of the pages agree with, or NULL.  */
static const struct mi_v3_layout *pick_layout(struct mi_state *mi,
					      enum mi_v3_map map,
					      const struct mi_words *pages)
{
	unsigned nl;
	const struct mi_v3_layout *ls = mi_v3_layouts(&nl), *best = NULL;
	size_t most = 0;
	for (unsigned k = 0; k < nl; k++) {
		size_t ok = 0;
		if (ls[k].map != map)
			continue;
		for (size_t i = 0; i < pages->n; i++) {
			struct mi_page pg;
			uint64_t arena;
			const char *bad;
			ok += page_decode(mi->t, &ls[k], pages->v[i], &pg, &arena,
					  &bad) && !bad &&
			      named_by_map(mi->t, &ls[k], pages->v[i], &pg) &&
			      arena_holds(mi->t, &ls[k], arena, &pg);
		}
		if (ok > most) {
			most = ok;
			best = &ls[k];
		}
	}
	return best;
}

/* The segment (the arena whose struct is at addr, or, os_end nonzero,
   a page's own OS memory [addr, os_end)), added once.  */
static int32_t add_segment(struct mi_state *mi, const struct mi_v3_layout *V,
			   uint64_t addr, uint64_t os_end, uint32_t *cap)
{
	uint64_t base = addr;
	if (!os_end && V->ar_start != MI_NO_FIELD &&
	    !hw_read_u64(mi->t, addr + V->ar_start, &base))
		base = addr;
	for (uint32_t k = 0; k < mi->nsegments; k++)
		if (mi->segments[k].addr == base)
			return (int32_t)k;
	uint64_t count = 0, info = 0, committed = 0;
	if (!os_end &&
	    (!hw_read_u64(mi->t, addr + V->ar_slice_count, &count) ||
	     !hw_read_u64(mi->t, addr + V->ar_info_slices, &info) ||
	     !hw_read_u64(mi->t, addr + V->ar_committed, &committed) ||
	     !count || count > MAX_ARENA_SLICES || info >= count)) {
		hw_finding(mi->s, addr, "mimalloc arena 0x%llx, named by its "
			   "pages, has no readable header of %llu slices",
			   (unsigned long long)addr, (unsigned long long)count);
		return -1;
	}
	if (!mi_grow((void **)&mi->segments, mi->nsegments, cap,
		  sizeof *mi->segments))
		return -2;
	struct mi_segment *sg = &mi->segments[mi->nsegments];
	memset(sg, 0, sizeof *sg);
	sg->addr = base;
	sg->heap_index = -1;
	if (os_end) {
		sg->size = os_end - addr;
		sg->kind = MI_SEGMENT_HUGE;
		return (int32_t)mi->nsegments++;
	}
	sg->arena = addr;
	sg->size = count << 16;
	sg->info_size = info << 16;
	sg->kind = MI_SEGMENT_NORMAL;
	/* Its committed slices, a bit each; unread (all committed) when
	   the core lacks them.  */
	uint64_t words = (count + 63) / 64;
	sg->commit_bits = malloc(words * 8);
	if (!sg->commit_bits)
		return -2;
	if (!committed || !hw_read(mi->t, committed + V->bitmap_bits,
				   sg->commit_bits, words * 8)) {
		free(sg->commit_bits);
		sg->commit_bits = NULL;
	}
	return (int32_t)mi->nsegments++;
}

static int page_cmp(const void *x, const void *y)
{
	const struct mi_page *a = x, *b = y;
	return a->area < b->area ? -1 : a->area > b->area;
}

static int seg_cmp(const void *x, const void *y)
{
	const struct mi_segment *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Is the arena page pg (of the arena whose struct is at arena) a page
   in use by its pages bitmap?  (True when the row has no such bitmap
   or the core lacks it.)  */
static bool arena_page_live(struct hw_target *t, const struct mi_v3_layout *V,
			    uint64_t arena, const struct mi_page *pg)
{
	uint64_t bits = 0, w, heap, index, pages;
	uint32_t idx;
	if (V->ar_pages != MI_NO_FIELD) {
		if (!hw_read_u64(t, arena + V->ar_pages, &bits))
			return true;
	} else if (V->hp_arena_pages != MI_NO_FIELD) {
		/* (3.6: each heap has its own pages bitmaps, an arena's at
		   the arena's index in the heap's array.)  */
		if (!hw_read_u64(t, pg->meta + V->pg_shared_heap, &heap) ||
		    !heap || !hw_read_u64(t, arena + V->ar_index, &index) ||
		    index >= 4096 ||
		    !hw_read_u64(t, heap + V->hp_arena_pages + 8 * index,
				 &pages) ||
		    !pages || !hw_read_u64(t, pages, &bits))
			return true;
	}
	if (!bits || !hw_read(t, pg->meta + V->pg_memid + V->mem_slice_index,
			      &idx, 4) ||
	    !hw_read_u64(t, bits + V->bitmap_bits + idx / 64 * 8, &w))
		return true;
	return w >> (idx % 64) & 1;
}

/* Does the row's map keep the entries of pages freed (v3layout.h)?  */
static bool stale_entries(const struct mi_v3_layout *V)
{
	return V->map == MI_V3_MAP_CHUNKS || V->ar_pages != MI_NO_FIELD;
}

/* Adds the free span [at, end) of an arena, less the chunk maps in it
   (3.6: each 256 MiB of an arena after its first begins with one).  */
static bool add_free_span(struct mi_state *mi, const struct mi_v3_layout *V,
			  uint64_t at, uint64_t end, uint32_t *cap)
{
	uint64_t chunk = 0, map = 0;
	if (V->map == MI_V3_MAP_CHUNKS) {
		chunk = 1ull << V->chunk_shift;
		map = ((chunk >> V->base.slice_shift) * V->slot_size + 0xffff) &
		      ~0xffffull;
	}
	while (at < end) {
		uint64_t stop = end;
		if (chunk) {
			uint64_t c = at & ~(chunk - 1);
			if (at < c + map) {
				at = c + map;
				continue;
			}
			if (c + chunk < end)
				stop = c + chunk;
		}
		if (stop > at) {
			if (!mi_grow((void **)&mi->pages, mi->npages, cap,
				     sizeof *mi->pages))
				return false;
			struct mi_page *sp = &mi->pages[mi->npages++];
			memset(sp, 0, sizeof *sp);
			sp->meta = sp->area = sp->start = at;
			sp->end = stop;
			sp->heap_index = -1;
		}
		at = stop;
	}
	return true;
}

/* The pages at the map's addresses, under V, with their segments.  */
static enum hw_status read_pages(struct mi_state *mi,
				 const struct mi_v3_layout *V,
				 const struct mi_words *at)
{
	uint32_t pcap = 0, scap = 0;
	for (size_t i = 0; i < at->n; i++) {
		struct mi_page pg;
		uint64_t arena;
		const char *bad;
		bool placed = page_decode(mi->t, V, at->v[i], &pg, &arena, &bad);
		/* (A stale entry of 3.0.1's map: memory that was a page.)  */
		if ((!placed && stale_entries(V)) ||
		    (placed && !named_by_map(mi->t, V, at->v[i], &pg)) ||
		    (placed && arena && !arena_page_live(mi->t, V, arena, &pg)))
			continue;
		if (bad)
			hw_finding(mi->s, at->v[i], "mimalloc page 0x%llx: %s "
				   "(%u blocks of %llu bytes)%s",
				   (unsigned long long)at->v[i], bad,
				   pg.capacity, (unsigned long long)pg.block_size,
				   placed ? "" : "; left out");
		if (!placed)
			continue;
		pg.lists_bad = bad != NULL;
		int32_t si = add_segment(mi, V, arena ? arena : pg.area,
					 arena ? 0 : pg.end, &scap);
		if (si == -2 || !mi_grow((void **)&mi->pages, mi->npages, &pcap,
				      sizeof *mi->pages))
			return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
		if (si < 0)
			continue;
		if (arena && pg.end > arena + mi->segments[si].size) {
			hw_finding(mi->s, at->v[i], "mimalloc page 0x%llx: its "
				   "slices run past its arena 0x%llx",
				   (unsigned long long)at->v[i],
				   (unsigned long long)arena);
			continue;
		}
		mi->pages[mi->npages++] = pg;
	}
	if (mi->npages)
		qsort(mi->pages, mi->npages, sizeof *mi->pages, page_cmp);
	/* Pages that overlap one another: the later is damage.  */
	uint32_t k = 0;
	for (uint32_t i = 0; i < mi->npages; i++) {
		if (k && mi->pages[i].area < mi->pages[k - 1].end) {
			hw_finding(mi->s, mi->pages[i].meta, "mimalloc page "
				   "0x%llx: its memory overlaps page 0x%llx's; "
				   "left out", (unsigned long long)mi->pages[i].meta,
				   (unsigned long long)mi->pages[k - 1].meta);
			continue;
		}
		mi->pages[k++] = mi->pages[i];
	}
	mi->npages = k;
	/* Each arena's free slices: the runs between its header and
	   pages, as free spans (block size 0).  */
	uint32_t n = mi->npages;
	for (uint32_t s = 0; s < mi->nsegments; s++) {
		const struct mi_segment *sg = &mi->segments[s];
		if (sg->kind == MI_SEGMENT_HUGE)
			continue;
		uint64_t at_ = sg->addr + sg->info_size, end = sg->addr + sg->size;
		for (uint32_t i = 0; i <= n && at_ < end; i++) {
			uint64_t next = end;
			if (i < n && (mi->pages[i].area < sg->addr ||
				      mi->pages[i].area >= end))
				continue;
			if (i < n)
				next = mi->pages[i].area;
			if (next > at_ &&
			    !add_free_span(mi, V, at_, next, &pcap))
				return hw_error(mi->s, HW_NO_ALLOCATOR,
						"out of memory");
			if (i < n && mi->pages[i].end > at_)
				at_ = mi->pages[i].end;
		}
	}
	if (mi->npages)
		qsort(mi->pages, mi->npages, sizeof *mi->pages, page_cmp);
	if (mi->nsegments)
		qsort(mi->segments, mi->nsegments, sizeof *mi->segments, seg_cmp);
	for (uint32_t s = 0; s < mi->nsegments; s++)
		mi->held += mi->segments[s].size;
	for (uint32_t i = 0; i < mi->npages; i++) {
		struct mi_page *pg = &mi->pages[i];
		uint32_t s = mi_segment_of(mi, pg->area);
		pg->segment = s == MI_NONE ? 0 : s;
		struct mi_segment *sg = &mi->segments[pg->segment];
		if (!sg->npages && !sg->free_slices)
			sg->first_page = i;
		if (pg->block_size)
			sg->npages++;
		else
			sg->free_slices += (uint32_t)((pg->end - pg->area) >> 16);
	}
	/* (An arena keeps no count of its pages: what check.c weighs a
	   segment's own count against is the count found.)  */
	for (uint32_t s = 0; s < mi->nsegments; s++)
		mi->segments[s].used = mi->segments[s].npages;
	return HW_OK;
}

/* The heap (3.4: theap) at a, added once, read.  */
static bool add_heap(struct mi_state *mi, const struct mi_v3_layout *V,
		     uint64_t a, uint32_t *cap)
{
	for (uint32_t k = 0; k < mi->nheaps; k++)
		if (mi->heaps[k].addr == a)
			return true;
	uint64_t tld, cookie = 0, count, tid = 0, back = 0;
	if (!hw_read_u64(mi->t, a + V->hp_tld, &tld) ||
	    (V->hp_cookie != MI_NO_FIELD &&
	     !hw_read_u64(mi->t, a + V->hp_cookie, &cookie)) ||
	    !hw_read_u64(mi->t, a + V->hp_page_count, &count)) {
		hw_finding(mi->s, a, "mimalloc heap 0x%llx, named by its "
			   "pages, is not readable", (unsigned long long)a);
		return true;
	}
	if (!mi_grow((void **)&mi->heaps, mi->nheaps, cap, sizeof *mi->heaps))
		return false;
	struct mi_heap *hp = &mi->heaps[mi->nheaps++];
	memset(hp, 0, sizeof *hp);
	hp->addr = a;
	hp->tld = tld;
	hp->cookie = cookie;
	hp->page_count = count;
	hp->tag = -1;
	uint8_t tag;
	if (V->hp_tag != MI_NO_FIELD && hw_read(mi->t, a + V->hp_tag, &tag, 1))
		hp->tag = tag;
	if (V->hp_shared != MI_NO_FIELD)
		(void)hw_read_u64(mi->t, a + V->hp_shared, &hp->shared);
	/* (3.6's own allocations, theaps among them, come from a theap of
	   a tld whose thread id is 8, no thread's.)  */
	if (tld && hw_read_u64(mi->t, tld + V->tld_thread_id, &tid)) {
		if (tid > V->tid_reserved)
			hp->thread_id = tid;
		else
			hp->own = V->tid_reserved != 0;
	}
	/* 3.4's tld names no backing heap: its thread's every theap is
	   where it allocates (one a heap).  */
	hp->backing = V->tld_heap_backing == MI_NO_FIELD
			      ? tld != 0 && !hp->own
			      : tld && hw_read_u64(mi->t,
						   tld + V->tld_heap_backing,
						   &back) && back == a;
	/* The main heap is static (heap_main, 3.4: theap_main): in
	   mimalloc's own data, where no thread's heap is, and a thread's
	   (3.6 keeps its own theap there too).  */
	hp->main = mi_file_holding(mi->t, a) != NULL &&
		   (hp->thread_id || !V->tid_reserved);
	return true;
}

/* The heaps the pages name, and the others their threads' tlds list.  */
static enum hw_status read_heaps(struct mi_state *mi,
				 const struct mi_v3_layout *V)
{
	uint32_t cap = 0;
	for (uint32_t i = 0; i < mi->npages; i++)
		if (mi->pages[i].heap && !add_heap(mi, V, mi->pages[i].heap, &cap))
			return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	for (uint32_t k = 0, n = mi->nheaps; k < n; k++) {
		uint64_t tld = mi->heaps[k].tld, h;
		if (!tld || !hw_read_u64(mi->t, tld + V->tld_heaps, &h))
			continue;
		for (unsigned j = 0; h && !(h & 7) && j < MAX_THREAD_HEAPS; j++) {
			if (!add_heap(mi, V, h, &cap))
				return hw_error(mi->s, HW_NO_ALLOCATOR,
						"out of memory");
			if (!hw_read_u64(mi->t, h + V->hp_next, &h))
				break;
		}
	}
	mi_sort_heaps(mi);
	uint64_t shared = 0;
	for (uint32_t k = 0; k < mi->nheaps; k++)
		if (mi->heaps[k].main && !mi->main_heap) {
			mi->main_heap = mi->heaps[k].addr;
			mi->key = mi->heaps[k].cookie;
			shared = mi->heaps[k].shared;
		}
	/* (3.4+: a thread's theap of a heap the program made, not of the
	   main heap, is that heap's, not the thread's own.)  */
	for (uint32_t k = 0; shared && k < mi->nheaps; k++)
		if (mi->heaps[k].shared && mi->heaps[k].shared != shared)
			mi->heaps[k].backing = false;
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

/* Is the target worth the root's search, a pass over every mapped
   file's writable data?  Where mimalloc's library is mapped, or a file
   whose symbols name mimalloc (a program with 3.x built in, not
   stripped).  Every other target (glibc's programs, most of them) is
   spared the pass: a stripped program with 3.x built in is not found
   (doc/allocators/mimalloc.md says so).  */
static bool worth_search(struct mi_state *mi)
{
	struct hw_target *t = mi->t;
	if (mi_library_file(t))
		return true;
	uint64_t lo, hi, addr, size;
	struct hw_module m;
	return mi->s->syms && t->exe && hw_file_range(t, t->exe, &lo, &hi) &&
	       hw_syms_module_at(mi->s->syms, lo, &m) &&
	       (hw_syms_lookup(mi->s->syms, &m, "_mi_page_map", &addr, &size,
			       NULL) ||
		hw_syms_lookup(mi->s->syms, &m, "mi_malloc", &addr, &size,
			       NULL));
}

/* Adds the mi_stats_t at a (stats version S) to st; false when a is
   not one (its size and version say so first).  */
static bool add_stats(struct hw_target *t, const struct mi_v3_stats *S,
		      uint64_t a, struct mi_own_stats *st)
{
	uint8_t buf[512];
	uint64_t size, version;
	if (S->arenas + 8u > sizeof buf || !hw_read(t, a, buf, S->arenas + 8u))
		return false;
	size = mi_get(buf, 0, 8);
	version = mi_get(buf, 8, 8);
	if (size != S->size || version != S->version)
		return false;
	const struct {
		uint16_t off;
		int64_t *v;
	} counts[] = {
		{ S->pages, st->pages }, { S->reserved, st->reserved },
		{ S->committed, st->committed },
		{ S->abandoned, st->abandoned }, { S->threads, st->threads },
		{ S->allocated, st->allocated },
	};
	for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		if (counts[k].off == MI_NO_FIELD)
			continue;
		for (unsigned j = 0; j < 3; j++)
			counts[k].v[j] += (int64_t)mi_get(buf, counts[k].off + 8 * j,
							  8);
	}
	st->arenas += (int64_t)mi_get(buf, S->arenas, 8);
	st->copies++;
	return true;
}

/* mimalloc's own counters: the subprocess's (the first arena's) and
   each mi_heap_t's, summed, as 3.6's mi_stats_print merges them.  */
static void read_stats(struct mi_state *mi, const struct mi_v3_layout *V)
{
	const struct mi_v3_stats *S = mi_v3_stats_layout(V->stats_version);
	struct mi_own_stats *st = &mi->stats;
	uint64_t subproc = 0;
	memset(st, 0, sizeof *st);
	mi->stats_why = "not read: this release keeps its counters where "
			"heapwalk does not read them; every figure is counted "
			"from the arenas and pages";
	if (!S)
		return;
	for (uint32_t s = 0; s < mi->nsegments && !subproc; s++) {
		uint64_t a = mi->segments[s].arena;
		if (a && !hw_read_u64(mi->t, a + 24, &subproc))
			subproc = 0;
	}
	if (!subproc || !add_stats(mi->t, S, subproc + V->sp_stats, st)) {
		memset(st, 0, sizeof *st);
		mi->stats_why = "not read: mimalloc's subprocess keeps no "
				"counters of the version its layout has there";
		return;
	}
	for (uint32_t k = 0; k < mi->nheaps; k++) {
		uint64_t h = mi->heaps[k].shared;
		bool seen = !h;
		for (uint32_t j = 0; j < k && !seen; j++)
			seen = mi->heaps[j].shared == h;
		if (!seen)
			(void)add_stats(mi->t, S, h + V->hp_stats, st);
	}
	st->read = true;
	st->has_allocated = S->allocated != MI_NO_FIELD;
	st->version = S->version;
}

/* The pages a map named (st: how finding them went), read under the
   row of kind `map` most of them agree with: their arenas, heaps and
   counters into mi; `at` freed.  file: the file holding the map, or
   NULL; how: how they were found, for summary.  */
static enum hw_status read_named(struct mi_state *mi, enum mi_v3_map map,
				 struct mi_words *at, enum hw_status st,
				 const char *file, const char *how)
{
	const struct mi_v3_layout *V =
		st == HW_OK && at->n ? pick_layout(mi, map, at) : NULL;
	if (st == HW_OK && !V)
		st = HW_NO_ALLOCATOR;
	if (st == HW_OK) {
		mi->L = &V->base;
		mi->v3 = true;
		mi->home = file;
		mi->how = how;
		st = read_pages(mi, V, at);
	}
	free(at->v);
	if (st == HW_OK)
		st = read_heaps(mi, V);
	if (st == HW_OK)
		read_stats(mi, V);
	/* (Where no root names the file: the library, or the file whose
	   data holds the main heap, a program with mimalloc built in.)  */
	if (st == HW_OK && !mi->home)
		mi->home = mi_library_file(mi->t);
	if (st == HW_OK && !mi->home && mi->main_heap)
		mi->home = mi_file_holding(mi->t, mi->main_heap);
	return st;
}

/* 3.6: the chunk maps, found by their shape anywhere in anonymous
   memory (no symbol, no root).  */
static enum hw_status find_by_chunks(struct mi_state *mi)
{
	unsigned nl;
	const struct mi_v3_layout *ls = mi_v3_layouts(&nl), *V = NULL;
	for (unsigned k = 0; k < nl && !V; k++)
		if (ls[k].map == MI_V3_MAP_CHUNKS)
			V = &ls[k];
	if (!V)
		return HW_NO_ALLOCATOR;
	struct mi_words at = { 0 };
	enum hw_status st = mi_v3_chunk_pages(mi, V, &at);
	return read_named(mi, MI_V3_MAP_CHUNKS, &at, st, NULL,
			  "the chunk maps (at every 256 MiB boundary of its "
			  "memory, a slot a slice naming its page); arenas "
			  "from its pages' memids, heaps from its pages' "
			  "owners");
}

/* 3.0 to 3.4: the one page map, from its root.  */
static enum hw_status find_by_root(struct mi_state *mi)
{
	unsigned nl;
	const struct mi_v3_layout *ls = mi_v3_layouts(&nl), *first = NULL;
	const char *file = NULL;
	uint64_t root = 0;
	if (!worth_search(mi))
		return HW_NO_ALLOCATOR;
	/* Each map size the rows have, once.  */
	for (unsigned k = 0; k < nl && !root; k++) {
		bool seen = ls[k].map != MI_V3_MAP_ROOT;
		for (unsigned j = 0; j < k; j++)
			seen |= ls[j].map == MI_V3_MAP_ROOT &&
				ls[j].map_size == ls[k].map_size;
		if (!seen) {
			root = mi_v3_find_root(mi, ls[k].map_size, &file);
			first = &ls[k];
		}
	}
	if (!root)
		return HW_NO_ALLOCATOR;
	struct mi_words at = { 0 };
	enum hw_status st = mi_v3_root_pages(mi, root, first, &at);
	return read_named(mi, MI_V3_MAP_ROOT, &at, st, file,
			  "the page map (_mi_page_map: the word of mimalloc's "
			  "data whose table's first entry points just past "
			  "the table); arenas from its pages' memids, heaps "
			  "from its pages' owners");
}

enum hw_status mi_v3_find(struct mi_state *mi)
{
	enum hw_status st = find_by_chunks(mi);
	return st == HW_NO_ALLOCATOR ? find_by_root(mi) : st;
}
