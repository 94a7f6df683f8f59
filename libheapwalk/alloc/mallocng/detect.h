/* detect.h - musl libc's allocators told apart from glibc's, and
 * why one cannot be walked.  */
#ifndef HW_MALLOCNG_DETECT_H
#define HW_MALLOCNG_DETECT_H

#include <stdbool.h>
#include <stddef.h>

#include "../../session/session.h"

/* When no allocator opened: is the target a musl program?  If so, why
   heapwalk cannot walk it (bump allocator, context not set up, older
   musl, unreadable meta areas), in why (the session's error): the ops'
   why_absent.  */
bool hw_mallocng_recognise(struct hw_session *s, char *why, size_t len);

#endif /* HW_MALLOCNG_DETECT_H */
