/* anatomy.c - what `chunk ADDR` shows of a mimalloc block: its page
 * (where its mi_page_t is, its block size, capacity, reserved and used
 * counts, its flags), the list that holds it when free, the heap and
 * thread the page belongs to, and its segment.
 */
#include <stdio.h>

#include "../../emit/emit.h"
#include "mimalloc.h"

static const struct em_section S_FIELDS = {
	.key = "fields", .title = "fields:", .indent = 2, .label_width = 14 };
static const struct em_field F_PAGE = { .key = "page", .label = "page:" };
static const struct em_field F_PAGE_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_META = {
	.key = "page_struct", .label = "mi_page_t:" };
static const struct em_field F_BIN = { .key = "bin", .label = "bin:" };
static const struct em_field F_BSIZE = {
	.key = "block_size", .label = "block size:" };
static const struct em_field F_INDEX = { .key = "index", .label = "block:" };
static const struct em_field F_CAP = {
	.key = "capacity", .join = " of capacity ", .only = EM_BOTH };
static const struct em_field F_RESERVED = {
	.key = "reserved", .label = "reserved:" };
static const struct em_field F_USED = { .key = "used", .label = "used:" };
static const struct em_field F_LIST = {
	.key = "list", .label = "list:", .none = "-" };
static const struct em_field F_FLAGS = {
	.key = "in_full", .label = "in_full:" };
static const struct em_field F_ALIGNED = {
	.key = "has_aligned", .join = ", has_aligned: ", .only = EM_BOTH };
static const struct em_field F_DELAYED = {
	.key = "delayed", .label = "delayed bits:" };
static const struct em_field F_HEAP = {
	.key = "heap", .label = "heap:", .none = "none (abandoned)" };
static const struct em_field F_TID = {
	.key = "tid", .join = ", thread ", .none = "not in the core" };
static const struct em_field F_SEGMENT = {
	.key = "segment", .label = "segment:" };
static const struct em_field F_KIND = {
	.key = "segment_kind", .join = ", ", .only = EM_BOTH };
static const struct em_field F_OWNER = {
	.key = "segment_thread", .join = ", thread id ", .form = EM_T_HEX };

static const char *const list_names[] = {
	[MI_IN_USE] = NULL, [MI_ON_FREE] = "free",
	[MI_ON_LOCAL] = "local_free", [MI_ON_THREAD] = "thread free",
};

void mi_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e)
{
	struct mi_state *mi = state;
	uint32_t pi = mi_page_of(mi, c->chunk);
	em_section_begin(e, &S_FIELDS);
	if (pi == MI_NONE || !mi->pages[pi].block_size) {
		em_kv(e, &F_PAGE, ev_null());
		em_kv(e, &F_PAGE_SAYS, ev_str(pi == MI_NONE
					      ? "(in no page)"
					      : "(free slices of a segment)"));
		em_section_end(e);
		return;
	}
	const struct mi_page *pg = &mi->pages[pi];
	const struct mi_segment *sg = &mi->segments[pg->segment];
	uint64_t i = c->chunk >= pg->start
			     ? (c->chunk - pg->start) / pg->block_size
			     : 0;
	const char *list = i < pg->capacity
				   ? list_names[mi_block_list(mi, pg->states + i)]
				   : NULL;
	char says[80];
	snprintf(says, sizeof says, "(%s)",
		 i >= pg->capacity ? "past its capacity: not a block yet"
		 : list            ? "free"
				   : "in use");
	em_kv(e, &F_PAGE, ev_addr(pg->area));
	em_kv(e, &F_PAGE_SAYS, ev_str(says));
	em_kv(e, &F_META, ev_addr(pg->meta));
	em_kv(e, &F_BIN, ev_u64(pg->bin));
	em_kv(e, &F_BSIZE, ev_u64(pg->block_size));
	em_kv(e, &F_INDEX, ev_u64(i));
	em_kv(e, &F_CAP, ev_u64(pg->capacity));
	em_kv(e, &F_RESERVED, ev_u64(pg->reserved));
	em_kv(e, &F_USED, ev_u64(pg->used));
	em_kv(e, &F_LIST, list ? ev_str(list) : ev_null());
	em_kv(e, &F_FLAGS, ev_bool(pg->flags & 1));
	em_kv(e, &F_ALIGNED, ev_bool(pg->flags & 2));
	em_kv(e, &F_DELAYED, ev_u64(pg->delayed));
	const struct mi_heap *h = pg->heap_index >= 0
					  ? &mi->heaps[pg->heap_index]
					  : NULL;
	em_kv(e, &F_HEAP, h ? ev_addr(h->addr) : ev_null());
	if (h) {
		int64_t tid = mi_heap_tid(mi, h);
		em_kv(e, &F_TID, tid >= 0 ? ev_u64((uint64_t)tid) : ev_null());
	}
	em_kv(e, &F_SEGMENT, ev_addr(sg->addr));
	em_kv(e, &F_KIND, ev_str(sg->kind == MI_SEGMENT_HUGE ? "huge"
							     : "normal"));
	em_kv(e, &F_OWNER, ev_u64(sg->thread_id));
	em_section_end(e);
}
