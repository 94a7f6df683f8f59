/* lists.c - every free list: per-thread tcaches, fastbins, and the
 * unsorted, small and large bins of each arena.
 *
 * Each list walk is bounded (p->list_limit steps) and stops at the first
 * entry that is misaligned, outside every heap, of the wrong size, or seen
 * before (a cycle, or a chunk on two lists); each such stop is a finding at
 * the entry's address.  Membership is recorded where the chunk walk can
 * find it cheaply: a 2-bit tag per 16 bytes of heap for fastbins and bins,
 * a hash set for the (few) tcache entries.
 */
#include <stdlib.h>
#include <string.h>

#include "ptmalloc.h"

/* ---- tcache'd chunk set ------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

enum add_result { ADDED, ALREADY, NO_MEMORY };

/* Where addr is in the set, or the empty slot it would take (the set
   has room: it is never more than half full).  */
static size_t addrset_slot(const struct pm_addrset *set, uint64_t addr)
{
	size_t j = mix(addr) & (set->cap - 1);
	while (set->slots[j] && set->slots[j] != addr)
		j = (j + 1) & (set->cap - 1);
	return j;
}

/* Insert addr (not 0).  */
static enum add_result addrset_add(struct pm_addrset *set, uint64_t addr)
{
	if ((set->n + 1) * 2 > set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 1024;
		uint64_t *slots = calloc(cap, sizeof *slots);
		if (!slots)
			return NO_MEMORY;
		for (size_t i = 0; i < set->cap; i++) {
			uint64_t v = set->slots[i];
			if (!v)
				continue;
			size_t j = mix(v) & (cap - 1);
			while (slots[j])
				j = (j + 1) & (cap - 1);
			slots[j] = v;
		}
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	size_t j = addrset_slot(set, addr);
	if (set->slots[j] == addr)
		return ALREADY;
	set->slots[j] = addr;
	set->n++;
	return ADDED;
}

bool pm_tcached_at(const struct pm_state *p, uint64_t user)
{
	const struct pm_addrset *set = &p->tcached;
	return set->cap && user && set->slots[addrset_slot(set, user)] == user;
}

/* ---- tags over heaps --------------------------------------------------- */

/* Tag `chunk` as being on a list; false (with a finding) if it cannot be
   on one.  */
static bool tag_chunk(struct pm_state *p, struct pm_heap **hint,
		      uint64_t chunk, enum pm_tag tag, const char *list,
		      int arena)
{
	struct pm_heap *h = pm_heap_near(p, hint, chunk);
	if (!h || chunk + PM_MINSIZE > h->end) {
		hw_finding(p->s, chunk, "%s: entry outside every heap", list);
		return false;
	}
	/* glibc frees a chunk into its own arena's lists only.  (This also
	   keeps the threads of the list walk on disjoint tag maps.)  */
	if (h->arena != arena) {
		hw_finding(p->s, chunk, "%s of arena %d: entry in a heap of "
			   "arena %d", list, arena, h->arena);
		return false;
	}
	if ((chunk - h->start) & 15) {
		hw_finding(p->s, chunk, "%s: misaligned chunk", list);
		return false;
	}
	enum pm_tag old = pm_tag_get(h, chunk);
	if (old != PM_TAG_NONE) {
		hw_finding(p->s, chunk, "%s: chunk is on a free list already "
			   "(cycle, or on two lists)", list);
		return false;
	}
	uint64_t g = (chunk - h->start) >> 4;
	h->tags[g >> 2] |= (uint8_t)(tag << ((g & 3) * 2));
	return true;
}

static bool chunk_size_of(struct pm_state *p, uint64_t chunk, uint64_t *sz)
{
	uint64_t v;
	if (!hw_read_u64(p->t, chunk + 8, &v))
		return false;
	*sz = v & ~(uint64_t)PM_SIZE_BITS;
	return true;
}

/* Which lists a walk takes: all of them (nsizes 0), or those that chunks
   of the given sizes in one arena could be on.  */
struct list_filter {
	int arena;
	const uint64_t *sizes;
	size_t nsizes;
	bool fast_only;           /* no unsorted, small or large bin */
	bool no_sorted;           /* no small or large bin */
	bool no_fast;             /* no fastbin */
};

/* A tcache bin of this chunk size (tcaches are not per arena: a thread
   frees any arena's chunks into its own).  */
static bool filter_size(const struct list_filter *f, uint64_t size)
{
	for (size_t i = 0; i < f->nsizes; i++)
		if (f->sizes[i] == size)
			return true;
	return f->nsizes == 0;
}

/* A tcache bin holding the chunk sizes [lo, hi].  */
static bool filter_range(const struct list_filter *f, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < f->nsizes; i++)
		if (f->sizes[i] >= lo && f->sizes[i] <= hi)
			return true;
	return f->nsizes == 0;
}

/* The fastbin of this chunk size in `arena`.  */
static bool filter_fast(const struct list_filter *f, int arena, uint64_t size)
{
	return !f->no_fast && filter_size(f, size) && (f->nsizes == 0 || arena == f->arena);
}

static bool filter_bin(const struct list_filter *f, int arena, int bin)
{
	if (f->fast_only || (f->no_sorted && bin != 1))
		return false;
	if (f->nsizes == 0)
		return true;
	if (arena != f->arena)
		return false;
	if (bin == 1)
		return true;
	for (size_t i = 0; i < f->nsizes; i++)
		if (pm_bin_index(f->sizes[i]) == bin)
			return true;
	return false;
}

/* ---- tcache ------------------------------------------------------------ */

/* Read a tcache's counters as entries per bin.  2.42+ keeps the free
   slots left instead (every bin starts with mp_.tcache_count of them):
   without that count the entries are not known (counts_known false).  */
static bool read_tcache(struct pm_state *p, struct pm_tcache *tc)
{
	uint8_t buf[0x300];
	if (p->l.tc_sizeof > sizeof buf || p->l.tc_nbins > PM_TCACHE_MAX_BINS ||
	    !hw_read(p->t, tc->addr, buf, (size_t)p->l.tc_sizeof))
		return false;
	tc->counts_known = !p->l.tc_slots || p->tcache_count;
	for (unsigned i = 0; i < p->l.tc_nbins; i++) {
		uint16_t c = 0;
		if (p->l.tc_count_width == 2)
			memcpy(&c, buf + p->l.tc_counts + 2 * i, 2);
		else
			c = buf[p->l.tc_counts + i];
		if (p->l.tc_slots) {
			/* More slots than a bin ever has: damage; the walk
			   says so when the list disagrees.  */
			c = p->tcache_count >= c
			    ? (uint16_t)(p->tcache_count - c) : 0;
		}
		tc->counts[i] = c;
	}
	return true;
}

/* The chunk sizes tcache bin i holds: one size for the small bins,
   [2^(i-54), 2^(i-53)) above the small bins' for the large ones
   (2.42+).  */
void pm_tcache_bin_sizes(unsigned i, uint64_t *lo, uint64_t *hi)
{
	if (i < PM_TCACHE_SMALL_BINS) {
		*lo = *hi = (uint64_t)i * 16 + PM_MINSIZE;
		return;
	}
	uint64_t small_max = (PM_TCACHE_SMALL_BINS - 1) * 16 + PM_MINSIZE;
	*lo = (uint64_t)1 << (i - 54);
	*hi = ((uint64_t)1 << (i - 53)) - 16;
	if (*lo <= small_max)
		*lo = small_max + 16;
}

static bool among(const uint64_t *v, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* Is `user` the user pointer of a chunk that looks like a
   tcache_perthread_struct (or one whose header is known broken)?  */
static bool looks_like_tcache(struct pm_state *p, uint64_t user)
{
	uint64_t sz, want = (p->l.tc_sizeof + PM_SIZE_SZ + 15) & ~(uint64_t)15;
	/* 2.43 rounds the request up twice when a tcache is made while
	   stashing chunks: 0x310 instead of 0x300.  */
	if (among(p->tc_broken_home, p->ntc_broken_home, user))
		return true;
	return user && !(user & 15) && chunk_size_of(p, user - PM_HDR, &sz) &&
	       (sz == want || (p->l.tc_slots && sz == want + 16));
}

/* 2.43+ points a thread without a tcache at a zeroed dummy in libc's
   read-only data (+0 before the tcache exists, +8 once it is disabled
   or the thread has exited) instead of leaving the pointer NULL.  */
static bool tcache_dummy(struct pm_state *p, uint64_t v)
{
	if (!p->l.tc_slots || (v & 7))
		return false;
	const struct hw_region *r = hw_region_of(p->t, v);
	return r && r->file >= 0 && !(r->prot & HW_PROT_W);
}

/* Does the tcache at `user` hold up: every bin's list as long as its
   count says, each entry a chunk of that bin's size?  */
static bool tcache_consistent(struct pm_state *p, uint64_t user)
{
	struct pm_tcache tc = { .addr = user };
	if (!read_tcache(p, &tc))
		return false;
	/* Without the bins' capacity (2.42+ counts free slots) the lists
	   are only bounded by it, not compared with the counters.  */
	uint64_t cap = p->tcache_count ? p->tcache_count : 0xffff;
	for (unsigned i = 0; i < p->l.tc_nbins; i++) {
		uint64_t e, n = 0, sz, lo, hi;
		pm_tcache_bin_sizes(i, &lo, &hi);
		if (!hw_read_u64(p->t, user + (uint64_t)p->l.tc_entries + 8 * i,
				 &e))
			return false;
		if (tc.counts[i] > cap)
			return false;
		uint64_t limit = tc.counts_known ? tc.counts[i] : cap;
		while (e && n <= limit) {
			uint64_t stored;
			if ((e & 15) || !pm_heap_of(p, e - PM_HDR) ||
			    !chunk_size_of(p, e - PM_HDR, &sz) || sz < lo ||
			    sz > hi || !hw_read_u64(p->t, e, &stored))
				return false;
			e = pm_reveal(p, e, stored);
			n++;
		}
		if (tc.counts_known ? n != tc.counts[i] : e != 0)
			return false;
	}
	return true;
}

/* No thread pointer to go by (qemu-user cores have none): take the
   candidates that are in use and hold up on their own, owner unknown.  */
static void orphan_tcaches(struct pm_state *p, const uint64_t *cand,
			   size_t ncand)
{
	p->how_tcache = ncand ? "not found (no thread points at a tcache)"
			      : "not found (no tcache chunk)";
	p->tcaches = calloc(ncand ? ncand : 1, sizeof *p->tcaches);
	if (!p->tcaches) {
		hw_oom(p->s);
		return;
	}
	for (size_t c = 0; c < ncand; c++) {
		uint64_t sz, next;
		/* A heap's first chunk of the tcache's size is the tcache of
		   the thread that made the heap's arena (its first malloc
		   makes it): taken as it is, so that damage in its lists is
		   reported, not hidden by leaving the tcache out.  Chunks
		   further on must hold up on their own.  */
		const struct pm_heap *home = pm_heap_of(p, cand[c]);
		bool first = home && home->start + PM_HDR == cand[c] &&
			     !p->l.tc_slots;
		if (!chunk_size_of(p, cand[c] - PM_HDR, &sz) ||
		    !hw_read_u64(p->t, cand[c] - PM_HDR + sz + 8, &next) ||
		    !(next & PM_PREV_INUSE) ||
		    (!first && !tcache_consistent(p, cand[c])))
			continue;
		struct pm_tcache *tc = &p->tcaches[p->ntcaches];
		tc->tid = -1;
		tc->addr = cand[c];
		struct pm_heap *h = pm_heap_of(p, cand[c]);
		tc->arena = h ? h->arena : -1;
		if (read_tcache(p, tc))
			p->ntcaches++;
	}
	if (p->ntcaches)
		p->how_tcache = "heap scan (no thread pointer: owners unknown)";
}

/* Can heap h hold a tcache as its first chunks?  Not the mmapped pieces
   of a non-contiguous main arena: only its brk heap starts with one.  */
static bool tcache_home(const struct pm_state *p, const struct pm_heap *h)
{
	return h->arena != 0 || !(p->arenas[0].flags & 2) ||
	       h->start == pm_first_chunk(p->sbrk_base);
}

/* Backport check: the size of the tcache chunk a heap starts with (up
   to 2.42 a thread's first malloc makes it) decides the struct's
   layout, whatever the version string said.  */
static void tcache_struct_era(struct pm_state *p)
{
	for (size_t i = 0; i < p->nheaps; i++) {
		uint64_t sz;
		if (!tcache_home(p, &p->heaps[i]) ||
		    !chunk_size_of(p, p->heaps[i].start, &sz))
			continue;
		if (sz == 0x250) {
			if (p->l.tc_sizeof != 0x240)
				pm_layout_tcache(&p->l, 1);
			pm_era_observe(p, 26, 29, "tcache struct with byte counts");
		} else if (sz == 0x290) {
			if (p->l.tc_sizeof != 0x280)
				pm_layout_tcache(&p->l, 2);
			pm_era_observe(p, 30, 41,
				       "tcache struct with 16-bit counts");
		} else if (sz == 0x300 || sz == 0x310) {
			if (p->l.tc_sizeof != 0x2f8)
				pm_layout_tcache(&p->l, 3);
			pm_era_observe(p, 42, PM_NEWEST_MINOR,
				       "tcache struct with 76 bins of free "
				       "slots");
		} else
			continue;
		return;
	}
	/* No heap starts with one.  Without a version string the guess was
	   the newest layout: let the releases the data allows so far pick
	   instead.  */
	if (p->l.ver_major == 0 && p->era.observed && p->era.hi <= 41 &&
	    p->l.tc_slots)
		pm_layout_tcache(&p->l, p->era.hi <= 29 ? 1 : 2);
}

/* The distance of libc's TLS variable `tcache` from the thread pointer
   is the same in every thread.  Offsets near the thread pointer where
   some thread holds a tcache's address are candidates; the one the most
   threads agree on (a tcache, NULL, or 2.43's dummy) wins, a tie going
   to the offset nearest the thread pointer (static TLS lies next to it,
   and a heap mapped right below the TLS block can hold a copy).  Up to
   2.42 the address held must be one of the tcaches that start heaps
   (`starts`), so that a stray pointer to a chunk of the right size in
   one thread's TLS is not taken; 2.43 makes tcaches anywhere.  Costs a
   few reads per thread and offset.  */
#define TP_WINDOW 0x1000
#define TP_MAX_CAND 32

static bool tcache_tp_offset(struct pm_state *p, const uint64_t *starts,
			     size_t nstarts, int64_t *out)
{
	struct hw_target *t = p->t;
	int64_t cand[TP_MAX_CAND];
	size_t ncand = 0;
	for (size_t ti = 0; ti < t->nthreads && ncand < TP_MAX_CAND; ti++) {
		const struct hw_thread *th = &t->threads[ti];
		if (!th->has_tp)
			continue;
		for (int64_t off = -TP_WINDOW; off < TP_WINDOW &&
		     ncand < TP_MAX_CAND; off += 8) {
			uint64_t v;
			bool seen = false;
			for (size_t c = 0; c < ncand && !seen; c++)
				seen = cand[c] == off;
			if (!seen && hw_read_u64(t, th->tp + (uint64_t)off, &v) &&
			    looks_like_tcache(p, v) &&
			    (p->l.tc_slots || among(starts, nstarts, v)))
				cand[ncand++] = off;
		}
	}
	unsigned best_votes = 0;
	for (size_t c = 0; c < ncand; c++) {
		unsigned votes = 0;
		for (size_t tj = 0; tj < t->nthreads; tj++) {
			uint64_t w;
			if (t->threads[tj].has_tp &&
			    hw_read_u64(t, t->threads[tj].tp + (uint64_t)cand[c],
					&w) &&
			    (w == 0 || looks_like_tcache(p, w) ||
			     tcache_dummy(p, w)))
				votes++;
		}
		int64_t off = cand[c], best = *out;
		if (votes > best_votes ||
		    (votes == best_votes &&
		     (off < 0 ? -off : off) < (best < 0 ? -best : best))) {
			best_votes = votes;
			*out = off;
		}
	}
	return best_votes > 0;
}

/* A heap whose first chunk has a size no chunk can have there, but holds
   a tcache that is consistent on its own (every list as long as its
   counter, every entry of its bin's size): a tcache whose header was
   overwritten (an underflow).  It is read anyway, with a finding; the
   chunk walk reports the header and resynchronises after it.  */
static bool broken_home(struct pm_state *p, const struct pm_heap *h)
{
	uint64_t field, want = (p->l.tc_sizeof + PM_SIZE_SZ + 15) & ~15ull;
	uint64_t user = h->start + PM_HDR;
	if (p->ntc_broken_home == sizeof p->tc_broken_home /
				  sizeof p->tc_broken_home[0] ||
	    !hw_read_u64(p->t, h->start + 8, &field))
		return false;
	uint64_t sz = field & ~(uint64_t)PM_SIZE_BITS;
	if ((sz >= PM_MINSIZE && !(sz & 15) && sz <= h->end - h->start) ||
	    want + PM_HDR > h->end - h->start ||
	    !tcache_consistent(p, user))
		return false;
	p->tc_broken_home[p->ntc_broken_home++] = user;
	hw_finding(p->s, h->start, "the tcache's chunk header is damaged "
		   "(size field 0x%llx, expected 0x%llx); the tcache at 0x%llx "
		   "is read anyway", (unsigned long long)field,
		   (unsigned long long)want, (unsigned long long)user);
	return true;
}

void pm_find_tcaches(struct pm_state *p)
{
	if (!p->l.has_tcache)
		return;
	struct hw_target *t = p->t;
	tcache_struct_era(p);
	p->tc_struct_chunk = (p->l.tc_sizeof + PM_SIZE_SZ + PM_ALIGN - 1) &
			     ~(uint64_t)(PM_ALIGN - 1);
	/* An emulated guest's thread pointers live in the emulator's CPU
	   state, not in the core's notes: the core's are the emulator's own
	   threads', and reading from them would give the guest's tcaches
	   wrong owners.  Without thread pointers, tcaches are looked for
	   among a heap's first chunks: up to 2.42 a thread's first malloc
	   makes its tcache (calloc or memalign may come first); 2.43 makes
	   it on the first free, later.  */
	uint64_t cand[64];
	size_t ncand = 0;
	int depth = p->l.tc_slots ? 4096 : 16;
	for (size_t i = 0; i < p->nheaps && ncand < 64; i++) {
		if (!tcache_home(p, &p->heaps[i]))
			continue;
		uint64_t c = p->heaps[i].start, sz;
		if (broken_home(p, &p->heaps[i]))
			cand[ncand++] = c + PM_HDR;
		for (int k = 0; k < depth && ncand < 64; k++, c += sz) {
			if (!chunk_size_of(p, c, &sz) || sz < PM_MINSIZE ||
			    sz > p->heaps[i].end - c)
				break;
			if (looks_like_tcache(p, c + PM_HDR))
				cand[ncand++] = c + PM_HDR;
		}
	}
	int64_t best = 0;
	if (p->guest || !tcache_tp_offset(p, cand, ncand, &best)) {
		orphan_tcaches(p, cand, ncand);
		if (p->guest && p->ntcaches)
			p->how_tcache = "heap scan (an emulated guest: its "
					"thread pointers are not in the core, "
					"owners unknown)";
		return;
	}
	p->tcache_tp_off = best;
	p->tcache_tp_known = true;
	p->how_tcache = "thread pointer scan";
	p->tcaches = calloc(t->nthreads, sizeof *p->tcaches);
	if (!p->tcaches) {
		hw_oom(p->s);
		return;
	}
	for (size_t ti = 0; ti < t->nthreads; ti++) {
		const struct hw_thread *th = &t->threads[ti];
		uint64_t v;
		if (!th->has_tp || !hw_read_u64(t, th->tp + (uint64_t)best, &v) ||
		    !v || tcache_dummy(p, v))
			continue;
		if (!looks_like_tcache(p, v)) {
			hw_finding(p->s, v, "thread %d: tcache pointer does not "
				   "point at a tcache chunk", th->tid);
			continue;
		}
		struct pm_tcache *tc = &p->tcaches[p->ntcaches];
		tc->tid = th->tid;
		tc->addr = v;
		struct pm_heap *h = pm_heap_of(p, v);
		tc->arena = h ? h->arena : -1;
		if (read_tcache(p, tc))
			p->ntcaches++;
	}
}

/* Bin i of tcache tc holds fewer entries than its counter says: the
   rest are orphans, free but reachable by no list.  Only the small bins
   are looked for (a large bin's entries vary in size).  */
static bool add_addr(uint64_t *v, unsigned *n, unsigned cap, uint64_t a)
{
	unsigned k = 0;
	while (k < *n && v[k] != a)
		k++;
	if (k == *n) {
		if (k == cap)
			return false;     /* enough broken tcaches seen */
		v[(*n)++] = a;
	}
	return true;
}

static void note_orphans(struct pm_state *p, uint64_t tc_addr, unsigned i)
{
	struct pm_orphans *o = &p->orphans;
	if (i >= PM_TCACHE_SMALL_BINS)
		return;
	if (p->tcache_key_mode == PM_KEY_NONE) {
		if (!o->key_scanned &&
		    add_addr(o->unkeyed_tc, &o->nunkeyed, 8, tc_addr))
			o->unkeyed_bins |= 1ull << i;
		return;
	}
	if (p->tcache_key_mode == PM_KEY_SELF &&
	    !add_addr(o->self_keys, &o->nself, 8, tc_addr))
		return;
	o->bins |= 1ull << i;
	o->any = true;
	uint64_t sz = PM_MINSIZE + 16 * (uint64_t)i;
	if (sz > p->tcache_max_chunk)
		p->tcache_max_chunk = sz;
}

bool pm_tcache_orphan(struct pm_state *p, const struct hw_chunk *c)
{
	const struct pm_orphans *o = &p->orphans;
	uint64_t i = (c->chunk_size - PM_MINSIZE) / 16, key;
	if (!o->any || c->chunk_size < PM_MINSIZE ||
	    i >= PM_TCACHE_SMALL_BINS || !(o->bins & (1ull << i)) ||
	    !hw_read_u64(p->t, c->addr + 8, &key) || key == 0)
		return false;
	/* tcache_put writes the key and tcache_get clears it: in a chunk
	   in use it is gone, unless the program stored the very value.
	   The random key of 2.34+ makes that practically impossible; the
	   tcache's address of 2.29-2.33 is a pointer a program is unlikely
	   to keep at that offset.  */
	if (p->tcache_key_mode == PM_KEY_RANDOM)
		return key == p->tcache_key;
	for (unsigned k = 0; k < o->nself; k++)
		if (key == o->self_keys[k])
			return true;
	return false;
}

/* Fastbins keep no count, and a chunk taken from one keeps its stale fd,
   so an orphan is told by its links alone: a chunk in use by its header,
   of a broken fastbin's size, whose fd leads through chunks of that size,
   none on a list, to the list's NULL end.  A safe-linked fd (glibc
   2.32+) that decodes so is glibc's: the chunk is taken as free.  A
   plain one (2.31 and before) is no evidence: a program's own
   NULL-terminated list of same-size nodes, in use or leaked, has the
   very same bytes, and nothing else glibc writes on a fastbin free (only
   fd) tells them apart.  Such a chunk keeps its state and is only marked
   as maybe free: leaks then calls it unknown, never lost, and never
   free.  */
#define FAST_ORPHAN_DEPTH 64

enum pm_fast_verdict pm_fast_orphan(struct pm_state *p,
				    const struct pm_heap *h,
				    const struct hw_chunk *c)
{
	uint64_t sz = c->chunk_size, i = sz / 16 - 2;
	if (sz < PM_MINSIZE || i >= PM_NFASTBINS ||
	    !(p->arenas[h->arena].fast_broken & (1u << i)))
		return PM_FAST_NO;
	bool plain = !p->l.safe_linking;
	uint64_t pos = c->chunk;
	for (unsigned n = 0; n < FAST_ORPHAN_DEPTH; n++) {
		uint64_t stored, field, nfield;
		if (!hw_read_u64(p->t, pos + PM_HDR, &stored))
			return PM_FAST_NO;
		uint64_t next = pm_reveal(p, pos + PM_HDR, stored);
		if (next == 0)
			return plain ? PM_FAST_MAYBE : PM_FAST_ORPHAN;
		if (((next + PM_HDR) & 15) || next < h->start ||
		    next >= h->end || next == pos ||
		    pm_tag_get(h, next) != PM_TAG_NONE ||
		    !hw_read_u64(p->t, next + 8, &field) ||
		    (field & ~(uint64_t)PM_SIZE_BITS) != sz)
			return PM_FAST_NO;
		/* (Plain links: a chain member on a list or free by its
		   header would not be an orphan's.)  */
		if (plain && (next + sz + 8 > h->end ||
			      pm_is_tcached(h, next + PM_HDR) ||
			      !hw_read_u64(p->t, next + sz + 8, &nfield) ||
			      !(nfield & PM_PREV_INUSE)))
			return PM_FAST_NO;
		pos = next;
	}
	return PM_FAST_NO;
}

static void walk_tcache(struct pm_state *p, struct pm_tcache *tc,
			const struct list_filter *f)
{
	/* Up to 2.41 mp_.tcache_bins says how many bins are in use; 2.42's
	   tcache_small_bins leaves out the large bins.  */
	unsigned nbins = p->l.tc_nbins;
	if (!p->l.tc_slots && p->tcache_bins && p->tcache_bins < nbins)
		nbins = (unsigned)p->tcache_bins;
	for (unsigned i = 0; i < nbins; i++) {
		uint64_t e, lo, hi, n = 0, bytes = 0, last = 0;
		uint64_t head = tc->addr + (uint64_t)p->l.tc_entries + 8 * i;
		pm_tcache_bin_sizes(i, &lo, &hi);
		if (tc->done[i] || !filter_range(f, lo, hi))
			continue;
		tc->done[i] = true;
		if (!hw_read_u64(p->t, head, &e))
			continue;
		/* Where the pointer being followed was read: a pointer to
		   nowhere is damage at its holder, not at the nowhere.  */
		uint64_t holder = head;
		while (e && n <= p->list_limit) {
			uint64_t sz, next;
			if (e & 15) {
				hw_finding(p->s, holder, "tcache bin %u of thread "
					   "%d: next pointer 0x%llx: unaligned "
					   "tcache chunk detected", i, tc->tid,
					   (unsigned long long)e);
				break;
			}
			struct pm_heap *h = pm_heap_of(p, e - PM_HDR);
			uint64_t field = 0;
			/* 2.43+ keeps freed mmapped chunks in the large bins
			   too (when the tcache_max tunable lets them in).  */
			bool mmapped = !h && i >= PM_TCACHE_SMALL_BINS &&
				       p->l.tc_slots &&
				       hw_read_u64(p->t, e - PM_HDR + 8, &field) &&
				       (field & PM_SIZE_BITS) == PM_IS_MMAPPED;
			if ((!h && !mmapped) || !chunk_size_of(p, e - PM_HDR, &sz)) {
				hw_finding(p->s, holder, "tcache bin %u of thread "
					   "%d: next pointer 0x%llx is outside "
					   "every heap", i, tc->tid,
					   (unsigned long long)e);
				break;
			}
			if (sz < lo || sz > hi) {
				if (lo == hi)
					hw_finding(p->s, e, "tcache bin %u of "
						   "thread %d: chunk size 0x%llx, "
						   "expected 0x%llx", i, tc->tid,
						   (unsigned long long)sz,
						   (unsigned long long)lo);
				else
					hw_finding(p->s, e, "tcache bin %u of "
						   "thread %d: chunk size 0x%llx, "
						   "expected 0x%llx-0x%llx", i,
						   tc->tid, (unsigned long long)sz,
						   (unsigned long long)lo,
						   (unsigned long long)hi);
				break;
			}
			/* A large bin is kept sorted, smallest first.  */
			if (sz < last)
				hw_finding(p->s, e, "tcache bin %u of thread %d: "
					   "chunk size 0x%llx after 0x%llx "
					   "(the large bin is out of order)", i,
					   tc->tid, (unsigned long long)sz,
					   (unsigned long long)last);
			last = sz;
			if (sz > p->tcache_max_chunk)
				p->tcache_max_chunk = sz;
			enum add_result added = addrset_add(&p->tcached, e);
			if (added == NO_MEMORY) {
				hw_oom(p->s);
				break;
			}
			if (added == ALREADY) {
				hw_finding(p->s, e, "tcache bin %u of thread %d: "
					   "chunk listed twice (free(): double "
					   "free detected in tcache 2, or a "
					   "cycle)", i, tc->tid);
				break;
			}
			if (h && e < h->end)
				pm_mark_tcached(h, e);
			n++;
			bytes += sz;
			uint64_t key;
			if (p->tcache_key_mode != PM_KEY_NONE &&
			    hw_read_u64(p->t, e + 8, &key) &&
			    key != (p->tcache_key_mode == PM_KEY_SELF
				    ? tc->addr : p->tcache_key))
				hw_finding(p->s, e + 8, "tcache bin %u of thread "
					   "%d: the entry's key 0x%llx is not "
					   "the tcache key (written after "
					   "free?)", i, tc->tid,
					   (unsigned long long)key);
			if (!hw_read_u64(p->t, e, &next))
				break;
			holder = e;
			e = pm_reveal(p, e, next);
		}
		atomic_fetch_add(&p->s->work.list_entries, n);
		tc->walked[i] = (uint16_t)(n > 0xffff ? 0xffff : n);
		tc->bytes[i] = bytes;
		if (tc->counts_known && n < tc->counts[i])
			note_orphans(p, tc->addr, i);
		if (tc->counts_known && n != tc->counts[i]) {
			if (p->l.tc_slots)
				hw_finding(p->s, head, "tcache bin %u of thread "
					   "%d: num_slots[] says %u entries "
					   "(%llu slots of %llu free), the list "
					   "has %llu", i, tc->tid, tc->counts[i],
					   (unsigned long long)(p->tcache_count -
								tc->counts[i]),
					   (unsigned long long)p->tcache_count,
					   (unsigned long long)n);
			else
				hw_finding(p->s, head, "tcache bin %u of thread "
					   "%d: counts[] says %u, the list has "
					   "%llu", i, tc->tid, tc->counts[i],
					   (unsigned long long)n);
		}
	}
}

/* ---- fastbins and bins ------------------------------------------------- */

/* One list being walked.  All fastbin and bin lists of all arenas are
   walked in lock step, one node of each per round, with the next node of
   each prefetched: a single list is a chain of dependent cache misses,
   hundreds of them side by side keep the memory system busy.  */
struct cursor {
	uint64_t cur, prev, head, n;
	struct pm_arena *ar;
	const struct hw_region *region;   /* locality hints for this list */
	struct pm_heap *heap;
	int16_t arena, index;
	bool fast;
};

static void prefetch_node(struct pm_state *p, struct cursor *k, uint64_t c)
{
	const uint8_t *q = hw_peek_near(p->t, &k->region, c, 32);
	if (q) {
		__builtin_prefetch(q);
		__builtin_prefetch(q + 31);
	}
	const struct pm_heap *h = pm_heap_near(p, &k->heap, c);
	if (h)
		__builtin_prefetch(&h->tags[(c - h->start) >> 6], 1);
}

/* Read size, fd and bk of the node at c.  */
static bool read_node(struct pm_state *p, struct cursor *k, uint64_t c,
		      uint64_t w[4])
{
	const uint8_t *q = hw_peek_near(p->t, &k->region, c, 32);
	if (q) {
		memcpy(w, q, 32);
		return true;
	}
	return hw_read(p->t, c, w, 32);
}

/* Process the current node; false when this list is done.  */
static bool fast_step(struct pm_state *p, struct cursor *k)
{
	uint64_t c = k->cur, w[4];
	uint64_t want = (uint64_t)(k->index + 2) * 16;
	/* (A list that breaks may have lost its tail: pm_fast_orphan.)  */
	uint16_t broken = (uint16_t)(1u << k->index);
	if ((c + PM_HDR) & 15) {
		hw_finding(p->s, k->prev, "fastbin %d of arena %d: fd 0x%llx: "
			   "unaligned fastbin chunk detected", k->index,
			   k->arena, (unsigned long long)c);
		k->ar->fast_broken |= broken;
		return false;
	}
	if (!read_node(p, k, c, w)) {
		hw_finding(p->s, k->prev, "fastbin %d of arena %d: fd 0x%llx "
			   "is not in the %s", k->index, k->arena,
			   (unsigned long long)c, hw_target_noun(p->t));
		k->ar->fast_broken |= broken;
		return false;
	}
	if ((w[1] & ~(uint64_t)PM_SIZE_BITS) != want) {
		hw_finding(p->s, c, "fastbin %d of arena %d: malloc(): memory "
			   "corruption (fast): chunk size 0x%llx does not match "
			   "the bin (reached from 0x%llx)", k->index, k->arena,
			   (unsigned long long)(w[1] & ~(uint64_t)PM_SIZE_BITS),
			   (unsigned long long)k->prev);
		k->ar->fast_broken |= broken;
		return false;
	}
	if (!tag_chunk(p, &k->heap, c, PM_TAG_FAST, "fastbin", k->arena)) {
		k->ar->fast_broken |= broken;
		return false;
	}
	/* What the heap walk reports too (the same words: said once), for
	   a fastbin walked after the heap walk, whose entries that walk
	   took for chunks in use (linksums.c: a fastbin whose guesses
	   failed).  The next header is a line or two away.  */
	uint64_t next_size;
	if (hw_read_u64(p->t, c + want + 8, &next_size) &&
	    !(next_size & PM_PREV_INUSE))
		hw_finding(p->s, c, "chunk is in a fastbin but its header "
			   "says it is free");
	k->ar->fast[k->index].count++;
	k->ar->fast[k->index].bytes += want;
	k->prev = c;
	k->cur = pm_reveal(p, c + PM_HDR, w[2]);
	return k->cur != 0 && ++k->n <= p->list_limit;
}

static bool bin_step(struct pm_state *p, struct cursor *k)
{
	uint64_t c = k->cur, w[4];
	int i = k->index;
	const char *list = i == 1 ? "unsorted bin"
			 : i < 64 ? "small bin" : "large bin";
	if (!read_node(p, k, c, w)) {
		hw_finding(p->s, k->prev, "%s %d of arena %d: fd 0x%llx is not "
			   "in the %s", list, i, k->arena,
			   (unsigned long long)c, hw_target_noun(p->t));
		return false;
	}
	uint64_t sz = w[1] & ~(uint64_t)PM_SIZE_BITS;
	if (w[3] != k->prev)
		hw_finding(p->s, c, "%s %d of arena %d: corrupted double-linked "
			   "list (bk 0x%llx, expected 0x%llx)", list, i,
			   k->arena, (unsigned long long)w[3],
			   (unsigned long long)k->prev);
	if (i > 1 && pm_bin_index(sz) != i)
		hw_finding(p->s, c, "%s %d of arena %d: chunk size 0x%llx "
			   "belongs in bin %d", list, i, k->arena,
			   (unsigned long long)sz, pm_bin_index(sz));
	if (!tag_chunk(p, &k->heap, c, i == 1 ? PM_TAG_UNSORTED : PM_TAG_BINNED,
		       list, k->arena))
		return false;
	k->ar->bins[i].count++;
	k->ar->bins[i].bytes += sz;
	k->prev = c;
	k->cur = w[2];
	return k->cur != k->head && ++k->n <= p->list_limit;
}

struct lists_job {
	struct pm_state *p;
	unsigned part, nparts;
	const struct list_filter *f;
};

/* Walk the lists of the arenas given to this part.  */
static void *walk_arena_lists(void *arg)
{
	struct lists_job *j = arg;
	struct pm_state *p = j->p;
	size_t n = 0, cap = p->narenas * (PM_NFASTBINS + PM_NBINS);
	struct cursor *ks = calloc(cap ? cap : 1, sizeof *ks);
	if (!ks) {
		hw_oom(p->s);
		return NULL;
	}
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_arena *ar = &p->arenas[a];
		if (ar->part != j->part || ar->uninit || ar->lists_skip)
			continue;
		for (int i = 0; p->l.ms_fastbins >= 0 && i < PM_NFASTBINS; i++) {
			uint64_t c;
			if (ar->fast_done[i] ||
			    !filter_fast(j->f, (int)a, (uint64_t)(i + 2) * 16))
				continue;
			ar->fast_done[i] = true;
			if (hw_read_u64(p->t, ar->addr + (uint64_t)p->l.ms_fastbins +
					8 * (uint64_t)i, &c) && c)
				ks[n++] = (struct cursor){ .cur = c, .ar = ar,
					.prev = ar->addr +
						(uint64_t)p->l.ms_fastbins + 8 * (uint64_t)i,
					.arena = (int16_t)a, .index = (int16_t)i,
					.fast = true };
		}
		for (int i = 1; i < PM_NBINS - 1; i++) {
			if (ar->bins_done[i] || !filter_bin(j->f, (int)a, i))
				continue;
			ar->bins_done[i] = true;
			uint64_t bin = pm_bin_at(p, ar->addr, i), c;
			if (hw_read_u64(p->t, bin + 16, &c) && c != bin)
				ks[n++] = (struct cursor){ .cur = c, .prev = bin,
					.head = bin, .ar = ar,
					.arena = (int16_t)a, .index = (int16_t)i };
		}
	}
	/* Only a few lists are in flight at once; the others wait past the
	   window.  Measured on the bench core (2.5M free chunks in 440
	   lists), one thread: all lists at once 1.27 s, 32 1.13 s, 8 0.88 s,
	   4 0.78 s, 2 0.99 s, 1 1.26 s.  Each node is on a page of its own
	   (a TLB miss, often a page fault of the core's mapping): a wider
	   window only has the nodes evict each other's translations and
	   prefetched lines before they are used.  */
	const size_t window = 4;
	uint64_t steps = 0;
	while (n > 0) {
		size_t active = n < window ? n : window;
		for (size_t i = 0; i < active;) {
			struct cursor *k = &ks[i];
			steps++;
			bool more = k->fast ? fast_step(p, k) : bin_step(p, k);
			if (more && k->n > p->list_limit)
				more = false;
			if (!more) {
				ks[i] = ks[--n];
				if (active > n)
					active = n;
				continue;
			}
			prefetch_node(p, k, k->cur);
			i++;
		}
	}
	atomic_fetch_add(&p->s->work.list_entries, steps);
	free(ks);
	return NULL;
}

#define PM_LIST_THREADS 2

/* Arenas are independent: their lists are walked by PM_LIST_THREADS
   threads, the arenas dealt out by size so the threads finish together.  */
static void walk_all_arena_lists(struct pm_state *p,
				 const struct list_filter *f)
{
	uint64_t load[PM_LIST_THREADS] = { 0 };
	/* A lookup's few lists are not worth a thread.  */
	unsigned nthreads = f->nsizes ? 1 : hw_threads(p->s);
	if (nthreads > PM_LIST_THREADS)
		nthreads = PM_LIST_THREADS;
	for (size_t a = 0; a < p->narenas; a++) {
		unsigned best = 0;
		for (unsigned k = 1; k < nthreads; k++)
			if (load[k] < load[best])
				best = k;
		p->arenas[a].part = best;
		load[best] += p->arenas[a].system_mem;
	}
	struct lists_job jobs[PM_LIST_THREADS];
	for (unsigned k = 0; k < nthreads; k++)
		jobs[k] = (struct lists_job){ p, k, nthreads, f };
	hw_run_parts(jobs, sizeof *jobs, nthreads, walk_arena_lists);
}

/* Tcache lists broke short while no list had shown the key: learn it
   from the chunks behind them (once), then take their bins as broken.  */
static void learn_key(struct pm_state *p)
{
	struct pm_orphans *o = &p->orphans;
	if (!o->unkeyed_bins || o->key_scanned)
		return;
	o->key_scanned = true;
	if (p->tcache_key_mode == PM_KEY_NONE && !pm_learn_tcache_key(p))
		return;
	for (unsigned t = 0; t < o->nunkeyed; t++)
		for (unsigned i = 0; i < PM_TCACHE_SMALL_BINS; i++)
			if (o->unkeyed_bins >> i & 1)
				note_orphans(p, o->unkeyed_tc[t], i);
}

static void walk_tcaches(struct pm_state *p, const struct list_filter *f)
{
	for (size_t i = 0; i < p->ntcaches; i++)
		walk_tcache(p, &p->tcaches[i], f);
	learn_key(p);
}

static void walk_lists(struct pm_state *p, const struct list_filter *f)
{
	walk_tcaches(p, f);
	walk_all_arena_lists(p, f);
	pm_count_fast_orphans(p);
}

void pm_walk_lists(struct pm_state *p)
{
	if (p->lists_done)
		return;
	p->lists_done = true;
	walk_lists(p, &(struct list_filter){ .arena = -1 });
	/* Every bin's count is now its list's.  */
	for (size_t a = 0; a < p->narenas; a++)
		p->arenas[a].free_summed = false;
}

void pm_walk_tcaches(struct pm_state *p)
{
	walk_tcaches(p, &(struct list_filter){ .arena = -1 });
	p->tcaches_done = true;
}

void pm_walk_fast_lists(struct pm_state *p)
{
	if (p->lists_done || p->fast_lists_done)
		return;
	p->fast_lists_done = true;
	walk_lists(p, &(struct list_filter){ .arena = -1, .fast_only = true });
}

void pm_walk_fastbins_left(struct pm_state *p)
{
	if (p->lists_done)
		return;
	/* (The tcaches were walked before any guess: none is left.)  */
	walk_all_arena_lists(p, &(struct list_filter){ .arena = -1,
						       .fast_only = true });
	pm_count_fast_orphans(p);
	p->fast_lists_done = true;
}

void pm_walk_bins_left(struct pm_state *p)
{
	if (p->lists_done)
		return;
	/* (Every other list was walked or settled before.)  */
	walk_all_arena_lists(p, &(struct list_filter){ .arena = -1,
						       .no_fast = true });
}

void pm_walk_lists_but_sorted(struct pm_state *p)
{
	if (p->lists_done)
		return;
	walk_lists(p, &(struct list_filter){ .arena = -1, .no_sorted = true });
	p->fast_lists_done = true;
	p->tcaches_done = true;
}

void pm_walk_tcaches_unsorted(struct pm_state *p)
{
	if (p->lists_done)
		return;
	walk_lists(p, &(struct list_filter){ .arena = -1, .no_sorted = true,
					     .no_fast = true });
	p->tcaches_done = true;
}

void pm_walk_lists_for(struct pm_state *p, int arena, const uint64_t *sizes,
		       size_t nsizes)
{
	if (p->lists_done || nsizes == 0)
		return;
	walk_lists(p, &(struct list_filter){ .arena = arena, .sizes = sizes,
					     .nsizes = nsizes });
}
