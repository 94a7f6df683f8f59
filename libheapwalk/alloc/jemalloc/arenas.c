/* arenas.c - find je_arenas, the array of arena_t pointers.
 *
 * By symbol when there is one.  Otherwise it is a 64-byte-aligned run of
 * 4095 slots in jemalloc's data, non-NULL for the arenas created so far,
 * where each arena_t holds, at one offset common to all of them, its
 * base_t pointer, and that base_t starts with the arena's own index (its
 * ehooks' ind).  The arena_t itself lives in one of its base's blocks
 * (arena 0: b0's first block, just after the base_t), and the base's list
 * of blocks ends at the block holding the base_t: the offset is taken
 * only where every base checks out that way (when none does, the array
 * is kept and the bases are not found).  Only addresses come from here:
 * everything counted comes from the extents.
 */
#include <string.h>

#include "jemalloc.h"

#define ARENA_SLOTS 4095
#define MAX_BASE_OFFSET (128u << 10)   /* arena_t is < 80 KiB in 5.x */
#define MAX_ARENA_FROM_BASE (4u << 20)

static bool slot_fits(uint64_t arena, uint64_t base)
{
	return base && !(base & 7) && arena > base &&
	       arena - base < MAX_ARENA_FROM_BASE;
}

/* Does `off` hold, in every non-NULL slot's arena, a pointer to a base_t
   whose first word is the slot's index?  Only a filter: with one arena
   the index is 0, and arena_t holds, before its base pointer, pointers to
   free extents a little below it (seen in 5.3's extent caches) whose
   first word is often 0 too.  */
static bool offset_fits(struct je_state *j, const uint64_t *slots,
			uint64_t off)
{
	bool any = false;
	for (unsigned k = 0; k < ARENA_SLOTS; k++) {
		if (!slots[k])
			continue;
		uint64_t b;
		uint32_t ind;
		if (!hw_read_u64(j->t, slots[k] + off, &b) ||
		    !slot_fits(slots[k], b) || !hw_read_u32(j->t, b, &ind) ||
		    ind != k)
			return false;
		any = true;
	}
	return any;
}

/* Is each arena's base_t at `off` a base whose block list checks out and
   holds the arena?  What tells the real base pointer from a decoy.  */
static bool bases_hold_arenas(struct je_state *j, const uint64_t *slots,
			      uint64_t off)
{
	uint64_t blocks_off = 0;
	for (unsigned k = 0; k < ARENA_SLOTS; k++) {
		uint64_t b;
		if (slots[k] && (!hw_read_u64(j->t, slots[k] + off, &b) ||
				 !je_base_holds(j, b, slots[k], &blocks_off)))
			return false;
	}
	return true;
}

/* The offset of arena_t.base that fits every non-NULL slot, or 0.  Every
   offset is tried, not only the first that passes the filter: in 5.3 the
   real one is near the end of arena_t.  Several may point at the same
   base_t (pa_shard_t holds it too); any of those will do.  *fits: some
   offset passed the filter, which is all the array itself needs (a
   damaged base should lose the bases, not the arenas).  */
static uint64_t base_offset(struct je_state *j, const uint64_t *slots,
			    bool *fits)
{
	*fits = false;
	for (uint64_t off = 64; off < MAX_BASE_OFFSET; off += 8) {
		if (!offset_fits(j, slots, off))
			continue;
		*fits = true;
		if (bases_hold_arenas(j, slots, off))
			return off;
	}
	return 0;
}

static bool try_array(struct je_state *j, uint64_t at)
{
	/* Kept in the state: 32 KiB is a lot for a thread's stack.  */
	uint64_t *slots = j->scratch;
	if (!je_in_data(j, at, ARENA_SLOTS * 8) ||
	    !hw_read(j->t, at, slots, ARENA_SLOTS * 8) || !slots[0])
		return false;
	for (unsigned k = 0; k < ARENA_SLOTS; k++)
		if (slots[k] && ((slots[k] & 63) || slots[k] >> j->p.lg_vaddr))
			return false;
	/* Every arena an extent names must be there.  */
	for (size_t i = 0; i < j->next; i++)
		if (j->ext[i].arena >= ARENA_SLOTS || !slots[j->ext[i].arena])
			return false;
	bool fits;
	uint64_t off = base_offset(j, slots, &fits);
	if (!fits)
		return false;
	j->arena_base_off = off;
	for (unsigned k = 0; k < ARENA_SLOTS; k++) {
		j->arena_addr[k] = slots[k];
		if (slots[k])
			j->narena_slots = k + 1;
	}
	j->arenas_array = at;
	return true;
}

static bool arenas_at(struct je_state *j, uint64_t at, uint64_t w,
		      void *cookie)
{
	(void)cookie;
	uint64_t last;
	/* Cheap filter first: slot 0 set, the last slot NULL.  */
	return !(at & 63) && w && !(w & 63) &&
	       hw_read_u64(j->t, at + (ARENA_SLOTS - 1) * 8, &last) && !last &&
	       try_array(j, at);
}

void je_find_arenas(struct je_state *j)
{
	uint64_t addr = 0, size = 0;
	if (je_lookup(j, "je_arenas", &addr, &size) && try_array(j, addr)) {
		j->how_arenas = "symbol je_arenas";
		return;
	}
	if (je_data_find(j, arenas_at, NULL)) {
		j->how_arenas = "scan of jemalloc's data for the arena pointer "
				"array";
		return;
	}
	j->how_arenas = "not found (arena indexes taken from the extents)";
}
