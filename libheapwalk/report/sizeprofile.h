/* sizeprofile.h - what `sizes` counts, kept for `diff` (report/sizeprofile.c).
 */
#ifndef HW_REPORT_SIZEPROFILE_H
#define HW_REPORT_SIZEPROFILE_H

#include "../session/session.h"

/* The rows of `sizes` (the allocator's classes, ascending) and each
   arena's totals (index order; `arena` -1: jemalloc's blocks cached in
   no arena).  `addr` names the arena across snapshots of one process
   where the walker knows it (ptmalloc: its malloc_state; indexes shift
   as arenas are made), else 0.  Free with hw_size_profile_free().  */
struct hw_class_total {
	uint64_t min, max, used, used_bytes, free, free_bytes;
};
struct hw_arena_total {
	int32_t arena;
	uint64_t addr, used, used_bytes, free, free_bytes;
};
struct hw_size_profile {
	struct hw_class_total *classes;
	size_t nclasses;
	struct hw_arena_total *arenas;
	size_t narenas;
	uint64_t used, used_bytes, free, free_bytes;
};
enum hw_status hw_size_profile(struct hw_session *s, struct hw_size_profile *p);
void hw_size_profile_free(struct hw_size_profile *p);

#endif /* HW_REPORT_SIZEPROFILE_H */
