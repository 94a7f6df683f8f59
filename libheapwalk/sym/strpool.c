/* strpool.c - the strings hw_syms hands out that libdw does not keep
 * (demangled names, names cut at '@VERSION'), each stored once.
 *
 * A profile symbolizes thousands of pcs that share a few hundred function
 * and file names; storing each name once keeps that memory small, and
 * equal names come out as equal pointers.  The text lives in large
 * blocks (one malloc per block, not per name) freed all at once by
 * hw_syms_close.  libheapwalk/sym stands alone (tests/t0050 builds it
 * without the rest of the library), so it has its own pool rather than
 * analysis/strset.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sym-private.h"

#define POOL_BLOCK 65536

struct pool_block {
	struct pool_block *next;
	size_t used, cap;
	char text[];
};

struct hw_strpool {
	struct pool_block *blocks;
	const char **slot;  /* open addressing on the text; cap a power of 2 */
	size_t cap, n;
};

static uint64_t hash_text(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

static bool pool_grow(struct hw_strpool *p)
{
	size_t cap = p->cap ? p->cap * 2 : 256;
	const char **slot = calloc(cap, sizeof *slot);
	if (slot == NULL)
		return false;
	for (size_t i = 0; i < p->cap; i++) {
		const char *s = p->slot[i];
		if (s == NULL)
			continue;
		size_t j = hash_text(s, strlen(s)) & (cap - 1);
		while (slot[j] != NULL)
			j = (j + 1) & (cap - 1);
		slot[j] = s;
	}
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
	return true;
}

/* Room for len + 1 bytes of text.  */
static char *pool_space(struct hw_strpool *p, size_t len)
{
	struct pool_block *b = p->blocks;
	if (b == NULL || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > POOL_BLOCK ? len + 1 : POOL_BLOCK;
		b = malloc(sizeof *b + cap);
		if (b == NULL)
			return NULL;
		b->next = p->blocks;
		b->used = 0;
		b->cap = cap;
		p->blocks = b;
	}
	char *at = b->text + b->used;
	b->used += len + 1;
	return at;
}

const char *hw_strpool_add(struct hw_syms *s, const char *text, size_t len)
{
	if (s == NULL || text == NULL)
		return NULL;
	if (s->strings == NULL) {
		s->strings = calloc(1, sizeof *s->strings);
		if (s->strings == NULL)
			return NULL;
	}
	struct hw_strpool *p = s->strings;
	if ((p->n + 1) * 2 > p->cap && !pool_grow(p))
		return NULL;
	size_t j = hash_text(text, len) & (p->cap - 1);
	for (const char *have; (have = p->slot[j]) != NULL;
	     j = (j + 1) & (p->cap - 1))
		if (strncmp(have, text, len) == 0 && have[len] == '\0')
			return have;
	char *copy = pool_space(p, len);
	if (copy == NULL)
		return NULL;
	memcpy(copy, text, len);
	copy[len] = '\0';
	p->slot[j] = copy;
	p->n++;
	return copy;
}

void hw_strpool_free(struct hw_strpool *p)
{
	if (p == NULL)
		return;
	for (struct pool_block *b = p->blocks, *next; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	free(p->slot);
	free(p);
}
