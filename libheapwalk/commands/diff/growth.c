/* growth.c - how every section of `diff` says a change: signed deltas
 * ("+3", "-1.5 MiB"), the order by growth, and the tables of changed
 * rows with their count of unchanged ones.  Shared by diff.c, types.c,
 * sites.c and leaks.c.
 */
#include <inttypes.h>
#include <stdio.h>

#include "../../emit/emit.h"
#include "diff.h"

int64_t diff_delta(uint64_t before, uint64_t after)
{
	return (int64_t)(after - before);
}

int diff_growth_cmp(uint64_t x_before, uint64_t x_after, uint64_t y_before,
		    uint64_t y_after)
{
	int64_t dx = diff_delta(x_before, x_after);
	int64_t dy = diff_delta(y_before, y_after);
	return dx == dy ? 0 : dx > dy ? -1 : 1;
}

const char *diff_signed_human(char *buf, size_t len, int64_t d)
{
	char h[24];
	if (!d)
		return "0";
	hw_human(h, sizeof h, d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d);
	snprintf(buf, len, "%c%s", d < 0 ? '-' : '+', h);
	return buf;
}

const char *diff_signed_count(char *buf, size_t len, int64_t d)
{
	snprintf(buf, len, "%+" PRId64, d);
	return d ? buf : "0";
}

void diff_table_begin(struct hw_emitter *e, struct em_table *t, size_t n)
{
	if (!n)
		t->only = EM_JSON_ONLY;
	em_table_begin(e, t);
}

void diff_table_end(struct hw_emitter *e, const struct em_field *unchanged,
		    size_t n, size_t left_out, const char *one,
		    const char *many, const char *none)
{
	em_table_end(e);
	em_kv(e, unchanged, ev_u64(left_out));
	if (!n && none)
		em_note(e, none);
	else if (left_out)
		em_notef(e, "(%zu %s unchanged, not shown)", left_out,
			 left_out == 1 ? one : many);
}
