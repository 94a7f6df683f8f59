/* blockmap-int.h - what blockmap.c and blockslab.c share: the mapped
 * ranges and the slabs (blockmap.h describes both).
 */
#ifndef HW_BLOCKMAP_INT_H
#define HW_BLOCKMAP_INT_H

#include "blockmap.h"

#define BM_PAGE_SHIFT 12              /* slabs own whole 4 KiB pages */

/* A contiguous readable range of the target: the leaves that map it
   (NULL where no block is), made when its first block is added.  */
struct bm_run {
	uint64_t start, end;              /* the mapped range */
	uint64_t base;                    /* start rounded down to 1 MiB: the
					     leaves' origin (the previous
					     run's may cover it too) */
	struct bm_leaf **leaves;          /* [nleaves], atomic */
	size_t nleaves;
	struct bm_slab_page *page_slab;   /* per page from start (NULL: no
					     slab in the run) */
};

/* A page of a run with slabs: what finding a slot in it takes, in one
   16-byte entry, so that a lookup is this entry, the slot's bit and
   rank, and its mark byte: three dependent cache misses, not four
   through a slab record (a 56-byte record per slab of a few pages is
   much more memory to miss in than 16 bytes per page).  The slots that
   meet the page are numbered from the first of them, slot 0 here: its
   slot bit is bit0 of slot_used, it starts `delta` bytes before the
   page (negative: after, in the slab's first page), and the slab has
   nslots of them from it on.  */
struct bm_slab_page {
	uint32_t bit0;
	uint32_t nslots;
	uint32_t slot;                    /* the slot size; 0: no slab owns
					     the page */
	int32_t delta;
	uint32_t interior;                /* any pointer in a slot: its start */
};

/* A slab as registered: its slots' bits are those from word0 on.  Its
   pages' entries are made from it, and bm_each goes through it.  */
struct bm_slab {
	uint64_t lo, hi;                  /* the pages it owns */
	uint64_t base, slot;              /* slot k at base + k * slot */
	size_t word0;                     /* its first word of slot_used */
	uint32_t nslots;
	bool interior;
};

struct bm_run *bm_run_of(const struct hw_blockmap *m, uint64_t addr);

/* The entry of the slab page holding addr in run r, or NULL when no
   slab owns it.  */
static inline const struct bm_slab_page *bm_slab_at(const struct bm_run *r,
						    uint64_t addr)
{
	if (!r->page_slab)
		return NULL;
	const struct bm_slab_page *pg =
		&r->page_slab[(addr - r->start) >> BM_PAGE_SHIFT];
	return pg->slot ? pg : NULL;
}

/* The steps of a probe (struct bm_probe) and what each reads; done is 0
   (bm_probe_busy).  */
enum bm_probe_step {
	BM_PR_DONE = 0,
	BM_PR_PAGE,       /* the run's page entry: which slot, if any */
	BM_PR_SLOT,       /* the slot's bit and its word's rank */
	BM_PR_GROUP,      /* bitmaps: the leaf's group, for the start */
	BM_PR_RANK,       /* bitmaps: the group's rank */
};

/* Prefetches for the probe's next step: p will be read (0) or written
   (1), and stays in every level of cache.  */
#define BM_PREFETCH_READ(p) __builtin_prefetch((p), 0, 3)
#define BM_PREFETCH_WRITE(p) __builtin_prefetch((p), 1, 3)

/* The probe's last step, in the bitmaps or a slab: p->ref names the
   block, whose mark byte the caller writes next.  */
static inline void bm_probe_hit(struct bm_probe *p)
{
	BM_PREFETCH_WRITE(p->ref.mk);
	p->exact = p->ref.addr == p->addr;
	p->found = true;
}

/* The slabs' part of bm_add, bm_remove, bm_find (with addr in the slab
   page pg), bm_seal, bm_each and bm_settle_marks.  */
bool bm_slab_add(struct hw_blockmap *m, const struct bm_slab_page *pg,
		 uint64_t addr, uint64_t size);
bool bm_slab_remove(struct hw_blockmap *m, const struct bm_slab_page *pg,
		    uint64_t addr);
bool bm_slab_find(const struct hw_blockmap *m, const struct bm_slab_page *pg,
		  uint64_t addr, struct bm_ref *ref, bool *exact);
/* A probe's steps BM_PR_PAGE and BM_PR_SLOT (in a run with slabs); a
   page no slab owns goes on in the bitmaps, by bm_probe_leaf().  */
bool bm_slab_probe_step(const struct hw_blockmap *m, struct bm_probe *p);
void bm_probe_leaf(const struct hw_blockmap *m, struct bm_probe *p);
bool bm_slabs_seal(struct hw_blockmap *m);
/* The first slab that may hold a block at or above addr.  */
size_t bm_slab_from(const struct hw_blockmap *m, uint64_t addr);
/* The blocks of the slabs from *next (the first not given yet) that
   start in [lo, hi) and below addr, in address order (*next moved past
   the slabs that lie below addr).  */
bool bm_slabs_each_below(const struct hw_blockmap *m, size_t *next,
			 uint64_t addr, uint64_t lo, uint64_t hi,
			 bm_block_fn *fn, void *cookie);
void bm_slabs_settle(struct hw_blockmap *m, uint64_t *marked,
		     uint64_t *possible);
uint64_t bm_slabs_bytes(const struct hw_blockmap *m);
void bm_slabs_free(struct hw_blockmap *m);

/* Bits set in x.  x86-64's baseline has no POPCNT instruction, and GCC
   then calls libgcc for __builtin_popcountll (3% of `leaks`, once per
   block found): the SWAR count inline is a few instructions.  */
static inline uint32_t bm_popcount64(uint64_t x)
{
#if defined(__POPCNT__) || defined(__aarch64__)
	return (uint32_t)__builtin_popcountll(x);
#else
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* bm_settle_marks() on the n mark bytes at mk: a block both reachable
   and possible is reachable; count the marked and the possible.  */
static inline void bm_settle_bytes(uint8_t *mk, uint64_t n, uint64_t *marked,
				   uint64_t *possible)
{
	for (uint64_t b = 0; b < n; b++) {
		if (mk[b] & BM_REACHABLE)
			mk[b] &= (uint8_t)~BM_POSSIBLE;
		*marked += (mk[b] & BM_MARK_BITS) != 0;
		*possible += (mk[b] & BM_POSSIBLE) != 0;
	}
}

#endif /* HW_BLOCKMAP_INT_H */
