/* heaps.c - the heaps of each arena: where chunk walks start and end.
 *
 * main_arena's heap runs from sbrk_base (mp_) to the end of its top chunk
 * when the arena is contiguous (segments.c finds the pieces of one that
 * is not).  A thread arena owns heaps of HEAP_MAX_SIZE
 * alignment: the newest holds top, and each heap_info links to the older
 * one through `prev`; the first heap holds the malloc_state right after its
 * heap_info.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ptmalloc.h"

bool pm_add_heap(struct pm_state *p, uint64_t start, uint64_t end,
		 uint64_t info, int32_t arena)
{
	if (end <= start)
		return true;
	if (p->nheaps == p->heaps_cap) {
		size_t cap = p->heaps_cap ? 2 * p->heaps_cap : 16;
		struct pm_heap *n = realloc(p->heaps, cap * sizeof *n);
		if (!n) {
			hw_oom(p->s);
			return false;
		}
		p->heaps = n;
		p->heaps_cap = cap;
	}
	/* 2 bits per 16-byte granule; a heap is only listed with its tags,
	   since every walk reads them.  Populated up front: the list walks
	   set tags with read-modify-writes from two threads, and on lazily
	   zero-filled pages each first one costs a read fault, a
	   copy-on-write fault and a TLB shootdown to the other thread.  */
	size_t len = (size_t)((end - start) / 64 + 1);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint8_t *tags = m == MAP_FAILED ? NULL : m;
	if (!tags) {
		hw_partial(p->s, start, "heap 0x%llx-0x%llx: no memory for its "
			   "index; skipped", (unsigned long long)start,
			   (unsigned long long)end);
		return false;
	}
	p->heaps[p->nheaps++] = (struct pm_heap){
		.start = start, .end = end, .info = info, .arena = arena,
		.tags = tags, .tags_len = len,
	};
	return true;
}

static void main_heap(struct pm_state *p, struct pm_arena *ar)
{
	uint64_t top_size;
	/* Before the first malloc top is the unsorted bin's fake chunk.  */
	if (ar->top == pm_bin_at(p, ar->addr, 1))
		return;
	if (!p->sbrk_base) {
		/* No mp_: the brk heap is the mapping that holds top.  */
		const struct hw_region *r = hw_region_of(p->t, ar->top);
		if (!r)
			return;
		p->sbrk_base = r->start;
		hw_note(p->s, r->start, "mp_ not found: main heap assumed to "
			"start at its mapping");
	}
	if (!hw_read_u64(p->t, ar->top + 8, &top_size)) {
		hw_finding(p->s, ar->top, "main arena top chunk is not "
			   "readable");
		return;
	}
	ar->top_size = top_size & ~(uint64_t)PM_SIZE_BITS;
	if (ar->flags & 2 /* NONCONTIGUOUS_BIT */) {
		pm_main_segments(p, ar);
		return;
	}
	/* A contiguous main heap lies in one mapping (the kernel merges brk
	   growth); a damaged sbrk_base must not make it span the world.  */
	const struct hw_region *r = hw_region_of(p->t, ar->top);
	if (r && (p->sbrk_base < r->start || p->sbrk_base > ar->top)) {
		hw_finding(p->s, p->mp ? p->mp + (uint64_t)p->l.mp_sbrk_base : 0,
			   "mp_.sbrk_base 0x%llx is not in the mapping of the "
			   "main arena's top 0x%llx; using the mapping's start",
			   (unsigned long long)p->sbrk_base,
			   (unsigned long long)ar->top);
		p->sbrk_base = r->start;
	}
	if (r && ar->top_size > r->end - ar->top) {
		hw_finding(p->s, ar->top, "main arena top size 0x%llx runs past "
			   "its mapping (malloc(): corrupted top size)",
			   (unsigned long long)ar->top_size);
		ar->top_size = r->end - ar->top;
	}
	uint64_t start = pm_first_chunk(p->sbrk_base);
	uint64_t end = ar->top + ar->top_size;
	if (ar->top < start || end < ar->top) {
		hw_finding(p->s, ar->top, "main arena top lies outside "
			   "[sbrk_base 0x%llx, ...)",
			   (unsigned long long)p->sbrk_base);
		return;
	}
	if (end != p->sbrk_base + ar->system_mem)
		hw_finding(p->s, ar->top, "top end 0x%llx != sbrk_base + "
			   "system_mem 0x%llx",
			   (unsigned long long)end,
			   (unsigned long long)(p->sbrk_base + ar->system_mem));
	pm_add_heap(p, start, end, 0, 0);
}

static void thread_heaps(struct pm_state *p, struct pm_arena *ar, int32_t idx)
{
	uint64_t top_size;
	if (!hw_read_u64(p->t, ar->top + 8, &top_size)) {
		hw_finding(p->s, ar->top, "top chunk of arena %d is not "
			   "readable", idx);
		return;
	}
	ar->top_size = top_size & ~(uint64_t)PM_SIZE_BITS;
	size_t first = p->nheaps;
	uint64_t h = ar->top & ~(p->l.heap_max - 1);
	uint64_t total = 0;
	for (unsigned n = 0; h && n < PM_MAX_HEAPS_PER_ARENA; n++) {
		uint64_t ar_ptr, prev, size;
		if (!hw_read_u64(p->t, h + (uint64_t)p->l.hi_ar_ptr, &ar_ptr) ||
		    !hw_read_u64(p->t, h + (uint64_t)p->l.hi_prev, &prev) ||
		    !hw_read_u64(p->t, h + (uint64_t)p->l.hi_size, &size)) {
			hw_finding(p->s, h, "heap_info of arena %d is not "
				   "readable", idx);
			return;
		}
		if (ar_ptr != ar->addr) {
			hw_finding(p->s, h, "heap_info.ar_ptr 0x%llx is not its "
				   "arena 0x%llx", (unsigned long long)ar_ptr,
				   (unsigned long long)ar->addr);
			return;
		}
		if (size > p->l.heap_max || size < p->l.hi_sizeof) {
			hw_finding(p->s, h, "heap_info.size 0x%llx out of range",
				   (unsigned long long)size);
			return;
		}
		uint64_t start = ar->addr == h + p->l.hi_sizeof
			? pm_first_chunk(ar->addr + p->l.ms_sizeof)
			: pm_first_chunk(h + p->l.hi_sizeof);
		if (!pm_add_heap(p, start, h + size, h, idx))
			return;
		total += size;
		if (prev == 0)
			break;
		if ((prev & (p->l.heap_max - 1)) || prev == h) {
			hw_finding(p->s, h, "heap_info.prev 0x%llx is not a "
				   "heap", (unsigned long long)prev);
			break;
		}
		/* A heap list that comes back to a heap already seen.  */
		for (size_t i = first; i < p->nheaps; i++)
			if (p->heaps[i].info == prev) {
				hw_finding(p->s, h, "heap_info.prev loops");
				return;
			}
		h = prev;
	}
	if (total != ar->system_mem)
		hw_finding(p->s, ar->addr, "arena %d: heaps total 0x%llx but "
			   "system_mem is 0x%llx", idx,
			   (unsigned long long)total,
			   (unsigned long long)ar->system_mem);
}

static int heap_cmp(const void *a, const void *b)
{
	const struct pm_heap *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

enum hw_status pm_find_heaps(struct pm_state *p)
{
	for (size_t i = 0; i < p->narenas; i++) {
		if (i == 0)
			main_heap(p, &p->arenas[0]);
		else
			thread_heaps(p, &p->arenas[i], (int32_t)i);
	}
	/* Heaps in address order; overlapping ones (a corrupt heap_info)
	   are dropped so that no chunk is reported twice.  */
	if (p->nheaps)
		qsort(p->heaps, p->nheaps, sizeof *p->heaps, heap_cmp);
	size_t out = 0;
	for (size_t i = 0; i < p->nheaps; i++) {
		if (out && p->heaps[i].start < p->heaps[out - 1].end) {
			hw_partial(p->s, p->heaps[i].start, "heap overlaps "
				   "another heap; skipped");
			munmap(p->heaps[i].tags, p->heaps[i].tags_len);
			continue;
		}
		p->heaps[out++] = p->heaps[i];
	}
	p->nheaps = out;
	/* Each arena's heap count, from what survived.  */
	for (size_t i = 0; i < p->nheaps; i++)
		if (p->heaps[i].arena >= 0 &&
		    (size_t)p->heaps[i].arena < p->narenas)
			p->arenas[p->heaps[i].arena].nheaps++;
	return HW_OK;
}

struct pm_heap *pm_heap_near(struct pm_state *p, struct pm_heap **hint,
			     uint64_t addr)
{
	struct pm_heap *h = *hint;
	if (h && addr >= h->start && addr < h->end)
		return h;
	return *hint = pm_heap_of(p, addr);
}

struct pm_heap *pm_heap_of(struct pm_state *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nheaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < p->heaps[mid].start)
			hi = mid;
		else if (addr >= p->heaps[mid].end)
			lo = mid + 1;
		else
			return &p->heaps[mid];
	}
	return NULL;
}
