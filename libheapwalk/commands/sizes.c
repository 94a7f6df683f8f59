/* sizes.c - the sizes command: per size class (the allocator's, or
 * every exact size with --exact) the blocks and bytes in use and free;
 * --by=type per C++ class instead (sizes-types.c).  JSON adds each
 * arena's totals, what `diff` needs of a saved base.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "../report/partial.h"
#include "../report/totals.h"
#include "sizes.h"

/* sizes: one row per class, the allocator's classes ("min-size", bytes
   in human units) or every exact size (bytes in full).  */
static const struct em_field CLASS_COLS[] = {
	{ .key = "size", .label = "size (class)", .width = 23 },
	{ .key = "min", .only = EM_JSON_ONLY },
	{ .key = "used", .label = "used", .width = 10 },
	{ .key = "used_bytes", .label = "used bytes", .width = 12,
	  .form = EM_T_HUMAN },
	{ .key = "free", .label = "free", .width = 10 },
	{ .key = "free_bytes", .label = "free bytes", .width = 12,
	  .form = EM_T_HUMAN },
	{ .key = "cached", .only = EM_JSON_ONLY },
	{ .key = "cached_bytes", .only = EM_JSON_ONLY },
};
static const struct em_field EXACT_COLS[] = {
	{ .key = "size", .label = "size", .width = 12 },
	{ .key = "min", .only = EM_JSON_ONLY },
	{ .key = "used", .label = "used", .width = 10 },
	{ .key = "used_bytes", .label = "used bytes", .width = 14 },
	{ .key = "free", .label = "free", .width = 10 },
	{ .key = "free_bytes", .label = "free bytes", .width = 14 },
	{ .key = "cached", .only = EM_JSON_ONLY },
	{ .key = "cached_bytes", .only = EM_JSON_ONLY },
};
static const struct em_table CLASS_TABLE = {
	.key = "classes", .cols = CLASS_COLS, .ncols = 8 };
static const struct em_table EXACT_TABLE = {
	.key = "classes", .cols = EXACT_COLS, .ncols = 8 };

/* A row's values; `size` names the row in text ("total", "17-24").  */
static void size_row_vals(struct em_val *v, struct em_val size, uint64_t min,
			  bool with_min, const struct hw_size_class *c)
{
	v[0] = size;
	v[1] = with_min ? ev_u64(min) : ev_absent();
	v[2] = ev_u64(c->used);
	v[3] = ev_u64(c->used_bytes);
	v[4] = ev_u64(c->free);
	v[5] = ev_u64(c->free_bytes);
	v[6] = ev_u64(c->cached);
	v[7] = ev_u64(c->cached_bytes);
}

/* sizes --json: the allocator and each arena's totals, what `diff`
   needs of a saved base (text has them in `arenas`).  */
static const struct em_field F_SIZES_ALLOCATOR = {
	.key = "allocator", .only = EM_JSON_ONLY };
static const struct em_field ARENA_TOTAL_COLS[] = {
	{ .key = "arena" }, { .key = "addr" }, { .key = "used" },
	{ .key = "used_bytes" }, { .key = "free" }, { .key = "free_bytes" },
};
static const struct em_table ARENA_TOTAL_TABLE = {
	.key = "arenas", .cols = ARENA_TOTAL_COLS, .ncols = 6,
	.only = EM_JSON_ONLY };

static void emit_arena_totals(struct hw_session *s, struct hw_emitter *e,
			      const struct hw_totals *t)
{
	em_kv(e, &F_SIZES_ALLOCATOR, ev_str(s->alloc->name));
	em_table_begin(e, &ARENA_TOTAL_TABLE);
	for (size_t i = 0; i < t->narenas; i++) {
		const struct hw_arena_count *a = &t->arenas[i];
		if (!a->used && !a->free)
			continue;
		uint64_t addr = hw_arena_slot_addr(s, i);
		const struct em_val v[] = {
			ev_i64((int64_t)i - 1),
			addr ? ev_addr(addr) : ev_absent(),
			ev_u64(a->used), ev_u64(a->used_bytes),
			ev_u64(a->free), ev_u64(a->free_bytes),
		};
		em_row(e, v);
	}
	em_table_end(e);
}

static enum hw_status sizes_run(const struct hw_cmd *c)
{
	struct hw_emitter *e = c->e;
	bool exact = false, by_type = false;
	for (int i = 1; i < c->argc; i++) {
		if (strcmp(c->argv[i], "--by=type") == 0) {
			by_type = true;
			continue;
		}
		if (strcmp(c->argv[i], "--exact") != 0)
			return hw_error(c->s, HW_USAGE, "sizes: unknown "
					"argument '%s' (--exact, --by=type)",
					c->argv[i]);
		exact = true;
	}
	if (by_type && exact)
		return hw_error(c->s, HW_USAGE, "sizes: --by=type and --exact "
				"do not go together");
	if (by_type)
		return sizes_by_type(c->s, e);
	struct hw_totals t;
	enum hw_status st = hw_totals_gather(c->s, &t, NULL);
	if (st != HW_OK)
		return st;
	hw_maps_acc_free(&t.maps);
	size_t n;
	struct hw_size_row *rows = hw_size_rows(c->s, &t.sizes, exact, &n);
	free(t.sizes.slots);
	if (!rows) {
		free(t.arenas);
		return hw_error(c->s, HW_BAD_TARGET, "out of memory");
	}
	struct em_val v[8];
	em_doc_begin(e);
	em_table_begin(e, exact ? &EXACT_TABLE : &CLASS_TABLE);
	for (size_t i = 0; i < n; i++) {
		const struct hw_size_row *r = &rows[i];
		char label[48];
		struct em_val size = ev_u64(r->c.size);
		if (r->min != r->c.size && !exact) {
			snprintf(label, sizeof label, "%llu-%llu",
				 (unsigned long long)r->min,
				 (unsigned long long)r->c.size);
			size = ev_text(size, label);
		}
		size_row_vals(v, size, r->min, !exact, &r->c);
		em_row(e, v);
	}
	/* The total is the text table's last line; JSON readers add up.  */
	struct hw_size_class total = {
		.used = t.used, .used_bytes = t.used_bytes,
		.free = t.free, .free_bytes = t.free_bytes };
	size_row_vals(v, ev_text(ev_absent(), "total"), 0, false, &total);
	em_row_as(e, NULL, v, EM_TEXT_ONLY);
	em_table_end(e);
	emit_arena_totals(c->s, e, &t);
	free(t.arenas);
	hw_emit_partial(c->s, e);
	em_doc_end(e);
	free(rows);
	return HW_OK;
}

static const struct hw_command_opt sizes_opts[] = {
	{ "--exact", "one row per exact chunk size instead of per size "
		     "class" },
	{ "--by=type", "per C++ class, named by the vtable each block "
		       "starts with" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_sizes = {
	.name = "sizes", .run = sizes_run, .args = "[--exact|--by=type]",
	.summary = "per size class (or C++ class): count and bytes in use "
		   "and free",
	.opts = sizes_opts, .example = "core sizes --by=type",
	.needs = HW_NEED_WALK,
};
