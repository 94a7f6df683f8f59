/* blockmap.c - bitmaps of the blocks in use (blockmap.h).  */
#include <stdlib.h>
#include <string.h>

#include "../target/target.h"
#include "blockmap-int.h"

#define LEAF_SHIFT 20                 /* a leaf maps 1 MiB */
#define LEAF_SPAN ((uint64_t)1 << LEAF_SHIFT)
/* A mapping larger than this is mapped only as far as the target can be
   read: a run's directory has a pointer per MiB (8 MiB for 1 TiB), and a
   damaged core may declare a segment of any size.  */
#define RUN_DECLARED_MAX ((uint64_t)1 << 40)

/* 1 MiB of address space.  rank and marks are made by bm_seal(): rank[w]
   counts the starts in groups before w, marks[] has a byte per start.  */
struct bm_leaf {
	uint32_t *rank;                   /* [leaf_groups], then the marks */
	uint8_t *marks;
	struct bm_group g[];
};

static size_t leaf_groups(const struct hw_blockmap *m)
{
	return (size_t)1 << (LEAF_SHIFT - m->shift - 6);
}

bool bm_init(struct hw_blockmap *m, struct hw_target *t, unsigned granule)
{
	memset(m, 0, sizeof *m);
	m->shift = 3;
	while (((unsigned)1 << m->shift) < granule && m->shift < 12)
		m->shift++;
	m->lo = UINT64_MAX;
	m->runs = calloc(t->nregions ? t->nregions : 1, sizeof *m->runs);
	if (!m->runs)
		return false;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!(r->prot & HW_PROT_R))
			continue;
		uint64_t end = r->end;
		if (end - r->start > RUN_DECLARED_MAX) {
			uint64_t held = hw_region_held(r);
			if (!held)
				continue;
			end = r->start + held;
		}
		struct bm_run *last = m->nruns ? &m->runs[m->nruns - 1] : NULL;
		if (last && last->end == r->start) {
			last->end = end;
			continue;
		}
		m->runs[m->nruns++] = (struct bm_run){
			.start = r->start, .end = end,
			.base = r->start & ~(LEAF_SPAN - 1) };
	}
	return true;
}

void bm_free(struct hw_blockmap *m)
{
	bm_slabs_free(m);
	for (size_t i = 0; i < m->nruns; i++) {
		struct bm_run *r = &m->runs[i];
		for (size_t k = 0; r->leaves && k < r->nleaves; k++)
			if (r->leaves[k]) {
				free(r->leaves[k]->rank);
				free(r->leaves[k]);
			}
		free(r->leaves);
	}
	free(m->runs);
	memset(m, 0, sizeof *m);
}

struct bm_run *bm_run_of(const struct hw_blockmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nruns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < m->runs[mid].start)
			hi = mid;
		else if (addr >= m->runs[mid].end)
			lo = mid + 1;
		else
			return &m->runs[mid];
	}
	return NULL;
}

/* The leaf k of r, made if need be (several threads may race: one
   wins, the others free theirs).  */
static struct bm_leaf *leaf_make(struct hw_blockmap *m, struct bm_run *r,
				 size_t k)
{
	struct bm_leaf **dir = __atomic_load_n(&r->leaves, __ATOMIC_ACQUIRE);
	if (!dir) {
		size_t n = (size_t)((r->end - r->base + LEAF_SPAN - 1) >> LEAF_SHIFT);
		struct bm_leaf **fresh = calloc(n, sizeof *fresh);
		if (!fresh)
			return NULL;
		struct bm_leaf **expect = NULL;
		if (__atomic_compare_exchange_n(&r->leaves, &expect, fresh, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			r->nleaves = n;
			dir = fresh;
		} else {
			free(fresh);
			dir = expect;
		}
	}
	struct bm_leaf *leaf = __atomic_load_n(&dir[k], __ATOMIC_ACQUIRE);
	if (leaf)
		return leaf;
	struct bm_leaf *fresh = calloc(1, sizeof *fresh + leaf_groups(m) *
					  sizeof(struct bm_group));
	if (!fresh)
		return NULL;
	struct bm_leaf *expect = NULL;
	if (__atomic_compare_exchange_n(&dir[k], &expect, fresh, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&m->leaves, 1, __ATOMIC_RELAXED);
		return fresh;
	}
	free(fresh);
	return expect;
}

/* The group of granule g of run r, through the filler's cached leaf.  */
static struct bm_group *group_of(struct hw_blockmap *m, struct bm_filler *f,
				 struct bm_run *r, uint64_t g)
{
	unsigned lshift = LEAF_SHIFT - m->shift;
	size_t k = (size_t)(g >> lshift);
	if (f->leaf_run != r || f->leaf_k != k || !f->leaf) {
		f->leaf = leaf_make(m, r, k);
		f->leaf_run = r;
		f->leaf_k = k;
		if (!f->leaf) {
			__atomic_store_n(&m->oom, true, __ATOMIC_RELAXED);
			return NULL;
		}
	}
	return &f->leaf->g[(g & (((uint64_t)1 << lshift) - 1)) >> 6];
}

static void set_bit(struct hw_blockmap *m, struct bm_filler *f,
		    struct bm_run *r, uint64_t g, bool start)
{
	struct bm_group *grp = group_of(m, f, r, g);
	if (grp)
		__atomic_fetch_or(start ? &grp->start : &grp->end,
				  (uint64_t)1 << (g & 63), __ATOMIC_RELAXED);
}

/* The end of the filler's last block, unless the next block starts
   there (most do: then its start bit says it all).  */
static void flush_end(struct hw_blockmap *m, struct bm_filler *f)
{
	if (f->end_run)
		set_bit(m, f, f->end_run, f->end_g, false);
	f->end_run = NULL;
}

bool bm_add(struct hw_blockmap *m, struct bm_filler *f, uint64_t addr,
	    uint64_t size)
{
	uint64_t gran = (uint64_t)1 << m->shift;
	struct bm_run *r = f->run;
	if (!r || addr < r->start || addr >= r->end)
		r = f->run = bm_run_of(m, addr);
	if (!r)
		return false;
	uint64_t end = size > r->end - addr ? r->end : addr + size;
	const struct bm_slab_page *sl = bm_slab_at(r, addr);
	if (sl) {
		if (!bm_slab_add(m, sl, addr, size))
			return false;
		if (addr < f->lo)
			f->lo = addr;
		if (end > f->hi)
			f->hi = end;
		return true;
	}
	if (addr & (gran - 1))
		return false;
	uint64_t g0 = (addr - r->base) >> m->shift;
	uint64_t g1 = (end - r->base + gran - 1) >> m->shift;
	unsigned lshift = LEAF_SHIFT - m->shift;
	if (f->end_run != r || f->end_g != g0)
		flush_end(m, f);
	f->end_run = NULL;
	set_bit(m, f, r, g0, true);
	/* Every leaf the block covers exists, so that a search from inside
	   it never meets a missing leaf before its start.  */
	for (uint64_t k = (g0 >> lshift) + 1; k <= (g1 - 1) >> lshift; k++)
		if (!leaf_make(m, r, (size_t)k))
			__atomic_store_n(&m->oom, true, __ATOMIC_RELAXED);
	if (r->base + (g1 << m->shift) < r->end) {
		f->end_run = r;
		f->end_g = g1;
	}
	if (addr < f->lo)
		f->lo = addr;
	if (end > f->hi)
		f->hi = end;
	return true;
}

void bm_fill_done(struct hw_blockmap *m, struct bm_filler *f)
{
	flush_end(m, f);
	if (f->lo < m->lo)
		m->lo = f->lo;
	if (f->hi > m->hi)
		m->hi = f->hi;
}

/* A sealed leaf's blocks (its mark bytes).  */
static uint32_t leaf_blocks(const struct hw_blockmap *m,
			    const struct bm_leaf *leaf)
{
	size_t n = leaf_groups(m);
	return leaf->rank[n - 1] +
	       bm_popcount64(leaf->g[n - 1].start);
}

bool bm_remove(struct hw_blockmap *m, uint64_t addr)
{
	struct bm_run *r = bm_run_of(m, addr);
	const struct bm_slab_page *sl = r ? bm_slab_at(r, addr) : NULL;
	if (sl)
		return bm_slab_remove(m, sl, addr);
	if (!r || !r->leaves || (addr & (((uint64_t)1 << m->shift) - 1)))
		return false;
	uint64_t g = (addr - r->base) >> m->shift;
	unsigned lshift = LEAF_SHIFT - m->shift;
	size_t k = (size_t)(g >> lshift);
	struct bm_leaf *leaf = k < r->nleaves ? r->leaves[k] : NULL;
	if (!leaf)
		return false;
	struct bm_group *grp = &leaf->g[(g & (((uint64_t)1 << lshift) - 1)) >> 6];
	uint64_t bit = (uint64_t)1 << (g & 63);
	if (!(__atomic_fetch_and(&grp->start, ~bit, __ATOMIC_RELAXED) & bit))
		return false;
	__atomic_fetch_or(&grp->end, bit, __ATOMIC_RELAXED);
	return true;
}

/* The leaf's ranks and mark bytes, after its end bits are final.  */
static bool leaf_seal(const struct hw_blockmap *m, struct bm_leaf *leaf)
{
	size_t n = leaf_groups(m);
	uint32_t count = 0;
	for (size_t w = 0; w < n; w++) {
		leaf->g[w].end &= ~leaf->g[w].start;
		count += bm_popcount64(leaf->g[w].start);
	}
	/* One allocation: the ranks, then the mark bytes.  */
	uint32_t *rank = calloc(1, n * sizeof *rank + count);
	if (!rank)
		return false;
	count = 0;
	for (size_t w = 0; w < n; w++) {
		rank[w] = count;
		count += bm_popcount64(leaf->g[w].start);
	}
	leaf->rank = rank;
	leaf->marks = (uint8_t *)(rank + n);
	return true;
}

bool bm_seal(struct hw_blockmap *m)
{
	bool ok = bm_slabs_seal(m);
	for (size_t i = 0; i < m->nruns; i++) {
		struct bm_run *r = &m->runs[i];
		for (size_t k = 0; r->leaves && k < r->nleaves; k++)
			if (r->leaves[k] && !leaf_seal(m, r->leaves[k]))
				ok = false;
	}
	if (m->lo > m->hi)
		m->lo = m->hi = 0;
	if (!ok)
		m->oom = true;
	return ok;
}

/* The end of the block starting at addr, bit b of a group whose starts
   and ends are `bounds`, when the next start or end is in the group;
   else 0 (bm_block_end() looks further).  Most blocks end in the group
   they start in, and ptmalloc's check of every interior pointer
   (reach.c, header_of_next) wants the end: found with the start, it
   costs no second search from the address.  */
static inline uint64_t end_in_group(const struct hw_blockmap *m,
				    const struct bm_run *r, uint64_t bounds,
				    unsigned b, uint64_t addr)
{
	uint64_t above = b == 63 ? 0 : bounds >> (b + 1);
	if (!above)
		return 0;
	uint64_t end = addr + ((uint64_t)(__builtin_ctzll(above) + 1) <<
			       m->shift);
	return end < r->end ? end : r->end;
}

/* A block's ref: its group w of leaf, bit b.  */
static inline void ref_make(const struct hw_blockmap *m,
			    struct bm_ref *ref, const struct bm_run *r,
			    struct bm_leaf *leaf, size_t w, unsigned b,
			    uint64_t addr)
{
	uint64_t bit = (uint64_t)1 << b;
	ref->addr = addr;
	ref->end = end_in_group(m, r, leaf->g[w].start | leaf->g[w].end, b,
				addr);
	ref->run = r;
	ref->mk = &leaf->marks[leaf->rank[w] +
			       bm_popcount64(leaf->g[w].start &
							      (bit - 1))];
}

static struct bm_leaf *leaf_get(const struct bm_run *r, size_t k)
{
	return r->leaves && k < r->nleaves ? r->leaves[k] : NULL;
}

bool bm_find(const struct hw_blockmap *m, uint64_t addr, struct bm_ref *ref,
	     bool *exact)
{
	const struct bm_run *hint = NULL;
	return bm_find_near(m, &hint, addr, ref, exact);
}

void bm_probe_start(const struct hw_blockmap *m, const struct bm_run **hint,
		    struct bm_probe *p, uint64_t addr)
{
	p->addr = addr;
	p->found = false;
	p->interior = false;
	p->step = BM_PR_DONE;
	if (addr - m->lo >= m->hi - m->lo)
		return;
	const struct bm_run *r = *hint;
	if (!r || addr < r->start || addr >= r->end)
		*hint = r = bm_run_of(m, addr);
	if (!r)
		return;
	p->ref.run = r;
	if (r->page_slab) {
		p->at = &r->page_slab[(addr - r->start) >> BM_PAGE_SHIFT];
		BM_PREFETCH_READ(p->at);
		p->step = BM_PR_PAGE;
		return;
	}
	bm_probe_leaf(m, p);
}

void bm_probe_leaf(const struct hw_blockmap *m, struct bm_probe *p)
{
	const struct bm_run *r = p->ref.run;
	uint64_t g = (p->addr - r->base) >> m->shift;
	unsigned lshift = LEAF_SHIFT - m->shift;
	size_t k = (size_t)(g >> lshift);
	struct bm_leaf *leaf = leaf_get(r, k);
	p->step = BM_PR_DONE;
	if (!leaf)
		return;
	p->at = leaf;
	p->k = k;
	p->w = (size_t)((g & (((uint64_t)1 << lshift) - 1)) >> 6);
	p->b = (unsigned)(g & 63);
	BM_PREFETCH_READ(&leaf->g[p->w]);
	p->step = BM_PR_GROUP;
}

/* The block holding granule b of group w of leaf k of run r: the
   nearest start at or below it, unless an end lies between.  True with
   *leafp, *kp, *wp and *bp moved to that start's; false when no block
   holds it.  */
static inline bool find_start(const struct hw_blockmap *m,
			      const struct bm_run *r,
			      const struct bm_leaf **leafp, size_t *kp,
			      size_t *wp, unsigned *bp)
{
	const struct bm_leaf *leaf = *leafp;
	size_t k = *kp, w = *wp;
	/* Bits at or below b in this group, then whole groups downwards.  */
	uint64_t keep = *bp == 63 ? ~(uint64_t)0 : ((uint64_t)2 << *bp) - 1;
	for (;;) {
		uint64_t any = (leaf->g[w].start | leaf->g[w].end) & keep;
		if (any) {
			unsigned top = 63 - (unsigned)__builtin_clzll(any);
			if (!(leaf->g[w].start & ((uint64_t)1 << top)))
				return false;     /* an end: a gap */
			*leafp = leaf;
			*kp = k;
			*wp = w;
			*bp = top;
			return true;
		}
		keep = ~(uint64_t)0;
		if (w > 0) {
			w--;
			continue;
		}
		/* A missing leaf below: no block covers the address.  */
		if (k == 0 || !(leaf = leaf_get(r, --k)))
			return false;
		w = leaf_groups(m) - 1;
	}
}

/* The address of granule b of group w of leaf k of run r.  */
static inline uint64_t granule_addr(const struct hw_blockmap *m,
				    const struct bm_run *r, size_t k, size_t w,
				    unsigned b)
{
	uint64_t g = ((uint64_t)k << (LEAF_SHIFT - m->shift)) +
		     ((uint64_t)w << 6) + b;
	return r->base + (g << m->shift);
}

bool bm_probe_step(const struct hw_blockmap *m, struct bm_probe *p)
{
	switch (p->step) {
	case BM_PR_PAGE:
	case BM_PR_SLOT:
		return bm_slab_probe_step(m, p);
	case BM_PR_GROUP: {
		const struct bm_leaf *leaf = p->at;
		if (!find_start(m, p->ref.run, &leaf, &p->k, &p->w, &p->b))
			break;
		p->at = leaf;
		BM_PREFETCH_READ(&leaf->rank[p->w]);
		p->step = BM_PR_RANK;
		return true;
	}
	case BM_PR_RANK: {
		struct bm_leaf *leaf = (struct bm_leaf *)p->at;
		ref_make(m, &p->ref, p->ref.run, leaf, p->w, p->b,
			 granule_addr(m, p->ref.run, p->k, p->w, p->b));
		bm_probe_hit(p);
		break;
	}
	default:
		break;
	}
	p->step = BM_PR_DONE;
	return false;
}

bool bm_find_near(const struct hw_blockmap *m, const struct bm_run **hint,
		  uint64_t addr, struct bm_ref *ref, bool *exact)
{
	if (addr - m->lo >= m->hi - m->lo)
		return false;
	const struct bm_run *r = *hint;
	if (!r || addr < r->start || addr >= r->end)
		*hint = r = bm_run_of(m, addr);
	if (!r)
		return false;
	const struct bm_slab_page *sl = bm_slab_at(r, addr);
	if (sl)
		return bm_slab_find(m, sl, addr, ref, exact);
	uint64_t g = (addr - r->base) >> m->shift;
	unsigned lshift = LEAF_SHIFT - m->shift;
	size_t k = (size_t)(g >> lshift);
	const struct bm_leaf *leaf = leaf_get(r, k);
	if (!leaf)
		return false;
	size_t w = (size_t)((g & (((uint64_t)1 << lshift) - 1)) >> 6);
	unsigned b = (unsigned)(g & 63);
	if (!find_start(m, r, &leaf, &k, &w, &b))
		return false;
	ref_make(m, ref, r, (struct bm_leaf *)leaf, w, b,
		 granule_addr(m, r, k, w, b));
	*exact = ref->addr == addr;
	return true;
}

bool bm_at(const struct hw_blockmap *m, uint64_t addr, struct bm_ref *ref)
{
	bool exact;
	return bm_find(m, addr, ref, &exact) && exact;
}

uint64_t bm_block_end(const struct hw_blockmap *m, const struct bm_ref *ref)
{
	if (ref->end)
		return ref->end;
	const struct bm_run *r = ref->run ? ref->run : bm_run_of(m, ref->addr);
	if (!r)
		return ref->addr;
	uint64_t g = (ref->addr - r->base) >> m->shift;
	unsigned lshift = LEAF_SHIFT - m->shift;
	size_t k = (size_t)(g >> lshift);
	struct bm_leaf *leaf = leaf_get(r, k);
	size_t w = (size_t)((g & (((uint64_t)1 << lshift) - 1)) >> 6);
	unsigned b = (unsigned)(g & 63);
	uint64_t keep = b == 63 ? 0 : ~(((uint64_t)2 << b) - 1);
	while (leaf) {
		uint64_t any = (leaf->g[w].start | leaf->g[w].end) & keep;
		if (any) {
			uint64_t gs = ((uint64_t)k << lshift) + ((uint64_t)w << 6)
				      + (unsigned)__builtin_ctzll(any);
			uint64_t end = r->base + (gs << m->shift);
			return end < r->end ? end : r->end;
		}
		keep = ~(uint64_t)0;
		if (++w == leaf_groups(m)) {
			w = 0;
			leaf = leaf_get(r, ++k);
		}
	}
	/* No end recorded: the block reaches the end of its leaves.  */
	uint64_t end = r->base + ((uint64_t)k << LEAF_SHIFT);
	return end < r->end ? end : r->end;
}

uint64_t bm_end_near(const struct hw_blockmap *m, const struct bm_run **hint,
		     uint64_t addr)
{
	const struct bm_run *r = *hint;
	if (!r || addr < r->start || addr >= r->end)
		*hint = r = bm_run_of(m, addr);
	if (!r)
		return addr;
	const struct bm_slab_page *pg = bm_slab_at(r, addr);
	if (pg)
		return addr + pg->slot;
	struct bm_ref ref = { .addr = addr, .run = r };
	return bm_block_end(m, &ref);
}

/* The blocks of leaf k of run r in [lo, hi), each after the slabs'
   blocks below it (from *slab on): false when fn stopped.  */
static bool each_in_leaf(const struct hw_blockmap *m, const struct bm_run *r,
			 size_t k, uint64_t lo, uint64_t hi, size_t *slab,
			 bm_block_fn *fn, void *cookie)
{
	unsigned lshift = LEAF_SHIFT - m->shift;
	struct bm_leaf *leaf = r->leaves[k];
	size_t nth = 0;       /* the block's mark byte */
	for (size_t w = 0; w < leaf_groups(m); w++) {
		for (uint64_t bits = leaf->g[w].start; bits; bits &= bits - 1) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			uint64_t g = ((uint64_t)k << lshift) + ((uint64_t)w << 6) + b;
			struct bm_ref ref = { r->base + (g << m->shift), 0,
					      &leaf->marks[nth++], r };
			if (ref.addr < lo)
				continue;
			if (ref.addr >= hi)
				return true;
			/* (Most heaps have no slab among their leaves' blocks:
			   no call per block to find none.)  */
			if ((*slab < m->nslabs && m->slabs[*slab].lo < ref.addr &&
			     !bm_slabs_each_below(m, slab, ref.addr, lo, hi, fn,
						  cookie)) ||
			    !fn(cookie, &ref))
				return false;
		}
	}
	return true;
}

bool bm_each_range(const struct hw_blockmap *m, uint64_t lo, uint64_t hi,
		   bm_block_fn *fn, void *cookie)
{
	size_t slab = bm_slab_from(m, lo);  /* its blocks go in address
					       order too */
	for (size_t i = 0; i < m->nruns; i++) {
		const struct bm_run *r = &m->runs[i];
		if (r->end <= lo)
			continue;
		if (r->start >= hi)
			break;
		for (size_t k = 0; r->leaves && k < r->nleaves; k++) {
			uint64_t at = r->base + ((uint64_t)k << LEAF_SHIFT);
			if (!r->leaves[k] || at + LEAF_SPAN <= lo)
				continue;
			if (at >= hi)
				break;
			if (!each_in_leaf(m, r, k, lo, hi, &slab, fn, cookie))
				return false;
		}
	}
	return bm_slabs_each_below(m, &slab, hi, lo, hi, fn, cookie);
}

bool bm_each(const struct hw_blockmap *m, bm_block_fn *fn, void *cookie)
{
	return bm_each_range(m, 0, UINT64_MAX, fn, cookie);
}

/* bm_part_cuts' walk through the leaves and slabs in address order,
   weighing each by its blocks: part p starts at the first leaf or slab
   with blocks * p / nparts blocks before it.  */
struct cutter {
	uint64_t blocks, before;
	unsigned nparts, p;
	uint64_t *cuts;
	size_t slab;              /* the next slab to weigh */
};

static void cut_at(struct cutter *c, uint64_t at, uint64_t blocks)
{
	while (c->p < c->nparts && c->before >= c->blocks * c->p / c->nparts)
		c->cuts[c->p++] = at;
	c->before += blocks;
}

static uint64_t slab_blocks(const struct hw_blockmap *m,
			    const struct bm_slab *s)
{
	uint64_t n = 0;
	for (size_t w = 0; w < (s->nslots + 63) / 64; w++)
		n += bm_popcount64(m->slot_used[s->word0 + w]);
	return n;
}

static void cut_slabs_below(const struct hw_blockmap *m, struct cutter *c,
			    uint64_t addr)
{
	for (; c->slab < m->nslabs && m->slabs[c->slab].lo < addr; c->slab++)
		cut_at(c, m->slabs[c->slab].lo,
		       slab_blocks(m, &m->slabs[c->slab]));
}

void bm_part_cuts(const struct hw_blockmap *m, unsigned nparts,
		  uint64_t *cuts)
{
	struct cutter c = { .nparts = nparts, .p = 1, .cuts = cuts };
	for (size_t i = 0; i < m->nslabs; i++)
		c.blocks += slab_blocks(m, &m->slabs[i]);
	for (size_t i = 0; i < m->nruns; i++)
		for (size_t k = 0; m->runs[i].leaves && k < m->runs[i].nleaves;
		     k++)
			if (m->runs[i].leaves[k])
				c.blocks += leaf_blocks(m, m->runs[i].leaves[k]);
	for (unsigned p = 0; p <= nparts; p++)
		cuts[p] = p ? UINT64_MAX : 0;
	for (size_t i = 0; i < m->nruns; i++) {
		const struct bm_run *r = &m->runs[i];
		for (size_t k = 0; r->leaves && k < r->nleaves; k++) {
			if (!r->leaves[k])
				continue;
			uint64_t at = r->base + ((uint64_t)k << LEAF_SHIFT);
			cut_slabs_below(m, &c, at);
			cut_at(&c, at, leaf_blocks(m, r->leaves[k]));
		}
	}
	cut_slabs_below(m, &c, UINT64_MAX);
}

void bm_settle_marks(struct hw_blockmap *m, uint64_t *marked,
		     uint64_t *possible)
{
	*marked = *possible = 0;
	bm_slabs_settle(m, marked, possible);
	for (size_t i = 0; i < m->nruns; i++) {
		const struct bm_run *r = &m->runs[i];
		for (size_t k = 0; r->leaves && k < r->nleaves; k++) {
			struct bm_leaf *leaf = r->leaves[k];
			if (!leaf)
				continue;
			bm_settle_bytes(leaf->marks, leaf_blocks(m, leaf),
					marked, possible);
		}
	}
}

uint64_t bm_bytes(const struct hw_blockmap *m)
{
	uint64_t dirs = 0, leaves = 0;
	size_t n = leaf_groups(m);
	for (size_t i = 0; i < m->nruns; i++) {
		const struct bm_run *r = &m->runs[i];
		dirs += r->nleaves * sizeof(struct bm_leaf *);
		for (size_t k = 0; r->leaves && k < r->nleaves; k++) {
			const struct bm_leaf *leaf = r->leaves[k];
			if (!leaf)
				continue;
			leaves += sizeof *leaf + n * sizeof(struct bm_group);
			if (leaf->rank)
				leaves += n * sizeof *leaf->rank +
					  leaf_blocks(m, leaf);
		}
	}
	return leaves + dirs + m->nruns * sizeof(struct bm_run) +
	       bm_slabs_bytes(m);
}
