/* views.c - tcmalloc's side of the heap debuggers' views: `tcache`
 * (each thread cache's free lists), `bins --list` (every free list
 * followed: the thread caches', the central lists' transfer slots, the
 * spans' own) and `chunk ADDR`'s fields (the span, the object's index,
 * the list that holds it).
 *
 * Lists are followed afresh from the target, as tcmalloc follows them
 * (an object's first word links to the next), each step checked: an
 * entry must be an object of the list's class, and a list ends at NULL,
 * at its own count, or at a link that breaks it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "../listrows.h"
#include "tcmalloc.h"

/* A thread cache's list of one class: ThreadCache::FreeList.  */
struct freelist {
	uint64_t head;
	uint32_t length, lowater, max_length;
};

static bool read_freelist(struct tc_state *tc, const struct tc_thread_cache *c,
			  unsigned cls, struct freelist *fl)
{
	uint8_t b[24];
	if (!hw_read(tc->t, c->addr + TC_FREELIST_STRIDE * (uint64_t)cls, b,
		     sizeof b))
		return false;
	memcpy(&fl->head, b, 8);
	memcpy(&fl->length, b + 8, 4);
	memcpy(&fl->lowater, b + 12, 4);
	memcpy(&fl->max_length, b + 16, 4);
	return true;
}

static bool is_object_of(const struct tc_state *tc, uint64_t addr,
			 unsigned cls)
{
	const struct tc_span *sp = tc_span_of(tc, addr);
	return sp && sp->cls == cls && !sp->location && tc_is_object(sp, addr);
}

/* A list of class cls from head, at most max entries long: its entries
   into out[cap] (all of them counted in the return); *why says how it
   broke, NULL when it ended at NULL or at max.  */
struct list {
	uint64_t *v;
	size_t n, cap;
	uint64_t bad;
	const char *why;
};

static void follow(struct tc_state *tc, uint64_t head, unsigned cls,
		   uint64_t max, struct list *l)
{
	l->n = 0;
	l->bad = 0;
	l->why = NULL;
	if (max > tc->class_slots[cls])
		max = tc->class_slots[cls];
	for (uint64_t at = head; at; ) {
		if (l->n == max) {
			l->bad = at;
			l->why = "past the list's count: not followed further";
			return;
		}
		if (!is_object_of(tc, at, cls)) {
			l->bad = at;
			l->why = "no object of this class: the list breaks here";
			return;
		}
		if (l->n < l->cap)
			l->v[l->n] = at;
		l->n++;
		if (!hw_read_u64(tc->t, at, &at)) {
			l->bad = at;
			l->why = "not in the target: the list breaks here";
			return;
		}
	}
}

static bool list_init(struct tc_state *tc, struct list *l)
{
	uint64_t most = 0;
	for (unsigned c = 1; c < tc->nclasses; c++)
		if (tc->class_slots[c] > most)
			most = tc->class_slots[c];
	l->cap = most < ((size_t)1 << 24) ? (size_t)most + 1 : (size_t)1 << 24;
	l->v = malloc(l->cap * sizeof *l->v);
	return l->v != NULL;
}

static void list_rows(struct hw_emitter *e, const struct list *l)
{
	hw_list_rows(e, l->v, l->n < l->cap ? l->n : l->cap, l->bad, l->why);
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
			struct freelist fl;
			if (!read_freelist(tc, c, cls, &fl) ||
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

/* ---- bins --list ------------------------------------------------------ */

/* A row per list that holds anything: its kind (thread, transfer,
   central: a span's own), what owns it, its class, its count as its
   owner keeps it, and the entries.  */
static const struct em_field LIST_COLS[] = {
	{ .key = "kind", .label = "kind", .width = -9 },
	{ .key = "thread", .only = EM_JSON_ONLY },
	{ .key = "owner", .label = "owner", .width = -24 },
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "count", .label = "count", .width = 7, .none = "?" },
	{ .key = "listed", .label = "listed", .width = 7 },
	/* How the list ended ("end" or "broken"), and where it broke.  */
	{ .key = "list_end", .only = EM_JSON_ONLY },
	{ .key = "list_broken_at", .only = EM_JSON_ONLY },
};
static const struct em_table LIST_TABLE = {
	.key = "lists", .cols = LIST_COLS, .ncols = 9 };

enum { K_THREAD = 1, K_TRANSFER = 2, K_CENTRAL = 4 };

static void list_row(struct tc_state *tc, struct hw_emitter *e,
		     const char *kind, int tid, const char *owner,
		     unsigned cls, const struct em_val count, uint64_t head,
		     uint64_t max, struct list *l)
{
	follow(tc, head, cls, max, l);
	if (!l->n && !l->why)
		return;
	const struct em_val v[] = {
		ev_str(kind), tid > 0 ? ev_i64(tid) : ev_absent(),
		ev_str(owner), ev_u64(cls), ev_u64(tc->class_size[cls]), count,
		ev_u64(l->n), ev_str(l->why ? "broken" : "end"),
		l->why ? ev_addr(l->bad) : ev_absent() };
	em_row_open(e, v);
	list_rows(e, l);
	em_row_close(e);
}

enum hw_status tc_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind)
{
	struct tc_state *tc = state;
	unsigned want = K_THREAD | K_TRANSFER | K_CENTRAL;
	if (kind) {
		if (!strcmp(kind, "classes")) want = K_THREAD | K_TRANSFER |
						    K_CENTRAL;
		else if (!strcmp(kind, "thread") || !strcmp(kind, "tcache"))
			want = K_THREAD;
		else if (!strcmp(kind, "transfer")) want = K_TRANSFER;
		else if (!strcmp(kind, "central")) want = K_CENTRAL;
		else
			return hw_error(tc->s, HW_USAGE, "bins: unknown kind "
					"'%s' (tcmalloc --list: thread (or "
					"tcache), transfer, central)", kind);
	}
	struct list l = { 0 };
	if (!list_init(tc, &l))
		return hw_error(tc->s, HW_BAD_TARGET, "out of memory");
	char owner[64];
	em_doc_begin(e);
	em_table_begin(e, &LIST_TABLE);
	for (size_t i = 0; (want & K_THREAD) && i < tc->ncaches; i++) {
		const struct tc_thread_cache *c = &tc->caches[i];
		if (c->tid)
			snprintf(owner, sizeof owner, "tid %d", c->tid);
		else
			snprintf(owner, sizeof owner, "0x%llx",
				 (unsigned long long)c->addr);
		for (unsigned cls = 1; cls < tc->nclasses; cls++) {
			struct freelist fl;
			if (read_freelist(tc, c, cls, &fl))
				list_row(tc, e, "thread", c->tid, owner, cls,
					 ev_u64(fl.length), fl.head, fl.length,
					 &l);
		}
	}
	for (unsigned cls = 1; (want & K_TRANSFER) && cls < tc->nclasses;
	     cls++) {
		uint64_t central = tc->central + (uint64_t)cls * TC_CENTRAL_STRIDE;
		uint32_t used = 0;
		if (!hw_read_u32(tc->t, central + TC_CENTRAL_USED_SLOTS, &used))
			continue;
		for (uint32_t k = 0; k < used && k < TC_TRANSFER_SLOTS; k++) {
			uint64_t head;
			if (!hw_read_u64(tc->t, central + TC_CENTRAL_SLOTS + 16 *
					 (uint64_t)k, &head))
				continue;
			snprintf(owner, sizeof owner, "slot %u", k);
			list_row(tc, e, "transfer", 0, owner, cls,
				 ev_u64(tc->class_move[cls]), head,
				 tc->class_move[cls], &l);
		}
	}
	for (size_t i = 0; (want & K_CENTRAL) && i < tc->nspans; i++) {
		const struct tc_span *sp = &tc->spans[i];
		uint64_t head;
		if (!sp->objsize || sp->location ||
		    !hw_read_u64(tc->t, sp->desc + TC_SPAN_OBJECTS, &head))
			continue;
		snprintf(owner, sizeof owner, "span 0x%llx",
			 (unsigned long long)sp->addr);
		list_row(tc, e, "central", 0, owner, sp->cls, ev_null(), head,
			 sp->bytes / sp->objsize, &l);
	}
	em_table_end(e);
	em_doc_end(e);
	free(l.v);
	return HW_OK;
}

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
		struct freelist fl;
		if (!read_freelist(tc, &tc->caches[i], cls, &fl))
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
