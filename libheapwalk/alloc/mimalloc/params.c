/* params.c - `mp` and `tcache` for mimalloc.  `mp`: the layout the
 * segments were read with (its sizes and limits), the main heap and its
 * cookie, and mimalloc's size classes.  `tcache`: mimalloc has no
 * thread caches; each thread allocates from its own heap (`arenas`).
 */
#include "../../emit/emit.h"
#include "mimalloc.h"

static const struct em_field F_VERSION = {
	.key = "version", .label = "version:" };
static const struct em_section S_LAYOUT = {
	.key = "layout", .title = "layout:", .indent = 2, .label_width = 22 };
static const struct em_field F_ENCODED = {
	.key = "encoded_free_lists", .label = "free lists:",
	.yes = "encoded (page keys)", .no = "plain" };
static const struct em_field F_SEGMENT = {
	.key = "segment_size", .label = "segment size:", .form = EM_T_HUMAN };
static const struct em_field F_SLICE = {
	.key = "slice_size", .label = "slice size:", .form = EM_T_HUMAN };
static const struct em_field F_SLICES = {
	.key = "slices_per_segment", .label = "slices per segment:" };
static const struct em_field F_PAGE = {
	.key = "page_struct", .label = "sizeof mi_page_t:" };
static const struct em_field F_HEAP = {
	.key = "heap_struct", .label = "sizeof mi_heap_t:" };
static const struct em_field F_MAIN = {
	.key = "main_heap", .label = "main heap:", .none = "not found" };
static const struct em_field F_KEY = {
	.key = "main_cookie", .label = "main cookie:" };

static const struct em_field BIN_COLS[] = {
	{ .key = "bin", .label = "bin", .width = 4 },
	{ .key = "size", .label = "block size", .width = 10 },
};
static const struct em_table BIN_TABLE = {
	.key = "size_classes", .title = "size classes (bins; larger blocks: "
	"one a page, bin 73):", .cols = BIN_COLS, .ncols = 2 };

enum hw_status mi_report_params(void *state, struct hw_emitter *e)
{
	struct mi_state *mi = state;
	const struct mi_layout *L = mi->L;
	em_doc_begin(e);
	em_kv(e, &F_VERSION, ev_str(L->releases));
	em_section_begin(e, &S_LAYOUT);
	em_kv(e, &F_ENCODED, ev_bool(L->encoded));
	em_kv(e, &F_SEGMENT, ev_u64(1ull << L->segment_shift));
	em_kv(e, &F_SLICE, ev_u64(1ull << L->slice_shift));
	em_kv(e, &F_SLICES, ev_u64(L->slices_per_segment));
	em_kv(e, &F_PAGE, ev_u64(L->page_size));
	em_kv(e, &F_HEAP, ev_u64(L->heap_size));
	em_kv(e, &F_MAIN, ev_addr_or_null(mi->main_heap));
	em_kv(e, &F_KEY, ev_addr(mi->key));
	em_section_end(e);
	em_table_begin(e, &BIN_TABLE);
	for (unsigned b = 1; mi_bin_size(b); b++) {
		const struct em_val v[] = { ev_u64(b), ev_u64(mi_bin_size(b)) };
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}

enum hw_status mi_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid)
{
	(void)state, (void)tid;
	em_doc_begin(e);
	em_note(e, "mimalloc has no thread caches: each thread allocates from "
		"pages of its own heap, and frees into them (`arenas` lists "
		"the heaps, `bins` their pages by size class)");
	em_doc_end(e);
	return HW_OK;
}
