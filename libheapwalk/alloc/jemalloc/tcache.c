/* tcache.c - find every thread cache by its shape, and what it holds.
 *
 * A tcache is an array of cache bins, one per size class from 0 up, and
 * the bins' pointer stacks are carved one after the other out of a single
 * block.  In 5.3 a bin is {void **stack_head; u64 nrequests; u16
 * low_water, full, empty} (the u16s are the low bits of stack positions;
 * items are stack_head[0 .. (empty - head) / 8)); in 5.0-5.2 it is
 * {i32 low_water; i32 ncached; u64 nrequests; void **avail} with items
 * avail[-ncached .. -1], the small bins in one array and the large ones
 * in another further on.  Either way bin k's stack ends where bin k+1's
 * begins, and every item is a region of size class k.  That shape is
 * looked for in all writable memory outside the heap's extents (thread
 * stacks and TLS, jemalloc's metadata), so no TSD layout, thread pointer
 * or symbol is needed, and qemu cores work as kernel cores do.
 */
#include <stdlib.h>
#include <string.h>

#include "../../arch/arch.h"
#include "jemalloc.h"

#define BIN_SIZE 24            /* sizeof(cache_bin_t), 5.0 to 5.3 */
#define MAX_NCACHED 8192       /* well above any ncached_max */
#define MIN_CHAIN 16           /* bins before a run counts as a tcache */

struct bin {
	uint64_t at;           /* offset of the cache_bin_t from the chain's
				  first */
	uint64_t items;        /* address of the first cached item */
	uint32_t n;            /* cached items */
	int32_t low_water;     /* fewest items since the last GC pass */
	uint64_t stack_lo, stack_hi;  /* the bin's whole stack */
	uint64_t nrequests;
};

/* 5.3: decode the bin at d (address at); false if it cannot be one.  */
static bool bin53(const uint8_t *d, struct bin *b)
{
	uint64_t head;
	uint16_t lw, full, empty;
	memcpy(&head, d, 8);
	memcpy(&lw, d + 16, 2);
	memcpy(&full, d + 18, 2);
	memcpy(&empty, d + 20, 2);
	if (!head || (head & 7) || head >> 48)
		return false;
	uint16_t h16 = (uint16_t)head;
	uint16_t span = (uint16_t)(empty - full);
	uint16_t below = (uint16_t)(h16 - full);
	uint16_t above = (uint16_t)(empty - h16);
	if ((span & 7) || below > span || (above & 7) ||
	    (uint16_t)(lw - full) > span || head < below)
		return false;
	memcpy(&b->nrequests, d + 8, 8);
	b->low_water = (uint16_t)(empty - lw) / 8;
	b->items = head;
	b->n = above / 8;
	b->stack_lo = head - below;
	b->stack_hi = head + above;
	return true;
}

/* 5.0-5.2: the same.  The stack's low end is unknown here (it is where
   the previous bin's ends); stack_lo is set to its lowest item.  */
static bool bin52(const uint8_t *d, struct bin *b)
{
	int32_t lw, n;
	uint64_t avail;
	memcpy(&lw, d, 4);
	memcpy(&n, d + 4, 4);
	memcpy(&avail, d + 16, 8);
	if (!avail || (avail & 7) || avail >> 48 || n < 0 || n > MAX_NCACHED ||
	    lw < -1 || lw > n || avail < 8u * (uint64_t)n)
		return false;
	memcpy(&b->nrequests, d + 8, 8);
	b->low_water = lw;
	b->items = avail - 8u * (uint64_t)n;
	b->n = (uint32_t)n;
	b->stack_lo = b->items;
	b->stack_hi = avail;
	return true;
}

/* Does bin b2 follow b1 in one stack block?  */
static bool chained(enum je_era era, const struct bin *b1, const struct bin *b2)
{
	if (era == JE_ERA_53)
		return b2->stack_lo == b1->stack_hi;
	uint64_t d = b2->stack_hi - b1->stack_hi;
	return b2->stack_hi > b1->stack_hi && d <= 8u * MAX_NCACHED &&
	       b2->stack_lo >= b1->stack_hi;
}

/* Is item p a region (or large allocation) of size class k?  */
static bool item_ok(const struct je_state *j, uint64_t p, unsigned k)
{
	const struct je_extent *x = je_extent_of(j, p);
	if (!x || x->state != JE_ACTIVE || x->szind != k)
		return false;
	if (x->slab)
		return p >= x->base && (p - x->base) % x->reg_size == 0 &&
		       (p - x->base) / x->reg_size < x->nregs;
	return p == x->addr;
}

struct found {
	uint64_t at;
	struct bin bins[JE_MAX_SIZES];
	unsigned nbins;
};

/* The chain of bins starting at `at`, or 0 bins.  */
static unsigned read_chain(struct je_state *j, uint64_t at, const uint8_t *d,
			   uint64_t len, struct found *f)
{
	bool (*dec)(const uint8_t *, struct bin *) =
		j->era == JE_ERA_53 ? bin53 : bin52;
	unsigned n = 0;
	uint64_t off = 0;
	while (n < JE_MAX_SIZES && off + BIN_SIZE <= len &&
	       dec(d + off, &f->bins[n]) &&
	       (n == 0 || chained(j->era, &f->bins[n - 1], &f->bins[n]))) {
		f->bins[n].at = off;
		n++;
		off += BIN_SIZE;
	}
	f->at = at;
	f->nbins = n;
	if (j->era == JE_ERA_53 || n < j->nbins || n < MIN_CHAIN)
		return n;
	/* 5.0-5.2: the large bins sit a little further on, in their own
	   array, their stacks continuing after the small ones'.  */
	n = j->nbins;
	for (uint64_t lo = (uint64_t)n * BIN_SIZE; lo + BIN_SIZE <= len &&
	     lo <= (uint64_t)n * BIN_SIZE + 512; lo += 8) {
		struct bin b;
		if (!bin52(d + lo, &b) || !chained(j->era, &f->bins[n - 1], &b))
			continue;
		while (n < JE_MAX_SIZES && lo + BIN_SIZE <= len &&
		       bin52(d + lo, &b) && chained(j->era, &f->bins[n - 1], &b)) {
			b.at = lo;
			f->bins[n++] = b;
			lo += BIN_SIZE;
		}
		break;
	}
	f->nbins = n;
	return j->nbins;       /* records to skip: the small array */
}

static bool add_cached(struct je_state *j, uint64_t p, size_t *cap)
{
	if (j->ncached == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		uint64_t *v = realloc(j->cached, c * sizeof *v);
		if (!v) {
			hw_oom(j->s);
			return false;
		}
		j->cached = v;
		*cap = c;
	}
	j->cached[j->ncached++] = p;
	return true;
}

static bool add_tcache(struct je_state *j, const struct je_tcache *tc,
		       size_t *cap)
{
	if (j->ntcaches == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		struct je_tcache *v = realloc(j->tcaches, c * sizeof *v);
		if (!v) {
			hw_oom(j->s);
			return false;
		}
		j->tcaches = v;
		*cap = c;
	}
	j->tcaches[j->ntcaches++] = *tc;
	return true;
}

/* The thread whose static TLS holds the tcache (its TSD is there): the
   nearest thread pointer above it (x86_64: TLS below the TCB) or below it
   (aarch64: TLS above the TCB), within a few pages.  */
static int owner_of(const struct hw_target *t, uint64_t addr)
{
	bool below = strcmp(t->arch->name, "aarch64") != 0;
	uint64_t best = 1u << 20;
	int tid = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct hw_thread *th = &t->threads[i];
		if (!th->has_tp)
			continue;
		uint64_t d = below ? th->tp - addr : addr - th->tp;
		if ((below ? th->tp > addr : addr > th->tp) && d < best) {
			best = d;
			tid = th->tid;
		}
	}
	return tid;
}

/* Usable size of the allocation the stacks were carved from (jemalloc
   counts it in its arena's stats.internal): the one holding the last
   word of bin 0's stack.  */
static uint64_t stack_block(const struct je_state *j, const struct bin *b0)
{
	const struct je_extent *x = je_extent_of(j, b0->stack_hi - 8);
	if (!x || x->state != JE_ACTIVE)
		return 0;
	return x->slab ? x->reg_size : j->sizes[x->szind];
}

/* Is the chain a tcache: are its items (nearly) all regions of the
   right class?  */
static bool judge_chain(struct je_state *j, const struct found *f)
{
	uint64_t good = 0, bad = 0;
	unsigned nb = f->nbins < j->nsizes ? f->nbins : j->nsizes;
	for (unsigned k = 0; k < nb; k++) {
		const struct bin *b = &f->bins[k];
		const uint8_t *it = b->n ? hw_peek(j->t, b->items, 8u * b->n) : NULL;
		if (b->n && !it) {
			bad += b->n;
			continue;
		}
		for (uint32_t i = 0; i < b->n; i++) {
			uint64_t p;
			memcpy(&p, it + 8 * i, 8);
			if (item_ok(j, p, k))
				good++;
			else
				bad++;
		}
	}
	return !bad || good >= 4 * bad;
}

/* Take a tcache: its cached items, reporting the ones that are not
   regions of the right class.  */
static void take_chain(struct je_state *j, const struct found *f,
		       size_t *cap_items, size_t *cap_tc)
{
	unsigned nb = f->nbins < j->nsizes ? f->nbins : j->nsizes;
	struct je_tcache tc = { .addr = f->at, .nbins = nb,
				.tid = owner_of(j->t, f->at), .arena = -1,
				.stacks = nb ? stack_block(j, &f->bins[0]) : 0,
				.stack_word = nb ? f->bins[0].stack_hi - 8 : 0 };
	for (unsigned k = 0; k < nb; k++) {
		const struct bin *b = &f->bins[k];
		const uint8_t *it = b->n ? hw_peek(j->t, b->items, 8u * b->n) : NULL;
		/* A cached item not read is a region free in a cache that
		   will read as in use: its class is marked (jemalloc writes
		   nothing into a cached region that would tell which).  */
		if (b->n && !it && k < JE_MAX_SIZES)
			j->class_lost[k] = true;
		for (uint32_t i = 0; it && i < b->n; i++) {
			uint64_t p;
			memcpy(&p, it + 8 * i, 8);
			if (!item_ok(j, p, k)) {
				hw_finding(j->s, b->items + 8 * i, "jemalloc "
					   "tcache bin %u: 0x%llx is not a "
					   "region of size %llu (the region it "
					   "held reads as in use: leaks calls "
					   "none of its size lost)", k,
					   (unsigned long long)p,
					   (unsigned long long)j->sizes[k]);
				if (k < JE_MAX_SIZES)
					j->class_lost[k] = true;
				continue;
			}
			if (!add_cached(j, p, cap_items))
				return;
			tc.cached++;
			tc.bytes += j->sizes[k];
		}
	}
	add_tcache(j, &tc, cap_tc);
}

/* A chain found by the scan that is a tcache by its items.  */
struct candidate {
	uint64_t at;
	uint64_t stack_word;   /* the last word of bin 0's stack */
	int tid;
};

struct candidates {
	struct candidate *v;
	size_t n, cap;
};

static void scan_range(struct je_state *j, uint64_t lo, uint64_t hi,
		       struct candidates *c, struct found *f)
{
	for (uint64_t at = (lo + 7) & ~(uint64_t)7; at < hi; ) {
		const uint8_t *d;
		uint64_t len = hw_readable_run(j->t, at, &d);
		if (!len) {
			const struct hw_region *r = hw_region_of(j->t, at);
			at = r ? r->end : hi;
			continue;
		}
		if (len > hi - at)
			len = hi - at;
		uint64_t off = 0;
		while (off + 2 * BIN_SIZE <= len) {
			struct bin b0, b1;
			bool ok = j->era == JE_ERA_53 ?
				bin53(d + off, &b0) && bin53(d + off + BIN_SIZE, &b1) :
				bin52(d + off, &b0) && bin52(d + off + BIN_SIZE, &b1);
			if (!ok || !chained(j->era, &b0, &b1)) {
				off += 8;
				continue;
			}
			unsigned n = read_chain(j, at + off, d + off, len - off, f);
			if (n < MIN_CHAIN) {
				off += 8;
				continue;
			}
			if (judge_chain(j, f)) {
				if (c->n == c->cap) {
					size_t cap = c->cap ? 2 * c->cap : 16;
					struct candidate *v =
						realloc(c->v, cap * sizeof *v);
					if (!v) {
						hw_oom(j->s);
						return;
					}
					c->v = v;
					c->cap = cap;
				}
				c->v[c->n++] = (struct candidate){
					.at = f->at,
					.stack_word = f->bins[0].stack_hi - 8,
					.tid = owner_of(j->t, f->at) };
			}
			off += (uint64_t)n * BIN_SIZE;
		}
		at += len;
	}
}

/* By their stacks, the one a thread owns first, then by address.  */
static int by_stack(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->stack_word != y->stack_word)
		return x->stack_word < y->stack_word ? -1 : 1;
	if (!x->tid != !y->tid)
		return x->tid ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int by_address(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Two tcaches never share their bins' stacks (each carves them from an
   allocation of its own), so chains that do are one tcache and copies
   of it: a crash handler's or a debugger's copy of the struct on a
   stack, stale, that would count every item it still shows a second
   time (a "double free" that is none).  The one a thread's TLS holds is
   kept (else the first); the others are said in a note.  */
static void drop_copies(struct je_state *j, struct candidates *c)
{
	if (c->n < 2)
		return;
	qsort(c->v, c->n, sizeof *c->v, by_stack);
	size_t kept = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (kept && c->v[kept - 1].stack_word == c->v[i].stack_word) {
			hw_note(j->s, c->v[i].at, "jemalloc: a copy of the "
				"thread cache at 0x%llx (the same bins' "
				"stacks), stale: not counted",
				(unsigned long long)c->v[kept - 1].at);
			continue;
		}
		c->v[kept++] = c->v[i];
	}
	c->n = kept;
	qsort(c->v, c->n, sizeof *c->v, by_address);
}

unsigned je_tcache_bins(struct je_state *j, const struct je_tcache *tc,
			struct je_cache_bin *out)
{
	const uint8_t *d;
	uint64_t len = hw_readable_run(j->t, tc->addr, &d);
	struct found *f = malloc(sizeof *f);
	if (!f) {
		hw_oom(j->s);
		return 0;
	}
	unsigned nb = 0;
	if (len >= 2 * BIN_SIZE) {
		read_chain(j, tc->addr, d, len, f);
		nb = f->nbins < tc->nbins ? f->nbins : tc->nbins;
	}
	for (unsigned k = 0; k < nb; k++) {
		const struct bin *b = &f->bins[k];
		/* 5.3's bin knows its stack's bounds; before, a stack ends
		   where the previous bin's does, and bin 0's start is not
		   in the bins at all.  */
		uint64_t lo = j->era == JE_ERA_53 ? b->stack_lo
			      : k ? f->bins[k - 1].stack_hi : 0;
		out[k] = (struct je_cache_bin){
			.at = tc->addr + b->at, .items = b->items, .n = b->n,
			.max = lo && b->stack_hi > lo
			       ? (uint32_t)((b->stack_hi - lo) / 8) : 0,
			.low_water = b->low_water, .nrequests = b->nrequests };
	}
	free(f);
	return nb;
}

bool je_cached_at(struct je_state *j, uint64_t p, uint16_t szind,
		  struct je_cached_place *where)
{
	struct je_cache_bin *bins = malloc(JE_MAX_SIZES * sizeof *bins);
	if (!bins) {
		hw_oom(j->s);
		return false;
	}
	bool found = false;
	for (size_t i = 0; i < j->ntcaches && !found; i++) {
		const struct je_tcache *tc = &j->tcaches[i];
		if (szind >= tc->nbins || szind >= je_tcache_bins(j, tc, bins))
			continue;
		const struct je_cache_bin *b = &bins[szind];
		const uint8_t *it = b->n ? hw_peek(j->t, b->items, 8u * b->n)
					 : NULL;
		for (uint32_t k = 0; it && k < b->n && !found; k++) {
			uint64_t q;
			memcpy(&q, it + 8 * k, 8);
			found = q == p;
			if (found)
				*where = (struct je_cached_place){
					.tcache = i, .bin = *b, .pos = k };
		}
	}
	free(bins);
	return found;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void je_find_tcaches(struct je_state *j)
{
	struct hw_target *t = j->t;
	size_t cap_items = 0, cap_tc = 0;
	struct candidates c = { 0 };
	struct found *f = malloc(sizeof *f);
	if (!f) {
		hw_oom(j->s);
		return;
	}
	/* Writable memory between the extents.  */
	size_t x = 0;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (!(r->prot & HW_PROT_W))
			continue;
		uint64_t cur = r->start;
		/* An extent may run on from the previous region.  */
		if (x > 0 && j->ext[x - 1].base + j->ext[x - 1].size > cur)
			cur = j->ext[x - 1].base + j->ext[x - 1].size;
		while (x < j->next && j->ext[x].base + j->ext[x].size <= cur)
			x++;
		while (cur < r->end) {
			uint64_t gap_end = r->end;
			if (x < j->next && j->ext[x].base < gap_end)
				gap_end = j->ext[x].base > cur ? j->ext[x].base : cur;
			if (gap_end > cur)
				scan_range(j, cur, gap_end, &c, f);
			if (x < j->next && j->ext[x].base < r->end) {
				cur = j->ext[x].base + j->ext[x].size;
				x++;
			} else {
				cur = r->end;
			}
		}
	}
	drop_copies(j, &c);
	for (size_t i = 0; i < c.n; i++) {
		const uint8_t *d;
		uint64_t len = hw_readable_run(t, c.v[i].at, &d);
		if (len >= 2 * BIN_SIZE &&
		    read_chain(j, c.v[i].at, d, len, f) >= MIN_CHAIN)
			take_chain(j, f, &cap_items, &cap_tc);
	}
	free(c.v);
	free(f);
	j->how_tcache = "scan of writable memory for cache-bin arrays";
	if (j->ncached)
		qsort(j->cached, j->ncached, sizeof *j->cached, u64_cmp);
	/* One pointer in two caches, or twice in one: a double free.  */
	size_t k = 0;
	for (size_t i = 0; i < j->ncached; i++) {
		if (k && j->cached[i] == j->cached[k - 1]) {
			hw_finding(j->s, j->cached[i], "jemalloc: region is "
				   "cached twice in thread caches (double free)");
			continue;
		}
		j->cached[k++] = j->cached[i];
	}
	j->ncached = k;
	/* Count them per extent, for the bins report.  */
	for (size_t i = 0; i < j->ncached; i++) {
		struct je_extent *e = (struct je_extent *)je_extent_of(j, j->cached[i]);
		if (e)
			e->ncached++;
	}
}
