/* triage.h - one record per core, for a fleet (report/triage.c): who
 * the core is, its allocator and heap in figures, leaks and damage by
 * kind, how the process died, what the analysis could not see, and a
 * signature to group cores of one problem by.  The schema is
 * doc/triage.schema.json; every record carries its version.
 */
#ifndef HW_REPORT_TRIAGE_H
#define HW_REPORT_TRIAGE_H

#include <stdbool.h>

#include "../session/session.h"

struct hw_emitter;

/* The schema's version, "schema" in every record.  Raised when a member
   changes meaning or goes; members added leave it.  */
#define HW_TRIAGE_SCHEMA 1

/* What a record holds besides the figures.  */
struct hw_triage_opts {
	const char *core;        /* the input as given (the record's "core") */
	bool no_leaks;           /* skip the reachability scan: "leaks" null */
	unsigned top;            /* size classes kept (0: 5) */
};

/* The triage command's words (argv[0] "triage"): --no-leaks, --top N;
   o->core is s's core as given.  HW_USAGE, with the error recorded, for
   any other.  */
enum hw_status hw_triage_args(struct hw_session *s, int argc,
			      char *const argv[], struct hw_triage_opts *o);

/* s's record, a JSON document on one line, or one line of text.  s
   may have no allocator (its open said HW_NO_ALLOCATOR): the record
   then has the core and its death, and "allocator" null.  Returns
   HW_CORRUPT when the heap is damaged, as check does, HW_OK otherwise,
   or a failure (out of memory) with nothing useful written.  */
enum hw_status hw_triage_emit(struct hw_session *s,
			      const struct hw_triage_opts *o,
			      struct hw_emitter *e);

/* The record of an input that is no core heapwalk can read: its path,
   the exit status `heapwalk CORE` would have and why.  */
void hw_triage_emit_error(struct hw_emitter *e, const char *core,
			  enum hw_status st, const char *why);

#endif /* HW_REPORT_TRIAGE_H */
