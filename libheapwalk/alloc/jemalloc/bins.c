/* bins.c - jemalloc's bins report: the slabs of each (arena, small size
 * class), the large extents of each class, the thread caches; with
 * --list each one's members: a class's slabs that have free regions,
 * its large extents, each tcache bin's stack in the order malloc takes
 * from it.  In the terms of malloc_stats_print (curregs, curslabs,
 * curlextents, utilisation).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "../listrows.h"
#include "jemalloc.h"

struct bin_row {
	uint32_t arena, szind;
	uint64_t slabs, nregs_total, curregs, cached, large;
};

static int bin_row_cmp(const void *a, const void *b)
{
	const struct bin_row *x = a, *y = b;
	if (x->szind != y->szind)
		return x->szind < y->szind ? -1 : 1;
	return x->arena < y->arena ? -1 : x->arena > y->arena;
}

static int by_key(const void *a, const void *b)
{
	const struct bin_row *x = a, *y = b;
	if (x->arena != y->arena)
		return x->arena < y->arena ? -1 : 1;
	return x->szind < y->szind ? -1 : x->szind > y->szind;
}

/* One row per (arena, szind) with active extents, sorted by size class.  */
static struct bin_row *bin_rows(const struct je_state *j, size_t *nrows)
{
	struct bin_row *v = calloc(j->next ? j->next : 1, sizeof *v);
	if (!v)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < j->next; i++) {
		const struct je_extent *x = &j->ext[i];
		if (x->state != JE_ACTIVE)
			continue;
		struct bin_row *r = &v[n++];
		r->arena = x->arena;
		r->szind = x->szind;
		r->slabs = x->slab;
		r->nregs_total = x->slab ? x->nregs : 0;
		r->curregs = x->slab ? x->used : 0;
		r->large = !x->slab;
		r->cached = x->ncached;
	}
	if (n)
		qsort(v, n, sizeof *v, by_key);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].arena == v[i].arena &&
		    v[k - 1].szind == v[i].szind) {
			v[k - 1].slabs += v[i].slabs;
			v[k - 1].nregs_total += v[i].nregs_total;
			v[k - 1].curregs += v[i].curregs;
			v[k - 1].cached += v[i].cached;
			v[k - 1].large += v[i].large;
			continue;
		}
		v[k++] = v[i];
	}
	if (k)
		qsort(v, k, sizeof *v, bin_row_cmp);
	*nrows = k;
	return v;
}

/* bins: the slabs of each small size class, the large extents, the
   thread caches; KIND keeps one of the three tables.  */
static const struct em_field SMALL_COLS[] = {
	{ .key = "arena", .label = "arena", .width = 5 },
	{ .key = "bin", .label = "bin", .width = 4 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "nregs", .label = "nregs", .width = 6 },
	{ .key = "slab_size", .label = "slab_size", .width = 9 },
	{ .key = "slabs", .label = "slabs", .width = 8 },
	{ .key = "curregs", .label = "curregs", .width = 10 },
	{ .key = "cached", .label = "tcached", .width = 10 },
	{ .key = "free", .label = "free", .width = 10 },
	{ .key = "util", .label = "util", .width = 6, .form = EM_T_FIXED,
	  .prec = 3, .json_prec = 3 },
};
static const struct em_table SMALL_TABLE = {
	.key = "bins", .cols = SMALL_COLS, .ncols = 10 };
static const struct em_field LARGE_COLS[] = {
	{ .key = "arena", .label = "arena", .width = 5 },
	{ .key = "szind", .label = "szind", .width = 6 },
	{ .key = "size", .label = "size", .width = 12 },
	{ .key = "curlextents", .label = "curlextents", .width = 12 },
	{ .key = "cached", .label = "tcached", .width = 10 },
};
static const struct em_table LARGE_TABLE = {
	.key = "large", .cols = LARGE_COLS, .ncols = 5 };
static const struct em_field TCACHE_COLS[] = {
	{ .key = "addr", .label = "tcache", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "thread", .label = "tid", .width = 8, .none = "?" },
	{ .key = "bins", .label = "bins", .width = 6 },
	{ .key = "cached", .label = "cached", .width = 10 },
	{ .key = "bytes", .label = "bytes", .width = 12, .form = EM_T_HUMAN },
};
static const struct em_table TCACHE_TABLE = {
	.key = "tcaches", .cols = TCACHE_COLS, .ncols = 5 };

/* --list: a class's current slab and its other slabs with free
   regions, in address order, or its large extents; JSON has them all,
   text a line of the first ones.  */
#define LIST_TEXT_MAX 8
static const struct em_field SLAB_LIST_COLS[] = {
	{ .key = "addr" }, { .key = "free" }, { .key = "current" } };
static const struct em_table SLAB_LIST = {
	.key = "list", .cols = SLAB_LIST_COLS, .ncols = 3,
	.only = EM_JSON_ONLY };
static const struct em_field EXTENT_LIST_COLS[] = {
	{ .key = "addr" }, { .key = "extent" } };
static const struct em_table EXTENT_LIST = {
	.key = "list", .cols = EXTENT_LIST_COLS, .ncols = 2,
	.only = EM_JSON_ONLY };
static const struct em_field LINE_COLS[] = { { .pre = "    " } };
static const struct em_table LINE = {
	.cols = LINE_COLS, .ncols = 1, .flags = EM_TB_NO_HEADER,
	.only = EM_TEXT_ONLY };

static int by_class_addr(const void *a, const void *b)
{
	const struct je_extent *x = *(const struct je_extent *const *)a;
	const struct je_extent *y = *(const struct je_extent *const *)b;
	if (x->arena != y->arena)
		return x->arena < y->arena ? -1 : 1;
	if (x->szind != y->szind)
		return x->szind < y->szind ? -1 : 1;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* The active extents by (arena, szind, address); NULL when out of
   memory.  */
static const struct je_extent **class_index(const struct je_state *j,
					    size_t *n)
{
	const struct je_extent **v = malloc((j->next ? j->next : 1) *
					    sizeof *v);
	if (!v)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < j->next; i++)
		if (j->ext[i].state == JE_ACTIVE)
			v[k++] = &j->ext[i];
	qsort(v, k, sizeof *v, by_class_addr);
	*n = k;
	return v;
}

/* The text line of a class's members, built a member at a time.  */
struct list_line {
	char buf[LIST_TEXT_MAX * 48 + 96];
	size_t len, shown;
	bool after_current;          /* the last entry was a current slab */
};

/* Append to the line; what does not fit is cut (the line's room is
   enough for LIST_TEXT_MAX entries and the tail).  */
__attribute__((format(printf, 2, 3)))
static void line_printf(struct list_line *l, const char *fmt, ...)
{
	if (l->len >= sizeof l->buf - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->buf + l->len, sizeof l->buf - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof l->buf - l->len
			  ? (size_t)n : sizeof l->buf - 1 - l->len;
}

/* An entry: "[current ]0xADDR[ (N free)]", the first LIST_TEXT_MAX
   only.  */
static void line_add(struct list_line *l, bool current, uint64_t addr,
		     bool with_free, unsigned nfree)
{
	if (l->shown++ >= LIST_TEXT_MAX)
		return;
	line_printf(l, "%s%s0x%llx", l->shown == 1 ? ""
		    : l->after_current ? "; " : ", ",
		    current ? "current " : "", (unsigned long long)addr);
	if (with_free)
		line_printf(l, " (%u free)", nfree);
}

/* A slab of the list: JSON's row, text's entry.  current: 1, 0 or -1
   (unknown: no "current" member).  */
static void slab_member(struct hw_emitter *e, struct list_line *l,
			const struct je_extent *x, int current)
{
	const struct em_val cells[] = {
		ev_addr(x->base), ev_u64(x->nregs - x->used),
		current < 0 ? ev_absent() : ev_bool(current == 1) };
	em_row(e, cells);
	line_add(l, current == 1, x->base, true, x->nregs - x->used);
	l->after_current = current == 1;
}

/* The members of row r's class in v (class_index): the run of its
   extents.  A class's current slab comes first (what its next
   allocation takes from), full or not; then the others with free
   regions.  */
static void class_list(struct je_state *j, struct hw_emitter *e,
		       const struct bin_row *r,
		       const struct je_extent *const *v, size_t n)
{
	size_t from = 0, hi = n;
	while (from < hi) {  /* the first extent of (arena, szind) or after */
		size_t mid = from + (hi - from) / 2;
		if (v[mid]->arena < r->arena || (v[mid]->arena == r->arena &&
						 v[mid]->szind < r->szind))
			from = mid + 1;
		else
			hi = mid;
	}
	size_t to = from;
	while (to < n && v[to]->arena == r->arena && v[to]->szind == r->szind)
		to++;
	bool slabs = r->slabs != 0;
	struct list_line l = { .len = 0 };
	size_t full = 0;
	em_table_begin(e, slabs ? &SLAB_LIST : &EXTENT_LIST);
	if (slabs) {
		/* -1 for every slab of an arena whose bins were not
		   found.  */
		int known = from < to ? je_is_slabcur(j, v[from]) : 0;
		for (size_t i = from; known >= 0 && i < to; i++)
			if (je_is_slabcur(j, v[i]) == 1)
				slab_member(e, &l, v[i], 1);
		for (size_t i = from; i < to; i++) {
			const struct je_extent *x = v[i];
			int cur = known < 0 ? -1 : je_is_slabcur(j, x);
			if (cur == 1)
				continue;
			if (x->used == x->nregs)
				full++;
			else
				slab_member(e, &l, x, cur);
		}
	} else {
		for (size_t i = from; i < to; i++) {
			const struct je_extent *x = v[i];
			const struct em_val cells[] = { ev_addr(x->addr),
							ev_addr(x->edata) };
			em_row(e, cells);
			line_add(&l, false, x->addr, false, 0);
		}
	}
	em_table_end(e);
	if (l.shown > LIST_TEXT_MAX)
		line_printf(&l, ", ... (%zu more)", l.shown - LIST_TEXT_MAX);
	if (slabs)
		line_printf(&l, "%s%zu full", l.len ? "; " : "", full);
	em_table_begin(e, &LINE);
	const struct em_val t[] = { ev_str(l.buf) };
	em_row(e, t);
	em_table_end(e);
}

/* A row of the small or large table; with --list, its members.  */
static void class_row(struct je_state *j, struct hw_emitter *e,
		      const struct bin_row *r,
		      const struct em_val *v,
		      const struct je_extent *const *by_class, size_t nby_class)
{
	if (!by_class) {
		em_row(e, v);
		return;
	}
	em_row_open(e, v);
	class_list(j, e, r, by_class, nby_class);
	em_row_close(e);
}

/* --list's tcache table: a row per bin that holds anything, each with
   its stack, the entry malloc takes next first.  */
static const struct em_field TC_BIN_COLS[] = {
	{ .key = "tcache", .label = "tcache", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "thread", .label = "tid", .width = 8, .none = "?" },
	{ .key = "bin", .label = "bin", .width = 4 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "count", .label = "count", .width = 6 },
	{ .key = "max", .label = "max", .width = 6, .none = "?" },
	{ .key = "bytes", .label = "bytes", .width = 10, .form = EM_T_HUMAN },
};
static const struct em_table TC_BIN_TABLE = {
	.key = "tcache_bins", .cols = TC_BIN_COLS, .ncols = 7 };

static enum hw_status tcache_lists(struct je_state *j, struct hw_emitter *e)
{
	struct je_cache_bin *bins = malloc(JE_MAX_SIZES * sizeof *bins);
	uint64_t *items = malloc(JE_MAX_SIZES * 8 * sizeof *items);
	size_t room = JE_MAX_SIZES * 8;
	if (!bins || !items) {
		free(bins);
		free(items);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	em_table_begin(e, &TC_BIN_TABLE);
	for (size_t i = 0; i < j->ntcaches; i++) {
		const struct je_tcache *tc = &j->tcaches[i];
		unsigned nb = je_tcache_bins(j, tc, bins);
		for (unsigned k = 0; k < nb && k < j->nsizes; k++) {
			const struct je_cache_bin *b = &bins[k];
			if (!b->n)
				continue;
			const struct em_val v[] = {
				ev_addr(tc->addr),
				tc->tid ? ev_u64((uint64_t)tc->tid) : ev_null(),
				ev_u64(k), ev_u64(j->sizes[k]), ev_u64(b->n),
				b->max ? ev_u64(b->max) : ev_null(),
				ev_u64((uint64_t)b->n * j->sizes[k]),
			};
			em_row_open(e, v);
			size_t n = b->n < room ? b->n : room;
			if (!hw_read(j->t, b->items, items, 8 * n))
				hw_list_rows(e, NULL, 0, b->items, "the stack is "
					     "not in the target");
			else
				hw_list_rows(e, items, n, 0, n < b->n ?
					     "more than shown" : NULL);
			em_row_close(e);
		}
	}
	em_table_end(e);
	free(bins);
	free(items);
	return HW_OK;
}

static enum hw_status report_bins(struct je_state *j, struct hw_emitter *e,
				  const char *kind, bool list)
{
	bool small = true, large = true, tcache = true;
	if (kind) {
		small = !strcmp(kind, "small") || !strcmp(kind, "slabs");
		large = !strcmp(kind, "large");
		tcache = !strcmp(kind, "tcache");
		if (!small && !large && !tcache)
			return hw_error(j->s, HW_USAGE, "bins: unknown kind '%s' "
					"(jemalloc: small (or slabs), large, "
					"tcache)", kind);
	}
	size_t n = 0, nby_class = 0;
	struct bin_row *rows = bin_rows(j, &n);
	const struct je_extent **by_class =
		list ? class_index(j, &nby_class) : NULL;
	if (!rows || (list && !by_class)) {
		free(rows);
		free(by_class);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	em_doc_begin(e);
	if (small) {
		em_table_begin(e, &SMALL_TABLE);
		for (size_t i = 0; i < n; i++) {
			const struct bin_row *r = &rows[i];
			if (!r->slabs)
				continue;
			uint64_t nregs = r->nregs_total / r->slabs;
			const struct em_val v[] = {
				ev_u64(r->arena), ev_u64(r->szind),
				ev_u64(j->sizes[r->szind]), ev_u64(nregs),
				ev_u64(nregs * j->sizes[r->szind]),
				ev_u64(r->slabs), ev_u64(r->curregs),
				ev_u64(r->cached),
				ev_u64(r->nregs_total - r->curregs),
				ev_dbl(r->nregs_total ? (double)r->curregs /
				       (double)r->nregs_total : 0),
			};
			class_row(j, e, r, v, by_class, nby_class);
		}
		em_table_end(e);
	}
	if (large) {
		if (small)
			em_note(e, "");
		em_table_begin(e, &LARGE_TABLE);
		for (size_t i = 0; i < n; i++) {
			const struct bin_row *r = &rows[i];
			if (!r->large)
				continue;
			const struct em_val v[] = {
				ev_u64(r->arena), ev_u64(r->szind),
				ev_u64(j->sizes[r->szind]), ev_u64(r->large),
				ev_u64(r->cached),
			};
			class_row(j, e, r, v, by_class, nby_class);
		}
		em_table_end(e);
	}
	if (tcache && list) {
		if (small || large)
			em_note(e, "");
		enum hw_status st = tcache_lists(j, e);
		if (st != HW_OK) {
			free(by_class);
			free(rows);
			return st;
		}
	} else if (tcache) {
		if (small || large)
			em_note(e, "");
		em_table_begin(e, &TCACHE_TABLE);
		for (size_t i = 0; i < j->ntcaches; i++) {
			const struct je_tcache *tc = &j->tcaches[i];
			const struct em_val v[] = {
				ev_addr(tc->addr),
				tc->tid ? ev_u64((uint64_t)tc->tid) : ev_null(),
				ev_u64(tc->nbins), ev_u64(tc->cached),
				ev_u64(tc->bytes),
			};
			em_row(e, v);
		}
		em_table_end(e);
	}
	em_doc_end(e);
	free(by_class);
	free(rows);
	return HW_OK;
}

enum hw_status je_report_bins(void *state, struct hw_emitter *e,
			      const char *kind)
{
	return report_bins(state, e, kind, false);
}

enum hw_status je_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind)
{
	return report_bins(state, e, kind, true);
}
