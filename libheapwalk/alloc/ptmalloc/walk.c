/* walk.c - the chunk-by-chunk walk of every heap, and mmapped chunks.
 *
 * Heaps are walked in address order by their size fields.  A chunk's
 * state comes from the next chunk's P bit, corrected by list membership
 * (tcache and fastbin chunks look in use).  A size field that cannot be
 * right is a finding; the walk takes up the chain again at the next
 * position from which it is consistent (resync.c), so one broken header
 * loses only the chunk it belongs to.
 *
 * mmapped chunks are linked nowhere.  They are found by looking at the
 * start of every page of anonymous writable memory outside the heaps for a
 * header glibc would have written: flags exactly IS_MMAPPED, and
 * prev_size + size a whole number of pages that fits in the mapping (the
 * kernel may have merged the mapping with its neighbours).  From 2.43 the
 * mapping ends with a spare 16-byte header after the chunk (prev_size +
 * size + 16 is the whole number of pages, and prev_size's bit 0 says the
 * pages are huge ones): each chunk's numbers say which layout it has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptmalloc.h"

static bool overlaps_heap(struct pm_state *p, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < p->nheaps; i++)
		if (start < p->heaps[i].end && p->heaps[i].start < end)
			return true;
	return false;
}

static bool add_mmapped(struct pm_state *p, size_t *cap, uint64_t chunk,
			uint64_t size, uint64_t tail)
{
	if (p->nmmapped == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct pm_mmapped *n = realloc(p->mmapped, ncap * sizeof *n);
		if (!n) {
			hw_oom(p->s);
			return false;
		}
		p->mmapped = n;
		*cap = ncap;
	}
	p->mmapped[p->nmmapped].chunk = chunk;
	p->mmapped[p->nmmapped].size = size;
	p->mmapped[p->nmmapped].tail = tail;
	p->nmmapped++;
	return true;
}

/* Look at the page starts of region r for mmapped chunk headers; fn
   takes each (false: stop).  *hi is the first heap not below r (heaps and
   regions are both in address order).  */
static bool scan_region(struct pm_state *p, const struct hw_region *r,
			size_t *hi, bool (*fn)(struct pm_state *, void *,
					       uint64_t, uint64_t, uint64_t),
			void *cookie)
{
	uint64_t ps = p->pagesize;
	uint64_t a = (r->start + ps - 1) & ~(ps - 1);
	while (a + PM_HDR <= r->end) {
		uint64_t hdr[2];
		/* No mmapped chunk starts inside a heap: skip the heaps
		   instead of looking at each of their pages.  */
		while (*hi < p->nheaps && p->heaps[*hi].end <= a)
			(*hi)++;
		if (*hi < p->nheaps && p->heaps[*hi].start <= a) {
			uint64_t next = (p->heaps[*hi].end + ps - 1) & ~(ps - 1);
			if (next <= a)
				break;
			a = next;
			continue;
		}
		const uint8_t *q = hw_peek(p->t, a, 16);
		if (!q)
			break;
		memcpy(hdr, q, 16);
		uint64_t sz = hdr[1] & ~(uint64_t)PM_SIZE_BITS;
		uint64_t off = hdr[0] & ~(uint64_t)1;    /* 2.43+: bit 0 */
		uint64_t tail = !((off + sz) & (ps - 1)) && !(hdr[0] & 1) ? 0
			      : !((off + sz + 16) & (ps - 1)) ? 16 : 1;
		uint64_t span = sz + tail;
		if ((hdr[1] & PM_SIZE_BITS) == PM_IS_MMAPPED && tail != 1 &&
		    sz >= ps - 16 && off < ps && !(off & 15) && a + span > a &&
		    a + span <= r->end && !overlaps_heap(p, a, a + span)) {
			if (pm_mmapped_ours(p, a) &&
			    !fn(p, cookie, a, sz, tail))
				return false;
			a += span;
			continue;
		}
		a += ps;
	}
	return true;
}

static bool mmapped_region(const struct hw_region *r)
{
	return r->file < 0 && (r->prot & HW_PROT_W) && r->avail;
}

struct mmapped_list {
	size_t cap;
	uint64_t total;
	unsigned with_tail, without;
};

static bool add_found(struct pm_state *p, void *cookie, uint64_t a,
		      uint64_t sz, uint64_t tail)
{
	struct mmapped_list *l = cookie;
	if (!add_mmapped(p, &l->cap, a, sz, tail))
		return false;
	l->total += sz + tail;
	if (tail)
		l->with_tail++;
	else
		l->without++;
	return true;
}

void pm_find_mmapped(struct pm_state *p)
{
	if (p->mmapped_done)
		return;
	p->mmapped_done = true;
	struct hw_target *t = p->t;
	struct mmapped_list l = { 0 };
	size_t hi = 0;
	for (size_t i = 0; i < t->nregions; i++)
		if (mmapped_region(&t->regions[i]) &&
		    !scan_region(p, &t->regions[i], &hi, add_found, &l))
			return;
	if (l.with_tail && !l.without)
		pm_era_observe(p, 43, PM_NEWEST_MINOR, "mmapped chunks end "
			       "with a spare header");
	else if (l.without && !l.with_tail)
		pm_era_observe(p, 17, 42, "mmapped chunks fill their "
			       "mappings");
	/* 2.43 and 2.44 add 16 bytes too many to mmapped_mem each time
	   realloc moves or grows a chunk with mremap.  */
	bool remap_drift = l.with_tail && p->nmmapped == p->n_mmaps &&
			   p->mmapped_mem > l.total &&
			   (p->mmapped_mem - l.total) % 16 == 0;
	uint64_t mp_word;
	if (p->mp && hw_read_u64(t, p->mp, &mp_word) &&
	    (p->nmmapped != p->n_mmaps || l.total != p->mmapped_mem))
		hw_note(p->s, p->mp, "mp_ counts %llu mmapped chunks "
			   "(%llu bytes), the core holds %zu (%llu bytes)%s",
			   (unsigned long long)p->n_mmaps,
			   (unsigned long long)p->mmapped_mem, p->nmmapped,
			   (unsigned long long)l.total,
			   remap_drift ? " (glibc 2.43+ counts 16 bytes too "
					 "many at each mremap of a chunk)" : "");
}

struct mmapped_hit {
	uint64_t addr, chunk, size, tail;
};

static bool match_found(struct pm_state *p, void *cookie, uint64_t a,
			uint64_t sz, uint64_t tail)
{
	(void)p;
	struct mmapped_hit *h = cookie;
	if (h->addr >= a && h->addr - a < sz) {
		h->chunk = a;
		h->size = sz;
		h->tail = tail;
		return false;
	}
	return a <= h->addr;
}

/* The mmapped chunk holding addr, if any: from the full list when it was
   made, else by scanning the one mapping that holds addr.  */
static bool mmapped_at(struct pm_state *p, uint64_t addr,
		       struct pm_mmapped *out)
{
	if (p->mmapped_done) {
		for (size_t i = 0; i < p->nmmapped; i++)
			if (addr >= p->mmapped[i].chunk &&
			    addr - p->mmapped[i].chunk < p->mmapped[i].size) {
				*out = p->mmapped[i];
				return true;
			}
		return false;
	}
	const struct hw_region *r = hw_region_of(p->t, addr);
	if (!r || !mmapped_region(r))
		return false;
	size_t hi = 0;
	struct mmapped_hit h = { .addr = addr };
	scan_region(p, r, &hi, match_found, &h);
	out->chunk = h.chunk;
	out->size = h.size;
	out->tail = h.tail;
	return h.size != 0;
}

/* What a walk reports (findings are taken once per session) and what
   it is for.  */
enum walk_mode {
	REPORT_CHAIN = 1,   /* the size chain's and the headers' findings */
	REPORT_LISTS = 2,   /* those that need every list walked */
	STATES_ONLY = 4,    /* only the bins of free chunks are not walked */
	PROGRESS = 8,       /* the caller's thread: tells the front end how
			       far the whole walk is */
	LINK_SUMS = 16,     /* the small and large bins are not walked: hash
			       the links of the free chunks no list holds */
	GUESS_FAST = 32,    /* the fastbins are not walked: guess their
			       entries, given as free (pm_fast_guess) */
	MARK_PIECES = 64,   /* a walk from each heap's start: note where
			       the walk is at each PM_PIECE_BYTES (pieces.c) */
};

/* Chunks between two progress checkpoints: rare enough to cost nothing
   in the walk's loop, often enough for a few updates a second.  */
#define PROGRESS_CHUNKS (1u << 18)

/* A unit (heap or mmapped chunk) done, or (in_unit) part of the one the
   caller's thread is in: the units the other parts are in count once
   they are done.  */
static void progress(struct pm_state *p, uint64_t finished, uint64_t in_unit,
		     unsigned mode)
{
	uint64_t done = atomic_fetch_add_explicit(&p->progress_done, finished,
						  memory_order_relaxed) + finished;
	if (mode & PROGRESS)
		hw_progress(p->s, "walking the heap", done + in_unit,
			    p->progress_total);
}

static void progress_begin(struct pm_state *p)
{
	uint64_t total = 0;
	for (size_t i = 0; i < p->nheaps; i++)
		total += p->heaps[i].end - p->heaps[i].start;
	for (size_t i = 0; i < p->nmmapped; i++)
		total += p->mmapped[i].size;
	atomic_store_explicit(&p->progress_done, 0, memory_order_relaxed);
	p->progress_total = total;
}

/* A free chunk that no walked list holds, in a walk with link sums:
   glibc keeps it in the small or large bin of its size, so its fd and
   bk are hashed as links within that bin (linksums.c checks them).
   `mem` is the chunk's bytes in the core's mapping, or NULL.  */
static void link_sum(struct pm_heap *h, struct pm_state *p, uint64_t chunk,
		     uint64_t sz, const uint8_t *mem)
{
	uint64_t w[2];
	int cls = pm_bin_index(sz);
	uint64_t broken = 1ull << (cls & 63);
	if (mem)
		memcpy(w, mem + PM_HDR, sizeof w);
	else if (!hw_read(p->t, chunk + PM_HDR, w, sizeof w)) {
		h->sums.link_broken[cls >> 6] |= broken;
		return;
	}
	/* A chunk linked to itself would add equal hashes both ways.  */
	if (w[0] == chunk || w[1] == chunk)
		h->sums.link_broken[cls >> 6] |= broken;
	h->sums.link_fwd[cls] += pm_link_hash(chunk, w[0]);
	h->sums.link_bwd[cls] += pm_link_hash(w[1], chunk);
	h->sums.bin_count[cls]++;
	h->sums.bin_bytes[cls] += sz;
}

/* Classify one heap chunk.  `next_p` is the P bit of the chunk after it;
   `mem` its bytes in the core's mapping (NULL: not mapped whole).  */
static void classify(struct pm_state *p, struct pm_heap *h,
		     struct hw_chunk *c, bool next_p, const uint8_t *mem,
		     unsigned mode)
{
	enum pm_tag tag = pm_tag_get(h, c->chunk);
	bool tcached = c->chunk_size <= p->tcache_max_chunk &&
		       pm_is_tcached(h, c->addr);
	if (next_p) {
		c->used = !(tag == PM_TAG_FAST || tcached);
		c->where = tcached ? HW_WHERE_TCACHE
			 : tag == PM_TAG_FAST ? HW_WHERE_FASTBIN
			 : HW_WHERE_HEAP;
		/* A thread's tcache struct: glibc's, not the program's.  */
		if (__builtin_expect(c->chunk_size == p->tc_struct_chunk, 0) &&
		    c->used && pm_is_tcache_struct(p, c->addr))
			c->where = HW_WHERE_TCACHE_STRUCT;
		if (c->used && p->orphans.any && pm_tcache_orphan(p, c)) {
			c->used = false;
			c->where = HW_WHERE_TCACHE;
			c->orphan = true;
			if (mode & REPORT_LISTS)
				hw_finding(p->s, c->chunk, "orphaned tcache "
					   "entry: its key word says it is in "
					   "a tcache, but no tcache list reaches "
					   "it (a next pointer or a list head "
					   "before it was overwritten)");
		}
		if ((mode & GUESS_FAST) && c->used && tag == PM_TAG_NONE &&
		    !tcached && pm_fast_guess(p, h, c->chunk, c->chunk_size,
					      mem)) {
			c->used = false;
			c->where = HW_WHERE_FASTBIN;
		}
		enum pm_fast_verdict fv = PM_FAST_NO;
		if (c->used && tag == PM_TAG_NONE && !tcached &&
		    p->arenas[h->arena].fast_broken)
			fv = pm_fast_orphan(p, h, c);
		if (fv == PM_FAST_MAYBE) {
			c->maybe_free = true;
			if (mode & REPORT_LISTS)
				hw_note(p->s, c->chunk, "maybe an orphaned "
					"fastbin entry: its plain fd leads "
					"through chunks of its size to the end "
					"of a list, and that fastbin's list is "
					"broken, but a chunk in use can hold the "
					"same links: kept in use, and leaks calls "
					"it unknown, not lost");
		}
		if (fv == PM_FAST_ORPHAN) {
			c->used = false;
			c->where = HW_WHERE_FASTBIN;
			c->orphan = true;
			if (mode & REPORT_LISTS)
				hw_finding(p->s, c->chunk, "orphaned fastbin "
					   "entry: in use by its header, but "
					   "its safe-linked fd leads through "
					   "chunks of its size to the end of a "
					   "list, and that fastbin's list is "
					   "broken before it (an fd or the head "
					   "was overwritten)");
		}
		if ((mode & REPORT_LISTS) &&
		    (tag == PM_TAG_UNSORTED || tag == PM_TAG_BINNED))
			hw_finding(p->s, c->chunk, "chunk is in a bin but the "
				   "next chunk's P bit says it is in use "
				   "(double free or corruption (!prev))");
		return;
	}
	c->used = false;
	if (tag == PM_TAG_UNSORTED)
		c->where = HW_WHERE_UNSORTED;
	else if (tag == PM_TAG_BINNED)
		c->where = c->chunk_size < 0x400 ? HW_WHERE_SMALLBIN
						 : HW_WHERE_LARGEBIN;
	else if ((mode & LINK_SUMS) && tag == PM_TAG_NONE && !tcached) {
		c->where = HW_WHERE_COUNT;        /* settled by the sums */
		link_sum(h, p, c->chunk, c->chunk_size, mem);
		return;
	} else if (tag == PM_TAG_NONE && !tcached &&
		   ((p->bins_summed && !p->lists_done) ||
		    pm_bin_summed(&p->arenas[h->arena], c->chunk_size))) {
		/* The sums said the bins hold exactly these chunks, each in
		   its size's bin.  */
		c->where = c->chunk_size < 0x400 ? HW_WHERE_SMALLBIN
						 : HW_WHERE_LARGEBIN;
		return;
	} else if ((mode & (STATES_ONLY | LINK_SUMS)) && !p->lists_done)
		c->where = HW_WHERE_COUNT;        /* its bin is not known */
	else if (tag == PM_TAG_NONE && !tcached &&
		 p->arenas[h->arena].free_summed)
		/* In one of its arena's bins, the sums said, but which one
		   was not asked (a walk for counting).  */
		c->where = HW_WHERE_COUNT;
	else {
		c->where = HW_WHERE_UNBINNED;
		if (mode & REPORT_LISTS)
			hw_finding(p->s, c->chunk, "free chunk (next P bit "
				   "clear) is in no bin");
	}
	if ((mode & REPORT_LISTS) && (tag == PM_TAG_FAST || tcached))
		hw_finding(p->s, c->chunk, "chunk is in a %s but its header "
			   "says it is free", tcached ? "tcache" : "fastbin");
}

/* A size field that cannot be, at chunk c.  The usual cause is the
   chunk just before, written past its end (`prev`, the last chunk
   delivered, or none when the damage is at the heap's start), so the
   finding names it.  `resume` is where the walk takes up the chain again
   (resync.c), 0 when no consistent chain follows.  */
static void bad_size(struct pm_state *p, uint64_t c, uint64_t sz,
		     uint64_t field, const struct hw_chunk *prev,
		     uint64_t resume)
{
	char blame[160] = "", rest[128];
	/* A size that fits but is wrong shows only at the header it leads
	   to: then the chunk before may be the damaged one.  */
	if (prev->chunk && prev->chunk + prev->chunk_size == c)
		snprintf(blame, sizeof blame, ", likely overrun by the %s "
			 "chunk at 0x%llx (%llu bytes) or its size is wrong",
			 prev->used ? "used" : "free",
			 (unsigned long long)prev->addr,
			 (unsigned long long)prev->size);
	if (resume)
		snprintf(rest, sizeof rest, "0x%llx bytes skipped, walk "
			 "resumed at 0x%llx", (unsigned long long)(resume - c),
			 (unsigned long long)resume);
	else
		snprintf(rest, sizeof rest, "rest of heap skipped");
	hw_partial(p->s, c, "invalid chunk size 0x%llx (field 0x%llx)%s; %s",
		   (unsigned long long)sz, (unsigned long long)field, blame,
		   rest);
}

/* May a header at c in heap h (ending at `end`) hold size sz?  Zero and
   header-sized sizes are the fenceposts that close a heap, so only at its
   end.  */
static bool size_fits(uint64_t c, uint64_t sz, uint64_t end)
{
	if (sz == 0)
		return c + 2 * PM_HDR >= end;
	if (sz == PM_HDR)
		return c + 3 * PM_HDR >= end;
	return sz >= PM_MINSIZE && !(sz & 15) && sz <= end - c;
}

/* Chunk c of size sz's bounds in *out.  */
static inline void chunk_bounds(const struct pm_state *p,
				struct hw_chunk *out, uint64_t c, uint64_t sz)
{
	out->chunk = c;
	out->chunk_size = sz;
	out->addr = c + PM_HDR;
	out->size = sz - p->l.usable_slack;
}

/* Hand chunk c (size sz, header `field`, the next header `nfield`) to
   fn through *out.  Inline, always: eleven arguments, five of them on
   the stack, for every chunk.  */
static inline __attribute__((always_inline)) bool
deliver(struct pm_state *p, struct pm_heap *h, struct hw_chunk *out,
	uint64_t c, uint64_t sz, uint64_t field, uint64_t nfield,
	const uint8_t *mem, hw_chunk_fn *fn, void *cookie, unsigned mode)
{
	chunk_bounds(p, out, c, sz);
	out->orphan = false;
	out->maybe_free = false;
	classify(p, h, out, (nfield & PM_PREV_INUSE) != 0, mem, mode);
	/* glibc keeps the A bit only on chunks in use (by header):
	   consolidation rewrites free chunks' heads without it.  */
	if ((mode & REPORT_CHAIN) && (nfield & PM_PREV_INUSE) &&
	    ((field & PM_NON_MAIN_ARENA) != 0) != (h->arena != 0))
		hw_finding(p->s, c, "NON_MAIN_ARENA bit wrong for arena %d",
			   h->arena);
	return fn(cookie, out);
}

/* Chunk c in a walk whose chunks no one takes (the walk in threads that
   settles the lists): the common chunks, on no list that was walked,
   need only what classify() and deliver() would record of them -- an in
   use one a fastbin guess, a free one its links' hashes.  False for any
   other chunk, which takes the whole way (deliver).  *out is the chunk
   as far as a finding about the next one asks (bad_size).  */
static inline bool settle_plain(struct pm_state *p, struct pm_heap *h,
				struct hw_chunk *out, uint64_t c, uint64_t sz,
				uint64_t field, uint64_t nfield,
				const uint8_t *mem, unsigned mode)
{
	if (pm_tag_get(h, c) != PM_TAG_NONE || p->orphans.any ||
	    p->arenas[h->arena].fast_broken)
		return false;
	bool tcached = sz <= p->tcache_max_chunk && pm_is_tcached(h, c + PM_HDR);
	bool used = false;
	if (!(nfield & PM_PREV_INUSE)) {
		if (!(mode & LINK_SUMS) || tcached)
			return false;
		link_sum(h, p, c, sz, mem);
	} else {
		if ((mode & REPORT_CHAIN) &&
		    ((field & PM_NON_MAIN_ARENA) != 0) != (h->arena != 0))
			return false;
		used = !tcached && !((mode & GUESS_FAST) &&
				     pm_fast_guess(p, h, c, sz, mem));
	}
	chunk_bounds(p, out, c, sz);
	out->used = used;
	return true;
}

/* Walk heap h from chunk `from` (h->start, or a chunk boundary an
   earlier walk found) to the first chunk at or past `until` (at most its
   end), or until fn says stop.  Where the walk goes depends on the core
   alone, so a walk from a boundary an earlier walk passed (a piece's
   mark) meets the chunks that walk met, in the same order.  */
static bool walk_heap_range(struct pm_state *p, struct pm_heap *h,
			    uint64_t from, uint64_t until, hw_chunk_fn *fn,
			    void *cookie, unsigned mode)
{
	bool report = (mode & REPORT_CHAIN) != 0;
	bool settling = fn == pm_take_nothing;
	struct pm_arena *ar = &p->arenas[h->arena];
	const uint8_t *base = NULL;
	uint64_t run = hw_readable_run(p->t, h->start, &base);
	uint64_t end = h->end, c = from;
	struct hw_chunk out = { .arena = h->arena };
	/* The chunk whose size the one before it checked (size_fits).  */
	uint64_t checked = 0;
	uint64_t prefetched = c;
	unsigned countdown = PROGRESS_CHUNKS;
	uint64_t next_mark = mode & MARK_PIECES ? h->start : UINT64_MAX;
	if (until > end)
		until = end;
	while (c < until) {
		uint64_t field;
		if (__builtin_expect(c >= next_mark, 0))
			next_mark = pm_piece_mark(h, c);
		if (__builtin_expect(--countdown == 0, 0)) {
			countdown = PROGRESS_CHUNKS;
			if (mode & PROGRESS)
				progress(p, 0, c - h->start, mode);
		}
		if (prefetched < c)     /* (after a skipped range) */
			prefetched = c;
		/* The next address depends on this load, so the hardware
		   cannot run ahead; the heap is read front to back anyway.
		   Four lines at a time keep ahead of chunks of the usual
		   sizes at a quarter of a line-by-line loop's tests.  */
		if (prefetched < c + 1024 && prefetched + 256 <= h->start + run) {
			const uint8_t *q = base + (prefetched - h->start);
			__builtin_prefetch(q);
			__builtin_prefetch(q + 64);
			__builtin_prefetch(q + 128);
			__builtin_prefetch(q + 192);
			prefetched += 256;
		}
		if (c + 16 <= h->start + run)
			memcpy(&field, base + (c - h->start) + 8, 8);
		else if (!hw_read_u64(p->t, c + 8, &field)) {
			/* Pages missing from the core (a truncated file):
			   their chunks are unknown, not guessed.  */
			if (report)
				hw_partial(p->s, c, "chunk header not in the "
					   "core (truncated?): the heap's "
					   "0x%llx-0x%llx is not walked, its "
					   "chunks are unknown",
					   (unsigned long long)c,
					   (unsigned long long)end);
			return true;
		}
		uint64_t sz = field & ~(uint64_t)PM_SIZE_BITS;
		if (c == ar->top) {
			out.chunk = c;
			out.chunk_size = sz;
			out.addr = c + PM_HDR;
			out.size = sz >= p->l.usable_slack ? sz - p->l.usable_slack : 0;
			out.used = false;
			out.where = HW_WHERE_TOP;
			if (report && c + sz != end)
				hw_finding(p->s, c, "top chunk size 0x%llx does "
					   "not reach the heap end 0x%llx "
					   "(malloc(): corrupted top size)",
					   (unsigned long long)sz,
					   (unsigned long long)end);
			return fn(cookie, &out);
		}
		if (c != checked && !size_fits(c, sz, end)) {
			/* Only the heap's first chunk, or the chunk a
			   caller resumes at, gets here: later ones are
			   checked one chunk ahead, below.  */
			uint64_t resume = 0;
			pm_resync(p, h, c + PM_ALIGN, &resume);
			if (report)
				bad_size(p, c, sz, field, &out, resume);
			if (!resume)
				return true;
			c = resume;
			continue;
		}
		if (sz == 0)            /* fencepost: end of this heap */
			return true;
		if (sz == PM_HDR) {     /* fencepost before the end marker */
			c += sz;
			continue;
		}
		uint64_t nfield = 1;
		uint64_t n = c + sz;
		if (n + 16 <= h->start + run)
			memcpy(&nfield, base + (n - h->start) + 8, 8);
		else if (n < end)
			hw_read_u64(p->t, n + 8, &nfield);
		if (n < end && n != ar->top &&
		    !size_fits(n, nfield & ~(uint64_t)PM_SIZE_BITS, end)) {
			/* The next header is damaged, or this one is and
			   only looks right: a consistent chain from inside
			   this chunk says it is this one.  */
			uint64_t resume = 0;
			pm_resync(p, h, c + PM_ALIGN, &resume);
			if (resume && resume < n) {
				if (report)
					bad_size(p, c, sz, field, &out, resume);
				c = resume;
				continue;
			}
			/* The P bit of a broken header says nothing: this
			   chunk is free only if a bin holds it (and the one
			   overrun is most often in use).  */
			enum pm_tag tag = pm_tag_get(h, c);
			uint64_t p_bit = tag == PM_TAG_UNSORTED ||
					 tag == PM_TAG_BINNED ? 0 : PM_PREV_INUSE;
			if (!deliver(p, h, &out, c, sz, field, p_bit, NULL,
				     fn, cookie, mode))
				return false;
			if (report)
				bad_size(p, n, nfield & ~(uint64_t)PM_SIZE_BITS,
					 nfield, &out, resume);
			if (!resume)
				return true;
			c = resume;
			continue;
		}
		/* When a thread arena moves on to a new heap, an old top too
		   small to free is left as a chunk without the A bit before
		   the final fencepost: heap overhead, never handed out.  */
		if (h->arena != 0 && !(field & PM_NON_MAIN_ARENA) &&
		    (nfield & ~(uint64_t)PM_SIZE_BITS) == 0 && n + PM_HDR >= end) {
			c = n;
			continue;
		}
		checked = n;
		const uint8_t *mem = c + 2 * PM_HDR <= h->start + run
				     ? base + (c - h->start) : NULL;
		if (!(settling && settle_plain(p, h, &out, c, sz, field,
					       nfield, mem, mode)) &&
		    !deliver(p, h, &out, c, sz, field, nfield, mem, fn,
			     cookie, mode))
			return false;
		c = n;
	}
	return true;
}

static bool walk_heap(struct pm_state *p, struct pm_heap *h, uint64_t from,
		      hw_chunk_fn *fn, void *cookie, unsigned mode)
{
	return walk_heap_range(p, h, from, h->end, fn, cookie, mode);
}

static struct hw_chunk mmapped_chunk(const struct pm_state *p,
				     const struct pm_mmapped *m)
{
	/* 2.43+ may park a freed mmapped chunk in a large tcache bin.  */
	bool tcached = m->tail && pm_tcached_at(p, m->chunk + PM_HDR);
	return (struct hw_chunk){
		/* 2.43+: the spare header after the chunk ends it, so its
		   last word is usable, as in a heap chunk.  */
		.addr = m->chunk + PM_HDR,
		.size = m->size - (m->tail ? PM_SIZE_SZ : PM_HDR),
		.chunk = m->chunk, .chunk_size = m->size, .arena = 0,
		.where = tcached ? HW_WHERE_TCACHE : HW_WHERE_MMAPPED,
		.used = !tcached,
	};
}

/* Units of work: heaps first, then mmapped chunks.  */
static uint64_t unit_bytes(const struct pm_state *p, size_t u)
{
	return u < p->nheaps ? p->heaps[u].end - p->heaps[u].start
			     : p->mmapped[u - p->nheaps].size;
}

/* The units of a walk in threads, the largest first: part k starts with
   the k-th largest (so that which thread walks what does not depend on
   when each starts: the gdb plugin's test of reads refused off gdb's
   thread relies on it), and then each unit goes to whichever thread is
   free.  A heap is up to 64 MiB, too coarse to split the walk evenly in
   advance (on the bench core two threads took 857 and 738 MiB: the first
   one ran 15% longer); taken as they come, the threads end at most one
   small unit apart.  */
struct unit_queue {
	size_t *order;            /* units by weight, largest first; NULL:
				     in their order */
	size_t n;
	_Atomic size_t next;
	_Atomic bool stop;        /* a part's fn said stop */
	struct pm_split split;    /* the biggest heap, when it is cut */
};

/* A unit's share of the work: a heap's bytes are walked, an mmapped
   chunk is one block whatever its size (its bytes are not read).  */
static uint64_t unit_weight(const struct pm_state *p, size_t u)
{
	return u < p->nheaps ? unit_bytes(p, u) : 0;
}

struct weighed {
	uint64_t weight;
	size_t unit;
};

static int heavier_first(const void *a, const void *b)
{
	const struct weighed *x = a, *y = b;
	return x->weight != y->weight ? (x->weight < y->weight) - (x->weight > y->weight)
				      : (x->unit > y->unit) - (x->unit < y->unit);
}

static void queue_init(struct unit_queue *q, const struct pm_state *p,
		       unsigned nparts)
{
	q->n = p->nheaps + p->nmmapped;
	q->order = malloc((q->n ? q->n : 1) * sizeof *q->order);
	struct weighed *w = malloc((q->n ? q->n : 1) * sizeof *w);
	atomic_init(&q->next, nparts);   /* [0, nparts): each part's first */
	atomic_init(&q->stop, false);
	if (!q->order || !w) {
		free(q->order);
		q->order = NULL;
		free(w);
		return;
	}
	for (size_t u = 0; u < q->n; u++)
		w[u] = (struct weighed){ unit_weight(p, u), u };
	qsort(w, q->n, sizeof *w, heavier_first);
	for (size_t u = 0; u < q->n; u++)
		q->order[u] = w[u].unit;
	free(w);
}

/* The next unit for part `part` to walk (its own first one, then the
   next free), or false when none is left.  */
static bool queue_take(struct unit_queue *q, unsigned part, bool *started,
		       size_t *u)
{
	if (atomic_load_explicit(&q->stop, memory_order_relaxed))
		return false;
	size_t i = part;
	if (*started)
		i = atomic_fetch_add_explicit(&q->next, 1,
					      memory_order_relaxed);
	*started = true;
	if (i >= q->n)
		return false;
	*u = q->order ? q->order[i] : i;
	return true;
}

struct part_job {
	struct pm_state *p;
	struct unit_queue *q;
	unsigned part;
	hw_chunk_fn *fn;
	void *cookie;
	unsigned mode;
	bool ok;
};

/* The pieces of the split heap (split.c) this part takes, walked as
   its own copy of the heap; each piece's bytes count for progress once
   walked.  The tail is walked as a heap's end: findings and marks.  */
static bool walk_split_pieces(struct part_job *j)
{
	struct pm_split *sp = &j->q->split;
	struct pm_heap *mine = &sp->shadow[j->part];
	uint64_t from, until;
	bool tail;
	unsigned piece_mode = j->mode & ~(unsigned)(PROGRESS | MARK_PIECES);
	while (pm_split_take(sp, &j->q->stop, &from, &until, &tail)) {
		if (!walk_heap_range(j->p, mine, from, until, j->fn, j->cookie,
				     tail ? j->mode & ~(unsigned)PROGRESS
					  : piece_mode))
			return false;
		progress(j->p, until - from, 0, j->mode);
	}
	return true;
}

static void *walk_part(void *arg)
{
	struct part_job *j = arg;
	size_t u;
	bool started = false;
	j->ok = true;
	while (j->ok && queue_take(j->q, j->part, &started, &u)) {
		struct pm_state *p = j->p;
		if (j->q->split.active && u == j->q->split.unit) {
			pm_split_follow(&j->q->split, &j->q->stop);
			continue;
		}
		if (u < p->nheaps) {
			j->ok = walk_heap(p, &p->heaps[u], p->heaps[u].start,
					  j->fn, j->cookie, j->mode);
			progress(p, unit_bytes(p, u), 0, j->mode);
			continue;
		}
		struct hw_chunk c =
			mmapped_chunk(p, &p->mmapped[u - p->nheaps]);
		j->ok = j->fn(j->cookie, &c);
		progress(p, unit_bytes(p, u), 0, j->mode);
	}
	if (j->ok && j->q->split.active)
		j->ok = walk_split_pieces(j);
	if (!j->ok) {
		atomic_store(&j->q->stop, true);
		pm_split_wake(&j->q->split);
	}
	return NULL;
}

/* The mode of a walk of everything, and the findings it takes.  */
static unsigned full_walk_mode(struct pm_state *p, unsigned how)
{
	unsigned kind = how & ~(unsigned)PM_WALK_GUESS_FAST;
	unsigned mode = kind == PM_WALK_STATES ? STATES_ONLY : 0;
	if (how & PM_WALK_GUESS_FAST)
		mode |= GUESS_FAST;
	if (!p->walked)
		mode |= REPORT_CHAIN;
	if (p->lists_done && !p->lists_reported)
		mode |= REPORT_LISTS;
	/* Every list but the small and large bins was walked: what needs
	   only those lists is reported now, the rest is left to the sums
	   (or, when they disagree, to pm_walk_list_findings).  */
	if (kind == PM_WALK_SUMS && !p->lists_done) {
		mode |= LINK_SUMS | REPORT_LISTS;
		for (size_t i = 0; i < p->nheaps; i++) {
			struct pm_heap *h = &p->heaps[i];
			memset(h->sums.link_fwd, 0, sizeof h->sums.link_fwd);
			memset(h->sums.link_bwd, 0, sizeof h->sums.link_bwd);
			memset(h->sums.bin_count, 0, sizeof h->sums.bin_count);
			memset(h->sums.bin_bytes, 0, sizeof h->sums.bin_bytes);
			memset(h->sums.link_broken, 0,
			       sizeof h->sums.link_broken);
		}
	}
	p->walked = true;
	p->lists_reported |= p->lists_done;
	return mode;
}

bool pm_walk_chunks_parallel(struct pm_state *p, unsigned nparts,
			     hw_chunk_fn *fn, void *const cookies[],
			     unsigned how)
{
	struct part_job jobs[PM_MAX_PARTS];
	struct unit_queue q;
	if (nparts > PM_MAX_PARTS)
		nparts = PM_MAX_PARTS;
	if (nparts == 0)
		nparts = 1;
	bool marking = pm_pieces_mark_begin(p);
	unsigned mode = full_walk_mode(p, how) | (marking ? MARK_PIECES : 0);
	progress_begin(p);
	queue_init(&q, p, nparts);
	uint64_t heap_bytes = 0;
	for (size_t i = 0; i < p->nheaps; i++)
		heap_bytes += unit_bytes(p, i);
	q.split.active = false;
	if (q.order && q.n)
		pm_split_begin(&q.split, p, q.order[0], nparts, heap_bytes,
			       marking);
	for (unsigned k = 0; k < nparts; k++)
		jobs[k] = (struct part_job){ .p = p, .q = &q, .part = k, .fn = fn,
					     .cookie = cookies[k],
					     .mode = k ? mode : mode | PROGRESS };
	hw_run_parts(jobs, sizeof *jobs, nparts, walk_part);
	pm_split_end(&q.split);
	free(q.order);
	bool ok = true;
	for (unsigned k = 0; k < nparts; k++)
		ok &= jobs[k].ok;
	if (marking)
		pm_pieces_mark_end(p, ok);
	return ok;
}

bool pm_walk_piece(struct pm_state *p, size_t i, hw_chunk_fn *fn,
		   void *cookie)
{
	if (i >= p->pieces.n)
		return true;
	const struct pm_piece *pc = &p->pieces.v[i];
	if (pc->unit < p->nheaps)
		return walk_heap_range(p, &p->heaps[pc->unit], pc->from,
				       pc->until, fn, cookie, 0);
	struct hw_chunk c = mmapped_chunk(p, &p->mmapped[pc->unit -
							  p->nheaps]);
	return fn(cookie, &c);
}

/* The chunks around an address: up to `before` chunks before the one
   holding it (a ring), that one, and up to `after` after it, as their
   boundaries and sizes.  */
struct around {
	uint64_t addr;
	size_t before, after;
	uint64_t *chunk, *size;       /* before + 1 + after slots */
	size_t nring, ring_at;        /* the ring: chunks before the hit */
	size_t nafter;
	bool have_hit;
};

static bool collect_around(void *cookie, const struct hw_chunk *c)
{
	struct around *a = cookie;
	size_t at;
	if (a->have_hit) {
		if (a->nafter == a->after)
			return false;
		at = a->before + 1 + a->nafter++;
	} else if (a->addr >= c->chunk && a->addr - c->chunk < c->chunk_size) {
		a->have_hit = true;
		at = a->before;
	} else {
		if (!a->before)
			return true;
		at = a->ring_at;
		a->ring_at = (a->ring_at + 1) % a->before;
		if (a->nring < a->before)
			a->nring++;
	}
	a->chunk[at] = c->chunk;
	a->size[at] = c->chunk_size;
	return a->nafter < a->after || !a->have_hit;
}

bool pm_walk_around(struct pm_state *p, uint64_t addr, size_t before,
		    size_t after, hw_chunk_fn *fn, void *cookie)
{
	struct pm_heap *h = pm_heap_of(p, addr);
	if (!h) {
		struct pm_mmapped m;
		if (!mmapped_at(p, addr, &m))
			return true;
		struct hw_chunk c = mmapped_chunk(p, &m);
		return fn(cookie, &c);
	}
	if (p->lists_done)
		return walk_heap(p, h, h->start, fn, cookie,
				 REPORT_CHAIN | REPORT_LISTS);
	/* First the chunk boundaries up to the last chunk wanted after addr
	   (the size chain is the only way to them), then only the lists
	   chunks of those sizes could be on, then those chunks again,
	   classified.  The walk resumes at the first chunk wanted before
	   addr: a boundary, and the chunk the damage is blamed on if the
	   chain breaks there.  Chunks past the last one wanted are not
	   classified against every list: callers stop there.  */
	struct around a = { .addr = addr, .before = before, .after = after };
	size_t slots = before + 1 + after;
	a.chunk = calloc(slots, sizeof *a.chunk);
	a.size = calloc(slots, sizeof *a.size);
	uint64_t *sizes = calloc(slots, sizeof *sizes);
	if (!a.chunk || !a.size || !sizes) {
		free(a.chunk);
		free(a.size);
		free(sizes);
		return false;
	}
	walk_heap(p, h, h->start, collect_around, &a, 0);
	/* From the ring's oldest chunk, else the hit.  */
	uint64_t from = a.have_hit ? a.chunk[before] : h->start;
	size_t n = 0;
	for (size_t k = 0; k < a.nring; k++) {
		size_t at = (a.ring_at + a.before - a.nring + k) % a.before;
		if (!k)
			from = a.chunk[at];
		sizes[n++] = a.size[at];
	}
	if (a.have_hit) {
		sizes[n++] = a.size[before];
		for (size_t k = 0; k < a.nafter; k++)
			sizes[n++] = a.size[before + 1 + k];
	}
	pm_walk_lists_for(p, h->arena, sizes, n);
	free(a.chunk);
	free(a.size);
	free(sizes);
	return walk_heap(p, h, from, fn, cookie, REPORT_CHAIN | REPORT_LISTS);
}

bool pm_walk_chunks(struct pm_state *p, hw_chunk_fn *fn, void *cookie)
{
	/* Findings are recorded on the first walk only: every later walk
	   would find the same.  */
	unsigned mode = full_walk_mode(p, PM_WALK_ALL) | PROGRESS;
	progress_begin(p);
	size_t hi = 0, mi = 0;
	while (hi < p->nheaps || mi < p->nmmapped) {
		if (mi == p->nmmapped ||
		    (hi < p->nheaps && p->heaps[hi].start < p->mmapped[mi].chunk)) {
			struct pm_heap *h = &p->heaps[hi++];
			if (!walk_heap(p, h, h->start, fn, cookie, mode))
				return false;
			progress(p, h->end - h->start, 0, mode);
			continue;
		}
		struct hw_chunk c = mmapped_chunk(p, &p->mmapped[mi]);
		progress(p, p->mmapped[mi++].size, 0, mode);
		if (!fn(cookie, &c))
			return false;
	}
	return true;
}

bool pm_take_nothing(void *cookie, const struct hw_chunk *c)
{
	(void)cookie;
	(void)c;
	return true;
}

void pm_walk_list_findings(struct pm_state *p)
{
	if (!p->lists_done || p->lists_reported)
		return;
	p->lists_reported = true;
	for (size_t i = 0; i < p->nheaps; i++)
		walk_heap(p, &p->heaps[i], p->heaps[i].start, pm_take_nothing,
			  NULL, REPORT_LISTS);
}

void pm_walk_arena_findings(struct pm_state *p)
{
	for (size_t i = 0; i < p->nheaps; i++)
		if (p->arenas[p->heaps[i].arena].lists_findings)
			walk_heap(p, &p->heaps[i], p->heaps[i].start,
				  pm_take_nothing, NULL, REPORT_LISTS);
	for (size_t a = 0; a < p->narenas; a++)
		p->arenas[a].lists_findings = false;
}

/* The fastbins' orphans, after a walk that gave them in use (their lists
   were not walked yet, so no fastbin was known to be broken): a walk of
   the heaps of each arena with a broken fastbin, where classify now
   tells them.  Only damaged heaps pay for it.  */
struct orphan_retract {
	hw_chunk_fn *fn;
	void *cookie;
};

static bool retract_orphan(void *cookie, const struct hw_chunk *c)
{
	const struct orphan_retract *r = cookie;
	return !c->orphan || c->where != HW_WHERE_FASTBIN || r->fn(r->cookie, c);
}

static bool count_orphan(void *cookie, const struct hw_chunk *c)
{
	struct pm_state *p = cookie;
	uint64_t k = c->chunk_size / 16 - 2;
	if (c->orphan && c->where == HW_WHERE_FASTBIN && k < PM_NFASTBINS &&
	    c->arena >= 0 && (size_t)c->arena < p->narenas) {
		struct pm_arena *ar = &p->arenas[c->arena];
		if (!(ar->fast_orphans_done >> k & 1)) {
			ar->fast_orphans[k].count++;
			ar->fast_orphans[k].bytes += c->chunk_size;
		}
	}
	return true;
}

void pm_count_fast_orphans(struct pm_state *p)
{
	if (!p->l.safe_linking)
		return;
	for (size_t i = 0; i < p->nheaps; i++) {
		struct pm_heap *h = &p->heaps[i];
		const struct pm_arena *ar = &p->arenas[h->arena];
		if (ar->fast_broken & ~ar->fast_orphans_done)
			walk_heap(p, h, h->start, count_orphan, p, 0);
	}
	for (size_t a = 0; a < p->narenas; a++)
		p->arenas[a].fast_orphans_done |= p->arenas[a].fast_broken;
}

bool pm_retract_fast_orphans(struct pm_state *p, hw_chunk_fn *fn,
			     void *cookie)
{
	struct orphan_retract r = { fn, cookie };
	if (!p->l.safe_linking)
		return true;
	for (size_t i = 0; i < p->nheaps; i++) {
		struct pm_heap *h = &p->heaps[i];
		if (p->arenas[h->arena].fast_broken &&
		    !walk_heap(p, h, h->start, retract_orphan, &r, 0))
			return false;
	}
	return true;
}

/* One parked chunk at `chunk`, free in list `where`; `field` is its
   size field when the caller read it (`have`).  */
static bool retract_one(struct pm_state *p, uint64_t chunk, uint64_t field,
			bool have, enum hw_where where, hw_chunk_fn *fn,
			void *cookie)
{
	if (!have && !hw_read_u64(p->t, chunk + 8, &field))
		return true;
	uint64_t sz = field & ~(uint64_t)PM_SIZE_BITS;
	/* Its arena as the walk gave it: its heap's (an mmapped chunk, in a
	   tcache in 2.43+, is given as arena 0's there too).  */
	const struct pm_heap *h = pm_heap_of(p, chunk);
	/* (An mmapped chunk in a tcache is 2.43+'s: usable as in a heap.)  */
	struct hw_chunk c = {
		.addr = chunk + PM_HDR, .chunk = chunk, .chunk_size = sz,
		.size = sz >= p->l.usable_slack ? sz - p->l.usable_slack : 0,
		.arena = h ? h->arena : 0, .where = where, .used = false,
	};
	return fn(cookie, &c);
}

struct fast_retract {
	struct pm_state *p;
	hw_chunk_fn *fn;
	void *cookie;
	bool failed_only;
};

/* A chunk tagged as a fastbin's: given as free (a tcache entry's mark,
   at its user pointer, looks the same: pm_retract_parked gave those).  */
static bool retract_fast_one(void *arg, struct pm_heap *h, uint64_t chunk,
			     uint64_t field)
{
	const struct fast_retract *r = arg;
	uint16_t failed = r->p->arenas[h->arena].fast_guess_failed;
	uint64_t k = (field & ~(uint64_t)PM_SIZE_BITS) / 16 - 2;
	if (pm_tcached_at(r->p, chunk))
		return true;
	if (r->failed_only && (k >= PM_NFASTBINS || !(failed >> k & 1)))
		return true;
	return retract_one(r->p, chunk, field, true, HW_WHERE_FASTBIN, r->fn,
			   r->cookie);
}

/* The fastbin entries the lists hold as free blocks to fn; only those
   of the fastbins whose guesses were taken back (pm_arena
   fast_guess_failed) when `failed_only`.  */
static bool retract_fastbins(struct pm_state *p, hw_chunk_fn *fn,
			     void *cookie, bool failed_only)
{
	struct fast_retract r = { p, fn, cookie, failed_only };
	for (size_t i = 0; i < p->nheaps; i++) {
		struct pm_heap *h = &p->heaps[i];
		if (failed_only && !p->arenas[h->arena].fast_guess_failed)
			continue;
		if (!pm_each_tagged(p, h, PM_TAG_FAST, retract_fast_one, &r))
			return false;
	}
	return true;
}

bool pm_retract_parked(struct pm_state *p, hw_chunk_fn *fn, void *cookie)
{
	const struct pm_addrset *set = &p->tcached;
	/* (Tcaches read before the walk went out free already.)  */
	for (size_t j = 0; j < set->cap && !p->tcaches_done; j++)
		if (set->slots[j] &&
		    !retract_one(p, set->slots[j] - PM_HDR, 0, false,
				 HW_WHERE_TCACHE, fn, cookie))
			return false;
	return p->l.ms_fastbins < 0 || retract_fastbins(p, fn, cookie, false);
}

bool pm_retract_failed_guesses(struct pm_state *p, hw_chunk_fn *fn,
			       void *cookie)
{
	return p->l.ms_fastbins < 0 || retract_fastbins(p, fn, cookie, true);
}
