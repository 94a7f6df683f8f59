/* frag.c - the frag command: per arena, how much free memory the heap
 * holds and how scattered it is (report/fragrows.c defines each figure).
 */
#include <stdlib.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/fragrows.h"
#include "../report/partial.h"
#include "command.h"

/* One row per arena, and the total: the common columns, then one per
   page-level reserve the allocator keeps, in place order (enum
   hw_where), then slab utilisation where the view shows it.  */
#define FRAG_FREE_COLS \
	{ .key = "arena", .label = "arena", .width = 6 }, \
	{ .key = "used", .label = "used", .width = 10, .form = EM_T_HUMAN }, \
	{ .key = "free", .label = "free", .width = 10, .form = EM_T_HUMAN }, \
	{ .key = "free_blocks", .only = EM_JSON_ONLY }
#define FRAG_CACHED_COL \
	{ .key = "cached", .label = "cached", .width = 10, .form = EM_T_HUMAN }
#define FRAG_SCATTER_COLS \
	{ .key = "largest_free", .label = "largest", .width = 10, \
	  .form = EM_T_HUMAN }, \
	{ .key = "free_ratio", .label = "free%", .width = 7, .form = EM_T_PCT, \
	  .prec = 1, .json_prec = 4 }, \
	{ .key = "frag", .label = "frag", .width = 6, .form = EM_T_PCT, \
	  .prec = 1, .json_prec = 4 }
/* Where the allocator has thread caches (every one but mallocng).  */
#define FRAG_COMMON_COLS FRAG_FREE_COLS, FRAG_CACHED_COL, FRAG_SCATTER_COLS
#define FRAG_NCOMMON 8
#define NCOLS(cols) (sizeof cols / sizeof cols[0])

/* ptmalloc's page-level reserve is top.  */
static const struct em_field PM_COLS[] = {
	FRAG_COMMON_COLS,
	{ .key = "top", .label = "top", .width = 10, .form = EM_T_HUMAN },
};
/* jemalloc's are its unused extents, and it has slabs.  */
static const struct em_field JE_COLS[] = {
	FRAG_COMMON_COLS,
	{ .key = "dirty", .label = "dirty", .width = 10, .form = EM_T_HUMAN },
	{ .key = "muzzy", .label = "muzzy", .width = 10, .form = EM_T_HUMAN },
	{ .key = "retained", .label = "retained", .width = 10,
	  .form = EM_T_HUMAN },
	{ .key = "slab_util", .label = "slabs", .width = 6, .form = EM_T_PCT,
	  .prec = 1, .json_prec = 4 },
};
/* tcmalloc's are its page heap's free spans, committed or given back to
   the system.  */
static const struct em_field TC_COLS[] = {
	FRAG_COMMON_COLS,
	{ .key = "pageheap", .label = "page heap", .width = 10,
	  .form = EM_T_HUMAN },
	{ .key = "returned", .label = "returned", .width = 10,
	  .form = EM_T_HUMAN },
};
/* mimalloc's are the slices of its segments no page holds, committed
   or not, and what of each page is not made blocks yet (counted with
   the committed slices: pages mapped, touched or not).  (The columns
   come in the places' order: retained before page-reserved.)  */
static const struct em_field MI_COLS[] = {
	FRAG_FREE_COLS, FRAG_SCATTER_COLS,
	{ .key = "decommitted", .label = "decommit", .width = 10,
	  .form = EM_T_HUMAN },
	{ .key = "unused", .label = "unused", .width = 10,
	  .form = EM_T_HUMAN },
};
/* mallocng keeps none: a group wholly free is given back; and it has
   no thread caches.  */
static const struct em_field NG_COLS[] = {
	FRAG_FREE_COLS, FRAG_SCATTER_COLS,
};
static const struct em_table PM_TABLE = {
	.cols = PM_COLS, .ncols = NCOLS(PM_COLS) };
static const struct em_table JE_TABLE = {
	.cols = JE_COLS, .ncols = NCOLS(JE_COLS) };
static const struct em_table TC_TABLE = {
	.cols = TC_COLS, .ncols = NCOLS(TC_COLS) };
static const struct em_table MI_TABLE = {
	.cols = MI_COLS, .ncols = NCOLS(MI_COLS) };
static const struct em_table NG_TABLE = {
	.cols = NG_COLS, .ncols = NCOLS(NG_COLS) };

/* The columns and legend for one set of reserves
   (hw_allocator_ops.reserve_places).  Each allocator has its own set so
   far, and the legend says what its free blocks are: a new allocator
   whose set is new needs its view here; one whose set is another's
   shares that one's legend.  */
struct frag_view {
	uint32_t reserves;
	const struct em_table *table;
	bool slabs;                  /* a slab_util column last */
	const char *free_is;         /* what "free" counts */
	const char *reserves_are;    /* the reserve columns; NULL: none */
	const char *slabs_note;      /* what frag means for slab regions */
	bool no_caches;              /* no thread caches: no cached column */
};

/* A slab allocator's free memory is regions of fixed size classes.  */
#define SLAB_FRAG "(free regions of slabs each serve their size class " \
	"only, and are small by nature: frag is near 100% on a healthy heap"

static const struct frag_view VIEWS[] = {
	{ .reserves = HW_PLACE_BIT(HW_WHERE_TOP), .table = &PM_TABLE,
	  .free_is = "binned and cached chunks, top not included",
	  .reserves_are = "top: the arena's top chunk(s), memory at the end "
			  "of each heap that glibc can return to the system" },
	{ .reserves = HW_PLACE_BIT(HW_WHERE_DIRTY) |
		      HW_PLACE_BIT(HW_WHERE_MUZZY) |
		      HW_PLACE_BIT(HW_WHERE_RETAINED),
	  .table = &JE_TABLE, .slabs = true,
	  .free_is = "free slab regions, and regions and large extents in "
		     "thread caches: summary's free",
	  .reserves_are = "dirty, muzzy: unused pages jemalloc still maps "
			  "(not yet purged / lazily purged);\nretained: "
			  "address space kept for reuse, no memory behind it "
			  "(summary's stats.retained);  slabs: share of slab "
			  "regions in use",
	  .slabs_note = SLAB_FRAG ": see slabs)" },
	{ .reserves = HW_PLACE_BIT(HW_WHERE_PAGEHEAP) |
		      HW_PLACE_BIT(HW_WHERE_RETURNED),
	  .table = &TC_TABLE,
	  .free_is = "free objects in thread caches, transfer slots and "
		     "spans' lists: summary's free",
	  .reserves_are = "page heap: free spans tcmalloc keeps mapped;  "
			  "returned: free spans given back to the system (no "
			  "memory behind them)",
	  .slabs_note = SLAB_FRAG ")" },
	{ .reserves = HW_PLACE_BIT(HW_WHERE_MI_RESERVED) |
		      HW_PLACE_BIT(HW_WHERE_RETAINED),
	  .table = &MI_TABLE, .no_caches = true,
	  .free_is = "blocks on their pages' free, local_free and "
		     "thread-free lists: summary's free",
	  .reserves_are = "decommit: free slices of segments given back to "
			  "the system (no memory behind them);  unused: "
			  "free slices still committed, and the part of "
			  "each page not yet made blocks",
	  .slabs_note = SLAB_FRAG ")" },
	{ .reserves = 0, .table = &NG_TABLE,
	  .free_is = "free slots of groups, avail or freed: summary's "
		     "free",
	  .slabs_note = SLAB_FRAG ")", .no_caches = true },
};

/* The view of the allocator's reserves; NULL when none is written for
   them (a new allocator's: add its view above).  */
static const struct frag_view *view_for(const struct hw_allocator_ops *a)
{
	for (size_t i = 0; i < sizeof VIEWS / sizeof VIEWS[0]; i++)
		if (VIEWS[i].reserves == a->reserve_places)
			return &VIEWS[i];
	return NULL;
}

static const struct em_section S_ARENAS = {
	.key = "arenas", .flags = EM_S_LIST };

/* The row of one arena, or the total (arena < 0: JSON "total", text
   "total").  */
static void emit_row(struct hw_emitter *e, long arena,
		     const struct hw_frag_row *r, const struct frag_view *fv)
{
	struct em_val v[FRAG_NCOMMON + HW_WHERE_COUNT + 1];
	size_t n = 0;
	v[n++] = arena >= 0 ? ev_u64((uint64_t)arena)
			    : ev_text(ev_absent(), "total");
	v[n++] = ev_u64(r->used);
	v[n++] = ev_u64(r->free);
	v[n++] = ev_u64(r->nfree);
	if (!fv->no_caches)
		v[n++] = ev_u64(r->cached);
	v[n++] = ev_u64(r->largest);
	v[n++] = ev_dbl(hw_frag_free_ratio(r));
	v[n++] = ev_dbl(hw_frag_scatter(r));
	/* Each reserve place's figure is its column's (tcmalloc's page
	   heap is counted as dirty, its returned spans as retained).  */
	for (unsigned w = 0; w < HW_WHERE_COUNT; w++)
		if (fv->reserves & HW_PLACE_BIT(w))
			v[n++] = ev_u64(r->reserve[hw_place(w)->reserve]);
	if (fv->slabs)
		v[n++] = ev_dbl(hw_frag_slab_util(r));
	if (arena >= 0)
		em_row(e, v);
	else
		em_row_as(e, "total", v, EM_BOTH);
}

/* The columns, defined under the table (text only: JSON keys are named
   in the reference).  */
static void emit_legend(struct hw_emitter *e, const struct frag_view *fv)
{
	em_notef(e, "\nused, free: bytes in blocks in use / free for reuse "
		 "(%s)", fv->free_is);
	if (fv->no_caches)
		em_note(e, "largest: the largest free block;  free%: free / "
			"(used + free);\nfrag: 1 - largest / free (0%: all free "
			"memory in one block; near 100%: scattered)");
	else
		em_note(e, "cached: of free, the blocks in thread caches, kept "
			"for their thread's next malloc (not scattered "
			"memory);\nlargest: the largest free block outside "
			"them;  free%: free / (used + free);\nfrag: 1 - largest "
			"/ (free - cached) (0%: all that memory in one block; "
			"near 100%: scattered)");
	if (fv->reserves_are)
		em_note(e, fv->reserves_are);
	if (fv->slabs_note)
		em_note(e, fv->slabs_note);
}

static enum hw_status frag_run(const struct hw_cmd *c)
{
	struct hw_session *s = c->s;
	struct hw_emitter *e = c->e;
	enum hw_status st = hw_args_at_most(s, c->argc, c->argv, 0, NULL);
	if (st != HW_OK)
		return st;
	const struct frag_view *fv = view_for(s->alloc);
	if (!fv)
		return hw_error(s, HW_BAD_TARGET, "frag: no columns for %s's "
				"page reserves (commands/frag.c)",
				s->alloc->name);
	struct hw_frag_row *rows = calloc(HW_FRAG_MAX_ARENAS, sizeof *rows);
	if (!rows)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	hw_walk_blocks(s, hw_frag_add, rows);
	struct hw_frag_row total = { 0 };
	em_doc_begin(e);
	em_table_begin(e, fv->table);
	em_section_begin(e, &S_ARENAS);
	for (long a = 0; a < HW_FRAG_MAX_ARENAS; a++) {
		const struct hw_frag_row *r = &rows[a];
		if (!r->any)
			continue;
		emit_row(e, a, r, fv);
		hw_frag_sum(&total, r);
	}
	em_section_end(e);
	emit_row(e, -1, &total, fv);
	em_table_end(e);
	emit_legend(e, fv);
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
