/* lost.c - which objects that read as in use may be the free ones a
 * broken list lost.
 *
 * A thread cache's list that ends before its length says (a use after
 * free overwrote a link), or a span's own list shorter than its refcount
 * leaves free, loses the objects behind the break: no list holds them,
 * so the holder map says they are in use, and `leaks` would call them
 * lost when nothing points at them -- a false definite leak.  tcmalloc's
 * links are plain pointers in the objects' first words, with nothing
 * else that tells a free object from one in use, so they cannot be told
 * for certain (a program's own NULL-terminated lists look the same):
 * the objects that could be them are marked instead, and keep their
 * state.  Such an object is one of a class that lost objects, whose
 * first word is NULL or leads, from object to object of its class that
 * read as in use, to NULL within as many objects as the class lost, as
 * the tail behind a break does (a free list ends in NULL).  A chain that
 * is still going after CHAIN_DEPTH objects is taken too: marking more
 * than the lost ones only makes `leaks` say "unknown" where it could
 * have said "definite", never the reverse.
 */
#include <stdlib.h>

#include "tcmalloc.h"

#define CHAIN_DEPTH 64

/* The in-use object of class cls whose slot index is slot when addr is
   one, else UINT64_MAX.  */
static uint64_t used_object(const struct tc_state *tc, uint64_t addr,
			    unsigned cls)
{
	const struct tc_span *sp = tc_span_of(tc, addr);
	if (!sp || sp->cls != cls || !tc_is_object(sp, addr))
		return UINT64_MAX;
	uint64_t slot = sp->slot + (addr - sp->addr) / sp->objsize;
	return tc_holder_of(tc, slot) == TC_IN_USE ? slot : UINT64_MAX;
}

/* Could the object at addr (class cls, in use) be on a lost tail?  */
static bool on_lost_tail(const struct tc_state *tc, uint64_t addr,
			 unsigned cls)
{
	uint64_t lost = tc->lost[cls];
	for (uint64_t n = 1; n <= CHAIN_DEPTH; n++) {
		uint64_t next;
		if (!hw_read_u64(tc->t, addr, &next))
			return false;
		if (!next)
			return n <= lost;
		if (n == lost || used_object(tc, next, cls) == UINT64_MAX)
			return false;
		addr = next;
	}
	return true;
}

void tc_mark_lost(struct tc_state *tc)
{
	unsigned classes = 0;
	for (unsigned cls = 1; cls < tc->nclasses; cls++)
		classes += tc->lost[cls] != 0;
	if (!classes)
		return;
	tc->maybe_free = calloc(tc->nslots / 8 + 1, 1);
	if (!tc->maybe_free) {
		hw_oom(tc->s);
		return;
	}
	for (size_t i = 0; i < tc->nspans; i++) {
		const struct tc_span *sp = &tc->spans[i];
		if (!sp->objsize || sp->location || !tc->lost[sp->cls])
			continue;
		uint64_t n = sp->bytes / sp->objsize, marked = 0, first = 0;
		for (uint64_t k = 0; k < n; k++) {
			uint64_t slot = sp->slot + k, addr = sp->addr + k * sp->objsize;
			if (tc_holder_of(tc, slot) != TC_IN_USE ||
			    !on_lost_tail(tc, addr, sp->cls))
				continue;
			tc->maybe_free[slot >> 3] |= (uint8_t)(1u << (slot & 7));
			if (!marked++)
				first = addr;
		}
		if (marked)
			hw_note(tc->s, first, "tcmalloc: %llu object%s of the "
				"span at 0x%llx (class %u) read as in use but may "
				"be free ones a broken list lost (each leads "
				"through objects of its class to a list's end); "
				"leaks calls them unknown, not lost",
				(unsigned long long)marked, marked == 1 ? "" : "s",
				(unsigned long long)sp->addr, sp->cls);
	}
}
