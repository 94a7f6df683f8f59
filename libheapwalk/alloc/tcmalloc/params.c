/* params.c - `mp`, `arena 0` and `tcache` for tcmalloc.  `mp`: its
 * build's parameters as the heap shows them -- the page size, the size
 * map (each class's object size, the pages a span of it takes, and how
 * many objects move between a thread cache and the central list at
 * once) -- and where heapwalk found each root.  `arena 0`: tcmalloc's
 * one page heap -- what it took from the system, what is free or given
 * back, and its spans by where they are.  `tcache [TID]`: each thread
 * cache's free lists as the cache keeps them (ThreadCache::FreeList:
 * head, length, low-water mark, max_length), read afresh.
 */
#include "../../emit/emit.h"
#include "tcmalloc.h"

static const struct em_field F_VERSION = {
	.key = "version", .label = "version:" };
static const struct em_section S_PARAMS = {
	.key = "params", .indent = 2, .label_width = 14 };
static const struct em_field F_PAGE = { .key = "page", .label = "page:" };
static const struct em_field F_NCLASSES = {
	.key = "classes", .label = "size classes:" };
static const struct em_field F_MAX_SMALL = {
	.key = "max_small", .label = "largest class:", .form = EM_T_HUMAN };
static const struct em_field F_CACHES = {
	.key = "thread_caches", .label = "thread caches:" };
static const struct em_section S_ROOTS = {
	.key = "roots", .title = "found:", .indent = 2, .label_width = 14 };
static const struct em_field F_ROOT[] = {
	{ .key = "sizemap", .label = "size map:", .none = "-" },
	{ .key = "central", .label = "central lists:", .none = "-" },
	{ .key = "pageheap", .label = "page heap:", .none = "-" },
};
static const struct em_field F_ROOT_FROM[] = {
	{ .key = "sizemap_from", .join = "  " },
	{ .key = "central_from", .join = "  " },
	{ .key = "pageheap_from", .join = "  " },
};
static const struct em_field CLASS_COLS[] = {
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "pages", .label = "pages", .width = 5 },
	{ .key = "move", .label = "num_objects_to_move", .width = 19 },
};
static const struct em_table CLASS_TABLE = {
	.key = "size_map", .cols = CLASS_COLS, .ncols = 4 };

enum hw_status tc_report_params(void *state, struct hw_emitter *e)
{
	struct tc_state *tc = state;
	em_doc_begin(e);
	em_kv(e, &F_VERSION, ev_str(tc->version));
	em_section_begin(e, &S_PARAMS);
	em_kv(e, &F_PAGE, ev_u64((uint64_t)1 << TC_PAGE_SHIFT));
	em_kv(e, &F_NCLASSES, ev_u64(tc->nclasses ? tc->nclasses - 1 : 0));
	em_kv(e, &F_MAX_SMALL, tc->nclasses > 1
			       ? ev_u64(tc->class_size[tc->nclasses - 1])
			       : ev_null());
	em_kv(e, &F_CACHES, ev_u64(tc->ncaches));
	em_section_end(e);
	em_section_begin(e, &S_ROOTS);
	const uint64_t at[] = { tc->sizemap, tc->central, tc->pageheap };
	const char *from[] = { tc->how_sizemap, tc->how_central, tc->how_heap };
	for (unsigned k = 0; k < sizeof at / sizeof *at; k++) {
		em_kv(e, &F_ROOT[k], ev_addr_or_null(at[k]));
		em_kv(e, &F_ROOT_FROM[k], from[k] ? ev_str(from[k]) : ev_null());
	}
	em_section_end(e);
	em_note(e, "");
	em_table_begin(e, &CLASS_TABLE);
	for (unsigned c = 1; c < tc->nclasses; c++) {
		const struct em_val v[] = {
			ev_u64(c), ev_u64(tc->class_size[c]),
			ev_u64(tc->class_pages[c]), ev_u64(tc->class_move[c]) };
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}

static const struct em_field F_ARENA = {
	.key = "arena", .label = "arena", .post = ": the page heap" };
static const struct em_field F_HEAP_AT = { .key = "addr", .join = " at " };
static const struct em_section S_HEAP = { .indent = 2, .label_width = 12 };
static const struct em_field F_SYSTEM = {
	.key = "system_bytes", .label = "system:", .form = EM_T_HUMAN,
	.post = " taken from the system (generic.heap_size)" };
static const struct em_field F_FREE = {
	.key = "free_bytes", .label = "free:", .form = EM_T_HUMAN,
	.post = " free in it, committed (tcmalloc.pageheap_free_bytes)" };
static const struct em_field F_UNMAPPED = {
	.key = "unmapped_bytes", .label = "returned:", .form = EM_T_HUMAN,
	.post = " given back (tcmalloc.pageheap_unmapped_bytes)" };
static const struct em_section S_SPANS = {
	.key = "spans", .title = "spans:", .indent = 4, .label_width = 10 };
static const struct em_section S_LOC[3] = {
	{ .key = "in_use" }, { .key = "free" }, { .key = "returned" } };
static const struct em_field F_LOC_COUNT[3] = {
	{ .key = "count", .label = "in use:" }, { .key = "count", .label = "free:" },
	{ .key = "count", .label = "returned:" } };
static const struct em_field F_LOC_BYTES = {
	.key = "bytes", .join = " spans, ", .form = EM_T_HUMAN };
static const struct em_field F_TCACHES = {
	.key = "thread_caches", .label = "threads:",
	.post = " thread caches take from it" };

enum hw_status tc_report_arena(void *state, struct hw_emitter *e, size_t n)
{
	struct tc_state *tc = state;
	if (n != 0)
		return hw_error(tc->s, HW_USAGE, "arena: tcmalloc has one page "
				"heap, arena 0 (no arena %zu)", n);
	uint64_t count[3] = { 0 }, bytes[3] = { 0 };
	for (size_t i = 0; i < tc->nspans; i++) {
		const struct tc_span *sp = &tc->spans[i];
		if (sp->location < 3) {
			count[sp->location]++;
			bytes[sp->location] += sp->bytes;
		}
	}
	em_doc_begin(e);
	em_kv(e, &F_ARENA, ev_u64(0));
	em_kv(e, &F_HEAP_AT, ev_addr_or_null(tc->pageheap));
	em_section_begin(e, &S_HEAP);
	em_kv(e, &F_SYSTEM, ev_u64(tc->system_bytes));
	em_kv(e, &F_FREE, ev_u64(tc->free_bytes));
	em_kv(e, &F_UNMAPPED, ev_u64(tc->unmapped_bytes));
	em_section_begin(e, &S_SPANS);
	for (int k = 0; k < 3; k++) {
		em_section_begin(e, &S_LOC[k]);
		em_kv(e, &F_LOC_COUNT[k], ev_u64(count[k]));
		em_kv(e, &F_LOC_BYTES, ev_u64(bytes[k]));
		em_section_end(e);
	}
	em_section_end(e);
	em_kv(e, &F_TCACHES, ev_u64(tc->ncaches));
	em_section_end(e);
	em_doc_end(e);
	return HW_OK;
}

/* ---- tcache ----------------------------------------------------------- */

static const struct em_field TC_COLS[] = {
	{ .key = "index", .label = "class", .width = 5 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "count", .label = "length", .width = 7 },
	{ .key = "low_water", .label = "lowater", .width = 7 },
	{ .key = "max", .label = "max_length", .width = 10 },
	{ .key = "head", .label = "list_ (next taken)", .join = "  " },
};
static const struct em_table TC_BINS = {
	.key = "bins", .cols = TC_COLS, .ncols = 6 };
static const struct em_field TC_THREAD_COLS[] = {
	{ .key = "thread", .pre = "thread cache of thread ", .none = "?" },
	{ .key = "addr", .join = " at " },
	{ .key = "bytes", .join = " (size_ ", .post = ")", .form = EM_T_HUMAN },
};
static const struct em_table TC_TABLE = {
	.key = "tcaches", .cols = TC_THREAD_COLS, .ncols = 3,
	.flags = EM_TB_NO_HEADER };

enum hw_status tc_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid)
{
	struct tc_state *tc = state;
	bool found = tid < 0;
	for (size_t i = 0; i < tc->ncaches && !found; i++)
		found = tc->caches[i].tid == tid;
	if (!found)
		return hw_error(tc->s, HW_USAGE, "tcache: no thread cache of "
				"thread %lld (%zu found: %s)", (long long)tid,
				tc->ncaches, tc->how_caches ? tc->how_caches
							    : "none");
	em_doc_begin(e);
	em_table_begin(e, &TC_TABLE);
	for (size_t i = 0; i < tc->ncaches; i++) {
		const struct tc_thread_cache *c = &tc->caches[i];
		if (tid >= 0 && c->tid != tid)
			continue;
		const struct em_val tv[] = {
			c->tid ? ev_i64(c->tid) : ev_null(), ev_addr(c->addr),
			ev_u64(c->size) };
		em_row_open(e, tv);
		em_table_begin(e, &TC_BINS);
		for (unsigned cls = 1; cls < tc->nclasses; cls++) {
			struct tc_freelist fl;
			if (!tc_read_freelist(tc, c, cls, &fl) ||
			    (!fl.head && !fl.length))
				continue;
			const struct em_val v[] = {
				ev_u64(cls), ev_u64(tc->class_size[cls]),
				ev_u64(fl.length), ev_u64(fl.lowater),
				ev_u64(fl.max_length), ev_addr(fl.head) };
			em_row(e, v);
		}
		em_table_end(e);
		em_row_close(e);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}
