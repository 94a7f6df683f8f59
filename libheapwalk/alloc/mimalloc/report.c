/* report.c - mimalloc's own part of the reports: `summary`'s lines
 * (where it lives, how its segments were found, the main heap and its
 * key, segments, pages and heaps) and `arenas` (its heaps: each
 * thread's, with the thread that owns it, and the pages of exited
 * threads).  bins.c has `bins`; params.c `mp` and `tcache`.
 *
 * Every figure but the `own` lines is counted from the segments and
 * pages.  mimalloc keeps counters of its own even in a release build
 * (2.x: its OS memory, segments, pages and threads; 3.6: the bytes in
 * blocks too); those of 3.2 on are read (v3.c) and shown as its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "mimalloc.h"

int64_t mi_heap_tid(const struct mi_state *mi, const struct mi_heap *h)
{
	/* mimalloc's thread id is the thread pointer (x86_64) or the word
	   it points at (aarch64: the TCB's first word).  */
	for (size_t i = 0; i < mi->t->nthreads; i++) {
		const struct hw_thread *th = &mi->t->threads[i];
		uint64_t w;
		if (!th->has_tp)
			continue;
		if (th->tp == h->thread_id ||
		    (hw_read_u64(mi->t, th->tp, &w) && w == h->thread_id))
			return th->tid;
	}
	return -1;
}

int32_t mi_thread_arena(void *state, int64_t tid, const char **why)
{
	struct mi_state *mi = state;
	for (uint32_t k = 0; k < mi->nheaps; k++)
		if (mi->heaps[k].backing && mi_heap_tid(mi, &mi->heaps[k]) == tid)
			return (int32_t)k;
	*why = "no heap of mimalloc's names it: it has not allocated, or "
	       "its heap is not in the core";
	return -1;
}

static const struct em_section MI_SUMMARY = { .indent = 2, .label_width = 22 };
static const struct em_field F_MODULE = { .key = "module", .label = "module:" };
static const struct em_field F_LAYOUT = {
	.key = "layout", .label = "layout:" };
static const struct em_field F_ENCODED = {
	.key = "encoded_free_lists", .join = ", free lists ", .yes = "encoded",
	.no = "plain" };
static const struct em_field F_SEGMENTS = {
	.key = "segments", .label = "segments:" };
static const struct em_field F_HUGE = {
	.key = "huge_segments", .join = ", ", .post = " huge" };
static const struct em_field F_ABANDONED = {
	.key = "abandoned_segments", .join = ", ", .post = " abandoned" };
static const struct em_field F_SEG_FROM = {
	.key = "segments_from", .join = " (by ", .post = ")" };
static const struct em_field F_REJECTED = {
	.key = "segments_rejected", .label = "other segments:",
	.post = " with another cookie, not walked" };
static const struct em_field F_MAIN = {
	.key = "main_heap", .label = "main heap:", .none = "not found" };
static const struct em_field F_KEY = {
	.key = "main_cookie", .label = "main cookie:",
	.none = "none read (3.6: not where a cookie would be)" };
static const struct em_field F_PAGES = { .key = "pages", .label = "pages:" };
static const struct em_field F_FULL = {
	.key = "full_pages", .join = ", ", .post = " full" };
static const struct em_field F_SPANS = {
	.key = "free_slices", .join = ", ", .post = " free slices" };
static const struct em_field F_HEAPS = { .key = "heaps", .label = "heaps:" };
static const struct em_field F_DELAYED = {
	.key = "delayed_blocks", .join = ", ",
	.post = " blocks on their delayed-free lists" };
static const struct em_field F_HELD = {
	.key = "segment_bytes", .label = "segment memory:", .form = EM_T_HUMAN };
static const struct em_field F_NOTE = {
	.key = "statistics", .label = "statistics:" };
static const struct em_field F_OWN_RESERVED = {
	.key = "own_reserved", .label = "own memory:", .pre = "reserved ",
	.form = EM_T_HUMAN };
static const struct em_field F_OWN_COMMITTED = {
	.key = "own_committed", .join = ", committed ", .form = EM_T_HUMAN };
static const struct em_field F_OWN_COMMITTED_PEAK = {
	.key = "own_committed_peak", .join = " (peak ", .post = ")",
	.form = EM_T_HUMAN };
static const struct em_field F_OWN_THREADS = {
	.key = "own_threads", .label = "own threads:" };
static const struct em_field F_OWN_ARENAS = {
	.key = "own_arenas", .join = ", ", .post = " arenas made" };
static const struct em_field F_OWN_PAGES = {
	.key = "own_pages", .label = "own, merged:", .post = " pages" };
static const struct em_field F_OWN_PAGES_PEAK = {
	.key = "own_pages_peak", .join = " (peak ", .post = ")" };
static const struct em_field F_OWN_ABANDONED = {
	.key = "own_pages_abandoned", .join = ", ", .post = " abandoned" };
static const struct em_field F_OWN_ALLOCATED = {
	.key = "own_allocated", .join = ", allocated ", .form = EM_T_HUMAN };
static const struct em_field F_OWN_ALLOCATED_PEAK = {
	.key = "own_allocated_peak", .join = " (peak ", .post = ")",
	.form = EM_T_HUMAN };

/* mimalloc's own counters, where v3.c read them.  */
static void own_stats(const struct mi_state *mi, struct hw_emitter *e)
{
	const struct mi_own_stats *st = &mi->stats;
	char note[200];
	if (!st->read) {
		em_kv(e, &F_NOTE, ev_str(mi->stats_why ? mi->stats_why
					 : "not read: every figure is counted "
					   "from the segments and pages"));
		return;
	}
	/* (The subprocess counts its memory and threads as they change;
	   a thread counts its pages and blocks in its own theap, which
	   mimalloc merges into the heap when it visits or prints the heap
	   or the thread exits: the heaps' counts are as of the last
	   merge.)  */
	snprintf(note, sizeof note, "mimalloc's own (MI_STAT_VERSION %u), "
		 "from its subprocess and %u heap%s; pages and bytes as its "
		 "threads last merged them", st->version, st->copies - 1,
		 st->copies == 2 ? "" : "s");
	em_kv(e, &F_NOTE, ev_str(note));
	em_kv(e, &F_OWN_RESERVED, ev_i64(st->reserved[MI_ST_CURRENT]));
	em_kv(e, &F_OWN_COMMITTED, ev_i64(st->committed[MI_ST_CURRENT]));
	em_kv(e, &F_OWN_COMMITTED_PEAK, ev_i64(st->committed[MI_ST_PEAK]));
	em_kv(e, &F_OWN_THREADS, ev_i64(st->threads[MI_ST_CURRENT]));
	em_kv(e, &F_OWN_ARENAS, ev_i64(st->arenas));
	em_kv(e, &F_OWN_PAGES, ev_i64(st->pages[MI_ST_CURRENT]));
	em_kv(e, &F_OWN_PAGES_PEAK, ev_i64(st->pages[MI_ST_PEAK]));
	em_kv(e, &F_OWN_ABANDONED, ev_i64(st->abandoned[MI_ST_CURRENT]));
	if (st->has_allocated) {
		em_kv(e, &F_OWN_ALLOCATED, ev_i64(st->allocated[MI_ST_CURRENT]));
		em_kv(e, &F_OWN_ALLOCATED_PEAK,
		      ev_i64(st->allocated[MI_ST_PEAK]));
	}
}

void mi_report_summary(void *state, struct hw_emitter *e)
{
	struct mi_state *mi = state;
	uint64_t huge = 0, abandoned = 0, full = 0, pages = 0, spans = 0;
	uint64_t delayed = 0;
	for (uint32_t i = 0; i < mi->nsegments; i++) {
		huge += mi->segments[i].kind == MI_SEGMENT_HUGE;
		/* (3.x's arenas belong to no thread.)  */
		abandoned += !mi->v3 && !mi->segments[i].thread_id;
		spans += mi->segments[i].free_slices;
	}
	for (uint32_t i = 0; i < mi->npages; i++) {
		pages += mi->pages[i].block_size != 0;
		full += mi->pages[i].block_size && (mi->pages[i].flags & 1);
	}
	for (uint32_t k = 0; k < mi->nheaps; k++)
		delayed += mi->heaps[k].ndelayed;
	em_section_begin(e, &MI_SUMMARY);
	em_kv(e, &F_MODULE, ev_str(mi->home ? mi->home : ""));
	em_kv(e, &F_LAYOUT, ev_str(mi->L->releases));
	em_kv(e, &F_ENCODED, ev_bool(mi->L->encoded));
	em_kv(e, &F_SEGMENTS, ev_u64(mi->nsegments));
	em_kv(e, &F_HUGE, ev_u64(huge));
	em_kv(e, &F_ABANDONED, ev_u64(abandoned));
	em_kv(e, &F_SEG_FROM, ev_str(mi->how));
	if (mi->rejected)
		em_kv(e, &F_REJECTED, ev_u64(mi->rejected));
	em_kv(e, &F_MAIN, ev_addr_or_null(mi->main_heap));
	/* (A bit pattern: a "0x..." string, as addresses are, not a number
	   past what JSON readers hold exactly.)  */
	em_kv(e, &F_KEY, mi->key || !mi->v3 ? ev_addr(mi->key) : ev_null());
	em_kv(e, &F_PAGES, ev_u64(pages));
	em_kv(e, &F_FULL, ev_u64(full));
	em_kv(e, &F_SPANS, ev_u64(spans));
	em_kv(e, &F_HEAPS, ev_u64(mi->nheaps));
	em_kv(e, &F_DELAYED, ev_u64(delayed));
	em_kv(e, &F_HELD, ev_u64(mi->held));
	own_stats(mi, e);
	em_section_end(e);
}

/* arenas: mimalloc's heaps, then the pages no heap owns.  */
static const struct em_field HEAP_COLS[] = {
	{ .key = "arena", .label = "arena", .width = 5 },
	{ .key = "heap", .label = "heap", .width = -18, .form = EM_T_HEX0,
	  .digits = 16, .none = "-" },
	{ .key = "tid", .label = "tid", .width = 7, .none = "-" },
	{ .key = "kind", .label = "kind", .width = -9 },
	{ .key = "tag", .label = "tag", .width = -8, .none = "-" },
	{ .key = "pages", .label = "pages", .width = 6 },
	{ .key = "used", .label = "used", .width = 9 },
	{ .key = "free", .label = "free", .width = 9 },
	{ .key = "used_bytes", .label = "in use", .width = 11,
	  .form = EM_T_HUMAN },
	{ .key = "delayed", .label = "delayed", .width = 7 },
};
static const struct em_table HEAP_TABLE = {
	.key = "heaps", .cols = HEAP_COLS, .ncols = 10 };

/* A heap's tag, by the name CPython gives it where the layout is
   CPython's copy (Include/internal/pycore_mimalloc.h: its four heaps a
   thread state), else as a number.  */
static struct em_val heap_tag(const struct mi_state *mi,
			      const struct mi_heap *h, char *buf, size_t len)
{
	static const char *const cpython[] = { "mem", "object", "gc",
					       "gc_pre" };
	if (!h || h->tag < 0)
		return ev_null();
	if (!strncmp(mi->L->releases, "CPython", 7) && h->tag < 4)
		return ev_str(cpython[h->tag]);
	snprintf(buf, len, "%d", h->tag);
	return ev_str(buf);
}

static const char *heap_kind(const struct mi_heap *h)
{
	return h->main ? "main" : h->own ? "own" : h->backing ? "thread"
							    : "heap";
}

enum hw_status mi_report_arenas(void *state, struct hw_emitter *e)
{
	struct mi_state *mi = state;
	uint32_t n = mi->nheaps + 1;
	uint64_t *sum = calloc((size_t)n * 4, sizeof *sum);
	if (!sum)
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	for (uint32_t i = 0; i < mi->npages; i++) {
		const struct mi_page *pg = &mi->pages[i];
		if (!pg->block_size)
			continue;
		uint32_t k = pg->heap_index >= 0 ? (uint32_t)pg->heap_index
						 : mi->nheaps;
		uint64_t free = (uint64_t)pg->nfree + pg->nlocal + pg->nthread;
		uint64_t used = pg->capacity > free ? pg->capacity - free : 0;
		sum[4 * k] += 1;
		sum[4 * k + 1] += used;
		sum[4 * k + 2] += free;
		sum[4 * k + 3] += used * pg->block_size;
	}
	char h[32];
	em_doc_begin(e);
	em_notef(e, "%u heaps; %u segments, %s", mi->nheaps, mi->nsegments,
		 hw_human(h, sizeof h, mi->held));
	em_table_begin(e, &HEAP_TABLE);
	for (uint32_t k = 0; k < n; k++) {
		const struct mi_heap *hp = k < mi->nheaps ? &mi->heaps[k] : NULL;
		if (!hp && !sum[4 * k])
			continue;
		int64_t tid = hp ? mi_heap_tid(mi, hp) : -1;
		char tag[8];
		const struct em_val v[] = {
			ev_u64(k), hp ? ev_addr(hp->addr) : ev_null(),
			tid >= 0 ? ev_u64((uint64_t)tid) : ev_null(),
			ev_str(hp ? heap_kind(hp) : "abandoned"),
			heap_tag(mi, hp, tag, sizeof tag),
			ev_u64(sum[4 * k]), ev_u64(sum[4 * k + 1]),
			ev_u64(sum[4 * k + 2]), ev_u64(sum[4 * k + 3]),
			ev_u64(hp ? hp->ndelayed : 0),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	free(sum);
	return HW_OK;
}
