/* v3map.h - the addresses of mimalloc 3.x's pages, from its page maps:
 * 3.0.1's and 3.4.3's one map, found by its root in mimalloc's data,
 * or 3.6's maps at the start of every chunk of its memory.
 */
#ifndef HW_MI_V3MAP_H
#define HW_MI_V3MAP_H

#include "mimalloc.h"
#include "v3layout.h"

/* A growing array of words.  */
struct mi_words {
	uint64_t *v;
	size_t n, cap;
};

/* The root of a MI_V3_MAP_ROOT map of map_size bytes, or 0 when there
   is none; *file the file holding it.  */
uint64_t mi_v3_find_root(struct mi_state *mi, uint32_t map_size,
			 const char **file);

/* Every page address the map at root names (MI_V3_MAP_ROOT), sorted,
   each once.  */
enum hw_status mi_v3_root_pages(struct mi_state *mi, uint64_t root,
				const struct mi_v3_layout *V,
				struct mi_words *pages);

/* Every address the slots of every MI_V3_MAP_CHUNKS chunk map in the
   target's anonymous memory name, sorted, each once: pages, and the
   stale slots of pages freed (v3.c tells them apart).  */
enum hw_status mi_v3_chunk_pages(struct mi_state *mi,
				 const struct mi_v3_layout *V,
				 struct mi_words *pages);

/* The slot of a MI_V3_MAP_CHUNKS map that names the page of addr.  */
static inline uint64_t mi_v3_slot(const struct mi_v3_layout *V, uint64_t addr)
{
	uint64_t chunk = addr & ~((1ull << V->chunk_shift) - 1);
	uint64_t slice = (addr - chunk) >> V->base.slice_shift;
	return chunk + slice * V->slot_size;
}

#endif /* HW_MI_V3MAP_H */
