/* typetotals.c - the blocks in use per C++ class, named by the vtable
 * pointer each starts with (analysis/vtype.h): what `sizes --by=type`
 * lists and `diff` compares.
 */
#include <stdlib.h>
#include <string.h>

#include "../analysis/vtype.h"
#include "pipe.h"
#include "typetotals.h"

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
