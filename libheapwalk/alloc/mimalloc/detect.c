/* detect.c - mimalloc found by its segments, with or without symbols.
 *
 * A stripped libmimalloc exports only its API, and a copy built into a
 * program (static, or CPython's) exports nothing; but every segment
 * mimalloc takes from the system is aligned to its size and begins with
 * a header that vouches for itself: its cookie is the main heap's cookie
 * XOR the segment's address, and its slice entries chain from the header
 * slices to the last entry.  So every address aligned so in the
 * target's anonymous memory is tried under each known layout; the
 * layout and cookie most segments agree on win, and where the main heap
 * turns out to be (the heap whose cookie it is) names the file mimalloc
 * lives in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../module.h"
#include "mimalloc.h"
#include "v3layout.h"

/* No process has more segments than this (2^20 of 32 MiB: 32 TiB).  */
#define MAX_SEGMENTS (1u << 20)

/* A segment candidate: where, of which layout and key.  */
struct cand {
	uint64_t addr, size, key;
	int64_t score;            /* its pages' agreement with the layout */
	uint64_t heap;            /* a heap one of its pages names, or 0 */
	unsigned layout;
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

/* Is there a segment of layout L at a?  Its size and key (cookie XOR
   address) when so.  The header's counts must be in range and its
   slice entries must chain, run after run, from the header's own slices
   to the last entry: a test that random data or another layout's
   segment passes with no real chance.  */
static bool segment_at(struct hw_target *t, const struct mi_layout *L,
		       uint64_t a, uint8_t *buf, uint64_t *size,
		       uint64_t *key, int64_t *score, uint64_t *heap)
{
	if (!hw_read(t, a, buf, L->seg_slices))
		return false;
	uint64_t kind = mi_get(buf, L->seg_kind, 4);
	uint64_t entries = mi_get(buf, L->seg_slice_entries, 8);
	uint64_t info = mi_get(buf, L->seg_info_slices, 8);
	uint64_t slices = mi_get(buf, L->seg_segment_slices, 8);
	uint64_t used = mi_get(buf, L->seg_used, 8);
	uint64_t abandoned = mi_get(buf, L->seg_abandoned, 8);
	uint64_t cookie = mi_get(buf, L->seg_cookie, 8);
	/* (A secure build keeps the last slice as a guard page: one entry
	   fewer.)  */
	uint64_t most = slices < L->slices_per_segment ? slices
						       : L->slices_per_segment;
	if (kind > MI_SEGMENT_HUGE || !cookie || !info || info >= entries ||
	    entries > most || entries + 1 < most ||
	    (kind == MI_SEGMENT_NORMAL && slices != L->slices_per_segment) ||
	    slices > (1ull << (44 - L->slice_shift)) || used > entries ||
	    abandoned > used)
		return false;
	uint8_t *sl = buf + L->seg_slices;
	if (!hw_read(t, a + L->seg_slices, sl, entries * L->page_size))
		return false;
	/* Releases whose headers look alike are told apart by their pages:
	   where each puts a page's blocks and its lists' heads.  */
	uint64_t i = 0;
	*score = 0;
	*heap = 0;
	while (i < entries) {
		const uint8_t *p = sl + i * L->page_size;
		uint64_t count = mi_get(p, L->page_slice_count, 4);
		if (!count || mi_get(p, L->page_slice_offset, 4) ||
		    (i == 0 && count != info))
			return false;
		struct mi_page pg;
		const char *bad;
		if (i >= info &&
		    mi_get(p, L->page_block_size, L->page_block_size_width))
		{
			bool ok = mi_page_decode(L, a, kind == MI_SEGMENT_HUGE,
						 i, count, p, &pg, &bad);
			*score += ok ? 1 : -4;
			if (ok && pg.heap && !*heap)
				*heap = pg.heap;
		}
		i += count;
	}
	/* (A huge segment's one page may run past the entries.)  */
	if (i != entries && kind != MI_SEGMENT_HUGE)
		return false;
	*size = slices << L->slice_shift;
	*key = cookie ^ a;
	return true;
}

/* Releases whose segments and pages are alike differ in their heaps:
   weigh the heap h a page names under layout L.  Its first page
   queues hold the block sizes of bins 1 to 8 (one to eight words: set
   when the heap is made, from the empty heap), and the main heap's
   cookie is the key itself.  */
static int64_t heap_score(struct hw_target *t, const struct mi_layout *L,
			  uint64_t key, uint64_t h)
{
	if (!h)
		return 0;
	int64_t score = 0;
	for (unsigned bin = 1; bin <= 8; bin++) {
		uint64_t size;
		if (hw_read_u64(t, h + L->heap_pages + bin * L->queue_size + 16,
				&size))
			score += size == 8ull * bin ? 1 : -1;
	}
	uint64_t cookie;
	if (hw_read_u64(t, h + L->heap_cookie, &cookie) && cookie == key)
		score += 4;
	return score;
}

static bool add_cand(struct cands *c, struct cand x)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct cand *v = realloc(c->v, cap * sizeof *v);
		if (!v)
			return false;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = x;
	return true;
}

/* Try every aligned address of the anonymous mappings under every
   layout, each alignment the layouts have in one pass: an address the
   core holds nothing at is passed over to where it holds something
   (memory a core only claims, 1 TiB of it, in one step).  A segment
   found is passed over whole (a huge one's blocks cross later
   alignments).  */
static bool scan(struct mi_state *mi, struct cands *c)
{
	struct hw_target *t = mi->t;
	unsigned nl;
	const struct mi_layout *ls = mi_layouts(&nl);
	size_t room = 0;
	for (unsigned k = 0; k < nl; k++) {
		size_t need = ls[k].seg_slices +
			      (size_t)ls[k].slices_per_segment * ls[k].page_size;
		if (need > room)
			room = need;
	}
	uint8_t *buf = malloc(room);
	if (!buf)
		return false;
	bool ok = true;
	for (unsigned k = 0; k < nl && ok; k++) {
		unsigned shift = ls[k].segment_shift;
		bool done = false;
		for (unsigned j = 0; j < k && !done; j++)
			done = ls[j].segment_shift == shift;
		if (done)
			continue;       /* that alignment was scanned */
		uint64_t align = 1ull << shift;
		for (size_t ri = 0; ri < t->nregions && ok; ri++) {
			const struct hw_region *r = &t->regions[ri];
			if (r->file >= 0)
				continue;
			/* As far as the target holds the region: a core's
			   segment may claim far more than it holds (p_memsz
			   of 64 TiB: millions of boundaries).  */
			uint64_t end = r->start + hw_region_held(r);
			uint64_t a = (r->start + align - 1) & ~(align - 1);
			while (a >= r->start && a < end && ok &&
			       c->n < MAX_SEGMENTS) {
				const uint8_t *p;
				if (!hw_readable_run(t, a, &p)) {
					uint64_t next = hw_next_readable(t, a, end);
					uint64_t up = (next + align - 1) &
						      ~(align - 1);
					a = up > a ? up : a + align;
					continue;
				}
				uint64_t step = align;
				for (unsigned l = 0; l < nl && ok; l++) {
					const struct mi_layout *L = &ls[l];
					uint64_t size, key, heap;
					int64_t score;
					if (L->segment_shift != shift ||
					    !segment_at(t, L, a, buf, &size, &key,
							&score, &heap))
						continue;
					score += heap_score(t, L, key, heap);
					ok = add_cand(c, (struct cand){
						a, size, key, score, heap, l });
					size = (size + align - 1) & ~(align - 1);
					if (size > step)
						step = size;
				}
				a += step;
			}
		}
	}
	free(buf);
	return ok;
}

static int by_addr(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

enum hw_status mi_find_segments(struct mi_state *mi)
{
	struct cands c = { 0 };
	if (!scan(mi, &c)) {
		free(c.v);
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	}
	if (!c.n) {
		free(c.v);
		return HW_NO_ALLOCATOR;
	}
	/* The layout and key whose segments' pages agree best with it,
	   then the one most segments share, then the first (layouts newest
	   first).  (Quadratic in the candidates: a process has few
	   segments, a few thousand at most.)  */
	size_t best = 0, best_n = 0;
	int64_t best_score = INT64_MIN;
	for (size_t i = 0; i < c.n; i++) {
		size_t n = 0;
		int64_t score = 0;
		for (size_t k = 0; k < c.n; k++)
			if (c.v[k].layout == c.v[i].layout &&
			    c.v[k].key == c.v[i].key) {
				n++;
				score += c.v[k].score;
			}
		if (score > best_score ||
		    (score == best_score &&
		     (n > best_n || (n == best_n &&
				     c.v[i].layout < c.v[best].layout)))) {
			best = i;
			best_n = n;
			best_score = score;
		}
	}
	unsigned nl;
	mi->L = &mi_layouts(&nl)[c.v[best].layout];
	mi->key = c.v[best].key;
	mi->segments = calloc(best_n, sizeof *mi->segments);
	if (!mi->segments) {
		free(c.v);
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	}
	qsort(c.v, c.n, sizeof *c.v, by_addr);
	for (size_t i = 0; i < c.n; i++) {
		if (c.v[i].layout != c.v[best].layout ||
		    c.v[i].key != mi->key) {
			/* Another layout's shape at the same address is the
			   same segment misread, not another one.  */
			mi->rejected += c.v[i].layout == c.v[best].layout;
			continue;
		}
		struct mi_segment *sg = &mi->segments[mi->nsegments++];
		sg->addr = c.v[i].addr;
		sg->size = c.v[i].size;
		mi->held += sg->size;
	}
	free(c.v);
	mi->how = "their shape: headers at 32 MiB boundaries whose cookies "
		  "all give one main-heap key";
	return HW_OK;
}

const char *mi_library_file(const struct hw_target *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (!strncmp(hw_base_name(t->files[i].path), "libmimalloc", 11))
			return t->files[i].path;
	return NULL;
}

bool hw_mimalloc_recognise(struct hw_session *s, char *why, size_t len)
{
	struct hw_target *t = s->target;
	const char *lib = mi_library_file(t);
	if (!lib)
		return false;
	char known[256];
	unsigned n;
	const struct mi_layout *ls = mi_layouts(&n);
	mi_releases(ls, n, sizeof *ls, known, sizeof known);
	const char *base = hw_base_name(lib);
	/* libmimalloc.so.3 is the 3.x series: arenas and page maps, no
	   segments.  v3.c walks the releases of v3layout.c's rows; a
	   library of another is refused here, never walked as if it were
	   one of them.  */
	if (!strncmp(base, "libmimalloc.so.3", 16) ||
	    !strncmp(base, "libmimalloc-secure.so.3", 23)) {
		char v3[128];
		const struct mi_v3_layout *v3s = mi_v3_layouts(&n);
		mi_releases(&v3s->base, n, sizeof *v3s, v3, sizeof v3);
		snprintf(why, len, "'%s': mimalloc 3.x (%s), but no page map "
			 "of a 3.x release heapwalk knows (%s) is in the %s: "
			 "the program had not allocated yet, or its mimalloc "
			 "is another 3.x release or a secure build of 3.6",
			 t->path ? t->path : "target", lib, v3,
			 hw_target_noun(t));
		return true;
	}
	snprintf(why, len, "'%s': mimalloc's library is mapped (%s), but no "
		 "segment of a mimalloc release heapwalk knows (%s) is in the "
		 "%s: the program had not allocated yet, its segments are not "
		 "in it, or its mimalloc is another release",
		 t->path ? t->path : "target", lib, known, hw_target_noun(t));
	return true;
}
