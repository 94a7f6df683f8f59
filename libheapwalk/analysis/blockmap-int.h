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
	uint32_t *page_slab;              /* per page from start: 1 + the
					     index of the slab owning it,
					     0 for none; NULL: no slab */
};

struct bm_slab {
	uint64_t lo, hi;                  /* the pages it owns */
	uint64_t base, slot;              /* slot k at base + k * slot */
	uint64_t limit;                   /* base + nslots * slot */
	size_t word0;                     /* its first word of slot_used */
	uint32_t nslots;
};

struct bm_run *bm_run_of(const struct hw_blockmap *m, uint64_t addr);

/* The slab owning addr's page in run r, or NULL.  */
static inline const struct bm_slab *bm_slab_at(const struct hw_blockmap *m,
					       const struct bm_run *r,
					       uint64_t addr)
{
	if (!r->page_slab)
		return NULL;
	uint32_t i = r->page_slab[(addr - r->start) >> BM_PAGE_SHIFT];
	return i ? &m->slabs[i - 1] : NULL;
}

/* The slab s's part of bm_add, bm_remove, bm_find (with addr in s's
   pages), bm_seal, bm_each and bm_settle_marks.  */
bool bm_slab_add(struct hw_blockmap *m, const struct bm_slab *s,
		 uint64_t addr, uint64_t size);
bool bm_slab_remove(struct hw_blockmap *m, const struct bm_slab *s,
		    uint64_t addr);
bool bm_slab_find(const struct hw_blockmap *m, const struct bm_slab *s,
		  uint64_t addr, struct bm_ref *ref, bool *exact);
bool bm_slabs_seal(struct hw_blockmap *m);
/* The blocks of the slabs from *next (the first not given yet) up to
   `last` or to the first at or above addr, in address order.  */
bool bm_slabs_each_below(const struct hw_blockmap *m, size_t *next,
			 size_t last, uint64_t addr, bm_block_fn *fn,
			 void *cookie);
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
