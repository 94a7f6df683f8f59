/* fragrows.h - free memory and fragmentation per arena, as `frag` and
 * `map` count it (report/fragrows.c defines each figure).
 */
#ifndef HW_REPORT_FRAGROWS_H
#define HW_REPORT_FRAGROWS_H

#include "../alloc/alloc.h"

/* What is counted of one arena.  rows is an array of HW_FRAG_MAX_ARENAS,
   indexed by (uint32_t)arena % HW_FRAG_MAX_ARENAS (jemalloc's arena -1
   is the last); hw_frag_add is a hw_chunk_fn that counts c in its
   arena's row and always goes on.  */
#define HW_FRAG_MAX_ARENAS 4096
struct hw_frag_row {
	uint64_t used, free, nfree;
	uint64_t cached;      /* of free: in thread caches (HW_PLACE_CACHED) */
	uint64_t largest;     /* the largest free block outside them */
	uint64_t reserve[HW_RESERVES];  /* by column (enum hw_reserve) */
	uint64_t slab_bytes, slab_used;
	bool any;
};
bool hw_frag_add(void *rows, const struct hw_chunk *c);
/* Adds r into *total (largest: the larger of the two).  */
void hw_frag_sum(struct hw_frag_row *total, const struct hw_frag_row *r);
double hw_frag_free_ratio(const struct hw_frag_row *r);  /* free% */
double hw_frag_scatter(const struct hw_frag_row *r);     /* frag, outside
							    thread caches */
double hw_frag_slab_util(const struct hw_frag_row *r);   /* slabs */

#endif /* HW_REPORT_FRAGROWS_H */
