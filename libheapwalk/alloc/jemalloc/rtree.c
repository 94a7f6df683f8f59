/* rtree.c - find jemalloc's page radix tree and read every extent from it.
 *
 * The tree's root array sits in jemalloc's .bss (inside extents_rtree or
 * arena_emap_global).  Without symbols it is recognised by what it points
 * to: a root slot holds a 64-byte-aligned pointer to a node or leaf array
 * whose non-zero elements decode to extent pointers, and each extent's
 * e_addr/e_size (words 1 and 2 of extent_t and edata_t alike) must cover
 * the page the element stands for.  That also tells the slot's index, so
 * the root's start, and which (LG_VADDR, LG_PAGE) the build used.
 */
#include <stdlib.h>
#include <string.h>

#include "../../arch/arch.h"
#include "jemalloc.h"

/* Elements checked per array when judging a candidate.  */
#define PROBE_ELEMENTS 4

/* The root search's memory of the arrays it has judged: node address ->
   probe_array's answer.  A hostile root whose 2^18 slots all name one
   leaf would otherwise have that leaf judged 2^18 times over, for each
   of 2^18 candidate roots.  Open addressing; address 0 is never a node.  */
struct probe_memo {
	uint64_t *key;
	int64_t *val;
	size_t cap, n;
	bool oom;
};

static size_t memo_home(const struct probe_memo *m, uint64_t key)
{
	return (size_t)((key >> 6) * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
}

static bool memo_get(const struct probe_memo *m, uint64_t key, int64_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = memo_home(m, key); m->key[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key) {
			*val = m->val[i];
			return true;
		}
	return false;
}

static void memo_put(struct probe_memo *m, uint64_t key, int64_t val)
{
	if (m->oom)
		return;
	if (2 * (m->n + 1) > m->cap) {
		struct probe_memo g = { .cap = m->cap ? 2 * m->cap : 1024 };
		g.key = calloc(g.cap, sizeof *g.key);
		g.val = malloc(g.cap * sizeof *g.val);
		if (!g.key || !g.val) {
			free(g.key);
			free(g.val);
			m->oom = true;
			return;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i])
				memo_put(&g, m->key[i], m->val[i]);
		free(m->key);
		free(m->val);
		*m = g;
	}
	size_t i = memo_home(m, key);
	while (m->key[i])
		i = (i + 1) & (m->cap - 1);
	m->key[i] = key;
	m->val[i] = val;
	m->n++;
}

static void memo_clear(struct probe_memo *m)
{
	if (m->n)
		memset(m->key, 0, m->cap * sizeof *m->key);
	m->n = 0;
}

static void memo_free(struct probe_memo *m)
{
	free(m->key);
	free(m->val);
	*m = (struct probe_memo){ 0 };
}

static void params_init(struct je_params *p, int lg_vaddr, int lg_page)
{
	int nsb = lg_vaddr - lg_page;
	memset(p->bits, 0, sizeof p->bits);
	p->lg_vaddr = lg_vaddr;
	p->lg_page = lg_page;
	if (nsb <= 10) {
		p->height = 1;
		p->bits[0] = nsb;
	} else if (nsb <= 36) {
		p->height = 2;
		p->bits[0] = nsb / 2;
		p->bits[1] = nsb / 2 + nsb % 2;
	} else {
		p->height = 3;
		p->bits[0] = nsb / 3;
		p->bits[1] = nsb / 3 + nsb % 3 / 2;
		p->bits[2] = nsb / 3 + nsb % 3 - nsb % 3 / 2;
	}
}

/* Bits of the key below level `level` (page offset included).  */
static int shift_of(const struct je_params *p, int level)
{
	int sh = p->lg_page;
	for (int l = level + 1; l < p->height; l++)
		sh += p->bits[l];
	return sh;
}

static uint64_t leaf_edata(const struct je_state *j, uint64_t bits)
{
	uint64_t e = bits & (((uint64_t)1 << j->p.lg_vaddr) - 1);
	return j->era == JE_ERA_53 ? e & ~(uint64_t)127 : e & ~(uint64_t)1;
}

/* The three words every extent_t/edata_t starts with.  */
struct edata_head {
	uint64_t bits, addr, size_esn;
};

static bool read_edata(struct je_state *j, uint64_t e, struct edata_head *h)
{
	return (e & 7) == 0 && hw_read(j->t, e, h, sizeof *h);
}

/* Does leaf element `bits`, standing for the page with low key bits
   key_low (root index unknown), decode to an extent covering that page?
   Returns the root index that makes it so, or -1.  */
static int64_t element_root_index(struct je_state *j, uint64_t bits,
				  uint64_t key_low)
{
	struct edata_head h;
	uint64_t e = leaf_edata(j, bits);
	if (!e || !read_edata(j, e, &h))
		return -1;
	uint64_t page = (uint64_t)1 << j->p.lg_page;
	uint64_t size = h.size_esn & ~(page - 1);
	uint64_t base = h.addr & ~(page - 1);
	if (!size || base + size < base || (base + size) >> j->p.lg_vaddr)
		return -1;
	/* The leaf's szind and slab bits are not compared with the
	   extent's: boundary pages of large extents carry SC_NSIZES.  */
	int sh0 = shift_of(&j->p, 0);
	uint64_t tries[2] = { base >> sh0, (base + size - 1) >> sh0 };
	for (int k = 0; k < 2; k++) {
		uint64_t key = (tries[k] << sh0) | key_low;
		if (key >= base && key < base + size)
			return (int64_t)tries[k];
	}
	return -1;
}

/* Judge the array at `node`, at tree level `level` (>= 1), reached with
   key bits key_low so far: the root index its elements agree on, -1 if
   they do not (or it is no array of this tree), -2 if it is all zero.  */
static int64_t probe_array(struct je_state *j, uint64_t node, int level,
			   uint64_t key_low)
{
	size_t n = (size_t)1 << j->p.bits[level];
	const uint8_t *a = hw_peek(j->t, node, n * 8);
	if (!a)
		return -1;
	int64_t idx = -2;
	int seen = 0;
	for (size_t i = 0; i < n && seen < PROBE_ELEMENTS; i++) {
		uint64_t v;
		memcpy(&v, a + 8 * i, 8);
		/* Cleared leaf elements keep szind SC_NSIZES: skip them.  */
		if (!v || (level == j->p.height - 1 && !leaf_edata(j, v)))
			continue;
		seen++;
		uint64_t key = key_low | ((uint64_t)i << shift_of(&j->p, level));
		int64_t r;
		if (level == j->p.height - 1) {
			r = element_root_index(j, v, key);
		} else {
			if ((v & 63) || v >> j->p.lg_vaddr)
				return -1;
			r = probe_array(j, v, level + 1, key);
			if (r == -2)
				continue;
		}
		if (r < 0 || (idx >= 0 && r != idx))
			return -1;
		idx = r;
	}
	return idx;
}

/* probe_array for a child of the root, each node judged once.  */
static int64_t probe_child(struct je_state *j, struct probe_memo *m,
			   uint64_t node)
{
	int64_t r;
	if (memo_get(m, node, &r))
		return r;
	r = probe_array(j, node, 1, 0);
	memo_put(m, node, r);
	return r;
}

/* With the root at `root`: do its non-zero slots all lead to arrays that
   agree with their own index?  */
static bool root_ok(struct je_state *j, struct probe_memo *m, uint64_t root)
{
	size_t n = (size_t)1 << j->p.bits[0];
	const uint8_t *a = hw_peek(j->t, root, n * 8);
	if (!a || !je_in_data(j, root, n * 8))
		return false;
	size_t good = 0, checked = 0;
	for (size_t i = 0; i < n && checked < 64; i++) {
		uint64_t v;
		memcpy(&v, a + 8 * i, 8);
		if (!v)
			continue;
		checked++;
		if ((v & 63) || v >> j->p.lg_vaddr)
			return false;
		int64_t r = j->p.height == 1 ?
			element_root_index(j, v, (uint64_t)i << shift_of(&j->p, 0)) :
			probe_child(j, m, v);
		if (r == -2)
			continue;
		if (r != (int64_t)i)
			return false;
		good++;
	}
	return good > 0;
}

/* Look for the root in [lo, hi) under the current parameters.  Only the
   bytes the target holds are scanned: what a core's segment claims beyond
   them is stepped over at once.  */
static uint64_t scan_for_root(struct je_state *j, struct probe_memo *m,
			      uint64_t lo, uint64_t hi)
{
	for (uint64_t at = (lo + 7) & ~(uint64_t)7; at + 8 <= hi && !m->oom; ) {
		const uint8_t *data;
		uint64_t len = hw_readable_run(j->t, at, &data);
		if (!len) {
			at = (hw_next_readable(j->t, at, hi) + 7) & ~(uint64_t)7;
			continue;
		}
		if (len > hi - at)
			len = hi - at;
		for (uint64_t off = 0; off + 8 <= len; off += 8) {
			uint64_t w;
			memcpy(&w, data + off, 8);
			if (!w || (w & 63) || w >> j->p.lg_vaddr)
				continue;
			int64_t i0 = j->p.height == 1 ? -1 : probe_child(j, m, w);
			if (i0 < 0)
				continue;
			uint64_t slot = at + off;
			if ((uint64_t)i0 * 8 > slot)
				continue;
			uint64_t root = slot - (uint64_t)i0 * 8;
			if (root >= lo && root_ok(j, m, root))
				return root;
		}
		at += len;
	}
	return 0;
}

struct geometry {
	int lg_vaddr, lg_page;
};

enum hw_status je_find_rtree(struct je_state *j)
{
	static const struct geometry x86_64[] = {
		{ 48, 12 }, { 57, 12 }, { 48, 16 }, { 48, 14 },
	};
	static const struct geometry aarch64[] = {
		{ 48, 16 }, { 48, 12 }, { 48, 14 }, { 52, 16 }, { 39, 12 },
	};
	bool a64 = !strcmp(j->t->arch->name, "aarch64");
	const struct geometry *g = a64 ? aarch64 : x86_64;
	size_t ng = a64 ? sizeof aarch64 / sizeof *g : sizeof x86_64 / sizeof *g;

	/* With symbols, the search is confined to the tree's global.  */
	uint64_t lo = 0, size = 0;
	const char *how = NULL;
	if (je_lookup(j, "je_arena_emap_global", &lo, &size))
		how = "symbol je_arena_emap_global";
	else if (je_lookup(j, "je_extents_rtree", &lo, &size))
		how = "symbol je_extents_rtree";
	uint64_t hi = lo + size;
	enum je_era eras[2] = { j->era, j->era == JE_ERA_53 ? JE_ERA_52 : JE_ERA_53 };
	bool version_known = strcmp(j->version, "unknown") != 0;
	/* The judgements hold for one era and geometry: cleared for each.  */
	struct probe_memo m = { 0 };
	for (int pass = 0; pass < 2; pass++) {
		/* Pass 0: the symbol's extent (if any); pass 1: all data.  */
		if (pass == 0 && !how)
			continue;
		for (int e = 0; e < (version_known ? 1 : 2); e++) {
			j->era = eras[e];
			for (size_t k = 0; k < ng; k++) {
				params_init(&j->p, g[k].lg_vaddr, g[k].lg_page);
				memo_clear(&m);
				uint64_t root = 0;
				if (pass == 0)
					root = scan_for_root(j, &m, lo, hi);
				for (size_t d = 0; pass == 1 && !root && d < j->ndata; d++)
					root = scan_for_root(j, &m, j->data[d].start,
							     j->data[d].end);
				if (m.oom) {
					memo_free(&m);
					return hw_error(j->s, HW_BAD_TARGET,
							"out of memory");
				}
				if (root) {
					memo_free(&m);
					j->rtree_root = root;
					j->how_rtree = pass == 0 ? how :
						"scan of jemalloc's data for "
						"the radix tree root";
					return HW_OK;
				}
			}
		}
		if (!version_known)
			j->era = eras[0];
	}
	memo_free(&m);
	return hw_error(j->s, HW_NO_ALLOCATOR,
			"'%s': jemalloc %s found, but not its radix tree (no "
			"symbols, and no root in its data); supply a symbol "
			"file with --debug-dir (scripts/jemalloc-symbols.sh "
			"makes one for Debian's builds)", j->module, j->version);
}

/* ---- every extent ------------------------------------------------------ */

struct seen {
	uint64_t edata, key;
	uint32_t leaf_szind;
	bool leaf_slab;
};

struct collect {
	struct je_state *j;
	struct seen *v;
	size_t n, cap;
	uint64_t prev;
	bool oom;
};

static void push_seen(struct collect *c, uint64_t e, uint64_t key,
		      uint64_t bits)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4096;
		struct seen *v = realloc(c->v, cap * sizeof *v);
		if (!v) {
			c->oom = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct seen){ e, key,
		(uint32_t)(bits >> c->j->p.lg_vaddr), bits & 1 };
}

/* An array of the tree to read: its address, the key bits above it and
   the slot that points at it (0 for the root).  */
struct node {
	uint64_t addr, key, holder;
};

struct nodes {
	struct node *v;
	size_t n, cap;
};

static bool push_node(struct nodes *l, struct node x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct node *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return true;
}

static int node_cmp(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Distinct arrays judged per group of overlapping ones, at most.  */
#define PICK_TRIES 16

/* Of the arrays v[0..n) at `level`, which overlap one another, the one to
   read: the first whose elements agree with the key of the slot that
   points at it (a hostile root pointing every slot at one real leaf
   leaves the leaf its own slot), else the first.  */
static size_t pick_array(struct je_state *j, const struct node *v, size_t n,
			 int level)
{
	int sh0 = shift_of(&j->p, 0);
	uint64_t low = ((uint64_t)1 << sh0) - 1;
	int tries = 0;
	int64_t r = -1;
	for (size_t k = 0; k < n; k++) {
		bool same = k && v[k].addr == v[k - 1].addr &&
			    (v[k].key & low) == (v[k - 1].key & low);
		if (!same) {
			if (tries++ == PICK_TRIES)
				break;
			r = probe_array(j, v[k].addr, level, v[k].key & low);
		}
		if (r >= 0 && (uint64_t)r == v[k].key >> sh0)
			return k;
	}
	return 0;
}

/* Read one array at level `level`: children go to `next`, leaf elements
   to c.  */
static void read_array(struct collect *c, const struct node *nd, int level,
		       struct nodes *next)
{
	struct je_state *j = c->j;
	size_t n = (size_t)1 << j->p.bits[level];
	const uint8_t *a = hw_peek(j->t, nd->addr, n * 8);
	if (!a) {
		hw_finding(j->s, nd->addr, "jemalloc radix tree: %s array of "
			   "%zu entries is not in the %s",
			   level ? "node" : "root", n, hw_target_noun(j->t));
		return;
	}
	int sh = shift_of(&j->p, level);
	for (size_t i = 0; i < n && !c->oom; i++) {
		uint64_t v;
		memcpy(&v, a + 8 * i, 8);
		if (!v)
			continue;
		uint64_t key = nd->key | ((uint64_t)i << sh);
		if (level < j->p.height - 1) {
			if ((v & 63) || v >> j->p.lg_vaddr) {
				hw_finding(j->s, nd->addr + 8 * i, "jemalloc "
					   "radix tree: bad child pointer 0x%llx",
					   (unsigned long long)v);
				continue;
			}
			if (!push_node(next, (struct node){ v, key,
							    nd->addr + 8 * i }))
				c->oom = true;
			continue;
		}
		uint64_t e = leaf_edata(j, v);
		/* A cleared element keeps metadata bits (szind SC_NSIZES).  */
		if (!e || e == c->prev)
			continue;
		c->prev = e;
		push_seen(c, e, key, v);
	}
}

/* Every leaf element of the tree, level by level.  jemalloc gives each
   slot an array of its own; a damaged or hostile tree can point many
   slots at one array, or at overlapping ones (2^18 slots at one 2 MiB
   leaf would be 2^36 reads).  Each level's arrays are sorted by address;
   of a group that overlap, one is read (pick_array) and the others are
   reported, so that no byte of the core is read twice and the walk is
   bounded by what the core holds.  */
static void walk_tree(struct collect *c)
{
	struct je_state *j = c->j;
	struct nodes cur = { 0 }, next = { 0 };
	if (!push_node(&cur, (struct node){ j->rtree_root, 0, 0 })) {
		c->oom = true;
		return;
	}
	for (int level = 0; level < j->p.height && cur.n && !c->oom; level++) {
		uint64_t len = (uint64_t)8 << j->p.bits[level];
		qsort(cur.v, cur.n, sizeof *cur.v, node_cmp);
		size_t aliases = 0;
		struct node first = { 0 };
		next.n = 0;
		for (size_t k = 0; k < cur.n && !c->oom; ) {
			size_t g = k;
			uint64_t end = cur.v[k].addr;
			do {
				uint64_t e = cur.v[k].addr + len;
				e = e < cur.v[k].addr ? UINT64_MAX : e;
				end = e > end ? e : end;
				k++;
			} while (k < cur.n && cur.v[k].addr < end);
			size_t pick = g;
			if (k - g > 1) {
				pick = g + pick_array(j, cur.v + g, k - g, level);
				if (!aliases)
					first = cur.v[pick == g ? g + 1 : g];
				aliases += k - g - 1;
			}
			read_array(c, &cur.v[pick], level, &next);
		}
		if (aliases)
			hw_finding(j->s, first.holder, "jemalloc radix tree: "
				   "%zu slot%s point at arrays that overlap "
				   "another slot's (the first: 0x%llx); each "
				   "byte is read once", aliases,
				   aliases == 1 ? "" : "s",
				   (unsigned long long)first.addr);
		struct nodes tmp = cur;
		cur = next;
		next = tmp;
	}
	free(cur.v);
	free(next.v);
}

static int seen_cmp(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	if (x->edata != y->edata)
		return x->edata < y->edata ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int extent_cmp(const void *a, const void *b)
{
	const struct je_extent *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Regions a slab's bitmap marks allocated (bit set = free).  */
static uint32_t count_used(struct je_state *j, const struct je_extent *x)
{
	size_t words = (x->nregs + 63) / 64;
	const uint8_t *b = hw_peek(j->t, x->edata + JE_EDATA_BITMAP, words * 8);
	if (!b)
		return x->nregs;
	uint32_t nfree = 0;
	for (size_t w = 0; w < words; w++) {
		uint64_t v;
		memcpy(&v, b + 8 * w, 8);
		if (w == words - 1 && x->nregs % 64)
			v &= ((uint64_t)1 << (x->nregs % 64)) - 1;
		nfree += (uint32_t)__builtin_popcountll(v);
	}
	return x->nregs - nfree;
}

static bool make_extent(struct je_state *j, const struct seen *sn,
			struct je_extent *x)
{
	struct edata_head h;
	if (!read_edata(j, sn->edata, &h)) {
		hw_finding(j->s, sn->key, "jemalloc radix tree: extent 0x%llx "
			   "for this page is not readable",
			   (unsigned long long)sn->edata);
		return false;
	}
	uint64_t page = (uint64_t)1 << j->p.lg_page;
	memset(x, 0, sizeof *x);
	x->edata = sn->edata;
	x->addr = h.addr;
	x->base = h.addr & ~(page - 1);
	x->size = h.size_esn & ~(page - 1);
	x->arena = (uint32_t)(h.bits & 0xfff);
	x->slab = (h.bits >> 12) & 1;
	x->state = (uint8_t)je_ebits_state(j, h.bits);
	x->szind = (uint16_t)je_ebits_szind(j, h.bits);
	if (!x->size || x->base + x->size < x->base || sn->key < x->base ||
	    sn->key >= x->base + x->size) {
		hw_finding(j->s, sn->edata, "jemalloc extent: [0x%llx, +%llu) "
			   "does not cover page 0x%llx that maps to it",
			   (unsigned long long)x->base,
			   (unsigned long long)x->size,
			   (unsigned long long)sn->key);
		return false;
	}
	if (x->state != JE_ACTIVE)
		return true;
	if (x->slab) {
		if (x->szind >= j->nbins) {
			hw_finding(j->s, sn->edata, "jemalloc slab: size index "
				   "%u is not a small class", x->szind);
			return false;
		}
		x->reg_size = (uint32_t)j->sizes[x->szind];
		x->nregs = (uint32_t)(x->size / x->reg_size);
		if (j->bin_nregs[x->szind] && j->bin_nregs[x->szind] != x->nregs)
			hw_finding(j->s, sn->edata, "jemalloc slab: %llu bytes "
				   "hold %u regions of %u, bin info says %u",
				   (unsigned long long)x->size, x->nregs,
				   x->reg_size, j->bin_nregs[x->szind]);
		if (x->addr != x->base)
			hw_finding(j->s, sn->edata, "jemalloc slab: address "
				   "0x%llx is not page-aligned",
				   (unsigned long long)x->addr);
		x->addr = x->base;
		x->used = count_used(j, x);
		unsigned nfree = je_ebits_nfree(j, h.bits);
		if (nfree != x->nregs - x->used)
			hw_finding(j->s, sn->edata, "jemalloc slab: bitmap has "
				   "%u free regions, the extent counts %u",
				   x->nregs - x->used, nfree);
	} else {
		if (x->szind >= j->nsizes) {
			hw_finding(j->s, sn->edata, "jemalloc large extent: size "
				   "index %u is out of range", x->szind);
			return false;
		}
		if (x->addr + j->sizes[x->szind] > x->base + x->size)
			hw_finding(j->s, sn->edata, "jemalloc large extent: %llu "
				   "bytes at 0x%llx overrun its %llu-byte extent",
				   (unsigned long long)j->sizes[x->szind],
				   (unsigned long long)x->addr,
				   (unsigned long long)x->size);
	}
	return true;
}

enum hw_status je_read_extents(struct je_state *j)
{
	struct collect c = { .j = j };
	walk_tree(&c);
	if (c.oom) {
		free(c.v);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	if (c.n)
		qsort(c.v, c.n, sizeof *c.v, seen_cmp);
	j->ext = calloc(c.n ? c.n : 1, sizeof *j->ext);
	if (!j->ext) {
		free(c.v);
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < c.n; i++) {
		/* Reading the extents is most of a big jemalloc heap's
		   walk: the front end may show how far it is.  */
		if ((i & 0xffff) == 0)
			hw_progress(j->s, "reading jemalloc's extents", i, c.n);
		if (i && c.v[i].edata == c.v[i - 1].edata)
			continue;
		if (make_extent(j, &c.v[i], &j->ext[n]))
			n++;
	}
	free(c.v);
	if (n)
		qsort(j->ext, n, sizeof *j->ext, extent_cmp);
	/* Overlapping extents: keep the first, report the rest.  */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && j->ext[i].base < j->ext[k - 1].base + j->ext[k - 1].size) {
			hw_finding(j->s, j->ext[i].edata, "jemalloc extent at "
				   "0x%llx overlaps the one at 0x%llx",
				   (unsigned long long)j->ext[i].base,
				   (unsigned long long)j->ext[k - 1].base);
			continue;
		}
		j->ext[k++] = j->ext[i];
	}
	j->next = k;
	return HW_OK;
}

const struct je_extent *je_extent_of(const struct je_state *j, uint64_t addr)
{
	size_t lo = 0, hi = j->next;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct je_extent *x = &j->ext[mid];
		if (addr < x->base)
			hi = mid;
		else if (addr >= x->base + x->size)
			lo = mid + 1;
		else
			return x;
	}
	return NULL;
}
