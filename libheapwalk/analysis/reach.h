/* reach.h - which blocks the process can still reach: `leaks`' analysis.
 *
 * A conservative scan, as Valgrind memcheck's leak check does it, of a
 * process that never ran under a tool: every aligned word of the roots
 * (each thread's registers and live stack, and all writable memory that
 * is neither the allocator's nor a block) that points into a block in
 * use marks that block, and marked blocks are scanned in turn.
 *
 *   reachable  start pointers all the way from a root
 *   possible   reached, but through an interior pointer on the way
 *   indirect   not reached, but pointed to by a lost block
 *   definite   not reached, and no lost block points to it either; of a
 *              lost cycle, the block at the lowest address
 *
 * Free blocks are neither scanned nor targets: a pointer left in freed
 * memory keeps nothing alive.  The allocator's own memory (arenas, heap
 * headers, jemalloc's base blocks: alloc.h's `internal`) is no root.
 */
#ifndef HW_REACH_H
#define HW_REACH_H

#include <stdint.h>

#include "../session/session.h"
#include "blockmap.h"
#include "roots.h"

struct hw_reach {
	struct hw_blockmap map;
	uint64_t blocks;          /* blocks in use put in the map */
	uint64_t bytes;           /* their usable bytes */
	bool all_reachable;       /* every one of them */
	uint64_t unplaced;        /* blocks in use the map could not hold */
	uint64_t unplaced_addr;   /* the first of them */
	uint64_t internal_blocks; /* blocks the allocator keeps for itself */
	uint64_t root_bytes;      /* bytes of memory scanned as roots */
	uint64_t root_ranges;
	uint64_t registers;       /* register values looked at */
	uint64_t unreadable;      /* bytes that should have been scanned
				     but were not in the target */
	/* Kept for the queries that enumerate the roots again (refs, why:
	   analysis/refs.h), so that they see exactly what the scan saw.  */
	struct hw_ranges owned;   /* the allocator's memory and every block:
				     hw_roots_each's `excluded` */
	struct hw_ranges internal;/* the allocator's own (normalized): a
				     block in it is never scanned */
	uint64_t ptr_mask;        /* the bits of a word that address */
};

/* The session's reachability, computed on first use (it walks every
   block); NULL with the session's error set when it cannot be.  */
const struct hw_reach *hw_reach_get(struct hw_session *s);

void hw_reach_free(struct hw_reach *r);

/* The mark of the block in use starting at addr; false when no block
   of the map starts there.  */
bool hw_reach_mark(const struct hw_reach *r, uint64_t addr,
		   enum bm_mark *mark);
/* The same, for blocks asked in address order (a walk of every block):
   *hint (NULL at first) keeps the mapped range of the last one.  */
bool hw_reach_mark_near(const struct hw_reach *r, const struct bm_run **hint,
			uint64_t addr, enum bm_mark *mark);

#endif /* HW_REACH_H */
