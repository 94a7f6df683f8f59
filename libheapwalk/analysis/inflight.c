/* inflight.c - which threads of a live process were inside the
 * allocator when it was stopped (inflight.h).
 *
 * heapwalk stops a process wherever its threads are.  A thread inside
 * free() may have taken a chunk off one list and not yet put it on
 * another; `check` would then report "free chunk in no bin" (about one
 * run in ten on a program that frees in a loop).  Such a thread is known
 * by its stack: one of its innermost frames is one of the allocator's
 * functions, by the name the symbol table gives the frame's address (and
 * only where the symbol's size covers it: in a stripped library the
 * nearest exported symbol may be another function's).  A frame of an
 * internal function of a stripped libc has no name; its caller, an
 * exported entry point (malloc, free, ...), is a few frames out.  A
 * library that is the allocator alone (libjemalloc.so) counts whole
 * where a thread is at work: its innermost frame, or the one that called
 * it.
 */
#include <stdio.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "inflight.h"
#include "stack.h"

/* Frames looked at per thread: the allocator's entry point is rarely
   deeper than this below a lock wait or a system call.  */
#define FRAMES 8

bool hw_alloc_function(const struct hw_session *s, const char *name)
{
	return s->alloc && s->alloc->functions && name && name[0] &&
	       hw_syms_name_in(s->alloc->functions, name);
}

/* The allocator's function among th's innermost frames, or NULL.  */
static const char *inside(struct hw_session *s, const struct hw_thread *th,
			  const struct hw_instance_info *own, uint64_t *pc)
{
	struct hw_frame fr[FRAMES];
	size_t n = hw_thread_frames(s, th, fr, FRAMES);
	for (size_t k = 0; k < n; k++) {
		uint64_t look = hw_frame_lookup(&fr[k]);
		/* In the allocator's own library: at work there, or in a
		   call it made that works for it (memset, madvise) -- not a
		   wait further out (jemalloc's background thread sleeps in
		   pthread_cond_timedwait between its rounds).  */
		if (k < 2 && look >= own->own_low && look < own->own_high) {
			*pc = fr[k].pc;
			struct hw_symbol_at sa = { 0 };
			return hw_syms_symbol_at(s->syms, look, &sa) && sa.name &&
			       (!sa.size || sa.offset < sa.size) ? sa.name
								   : "the allocator's code";
		}
		struct hw_symbol_at sa = { 0 };
		if (!hw_syms_symbol_at(s->syms, look, &sa) || !sa.name ||
		    (sa.size && sa.offset >= sa.size))
			continue;
		if (hw_syms_name_in(s->alloc->functions, sa.name)) {
			*pc = fr[k].pc;
			return sa.name;
		}
	}
	return NULL;
}

void hw_inflight_get(struct hw_session *s, struct hw_inflight *out)
{
	memset(out, 0, sizeof *out);
	const struct hw_target *t = s->target;
	if (!s->syms || !s->alloc || !s->alloc->functions ||
	    !(t->live || t->is_process))
		return;
	struct hw_instance_info own = { 0 };
	s->alloc->describe(s->alloc_state, &own);
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct hw_thread *th = &t->threads[i];
		uint64_t pc = 0;
		const char *fn = th->nregs ? inside(s, th, &own, &pc) : NULL;
		if (!fn)
			continue;
		if (out->n < HW_INFLIGHT_KEPT) {
			out->thread[out->n] = i;
			out->pc[out->n] = pc;
			snprintf(out->function[out->n], sizeof *out->function,
				 "%.*s%s", (int)strcspn(fn, "@"), fn,
				 strchr(fn, ' ') ? "" : "()");
		}
		out->n++;
	}
}

void hw_inflight_text(const struct hw_session *s, const struct hw_inflight *f,
		      char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < f->n && k < HW_INFLIGHT_KEPT && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%sthread %zu (tid "
				       "%d) in %s", k ? ", " : "",
				       f->thread[k] + 1,
				       s->target->threads[f->thread[k]].tid,
				       f->function[k]);
	if (f->n > HW_INFLIGHT_KEPT && at < len)
		snprintf(buf + at, len - at, ", and %zu more",
			 f->n - HW_INFLIGHT_KEPT);
}

void hw_inflight_settle(struct hw_session *s)
{
	struct hw_inflight inf;
	hw_inflight_get(s, &inf);
	if (!inf.n)
		return;
	char who[400];
	hw_inflight_text(s, &inf, who, sizeof who);
	hw_findings_in_flight(s, "(in flight: a thread was inside the "
			      "allocator at the stop)");
	hw_note(s, inf.pc[0], "%s when the process was stopped: what its "
		"operation had half done is not counted as corruption (run "
		"again to stop it elsewhere)", who);
}
