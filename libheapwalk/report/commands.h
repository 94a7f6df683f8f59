/* commands.h - reports that live in their own files, for commands.c.  */
#ifndef HW_COMMANDS_H
#define HW_COMMANDS_H

#include "../internal.h"
#include "../alloc/alloc.h"

struct hw_emitter;

/* frag.c: free memory and fragmentation per arena.  */
enum hw_status hw_report_frag(struct hw_session *s, struct hw_emitter *e);

/* frag.c, shared with map.c: what frag counts of one arena (frag.c's
   comment defines each figure).  rows is an array of
   HW_FRAG_MAX_ARENAS, indexed by (uint32_t)arena % HW_FRAG_MAX_ARENAS
   (jemalloc's arena -1 is the last); hw_frag_add is a hw_chunk_fn that
   counts c in its arena's row and always goes on.  */
#define HW_FRAG_MAX_ARENAS 4096
struct hw_frag_row {
	uint64_t used, free, nfree, largest, top, dirty, muzzy, retained;
	uint64_t slab_bytes, slab_used;
	bool any;
};
bool hw_frag_add(void *rows, const struct hw_chunk *c);
/* Adds r into *total (largest: the larger of the two).  */
void hw_frag_sum(struct hw_frag_row *total, const struct hw_frag_row *r);
double hw_frag_free_ratio(const struct hw_frag_row *r);  /* free% */
double hw_frag_scatter(const struct hw_frag_row *r);     /* frag */
double hw_frag_slab_util(const struct hw_frag_row *r);   /* slabs */

/* leaks.c: blocks in use nothing reachable points to (leaks
   [--reachable]).  */
enum hw_status hw_report_leaks(struct hw_session *s, struct hw_emitter *e,
			       int argc, char *const argv[]);

/* leaks.c, shared with diff-leaks.c so both show loss records alike:
   their order (the most bytes first; then by kind, an enum bm_mark,
   size, and class, NULL last) and a block's first n bytes (at most 16)
   as "a5 a5 00 ..  |..x.|" in out (96 bytes hold 16).  */
struct hw_loss_key {
	uint64_t size, count;
	unsigned kind;
	const char *type;
};
int hw_loss_order(const struct hw_loss_key *x, const struct hw_loss_key *y);
void hw_first_bytes_text(const uint8_t *b, size_t n, char *out, size_t len);

/* types.c: the blocks in use by C++ class (sizes --by=type).  */
enum hw_status hw_report_sizes_by_type(struct hw_session *s,
				       struct hw_emitter *e);
/* types.c, for diff: the blocks in use per class (names interned on s),
   unsorted, and those of no known type.  Free *rows.  */
struct hw_type_total {
	const char *name;
	uint64_t count, bytes;
};
enum hw_status hw_type_totals(struct hw_session *s, struct hw_type_total **rows,
			      size_t *n, struct hw_type_total *none);

/* maps.c: the writable memory by what holds it (maps [--mappings]);
   summary's line of it from the allocator ranges its walk gathered
   (analysis/maps.h; acc is emptied).  */
struct hw_maps_acc;
enum hw_status hw_report_maps(struct hw_session *s, struct hw_emitter *e,
			      int argc, char *const argv[]);
void hw_emit_maps_line(struct hw_session *s, struct hw_emitter *e,
		       struct hw_maps_acc *acc);

/* refs.c: who points into the block in use holding addr (refs ADDR), and
   the shortest chain of pointers from a root to it (why ADDR).  */
enum hw_status hw_report_refs(struct hw_session *s, struct hw_emitter *e,
			      uint64_t addr);
enum hw_status hw_report_why(struct hw_session *s, struct hw_emitter *e,
			     uint64_t addr);

/* commands.c: when a walk could not cover the whole heap, say that the
   totals are partial, and why.  hw_emit_partial() is both halves, which
   summary places apart: the members JSON always has ("partial" and, when
   partial, its reason, address and count of places) and the text line
   (only when partial).  */
void hw_emit_partial(const struct hw_session *s, struct hw_emitter *e);
void hw_emit_partial_members(const struct hw_session *s, struct hw_emitter *e);
void hw_emit_partial_line(const struct hw_session *s, struct hw_emitter *e);

/* commands.c: what `sizes` counts, kept for `diff`: the rows of `sizes`
   (the allocator's classes, ascending) and each arena's totals (index
   order; `arena` -1: jemalloc's blocks cached in no arena).  `addr` names
   the arena across snapshots of one process where the walker knows it
   (ptmalloc: its malloc_state; indexes shift as arenas are made), else 0.
   Free with hw_size_profile_free().  */
struct hw_class_total {
	uint64_t min, max, used, used_bytes, free, free_bytes;
};
struct hw_arena_total {
	int32_t arena;
	uint64_t addr, used, used_bytes, free, free_bytes;
};
struct hw_size_profile {
	struct hw_class_total *classes;
	size_t nclasses;
	struct hw_arena_total *arenas;
	size_t narenas;
	uint64_t used, used_bytes, free, free_bytes;
};
enum hw_status hw_size_profile(struct hw_session *s, struct hw_size_profile *p);
void hw_size_profile_free(struct hw_size_profile *p);

/* prof.c: the heap profile the allocator kept (jemalloc's prof:true),
   ranked, or written as heap_v2 or flame graph input (prof [--format=F]
   [-o FILE] [--objects] [--lines] [--top=N]).  */
enum hw_status hw_report_prof(struct hw_session *s, struct hw_emitter *e,
			      int argc, char *const argv[]);

/* map.c: a picture of the heap as SVG (map [-o FILE]).  */
enum hw_status hw_report_map(struct hw_session *s, struct hw_emitter *e,
			     int argc, char *const argv[]);

/* diff.c: what grew from a base snapshot (diff BASE).  */
enum hw_status hw_report_diff(struct hw_session *s, struct hw_emitter *e,
			      int argc, char *const argv[]);

/* pipe.c: every chunk to fn in walk order, like s->alloc->chunks(); with
   threads allowed, the walk runs in a thread of its own while fn (the
   report) runs in the caller's.  */
void hw_walk_chunks_piped(struct hw_session *s, hw_chunk_fn *fn, void *cookie);

#endif /* HW_COMMANDS_H */
