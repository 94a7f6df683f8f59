/* stacks.h - the stacks of an allocator's heap profile, symbolized once
 * (report/stacks.c), and the allocation site of a block in use
 * (report/sites.c): what prof, diff, leaks and the public API share.
 */
#ifndef HW_REPORT_STACKS_H
#define HW_REPORT_STACKS_H

#include "../alloc/profile.h"
#include "../session/session.h"
#include "../sym/sym.h"

/* Every return address of a profile symbolized once: its frames (inline
   ones first) in `frames`, pcs sorted for lookup.  */
struct prof_pc {
	uint64_t pc;
	uint32_t first, n;            /* into frames */
};

struct prof_stacks {
	const struct hw_profile *p;
	struct prof_pc *pcs;
	size_t npcs;
	struct hw_source_frame *frames;
	size_t nframes;
};

bool prof_stacks_build(struct hw_session *s, const struct hw_profile *p,
		       struct prof_stacks *st);
void prof_stacks_free(struct prof_stacks *st);

/* The frames of a site as people read its stack: outermost first, the
   allocator's own frames (its module's, malloc's and operator new's at
   the top of the stack) left out.  At most max; returns how many.  */
#define PROF_MAX_FRAMES 1024
struct prof_frame_ref {
	const struct hw_source_frame *f;   /* NULL: no module holds pc */
	uint64_t pc;
};
size_t prof_site_frames(const struct prof_stacks *st,
			const struct hw_prof_site *site,
			struct prof_frame_ref *out, size_t max);
/* Is every frame at pc an allocation entry point (malloc, operator new:
   what prof_site_frames leaves out at the top of a stack)?  */
bool prof_pc_is_allocation_entry(const struct prof_stacks *st, uint64_t pc);
/* The same for any recorded stack (a recent record's).  */
size_t prof_pcs_frames(const struct prof_stacks *st, const uint64_t *pcs,
		       unsigned npcs, struct prof_frame_ref *out, size_t max);
/* Such a stack's innermost nframes as people say them, "f \u2190
   caller", in buf.  */
const char *prof_pcs_name(const struct prof_stacks *st, const uint64_t *pcs,
			  unsigned npcs, unsigned nframes, char *buf,
			  size_t len);

/* A stack as its frames' names, outermost first, each ended by
   PROF_KEY_SEP: what matches a stack across snapshots (two runs load
   code at other addresses).  malloc'd; NULL when out of memory.  fr:
   PROF_MAX_FRAMES of room.  */
#define PROF_KEY_SEP '\x1f'
char *prof_stack_key(const struct prof_stacks *st,
		     const struct hw_prof_site *site, struct prof_frame_ref *fr);
/* A key's innermost nframes as people say them, "f \u2190 caller", in
   buf.  */
const char *prof_key_name(const char *key, unsigned nframes, char *buf,
			  size_t len);

/* A frame's name: its function, else module+0xoffset, else 0xpc (buf
   holds the last two; >= 64 bytes).  */
const char *prof_frame_name(const struct hw_source_frame *f, uint64_t pc,
			    char *buf, size_t len);

/* sites.c: the stack a block in use was allocated from, for other
   reports (leaks), when the allocator sampled it.  Open once: without a
   profile every lookup gives NULL.  */
struct hw_chunk;
struct prof_sites {
	struct hw_session *s;
	const struct hw_profile *p;   /* NULL: no profile */
	struct prof_stacks st;
	char **names;                 /* per site, made on first use */
};
enum hw_status prof_sites_open(struct hw_session *s, struct prof_sites *ps);
void prof_sites_close(struct prof_sites *ps);
const struct hw_prof_site *prof_sites_of(const struct prof_sites *ps,
					 const struct hw_chunk *c);
/* "inner \u2190 caller \u2190 its caller": the innermost frames the
   allocator's own left out; kept until close.  */
const char *prof_sites_name(struct prof_sites *ps,
			    const struct hw_prof_site *site);

#endif /* HW_REPORT_STACKS_H */
