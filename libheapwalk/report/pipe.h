/* pipe.h - a chunk walk in one thread, its report in another
 * (report/pipe.c).
 */
#ifndef HW_REPORT_PIPE_H
#define HW_REPORT_PIPE_H

#include "../alloc/alloc.h"
#include "../session/session.h"

/* Every chunk to fn in walk order, like s->alloc->chunks(); with threads
   allowed, the walk runs in a thread of its own while fn (the report)
   runs in the caller's.  */
void hw_walk_chunks_piped(struct hw_session *s, hw_chunk_fn *fn, void *cookie);

struct hw_emitter;

/* One row of a report per chunk: render c (or nothing) on e; false to
   stop.  */
typedef bool hw_row_fn(void *cookie, struct hw_emitter *e,
		       const struct hw_chunk *c);

/* Every chunk to fn in walk order, rendered on e (inside the table it
   opened).  With threads allowed, the walk runs in a thread of its own
   and the rows are rendered by the caller's and hw_threads(s) - 1 more,
   batch by batch, each on a fork of e (em_fork), and go out in walk
   order: the report is the same byte for byte.  fn must be safe to run
   in several threads at once (cookie is shared, read-only).  */
void hw_walk_rows_piped(struct hw_session *s, struct hw_emitter *e,
			hw_row_fn *fn, const void *cookie);

#endif /* HW_REPORT_PIPE_H */
