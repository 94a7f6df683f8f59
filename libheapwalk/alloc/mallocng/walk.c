/* walk.c - every mallocng block in address order: each group's slots in
 * turn, a free slot by its meta's masks, a block in use by its in-band
 * header (where the block starts in the slot, how many of the slot's
 * bytes it leaves unused).  A slot that holds a nested group is walked
 * as that group's slots.
 *
 * A slot is [start, start + stride); its last 4 bytes are the next
 * slot's header.  The block at p in it has the 4-byte header before p:
 *   p[-4]  0, or 1 when the offset is the 32-bit one at p[-8]
 *   p[-3]  slot index (bits 0-4) and reserved code (bits 5-7)
 *   p[-2]  16-bit offset of p from the group's slots, in 16-byte units
 * Code 0-4: that many bytes at the slot's end unused; 5: the count is
 * the u32 at end - 4; 6: the slot holds a nested group; 7 (at the slot
 * start only): the block starts further in, at start + 16 * p[-2].
 */
#include <string.h>

#include "mallocng.h"

/* Nests deeper than this are a loop (musl nests a few levels).  */
#define MAX_NEST 16

struct walk {
	struct ng_state *ng;
	hw_chunk_fn *fn;
	void *cookie;
	bool report;          /* the first walk: findings */
};

static bool walk_group(struct walk *w, uint32_t gi, unsigned depth);

/* The block in use in slot i of g at [start, start + stride): c filled
   in, or false (a finding, when reporting) for a header that does not
   decode to this slot.  *nested is the group the slot holds, if any.  */
static bool used_block(struct walk *w, const struct ng_group *g, unsigned i,
		       uint64_t start, struct hw_chunk *c, uint32_t *nested)
{
	struct ng_state *ng = w->ng;
	uint64_t end = start + g->stride - NG_IB, p = start;
	uint8_t h[4];
	uint16_t off16;
	*nested = NG_NONE;
	if (!hw_read(ng->t, start - NG_IB, h, sizeof h))
		return false;
	memcpy(&off16, h + 2, 2);
	if (h[1] >> 5 == 7) {          /* starts further in */
		p = start + (uint64_t)NG_UNIT * off16;
		if (p >= end || !hw_read(ng->t, p - NG_IB, h, sizeof h))
			return false;
		memcpy(&off16, h + 2, 2);
	}
	uint64_t off = off16;
	if (h[0]) {
		uint32_t off32;
		if (h[0] != 1 || off16 ||
		    !hw_read_u32(ng->t, p - 8, &off32) || off32 <= 0xffff)
			return false;
		off = off32;
	}
	unsigned code = h[1] >> 5;
	if ((h[1] & 31) != i || p - NG_UNIT * off - NG_GROUP_HDR != g->mem)
		return false;
	if (code == 6) {
		*nested = ng_group_at(ng, p);
		return *nested != NG_NONE;
	}
	uint64_t reserved = code;
	if (code == 5) {
		uint32_t r;
		if (!hw_read_u32(ng->t, end - 4, &r) || r < 5)
			return false;
		reserved = r;
	} else if (code > 5)
		return false;
	if (reserved > end - p)
		return false;
	c->addr = p;
	c->size = end - reserved - p;
	if (w->report) {
		/* The byte after the block (when the slot has spare bytes)
		   and the next header's first byte are 0 while nothing ran
		   past the block's end.  */
		uint8_t past = 0, check = 0;
		if (reserved && hw_read(ng->t, end - reserved, &past, 1) && past)
			hw_finding(ng->s, p, "mallocng block overflowed: the "
				   "byte after its %llu bytes is 0x%02x, not 0",
				   (unsigned long long)c->size, past);
		if (i < g->last_idx && hw_read(ng->t, end, &check, 1) && check &&
		    check != 1)
			hw_finding(ng->s, p, "mallocng block overflowed: the "
				   "next slot's check byte is 0x%02x", check);
	}
	return true;
}

static bool walk_group(struct walk *w, uint32_t gi, unsigned depth)
{
	struct ng_state *ng = w->ng;
	struct ng_group *g = &ng->groups[gi];
	if (g->walked || depth > MAX_NEST) {
		if (w->report)
			hw_finding(ng->s, g->mem, "mallocng group: nested in "
				   "itself (a loop of nested groups)");
		return true;
	}
	g->walked = true;
	bool more = true;
	for (unsigned i = 0; i <= g->last_idx && more; i++) {
		uint64_t start = g->mem + NG_GROUP_HDR + g->stride * i;
		struct hw_chunk c = {
			.addr = start, .size = g->stride - NG_IB,
			.chunk = start, .chunk_size = g->stride,
			.szind = g->sizeclass,
		};
		if ((g->avail | g->freed) >> i & 1) {
			c.used = false;
			c.where = g->avail >> i & 1 ? HW_WHERE_AVAIL
						     : HW_WHERE_FREED;
			more = w->fn(w->cookie, &c);
			continue;
		}
		c.used = true;
		/* A mapping of one block (a large request) is mmapped; a
		   group of several slots in a mapping of its own is a group
		   as any other.  */
		c.where = g->maplen && !g->last_idx ? HW_WHERE_MMAPPED
						    : HW_WHERE_GROUP;
		uint32_t inner;
		if (used_block(w, g, i, start, &c, &inner)) {
			if (inner != NG_NONE) {
				more = walk_group(w, inner, depth + 1);
				continue;
			}
		} else if (w->report) {
			hw_finding(ng->s, start, "mallocng slot %u of group "
				   "0x%llx: in use by its masks, but its header "
				   "does not say so (overwritten, or a malloc "
				   "caught half done)", i,
				   (unsigned long long)g->mem);
		}
		more = w->fn(w->cookie, &c);
	}
	g->walked = false;
	return more;
}

bool ng_walk(struct ng_state *ng, hw_chunk_fn *fn, void *cookie)
{
	struct walk w = { .ng = ng, .fn = fn, .cookie = cookie,
			  .report = !ng->reported };
	ng->reported = true;
	bool more = true;
	for (size_t i = 0; i < ng->ngroups && more; i++)
		if (ng->groups[i].parent == NG_NONE)
			more = walk_group(&w, (uint32_t)i, 0);
	return more;
}
