/* anatomy.c - what `chunk ADDR` shows of a mallocng block: its group
 * and meta (class, slot size, slots, the masks), the slot's index and
 * state by the masks, and the in-band header before the block decoded
 * (offset, index, reserved code and bytes, the check byte).
 *
 * The group and its masks are the ones read at open (groups.c finds the
 * innermost group holding the block); the header is read afresh, the
 * block may be the damaged one the user is looking at.
 */
#include <stdio.h>
#include <string.h>

#include "../../emit/emit.h"
#include "mallocng.h"

static const struct em_section S_FIELDS = {
	.key = "fields", .title = "fields:", .indent = 2, .label_width = 12 };
static const struct em_field F_GROUP = { .key = "group", .label = "group:" };
static const struct em_field F_GROUP_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_META = { .key = "meta", .label = "meta:" };
static const struct em_field F_CLASS = { .key = "class", .label = "class:" };
static const struct em_field F_STRIDE = {
	.key = "slot_size", .label = "slot size:" };
static const struct em_field F_INDEX = { .key = "slot", .label = "slot:" };
static const struct em_field F_SLOTS = {
	.key = "slots", .join = " of ", .only = EM_BOTH };
static const struct em_field F_AVAIL = {
	.key = "avail_mask", .label = "avail_mask:", .form = EM_T_HEX };
static const struct em_field F_FREED = {
	.key = "freed_mask", .label = "freed_mask:", .form = EM_T_HEX };
static const struct em_field F_ACTIVE = {
	.key = "active_idx", .label = "active_idx:" };
static const struct em_field F_MAPLEN = {
	.key = "maplen", .label = "maplen:", .post = " x 4 KiB" };
static const struct em_field F_FREEABLE = {
	.key = "freeable", .label = "freeable:" };
static const struct em_field F_NESTED = {
	.key = "nested_in", .label = "nested in:", .none = "-" };
static const struct em_field F_HEADER = {
	.key = "header", .label = "header:" };
static const struct em_field F_OFFSET = {
	.key = "offset", .label = "offset:", .post = " x 16 from the slots" };
static const struct em_field F_HDR_INDEX = {
	.key = "header_index", .label = "index:" };
static const struct em_field F_RESERVED = {
	.key = "reserved_code", .label = "reserved:" };
static const struct em_field F_RESERVED_BYTES = {
	.key = "reserved", .join = ", bytes ", .only = EM_BOTH };
static const struct em_field F_CHECK = {
	.key = "check_byte", .label = "check byte:" };

void ng_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e)
{
	struct ng_state *ng = state;
	uint32_t gi = ng_group_of(ng, c->chunk);
	em_section_begin(e, &S_FIELDS);
	if (gi == NG_NONE) {
		em_kv(e, &F_GROUP, ev_null());
		em_kv(e, &F_GROUP_SAYS, ev_str("(no meta names a group "
					       "holding it)"));
		em_section_end(e);
		return;
	}
	const struct ng_group *g = &ng->groups[gi];
	unsigned i = (unsigned)((c->chunk - g->mem - NG_GROUP_HDR) / g->stride);
	char says[96];
	snprintf(says, sizeof says, "(%s%s)",
		 (g->avail | g->freed) >> i & 1
			 ? g->avail >> i & 1 ? "free, avail_mask"
					     : "free, freed_mask"
			 : "in use",
		 i > g->active_idx ? ", above active_idx: never used" : "");
	em_kv(e, &F_GROUP, ev_addr(g->mem));
	em_kv(e, &F_GROUP_SAYS, ev_str(says));
	em_kv(e, &F_META, ev_addr(g->meta));
	em_kv(e, &F_CLASS, ev_u64(g->sizeclass));
	em_kv(e, &F_STRIDE, ev_u64(g->stride));
	em_kv(e, &F_INDEX, ev_u64(i));
	em_kv(e, &F_SLOTS, ev_u64(g->last_idx + 1u));
	em_kv(e, &F_AVAIL, ev_u64(g->avail));
	em_kv(e, &F_FREED, ev_u64(g->freed));
	em_kv(e, &F_ACTIVE, ev_u64(g->active_idx));
	em_kv(e, &F_MAPLEN, ev_u64(g->maplen));
	em_kv(e, &F_FREEABLE, ev_bool(g->freeable));
	em_kv(e, &F_NESTED, g->parent != NG_NONE
				    ? ev_addr(ng->groups[g->parent].mem)
				    : ev_null());
	uint8_t h[4];
	if (!c->used || !hw_read(ng->t, c->addr - NG_IB, h, sizeof h)) {
		em_section_end(e);
		return;
	}
	uint16_t off;
	memcpy(&off, h + 2, 2);
	unsigned code = h[1] >> 5;
	uint64_t end = c->chunk + g->stride - NG_IB;
	em_kv(e, &F_HEADER, ev_addr(c->addr - NG_IB));
	em_kv(e, &F_OFFSET, ev_u64(off));
	em_kv(e, &F_HDR_INDEX, ev_u64(h[1] & 31));
	em_kv(e, &F_RESERVED, ev_u64(code));
	em_kv(e, &F_RESERVED_BYTES,
	      ev_u64(end > c->addr + c->size ? end - c->addr - c->size : 0));
	em_kv(e, &F_CHECK, ev_u64(h[0]));
	em_section_end(e);
}
