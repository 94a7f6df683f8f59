/* bins.c - tcmalloc's `bins`: per size class, the free objects of each
 * kind of list (the thread caches', the central lists' transfer slots,
 * the spans' own); with --list every such list followed, entry by entry.
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

/* bins: per size class, the free objects of each kind of list.  */
static const struct em_field CLASS_COLS[] = {
	{ .key = "class", .label = "class", .width = 5 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "thread", .label = "thread caches", .width = 14 },
	{ .key = "transfer", .label = "transfer", .width = 9 },
	{ .key = "central", .label = "central", .width = 9 },
	{ .key = "bytes", .label = "free bytes", .width = 12,
	  .form = EM_T_HUMAN },
};
static const struct em_table CLASS_TABLE = {
	.key = "classes", .cols = CLASS_COLS, .ncols = 6 };

enum hw_status tc_report_bins(void *state, struct hw_emitter *e,
			      const char *kind)
{
	struct tc_state *tc = state;
	if (kind && strcmp(kind, "classes") != 0)
		return hw_error(tc->s, HW_USAGE, "bins: unknown kind '%s' "
				"(tcmalloc: classes)", kind);
	em_doc_begin(e);
	em_table_begin(e, &CLASS_TABLE);
	for (unsigned c = 1; c < tc->nclasses; c++) {
		uint64_t n = tc->thread_objects[c] + tc->transfer_objects[c] +
			     tc->central_objects[c];
		if (!n)
			continue;
		const struct em_val v[] = {
			ev_u64(c), ev_u64(tc->class_size[c]),
			ev_u64(tc->thread_objects[c]),
			ev_u64(tc->transfer_objects[c]),
			ev_u64(tc->central_objects[c]),
			ev_u64(n * tc->class_size[c]),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
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
			struct tc_freelist fl;
			if (tc_read_freelist(tc, c, cls, &fl))
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
