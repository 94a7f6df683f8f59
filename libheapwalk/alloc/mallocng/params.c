/* params.c - `mp` and `tcache` for mallocng.  `mp`: its context (struct
 * malloc_context) member by member as the core holds it -- the secret,
 * init_done, the mmap counter that seeds slot offsets, the free-meta
 * list, the next meta and how many are left, the meta areas, the brk
 * end its metas grew to -- and its size classes (each one's slot size
 * and the largest block it serves).  `tcache`: mallocng has no thread
 * caches; said so.
 */
#include <string.h>

#include "../../emit/emit.h"
#include "mallocng.h"

static const struct em_field F_VERSION = {
	.key = "version", .label = "version:" };
static const struct em_section S_CTX = {
	.key = "context", .title = "context (struct malloc_context):",
	.indent = 2, .label_width = 24 };
static const struct em_field F_AT = { .key = "addr", .label = "at:" };
static const struct em_field F_FROM = { .key = "from", .join = "  (by ", .post = ")" };
static const struct em_field F_SECRET = {
	.key = "secret", .label = "secret:", .form = EM_T_HEX };
static const struct em_field F_INIT = { .key = "init_done", .label = "init_done:" };
static const struct em_field F_COUNTER = {
	.key = "mmap_counter", .label = "mmap_counter:" };
static const struct em_field F_FREE_META = {
	.key = "free_meta_head", .label = "free_meta_head:", .none = "0" };
static const struct em_field F_AVAIL = {
	.key = "avail_meta", .label = "avail_meta:", .none = "0" };
static const struct em_field F_AVAIL_N = {
	.key = "avail_meta_count", .label = "avail_meta_count:" };
static const struct em_field F_AREA_N = {
	.key = "avail_meta_area_count", .label = "avail_meta_area_count:" };
static const struct em_field F_SHIFT = {
	.key = "meta_alloc_shift", .label = "meta_alloc_shift:" };
static const struct em_field F_HEAD = {
	.key = "meta_area_head", .label = "meta_area_head:", .none = "0" };
static const struct em_field F_TAIL = {
	.key = "meta_area_tail", .label = "meta_area_tail:", .none = "0" };
static const struct em_field F_AREAS = {
	.key = "avail_meta_areas", .label = "avail_meta_areas:", .none = "0" };
static const struct em_field F_SEQ = { .key = "seq", .label = "seq:" };
static const struct em_field F_BRK = {
	.key = "brk", .label = "brk:", .none = "0" };
static const struct em_field F_BRK_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };

static const struct em_field CLASS_COLS[] = {
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "slot", .label = "slot", .width = 8 },
	{ .key = "max", .label = "largest block", .width = 13 },
};
static const struct em_table CLASS_TABLE = {
	.key = "size_classes", .title = "size classes (musl's size_classes, x 16):",
	.cols = CLASS_COLS, .ncols = 3 };

static struct em_val addr_or_null(uint64_t a)
{
	return a ? ev_addr(a) : ev_null();
}

enum hw_status ng_report_params(void *state, struct hw_emitter *e)
{
	struct ng_state *ng = state;
	uint8_t c[NG_CTX_SIZE];
	memset(c, 0, sizeof c);
	bool have = hw_read(ng->t, ng->ctx, c, sizeof c);
	uint64_t q[10];
	uint32_t init;
	uint8_t seq = c[NG_CTX_SEQ];
	memcpy(&init, c + NG_CTX_INIT_DONE, 4);
	memcpy(&q[0], c + NG_CTX_AREA_COUNT, 8);
	memcpy(&q[1], c + NG_CTX_ALLOC_SHIFT, 8);
	memcpy(&q[2], c + NG_CTX_AVAIL_AREAS, 8);
	memcpy(&q[3], c + NG_CTX_BRK, 8);
	em_doc_begin(e);
	em_kv(e, &F_VERSION, ev_str("musl 1.2.1+ (mallocng)"));
	em_section_begin(e, &S_CTX);
	em_kv(e, &F_AT, ev_addr(ng->ctx));
	em_kv(e, &F_FROM, ev_str(ng->how));
	if (have) {
		em_kv(e, &F_SECRET, ev_u64(ng->secret));
		em_kv(e, &F_INIT, ev_u64(init));
		em_kv(e, &F_COUNTER, ev_u64(ng->mmap_counter));
		em_kv(e, &F_FREE_META, addr_or_null(ng->free_meta_head));
		em_kv(e, &F_AVAIL, addr_or_null(ng->avail_meta));
		em_kv(e, &F_AVAIL_N, ev_u64(ng->avail_meta_count));
		em_kv(e, &F_AREA_N, ev_u64(q[0]));
		em_kv(e, &F_SHIFT, ev_u64(q[1]));
		em_kv(e, &F_HEAD, addr_or_null(ng->area_head));
		em_kv(e, &F_TAIL, addr_or_null(ng->area_tail));
		em_kv(e, &F_AREAS, addr_or_null(q[2]));
		em_kv(e, &F_SEQ, ev_u64(seq));
		em_kv(e, &F_BRK, addr_or_null(q[3]));
		em_kv(e, &F_BRK_SAYS,
		      ev_str(!q[3] ? "(brk not used yet)"
			     : q[3] == UINT64_MAX ? "(brk failed: metas in mappings)"
						  : "(the end of the metas' brk)"));
	} else {
		em_note(e, "(the context is not in the core)");
	}
	em_section_end(e);
	em_table_begin(e, &CLASS_TABLE);
	for (unsigned k = 0; k < NG_NCLASSES; k++) {
		uint64_t slot = (uint64_t)NG_UNIT * ng_size_classes[k];
		const struct em_val v[] = {
			ev_u64(k), ev_u64(slot), ev_u64(slot - NG_IB),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}

enum hw_status ng_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid)
{
	(void)state, (void)tid;
	em_doc_begin(e);
	em_note(e, "mallocng has no thread caches: every thread allocates "
		"from the same groups under one lock (`bins` lists them by "
		"class)");
	em_doc_end(e);
	return HW_OK;
}
