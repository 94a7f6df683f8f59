/* maps.h - what the process's writable memory is, and how much of it the
 * allocator explains.
 *
 * A process that grows is not always growing its heap: a language
 * runtime's own arenas, thread stacks, a module's data, the program's
 * own mmaps all take memory that no malloc walk sees.  `maps` breaks the
 * writable mappings down by what holds each byte:
 *
 *   heap      an arena's heaps (ptmalloc), extents in use (jemalloc)
 *   mmapped   ptmalloc's mmapped chunks
 *   unused    jemalloc's dirty, muzzy and retained extents
 *   metadata  the allocator's own memory (arenas, heap headers, base
 *             blocks, tcache stacks: alloc.h's `internal`)
 *   stack     a thread's stack mapping (its TLS and TCB at the top)
 *   module    a loaded file's writable data, its .bss after it
 *   anon      every other anonymous byte (a runtime's own arenas, the
 *             program's mmaps)
 *   file      a writable file mapping that is no module (MAP_SHARED data)
 *
 * The allocator's ranges come from the same chunk walk the other reports
 * make (hw_maps_acc_chunk in its callback), so `summary` adds its line
 * for one compare per block.
 */
#ifndef HW_MAPS_H
#define HW_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "../alloc/alloc.h"
#include "../session/session.h"

struct hw_chunk;

enum hw_mem_kind {
	HW_MEM_HEAP,
	HW_MEM_MMAPPED,
	HW_MEM_UNUSED,
	HW_MEM_METADATA,
	HW_MEM_STACK,
	HW_MEM_MODULE,
	HW_MEM_ANON,
	HW_MEM_FILE,
	HW_MEM_KINDS
};

/* The allocator's ranges met during a walk, merged as they come (a walk
   delivers each heap in address order, so a heap becomes one range).  */
struct hw_maps_range {
	uint64_t start, end;
	int32_t id;             /* heap: the arena; otherwise -1 */
	uint8_t kind;           /* enum hw_mem_kind */
};

struct hw_maps_acc {
	struct hw_maps_range *v;
	size_t n, cap;
	bool oom;
};

/* Add a block's memory, [chunk, chunk + chunk_size), from a walk
   callback.  Each walking thread has its own accumulator.  */
void hw_maps_acc_block(struct hw_maps_acc *acc, const struct hw_chunk *c);

/* What a block's memory is, by its place (alloc/where.c): mapped on its
   own, unused pages the allocator keeps, or its arena's heap.  */
static inline enum hw_mem_kind hw_maps_block_kind(const struct hw_chunk *c)
{
	if (hw_place(c->where)->flags & HW_PLACE_MMAPPED)
		return HW_MEM_MMAPPED;
	return hw_place_unused_pages(c->where) ? HW_MEM_UNUSED : HW_MEM_HEAP;
}

/* hw_maps_acc_block, with its common case inline: a heap block right
   after the last one, of the same arena, which only moves the last
   range's end (once per block of a walk of millions).  */
static inline void hw_maps_acc_chunk(struct hw_maps_acc *acc,
				     const struct hw_chunk *c)
{
	struct hw_maps_range *last = acc->n ? &acc->v[acc->n - 1] : NULL;
	if (last && last->end == c->chunk && last->kind == HW_MEM_HEAP &&
	    last->id == c->arena && hw_maps_block_kind(c) == HW_MEM_HEAP &&
	    c->chunk + c->chunk_size > c->chunk) {
		last->end = c->chunk + c->chunk_size;
		return;
	}
	hw_maps_acc_block(acc, c);
}
/* Move every range of `from` into acc.  */
void hw_maps_acc_take(struct hw_maps_acc *acc, struct hw_maps_acc *from);
void hw_maps_acc_free(struct hw_maps_acc *acc);

/* One line of the breakdown: the bytes of one kind and one holder.  */
struct hw_maps_row {
	uint8_t kind;           /* enum hw_mem_kind */
	int32_t id;             /* heap: arena; stack: thread index; module,
				   file: index into the target's files; -1 */
	uint64_t bytes;
	uint64_t mappings;      /* writable mappings that hold some */
};

/* One writable mapping, with the kind holding most of it.  */
struct hw_maps_mapping {
	uint64_t start, end;
	uint32_t prot;
	uint8_t kind;           /* the largest share */
	int32_t id;
	uint64_t allocator;     /* bytes the allocator explains */
};

struct hw_maps {
	struct hw_maps_row *rows;       /* the most bytes first */
	size_t nrows;
	struct hw_maps_mapping *maps;   /* by address */
	size_t nmaps;
	uint64_t writable;              /* bytes of writable mappings */
	uint64_t allocator;             /* of which heap + mmapped + unused
					   + metadata */
};

/* Break the session's writable mappings down with the allocator's
   ranges in acc (emptied; the allocator's `internal` ranges are added
   here).  False when out of memory.  */
bool hw_maps_build(struct hw_session *s, struct hw_maps_acc *acc,
		   struct hw_maps *out);
void hw_maps_free(struct hw_maps *m);

/* "heap", "stack", ... (JSON's "kind").  */
const char *hw_mem_kind_name(enum hw_mem_kind k);

#endif /* HW_MAPS_H */
