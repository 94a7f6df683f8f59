/* pipe.h - a chunk walk in one thread, its report in another
 * (report/pipe.c).
 */
#ifndef HW_REPORT_PIPE_H
#define HW_REPORT_PIPE_H

#include "../alloc/alloc.h"
#include "../internal.h"

/* Every chunk to fn in walk order, like s->alloc->chunks(); with threads
   allowed, the walk runs in a thread of its own while fn (the report)
   runs in the caller's.  */
void hw_walk_chunks_piped(struct hw_session *s, hw_chunk_fn *fn, void *cookie);

#endif /* HW_REPORT_PIPE_H */
