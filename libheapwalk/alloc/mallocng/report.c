/* report.c - mallocng's own part of the reports: `summary`'s lines
 * (where the context is and how it was found, its meta areas and
 * groups) and `arenas` (mallocng has one heap: its groups by kind).  The
 * bins are bins.c's; `mp` and `tcache` params.c's.
 *
 * mallocng keeps no statistics beyond usage_by_class (slots in groups
 * of each class): the figures here are counted from its metas.
 */
#include "../../emit/emit.h"
#include "mallocng.h"

static const struct em_section NG_SUMMARY = { .indent = 2, .label_width = 22 };
static const struct em_field F_MODULE = { .key = "module", .label = "module:" };
static const struct em_field F_CTX = { .key = "context", .label = "context:" };
static const struct em_field F_CTX_FROM = {
	.key = "context_from", .join = " (by ", .post = ")" };
static const struct em_field F_AREAS = {
	.key = "meta_areas", .label = "meta areas:" };
static const struct em_field F_GROUPS = { .key = "groups", .label = "groups:" };
static const struct em_field F_NESTED = {
	.key = "nested_groups", .join = ", ", .post = " nested in slots" };
static const struct em_field F_MAPPED = {
	.key = "mapped_groups", .join = ", ", .post = " mappings of their own" };
static const struct em_field F_DONATED = {
	.key = "donated_groups", .join = ", ", .post = " donated" };
static const struct em_field F_FREE_METAS = {
	.key = "free_metas", .label = "metas unused:" };
static const struct em_field F_HELD = {
	.key = "group_bytes", .label = "group memory:", .form = EM_T_HUMAN };
static const struct em_field F_NOTE = {
	.key = "statistics", .label = "statistics:" };

void ng_report_summary(void *state, struct hw_emitter *e)
{
	struct ng_state *ng = state;
	size_t nested = 0, mapped = 0, donated = 0;
	for (size_t i = 0; i < ng->ngroups; i++) {
		const struct ng_group *g = &ng->groups[i];
		nested += g->parent != NG_NONE;
		mapped += g->maplen != 0;
		donated += !g->freeable;
	}
	em_section_begin(e, &NG_SUMMARY);
	em_kv(e, &F_MODULE, ev_str(ng->home ? ng->home : ""));
	em_kv(e, &F_CTX, ev_addr(ng->ctx));
	em_kv(e, &F_CTX_FROM, ev_str(ng->how));
	em_kv(e, &F_AREAS, ev_u64(ng->nareas));
	em_kv(e, &F_GROUPS, ev_u64(ng->ngroups));
	em_kv(e, &F_NESTED, ev_u64(nested));
	em_kv(e, &F_MAPPED, ev_u64(mapped));
	em_kv(e, &F_DONATED, ev_u64(donated));
	em_kv(e, &F_FREE_METAS, ev_u64(ng->nmetas_unused));
	em_kv(e, &F_HELD, ev_u64(ng->held));
	em_kv(e, &F_NOTE, ev_str("none kept by mallocng: every figure is "
				 "counted from its metas and slot headers"));
	em_section_end(e);
}

/* arenas: one heap; its groups by where their memory is.  */
static const struct em_field GROUP_COLS[] = {
	{ .key = "group", .label = "group", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "meta", .label = "meta", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "slot_size", .label = "slot", .width = 8 },
	{ .key = "slots", .label = "slots", .width = 5 },
	{ .key = "used", .label = "used", .width = 5 },
	{ .key = "kind", .label = "kind", .width = -8 },
};
static const struct em_table GROUP_TABLE = {
	.key = "groups", .cols = GROUP_COLS, .ncols = 7 };

static const char *group_kind(const struct ng_group *g)
{
	return g->parent != NG_NONE ? "nested"
	       : g->maplen          ? "mapped"
	       : !g->freeable       ? "donated"
				    : "in-slot";
}

enum hw_status ng_report_arenas(void *state, struct hw_emitter *e)
{
	struct ng_state *ng = state;
	char h[32];
	em_doc_begin(e);
	em_notef(e, "one heap: %zu groups in %zu meta areas, %s of group "
		 "memory", ng->ngroups, ng->nareas,
		 hw_human(h, sizeof h, ng->held));
	em_table_begin(e, &GROUP_TABLE);
	for (size_t i = 0; i < ng->ngroups; i++) {
		const struct ng_group *g = &ng->groups[i];
		unsigned slots = g->last_idx + 1u;
		unsigned used = slots - (unsigned)__builtin_popcount(g->avail |
								   g->freed);
		const struct em_val v[] = {
			ev_addr(g->mem), ev_addr(g->meta), ev_u64(g->sizeclass),
			ev_u64(g->stride), ev_u64(slots), ev_u64(used),
			ev_str(group_kind(g)),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}
