/* types.c - `diff`'s growth per C++ class: the blocks in use per
 * class their vtable names (analysis/vtype.h, as `sizes --by=type`
 * groups them), before and after, the most growth first; every block of
 * no known type on one line.  Shown when some block on either side has
 * a class: a C program's diff has no such section in text, and an empty
 * "types" array in JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "diff.h"

enum hw_status diff_type_profile(struct hw_session *s, struct diff_names *names,
				 struct diff_type **types, size_t *n)
{
	struct hw_type_total *rows, none;
	size_t nrows;
	*types = NULL;
	*n = 0;
	enum hw_status st = hw_type_totals(s, &rows, &nrows, &none);
	if (st != HW_OK)
		return st;
	struct diff_type *v = calloc(nrows + 1, sizeof *v);
	bool oom = !v;
	size_t k = 0;
	for (size_t i = 0; i < nrows && !oom; i++) {
		const char *name = diff_name(names, rows[i].name, &oom);
		v[k++] = (struct diff_type){ name, rows[i].count, rows[i].bytes };
	}
	if (!oom && none.count)
		v[k++] = (struct diff_type){ NULL, none.count, none.bytes };
	free(rows);
	if (oom) {
		free(v);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	*types = v;
	*n = k;
	return HW_OK;
}

/* One class before (b_) and after (a_).  */
struct trow {
	const char *name;
	uint64_t b_count, b_bytes, a_count, a_bytes;
};

static int by_name_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct diff_type *)a)->name;
	uintptr_t y = (uintptr_t)((const struct diff_type *)b)->name;
	return x < y ? -1 : x > y;
}

/* The most growth of bytes first, then of blocks; then by name, the
   blocks of no type last.  */
static int trow_cmp(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	int c = diff_growth_cmp(x->b_bytes, x->a_bytes, y->b_bytes,
				y->a_bytes);
	if (!c)
		c = diff_growth_cmp(x->b_count, x->a_count, y->b_count,
				    y->a_count);
	if (c)
		return c;
	if (!x->name || !y->name)
		return !x->name - !y->name;
	return strcmp(x->name, y->name);
}

/* Both sides' classes, merged (each sorted by its name's pointer).  */
static struct trow *merge(struct diff_type *b, size_t nb, struct diff_type *a,
			  size_t na, size_t *n)
{
	struct trow *rows = calloc(na + nb + 1, sizeof *rows);
	if (!rows)
		return NULL;
	if (nb)
		qsort(b, nb, sizeof *b, by_name_ptr);
	if (na)
		qsort(a, na, sizeof *a, by_name_ptr);
	size_t i = 0, k = 0, m = 0;
	while (i < nb || k < na) {
		const struct diff_type *x = i < nb ? &b[i] : NULL;
		const struct diff_type *y = k < na ? &a[k] : NULL;
		if (x && y && x->name != y->name) {
			if ((uintptr_t)x->name < (uintptr_t)y->name)
				y = NULL;
			else
				x = NULL;
		}
		struct trow *r = &rows[m++];
		r->name = x ? x->name : y->name;
		if (x) {
			r->b_count = x->count;
			r->b_bytes = x->bytes;
			i++;
		}
		if (y) {
			r->a_count = y->count;
			r->a_bytes = y->bytes;
			k++;
		}
	}
	*n = m;
	return rows;
}

/* JSON in this order; text: the numbers first, the class last (a
   template's long name only makes its own line longer).  */
static const struct em_field TYPE_DIFF_COLS[] = {
	{ .key = "type", .label = "type", .join = "  ", .none = "(no type)" },
	DIFF_USED_COLS,
};
static const uint8_t TYPE_DIFF_TEXT_ORDER[] = { 1, 2, 3, 4, 5, 6, 0 };
static const struct em_table TYPE_DIFF_TABLE = {
	.key = "types", .cols = TYPE_DIFF_COLS, .ncols = 7,
	.text_order = TYPE_DIFF_TEXT_ORDER, .ntext = 7 };
static const struct em_field F_UNCHANGED_TYPES = {
	.key = "unchanged_types", .only = EM_JSON_ONLY };

enum hw_status diff_emit_types(struct hw_session *s, struct hw_emitter *e,
			       struct diff_base *b)
{
	struct diff_type *after;
	size_t na;
	enum hw_status st = diff_type_profile(s, &b->names, &after, &na);
	if (st != HW_OK)
		return st;
	size_t n = 0;
	struct trow *rows = merge(b->types, b->ntypes, after, na, &n);
	free(after);
	if (!rows)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	bool typed = false;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		typed |= rows[i].name != NULL;
		if (rows[i].b_count != rows[i].a_count ||
		    rows[i].b_bytes != rows[i].a_bytes)
			rows[k++] = rows[i];
	}
	if (k)
		qsort(rows, k, sizeof *rows, trow_cmp);
	/* A C program: no class on either side, nothing to say per class
	   (JSON keeps its empty array: the base had the answer).  */
	if (!typed)
		k = 0;
	size_t same = typed ? n - k : 0;
	struct em_table table = TYPE_DIFF_TABLE;
	if (typed)
		em_note(e, "");
	diff_table_begin(e, &table, k);
	for (size_t i = 0; i < k && !em_failed(e); i++) {
		const struct trow *r = &rows[i];
		char used[24], bytes[40];
		int64_t du = diff_delta(r->b_count, r->a_count);
		int64_t db = diff_delta(r->b_bytes, r->a_bytes);
		const struct em_val v[] = {
			r->name ? ev_str(r->name) : ev_null(),
			ev_text(ev_i64(du),
				diff_signed_count(used, sizeof used, du)),
			ev_text(ev_i64(db),
				diff_signed_human(bytes, sizeof bytes, db)),
			ev_u64(r->b_count), ev_u64(r->a_count),
			ev_u64(r->b_bytes), ev_u64(r->a_bytes),
		};
		em_row(e, v);
	}
	diff_table_end(e, &F_UNCHANGED_TYPES, k, same, "class", "classes",
		       typed ? "(no class changed)" : NULL);
	free(rows);
	return HW_OK;
}
