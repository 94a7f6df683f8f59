/* findkinds.h - a session's findings counted by kind: what `check`
 * found with every number taken out (addresses, sizes, indexes, thread
 * ids), so that the same damage in two cores, at other addresses, is
 * one kind (report/findkinds.c).  Triage counts them and builds its
 * signature from them.
 */
#ifndef HW_REPORT_FINDKINDS_H
#define HW_REPORT_FINDKINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../session/session.h"

#define HW_KIND_LEN 160
#define HW_MAX_KINDS 32

struct hw_kind_count {
	char kind[HW_KIND_LEN];
	bool note;               /* a note, not corruption */
	bool abort;              /* the allocator's own abort (its message
				    is the death's, not the walk's) */
	uint64_t count;
};

struct hw_kinds {
	struct hw_kind_count v[HW_MAX_KINDS];   /* most counted first */
	size_t n;
	uint64_t other;          /* findings of kinds past HW_MAX_KINDS, and
				    those not kept (past HW_MAX_FINDINGS) */
	uint64_t findings, notes;
};

/* Count s's findings (and notes) by kind.  */
void hw_kinds_count(const struct hw_session *s, struct hw_kinds *k);

/* text with every number (decimal, or 0x and hex digits, standing as a
   word of its own) written '#', a `quoted' program name '#', and cut at
   its first "; " (what the walk did next) and at len - 1 bytes.  */
void hw_kind_of(const char *text, char *out, size_t len);

#endif /* HW_REPORT_FINDKINDS_H */
