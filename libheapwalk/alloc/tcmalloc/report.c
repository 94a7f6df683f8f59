/* report.c - tcmalloc's own part of the reports: `summary`'s lines (the
 * figures MallocExtension gives, recomputed from the heap, and how each
 * root was found) and `arenas` (the thread caches).  The bins are
 * bins.c's; `mp`, `arena 0` and `tcache` params.c's.
 */
#include "../../emit/emit.h"
#include "tcmalloc.h"

uint64_t tc_current_allocated(const struct tc_state *tc)
{
	uint64_t held = tc->thread_bytes + tc->central_bytes +
			tc->transfer_bytes + tc->free_bytes +
			tc->unmapped_bytes;
	return tc->system_bytes > held ? tc->system_bytes - held : 0;
}

/* summary's tcmalloc part, indented under it.  */
static const struct em_section TC_SUMMARY = { .indent = 2, .label_width = 22 };
static const struct em_field F_MODULE = { .key = "module", .label = "module:" };
/* "build: gperftools 2.10; page 8192, 86 size classes" */
static const struct em_field F_BUILD = {
	.key = "version", .label = "build:", .pre = "gperftools " };
static const struct em_field F_PAGE = { .key = "page", .join = "; page " };
static const struct em_field F_CLASSES = {
	.key = "size_classes", .join = ", ", .post = " size classes" };
static const struct em_field F_SPANS = {
	.key = "spans", .label = "spans:", .post = " (in the page map)" };
static const struct em_field F_CACHES = {
	.key = "thread_caches", .label = "thread caches:" };

/* MallocExtension's numeric properties, as the program would read them. */
static const struct em_section S_STATS = {
	.key = "stats", .title = "stats (MallocExtension's, from the heap):",
	.indent = 4, .label_width = 34 };
static const struct em_field F_STAT[] = {
	{ .key = "current_allocated_bytes",
	  .label = "generic.current_allocated_bytes", .form = EM_T_HUMAN },
	{ .key = "heap_size", .label = "generic.heap_size",
	  .form = EM_T_HUMAN },
	{ .key = "pageheap_free_bytes", .label = "tcmalloc.pageheap_free_bytes",
	  .form = EM_T_HUMAN },
	{ .key = "pageheap_unmapped_bytes",
	  .label = "tcmalloc.pageheap_unmapped_bytes", .form = EM_T_HUMAN },
	{ .key = "central_cache_free_bytes",
	  .label = "tcmalloc.central_cache_free_bytes", .form = EM_T_HUMAN },
	{ .key = "transfer_cache_free_bytes",
	  .label = "tcmalloc.transfer_cache_free_bytes", .form = EM_T_HUMAN },
	{ .key = "thread_cache_free_bytes",
	  .label = "tcmalloc.thread_cache_free_bytes", .form = EM_T_HUMAN },
};

static const struct em_section S_ROOTS = {
	.key = "roots", .title = "found:", .indent = 4, .label_width = 16 };
static const struct em_field F_ROOT_MODULE = {
	.key = "module_from", .label = "module:" };
static const struct em_field F_SIZEMAP = { .key = "sizemap", .label = "size map:" };
static const struct em_field F_SIZEMAP_FROM = {
	.key = "sizemap_from", .join = " (", .post = ")" };
static const struct em_field F_CENTRAL = {
	.key = "central", .label = "central lists:" };
static const struct em_field F_CENTRAL_FROM = {
	.key = "central_from", .join = " (", .post = ")" };
static const struct em_field F_HEAP = { .key = "pageheap", .label = "page heap:" };
static const struct em_field F_HEAP_FROM = {
	.key = "pageheap_from", .join = " (", .post = ")" };
static const struct em_field F_THREADS = {
	.key = "thread_caches_from", .label = "thread caches:" };
static const struct em_field F_OWNERS = {
	.key = "cache_threads_from", .label = "their threads:" };

void tc_report_summary(void *state, struct hw_emitter *e)
{
	struct tc_state *tc = state;
	const uint64_t stat[] = {
		tc_current_allocated(tc), tc->system_bytes, tc->free_bytes,
		tc->unmapped_bytes, tc->central_bytes, tc->transfer_bytes,
		tc->thread_bytes,
	};
	em_section_begin(e, &TC_SUMMARY);
	em_kv(e, &F_MODULE, ev_str(tc->module));
	em_kv(e, &F_BUILD, ev_str(tc->version));
	em_kv(e, &F_PAGE, ev_u64((uint64_t)1 << TC_PAGE_SHIFT));
	em_kv(e, &F_CLASSES, ev_u64(tc->nclasses));
	em_kv(e, &F_SPANS, ev_u64(tc->nspans));
	em_kv(e, &F_CACHES, ev_u64(tc->ncaches));
	em_section_begin(e, &S_STATS);
	for (size_t i = 0; i < sizeof stat / sizeof stat[0]; i++)
		em_kv(e, &F_STAT[i], ev_u64(stat[i]));
	em_section_end(e);
	em_section_begin(e, &S_ROOTS);
	em_kv(e, &F_ROOT_MODULE, ev_str(tc->how_module));
	em_kv(e, &F_SIZEMAP, ev_addr(tc->sizemap));
	em_kv(e, &F_SIZEMAP_FROM, ev_str(tc->how_sizemap));
	em_kv(e, &F_CENTRAL, ev_addr(tc->central));
	em_kv(e, &F_CENTRAL_FROM, ev_str(tc->how_central));
	em_kv(e, &F_HEAP, ev_addr(tc->pageheap));
	em_kv(e, &F_HEAP_FROM, ev_str(tc->how_heap));
	em_kv(e, &F_THREADS, ev_str(tc->how_caches));
	em_kv(e, &F_OWNERS, tc->how_owners ? ev_str(tc->how_owners) : ev_null());
	em_section_end(e);
	em_section_end(e);
}

/* arenas: tcmalloc has one page heap; its thread caches are listed.  */
static const struct em_field CACHE_COLS[] = {
	{ .key = "addr", .label = "thread cache", .width = -18,
	  .form = EM_T_HEX0, .digits = 16 },
	{ .key = "tid", .label = "thread", .width = 8, .none = "?" },
	{ .key = "objects", .label = "objects", .width = 10 },
	{ .key = "bytes", .label = "bytes", .width = 12, .form = EM_T_HUMAN },
};
static const struct em_table CACHE_TABLE = {
	.key = "thread_caches", .cols = CACHE_COLS, .ncols = 4 };

enum hw_status tc_report_arenas(void *state, struct hw_emitter *e)
{
	struct tc_state *tc = state;
	em_doc_begin(e);
	char h[32];
	em_notef(e, "one page heap: %llu spans, %s taken from the system",
		 (unsigned long long)tc->nspans,
		 hw_human(h, sizeof h, tc->system_bytes));
	em_table_begin(e, &CACHE_TABLE);
	for (size_t i = 0; i < tc->ncaches; i++) {
		const struct tc_thread_cache *c = &tc->caches[i];
		const struct em_val v[] = {
			ev_addr(c->addr),
			c->tid ? ev_i64(c->tid) : ev_null(),
			ev_u64(c->objects), ev_u64(c->size),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}
