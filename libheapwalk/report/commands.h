/* commands.h - reports that live in their own files, for commands.c.  */
#ifndef HW_COMMANDS_H
#define HW_COMMANDS_H

#include "../internal.h"

struct hw_emitter;

/* frag.c: free memory and fragmentation per arena.  */
enum hw_status hw_report_frag(struct hw_session *s, struct hw_emitter *e);

/* commands.c: say that the totals are partial, and why, when a walk
   could not cover the whole heap (JSON: "partial" and its reason).  */
void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e);

#endif /* HW_COMMANDS_H */
