/* prof.h - the prof command's parts (commands/prof/): the file formats a
 * profile is written in (heapv2.c, pprof.c, recent.c) and the older
 * snapshot prof --base compares with (base.c).  The symbolized stacks
 * they write are report/stacks.h's.
 */
#ifndef HW_COMMANDS_PROF_H
#define HW_COMMANDS_PROF_H

#include "../../report/stacks.h"

struct hw_emitter;

/* The profile as prof.dump writes it (heap_v2), the core's mappings as
   its MAPPED_LIBRARIES, into e verbatim.  */
void prof_write_heap_v2(struct hw_session *s, const struct hw_profile *p,
			struct hw_emitter *e);
/* heapv2.c too: the target's mappings as /proc/self/maps lists them,
   what follows "MAPPED_LIBRARIES:" in both files.  */
void prof_write_maps(struct hw_session *s, struct hw_emitter *e);

/* gperftools.c: the profile as gperftools' GetHeapSample writes it (the
   legacy heap profile pprof reads), into e verbatim.  */
void prof_write_gperftools(struct hw_session *s, const struct hw_profile *p,
			   struct hw_emitter *e);

/* recent.c: jemalloc 5.3's recent-allocation records as a table
   (oldest first), and as experimental.prof_recent.alloc_dump's JSON
   into e verbatim.  */
enum hw_status prof_write_recent(struct hw_session *s,
				 const struct prof_stacks *st,
				 struct hw_emitter *e);
void prof_write_recent_json(const struct hw_profile *p, struct hw_emitter *e);

/* pprof.c: the profile as pprof's profile.proto, gzipped (what `go
   tool pprof` reads), already symbolized from st, into e verbatim.  Its
   values are the estimates of the whole heap (est).  False when out of
   memory or zlib failed (e may then hold part of a file).  */
bool prof_write_pprof(struct hw_session *s, const struct prof_stacks *st,
		      struct hw_emitter *e);

/* base.c: prof --base OLD, an older snapshot's profile (a core, or
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

#endif /* HW_COMMANDS_PROF_H */
