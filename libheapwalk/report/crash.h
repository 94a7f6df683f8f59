/* crash.h - how the process of a core died, as summary and check show
 * it (report/crash.c over analysis/death.h).
 */
#ifndef HW_CRASH_H
#define HW_CRASH_H

#include "../session/session.h"

struct hw_emitter;

/* The member "death" of the current document: the signal, its cause,
   the crashing thread, glibc's abort message, the blocks involved and
   the crashing thread's backtrace; JSON null and no text for a process
   that did not die (a live one, or a core without a signal).  When
   glibc's malloc aborted the process itself ("free(): double free
   detected in tcache 2", "malloc(): unsorted double linked list
   corrupted", ...), also a finding at the chunk it names, or at its
   message, so that summary and check, which emit the death before
   their findings, count what the allocator saw.  False only when out
   of memory (the error is recorded).  */
bool hw_emit_death(struct hw_session *s, struct hw_emitter *e);

struct hw_death;

/* That finding alone, for a report that shows the death its own way
   (triage).  Its text starts with HW_MALLOC_ABORT_FINDING: a report
   that names the abort message already can tell it from the damage the
   walk found.  */
#define HW_MALLOC_ABORT_FINDING "glibc aborted the process: "
void hw_count_malloc_abort(struct hw_session *s, const struct hw_death *d);

#endif /* HW_CRASH_H */
