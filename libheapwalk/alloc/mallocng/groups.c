/* groups.c - mallocng's meta areas read once: every meta in use names a
 * group (its memory, slot size and count, which slots are free), kept
 * sorted by the group's address; and the lookups in them (the group at
 * an address, the one a meta describes, the innermost one holding an
 * address).
 *
 * The areas are a singly linked list from the context; each is 4 KiB,
 * begins with the context's secret and holds 101 metas of 40 bytes.  A
 * meta whose `mem` is 0 is unused (never handed out, or recycled onto
 * the free-meta list); one in use must be pointed back at by the first
 * word of its group.  The active lists are not walked: full groups and
 * single mappings leave them.
 */
#include <stdlib.h>
#include <string.h>

#include "mallocng.h"

/* The context's size_classes, in 16-byte units.  */
const uint16_t ng_size_classes[NG_NCLASSES] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 18, 20, 25, 31,
	36, 42, 50, 63, 72, 84, 102, 127, 146, 170, 204, 255, 292, 340, 409, 511,
	584, 682, 818, 1023, 1169, 1364, 1637, 2047,
	2340, 2730, 3276, 4095, 4680, 5460, 6552, 8191,
};

/* No heap has more areas than this: 2^20 areas hold 100 million metas.  */
#define MAX_AREAS (1u << 20)
/* Nor a group more memory than this (musl's largest: a mapping of one
   block, as large as the program asked).  */
#define MAX_GROUP_BYTES (1ull << 44)
/* Mappings a group may run across (a donated one: an ELF file's data
   and the anonymous pages after it).  */
#define MAX_SPAN_REGIONS 8

/* Does the target map every byte of [lo, hi) (its pages need not all be
   in the core)?  */
static bool mapped(const struct hw_target *t, uint64_t lo, uint64_t hi)
{
	for (unsigned n = 0; lo < hi && n < MAX_SPAN_REGIONS; n++) {
		const struct hw_region *r = hw_region_of(t, lo);
		if (!r)
			return false;
		lo = r->end;
	}
	return lo >= hi;
}

/* How many areas the chain from head has before it ends (0) or comes
   back to one it passed (Brent's cycle finding: the next words alone,
   no memory): at most `limit`.  *loop says whether it came back.  */
static size_t chain_length(struct hw_target *t, uint64_t head, size_t limit,
			   bool *loop)
{
	uint64_t tortoise = head, hare = head, next;
	size_t power = 1, lambda = 1, n = 0;
	*loop = false;
	/* The cycle's length, if any.  */
	while (hare && n < limit) {
		if (!hw_read_u64(t, hare + 8, &next))
			break;
		hare = next;
		n++;
		if (hare && hare == tortoise) {
			*loop = true;
			break;
		}
		if (power == lambda) {
			tortoise = hare;
			power *= 2;
			lambda = 0;
		}
		lambda++;
	}
	if (!*loop)
		return n + 1 < limit ? n + 1 : limit;
	/* Where it starts: mu areas in, then lambda areas round.  */
	tortoise = hare = head;
	for (size_t i = 0; i < lambda; i++)
		if (!hw_read_u64(t, hare + 8, &hare))
			return limit;
	size_t mu = 0;
	while (tortoise != hare && mu < limit) {
		if (!hw_read_u64(t, tortoise + 8, &tortoise) ||
		    !hw_read_u64(t, hare + 8, &hare))
			return limit;
		mu++;
	}
	return mu + lambda < limit ? mu + lambda : limit;
}

static bool read_ctx(struct ng_state *ng)
{
	uint8_t c[NG_CTX_SIZE];
	if (!hw_read(ng->t, ng->ctx, c, sizeof c))
		return false;
	memcpy(&ng->secret, c + NG_CTX_SECRET, 8);
	memcpy(&ng->mmap_counter, c + NG_CTX_MMAP_COUNTER, 4);
	memcpy(&ng->free_meta_head, c + NG_CTX_FREE_META_HEAD, 8);
	memcpy(&ng->avail_meta, c + NG_CTX_AVAIL_META, 8);
	memcpy(&ng->avail_meta_count, c + NG_CTX_AVAIL_META_COUNT, 8);
	memcpy(&ng->area_head, c + NG_CTX_AREA_HEAD, 8);
	memcpy(&ng->area_tail, c + NG_CTX_AREA_TAIL, 8);
	memcpy(ng->active, c + NG_CTX_ACTIVE, sizeof ng->active);
	memcpy(ng->usage, c + NG_CTX_USAGE, sizeof ng->usage);
	return true;
}

/* Room for one more group.  */
static bool grow(struct ng_state *ng, size_t *cap)
{
	if (ng->ngroups < *cap)
		return true;
	size_t n = *cap ? 2 * *cap : 256;
	struct ng_group *g = realloc(ng->groups, n * sizeof *g);
	if (!g)
		return false;
	ng->groups = g;
	*cap = n;
	return true;
}

/* The meta at m (40 bytes at raw) as a group, or false (findings said
   why) when it names none that can be walked.  */
static bool decode_meta(struct ng_state *ng, uint64_t m, const uint8_t *raw,
			struct ng_group *g)
{
	uint64_t bits;
	memset(g, 0, sizeof *g);
	g->meta = m;
	memcpy(&g->mem, raw + 16, 8);
	memcpy(&g->avail, raw + 24, 4);
	memcpy(&g->freed, raw + 28, 4);
	memcpy(&bits, raw + 32, 8);
	g->last_idx = bits & 31;
	g->freeable = bits >> 5 & 1;
	g->sizeclass = bits >> 6 & 63;
	g->maplen = bits >> 12;
	g->parent = NG_NONE;
	if (!g->mem)
		return false;         /* unused */
	if (g->mem & (NG_UNIT - 1)) {
		hw_finding(ng->s, m, "mallocng meta: its group at 0x%llx is "
			   "not 16-aligned", (unsigned long long)g->mem);
		return false;
	}
	if (g->sizeclass >= NG_NCLASSES && g->sizeclass != NG_CLASS_MMAP) {
		hw_finding(ng->s, m, "mallocng meta: size class %u does not "
			   "exist", g->sizeclass);
		return false;
	}
	if (g->maplen && !g->last_idx)      /* one slot, the mapping's size */
		g->stride = g->maplen * NG_AREA - NG_GROUP_HDR;
	else if (g->sizeclass < NG_NCLASSES)
		g->stride = (uint64_t)NG_UNIT * ng_size_classes[g->sizeclass];
	else {
		hw_finding(ng->s, m, "mallocng meta: a group of its own "
			   "mapping (class 63) with %u slots or no length",
			   g->last_idx + 1u);
		return false;
	}
	uint64_t back;
	uint8_t hdr;
	if (!hw_read_u64(ng->t, g->mem, &back) ||
	    !hw_read(ng->t, g->mem + 8, &hdr, 1)) {
		hw_partial(ng->s, g->mem, "mallocng group (meta 0x%llx): not "
			   "in the core", (unsigned long long)m);
		return false;
	}
	if (back != m) {
		hw_finding(ng->s, g->mem, "mallocng group: its meta pointer is "
			   "0x%llx, but meta 0x%llx names it (overwritten, or "
			   "the meta is stale)", (unsigned long long)back,
			   (unsigned long long)m);
		return false;
	}
	uint64_t bytes = g->maplen ? g->maplen * NG_AREA
				   : NG_GROUP_HDR + g->stride * (g->last_idx + 1u);
	if (g->maplen > MAX_GROUP_BYTES / NG_AREA ||
	    g->mem + bytes < g->mem || !mapped(ng->t, g->mem, g->mem + bytes)) {
		hw_finding(ng->s, m, "mallocng meta: its group [0x%llx, +%llu) "
			   "is not all in the process's memory (maplen %llu)",
			   (unsigned long long)g->mem, (unsigned long long)bytes,
			   (unsigned long long)g->maplen);
		return false;
	}
	g->active_idx = hdr & 31;
	uint32_t all = (uint32_t)((2ull << g->last_idx) - 1);
	if ((g->avail | g->freed) & ~all || g->avail & g->freed)
		hw_finding(ng->s, m, "mallocng meta: masks avail 0x%x freed "
			   "0x%x do not fit %u slots (or share a slot)",
			   g->avail, g->freed, g->last_idx + 1u);
	g->avail &= all;
	g->freed &= all & ~g->avail;
	return true;
}

static int by_mem(const void *a, const void *b)
{
	const struct ng_group *x = a, *y = b;
	return (x->mem > y->mem) - (x->mem < y->mem);
}

size_t ng_groups_upto(const struct ng_state *ng, uint64_t addr)
{
	size_t lo = 0, hi = ng->ngroups;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ng->groups[mid].mem <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t ng_group_at(const struct ng_state *ng, uint64_t mem)
{
	size_t k = ng_groups_upto(ng, mem);
	return k && ng->groups[k - 1].mem == mem ? (uint32_t)(k - 1) : NG_NONE;
}

bool ng_meta_links(struct ng_state *ng, uint64_t m, uint64_t *prev,
		   uint64_t *next, uint64_t *mem)
{
	uint64_t w[3];
	if (!hw_read(ng->t, m, w, sizeof w))
		return false;
	*prev = w[0];
	*next = w[1];
	*mem = w[2];
	return true;
}

uint32_t ng_group_of_meta(const struct ng_state *ng, uint64_t mem, uint64_t m)
{
	uint32_t g = mem ? ng_group_at(ng, mem) : NG_NONE;
	return g != NG_NONE && ng->groups[g].meta == m ? g : NG_NONE;
}

/* Groups carved out of a slot of another group: the slot's header (the
   4 bytes before the inner group) has reserved code 6 and its offset
   leads to the outer group.  */
static void find_nests(struct ng_state *ng)
{
	for (size_t i = 0; i < ng->ngroups; i++) {
		struct ng_group *g = &ng->groups[i];
		uint8_t h[4];
		if (!hw_read(ng->t, g->mem - NG_IB, h, sizeof h) ||
		    h[1] >> 5 != 6)
			continue;
		uint16_t off;
		memcpy(&off, h + 2, 2);
		uint64_t outer = g->mem - (uint64_t)NG_UNIT * off - NG_GROUP_HDR;
		uint32_t o = ng_group_at(ng, outer);
		if (o == NG_NONE || o == i)
			hw_finding(ng->s, g->mem, "mallocng group: its header "
				   "says it is nested in a slot of a group at "
				   "0x%llx, which no meta names",
				   (unsigned long long)outer);
		else
			g->parent = o;
	}
}

enum hw_status ng_read_groups(struct ng_state *ng)
{
	struct hw_session *s = ng->s;
	if (!read_ctx(ng))
		return hw_error(s, HW_NO_ALLOCATOR, "mallocng's context at "
				"0x%llx is not in the core",
				(unsigned long long)ng->ctx);
	size_t cap = 0;
	uint64_t a = ng->area_head;
	bool loop;
	size_t nchain = chain_length(ng->t, a, MAX_AREAS, &loop);
	if (loop)
		hw_finding(s, ng->ctx, "mallocng: the meta areas' list comes "
			   "back on itself after %zu areas (a next pointer "
			   "overwritten): each is read once", nchain);
	while (a && ng->nareas < nchain) {
		uint8_t area[NG_AREA];
		if ((a & (NG_AREA - 1)) || !hw_read(ng->t, a, area, sizeof area)) {
			hw_partial(s, a, "mallocng meta area: %s",
				   a & (NG_AREA - 1) ? "not 4 KiB-aligned"
						     : "not in the core");
			break;
		}
		uint64_t check, next;
		uint32_t nslots;
		memcpy(&check, area, 8);
		memcpy(&next, area + 8, 8);
		memcpy(&nslots, area + NG_AREA_NSLOTS, 4);
		/* musl's own check; the metas are still read (each is
		   checked against its group's pointer back).  */
		if (check != ng->secret)
			hw_finding(s, a, "mallocng meta area: its check is "
				   "0x%llx, not the context's secret 0x%llx "
				   "(overwritten)", (unsigned long long)check,
				   (unsigned long long)ng->secret);
		if (nslots != NG_AREA_SLOTS)
			hw_finding(s, a, "mallocng meta area: its slot count is "
				   "%u, not 101 (overwritten)", nslots);
		ng->nareas++;
		/* In the last area only the metas below avail_meta were
		   ever handed out.  */
		unsigned n = NG_AREA_SLOTS;
		if (a == ng->area_tail && ng->avail_meta > a &&
		    ng->avail_meta < a + NG_AREA)
			n = (unsigned)((ng->avail_meta - a - NG_AREA_METAS) /
				       NG_META);
		if (n > NG_AREA_SLOTS)
			n = NG_AREA_SLOTS;
		for (unsigned k = 0; k < n; k++) {
			uint64_t m = a + NG_AREA_METAS + (uint64_t)k * NG_META;
			if (!grow(ng, &cap))
				return hw_error(s, HW_NO_ALLOCATOR,
						"out of memory");
			if (decode_meta(ng, m, area + NG_AREA_METAS + k * NG_META,
					&ng->groups[ng->ngroups]))
				ng->ngroups++;
			else if (!ng->groups[ng->ngroups].mem)
				ng->nmetas_unused++;
		}
		if (a == ng->area_tail)
			break;
		a = next;
	}
	if (a != ng->area_tail)
		hw_partial(s, ng->ctx, "mallocng: the meta areas do not end at "
			   "the context's last one (0x%llx)",
			   (unsigned long long)ng->area_tail);
	/* (No two groups share an address: a group points back at one
	   meta, and decode_meta keeps only that one.)  */
	/* (No meta area readable: no array at all, and qsort() must not be
	   handed NULL.)  */
	if (ng->ngroups)
		qsort(ng->groups, ng->ngroups, sizeof *ng->groups, by_mem);
	find_nests(ng);
	for (size_t i = 0; i < ng->ngroups; i++) {
		const struct ng_group *g = &ng->groups[i];
		if (g->parent == NG_NONE)
			ng->held += g->maplen ? g->maplen * NG_AREA
					      : NG_GROUP_HDR +
						g->stride * (g->last_idx + 1u);
	}
	return HW_OK;
}

/* Groups nested in one another deeper than this are a loop.  */
#define MAX_CHAIN 32
/* Groups a lookup steps back over when the nests' links do not lead to
   one holding the address (a damaged slot header).  */
#define MAX_STEPS 4096

static bool holds(const struct ng_group *g, uint64_t addr)
{
	return addr >= g->mem &&
	       addr - g->mem < NG_GROUP_HDR + g->stride * (g->last_idx + 1u);
}

uint32_t ng_group_of(const struct ng_state *ng, uint64_t addr)
{
	size_t lo = ng_groups_upto(ng, addr);
	if (!lo)
		return NG_NONE;
	/* The nearest group below holds addr, or is nested (in one or more
	   steps) in the group that does: groups do not overlap but by
	   nesting.  */
	uint32_t g = (uint32_t)(lo - 1);
	for (unsigned n = 0; g != NG_NONE && n < MAX_CHAIN; n++) {
		if (holds(&ng->groups[g], addr))
			return g;
		g = ng->groups[g].parent;
	}
	for (size_t k = lo, steps = 0; k > 0 && steps < MAX_STEPS; k--, steps++)
		if (holds(&ng->groups[k - 1], addr))
			return (uint32_t)(k - 1);
	return NG_NONE;
}
