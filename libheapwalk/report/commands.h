/* commands.h - reports that live in their own files, for commands.c.  */
#ifndef HW_COMMANDS_H
#define HW_COMMANDS_H

#include "../internal.h"
#include "../alloc/alloc.h"

struct hw_emitter;

/* frag.c: free memory and fragmentation per arena.  */
enum hw_status hw_report_frag(struct hw_session *s, struct hw_emitter *e);

/* leaks.c: blocks in use nothing reachable points to (leaks
   [--reachable]).  */
enum hw_status hw_report_leaks(struct hw_session *s, struct hw_emitter *e,
			       int argc, char *const argv[]);

/* commands.c: when a walk could not cover the whole heap, say that the
   totals are partial, and why.  hw_emit_partial() is both halves, which
   summary places apart: the members JSON always has ("partial" and, when
   partial, its reason, address and count of places) and the text line
   (only when partial).  */
void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e);
void hw_emit_partial_members(const struct hw_session *s, struct hw_emitter *e);
void hw_emit_partial_line(const struct hw_session *s, struct hw_emitter *e);

/* pipe.c: every chunk to fn in walk order, like s->alloc->chunks(); with
   threads allowed, the walk runs in a thread of its own while fn (the
   report) runs in the caller's.  */
void hw_walk_chunks_piped(struct hw_session *s, hw_chunk_fn *fn, void *cookie);

#endif /* HW_COMMANDS_H */
