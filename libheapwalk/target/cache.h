/* cache.h - what a slow backend has read, kept for the whole session.
 *
 * A lazy region (a live process's mapping, gdb's memory) is read through
 * ops->read in blocks of HW_CACHE_BLOCK bytes the first time any byte of
 * a block is wanted.  Each region gets one contiguous reservation of
 * address space the size of the mapping; blocks are filled in place, so
 * a run of filled blocks is one plain pointer, as a core's segment is, and
 * nothing handed out ever moves or goes away before the target closes.
 * Untouched parts of a reservation cost no memory.
 *
 * Pages the backend cannot read (unmapped under us, MAP_SHARED device
 * memory, PROT_NONE) are remembered as holes and never read again.  The
 * cache's budget bounds how many bytes it will hold: past it, further
 * blocks are holes too and hw_cache_over_budget() says so, so that the
 * reports can call their totals partial instead of guessing.
 *
 * Thread-safe: walkers read from several threads.  A block's state is
 * published with release/acquire, so a reader that sees it filled sees
 * its bytes.
 */
#ifndef HW_TARGET_CACHE_H
#define HW_TARGET_CACHE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"

#define HW_CACHE_BLOCK (256u << 10)

/* A cache holding at most `budget` bytes read from the backend, for a
   target whose pages are `page_size` bytes (a power of two <=
   HW_CACHE_BLOCK).  NULL when memory is short.  */
struct hw_cache *hw_cache_new(uint64_t budget, uint64_t page_size);

/* Before a live process is stopped for its snapshot: a reservation for
   the region [start, start + len) as the process's map shows it now,
   for the caller to make present the pages the snapshot will copy
   (the kernel finds and zeroes them while the process still runs, not
   while it is stopped).  The region of the same start in the map read
   after the stop takes it (resized if it grew or shrank meanwhile).
   NULL when none could be made.  */
uint8_t *hw_cache_prepare(struct hw_cache *c, uint64_t start, uint64_t len);
/* Give back the reservations no region took.  */
void hw_cache_unprepare(struct hw_cache *c);
/* Free the cache and every lazy region's blocks (regions[0..n)).  */
void hw_cache_free(struct hw_cache *c, struct hw_region *regions, size_t n);

/* Make r lazy: its avail bytes from start come from the backend.  False
   when memory is short.  */
bool hw_cache_add_region(struct hw_cache *c, struct hw_region *r);

/* How many bytes from addr on are in the cache in one piece, with *p
   pointing at them; the blocks covering [addr, addr + want) are read
   first if they were not (want is cut at the region's end).  0 when addr
   itself cannot be read.  */
uint64_t hw_cache_run(struct hw_target *t, struct hw_region *r, uint64_t addr,
		      uint64_t want, const uint8_t **p);

/* Read every block of r now (a snapshot taken while the target is
   stopped); false if stopped early by *cancel becoming non-zero.  */
bool hw_cache_fill(struct hw_target *t, struct hw_region *r,
		   const volatile sig_atomic_t *cancel);

/* From now on, blocks of r not read yet are holes: the backend's view of
   r is no longer the one the rest was read from.  */
void hw_cache_freeze(struct hw_cache *c, struct hw_region *r);

/* Bytes read from the backend so far.  */
uint64_t hw_cache_bytes(const struct hw_cache *c);

/* Whether a block was left unread because the budget was reached.  */
bool hw_cache_over_budget(const struct hw_cache *c);

/* Whether memory to hold a region could not be had: what was read of it
   is incomplete, and the command must end in "out of memory".  */
bool hw_cache_oom(const struct hw_cache *c);

#endif /* HW_TARGET_CACHE_H */
