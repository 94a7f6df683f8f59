/* limits.h - what the target cannot tell, and what that costs the
 * analysis, one sentence each: summary's "core lacks:" (JSON
 * "target_limits") and triage's "lacks" (report/limits.c).
 */
#ifndef HW_REPORT_LIMITS_H
#define HW_REPORT_LIMITS_H

#include <stddef.h>

#include "../session/session.h"

#define HW_LIMITS_MAX 8

/* The sentences, in the order summary says them; v[i] points into the
   struct or at static text: valid while the struct and the session
   live.  */
struct hw_limits {
	const char *v[HW_LIMITS_MAX];
	size_t n;
	char missing[512];     /* the files the core names but are not at
				  hand */
	char nodebug[768];     /* debuginfod asked in vain */
};

void hw_target_limits(const struct hw_session *s, struct hw_limits *l);

#endif /* HW_REPORT_LIMITS_H */
