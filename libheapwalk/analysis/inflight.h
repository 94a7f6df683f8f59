/* inflight.h - the threads of a live process that were inside the
 * allocator when it was stopped: their operation (a free() half way
 * through linking a chunk, a malloc() splitting one) is in flight, and
 * what it has half done is no corruption.
 */
#ifndef HW_INFLIGHT_H
#define HW_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../session/session.h"

#define HW_INFLIGHT_KEPT 4

struct hw_inflight {
	size_t n;                          /* threads inside the allocator */
	size_t thread[HW_INFLIGHT_KEPT];   /* the first ones' indexes */
	uint64_t pc[HW_INFLIGHT_KEPT];     /* where each was */
	char function[HW_INFLIGHT_KEPT][64];  /* the allocator's function */
};

/* Fill out for a process (by ptrace, or a debugger's): each thread's
   innermost frames (libdwfl's unwinder) against the allocator's
   functions (hw_allocator_ops.functions).  A core's process is not
   asked: it died, and a death inside malloc is malloc's own finding.
   out->n is 0 when nothing can be told (no symbols, no registers).  */
void hw_inflight_get(struct hw_session *s, struct hw_inflight *out);

/* Is `name` (a symbol's) one of the walked allocator's functions
   (hw_allocator_ops.functions)?  */
bool hw_alloc_function(const struct hw_session *s, const char *name);

/* "thread 2 (tid 4712) in free()[, and 2 more]", for a note.  */
void hw_inflight_text(const struct hw_session *s, const struct hw_inflight *f,
		      char *buf, size_t len);

/* What `check` does once the walk is done: the findings so far become
   notes when a thread was inside the allocator at the stop, and a note
   says which; nothing for a core.  */
void hw_inflight_settle(struct hw_session *s);

#endif /* HW_INFLIGHT_H */
