/* prof.h - the prof command's parts: symbolized stacks (prof-stacks.c)
 * and the file formats a profile is written in (prof-heapv2.c,
 * prof-pprof.c).
 */
#ifndef HW_REPORT_PROF_H
#define HW_REPORT_PROF_H

#include "../internal.h"
#include "../alloc/profile.h"
#include "../sym/sym.h"

struct hw_emitter;

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

/* The profile as prof.dump writes it (heap_v2), the core's mappings as
   its MAPPED_LIBRARIES, into e verbatim.  */
void prof_write_heap_v2(struct hw_session *s, const struct hw_profile *p,
			struct hw_emitter *e);

/* prof-recent.c: jemalloc 5.3's recent-allocation records as a table
   (oldest first), and as experimental.prof_recent.alloc_dump's JSON
   into e verbatim.  */
enum hw_status prof_write_recent(struct hw_session *s,
				 const struct prof_stacks *st,
				 struct hw_emitter *e);
void prof_write_recent_json(const struct hw_profile *p, struct hw_emitter *e);

/* prof-pprof.c: the profile as pprof's profile.proto, gzipped (what `go
   tool pprof` reads), already symbolized from st, into e verbatim.  Its
   values are the estimates of the whole heap (est).  False when out of
   memory or zlib failed (e may then hold part of a file).  */
bool prof_write_pprof(struct hw_session *s, const struct prof_stacks *st,
		      struct hw_emitter *e);

/* prof-sites.c: the stack a block in use was allocated from, for other
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

/* prof-base.c: prof --base OLD, an older snapshot's profile (a core, or
   a heap_v2 file whose addresses are moved to this target's modules by
   its own MAPPED_LIBRARIES), its stacks symbolized.  */
struct v2_file;
struct prof_base {
	const struct hw_profile *p;
	struct prof_stacks st;
	struct hw_session *session;   /* a core's */
	struct v2_file *file;         /* a heap_v2 file's */
	const char *what;             /* "core", "heap_v2 file" */
};
enum hw_status prof_base_open(struct hw_session *s, const char *path,
			      const struct hw_profile *now, struct prof_base *b);
void prof_base_close(struct prof_base *b);

#endif /* HW_REPORT_PROF_H */
