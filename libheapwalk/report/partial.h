/* partial.h - when a walk could not cover the whole heap, saying that
 * the totals are partial, and why (report/partial.c).
 */
#ifndef HW_REPORT_PARTIAL_H
#define HW_REPORT_PARTIAL_H

#include "../session/session.h"

struct hw_emitter;

/* hw_emit_partial() is both halves, which summary places apart: the
   members JSON always has ("partial" and, when partial, its reason,
   address and count of places) and the text line (only when
   partial).  */
void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e);
void hw_emit_partial_members(const struct hw_session *s, struct hw_emitter *e);
void hw_emit_partial_line(const struct hw_session *s, struct hw_emitter *e);

#endif /* HW_REPORT_PARTIAL_H */
