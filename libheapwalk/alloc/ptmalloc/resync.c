/* resync.c - find the chunk boundaries again after a damaged header.
 *
 * An overflow that writes over one chunk header breaks the size chain:
 * nothing after it can be reached by sizes from the heap's start.  But
 * the chunks after the damage are usually intact, and a chain that
 * starts on a real boundary runs to the heap's end through headers that
 * agree with each other.  So every 16-byte position after the damage is
 * a candidate, and the walk resumes at the first one whose chain is
 * consistent all the way to the heap's end or, when there is further
 * damage, for a long run of chunks (there the walk resynchronises again).
 *
 * A step of a chain is consistent when, as glibc keeps its heaps:
 *   - the size is a multiple of 16, at least MINSIZE, inside the heap;
 *   - a chunk whose P bit is clear follows a free chunk: its prev_size is
 *     the size of the chunk before it, and that chunk's own P bit is set
 *     (glibc never leaves two free chunks side by side);
 *   - a chunk in use by its header (the next P bit set) carries the A bit
 *     exactly when its arena is not the main one;
 *   - when every free list has been read, no list member starts inside
 *     the step (a chain that jumps over one is not the heap's).
 * The end is the top chunk reaching the heap's end, the heap's end
 * itself, or a heap's closing fenceposts.
 *
 * Chains are deterministic: two chains that meet go on together.  Each
 * position is therefore followed at most once (a bitmap remembers the
 * positions of chains already followed, and a chain that meets one is
 * dropped: an earlier candidate already went wherever it goes), which
 * keeps the search linear in the heap's size whatever the data.
 */
#include <stdlib.h>

#include "ptmalloc.h"

/* A chain that reaches neither the heap's end nor this many chunks is not
   trusted as the heap's: data that happens to look like a few headers
   is common; a long run of mutually consistent ones is not.  */
#define RESYNC_MIN_STEPS 16

struct chain_search {
	struct pm_state *p;
	const struct pm_heap *h;
	uint64_t from;           /* first candidate; positions are >= it */
	uint64_t end;
	uint64_t top;            /* the arena's top, if in this heap */
	uint64_t *seen;          /* one bit per 16 bytes from `from` */
	bool use_tags;
};

static bool seen_test_set(struct chain_search *cs, uint64_t pos)
{
	uint64_t g = (pos - cs->from) >> 4;
	uint64_t bit = 1ull << (g & 63);
	bool was = (cs->seen[g >> 6] & bit) != 0;
	cs->seen[g >> 6] |= bit;
	return was;
}

/* Does any list member start in [lo, hi) (chunk starts are tagged; a
   tcache entry is tagged at its user pointer, which no chunk of the
   step may start at either)?  */
static bool tags_in(const struct pm_heap *h, uint64_t lo, uint64_t hi)
{
	for (uint64_t a = lo; a < hi; a += 16) {
		uint64_t g = (a - h->start) >> 4;
		uint8_t byte = h->tags[g >> 2];
		if ((g & 3) == 0 && byte == 0 && a + 64 <= hi) {
			a += 48;             /* four empty granules at once */
			continue;
		}
		if ((byte >> ((g & 3) * 2)) & 3)
			return true;
	}
	return false;
}

enum chain_end { CHAIN_END, CHAIN_BROKEN, CHAIN_MERGED };

/* Follow the chain from `pos`; *reach is where it stops being
   consistent (the heap's end when it reaches it), *steps its chunks.  */
static enum chain_end follow(struct chain_search *cs, uint64_t pos,
			     uint64_t *reach, uint64_t *steps)
{
	struct pm_state *p = cs->p;
	const bool thread_arena = cs->h->arena != 0;
	uint64_t prev_size = 0, prev_field = 0;
	*steps = 0;
	for (;;) {
		*reach = pos;
		if (pos == cs->end)
			return CHAIN_END;
		if (seen_test_set(cs, pos))
			return CHAIN_MERGED;
		uint64_t field, sz;
		if (!hw_read_u64(p->t, pos + 8, &field))
			return CHAIN_BROKEN;
		sz = field & ~(uint64_t)PM_SIZE_BITS;
		if (*steps > 0 && (field & PM_PREV_INUSE) &&
		    sz != 0 && pos != cs->top &&
		    ((prev_field & PM_NON_MAIN_ARENA) != 0) != thread_arena)
			return CHAIN_BROKEN;
		if (!(field & PM_PREV_INUSE)) {
			uint64_t ps;
			if (!hw_read_u64(p->t, pos, &ps))
				return CHAIN_BROKEN;
			if (*steps == 0) {
				if (ps < PM_MINSIZE || (ps & 15) ||
				    pos - cs->from + PM_ALIGN < ps)
					return CHAIN_BROKEN;
			} else if (ps != prev_size ||
				   !(prev_field & PM_PREV_INUSE)) {
				return CHAIN_BROKEN;
			}
		}
		if (pos == cs->top)
			return pos + sz == cs->end ? (*reach = cs->end, CHAIN_END)
						   : CHAIN_BROKEN;
		if (sz == 0)         /* a thread heap's closing fencepost */
			return *steps > 0 && pos + 2 * PM_HDR >= cs->end
				       ? (*reach = cs->end, CHAIN_END)
				       : CHAIN_BROKEN;
		if (sz == PM_HDR) {  /* fenceposts close a heap */
			if (*steps == 0 || pos + 3 * PM_HDR < cs->end)
				return CHAIN_BROKEN;
		} else if (sz < PM_MINSIZE || (sz & 15) || sz > cs->end - pos) {
			return CHAIN_BROKEN;
		}
		if (cs->use_tags && tags_in(cs->h, pos + 2 * PM_HDR, pos + sz))
			return CHAIN_BROKEN;
		prev_size = sz;
		prev_field = field;
		pos += sz;
		(*steps)++;
	}
}

bool pm_resync(struct pm_state *p, const struct pm_heap *h, uint64_t from,
	       uint64_t *resume)
{
	const struct pm_arena *ar = &p->arenas[h->arena];
	if (from >= h->end || ((from - h->start) & 15))
		return false;
	uint64_t granules = (h->end - from) >> 4;
	struct chain_search cs = {
		.p = p, .h = h, .from = from, .end = h->end,
		.top = ar->top >= h->start && ar->top < h->end ? ar->top : 0,
		.seen = calloc(granules / 64 + 1, sizeof(uint64_t)),
		.use_tags = p->lists_done,
	};
	if (!cs.seen) {
		hw_oom(p->s);
		return false;
	}
	uint64_t found = 0;
	for (uint64_t c = from; c < h->end && !found; c += 16) {
		uint64_t g = (c - from) >> 4;
		if (cs.seen[g >> 6] & (1ull << (g & 63)))
			continue;    /* on a chain already followed */
		uint64_t reach, steps;
		enum chain_end e = follow(&cs, c, &reach, &steps);
		/* The first long chain, not the longest: with more damage
		   further on, a chain that starts past that damage runs
		   furthest, and the chunks before it would be lost.  */
		if (e == CHAIN_END ||
		    (e == CHAIN_BROKEN && steps >= RESYNC_MIN_STEPS))
			found = c;
	}
	free(cs.seen);
	*resume = found;
	return found != 0;
}
