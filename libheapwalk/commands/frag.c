/* frag.c - the frag command: per arena, how much free memory the heap
 * holds and how scattered it is (report/fragrows.c defines each figure).
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/fragrows.h"
#include "../report/partial.h"
#include "command.h"

/* One row per arena, and the total.  ptmalloc's page-level reserve is
   top; jemalloc's are its unused extents, and it has slabs.  */
#define FRAG_COMMON_COLS \
	{ .key = "arena", .label = "arena", .width = 6 }, \
	{ .key = "used", .label = "used", .width = 10, .form = EM_T_HUMAN }, \
	{ .key = "free", .label = "free", .width = 10, .form = EM_T_HUMAN }, \
	{ .key = "free_blocks", .only = EM_JSON_ONLY }, \
	{ .key = "largest_free", .label = "largest", .width = 10, \
	  .form = EM_T_HUMAN }, \
	{ .key = "free_ratio", .label = "free%", .width = 7, .form = EM_T_PCT, \
	  .prec = 1, .json_prec = 4 }, \
	{ .key = "frag", .label = "frag", .width = 6, .form = EM_T_PCT, \
	  .prec = 1, .json_prec = 4 }

static const struct em_field PM_COLS[] = {
	FRAG_COMMON_COLS,
	{ .key = "top", .label = "top", .width = 10, .form = EM_T_HUMAN },
};
static const struct em_field JE_COLS[] = {
	FRAG_COMMON_COLS,
	{ .key = "dirty", .label = "dirty", .width = 10, .form = EM_T_HUMAN },
	{ .key = "muzzy", .label = "muzzy", .width = 10, .form = EM_T_HUMAN },
	{ .key = "retained", .label = "retained", .width = 10,
	  .form = EM_T_HUMAN },
	{ .key = "slab_util", .label = "slabs", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
};
/* tcmalloc's page-level reserves: its page heap's free spans, committed
   or given back to the system.  */
static const struct em_field TC_COLS[] = {
	FRAG_COMMON_COLS,
	{ .key = "pageheap", .label = "page heap", .width = 10,
	  .form = EM_T_HUMAN },
	{ .key = "returned", .label = "returned", .width = 10,
	  .form = EM_T_HUMAN },
};
static const struct em_table PM_TABLE = { .cols = PM_COLS, .ncols = 8 };
static const struct em_table JE_TABLE = { .cols = JE_COLS, .ncols = 11 };
static const struct em_table TC_TABLE = { .cols = TC_COLS, .ncols = 9 };

/* Whose columns: the reserves each allocator keeps.  */
enum frag_kind { FRAG_PTMALLOC, FRAG_JEMALLOC, FRAG_TCMALLOC };
static const struct em_section S_ARENAS = {
	.key = "arenas", .flags = EM_S_LIST };

/* The row of one arena, or the total (arena < 0: JSON "total", text
   "total").  */
static void emit_row(struct hw_emitter *e, long arena,
		     const struct hw_frag_row *r, enum frag_kind kind)
{
	const struct em_val common[] = {
		arena >= 0 ? ev_u64((uint64_t)arena)
			   : ev_text(ev_absent(), "total"),
		ev_u64(r->used),
		ev_u64(r->free),
		ev_u64(r->nfree),
		ev_u64(r->largest),
		ev_dbl(hw_frag_free_ratio(r)),
		ev_dbl(hw_frag_scatter(r)),
	};
	struct em_val v[11];
	memcpy(v, common, sizeof common);
	if (kind == FRAG_JEMALLOC) {
		v[7] = ev_u64(r->dirty);
		v[8] = ev_u64(r->muzzy);
		v[9] = ev_u64(r->retained);
		v[10] = ev_dbl(hw_frag_slab_util(r));
	} else if (kind == FRAG_TCMALLOC) {
		v[7] = ev_u64(r->dirty);      /* fragrows: the page heap's */
		v[8] = ev_u64(r->retained);   /* and the returned spans */
	} else {
		v[7] = ev_u64(r->top);
	}
	if (arena >= 0)
		em_row(e, v);
	else
		em_row_as(e, "total", v, EM_BOTH);
}

/* The columns, defined under the table (text only: JSON keys are named
   in the reference).  */
static void emit_legend(struct hw_emitter *e, enum frag_kind kind)
{
	static const char *const free_is[] = {
		[FRAG_PTMALLOC] = "binned and cached chunks, top not included",
		[FRAG_JEMALLOC] = "free slab regions, and regions and large "
				  "extents in thread caches: summary's free",
		[FRAG_TCMALLOC] = "free objects in thread caches, transfer "
				  "slots and spans' lists: summary's free",
	};
	em_notef(e, "\nused, free: bytes in blocks in use / free for reuse "
		 "(%s)", free_is[kind]);
	em_note(e, "largest: the largest free block;  free%: free / (used "
		"+ free);\nfrag: 1 - largest / free (0%: all free memory in "
		"one block; near 100%: scattered)");
	if (kind == FRAG_TCMALLOC)
		em_note(e, "page heap: free spans tcmalloc keeps mapped;  "
			"returned: free spans given back to the system (no "
			"memory behind them)");
	else if (kind == FRAG_JEMALLOC)
		em_note(e, "dirty, muzzy: unused pages jemalloc still maps "
			"(not yet purged / lazily purged);\nretained: "
			"address space kept for reuse, no memory behind it "
			"(summary's stats.retained);  slabs: share of slab "
			"regions in use");
	else
		em_note(e, "top: the arena's top chunk(s), memory at the end "
			"of each heap that glibc can return to the system");
}

static enum hw_status frag_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	enum hw_status st = hw_args_at_most(s, c->argc, c->argv, 0, NULL);
	if (st != HW_OK)
		return st;
	struct hw_frag_row *rows = calloc(HW_FRAG_MAX_ARENAS, sizeof *rows);
	if (!rows)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	hw_walk_blocks(s, hw_frag_add, rows);
	enum frag_kind kind = !strcmp(s->alloc->name, "jemalloc")
			      ? FRAG_JEMALLOC
			      : !strcmp(s->alloc->name, "tcmalloc")
			      ? FRAG_TCMALLOC : FRAG_PTMALLOC;
	static const struct em_table *const tables[] = {
		[FRAG_PTMALLOC] = &PM_TABLE, [FRAG_JEMALLOC] = &JE_TABLE,
		[FRAG_TCMALLOC] = &TC_TABLE,
	};
	struct hw_frag_row total = { 0 };
	em_doc_begin(e);
	em_table_begin(e, tables[kind]);
	em_section_begin(e, &S_ARENAS);
	for (long a = 0; a < HW_FRAG_MAX_ARENAS; a++) {
		const struct hw_frag_row *r = &rows[a];
		if (!r->any)
			continue;
		emit_row(e, a, r, kind);
		hw_frag_sum(&total, r);
	}
	em_section_end(e);
	emit_row(e, -1, &total, kind);
	em_table_end(e);
	emit_legend(e, kind);
	hw_emit_partial(s, e);
	em_doc_end(e);
	free(rows);
	return HW_OK;
}

const struct hw_command hw_cmd_frag = {
	.name = "frag", .run = frag_run, .args = "",
	.summary = "free memory and fragmentation per arena",
	.example = "core frag", .needs = HW_NEED_CHUNKS,
};
