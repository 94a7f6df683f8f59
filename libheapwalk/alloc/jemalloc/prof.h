/* prof.h - jemalloc's heap profile as prof.c reads it (alloc/profile.h's
   model, and the storage behind it).  */
#ifndef HW_JE_PROF_H
#define HW_JE_PROF_H

#include "../profile.h"

struct je_state;

struct je_prof {
	struct hw_profile p;
	char allocator[80];
	struct hw_prof_thread *threads;
	uint64_t *thread_raw;
	struct hw_prof_site *sites;
	struct hw_prof_site_thread *site_threads;
	uint64_t *pcs;
	char *names;
	uint32_t *by_gctx;            /* site indexes by gctx address */
	/* Where an extent's tctx and a tctx's gctx are, for
	   je_prof_site_of() once the reader is gone.  */
	unsigned edata_tctx, tctx_gctx;
	struct hw_prof_recent *recent;   /* prof-recent.c's */
	uint64_t *recent_pcs;
	char *recent_names;
};

/* Read the profile jemalloc keeps (prof:true).  HW_OK with *out set, or
   with *out NULL and *why saying why there is none; an error otherwise
   (out of memory).  */
enum hw_status je_read_profile(struct je_state *j, struct je_prof **out,
			       const char **why);
void je_prof_free(struct je_prof *jp);
/* The stack a block in use was allocated from, when jemalloc sampled it:
   its extent (a sampled object has one of its own) points to the
   thread's counters for the stack.  NULL when it was not sampled.  */
const struct hw_prof_site *je_prof_site_of(struct je_state *j,
					   const struct je_prof *jp,
					   uint64_t edata);

#endif /* HW_JE_PROF_H */
