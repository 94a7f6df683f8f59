/* mallocng.h - musl libc's malloc (mallocng, musl 1.2.1 to 1.2.5) behind
 * the allocator interface: its context, meta areas, groups and slots
 * (doc/design/musl-mallocng.md has every layout and where it was read).
 *
 * Opening finds the context (detect.c), reads every meta area once
 * and keeps each group its metas describe, sorted by address; a walk
 * then reads each slot's in-band header for its block.  A group carved
 * out of a slot of a larger group (nested) is walked where that slot is,
 * so that blocks come in address order.
 */
#ifndef HW_MALLOCNG_H
#define HW_MALLOCNG_H

#include <stdbool.h>
#include <stdint.h>

#include "../../sym/sym.h"
#include "../../target/target.h"
#include "../alloc.h"
#include "../module.h"

#define NG_UNIT 16            /* slot sizes and offsets are in these */
#define NG_IB 4               /* in-band header bytes before a block */
#define NG_AREA 4096          /* a meta area; maplen's unit too */
#define NG_AREA_METAS 24      /* its first meta, after check, next, nslots */
#define NG_AREA_SLOTS 101     /* metas in an area */
#define NG_META 40            /* sizeof (struct meta) */
#define NG_GROUP_HDR 16       /* struct group before its slots */
#define NG_NCLASSES 48
#define NG_CLASS_MMAP 63      /* a request of its own mapping */
#define NG_NONE UINT32_MAX

/* The context's members (struct malloc_context, 1.2.1 .. 1.2.5).  */
#define NG_CTX_SECRET 0
#define NG_CTX_INIT_DONE 8
#define NG_CTX_MMAP_COUNTER 12
#define NG_CTX_FREE_META_HEAD 16
#define NG_CTX_AVAIL_META 24
#define NG_CTX_AVAIL_META_COUNT 32
#define NG_CTX_AREA_COUNT 40
#define NG_CTX_ALLOC_SHIFT 48
#define NG_CTX_AREA_HEAD 56
#define NG_CTX_AREA_TAIL 64
#define NG_CTX_AVAIL_AREAS 72
#define NG_CTX_ACTIVE 80
#define NG_CTX_USAGE 464
#define NG_CTX_SEQ 912
#define NG_CTX_BRK 920
#define NG_CTX_SIZE 928
/* A meta area's slot count (int, after check and next).  */
#define NG_AREA_NSLOTS 16

/* Slot sizes of the 48 classes, in units (musl's size_classes: in
   .rodata, which cores leave out).  */
extern const uint16_t ng_size_classes[NG_NCLASSES];

/* A group, as its meta describes it.  */
struct ng_group {
	uint64_t meta;        /* its struct meta */
	uint64_t mem;         /* its struct group: header, then the slots */
	uint64_t stride;      /* bytes from one slot to the next */
	uint64_t maplen;      /* 4 KiB units of its own mapping, or 0 */
	uint32_t avail, freed;/* the meta's masks: slots free */
	uint32_t parent;      /* nested: the group whose slot holds it */
	uint8_t last_idx;     /* slots - 1 */
	uint8_t sizeclass;    /* 0..47, or NG_CLASS_MMAP */
	uint8_t active_idx;   /* the header's: the highest slot handed out */
	bool freeable;        /* 0: memory the dynamic linker donated */
	bool walked;          /* (a walk's guard against a loop of nests) */
};

struct ng_state {
	struct hw_session *s;
	struct hw_target *t;
	const char *home;     /* the file whose data holds the context */
	const char *how;      /* how the context was found */
	uint64_t ctx, secret;
	uint32_t mmap_counter;
	uint64_t area_head, area_tail, avail_meta, avail_meta_count;
	uint64_t free_meta_head;
	uint64_t active[NG_NCLASSES];
	uint64_t usage[NG_NCLASSES];  /* the context's usage_by_class */
	size_t nareas, nmetas_free, nmetas_unused;
	struct ng_group *groups;      /* by address of mem */
	size_t ngroups;
	uint64_t held;                /* bytes of group memory */
	bool reported;                /* the first walk reported findings */
};

/* Find the context (detect.c): true with ng->ctx, ->home, ->how
   set, or false (ng->s's error says nothing: recognise explains).  */
bool ng_find_context(struct ng_state *ng);

/* Read the meta areas and groups (groups.c).  */
enum hw_status ng_read_groups(struct ng_state *ng);
/* How many groups begin at or below addr (the groups are sorted).  */
size_t ng_groups_upto(const struct ng_state *ng, uint64_t addr);
/* The group whose mem is `mem`, or NG_NONE.  */
uint32_t ng_group_at(const struct ng_state *ng, uint64_t mem);
/* The meta at m: its prev, next and mem, or false when not in the core.  */
bool ng_meta_links(struct ng_state *ng, uint64_t m, uint64_t *prev,
		   uint64_t *next, uint64_t *mem);
/* The group meta m (whose mem is `mem`) describes, or NG_NONE.  */
uint32_t ng_group_of_meta(const struct ng_state *ng, uint64_t mem, uint64_t m);

/* Every block, in address order (walk.c).  */
bool ng_walk(struct ng_state *ng, hw_chunk_fn *fn, void *cookie);

/* The innermost group whose slots hold addr, or NG_NONE (groups.c).  */
uint32_t ng_group_of(const struct ng_state *ng, uint64_t addr);
/* chunk ADDR's fields of block c (anatomy.c).  */
void ng_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e);

/* mallocng's own consistency checks (check.c): findings.  */
void ng_check(void *state);

/* summary's mallocng lines, and `arenas` (report.c).  */
void ng_report_summary(void *state, struct hw_emitter *e);
enum hw_status ng_report_arenas(void *state, struct hw_emitter *e);
/* `bins`, and `bins --list` (bins.c).  */
enum hw_status ng_report_bins(void *state, struct hw_emitter *e,
			      const char *kind);
enum hw_status ng_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind);
/* mp and tcache (params.c).  */
enum hw_status ng_report_params(void *state, struct hw_emitter *e);
enum hw_status ng_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid);

#endif /* HW_MALLOCNG_H */
