/* vtype.c - a block's C++ class from its vtable pointer (vtype.h).
 *
 * The cache maps a vtable word to its interned class name (NULL: not a
 * vtable's address point).  It is open addressing on the word; names are
 * interned in a second table, keyed by the string.  Positive entries are
 * bounded by the vtables the modules define; negative ones (any word into
 * a module that is not a vtable: a string, a function pointer) are
 * dropped whenever the table reaches its bound.
 */
#include <stdlib.h>
#include <string.h>

#include "../arch/arch.h"
#include "../sym/sym.h"
#include "../target/target.h"
#include "strset.h"
#include "vtype.h"

/* Slots of the word cache: 16 bytes each, at most 4 MiB.  */
#define VT_MAX_SLOTS (1u << 18)
/* A mangled type longer than this is kept as it is (the demangler's
   work grows with its input, which a core's symbol table dictates).  */
#define VT_MAX_MANGLED 1024

struct vt_slot {
	uint64_t word;          /* 0: empty (0 is never a vtable) */
	const char *name;       /* interned, or NULL: not a vtable */
};

struct hw_vtypes {
	struct vt_slot *slots;
	size_t cap, n;          /* cap: a power of two, or 0 */
	struct hw_strset names; /* the class names, each once */
};

static size_t hash_word(uint64_t w, size_t cap)
{
	return (size_t)((w * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static struct vt_slot *probe(const struct hw_vtypes *v, uint64_t word)
{
	size_t j = hash_word(word, v->cap);
	while (v->slots[j].word && v->slots[j].word != word)
		j = (j + 1) & (v->cap - 1);
	return &v->slots[j];
}

/* Room for one more entry: grow up to the bound, then drop the negative
   entries.  False when there is none (the result is then not kept).  */
static bool make_room(struct hw_vtypes *v)
{
	if ((v->n + 1) * 2 <= v->cap)
		return true;
	size_t positives = 0;
	for (size_t i = 0; i < v->cap; i++)
		positives += v->slots[i].word && v->slots[i].name;
	bool grow = v->cap < VT_MAX_SLOTS;
	size_t cap = grow ? (v->cap ? 2 * v->cap : 1024) : v->cap;
	if (!grow && (positives + 1) * 2 > cap)
		return false;
	struct vt_slot *old = v->slots;
	size_t ocap = v->cap;
	v->slots = calloc(cap, sizeof *v->slots);
	if (!v->slots) {
		v->slots = old;
		return false;
	}
	v->cap = cap;
	v->n = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].word || (!grow && !old[i].name))
			continue;
		*probe(v, old[i].word) = old[i];
		v->n++;
	}
	free(old);
	return true;
}

static unsigned ptr_size(const struct hw_session *s)
{
	const struct hw_arch *a = s->arch ? s->arch : s->target->arch;
	return a ? a->ptr_size : 8;
}

static bool read_word(struct hw_session *s, uint64_t addr, uint64_t *w)
{
	if (ptr_size(s) == 8)
		return hw_read_u64(s->target, addr, w);
	uint32_t v;
	if (!hw_read_u32(s->target, addr, &v))
		return false;
	*w = v;
	return true;
}

/* The mangled type of a `_ZTV`/`_ZTI` symbol name: what follows the
   prefix, up to a version ("@...") or a local-symbol suffix (".123").  */
static size_t mangled_type(const char *sym, const char *prefix,
			   const char **type)
{
	if (!sym || strncmp(sym, prefix, 4) != 0)
		return 0;
	*type = sym + 4;
	return strcspn(*type, "@.");
}

/* The demangled name of the class whose vtable has its address point at
   word, malloc'd; NULL when word is no such address point.  */
static char *resolve(struct hw_session *s, uint64_t word)
{
	struct hw_symbol_at at;
	unsigned ps = ptr_size(s);
	if (!hw_syms_symbol_at(s->syms, word, &at))
		return NULL;
	const char *type;
	size_t len = mangled_type(at.name, "_ZTV", &type);
	if (!len || at.offset < 2 * ps || at.offset >= at.size)
		return NULL;
	uint64_t to_top, ti;
	if (!read_word(s, word - 2 * ps, &to_top) || to_top != 0 ||
	    !read_word(s, word - ps, &ti))
		return NULL;
	if (ti != 0) {
		/* RTTI: the typeinfo of the same type, at its start.  */
		const char *ttype;
		if (!hw_syms_symbol_at(s->syms, ti, &at) || at.offset != 0 ||
		    mangled_type(at.name, "_ZTI", &ttype) != len ||
		    memcmp(ttype, type, len) != 0)
			return NULL;
	}
	if (len >= VT_MAX_MANGLED)
		return strndup(type, VT_MAX_MANGLED);
	char *mangled = strndup(type, len);
	if (!mangled)
		return NULL;
	char *name = hw_syms_demangle_any(mangled);
	if (!name)
		return mangled;
	free(mangled);
	return name;
}

static void release_vtypes(void *v)
{
	hw_vtypes_free(v);
}

const char *hw_vtype_of(struct hw_session *s, uint64_t addr, uint64_t size)
{
	unsigned ps = ptr_size(s);
	uint64_t word;
	if (!s->syms || size < ps || !read_word(s, addr, &word))
		return NULL;
	const struct hw_arch *a = s->arch ? s->arch : s->target->arch;
	if (a)
		word &= a->ptr_mask;
	/* An address point is word-aligned and lies in a module's file:
	   most first words (heap pointers, numbers, text) end here.  */
	if (!word || word % ps != 0)
		return NULL;
	const struct hw_region *r = hw_region_of(s->target, word);
	if (!r || (s->target->nfiles > 0 && r->file < 0))
		return NULL;
	struct hw_vtypes *v = hw_slot_get(s, HW_SLOT_VTYPES);
	if (!v) {
		v = calloc(1, sizeof *v);
		if (!v)
			return NULL;
		hw_slot_set(s, HW_SLOT_VTYPES, v, release_vtypes);
	}
	if (v->cap) {
		const struct vt_slot *hit = probe(v, word);
		if (hit->word)
			return hit->name;
	}
	char *owned = resolve(s, word);
	const char *name = owned ? hw_strset_take(&v->names, owned) : NULL;
	if (owned && !name)
		return NULL;            /* out of memory: not cached */
	if (make_room(v)) {
		struct vt_slot *slot = probe(v, word);
		*slot = (struct vt_slot){ .word = word, .name = name };
		v->n++;
	}
	return name;
}

void hw_vtypes_free(struct hw_vtypes *v)
{
	if (!v)
		return;
	hw_strset_free(&v->names);
	free(v->slots);
	free(v);
}
