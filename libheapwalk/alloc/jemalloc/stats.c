/* stats.c - jemalloc's own figures (mallctl stats.*), from the heap.
 *
 * ctl.c sums, over every arena (arena.c's arena_stats_merge):
 *   allocated = small regions in use + large extents in use (usable sizes)
 *   active    = pages of active extents
 *   metadata  = base allocators' bytes allocated + arena stats.internal
 *               (jemalloc's own allocations from its arenas: tcache
 *               stacks, prof tables)
 *   resident  = bases' resident counters + pages of active and dirty
 *               extents (5.0-5.2: muzzy too)
 *   mapped    = bases' mapped counters + the arena's mapped counter (the
 *               pages of extents that are not retained)
 *   retained  = pages of retained extents: address space, nothing behind
 * The extent figures come from the radix tree.  The base figures come
 * from each arena's base_t, found by what it holds: a list of blocks
 * ending at the block the base_t sits in, and, further on, the counters
 * {allocated, resident, mapped} whose mapped is the sum of those blocks.
 * stats.internal is read from the arena at its 5.2 / 5.3 offset, but only
 * when the words around it are what they must be (the derived stats,
 * which the live arena never fills, are zero; the mapped counter equals
 * the arena's own non-retained extents).
 */
#include <stdlib.h>
#include <string.h>

#include "jemalloc.h"

#define MAX_BLOCKS 1024           /* base blocks grow geometrically */
#define MAX_BLOCKS_OFF 1024       /* offsetof(base_t, blocks) is 160 */
#define MAX_COUNTERS_OFF 32768    /* blocks .. allocated: SC_NSIZES heaps */

/* Sum of the sizes of the base blocks chained from `first`, which must
   end at the block holding the base_t itself (base_new() puts it in its
   first block, and each new block is pushed on the front of the list),
   with one of the blocks holding `inside` too when it is not 0 (the arena,
   which arena_new() allocates from its own base); 0 if it is no such
   chain.  */
static uint64_t chain_mapped(struct je_state *j, uint64_t base, uint64_t first,
			     uint64_t inside)
{
	uint64_t page = (uint64_t)1 << j->p.lg_page, sum = 0;
	uint64_t b = first;
	bool held = !inside;
	for (unsigned n = 0; n < MAX_BLOCKS; n++) {
		uint64_t size, next;
		if (!b || (b & (page - 1)) || !hw_read_u64(j->t, b, &size) ||
		    !hw_read_u64(j->t, b + 8, &next) || !size ||
		    (size & (page - 1)) || size >> 40)
			return 0;
		sum += size;
		held |= inside >= b && inside - b < size;
		if (!next)
			return held && base >= b && base - b < size ? sum : 0;
		b = next;
	}
	return 0;
}

/* Offset of base_t.blocks: the first word that leads to a valid chain. */
static uint64_t blocks_offset(struct je_state *j, uint64_t base,
			      uint64_t inside, uint64_t *mapped)
{
	for (uint64_t off = 8; off < MAX_BLOCKS_OFF; off += 8) {
		uint64_t first;
		if (hw_read_u64(j->t, base + off, &first) &&
		    (*mapped = chain_mapped(j, base, first, inside)) != 0)
			return off;
	}
	return 0;
}

bool je_base_holds(struct je_state *j, uint64_t base, uint64_t arena,
		   uint64_t *blocks_off)
{
	uint64_t first, mapped;
	if (!*blocks_off) {
		*blocks_off = blocks_offset(j, base, arena, &mapped);
		return *blocks_off != 0;
	}
	return hw_read_u64(j->t, base + *blocks_off, &first) &&
	       chain_mapped(j, base, first, arena) != 0;
}

/* Offset of base_t.allocated: {allocated, resident, mapped} with mapped
   the blocks' sum and allocated <= resident <= mapped (base.c asserts
   it), resident in whole pages.  */
static uint64_t counters_offset(struct je_state *j, uint64_t base,
				uint64_t from, uint64_t mapped)
{
	uint64_t page = (uint64_t)1 << j->p.lg_page;
	const uint8_t *d = hw_peek(j->t, base + from, MAX_COUNTERS_OFF + 24);
	if (!d)
		return 0;
	for (uint64_t off = 0; off < MAX_COUNTERS_OFF; off += 8) {
		uint64_t w[3];
		memcpy(w, d + off, sizeof w);
		if (w[2] == mapped && w[1] <= w[2] && w[0] && w[0] <= w[1] &&
		    !(w[1] & (page - 1)))
			return from + off;
	}
	return 0;
}

/* Read the base of the arena at `arena`; the offsets are found on the
   first and must fit all.  */
static bool read_base(struct je_state *j, struct je_base *b, uint64_t arena,
		      uint64_t *blocks_off, uint64_t *counters_off)
{
	uint64_t mapped = 0;
	if (!*blocks_off)
		*blocks_off = blocks_offset(j, b->addr, arena, &mapped);
	else {
		uint64_t first;
		if (hw_read_u64(j->t, b->addr + *blocks_off, &first))
			mapped = chain_mapped(j, b->addr, first, arena);
	}
	if (!*blocks_off || !mapped)
		return false;
	b->blocks_mapped = mapped;
	if (!*counters_off)
		*counters_off = counters_offset(j, b->addr, *blocks_off + 8,
						mapped);
	uint64_t w[3];
	if (!*counters_off || !hw_read(j->t, b->addr + *counters_off, w, sizeof w) ||
	    w[2] != mapped || w[1] > w[2] || w[0] > w[1]) {
		*counters_off = 0;
		return true;
	}
	b->allocated = w[0];
	b->resident = w[1];
	b->mapped = w[2];
	return true;
}

void je_find_bases(struct je_state *j)
{
	j->how_bases = !j->arenas_array ?
		"not found (the arena array was not found)" :
		"not found (a base_t's block list did not check out)";
	if (!j->arenas_array || !j->arena_base_off)
		return;
	j->bases = calloc(j->narena_slots ? j->narena_slots : 1, sizeof *j->bases);
	if (!j->bases) {
		hw_oom(j->s);
		return;
	}
	uint64_t blocks_off = 0, counters_off = 0;
	bool all_blocks = true, all_counters = true;
	for (unsigned a = 0; a < j->narena_slots; a++) {
		uint64_t base;
		if (!j->arena_addr[a] ||
		    !hw_read_u64(j->t, j->arena_addr[a] + j->arena_base_off, &base))
			continue;
		struct je_base *b = &j->bases[j->nbases];
		b->addr = base;
		if (!read_base(j, b, j->arena_addr[a], &blocks_off,
			       &counters_off)) {
			all_blocks = all_counters = false;
			continue;
		}
		all_counters &= counters_off != 0;
		j->nbases++;
	}
	j->base_counters = j->nbases && all_blocks && all_counters;
	j->base_blocks_off = blocks_off;
	j->how_bases = j->base_counters ?
		"each arena's base_t: block list and counters" :
		j->nbases && all_blocks ? "each arena's base_t: block list "
					  "(counters not found)" :
		"not found (a base_t's block list did not check out)";
}

void je_internal(void *state, hw_range_fn *fn, void *cookie)
{
	struct je_state *j = state;
	for (size_t i = 0; i < j->ntcaches; i++)
		if (j->tcaches[i].stack_word)
			fn(cookie, j->tcaches[i].stack_word,
			   j->tcaches[i].stack_word + 8);
	for (size_t i = 0; j->base_blocks_off && i < j->nbases; i++) {
		uint64_t b;
		if (!hw_read_u64(j->t, j->bases[i].addr + j->base_blocks_off, &b))
			continue;
		/* The chain checked out when the base was read.  */
		for (unsigned n = 0; b && n < MAX_BLOCKS; n++) {
			uint64_t size, next;
			if (!hw_read_u64(j->t, b, &size) ||
			    !hw_read_u64(j->t, b + 8, &next) || size >> 40)
				break;
			fn(cookie, b, b + size);
			b = next;
		}
	}
}

/* ---- stats.internal ---------------------------------------------------- */

/* Where arena_t's stats sit (offsets from the arena, 64-bit builds with
   64-bit atomics, as on x86_64 and aarch64): derived members that the
   live arena leaves zero, the mapped counter and internal.  */
struct stats_layout {
	uint64_t zero[12];
	unsigned nzero;
	uint64_t mapped, internal;
};

static const struct stats_layout layout_52 = {
	/* mapped, retained, extent_avail, decay x 6, base, internal,
	   resident, metadata_thp, allocated_large */
	{ 32, 96, 112, 128 }, 4, 24, 104,
};

static const struct stats_layout layout_53 = {
	/* base, resident, metadata_thp, mapped, internal, allocated_large,
	   5 large counters, edata_avail, decays, retained, pac_mapped */
	{ 24, 32, 40, 48, 64, 72, 80, 88, 96, 104, 112, 168 }, 12, 176, 56,
};

/* Bytes of the arena's extents that are not retained: its mapped.  */
static uint64_t arena_mapped(const struct je_state *j, unsigned a)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < j->next; i++)
		if (j->ext[i].arena == a && j->ext[i].state != JE_RETAINED)
			sum += j->ext[i].size;
	return sum;
}

static bool arena_internal(struct je_state *j, unsigned a,
			   const struct stats_layout *l, uint64_t *internal)
{
	uint64_t at = j->arena_addr[a], w;
	for (unsigned k = 0; k < l->nzero; k++)
		if (!hw_read_u64(j->t, at + l->zero[k], &w) || w)
			return false;
	return hw_read_u64(j->t, at + l->mapped, &w) &&
	       w == arena_mapped(j, a) &&
	       hw_read_u64(j->t, at + l->internal, internal) &&
	       !(*internal & 7);
}

void je_find_internal(struct je_state *j)
{
	const struct stats_layout *l = j->era == JE_ERA_53 ? &layout_53 :
							    &layout_52;
	uint64_t sum = 0;
	bool any = false;
	j->how_internal = "computed: the tcaches' stack blocks only";
	for (unsigned a = 0; a < j->narena_slots; a++) {
		uint64_t v;
		if (!j->arena_addr[a])
			continue;
		if (!arena_internal(j, a, l, &v))
			return;
		sum += v;
		any = true;
	}
	if (!any)
		return;
	j->internal = sum;
	j->have_internal = true;
	j->how_internal = "each arena's stats.internal";
}

/* ---- the figures ------------------------------------------------------- */

static void exact(struct je_figure *f, uint64_t v, const char *from)
{
	*f = (struct je_figure){ .value = v, .known = true, .exact = true,
				 .from = from };
}

void je_figures(const struct je_state *j, struct je_figures *f)
{
	memset(f, 0, sizeof *f);
	uint64_t small = 0, large = 0, active = 0, retained = 0;
	uint64_t program_large = 0;   /* large, sampled ones at their size */
	for (size_t i = 0; i < j->next; i++) {
		const struct je_extent *x = &j->ext[i];
		switch (x->state) {
		case JE_ACTIVE:
			active += x->size;
			if (x->slab) {
				small += (uint64_t)x->used * x->reg_size;
			} else if (x->szind < j->nbins &&
				   j->nbins < j->nsizes) {
				/* A sampled small object, promoted to a
				   large extent: jemalloc's stats count it
				   at the smallest large class, the program
				   has its small size.  */
				large += j->sizes[j->nbins];
				program_large += j->sizes[x->szind];
				f->sampled++;
				f->sampled_bytes += j->sizes[x->szind];
			} else {
				large += j->sizes[x->szind];
				program_large += j->sizes[x->szind];
			}
			break;
		case JE_DIRTY: f->dirty += x->size; break;
		case JE_MUZZY: f->muzzy += x->size; break;
		case JE_RETAINED: retained += x->size; break;
		default: break;
		}
	}
	exact(&f->allocated, small + large, f->sampled
	      ? "regions in use in slabs + large extents in use (their size "
		"classes: a sampled object counts as the large extent it was "
		"promoted to)"
	      : "regions in use in slabs + large extents in use (usable "
		"sizes)");
	f->program = small + program_large;
	exact(&f->active, active, "pages of active extents");
	exact(&f->retained, retained, "pages of retained extents (address "
	      "space only)");
	uint64_t stacks = 0;
	for (size_t i = 0; i < j->ntcaches; i++)
		stacks += j->tcaches[i].stacks;
	/* 5.3 counts dirty pages resident; 5.0-5.2 muzzy ones as well.  */
	uint64_t pages_resident = active + f->dirty +
				  (j->era == JE_ERA_52 ? f->muzzy : 0);
	uint64_t pages_mapped = active + f->dirty + f->muzzy;
	uint64_t ba = 0, br = 0, bm = 0;
	for (size_t i = 0; i < j->nbases; i++) {
		ba += j->bases[i].allocated;
		br += j->bases[i].resident;
		bm += j->bases[i].blocks_mapped;
	}
	if (!j->nbases) {
		/* Unknown: say why, in the words of the bases root.  */
		f->metadata.from = f->resident.from = f->mapped.from =
			!j->arenas_array ?
			"no base_t: the arena array was not found" :
			"no base_t: a base_t's block list did not check out";
		return;
	}
	exact(&f->mapped, bm + pages_mapped, "base blocks + pages of "
	      "extents that are not retained");
	if (j->base_counters) {
		exact(&f->resident, br + pages_resident, j->era == JE_ERA_52 ?
		      "bases' resident counters + pages of active, dirty and "
		      "muzzy extents" : "bases' resident counters + pages of "
		      "active and dirty extents");
	} else {
		/* The bases' resident part is somewhere in their blocks.  */
		f->resident = (struct je_figure){ .value = pages_resident,
			.above = bm, .known = true,
			.from = "pages of active and dirty extents; the base "
				"blocks' touched pages unknown" };
	}
	if (j->base_counters && j->have_internal) {
		exact(&f->metadata, ba + j->internal, "bases' allocated "
		      "counters + arenas' stats.internal");
		return;
	}
	/* Other internal allocations (prof tables, ctl buffers) are not
	   told apart from the program's: the figure is a lower bound.  */
	f->metadata = (struct je_figure){ .value = ba + stacks,
		.above = small + large - stacks, .known = j->base_counters,
		.from = j->base_counters ? "bases' allocated counters + the "
					   "tcaches' stack blocks" :
			"no base_t counters: a base_t's block list checked "
			"out, its counters did not" };
}
