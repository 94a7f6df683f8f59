/* check.c - mallocng's own consistency, as its asserts would find it,
 * beyond what reading the groups and walking the slots found: each
 * class's active list (circular through the metas' prev and next, every
 * meta on it a group of that class), the free-meta list (circular,
 * every meta on it unused), and where the context says its next meta
 * is.  Every list walk is bounded: a list longer than the metas read is
 * a loop.
 */
#include <stdio.h>

#include "mallocng.h"

/* A circular list from head: each meta's next's prev is itself, and
   each is a group of class `sc` (or, when sc < 0, unused).  */
static void check_list(struct ng_state *ng, uint64_t head, int sc,
		       const char *what)
{
	uint64_t limit = ng->ngroups + (uint64_t)ng->nareas * NG_AREA_SLOTS + 1;
	uint64_t m = head, n = 0;
	do {
		uint64_t prev, next, mem, o = m & (NG_AREA - 1);
		if (o < NG_AREA_METAS || (o - NG_AREA_METAS) % NG_META ||
		    (o - NG_AREA_METAS) / NG_META >= NG_AREA_SLOTS ||
		    !ng_meta_links(ng, m, &prev, &next, &mem)) {
			hw_finding(ng->s, m, "mallocng %s: a meta at 0x%llx that "
				   "is not one (or not in the core)", what,
				   (unsigned long long)m);
			return;
		}
		if (sc >= 0) {
			uint32_t g = ng_group_of_meta(ng, mem, m);
			if (g == NG_NONE || ng->groups[g].sizeclass != sc)
				hw_finding(ng->s, m, "mallocng %s: meta 0x%llx "
					   "is not a group of class %d",
					   what, (unsigned long long)m, sc);
		} else if (mem) {
			hw_finding(ng->s, m, "mallocng %s: meta 0x%llx still "
				   "names a group (0x%llx)", what,
				   (unsigned long long)m, (unsigned long long)mem);
		}
		uint64_t back = 0, x, y;
		if (!next || !ng_meta_links(ng, next, &back, &x, &y) || back != m) {
			hw_finding(ng->s, m, "mallocng %s: meta 0x%llx's next "
				   "(0x%llx) does not point back at it", what,
				   (unsigned long long)m, (unsigned long long)next);
			return;
		}
		m = next;
	} while (m != head && ++n < limit);
	if (m != head)
		hw_finding(ng->s, head, "mallocng %s: the list does not come "
			   "back to its head (a loop)", what);
}

void ng_check(void *state)
{
	struct ng_state *ng = state;
	char what[48];
	for (int sc = 0; sc < NG_NCLASSES; sc++)
		if (ng->active[sc]) {
			snprintf(what, sizeof what, "active list of class %d",
				 sc);
			check_list(ng, ng->active[sc], sc, what);
		}
	if (ng->free_meta_head)
		check_list(ng, ng->free_meta_head, -1, "free-meta list");
	/* The next meta to hand out lies in the last area, and the count
	   left is what is past it.  */
	uint64_t t = ng->area_tail;
	if (ng->avail_meta_count) {
		uint64_t k = ng->avail_meta >= t + NG_AREA_METAS
				     ? (ng->avail_meta - t - NG_AREA_METAS) / NG_META
				     : NG_AREA_SLOTS + 1;
		if (ng->avail_meta < t + NG_AREA_METAS ||
		    (ng->avail_meta - t - NG_AREA_METAS) % NG_META ||
		    k + ng->avail_meta_count != NG_AREA_SLOTS)
			hw_finding(ng->s, ng->ctx, "mallocng context: its next "
				   "meta (0x%llx, %llu left) is not in its last "
				   "meta area (0x%llx)",
				   (unsigned long long)ng->avail_meta,
				   (unsigned long long)ng->avail_meta_count,
				   (unsigned long long)t);
	}
}
