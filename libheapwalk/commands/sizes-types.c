/* sizes-types.c - `sizes --by=type`: the blocks in use grouped by the
 * C++ class their vtable pointer names (report/typetotals.h), the most
 * bytes first; every block with no known type on one "(no type)" line
 * (the plain `sizes` splits those by size).
 */
#include <stdlib.h>
#include <string.h>

#include "../emit/emit.h"
#include "../report/partial.h"
#include "../report/typetotals.h"
#include "sizes.h"

/* The most bytes first; then the most blocks, then by name.  */
static int row_cmp(const void *a, const void *b)
{
	const struct hw_type_total *x = a, *y = b;
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

enum hw_status sizes_by_type(struct hw_session *s, struct hw_emitter *e)
{
	struct hw_type_total *rows, none;
	size_t n;
	enum hw_status st = hw_type_totals(s, &rows, &n, &none);
	if (st != HW_OK)
		return st;
	if (n)
		qsort(rows, n, sizeof *rows, row_cmp);
	em_doc_begin(e);
	em_table_begin(e, &TYPE_TABLE);
	uint64_t count = none.count, bytes = none.bytes;
	for (size_t i = 0; i < n && !em_failed(e); i++) {
		const struct em_val v[] = { ev_str(rows[i].name),
					    ev_u64(rows[i].count),
					    ev_u64(rows[i].bytes) };
		em_row(e, v);
		count += rows[i].count;
		bytes += rows[i].bytes;
	}
	if (none.count) {
		const struct em_val v[] = { ev_null(), ev_u64(none.count),
					    ev_u64(none.bytes) };
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
	free(rows);
	return HW_OK;
}
