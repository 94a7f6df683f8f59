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
	struct je_prof_links {        /* where the links are */
		unsigned edata_tctx, edata_recent, tctx_gctx, gctx_bt,
			tdata_name;
		bool name_inline;     /* 5.3.1: char thread_name[16] */
	} links;
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
/* prof-recent.c: 5.3's recent-allocation records into jp->p.recent.
   False only when out of memory; a list not found or broken is said in
   jp->p (recent_why, recent_broken).  */
bool je_read_prof_recent(struct je_state *j, struct je_prof *jp);
/* A thread's name from its prof_tdata_t, into buf (NAME_MAX_LEN).  */
bool je_prof_thread_name(struct je_state *j, const struct je_prof_links *l,
			 uint64_t tdata, char *buf, size_t len);
/* The stack a block in use was allocated from, when jemalloc sampled it:
   its extent (a sampled object has one of its own) points to the
   thread's counters for the stack.  NULL when it was not sampled.  */
const struct hw_prof_site *je_prof_site_of(struct je_state *j,
					   const struct je_prof *jp,
					   uint64_t edata);

#endif /* HW_JE_PROF_H */
