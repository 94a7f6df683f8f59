/* v3.c - mimalloc 3.x: every page found through the page map, and the
 * arenas and heaps its pages name, read into the state 2.x's segments
 * fill (mimalloc.h), so that lists.c, walk.c and the reports work on it
 * unchanged.
 *
 * 3.x has no segments and no cookie to find them by.  Its page map
 * (_mi_page_map, hidden in .bss) is a table of sub-map pointers, and
 * _mi_page_map_init points its first entry just past the table (the
 * reserved first sub-map): a word P of mimalloc's data with *P == P +
 * the table's size is the root.  Every non-null sub-map entry is a
 * page (a page names itself in each of its first slices); a page's
 * memid names its arena (or the OS memory it has alone), its owner
 * field its heap (a thread's theap in 3.4).  An arena stands for a
 * segment: its header slices, its pages, its free slices between them
 * (committed or not by the arena's own bitmap); an OS page for a huge
 * segment.  There is no heap delayed-free list: every block another
 * thread frees is on its page's xthread_free (whose low bit is 3.x's
 * "owned" flag, not v2's delayed state).
 */
#include <stdlib.h>
#include <string.h>

#include "../../sym/sym.h"
#include "../module.h"
#include "mimalloc.h"
#include "v3layout.h"

/* No process has more pages than this (4 M pages of 64 KiB: 256 GiB),
   nor a thread more heaps.  */
#define MAX_PAGES (1u << 22)
#define MAX_THREAD_HEAPS 4096
/* An arena is at most this many slices (mimalloc's largest, 2^26 of
   64 KiB: 4 TiB).  */
#define MAX_ARENA_SLICES (1ull << 26)

struct words {
	uint64_t *v;
	size_t n, cap;
};

static bool push(struct words *w, uint64_t x)
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
static void uniq(struct words *w)
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

/* The root, or 0 when there is none; *file the file holding it.  */
static uint64_t find_root(struct mi_state *mi, uint32_t map_size,
			  const char **file)
{
	struct root_search rs = { mi->t, map_size, 0, NULL };
	mi_file_words(mi->t, 0, root_word, &rs);
	*file = rs.file;
	return rs.root;
}

/* The nonzero words of [a, a + n * 8) into out (the core's holes, never
   written, are zeros), but for the first when skip_first.  */
static bool nonzero_words(struct hw_target *t, uint64_t a, uint64_t n,
			  bool skip_first, struct words *out, size_t limit)
{
	uint64_t end = a + n * 8;
	for (uint64_t x = a; x < end;) {
		const uint8_t *p;
		uint64_t run = hw_readable_run(t, x, &p);
		if (!run) {
			x = (hw_next_readable(t, x, end) + 7) & ~7ull;
			continue;
		}
		uint64_t stop = x + run < end ? x + run : end, w;
		for (uint64_t y = x; y + 8 <= stop; y += 8) {
			memcpy(&w, p + (y - x), 8);
			if (!w || (skip_first && y == a))
				continue;
			/* (A page names itself in each of its slices: keep
			   each once.)  */
			if (out->n && out->v[out->n - 1] == w)
				continue;
			if (out->n >= limit || !push(out, w))
				return false;
		}
		x = stop;
	}
	return true;
}

/* Every page the map at root names, each once.  */
static enum hw_status map_pages(struct mi_state *mi, uint64_t root,
				const struct mi_v3_layout *V, struct words *pages)
{
	struct words subs = { 0 };
	enum hw_status st = HW_OK;
	if (!nonzero_words(mi->t, root, V->map_size / 8, false, &subs,
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
		if (!nonzero_words(mi->t, subs.v[i], V->sub_count,
				   subs.v[i] == root + V->map_size, pages,
				   MAX_PAGES))
			st = pages->n >= MAX_PAGES
				     ? hw_error(mi->s, HW_NO_ALLOCATOR, "mimalloc "
						"page map 0x%llx: more than %u "
						"pages", (unsigned long long)root,
						MAX_PAGES)
				     : hw_error(mi->s, HW_NO_ALLOCATOR,
						"out of memory");
	}
	free(subs.v);
	uniq(pages);
	return st;
}

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
	if (kind == MI_V3_MEM_ARENA) {
		uint64_t idx = mi_get(p, V->pg_memid + V->mem_slice_index, 4);
		uint64_t cnt = mi_get(p, V->pg_memid + V->mem_slice_count, 4);
		if (!m0 || (m0 & 0xffff) || !cnt || idx + cnt > MAX_ARENA_SLICES) {
			*bad = "its memid names no arena slices";
			return false;
		}
		*arena = m0;
		pg->area = m0 + (idx << 16);
		pg->end = pg->area + (cnt << 16);
	} else if (kind >= MI_V3_MEM_OS && kind <= MI_V3_MEM_OS_REMAP) {
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
	uint64_t s = V->start_words ? a + 8 * mi_get(p, V->pg_start, 4)
				    : mi_get(p, V->pg_start, 8);
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

/* The row most of the map's pages agree with; their count.  */
static const struct mi_v3_layout *pick_layout(struct mi_state *mi,
					      const struct words *pages,
					      size_t *agree)
{
	unsigned nl;
	const struct mi_v3_layout *ls = mi_v3_layouts(&nl), *best = NULL;
	*agree = 0;
	for (unsigned k = 0; k < nl; k++) {
		size_t ok = 0;
		for (size_t i = 0; i < pages->n; i++) {
			struct mi_page pg;
			uint64_t arena;
			const char *bad;
			ok += page_decode(mi->t, &ls[k], pages->v[i], &pg, &arena,
					  &bad) && !bad;
		}
		if (ok > *agree) {
			*agree = ok;
			best = &ls[k];
		}
	}
	return best;
}

/* The segment (arena, or a page's own OS memory) at addr, added once.  */
static int32_t add_segment(struct mi_state *mi, const struct mi_v3_layout *V,
			   uint64_t addr, uint64_t os_end, uint32_t *cap)
{
	for (uint32_t k = 0; k < mi->nsegments; k++)
		if (mi->segments[k].addr == addr)
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
	sg->addr = addr;
	sg->heap_index = -1;
	if (os_end) {
		sg->size = os_end - addr;
		sg->kind = MI_SEGMENT_HUGE;
		return (int32_t)mi->nsegments++;
	}
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

/* Is the arena page pg (its struct at a, from slice idx of arena) a
   page in use by its arena's pages bitmap?  (True when the row has no
   such bitmap or the core lacks it.)  */
static bool arena_page_live(struct hw_target *t, const struct mi_v3_layout *V,
			    uint64_t arena, const struct mi_page *pg)
{
	uint64_t bits, w;
	if (V->ar_pages == MI_NO_FIELD ||
	    !hw_read_u64(t, arena + V->ar_pages, &bits) || !bits)
		return true;
	uint64_t idx = (pg->area - arena) >> 16;
	if (!hw_read_u64(t, bits + V->bitmap_bits + idx / 64 * 8, &w))
		return true;
	return w >> (idx % 64) & 1;
}

/* The pages at the map's addresses, under V, with their segments.  */
static enum hw_status read_pages(struct mi_state *mi,
				 const struct mi_v3_layout *V,
				 const struct words *at)
{
	uint32_t pcap = 0, scap = 0;
	for (size_t i = 0; i < at->n; i++) {
		struct mi_page pg;
		uint64_t arena;
		const char *bad;
		bool placed = page_decode(mi->t, V, at->v[i], &pg, &arena, &bad);
		/* (A stale entry of 3.0.1's map: memory that was a page.)  */
		if ((!placed && V->ar_pages != MI_NO_FIELD) ||
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
			if (next > at_) {
				if (!mi_grow((void **)&mi->pages, mi->npages, &pcap,
					  sizeof *mi->pages))
					return hw_error(mi->s, HW_NO_ALLOCATOR,
							"out of memory");
				struct mi_page *sp = &mi->pages[mi->npages++];
				memset(sp, 0, sizeof *sp);
				sp->meta = sp->area = sp->start = at_;
				sp->end = next;
				sp->heap_index = -1;
			}
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
	uint64_t tld, cookie, count, tid = 0, back = 0;
	if (!hw_read_u64(mi->t, a + V->hp_tld, &tld) ||
	    !hw_read_u64(mi->t, a + V->hp_cookie, &cookie) ||
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
	if (tld && hw_read_u64(mi->t, tld + V->tld_thread_id, &tid))
		hp->thread_id = tid;
	/* 3.4's tld names no backing heap: its thread's every theap is
	   where it allocates (one a heap).  */
	hp->backing = V->tld_heap_backing == MI_NO_FIELD
			      ? tld != 0
			      : tld && hw_read_u64(mi->t,
						   tld + V->tld_heap_backing,
						   &back) && back == a;
	/* The main heap is static (heap_main, 3.4: theap_main): in
	   mimalloc's own data, where no thread's heap is.  */
	hp->main = mi_file_holding(mi->t, a) != NULL;
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
	for (uint32_t k = 0; k < mi->nheaps; k++)
		if (mi->heaps[k].main && !mi->main_heap) {
			mi->main_heap = mi->heaps[k].addr;
			mi->key = mi->heaps[k].cookie;
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

enum hw_status mi_v3_find(struct mi_state *mi)
{
	unsigned nl;
	const struct mi_v3_layout *ls = mi_v3_layouts(&nl);
	const char *file = NULL;
	uint64_t root = 0;
	if (!worth_search(mi))
		return HW_NO_ALLOCATOR;
	/* Each map size the rows have, once.  */
	for (unsigned k = 0; k < nl && !root; k++) {
		bool seen = false;
		for (unsigned j = 0; j < k; j++)
			seen |= ls[j].map_size == ls[k].map_size;
		if (!seen)
			root = find_root(mi, ls[k].map_size, &file);
	}
	if (!root)
		return HW_NO_ALLOCATOR;
	struct words at = { 0 };
	enum hw_status st = map_pages(mi, root, &ls[0], &at);
	size_t agree = 0;
	const struct mi_v3_layout *V = st == HW_OK && at.n
					       ? pick_layout(mi, &at, &agree)
					       : NULL;
	if (st == HW_OK && !V) {
		free(at.v);
		return HW_NO_ALLOCATOR;
	}
	if (st == HW_OK) {
		mi->L = &V->base;
		mi->v3 = true;
		mi->home = file;
		mi->how = "the page map (_mi_page_map: the word of mimalloc's "
			  "data whose table's first entry points just past "
			  "the table); arenas from its pages' memids, heaps "
			  "from its pages' owners";
		st = read_pages(mi, V, &at);
	}
	free(at.v);
	if (st == HW_OK)
		st = read_heaps(mi, V);
	return st;
}
