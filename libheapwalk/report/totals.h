/* totals.h - the counts of one walk of every block (report/totals.c),
 * shared by summary, sizes and diff's size profile.
 */
#ifndef HW_REPORT_TOTALS_H
#define HW_REPORT_TOTALS_H

#include "../analysis/maps.h"
#include "../analysis/reach.h"
#include "../session/session.h"

/* The blocks of one usable size (or, in a row, one class): in use, free,
   and of the free those in a thread cache.  */
struct hw_size_class {
	uint64_t size, used, used_bytes, free, free_bytes, cached, cached_bytes;
};

/* Every exact size met; after hw_totals_gather() its slots are packed
   and ascending, n of them (small is then NULL).  */
struct hw_size_table {
	struct hw_size_class *small;  /* the small sizes, indexed by size */
	struct hw_size_class *slots;  /* open addressing on size; 0: empty */
	size_t cap, n;
	bool oom;
};

struct hw_totals {
	struct hw_size_table sizes;
	uint64_t used, used_bytes, free, free_bytes, overhead, largest_free;
	uint64_t top_bytes;
	/* summary --leaks: blocks and bytes by kind (loss.h: an enum
	   bm_mark or HW_KIND_UNKNOWN).  */
	const struct hw_reach *reach;
	uint64_t marked[5], marked_bytes[5];
	/* summary: the allocator's ranges, for its writable-memory line.  */
	struct hw_maps_acc maps;
	/* sizes and diff: each arena's blocks at index arena + 1 (jemalloc's
	   arena -1, blocks cached in no arena, first); grown as arenas are
	   met.  Free with free().  */
	struct hw_arena_count *arenas;
	size_t narenas;
};

struct hw_arena_count {
	uint64_t used, used_bytes, free, free_bytes;
};

/* One row of `sizes`: the usable sizes [min, c.size] and their counts;
   an exact row has min == c.size.  */
struct hw_size_row {
	uint64_t min;
	struct hw_size_class c;
};

/* Walk everything once (in threads when the walker can), with blocks
   marked by reach when it is not NULL; the classes end up sorted and
   packed.  On success free t->sizes.slots, t->arenas (free()) and
   t->maps (hw_maps_acc_free) when done; on failure nothing is left.  */
enum hw_status hw_totals_gather(struct hw_session *s, struct hw_totals *t,
				const struct hw_reach *reach);

struct hw_emitter;

/* t's leaks by kind (it was gathered with reach): "definite",
   "indirect", "possible" and "unknown", each {"count","bytes"}, as
   members of the current JSON object (text shows none of them):
   summary --leaks and triage.  */
void hw_emit_leak_kinds(const struct hw_totals *t, struct hw_emitter *e);

/* The rows of `sizes`: t's exact sizes (ascending) folded into the
   allocator's size classes, or left as they are (exact).  NULL when out
   of memory; free() it.  */
struct hw_size_row *hw_size_rows(struct hw_session *s,
				 const struct hw_size_table *t, bool exact,
				 size_t *nrows);

/* The address of the arena counted in slot i of t->arenas (index + 1),
   where the walker knows it; else 0.  */
uint64_t hw_arena_slot_addr(struct hw_session *s, size_t i);

#endif /* HW_REPORT_TOTALS_H */
