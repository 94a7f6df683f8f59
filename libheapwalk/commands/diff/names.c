/* names.c - the one copy of each type name of a `diff`, and the
 * base's storage.
 *
 * The two sides of a diff name their classes in different places: a
 * base core's names are interned on its session, which is closed before
 * the comparison; a saved JSON file's are parsed text.  Both, and the
 * session's own, go through one table, so that blocks and leaks are
 * matched by comparing pointers.
 */
#include <stdlib.h>
#include <string.h>

#include "diff.h"

const char *diff_name(struct diff_names *n, const char *name, bool *oom)
{
	if (!name)
		return NULL;
	const char *copy = hw_strset_add(&n->set, name);
	if (!copy)
		*oom = true;
	return copy;
}

void diff_names_free(struct diff_names *n)
{
	hw_strset_free(&n->set);
}

bool diff_leaks_grow(struct diff_leaks *l)
{
	if (l->n < l->cap)
		return true;
	/* A leak list past this is not one a report could show.  */
	if (l->n >= ((size_t)1 << 32))
		return false;
	size_t cap = l->cap ? 2 * l->cap : 256;
	struct diff_leak *v = realloc(l->v, cap * sizeof *v);
	if (!v)
		return false;
	l->v = v;
	l->cap = cap;
	return true;
}

void diff_base_free(struct diff_base *b)
{
	hw_size_profile_free(&b->p);
	free(b->types);
	free(b->leaks.v);
	diff_sites_free(b->sites, b->nsites);
	diff_names_free(&b->names);
	memset(b, 0, sizeof *b);
}
