/* threads.c - which arena each thread uses: glibc's thread_arena.
 *
 * thread_arena is a __thread variable of libc (malloc/arena.c), set on a
 * thread's first malloc to the arena it attaches to, NULL before that.
 * Like every initial-exec TLS variable of libc it sits at one fixed
 * distance from the thread pointer in every thread: below it on x86_64
 * (TLS variant II, static TLS ends at fs_base), above it on aarch64
 * (variant I, TPIDR_EL0 + 16 bytes of TCB, then the modules' blocks).
 *
 * That distance comes from the symbols when libc's debug info is there:
 * thread_arena's and tcache's st_value are offsets in libc's TLS block,
 * and the tcache scan (lists.c) has measured where tcache sits from the
 * thread pointer, so thread_arena is the difference away from it (which
 * spares knowing where the loader put libc's block).  Without symbols the
 * data decides: the offset at which every thread holds either NULL or the
 * address of an arena, and at least one holds an arena.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../arch/arch.h"
#include "../../sym/sym.h"
#include "ptmalloc.h"

/* How far from the thread pointer the scan looks, on the TLS side; and
   how far from tcache when its offset is known.  */
#define PM_TLS_SCAN 0x1000
#define PM_TLS_NEIGHBOURS 0x100

/* The index of the arena at `addr`, or -1.  */
static int32_t arena_index(const struct pm_state *p, uint64_t addr)
{
	for (size_t i = 0; i < p->narenas; i++)
		if (p->arenas[i].addr == addr)
			return (int32_t)i;
	return -1;
}

/* What thread_arena at `off` from th's thread pointer says.  */
static struct pm_thread_arena read_thread_arena(struct pm_state *p,
						const struct hw_thread *th,
						int64_t off)
{
	struct pm_thread_arena ta = { .tid = th->tid, .arena = PM_TA_UNREAD };
	if (!th->has_tp || !hw_read_u64(p->t, th->tp + (uint64_t)off, &ta.value))
		return ta;
	ta.value &= p->t->arch->ptr_mask;
	if (!ta.value)
		ta.arena = PM_TA_NONE;
	else if ((ta.arena = arena_index(p, ta.value)) < 0)
		ta.arena = PM_TA_OTHER;
	return ta;
}

/* The symbols' answer: tcache's measured offset plus the distance of the
   two variables in libc's TLS block.  */
static bool offset_from_symbols(struct pm_state *p, int64_t *off)
{
	struct hw_syms *syms = p->s->syms;
	const struct hw_module *mod = &p->libc_mod;
	uint64_t ta, tc, size;
	bool ta_tls = false, tc_tls = false;
	if (!syms || !p->tcache_tp_known || !p->have_libc_mod ||
	    !hw_syms_lookup(syms, mod, "thread_arena", &ta, &size, &ta_tls) ||
	    !hw_syms_lookup(syms, mod, "tcache", &tc, &size, &tc_tls) ||
	    !ta_tls || !tc_tls)
		return false;
	*off = p->tcache_tp_off + (int64_t)(ta - tc);
	return true;
}

/* How many threads hold an arena's address at `off`; 0 if any holds
   something that is neither an arena nor NULL (or nothing holds one).  */
static unsigned offset_votes(struct pm_state *p, int64_t off)
{
	unsigned votes = 0;
	for (size_t i = 0; i < p->t->nthreads; i++) {
		const struct hw_thread *th = &p->t->threads[i];
		struct pm_thread_arena ta = read_thread_arena(p, th, off);
		if (ta.arena == PM_TA_OTHER)
			return 0;
		votes += ta.arena >= 0;
	}
	return votes;
}

static uint64_t distance(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)(a - b) : (uint64_t)(b - a);
}

/* The data's answer.  thread_arena and tcache are neighbours in libc's
   TLS block (0x90 bytes in 2.36), so with tcache's offset known only its
   surroundings are searched: further out, x86_64 threads' stacks (right
   below their TLS) hold arena pointers too, in the frames of malloc's
   callers.  Ties go to the offset nearest tcache's, or the thread
   pointer.  */
static bool offset_by_vote(struct pm_state *p, int64_t *off, unsigned *votes)
{
	bool above = strcmp(p->t->arch->name, "aarch64") == 0;
	int64_t lo = above ? 0 : -PM_TLS_SCAN, hi = above ? PM_TLS_SCAN : 0;
	int64_t near = p->tcache_tp_known ? p->tcache_tp_off : 0;
	if (p->tcache_tp_known) {
		lo = near - PM_TLS_NEIGHBOURS;
		hi = near + PM_TLS_NEIGHBOURS;
	}
	unsigned best = 0;
	for (int64_t o = lo; o < hi; o += 8) {
		unsigned v = offset_votes(p, o);
		if (v > best || (v && v == best &&
				 distance(o, near) < distance(*off, near))) {
			best = v;
			*off = o;
		}
	}
	*votes = best;
	return best > 0;
}

static void describe(struct pm_state *p, const char *how, unsigned votes)
{
	int64_t off = p->arena_tp_off;
	snprintf(p->how_thread_arena, sizeof p->how_thread_arena,
		 "%s: thread_arena at tp%s0x%llx, %u thread%s on an arena", how,
		 off < 0 ? "-" : "+", (unsigned long long)distance(off, 0),
		 votes, votes == 1 ? "" : "s");
}

void pm_find_thread_arenas(struct pm_state *p)
{
	struct hw_target *t = p->t;
	bool any_tp = false;
	for (size_t i = 0; i < t->nthreads; i++)
		any_tp |= t->threads[i].has_tp;
	if (p->guest) {
		/* As for the tcaches (lists.c): the core's thread pointers
		   are the emulator's threads', not the guest's.  */
		snprintf(p->how_thread_arena, sizeof p->how_thread_arena,
			 "unknown: an emulated guest's heap, whose thread "
			 "pointers are not in the core");
		return;
	}
	if (!any_tp) {
		snprintf(p->how_thread_arena, sizeof p->how_thread_arena,
			 "unknown: %s", hw_target_no_tp(t));
		return;
	}
	unsigned votes = 0;
	if (offset_from_symbols(p, &p->arena_tp_off)) {
		votes = offset_votes(p, p->arena_tp_off);
		describe(p, "symbols thread_arena and tcache", votes);
	} else if (offset_by_vote(p, &p->arena_tp_off, &votes)) {
		describe(p, "thread pointer scan", votes);
	} else {
		snprintf(p->how_thread_arena, sizeof p->how_thread_arena,
			 "not found: no word at one offset from every thread "
			 "pointer is NULL or an arena's address");
		return;
	}
	p->thread_arenas = calloc(t->nthreads ? t->nthreads : 1,
				  sizeof *p->thread_arenas);
	if (!p->thread_arenas) {
		hw_oom(p->s);
		return;
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		struct pm_thread_arena *ta = &p->thread_arenas[i];
		*ta = read_thread_arena(p, &t->threads[i], p->arena_tp_off);
		if (ta->arena == PM_TA_OTHER)
			hw_finding(p->s, t->threads[i].tp +
				   (uint64_t)p->arena_tp_off, "thread %d: "
				   "thread_arena 0x%llx is no arena", ta->tid,
				   (unsigned long long)ta->value);
	}
	p->nthread_arenas = t->nthreads;
}
