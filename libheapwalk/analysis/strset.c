/* strset.c - a set of strings, each kept once (strset.h).  */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strset.h"

static size_t hash_str(const char *p, size_t cap)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */
	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* Where name is, or would go (an empty slot), with room for one more
   name; NULL when the table cannot grow.  The table is kept at most half
   full, so a probe always ends.  */
static char **slot_for(struct hw_strset *set, const char *name)
{
	if ((set->n + 1) * 2 > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		char **t = calloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < set->cap; i++) {
			if (!set->slot[i])
				continue;
			size_t j = hash_str(set->slot[i], cap);
			while (t[j])
				j = (j + 1) & (cap - 1);
			t[j] = set->slot[i];
		}
		free(set->slot);
		set->slot = t;
		set->cap = cap;
	}
	size_t j = hash_str(name, set->cap);
	while (set->slot[j] && strcmp(set->slot[j], name) != 0)
		j = (j + 1) & (set->cap - 1);
	return &set->slot[j];
}

const char *hw_strset_add(struct hw_strset *set, const char *name)
{
	char **p = slot_for(set, name);
	if (!p)
		return NULL;
	if (!*p) {
		size_t len = strlen(name) + 1;
		char *copy = malloc(len);
		if (!copy)
			return NULL;
		memcpy(copy, name, len);
		*p = copy;
		set->n++;
	}
	return *p;
}

const char *hw_strset_take(struct hw_strset *set, char *owned)
{
	char **p = slot_for(set, owned);
	if (!p || *p) {
		free(owned);
		return p ? *p : NULL;
	}
	*p = owned;
	set->n++;
	return owned;
}

void hw_strset_free(struct hw_strset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slot[i]);
	free(set->slot);
	memset(set, 0, sizeof *set);
}
