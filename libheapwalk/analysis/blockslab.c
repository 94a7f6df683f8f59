/* blockslab.c - the block map's slabs: a bit per slot (blockmap.h).  */
#include <stdlib.h>
#include <string.h>

#include "blockmap-int.h"

#define PAGE ((uint64_t)1 << BM_PAGE_SHIFT)

bool bm_add_slab(struct hw_blockmap *m, uint64_t lo, uint64_t hi,
		 uint64_t base, uint64_t slot, uint32_t nslots, bool interior)
{
	/* A page entry holds the slot size and an offset within a slot in
	   32 bits.  */
	if (lo >= hi || (lo | hi) & (PAGE - 1) || !slot || slot > INT32_MAX ||
	    !nslots || base < lo || base >= hi || (hi - base) / slot < nslots)
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
		.nslots = nslots, .interior = interior };
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

/* The entry of page p of slab s (whose slot bits start at bit0).  */
static struct bm_slab_page page_entry(const struct bm_slab *s, uint64_t p,
				      uint64_t bit0)
{
	struct bm_slab_page pg = { .slot = (uint32_t)s->slot,
				   .interior = s->interior };
	if (p + PAGE <= s->base)
		return pg;                /* no slot meets it */
	uint64_t k0 = p < s->base ? 0 : (p - s->base) / s->slot;
	if (k0 >= s->nslots)
		return pg;                /* past the last slot */
	pg.bit0 = (uint32_t)(bit0 + k0);
	pg.nslots = s->nslots - (uint32_t)k0;
	pg.delta = (int32_t)((int64_t)p - (int64_t)(s->base + k0 * s->slot));
	return pg;
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
		size_t need = (s.nslots + 63) / 64;
		/* Overlapping pages: damaged metadata; the first keeps them.
		   Past 2^32 slots a page entry cannot number them: the rest
		   go to the bitmaps.  */
		if ((n && s.lo < m->slabs[n - 1].hi) || !slab_run(m, &s) ||
		    (words + need) * 64 > UINT32_MAX)
			continue;
		s.word0 = words;
		words += need;
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
				page_entry(s, p, (uint64_t)s->word0 * 64);
	}
	return true;
}

/* The slot of slab page pg holding addr: its slot bit and its start;
   false when addr lies in no slot (before the first, past the last).  */
static inline bool page_slot(const struct bm_slab_page *pg, uint64_t addr,
			     uint64_t *bit, uint64_t *start)
{
	int64_t off = (int64_t)(addr & (PAGE - 1)) + pg->delta;
	if (off < 0)
		return false;
	uint64_t j = (uint64_t)off / pg->slot;
	if (j >= pg->nslots)
		return false;
	*bit = pg->bit0 + j;
	*start = addr - ((uint64_t)off - j * pg->slot);
	return true;
}

bool bm_slab_add(struct hw_blockmap *m, const struct bm_slab_page *pg,
		 uint64_t addr, uint64_t size)
{
	uint64_t bit, start;
	if (!page_slot(pg, addr, &bit, &start) || start != addr ||
	    size > pg->slot)
		return false;
	__atomic_fetch_or(&m->slot_used[bit / 64], (uint64_t)1 << (bit % 64),
			  __ATOMIC_RELAXED);
	return true;
}

bool bm_slab_remove(struct hw_blockmap *m, const struct bm_slab_page *pg,
		    uint64_t addr)
{
	uint64_t bit, start;
	if (!page_slot(pg, addr, &bit, &start) || start != addr)
		return false;
	uint64_t mask = (uint64_t)1 << (bit % 64);
	return __atomic_fetch_and(&m->slot_used[bit / 64], ~mask,
				  __ATOMIC_RELAXED) & mask;
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

/* The mark byte of used slot bit `bit`: after the used slots before it. */
static inline uint8_t *slot_mark(const struct hw_blockmap *m, uint64_t bit)
{
	size_t w = (size_t)(bit / 64);
	uint64_t below = ((uint64_t)1 << (bit % 64)) - 1;
	return &m->slot_marks[m->slot_rank[w] +
			      bm_popcount64(m->slot_used[w] & below)];
}

static inline bool slot_is_used(const struct hw_blockmap *m, uint64_t bit)
{
	return m->slot_used[bit / 64] >> (bit % 64) & 1;
}

static void slot_ref(const struct hw_blockmap *m, const struct bm_slab *s,
		     uint64_t k, struct bm_ref *ref)
{
	ref->addr = s->base + k * s->slot;
	ref->end = ref->addr + s->slot;
	ref->run = NULL;
	ref->mk = slot_mark(m, (uint64_t)s->word0 * 64 + k);
}

bool bm_slab_find(const struct hw_blockmap *m, const struct bm_slab_page *pg,
		  uint64_t addr, struct bm_ref *ref, bool *exact)
{
	uint64_t bit, start;
	if (!m->slot_marks || !page_slot(pg, addr, &bit, &start) ||
	    !slot_is_used(m, bit))
		return false;
	ref->addr = start;
	ref->end = start + pg->slot;
	ref->run = NULL;
	ref->mk = slot_mark(m, bit);
	*exact = start == addr || pg->interior;
	return true;
}

bool bm_slab_probe_step(const struct hw_blockmap *m, struct bm_probe *p)
{
	switch (p->step) {
	case BM_PR_PAGE: {
		const struct bm_slab_page *pg = p->at;
		if (!pg->slot) {
			bm_probe_leaf(m, p);
			return p->step != BM_PR_DONE;
		}
		uint64_t bit, start;
		if (!m->slot_marks || !page_slot(pg, p->addr, &bit, &start))
			break;
		p->k = (size_t)bit;
		p->interior = pg->interior;
		p->ref.addr = start;
		p->ref.end = start + pg->slot;
		p->ref.run = NULL;
		BM_PREFETCH_READ(&m->slot_used[bit / 64]);
		BM_PREFETCH_READ(&m->slot_rank[bit / 64]);
		p->step = BM_PR_SLOT;
		return true;
	}
	case BM_PR_SLOT:
		if (!slot_is_used(m, p->k))
			break;
		p->ref.mk = slot_mark(m, p->k);
		bm_probe_hit(p);
		p->exact |= p->interior;
		break;
	default:
		break;
	}
	p->step = BM_PR_DONE;
	return false;
}

size_t bm_slab_from(const struct hw_blockmap *m, uint64_t addr)
{
	/* Slabs do not overlap: by lo, their ends are in order too.  */
	size_t lo = 0, hi = m->nslabs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->slabs[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool bm_slabs_each_below(const struct hw_blockmap *m, size_t *next,
			 uint64_t addr, uint64_t lo, uint64_t hi,
			 bm_block_fn *fn, void *cookie)
{
	if (addr > hi)
		addr = hi;
	for (; *next < m->nslabs && m->slabs[*next].lo < addr; ++*next) {
		const struct bm_slab *s = &m->slabs[*next];
		for (uint32_t w = 0; m->slot_marks && w < (s->nslots + 63) / 64;
		     w++)
			for (uint64_t bits = m->slot_used[s->word0 + w]; bits;
			     bits &= bits - 1) {
				struct bm_ref ref;
				slot_ref(m, s, (uint64_t)w * 64 +
					 (unsigned)__builtin_ctzll(bits), &ref);
				if (ref.addr < lo || ref.addr >= hi)
					continue;
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
