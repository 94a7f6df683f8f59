/* srccache.c - what source.c looks up for every pc, indexed once per
 * module: its symbols by address, and for each compile unit asked about,
 * the address ranges of the unit's functions.
 *
 * Why: libdwfl's dwfl_module_addrinfo reads the whole symbol table for
 * every address (~80 us a pc in libc's .dynsym, milliseconds in a large
 * C++ program), and finding the function that holds a pc means walking
 * the unit's top-level DIEs, half of them on average, for every pc.  A
 * profile asks about thousands of pcs in the same few modules; sorted
 * arrays make each one a binary search.
 *
 * The symbol chosen for an address follows dwfl_module_addrinfo's
 * (elfutils 0.188) rules: among symbols with a size that cover it, the
 * global or weak one that starts closest below it, else the local one
 * that does; at one address the stronger binding (global, weak, local),
 * then the smaller, then the first in the table.  Failing those, the
 * closest symbol with no size (an assembly label) that no sized symbol's
 * extent passes.  (libdwfl also checks that such a label is in the
 * address's section; this does not.  Where symbols nest with different
 * bindings, libdwfl's choice depends on the table's order; this one
 * does not.)
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "sym-private.h"

#define CACHE_MAX_SYMBOLS (1u << 24) /* entries kept per module */
#define CACHE_MAX_UNIT_DIES 1000000  /* top-level DIEs read per unit */
#define CACHE_MAX_RANGES 4096        /* ranges kept per function */
#define CACHE_MAX_NS_DEPTH 32        /* namespaces inside namespaces */
#define CACHE_MAX_BACK 4096          /* entries looked back per lookup */

struct sym_entry {
	uint64_t start, size;
	uint64_t max_end;   /* highest end of the sized entries 0..this */
	const char *name;
	uint32_t index;     /* in the symbol table: first wins ties */
	uint8_t bind;
};

struct range_entry {
	Dwarf_Addr lo, hi;  /* [lo, hi) in the module's DWARF addresses */
	Dwarf_Addr max_hi;  /* highest hi among entries 0..this */
	Dwarf_Die die;
};

struct unit_index {
	const void *key;    /* the unit DIE's address in .debug_info */
	struct range_entry *e;
	size_t n;
};

struct hw_srcmod {
	bool syms_done;
	struct sym_entry *sym;
	size_t nsym;

	struct unit_index *unit; /* open addressing on key; cap a power of 2 */
	size_t unit_cap, nunit;
};

/* The per-module slot for mod (s->mods is in address order).  */
static struct hw_srcmod *srcmod(struct hw_syms *s, Dwfl_Module *mod)
{
	if (s->nmods == 0)
		return NULL;
	if (s->srcmods == NULL) {
		s->srcmods = calloc(s->nmods, sizeof *s->srcmods);
		if (s->srcmods == NULL)
			return NULL;
	}
	size_t i = hw_syms_mod_index(s, mod);
	if (i == s->nmods)
		return NULL;
	if (s->srcmods[i] == NULL)
		s->srcmods[i] = calloc(1, sizeof *s->srcmods[i]);
	return s->srcmods[i];
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* A stable order at one address (qsort is not stable).  */
	if (x->bind != y->bind)
		return x->bind < y->bind ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void index_symbols(struct hw_srcmod *m, Dwfl_Module *mod)
{
	m->syms_done = true;
	int n = dwfl_module_getsymtab(mod);
	if (n <= 1)
		return;
	size_t cap = (size_t)n < CACHE_MAX_SYMBOLS ? (size_t)n
						   : CACHE_MAX_SYMBOLS;
	m->sym = malloc(cap * sizeof *m->sym);
	if (m->sym == NULL)
		return;
	for (int i = 1; i < n && m->nsym < cap; i++) {
		GElf_Sym sym;
		GElf_Addr a = 0;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &a,
							   &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (name == NULL || name[0] == '\0' ||
		    sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		m->sym[m->nsym++] = (struct sym_entry){
			.start = a, .size = sym.st_size, .name = name,
			.index = (uint32_t)i,
			.bind = (uint8_t)GELF_ST_BIND(sym.st_info),
		};
	}
	qsort(m->sym, m->nsym, sizeof *m->sym, cmp_sym);
	uint64_t hi = 0;
	for (size_t i = 0; i < m->nsym; i++) {
		uint64_t end = m->sym[i].start + m->sym[i].size;
		if (end < m->sym[i].start)
			end = UINT64_MAX; /* a size that wraps: up to the end */
		if (m->sym[i].size != 0 && end > hi)
			hi = end;
		m->sym[i].max_end = hi;
	}
}

/* libdwfl's order of bindings: global, weak, local, the rest.  */
static int binding_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2
		: bind == STB_LOCAL ? 1 : 0;
}

/* Of two symbols at one address: the stronger binding, then the
   smaller, then the first in the table.  */
static bool better_at_same_start(const struct sym_entry *e,
				 const struct sym_entry *than)
{
	int re = binding_rank(e->bind), rt = binding_rank(than->bind);
	if (re != rt)
		return re > rt;
	if (e->size != than->size)
		return e->size < than->size;
	return e->index < than->index;
}

/* Number of symbols whose start is <= addr.  */
static size_t syms_upto(const struct hw_srcmod *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nsym;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->sym[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *hw_srccache_symbol(struct hw_syms *s, Dwfl_Module *mod,
			       uint64_t addr)
{
	struct hw_srcmod *m = srcmod(s, mod);
	if (m == NULL) {
		GElf_Off off;
		GElf_Sym sym;
		return dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL,
					    NULL);
	}
	if (!m->syms_done)
		index_symbols(m, mod);
	size_t k = syms_upto(m, addr);
	if (k == 0)
		return NULL;

	/* The sized symbols that cover addr, looked for downwards until no
	   symbol so far reaches addr: the global one (or weak) that starts
	   closest below addr, else the local one.  */
	const struct sym_entry *best[2] = { NULL, NULL }; /* [local?] */
	for (size_t i = k, steps = 0; i > 0 && steps < CACHE_MAX_BACK;
	     i--, steps++) {
		const struct sym_entry *e = &m->sym[i - 1];
		if (e->max_end <= addr)
			break;
		if (best[0] != NULL && e->start < best[0]->start)
			break; /* all at the global's address are seen */
		if (e->size == 0 || addr - e->start >= e->size)
			continue;
		const struct sym_entry **b = &best[e->bind == STB_LOCAL];
		if (*b != NULL && e->start < (*b)->start)
			continue;
		if (*b == NULL || better_at_same_start(e, *b))
			*b = e;
	}
	if (best[0] != NULL || best[1] != NULL)
		return (best[0] != NULL ? best[0] : best[1])->name;

	/* Else the closest label, unless a sized symbol below addr ends
	   past it (addr then lies in a gap after that symbol).  */
	for (size_t i = k, steps = 0; i > 0 && steps < CACHE_MAX_BACK;
	     i--, steps++) {
		const struct sym_entry *e = &m->sym[i - 1];
		if (e->size != 0)
			continue;
		return e->start >= m->sym[k - 1].max_end ? e->name : NULL;
	}
	return NULL;
}

/* Number of ranges of u whose start is <= pc.  */
static size_t ranges_upto(const struct unit_index *u, Dwarf_Addr pc)
{
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->e[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* --- functions of a compile unit, by address ------------------------ */

struct unit_build {
	struct range_entry *e;
	size_t n, cap;
	unsigned long budget;
	bool failed;
};

static void add_range(struct unit_build *b, Dwarf_Addr lo, Dwarf_Addr hi,
		      Dwarf_Die *die)
{
	if (hi <= lo || b->failed)
		return;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct range_entry *ne = realloc(b->e, cap * sizeof *ne);
		if (ne == NULL) {
			b->failed = true;
			return;
		}
		b->e = ne;
		b->cap = cap;
	}
	b->e[b->n++] = (struct range_entry){ .lo = lo, .hi = hi, .die = *die };
}

static void add_function(struct unit_build *b, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	for (unsigned k = 0; k < CACHE_MAX_RANGES; k++) {
		off = dwarf_ranges(die, off, &base, &lo, &hi);
		if (off <= 0)
			break;
		add_range(b, lo, hi, die);
	}
}

static void index_scope(struct unit_build *b, Dwarf_Die *parent,
			unsigned ns_depth)
{
	Dwarf_Die child;
	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		if (b->budget == 0)
			return;
		b->budget--;
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram)
			add_function(b, &child);
		else if (tag == DW_TAG_namespace &&
			 ns_depth < CACHE_MAX_NS_DEPTH)
			index_scope(b, &child, ns_depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_range(const void *a, const void *b)
{
	const struct range_entry *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool unit_grow(struct hw_srcmod *m)
{
	size_t cap = m->unit_cap ? m->unit_cap * 2 : 64;
	struct unit_index *t = calloc(cap, sizeof *t);
	if (t == NULL)
		return false;
	for (size_t i = 0; i < m->unit_cap; i++) {
		if (m->unit[i].key == NULL)
			continue;
		size_t j = ((uintptr_t)m->unit[i].key >> 4) & (cap - 1);
		while (t[j].key != NULL)
			j = (j + 1) & (cap - 1);
		t[j] = m->unit[i];
	}
	free(m->unit);
	m->unit = t;
	m->unit_cap = cap;
	return true;
}

static struct unit_index *unit_of(struct hw_srcmod *m, Dwarf_Die *cudie)
{
	const void *key = cudie->addr;
	if (key == NULL)
		return NULL;
	if ((m->nunit + 1) * 2 > m->unit_cap && !unit_grow(m))
		return NULL;
	size_t j = ((uintptr_t)key >> 4) & (m->unit_cap - 1);
	for (; m->unit[j].key != NULL; j = (j + 1) & (m->unit_cap - 1))
		if (m->unit[j].key == key)
			return &m->unit[j];

	struct unit_build b = { .budget = CACHE_MAX_UNIT_DIES };
	index_scope(&b, cudie, 0);
	if (b.failed) {
		free(b.e);
		return NULL;
	}
	if (b.n > 1)
		qsort(b.e, b.n, sizeof *b.e, cmp_range);
	Dwarf_Addr hi = 0;
	for (size_t i = 0; i < b.n; i++) {
		if (b.e[i].hi > hi)
			hi = b.e[i].hi;
		b.e[i].max_hi = hi;
	}
	m->unit[j] = (struct unit_index){ .key = key, .e = b.e, .n = b.n };
	m->nunit++;
	return &m->unit[j];
}

bool hw_srccache_unit_function(struct hw_syms *s, Dwfl_Module *mod,
			       Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *out)
{
	struct hw_srcmod *m = srcmod(s, mod);
	struct unit_index *u = m != NULL ? unit_of(m, cudie) : NULL;
	if (u == NULL)
		return false;
	size_t k = ranges_upto(u, pc);
	/* The closest start below pc whose range holds it (ranges of
	   distinct functions do not overlap in sane DWARF).  */
	for (size_t i = k, steps = 0; i > 0 && steps < CACHE_MAX_BACK;
	     i--, steps++) {
		const struct range_entry *e = &u->e[i - 1];
		if (e->max_hi <= pc)
			break;
		if (pc < e->hi) {
			*out = e->die;
			return true;
		}
	}
	return false;
}

void hw_srccache_free(struct hw_syms *s)
{
	if (s->srcmods == NULL)
		return;
	for (size_t i = 0; i < s->nmods; i++) {
		struct hw_srcmod *m = s->srcmods[i];
		if (m == NULL)
			continue;
		free(m->sym);
		for (size_t j = 0; j < m->unit_cap; j++)
			free(m->unit[j].e);
		free(m->unit);
		free(m);
	}
	free(s->srcmods);
	s->srcmods = NULL;
}
