/* cache.c - lazy regions read in blocks, kept in place (cache.h says why).
 *
 * Invariants the readers rely on:
 *  - lazy->state[b] goes EMPTY -> FULL or HOLEY once, under the cache
 *    lock, after the block's bytes and its pages' hole bits are written;
 *    readers load it with acquire and then read both without the lock.
 *  - lazy->base is set (under the lock) before any state leaves EMPTY.
 *  - A FULL block has no hole; a HOLEY block has at least one, in `holes`.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cache.h"

enum { BLOCK_EMPTY, BLOCK_FULL, BLOCK_HOLEY };

struct hw_lazy {
	uint8_t *base;              /* reservation of `len` bytes, or NULL */
	uint64_t len;
	size_t nblocks;
	_Atomic uint8_t *state;     /* per block */
	uint64_t *holes;            /* bit per page: not readable */
	bool frozen;                /* the backend's view changed: no reads */
};

/* A reservation made before the backend's view was read (a live
   process about to be stopped), for the region [start, start + len).  */
struct prepared {
	uint64_t start, len;
	uint8_t *base;
};

struct hw_cache {
	pthread_mutex_t lock;
	struct prepared *prep;      /* not taken yet (base NULL once taken) */
	size_t nprep;
	uint64_t budget;
	uint64_t page;
	_Atomic uint64_t used;
	atomic_bool over_budget;
	atomic_bool oom;            /* a region's reservation failed */
	uint8_t present[HW_CACHE_BLOCK / 4096];  /* scratch, under lock */
};

struct hw_cache *hw_cache_new(uint64_t budget, uint64_t page_size)
{
	if (page_size < 4096 || page_size > HW_CACHE_BLOCK ||
	    (page_size & (page_size - 1)))
		page_size = 4096;
	struct hw_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->budget = budget;
	c->page = page_size;
	return c;
}

static void lazy_free(struct hw_lazy *z)
{
	if (!z)
		return;
	if (z->base)
		munmap(z->base, z->len);
	free(z->state);
	free(z->holes);
	free(z);
}

/* A fresh reservation of len bytes, huge pages where the kernel allows
   them: filling a block then costs one page fault instead of 64 (page
   faults, not copying, are most of a snapshot's time otherwise).  */
static uint8_t *reserve(uint64_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (len >= (2u << 20))
		(void)madvise(m, len, MADV_HUGEPAGE);
	return m;
}

uint8_t *hw_cache_prepare(struct hw_cache *c, uint64_t start, uint64_t len)
{
	if (!len || len > SIZE_MAX)
		return NULL;
	struct prepared *v = realloc(c->prep, (c->nprep + 1) * sizeof *v);
	if (!v)
		return NULL;
	c->prep = v;
	uint8_t *base = reserve(len);
	if (base)
		c->prep[c->nprep++] = (struct prepared){ start, len, base };
	return base;
}

void hw_cache_unprepare(struct hw_cache *c)
{
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nprep; i++)
		if (c->prep[i].base)
			munmap(c->prep[i].base, c->prep[i].len);
	free(c->prep);
	c->prep = NULL;
	c->nprep = 0;
	pthread_mutex_unlock(&c->lock);
}

/* The prepared reservation of the region starting at `start`, taken
   and made len bytes long (a heap may have grown or shrunk between the
   two reads of the map: what it had stays present), or NULL.  */
static uint8_t *take_prepared(struct hw_cache *c, uint64_t start,
			      uint64_t len)
{
	for (size_t i = 0; i < c->nprep; i++) {
		struct prepared *pr = &c->prep[i];
		if (!pr->base || pr->start != start)
			continue;
		uint8_t *base = pr->base;
		uint64_t had = pr->len;
		pr->base = NULL;
		if (had == len)
			return base;
		void *m = mremap(base, had, len, MREMAP_MAYMOVE);
		if (m != MAP_FAILED)
			return m;
		munmap(base, had);
		return NULL;
	}
	return NULL;
}

void hw_cache_free(struct hw_cache *c, struct hw_region *regions, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		lazy_free(regions[i].lazy);
		regions[i].lazy = NULL;
	}
	if (c) {
		hw_cache_unprepare(c);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
}

bool hw_cache_add_region(struct hw_cache *c, struct hw_region *r)
{
	uint64_t len = r->end - r->start;
	struct hw_lazy *z = calloc(1, sizeof *z);
	if (!z)
		return false;
	z->len = len;
	z->nblocks = (size_t)((len + HW_CACHE_BLOCK - 1) / HW_CACHE_BLOCK);
	uint64_t npages = (len + c->page - 1) / c->page;
	z->state = calloc(z->nblocks ? z->nblocks : 1, sizeof *z->state);
	z->holes = calloc((size_t)((npages + 63) / 64) + 1, sizeof *z->holes);
	if (!z->state || !z->holes) {
		lazy_free(z);
		return false;
	}
	r->lazy = z;
	r->data = NULL;
	r->avail = len;
	return true;
}

static bool is_hole(const struct hw_lazy *z, uint64_t page)
{
	return z->holes[page / 64] >> (page % 64) & 1;
}

static void mark_holes(struct hw_lazy *z, uint64_t first, uint64_t n)
{
	for (uint64_t p = first; p < first + n; p++)
		z->holes[p / 64] |= 1ull << (p % 64);
}

/* Read [off, off + len) of r (page-aligned pieces of one block) into the
   reservation; pages that cannot be read become holes.  Returns the number
   of hole pages made.  Lock held.  */
static uint64_t read_pages(struct hw_target *t, struct hw_cache *c,
			   struct hw_region *r, uint64_t off, uint64_t len)
{
	struct hw_lazy *z = r->lazy;
	uint64_t ps = c->page, holes = 0;
	while (len > 0) {
		if (z->frozen || atomic_load(&c->used) + len > c->budget) {
			if (!z->frozen)
				atomic_store(&c->over_budget, true);
			mark_holes(z, off / ps, (len + ps - 1) / ps);
			return holes + (len + ps - 1) / ps;
		}
		size_t got = t->ops->read(t, r->start + off, z->base + off,
					  (size_t)len);
		if (got > len)
			got = (size_t)len;
		atomic_fetch_add(&c->used, got);
		/* Whole pages read are good; the page holding the first byte
		   that failed is a hole, and the reading goes on after it
		   (one page can be unmapped in the middle of a mapping).  */
		uint64_t good = got / ps * ps;
		if (good == len)
			return holes;
		off += good;
		len -= good;
		memset(z->base + off, 0, ps < len ? ps : len);
		mark_holes(z, off / ps, 1);
		holes++;
		uint64_t step = ps < len ? ps : len;
		off += step;
		len -= step;
	}
	return holes;
}

/* Read block b of r.  Lock held.  */
static void fill_block(struct hw_target *t, struct hw_cache *c,
		       struct hw_region *r, size_t b)
{
	struct hw_lazy *z = r->lazy;
	if (atomic_load_explicit(&z->state[b], memory_order_relaxed) != BLOCK_EMPTY)
		return;
	if (!z->base) {
		uint8_t *m = take_prepared(c, r->start, z->len);
		if (!m)
			m = reserve(z->len);
		if (!m) {
			/* No room to hold it: the region reads as holes, and
			   the command ends in "out of memory" (hw_cache_oom)
			   rather than report those holes as damage.  */
			atomic_store(&c->oom, true);
			mark_holes(z, 0, (z->len + c->page - 1) / c->page);
			for (size_t i = 0; i < z->nblocks; i++)
				atomic_store_explicit(&z->state[i], BLOCK_HOLEY,
						      memory_order_release);
			return;
		}
		z->base = m;
	}
	uint64_t ps = c->page;
	uint64_t off = (uint64_t)b * HW_CACHE_BLOCK;
	uint64_t len = z->len - off < HW_CACHE_BLOCK ? z->len - off
						     : HW_CACHE_BLOCK;
	size_t npages = (size_t)((len + ps - 1) / ps);
	uint64_t holes = 0;
	/* Anonymous pages the target never touched read as zeros, which the
	   reservation already is: skip them rather than make the target
	   map them.  */
	bool sparse = r->file < 0 && !r->shared && t->ops->present &&
		      npages <= sizeof c->present &&
		      t->ops->present(t, r->start + off, npages, c->present);
	if (!sparse) {
		holes = read_pages(t, c, r, off, len);
	} else {
		for (size_t i = 0; i < npages; ) {
			size_t j = i;
			while (j < npages && c->present[j] == c->present[i])
				j++;
			uint64_t a = off + i * ps;
			uint64_t n = (j * ps < len ? j * ps : len) - i * ps;
			if (c->present[i])
				holes += read_pages(t, c, r, a, n);
			i = j;
		}
	}
	atomic_store_explicit(&z->state[b], holes ? BLOCK_HOLEY : BLOCK_FULL,
			      memory_order_release);
}

static uint8_t block_state(struct hw_lazy *z, size_t b)
{
	return atomic_load_explicit(&z->state[b], memory_order_acquire);
}

/* Block b of r, read if it was not: the lock only when it may be.  */
static void need_block(struct hw_target *t, struct hw_cache *c,
		       struct hw_region *r, size_t b)
{
	if (block_state(r->lazy, b) != BLOCK_EMPTY)
		return;
	pthread_mutex_lock(&c->lock);
	fill_block(t, c, r, b);
	pthread_mutex_unlock(&c->lock);
}

uint64_t hw_cache_run(struct hw_target *t, struct hw_region *r, uint64_t addr,
		      uint64_t want, const uint8_t **p)
{
	struct hw_lazy *z = r->lazy;
	struct hw_cache *c = t->cache;
	if (!z || !c || addr < r->start || addr >= r->end)
		return 0;
	uint64_t off = addr - r->start;
	if (want > z->len - off)
		want = z->len - off;
	if (want == 0)
		want = 1;
	size_t first = (size_t)(off / HW_CACHE_BLOCK);
	size_t last = (size_t)((off + want - 1) / HW_CACHE_BLOCK);
	for (size_t b = first; b <= last; b++)
		need_block(t, c, r, b);
	/* The run: from addr over filled blocks, up to the first hole, and
	   no further than asked (a peek must not cost a scan of the whole
	   region).  */
	uint64_t ps = c->page, end = off;
	for (size_t b = first; b < z->nblocks && end < off + want; b++) {
		uint8_t st = block_state(z, b);
		uint64_t bstart = (uint64_t)b * HW_CACHE_BLOCK;
		uint64_t bend = bstart + HW_CACHE_BLOCK < z->len
				? bstart + HW_CACHE_BLOCK : z->len;
		if (st == BLOCK_EMPTY)
			break;
		if (st == BLOCK_FULL) {
			end = bend;
			continue;
		}
		uint64_t pg = (end > bstart ? end : bstart) / ps;
		while (pg * ps < bend && !is_hole(z, pg))
			pg++;
		end = pg * ps < bend ? pg * ps : bend;
		if (end < bend)
			break;
	}
	if (end <= off)
		return 0;
	*p = z->base + off;
	return end - off;
}

bool hw_cache_fill(struct hw_target *t, struct hw_region *r,
		   const volatile sig_atomic_t *cancel)
{
	struct hw_lazy *z = r->lazy;
	if (!z || !t->cache)
		return true;
	for (size_t b = 0; b < z->nblocks; b++) {
		if (cancel && *cancel)
			return false;
		need_block(t, t->cache, r, b);
	}
	return true;
}

void hw_cache_freeze(struct hw_cache *c, struct hw_region *r)
{
	if (!r->lazy || !c)
		return;
	pthread_mutex_lock(&c->lock);
	r->lazy->frozen = true;
	pthread_mutex_unlock(&c->lock);
}

uint64_t hw_cache_bytes(const struct hw_cache *c)
{
	return c ? atomic_load(&((struct hw_cache *)c)->used) : 0;
}

bool hw_cache_over_budget(const struct hw_cache *c)
{
	return c && atomic_load(&((struct hw_cache *)c)->over_budget);
}

bool hw_cache_oom(const struct hw_cache *c)
{
	return c && atomic_load(&((struct hw_cache *)c)->oom);
}
