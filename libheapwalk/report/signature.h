/* signature.h - a stable name for a core's problem, to group a fleet's
 * cores by (report/signature.c): how the process died, glibc malloc's
 * own abort message, the top frames of the crashing thread by function,
 * and the kinds of heap damage the walk found.  No address, path, pid
 * or time goes in: two cores of one bug, from two builds, in two
 * places, under ASLR, have the same signature.
 */
#ifndef HW_REPORT_SIGNATURE_H
#define HW_REPORT_SIGNATURE_H

#include "../analysis/death.h"
#include "findkinds.h"

/* Frames that name the problem, after those of the signal's delivery
   and of libc and the allocator are folded into the call that entered
   them.  */
#define HW_SIG_FRAMES 3

struct hw_signature {
	char text[1024];     /* "SIGABRT; free(): double free detected in
				tcache #; free < double_free < main" */
	char hash[17];       /* FNV-1a 64 of text, 16 hex digits */
	char frames[HW_SIG_FRAMES][288];
	size_t nframes;
};

/* s's signature, from its death d (d->died false: "no crash") and its
   findings' kinds k.  */
void hw_signature_make(const struct hw_session *s, const struct hw_death *d,
		       const struct hw_kinds *k, struct hw_signature *sig);

#endif /* HW_REPORT_SIGNATURE_H */
