/* bins.c - mallocng's `bins`: per size class, its groups and their
 * slots by state (in use, avail, freed), usage_by_class as the context
 * counts it, and the head of the class's active list; with --list each
 * class's active list, from the group malloc takes from next round to
 * it again.
 *
 * The active lists are followed afresh from the target (circular
 * through the metas' prev and next), each no further than the metas
 * read: a longer one is a loop.
 */
#include <string.h>

#include "../../emit/emit.h"
#include "mallocng.h"

/* bins: per size class, the slots of its groups by state.  */
static const struct em_field CLASS_COLS[] = {
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "groups", .label = "groups", .width = 7 },
	{ .key = "used", .label = "used", .width = 8 },
	{ .key = "avail", .label = "avail", .width = 8 },
	{ .key = "freed", .label = "freed", .width = 8 },
	{ .key = "usage", .label = "usage_by_class", .width = 14 },
	{ .key = "active", .label = "active", .width = -18, .form = EM_T_HEX0,
	  .digits = 16, .none = "-" },
};
static const struct em_table CLASS_TABLE = {
	.key = "classes", .cols = CLASS_COLS, .ncols = 8 };

enum hw_status ng_report_bins(void *state, struct hw_emitter *e,
			      const char *kind)
{
	struct ng_state *ng = state;
	if (kind && strcmp(kind, "classes") != 0)
		return hw_error(ng->s, HW_USAGE, "bins: unknown kind '%s' "
				"(mallocng: classes)", kind);
	uint64_t groups[NG_NCLASSES] = { 0 }, used[NG_NCLASSES] = { 0 },
		 avail[NG_NCLASSES] = { 0 }, freed[NG_NCLASSES] = { 0 };
	for (size_t i = 0; i < ng->ngroups; i++) {
		const struct ng_group *g = &ng->groups[i];
		if (g->sizeclass >= NG_NCLASSES)
			continue;       /* a mapping of its own: no class */
		unsigned c = g->sizeclass, slots = g->last_idx + 1u;
		unsigned a = (unsigned)__builtin_popcount(g->avail);
		unsigned f = (unsigned)__builtin_popcount(g->freed);
		groups[c]++;
		avail[c] += a;
		freed[c] += f;
		used[c] += slots - a - f;
	}
	em_doc_begin(e);
	em_table_begin(e, &CLASS_TABLE);
	for (unsigned c = 0; c < NG_NCLASSES; c++) {
		if (!groups[c] && !ng->usage[c] && !ng->active[c])
			continue;
		const struct em_val v[] = {
			ev_u64(c), ev_u64((uint64_t)NG_UNIT * ng_size_classes[c] -
					  NG_IB),
			ev_u64(groups[c]), ev_u64(used[c]), ev_u64(avail[c]),
			ev_u64(freed[c]), ev_u64(ng->usage[c]),
			ng->active[c] ? ev_addr(ng->active[c]) : ev_null(),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}

/* bins --list: each class's active list, from its head (the group
   malloc takes from next) round to it again.  */
static const struct em_field LIST_COLS[] = {
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "position", .label = "pos", .width = 4 },
	{ .key = "meta", .label = "meta", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "group", .label = "group", .width = -18, .form = EM_T_HEX0,
	  .digits = 16, .none = "?" },
	{ .key = "slots", .label = "slots", .width = 5, .none = "?" },
	{ .key = "avail", .label = "avail", .width = 5, .none = "?" },
	{ .key = "freed", .label = "freed", .width = 5, .none = "?" },
};
static const struct em_table LIST_TABLE = {
	.key = "active", .cols = LIST_COLS, .ncols = 7 };

enum hw_status ng_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind)
{
	struct ng_state *ng = state;
	if (kind && strcmp(kind, "classes") != 0)
		return hw_error(ng->s, HW_USAGE, "bins: unknown kind '%s' "
				"(mallocng: classes)", kind);
	/* A list longer than the metas read is a loop.  */
	uint64_t limit = ng->ngroups + 1;
	em_doc_begin(e);
	em_table_begin(e, &LIST_TABLE);
	for (unsigned c = 0; c < NG_NCLASSES; c++) {
		uint64_t m = ng->active[c], n = 0;
		while (m && n < limit) {
			uint64_t prev, next = 0, mem = 0;
			bool have = ng_meta_links(ng, m, &prev, &next, &mem);
			uint32_t g = ng_group_of_meta(ng, mem, m);
			const struct ng_group *gr = g != NG_NONE ? &ng->groups[g]
								 : NULL;
			const struct em_val v[] = {
				ev_u64(c), ev_u64(n), ev_addr(m),
				gr ? ev_addr(gr->mem) : ev_null(),
				gr ? ev_u64(gr->last_idx + 1u) : ev_null(),
				gr ? ev_u64((unsigned)__builtin_popcount(gr->avail))
				   : ev_null(),
				gr ? ev_u64((unsigned)__builtin_popcount(gr->freed))
				   : ev_null(),
			};
			em_row(e, v);
			n++;
			if (!have || !next || next == ng->active[c])
				break;
			m = next;
		}
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}
