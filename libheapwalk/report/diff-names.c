/* diff-names.c - the one copy of each type name of a `diff`, and the
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

static size_t name_hash(const char *s, size_t cap)
{
	uint64_t h = 0xcbf29ce484222325ull;    /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return (size_t)(h >> 20) & (cap - 1);
}

const char *diff_name(struct diff_names *n, const char *name, bool *oom)
{
	if (!name)
		return NULL;
	if ((n->n + 1) * 2 > n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 64;
		char **v = calloc(cap, sizeof *v);
		if (!v) {
			*oom = true;
			return NULL;
		}
		for (size_t i = 0; i < n->cap; i++) {
			if (!n->slot[i])
				continue;
			size_t j = name_hash(n->slot[i], cap);
			while (v[j])
				j = (j + 1) & (cap - 1);
			v[j] = n->slot[i];
		}
		free(n->slot);
		n->slot = v;
		n->cap = cap;
	}
	size_t j = name_hash(name, n->cap);
	while (n->slot[j] && strcmp(n->slot[j], name) != 0)
		j = (j + 1) & (n->cap - 1);
	if (!n->slot[j]) {
		size_t len = strlen(name) + 1;
		char *copy = malloc(len);
		if (!copy) {
			*oom = true;
			return NULL;
		}
		memcpy(copy, name, len);
		n->slot[j] = copy;
		n->n++;
	}
	return n->slot[j];
}

void diff_names_free(struct diff_names *n)
{
	for (size_t i = 0; i < n->cap; i++)
		free(n->slot[i]);
	free(n->slot);
	memset(n, 0, sizeof *n);
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
	diff_names_free(&b->names);
	memset(b, 0, sizeof *b);
}
