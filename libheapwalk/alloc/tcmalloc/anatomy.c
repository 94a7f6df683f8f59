/* anatomy.c - what tcmalloc keeps for one object, as `chunk ADDR` shows
 * it: its span (class, object size, where the span is, its refcount,
 * whether it was sampled), the object's index in the span, the kind of
 * list that holds it and, for a thread cache's, which cache and where
 * in its list.
 *
 * The span comes from the page map read at open; the thread cache's
 * list is followed afresh from the target, each step bounded by the
 * list's own length.
 */
#include <stdio.h>

#include "../../emit/emit.h"
#include "tcmalloc.h"

/* ---- chunk ADDR ------------------------------------------------------- */

static const struct em_section S_FIELDS = {
	.key = "fields", .title = "fields:", .indent = 2, .label_width = 10 };
static const struct em_field F_SPAN = { .key = "span", .label = "span:" };
static const struct em_field F_SPAN_SAYS = {
	.join = "  ", .only = EM_TEXT_ONLY };
static const struct em_field F_PAGES = { .key = "start", .label = "pages:" };
static const struct em_field F_BYTES = {
	.key = "span_size", .join = " + ", .form = EM_T_HEX };
static const struct em_field F_CLASS = { .key = "class", .only = EM_JSON_ONLY };
static const struct em_field F_OBJSIZE = {
	.key = "object_size", .only = EM_JSON_ONLY };
static const struct em_field F_LOCATION = {
	.key = "location", .only = EM_JSON_ONLY };
static const struct em_field F_REFCOUNT = {
	.key = "refcount", .only = EM_JSON_ONLY };
static const struct em_field F_SAMPLE = { .key = "sample", .only = EM_JSON_ONLY };
static const struct em_field F_OBJECT = {
	.key = "object", .label = "object:" };
static const struct em_field F_NOBJECTS = {
	.key = "objects", .join = " of ", .post = " objects" };
static const struct em_field F_HOLDER = {
	.key = "holder", .label = "held by:" };
static const struct em_field F_TC_THREAD = {
	.key = "tcache_thread", .join = " (thread ", .none = "?" };
static const struct em_field F_TC_ADDR = {
	.key = "tcache_addr", .join = "'s cache at " };
static const struct em_field F_TC_POS = {
	.key = "tcache_pos", .join = ", entry " };
static const struct em_field F_TC_COUNT = {
	.key = "tcache_count", .join = " of ", .post = ")" };

static const char *location_name(unsigned loc)
{
	return loc == 0 ? "in use" : loc == 1 ? "free (page heap)"
	       : loc == 2 ? "returned to the system" : "unknown";
}

static const char *holder_name(enum tc_holder h)
{
	switch (h) {
	case TC_IN_USE: return "in use (no free list holds it)";
	case TC_IN_SPAN: return "its span's own free list (central cache)";
	case TC_IN_TRANSFER: return "a central list's transfer slot";
	case TC_IN_THREAD: return "a thread cache's list";
	}
	return "?";
}

/* The thread cache list that holds addr: its cache and place.  */
static bool cached_at(struct tc_state *tc, uint64_t addr, unsigned cls,
		      size_t *cache, uint64_t *pos, uint64_t *count)
{
	for (size_t i = 0; i < tc->ncaches; i++) {
		struct tc_freelist fl;
		if (!tc_read_freelist(tc, &tc->caches[i], cls, &fl))
			continue;
		uint64_t at = fl.head;
		for (uint64_t k = 0; at && k < fl.length &&
				     k <= tc->class_slots[cls]; k++) {
			if (at == addr) {
				*cache = i;
				*pos = k + 1;
				*count = fl.length;
				return true;
			}
			if (!hw_read_u64(tc->t, at, &at))
				break;
		}
	}
	return false;
}

void tc_anatomy(void *state, const struct hw_chunk *c, struct hw_emitter *e)
{
	struct tc_state *tc = state;
	const struct tc_span *sp = tc_span_of(tc, c->chunk);
	em_section_begin(e, &S_FIELDS);
	if (!sp) {
		em_kv(e, &F_SPAN, ev_null());
		em_kv(e, &F_SPAN_SAYS, ev_str("(no span of the page map holds "
					      "it)"));
		em_section_end(e);
		return;
	}
	char says[160];
	if (sp->objsize)
		snprintf(says, sizeof says, "(its Span: class %u, %u-byte "
			 "objects, %s, refcount %u%s)", sp->cls, sp->objsize,
			 location_name(sp->location), sp->refcount,
			 sp->sample ? ", sampled" : "");
	else
		snprintf(says, sizeof says, "(its Span: one block, %s%s)",
			 location_name(sp->location),
			 sp->sample ? ", sampled" : "");
	em_kv(e, &F_SPAN, ev_addr(sp->desc));
	em_kv(e, &F_SPAN_SAYS, ev_str(says));
	em_kv(e, &F_PAGES, ev_addr(sp->addr));
	em_kv(e, &F_BYTES, ev_u64(sp->bytes));
	em_kv(e, &F_CLASS, ev_u64(sp->cls));
	em_kv(e, &F_OBJSIZE, ev_u64(sp->objsize));
	em_kv(e, &F_LOCATION, ev_str(location_name(sp->location)));
	em_kv(e, &F_REFCOUNT, ev_u64(sp->refcount));
	em_kv(e, &F_SAMPLE, ev_bool(sp->sample));
	if (!sp->objsize || sp->location || c->addr < sp->addr) {
		em_section_end(e);
		return;
	}
	uint64_t idx = (c->addr - sp->addr) / sp->objsize;
	em_kv(e, &F_OBJECT, ev_u64(idx));
	em_kv(e, &F_NOBJECTS, ev_u64(sp->bytes / sp->objsize));
	enum tc_holder h = tc->holders ? tc_holder_of(tc, sp->slot + idx)
				       : TC_IN_USE;
	em_kv(e, &F_HOLDER, ev_str(holder_name(h)));
	size_t cache;
	uint64_t pos, count;
	if (h == TC_IN_THREAD &&
	    cached_at(tc, c->addr, sp->cls, &cache, &pos, &count)) {
		const struct tc_thread_cache *tcache = &tc->caches[cache];
		em_kv(e, &F_TC_THREAD, tcache->tid ? ev_i64(tcache->tid)
						   : ev_null());
		em_kv(e, &F_TC_ADDR, ev_addr(tcache->addr));
		em_kv(e, &F_TC_POS, ev_u64(pos));
		em_kv(e, &F_TC_COUNT, ev_u64(count));
	}
	em_section_end(e);
}
