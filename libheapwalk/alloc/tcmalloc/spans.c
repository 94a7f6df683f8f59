/* spans.c - every span of tcmalloc's page map, in address order.
 *
 * The page map is PageHeap::pagemap_, a TCMalloc_PageMap2 over 35-bit
 * page numbers (48-bit addresses, 8 KiB pages): a root of 2^17 leaf
 * pointers inside the page heap, leaves of 2^18 Span pointers.  A small
 * object span has every page set, a large or free one only its first
 * and last: the pages between may name spans long merged away.  So, as
 * tcmalloc's own range iterator does, an entry counts only when its
 * span starts at that page, and the walk then jumps past the span.
 */
#include <stdlib.h>
#include <string.h>

#include "tcmalloc.h"

#define ROOT_BITS 17
#define LEAF_BITS 18
#define ROOT_LEN ((size_t)1 << ROOT_BITS)
#define LEAF_LEN ((size_t)1 << LEAF_BITS)
/* Spans in one process: more is damage (a span is at least a page).  */
#define MAX_SPANS ((size_t)1 << 26)

static bool add_span(struct tc_state *tc, size_t *cap, const struct tc_span *s)
{
	if (tc->nspans == *cap) {
		size_t n = *cap ? *cap * 2 : 1024;
		if (n > MAX_SPANS)
			return false;
		struct tc_span *v = realloc(tc->spans, n * sizeof *v);
		if (!v)
			return false;
		tc->spans = v;
		*cap = n;
	}
	tc->spans[tc->nspans++] = *s;
	return true;
}

/* Does any region of the target lie in the 2^(LEAF_BITS + page shift)
   bytes leaf i1 maps?  A leaf over no memory names no span worth its
   2^18 entries (a damaged root may point anywhere).  */
static bool leaf_has_memory(const struct hw_target *t, size_t i1)
{
	uint64_t lo = (uint64_t)i1 << (LEAF_BITS + TC_PAGE_SHIFT);
	uint64_t hi = lo + ((uint64_t)1 << (LEAF_BITS + TC_PAGE_SHIFT));
	for (size_t i = 0; i < t->nregions; i++)
		if (t->regions[i].start < hi && t->regions[i].end > lo)
			return true;
	return false;
}

/* A sampled object's usable size, as tcmalloc's GetSizeWithCallback
   gives it: the class of its request (the StackTrace's first word) when
   the request is small, else its span.  Returned only when smaller than
   the span; 0 when the record cannot be read.  */
static uint32_t sampled_usable(const struct tc_state *tc, uint64_t trace,
			       uint64_t span_bytes)
{
	uint64_t req;
	if (tc->nclasses < 2 || !hw_read_u64(tc->t, trace, &req))
		return 0;
	unsigned lo = 1, hi = tc->nclasses;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (tc->class_size[mid] < req)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == tc->nclasses || tc->class_size[lo] >= span_bytes)
		return 0;
	return tc->class_size[lo];
}

/* The span descriptor at desc, if it starts at page; its length.  */
static uint64_t span_here(struct tc_state *tc, uint64_t desc, uint64_t page,
			  struct tc_span *out)
{
	uint64_t w[6];
	if (!hw_read(tc->t, desc, w, sizeof w) || w[0] != page || !w[1])
		return 0;
	uint32_t bits = (uint32_t)w[5];
	uint64_t len = w[1];
	/* A span never reaches past the 35-bit page space.  */
	if (len > ((uint64_t)1 << 35) - page)
		return 0;
	memset(out, 0, sizeof *out);
	out->addr = page << TC_PAGE_SHIFT;
	out->desc = desc;
	out->bytes = len << TC_PAGE_SHIFT;
	out->refcount = (uint16_t)(bits & 0xffff);
	out->cls = (uint8_t)(bits >> 16);
	out->location = (uint8_t)((bits >> 24) & 3);
	out->sample = (bits >> 26) & 1;
	if (out->cls && out->cls < tc->nclasses && !out->location)
		out->objsize = tc->class_size[out->cls];
	if (out->sample && !out->location && !out->cls)
		out->sampled_usable = sampled_usable(tc, w[4], out->bytes);
	return len;
}

enum hw_status tc_read_spans(struct tc_state *tc)
{
	struct hw_session *s = tc->s;
	uint64_t *root = malloc(ROOT_LEN * sizeof *root);
	uint64_t *leaf = malloc(LEAF_LEN * sizeof *leaf);
	size_t cap = 0;
	if (!root || !leaf) {
		free(root);
		free(leaf);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	if (!hw_read(tc->t, tc->root, root, ROOT_LEN * sizeof *root)) {
		free(root);
		free(leaf);
		return hw_error(s, HW_BAD_TARGET, "tcmalloc's page map root at "
				"0x%llx is not in the %s",
				(unsigned long long)tc->root, hw_target_noun(tc->t));
	}
	uint64_t next_page = 0;      /* pages below this are spanned */
	bool oom = false;
	for (size_t i1 = 0; i1 < ROOT_LEN && !oom; i1++) {
		if (!root[i1] || !leaf_has_memory(tc->t, i1))
			continue;
		uint64_t base = (uint64_t)i1 << LEAF_BITS;
		if (next_page >= base + LEAF_LEN)
			continue;
		if (!hw_read(tc->t, root[i1], leaf, LEAF_LEN * sizeof *leaf)) {
			hw_partial(s, root[i1], "tcmalloc's page map leaf %zu is "
				   "not in the %s: the spans of 0x%llx-0x%llx "
				   "are unknown", i1, hw_target_noun(tc->t),
				   (unsigned long long)(base << TC_PAGE_SHIFT),
				   (unsigned long long)((base + LEAF_LEN)
							<< TC_PAGE_SHIFT));
			continue;
		}
		size_t i2 = next_page > base ? (size_t)(next_page - base) : 0;
		while (i2 < LEAF_LEN) {
			struct tc_span sp;
			uint64_t len = leaf[i2] ? span_here(tc, leaf[i2],
							    base + i2, &sp)
						: 0;
			if (!len) {
				i2++;
				continue;
			}
			/* A span's pages are the process's: one whose end is
			   in no mapping had its length damaged, and jumping it
			   would skip the spans after it.  */
			if (!hw_region_of(tc->t, sp.addr + sp.bytes - 1)) {
				hw_finding(s, sp.desc, "tcmalloc: the span at 0x%llx "
					   "says it is %llu pages long, past the "
					   "mapped memory: taken as one page",
					   (unsigned long long)sp.addr,
					   (unsigned long long)len);
				len = 1;
				sp.bytes = (uint64_t)1 << TC_PAGE_SHIFT;
				if (sp.objsize > sp.bytes)
					sp.objsize = 0;
			}
			if (!add_span(tc, &cap, &sp)) {
				oom = true;
				break;
			}
			if (sp.objsize)
				tc->class_slots[sp.cls] += sp.bytes / sp.objsize;
			next_page = base + i2 + len;
			if (next_page >= base + LEAF_LEN)
				break;
			i2 = (size_t)(next_page - base);
		}
	}
	free(root);
	free(leaf);
	if (oom)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	return HW_OK;
}

/* Buckets of the span index per span, at most: a sparse address space
   gets coarser buckets, not more of them.  */
#define BUCKETS_PER_SPAN 4

/* The span index: the address range of the spans cut into 2^shift-byte
   buckets, each giving the first span that ends past its start.  The
   spans touching bucket b are then spans[first[b]] to spans[first[b+1]]
   (the next bucket's first span may start in b), a handful where the
   heap is dense, so that finding an object's span, once per object on
   a free list, costs a look-up instead of a binary search over all the
   spans (a cache miss per step in a large heap).  */
bool tc_index_spans(struct tc_state *tc)
{
	free(tc->bucket_first);
	tc->bucket_first = NULL;
	tc->nbuckets = 0;
	if (!tc->nspans)
		return true;
	const struct tc_span *last = &tc->spans[tc->nspans - 1];
	uint64_t base = tc->spans[0].addr;
	uint64_t span = last->addr + last->bytes - base;
	uint64_t max = (uint64_t)tc->nspans * BUCKETS_PER_SPAN;
	unsigned shift = TC_PAGE_SHIFT;
	while (shift < 63 && (span >> shift) >= max)
		shift++;
	size_t n = (size_t)(span >> shift) + 1;
	uint32_t *first = malloc((n + 1) * sizeof *first);
	if (!first)
		return false;
	size_t i = 0;
	for (size_t b = 0; b <= n; b++) {
		uint64_t start = base + ((uint64_t)b << shift);
		while (i < tc->nspans &&
		       tc->spans[i].addr + tc->spans[i].bytes <= start)
			i++;
		first[b] = (uint32_t)i;
	}
	tc->bucket_first = first;
	tc->nbuckets = n;
	tc->bucket_shift = shift;
	tc->bucket_base = base;
	return true;
}

/* The span holding addr, or NULL: a binary search among the spans of
   its bucket (all of them before the index is built).  */
const struct tc_span *tc_span_of(const struct tc_state *tc, uint64_t addr)
{
	size_t lo = 0, hi = tc->nspans;
	if (tc->bucket_first) {
		if (addr < tc->bucket_base)
			return NULL;
		uint64_t b = (addr - tc->bucket_base) >> tc->bucket_shift;
		if (b >= tc->nbuckets)
			return NULL;
		lo = tc->bucket_first[b];
		hi = (size_t)tc->bucket_first[b + 1] + 1;
		if (hi > tc->nspans)
			hi = tc->nspans;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tc_span *sp = &tc->spans[mid];
		if (addr < sp->addr)
			hi = mid;
		else if (addr - sp->addr >= sp->bytes)
			lo = mid + 1;
		else
			return sp;
	}
	return NULL;
}
