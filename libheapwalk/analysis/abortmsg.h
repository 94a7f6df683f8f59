/* abortmsg.h - glibc's last words: the message its fatal checks leave
 * in the process before abort() (__abort_msg), e.g. "free(): double free
 * detected in tcache 2".
 */
#ifndef HW_ABORTMSG_H
#define HW_ABORTMSG_H

#include <stdbool.h>
#include <stdint.h>

#include "../session/session.h"

struct hw_abort_msg {
	char *text;          /* malloc'd, NUL-terminated, glibc's final
				newline dropped; NULL: no message */
	uint64_t buf;        /* the struct abort_msg_s holding it */
	uint64_t var;        /* where __abort_msg is, when its symbol was
				found (0 after a scan) */
	const char *found;   /* "symbol": __abort_msg from libc's symbol
				table; "scan": a pointer in libc's data
				that points at such a buffer; NULL: not
				found either way */
};

/* Find glibc's abort message in s's target (every libc copy, or a
   static executable's).  False only when out of memory.  */
bool hw_abort_msg_find(struct hw_session *s, struct hw_abort_msg *out);
void hw_abort_msg_free(struct hw_abort_msg *m);

#endif /* HW_ABORTMSG_H */
