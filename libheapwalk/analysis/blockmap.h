/* blockmap.h - which addresses are heap blocks, and each block's mark.
 *
 * `leaks` asks two questions of every word it scans: does it point into
 * a block in use, and is that the block's start?  The block map answers
 * both in a few instructions, without a per-block record: bitmaps over
 * the address space that holds blocks, one bit per granule (the
 * allocator's alignment: 16 bytes for ptmalloc, 8 for jemalloc).
 *
 *   start  a block in use starts at this granule
 *   end    the first granule past a block in use (unless one starts there)
 *
 * and, made when the map is sealed, one byte per block for its mark
 * (enum bm_mark) and whether its words were scanned (`done`), found
 * through the rank of its start bit: each leaf counts the starts before
 * each of its groups.
 *
 * The block holding an address is the nearest start at or below it,
 * unless an end lies between; a block reaches up to the next start or
 * end.  So a block's extent is its size rounded up to the granule: for
 * ptmalloc, the next chunk's size field reads as the block's last word.
 *
 * Memory: the bitmaps live in 1 MiB leaves, made only where blocks in
 * use are, so a mostly free or retained address range costs nothing.
 * Per 64 granules two bitmap words and a 4-byte rank: 1.95% of the heap
 * at 16-byte granules, plus a byte per block (the bench core's 10.9
 * million blocks: 1.6 GiB of heap, 42 MiB in all; five bitmaps per group,
 * as before, took 64 MiB).
 *
 * Slabs: where the allocator carves a page-aligned range into equal
 * slots (jemalloc's slabs, a large extent's one block; tcmalloc's spans),
 * its blocks' bounds follow from the slot size, and the map keeps one
 * bit per slot instead: a slab is registered before filling
 * (bm_add_slab, then bm_slabs_done), a 20-byte entry per page (0.5% of
 * the slabs' pages) says where the page's slots start, their size and
 * the first one's bit, and blocks added in those pages set their slot's
 * bit.  Finding a slot is then that entry, the slot's bit and its word's
 * rank, and its mark byte.  On the jemalloc bench core (14.7 million
 * blocks in use, 2.8 GiB of heap, 8-byte granule) `leaks` peaked at
 * 170.5 MiB of anonymous memory with bitmaps, 87.8 MiB with slabs (most
 * of it the mark bytes and the libraries' own).
 *
 * Filling is thread-safe (atomic ORs, leaves installed by compare and
 * swap); so are marking phases 1 and 2 (atomic marks, bm_settle_marks);
 * phase 3 is done by one thread.
 */
#ifndef HW_BLOCKMAP_H
#define HW_BLOCKMAP_H

#include <stdbool.h>
#include <stdint.h>

struct hw_target;

enum bm_mark {
	BM_UNREACHED = 0,   /* after the scan: definitely lost */
	BM_REACHABLE = 1,   /* start pointers all the way from a root */
	BM_POSSIBLE = 2,    /* some step of the way an interior pointer */
	BM_INDIRECT = 3,    /* pointed to only from lost blocks */
};

struct bm_group {           /* 64 granules */
	uint64_t start, end;
};

/* A block's mark byte.  */
#define BM_MARK_BITS 3u     /* enum bm_mark */
#define BM_DONE 4u          /* its words were scanned */

struct bm_run;
struct bm_leaf;
struct bm_slab;

struct hw_blockmap {
	unsigned shift;           /* log2 of the granule */
	struct bm_run *runs;      /* contiguous mapped ranges, by address */
	size_t nruns;
	uint64_t lo, hi;          /* every block lies in [lo, hi) */
	uint64_t leaves;          /* leaves made (atomic) */
	bool oom;                 /* a leaf could not be made (atomic) */
	struct bm_slab *slabs;    /* by address */
	size_t nslabs, cap_slabs;
	uint64_t *slot_used;      /* a bit per slot, each slab's from a
				     word of its own */
	uint32_t *slot_rank;      /* per word: used slots before it */
	uint8_t *slot_marks;      /* a mark byte per used slot */
	size_t slot_words;
	uint64_t slab_pages;      /* bytes of the runs' page entries */
};

/* A block found: where it starts and ends, and its mark byte.  */
struct bm_ref {
	uint64_t addr;            /* the block's start */
	uint64_t end;             /* its end, or 0: found from the bits */
	uint8_t *mk;              /* its mark byte */
	const struct bm_run *run; /* its range (bitmaps), or NULL */
};

/* A map for t's mapped ranges and the allocator's granule (a power of
   two >= 8).  False when out of memory.  */
bool bm_init(struct hw_blockmap *m, struct hw_target *t, unsigned granule);
void bm_free(struct hw_blockmap *m);

/* Before any block is added, from one thread: the slots [base, base +
   nslots * slot) of a slab that owns the pages [lo, hi) (page-aligned,
   holding its slots).  Then bm_slabs_done() once.  A slab that is not
   in one mapped range, or whose pages another slab owns (damaged
   metadata), is dropped: its blocks go to the bitmaps.  With interior,
   a pointer anywhere into a slot in use finds it as its start does
   (hw_slab_fn).  False when out of memory.  */
bool bm_add_slab(struct hw_blockmap *m, uint64_t lo, uint64_t hi,
		 uint64_t base, uint64_t slot, uint32_t nslots, bool interior);
bool bm_slabs_done(struct hw_blockmap *m);

/* One filling thread's state: start it zeroed with lo = UINT64_MAX.  */
struct bm_filler {
	struct bm_run *run;       /* the last block's */
	uint64_t lo, hi;          /* the blocks it added span these */
	struct bm_run *leaf_run;  /* the leaf last written */
	size_t leaf_k;
	struct bm_leaf *leaf;
	struct bm_run *end_run;   /* the last block's end, not yet set */
	uint64_t end_g;
};

/* Record a block in use, [addr, addr + size).  False if it cannot be
   (not granule-aligned, not in a mapped range, in a slab's pages but
   not one of its slots): it is then not in the map.  Threads may add at once, each with its own filler, which
   it hands to bm_fill_done() when it is through.  */
bool bm_add(struct hw_blockmap *m, struct bm_filler *f, uint64_t addr,
	    uint64_t size);
void bm_fill_done(struct hw_blockmap *m, struct bm_filler *f);

/* Take back the block added at addr (it turned out free), before
   bm_seal(): its start becomes the end of whatever block precedes it.
   False if no block starts at addr.  */
bool bm_remove(struct hw_blockmap *m, uint64_t addr);

/* After every bm_fill_done: an end where a block starts is no end, and
   every block gets its mark byte (BM_UNREACHED).  False when out of
   memory.  */
bool bm_seal(struct hw_blockmap *m);

/* The block in use holding addr: false if none.  *exact: addr is its
   start.  */
bool bm_find(const struct hw_blockmap *m, uint64_t addr, struct bm_ref *ref,
	     bool *exact);

/* bm_find for scans with locality: *hint (NULL at first) keeps the
   range of the last address, the caller's own.  */
bool bm_find_near(const struct hw_blockmap *m, const struct bm_run **hint,
		  uint64_t addr, struct bm_ref *ref, bool *exact);

/* A lookup of bm_find_near's in steps, for marking from batches of words
   (reach.c).  On a heap of millions of blocks each lookup is a chain of
   cache misses (the slab page's entry, its slot's bit and rank, the
   mark byte; or a leaf's group, its rank, the mark byte), each waiting
   for the one before.  Taken one step at a time across a batch, every
   step reads what the step before prefetched and prefetches what the
   next one reads, so that the batch's misses overlap.

   bm_probe_start(), then bm_probe_step() while it returns true; then
   `found`, `exact` and `ref` are bm_find_near's answer (and the mark
   byte is on its way to the cache).  */
struct bm_probe {
	struct bm_ref ref;
	uint64_t addr;            /* the address looked up */
	const void *at;           /* what the next step reads */
	size_t k;                 /* leaf, or the slot's bit in slot_used */
	size_t w;                 /* group of the leaf */
	unsigned b;               /* bit in it */
	uint8_t step;             /* the next step (blockmap-int.h); 0 when
				     done */
	bool interior;            /* its slab takes any pointer into a slot */
	bool found, exact;
};

void bm_probe_start(const struct hw_blockmap *m, const struct bm_run **hint,
		    struct bm_probe *p, uint64_t addr);
bool bm_probe_step(const struct hw_blockmap *m, struct bm_probe *p);

/* Has probe p steps to go (bm_probe_step would not return false at
   once)?  */
static inline bool bm_probe_busy(const struct bm_probe *p)
{
	return p->step != 0;
}

/* The ref of the block starting at addr, if one does.  */
bool bm_at(const struct hw_blockmap *m, uint64_t addr, struct bm_ref *ref);

/* Where the block at ref ends (its size rounded up to the granule).  */
uint64_t bm_block_end(const struct hw_blockmap *m, const struct bm_ref *ref);

/* Where the block starting at addr ends, without its mark byte (a mark
   stack's entry): *hint as bm_find_near's.  addr must be a block's
   start.  */
uint64_t bm_end_near(const struct hw_blockmap *m, const struct bm_run **hint,
		     uint64_t addr);

static inline enum bm_mark bm_mark_of(const struct bm_ref *r)
{
	return (enum bm_mark)(*r->mk & BM_MARK_BITS);
}

static inline void bm_set_mark(const struct bm_ref *r, enum bm_mark k)
{
	*r->mk = (uint8_t)((*r->mk & ~BM_MARK_BITS) | (unsigned)k);
}

static inline bool bm_done(const struct bm_ref *r)
{
	return (*r->mk & BM_DONE) != 0;
}

static inline void bm_set_done(const struct bm_ref *r)
{
	*r->mk |= BM_DONE;
}

static inline void bm_clear_done(const struct bm_ref *r)
{
	*r->mk &= (uint8_t)~BM_DONE;
}

/* Every block in address order: fn(cookie, ref); stops when it returns
   false.  */
typedef bool bm_block_fn(void *cookie, const struct bm_ref *ref);
bool bm_each(const struct hw_blockmap *m, bm_block_fn *fn, void *cookie);

/* bm_each over the blocks starting in [lo, hi).  */
bool bm_each_range(const struct hw_blockmap *m, uint64_t lo, uint64_t hi,
		   bm_block_fn *fn, void *cookie);

/* The map cut into nparts ranges of addresses of about as many blocks
   each (cut where a leaf or a slab starts), so that threads can go
   through it at once, each in address order: part p is [cuts[p],
   cuts[p + 1]), cuts[0] is 0 and cuts[nparts] UINT64_MAX (cuts has
   nparts + 1 entries).  After bm_seal().  */
void bm_part_cuts(const struct hw_blockmap *m, unsigned nparts,
		  uint64_t *cuts);

/* Marking by several threads at once (reach.c) sets the mark byte's
   BM_REACHABLE bit and the BM_POSSIBLE bit (met through an interior
   pointer) with
   atomic ORs, each bit on its own, and BM_DONE likewise.  Afterwards, with no
   thread marking: a block with both bits is reachable (hi cleared), so
   every mark is an enum bm_mark again; *marked counts the blocks marked
   at all, *possible those left possible.  */
void bm_settle_marks(struct hw_blockmap *m, uint64_t *marked,
		     uint64_t *possible);

/* Bytes the map's leaves take.  */
uint64_t bm_bytes(const struct hw_blockmap *m);

#endif /* HW_BLOCKMAP_H */
