/* blockslab.c - the block map's slabs: a bit per slot (blockmap.h).  */
#include <stdlib.h>
#include <string.h>

#include "blockmap-int.h"

#define PAGE ((uint64_t)1 << BM_PAGE_SHIFT)

bool bm_add_slab(struct hw_blockmap *m, uint64_t lo, uint64_t hi,
		 uint64_t base, uint64_t slot, uint32_t nslots)
{
	if (lo >= hi || (lo | hi) & (PAGE - 1) || !slot || !nslots ||
	    base < lo || base >= hi || (hi - base) / slot < nslots)
		return true;   /* not a slab the map can take: bitmaps */
	if (m->nslabs == m->cap_slabs) {
		size_t cap = m->cap_slabs ? 2 * m->cap_slabs : 1024;
		struct bm_slab *v = cap < UINT32_MAX
			? realloc(m->slabs, cap * sizeof *v) : NULL;
		if (!v) {
			m->oom = true;
			return false;
		}
		m->slabs = v;
		m->cap_slabs = cap;
	}
	m->slabs[m->nslabs++] = (struct bm_slab){
		.lo = lo, .hi = hi, .base = base, .slot = slot,
		.limit = base + nslots * slot, .nslots = nslots };
	return true;
}

static int by_lo(const void *a, const void *b)
{
	const struct bm_slab *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Slab s's run, when s lies in one whose pages are the target's.  */
static struct bm_run *slab_run(const struct hw_blockmap *m,
			       const struct bm_slab *s)
{
	struct bm_run *r = bm_run_of(m, s->lo);
	return r && s->hi <= r->end && !(r->start & (PAGE - 1)) ? r : NULL;
}

bool bm_slabs_done(struct hw_blockmap *m)
{
	if (m->oom)
		return false;
	if (!m->nslabs)
		return true;
	qsort(m->slabs, m->nslabs, sizeof *m->slabs, by_lo);
	size_t n = 0, words = 0;
	for (size_t i = 0; i < m->nslabs; i++) {
		struct bm_slab s = m->slabs[i];
		/* Overlapping pages: damaged metadata; the first keeps them. */
		if ((n && s.lo < m->slabs[n - 1].hi) || !slab_run(m, &s))
			continue;
		s.word0 = words;
		words += (s.nslots + 63) / 64;
		m->slabs[n++] = s;
	}
	m->nslabs = n;
	m->slot_words = words;
	m->slot_used = calloc(words ? words : 1, sizeof *m->slot_used);
	if (!m->slot_used)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct bm_slab *s = &m->slabs[i];
		struct bm_run *r = slab_run(m, s);
		if (!r->page_slab) {
			size_t pages = (size_t)((r->end - r->start + PAGE - 1) >>
						BM_PAGE_SHIFT);
			r->page_slab = calloc(pages, sizeof *r->page_slab);
			if (!r->page_slab)
				return false;
			m->slab_pages += pages * sizeof *r->page_slab;
		}
		for (uint64_t p = s->lo; p < s->hi; p += PAGE)
			r->page_slab[(p - r->start) >> BM_PAGE_SHIFT] =
				(uint32_t)i + 1;
	}
	return true;
}

/* The slot of s at addr, if one starts there.  */
static bool slot_of(const struct bm_slab *s, uint64_t addr, uint64_t *k)
{
	if (addr < s->base || addr >= s->limit)
		return false;
	*k = (addr - s->base) / s->slot;
	return s->base + *k * s->slot == addr;
}

bool bm_slab_add(struct hw_blockmap *m, const struct bm_slab *s,
		 uint64_t addr, uint64_t size)
{
	uint64_t k;
	if (!slot_of(s, addr, &k) || size > s->slot)
		return false;
	__atomic_fetch_or(&m->slot_used[s->word0 + k / 64],
			  (uint64_t)1 << (k % 64), __ATOMIC_RELAXED);
	return true;
}

bool bm_slab_remove(struct hw_blockmap *m, const struct bm_slab *s,
		    uint64_t addr)
{
	uint64_t k;
	if (!slot_of(s, addr, &k))
		return false;
	uint64_t bit = (uint64_t)1 << (k % 64);
	return __atomic_fetch_and(&m->slot_used[s->word0 + k / 64], ~bit,
				  __ATOMIC_RELAXED) & bit;
}

bool bm_slabs_seal(struct hw_blockmap *m)
{
	if (!m->nslabs)
		return true;
	m->slot_rank = malloc(m->slot_words * sizeof *m->slot_rank);
	if (!m->slot_rank)
		return false;
	uint64_t count = 0;
	for (size_t w = 0; w < m->slot_words; w++) {
		m->slot_rank[w] = (uint32_t)count;
		count += bm_popcount64(m->slot_used[w]);
	}
	if (count > UINT32_MAX)
		return false;
	m->slot_marks = calloc(count ? count : 1, 1);
	return m->slot_marks != NULL;
}

static void slot_ref(const struct hw_blockmap *m, const struct bm_slab *s,
		     uint64_t k, struct bm_ref *ref)
{
	size_t w = s->word0 + (size_t)(k / 64);
	uint64_t below = ((uint64_t)1 << (k % 64)) - 1;
	ref->addr = s->base + k * s->slot;
	ref->end = ref->addr + s->slot;
	ref->run = NULL;
	ref->mk = &m->slot_marks[m->slot_rank[w] +
				 bm_popcount64(m->slot_used[w] & below)];
}

bool bm_slab_find(const struct hw_blockmap *m, const struct bm_slab *s,
		  uint64_t addr, struct bm_ref *ref, bool *exact)
{
	if (addr < s->base || addr >= s->limit || !m->slot_marks)
		return false;
	uint64_t k = (addr - s->base) / s->slot;
	if (!(m->slot_used[s->word0 + k / 64] >> (k % 64) & 1))
		return false;
	slot_ref(m, s, k, ref);
	*exact = ref->addr == addr;
	return true;
}

bool bm_slabs_each_below(const struct hw_blockmap *m, size_t *next,
			 size_t last, uint64_t addr, bm_block_fn *fn,
			 void *cookie)
{
	if (last > m->nslabs)
		last = m->nslabs;
	for (; *next < last && m->slabs[*next].lo < addr; ++*next) {
		const struct bm_slab *s = &m->slabs[*next];
		for (uint32_t w = 0; m->slot_marks && w < (s->nslots + 63) / 64;
		     w++)
			for (uint64_t bits = m->slot_used[s->word0 + w]; bits;
			     bits &= bits - 1) {
				struct bm_ref ref;
				slot_ref(m, s, (uint64_t)w * 64 +
					 (unsigned)__builtin_ctzll(bits), &ref);
				if (!fn(cookie, &ref))
					return false;
			}
	}
	return true;
}

/* Used slots, each with a mark byte (0 before the map is sealed).  */
static uint64_t used_slots(const struct hw_blockmap *m)
{
	if (!m->slot_marks || !m->slot_words)
		return 0;
	size_t last = m->slot_words - 1;
	return m->slot_rank[last] + bm_popcount64(m->slot_used[last]);
}

void bm_slabs_settle(struct hw_blockmap *m, uint64_t *marked,
		     uint64_t *possible)
{
	bm_settle_bytes(m->slot_marks, used_slots(m), marked, possible);
}

uint64_t bm_slabs_bytes(const struct hw_blockmap *m)
{
	uint64_t marks = used_slots(m);
	return m->cap_slabs * sizeof *m->slabs + m->slab_pages + marks +
	       m->slot_words * (sizeof *m->slot_used +
				(m->slot_rank ? sizeof *m->slot_rank : 0));
}

void bm_slabs_free(struct hw_blockmap *m)
{
	for (size_t i = 0; i < m->nruns; i++) {
		free(m->runs[i].page_slab);
		m->runs[i].page_slab = NULL;
	}
	free(m->slabs);
	free(m->slot_used);
	free(m->slot_rank);
	free(m->slot_marks);
}
