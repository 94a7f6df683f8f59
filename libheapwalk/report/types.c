/* types.c - `sizes --by=type`: the blocks in use grouped by the C++ class
 * their vtable pointer names (analysis/vtype.h), the most bytes first;
 * every block with no known type on one "(no type)" line (the plain
 * `sizes` splits those by size).
 */
#include <stdlib.h>
#include <string.h>

#include "../analysis/vtype.h"
#include "commands.h"
#include "emit.h"

struct type_row {
	const char *name;       /* interned: rows are keyed by the pointer */
	uint64_t count, bytes;
};

struct by_type {
	struct hw_session *s;
	struct type_row *rows;  /* open addressing on name; name NULL: empty */
	size_t cap, n;
	struct type_row none;   /* blocks with no known type */
	bool oom;
};

static size_t slot_of(const char *name, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

static struct type_row *row_of(struct by_type *b, const char *name)
{
	if ((b->n + 1) * 2 > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct type_row *v = calloc(cap, sizeof *v);
		if (!v) {
			b->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < b->cap; i++) {
			if (!b->rows[i].name)
				continue;
			size_t j = slot_of(b->rows[i].name, cap);
			while (v[j].name)
				j = (j + 1) & (cap - 1);
			v[j] = b->rows[i];
		}
		free(b->rows);
		b->rows = v;
		b->cap = cap;
	}
	size_t j = slot_of(name, b->cap);
	while (b->rows[j].name && b->rows[j].name != name)
		j = (j + 1) & (b->cap - 1);
	if (!b->rows[j].name) {
		b->rows[j].name = name;
		b->n++;
	}
	return &b->rows[j];
}

static bool add_block(void *cookie, const struct hw_chunk *c)
{
	struct by_type *b = cookie;
	if (!c->used)
		return true;
	const char *name = hw_vtype_of(b->s, c->addr, c->size);
	struct type_row *r = name ? row_of(b, name) : &b->none;
	if (r) {
		r->count++;
		r->bytes += c->size;
	}
	return !b->oom;
}

/* For `diff`: the rows of sizes --by=type, unsorted, their names
   interned on s; the blocks of no known type in *none.  */
enum hw_status hw_type_totals(struct hw_session *s, struct hw_type_total **rows,
			      size_t *n, struct hw_type_total *none)
{
	struct by_type b = { .s = s };
	*rows = NULL;
	*n = 0;
	hw_walk_chunks_piped(s, add_block, &b);
	struct hw_type_total *v = calloc(b.n + 1, sizeof *v);
	if (b.oom || s->oom || !v) {
		free(b.rows);
		free(v);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	for (size_t i = 0; i < b.cap; i++)
		if (b.rows[i].name)
			v[(*n)++] = (struct hw_type_total){
				b.rows[i].name, b.rows[i].count,
				b.rows[i].bytes };
	*none = (struct hw_type_total){ NULL, b.none.count, b.none.bytes };
	*rows = v;
	free(b.rows);
	return HW_OK;
}

/* The most bytes first; then the most blocks, then by name.  */
static int row_cmp(const void *a, const void *b)
{
	const struct type_row *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* JSON: type, count, bytes; text: the numbers first, so that a long
   class name (a template's) only makes its own line longer.  */
static const struct em_field TYPE_COLS[] = {
	{ .key = "type", .label = "type", .join = "  ", .none = "(no type)" },
	{ .key = "count", .label = "blocks", .width = 10 },
	{ .key = "bytes", .label = "bytes", .width = 12, .form = EM_T_HUMAN },
};
static const uint8_t TYPE_TEXT_ORDER[] = { 2, 1, 0 };
static const struct em_table TYPE_TABLE = {
	.key = "types", .cols = TYPE_COLS, .ncols = 3,
	.text_order = TYPE_TEXT_ORDER, .ntext = 3 };

enum hw_status hw_report_sizes_by_type(struct hw_session *s,
				       struct hw_emitter *e)
{
	struct by_type b = { .s = s };
	hw_walk_chunks_piped(s, add_block, &b);
	if (b.oom || s->oom) {
		free(b.rows);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < b.cap; i++)
		if (b.rows[i].name)
			b.rows[n++] = b.rows[i];
	if (n)
		qsort(b.rows, n, sizeof *b.rows, row_cmp);
	em_doc_begin(e);
	em_table_begin(e, &TYPE_TABLE);
	uint64_t count = b.none.count, bytes = b.none.bytes;
	for (size_t i = 0; i < n && !em_failed(e); i++) {
		const struct em_val v[] = { ev_str(b.rows[i].name),
					    ev_u64(b.rows[i].count),
					    ev_u64(b.rows[i].bytes) };
		em_row(e, v);
		count += b.rows[i].count;
		bytes += b.rows[i].bytes;
	}
	if (b.none.count) {
		const struct em_val v[] = { ev_null(), ev_u64(b.none.count),
					    ev_u64(b.none.bytes) };
		em_row(e, v);
	}
	/* The total is the text table's last line; JSON readers add up.  */
	const struct em_val total[] = { ev_text(ev_absent(), "total"),
					ev_u64(count), ev_u64(bytes) };
	em_row_as(e, NULL, total, EM_TEXT_ONLY);
	em_table_end(e);
	if (!n && count)
		em_note(e, "no block starts with a vtable pointer the symbol "
			"tables name: no C++ objects with virtual functions, "
			"or the modules' _ZTV symbols are not at hand (a "
			"stripped executable without its debug file)");
	hw_emit_partial(s, e);
	em_doc_end(e);
	free(b.rows);
	return HW_OK;
}
