/* reach.c - mark every block in use by what reaches it (reach.h).
 *
 * One walk of the allocator fills the block map (every block in use) and
 * the list of the allocator's own memory (every block, free ones too,
 * and alloc.h's `internal` ranges), which the roots leave out.  Then
 * three phases, each scanning every block it marks once:
 *
 *   1. From the roots, start pointers only: reachable.  An interior
 *      pointer met on the way marks its block possible, unscanned.
 *   2. From the possible blocks, any pointer: possible.
 *   3. In address order, each block still unreached leads a clique: what
 *      it reaches that is unreached becomes indirect (an earlier leader
 *      too).  The leaders left are the definite leaks.
 *
 * Marked blocks wait on a stack of bounded size; when it is full a block
 * stays marked but not done (the map's `done` bit: scanned, or on a
 * stack to be), and a sweep of the map finds it afterwards, so memory
 * stays bounded whatever the shape of the heap.
 *
 * On a heap of millions of blocks nearly all the time goes in cache and
 * TLB misses (on the redis core, 9 million dictionary entries reached in
 * hash order, half its blocks through interior pointers), so the scan is
 * shaped to miss less and to miss in parallel:
 *
 *   - the words of a scan are looked up in batches (struct bm_probe:
 *     each lookup's dependent misses, step by step across the batch,
 *     overlap); a word pointing into its own block is not looked up;
 *   - a block pushed has its first bytes prefetched, and is popped by
 *     its address alone (its end is all a scan needs);
 *   - a sweep, which reads the heap in address order, leaves a block it
 *     marks ahead of itself for itself to reach, instead of pushing it
 *     and reading it now, out of order.
 *
 * Phase 1 is nearly all of the work (every reachable block's words) and
 * its result does not depend on the order of the scan, so it runs in the
 * session's walk threads: marks are set with atomic ORs (a block is
 * pushed by the one thread whose OR set its reachable bit), each thread
 * drains its own stack, and a thread that runs dry takes work that busy
 * ones hand to a shared pool.  A block of over a MiB goes to the pool in
 * slices, and what its slices mark is left to the sweep (address order,
 * all threads, each its own range of addresses).  Phase 2's result does
 * not depend on the order either: its sweep runs in threads too.
 * Phase 3 is ordered (a clique's leader is the lowest block) and
 * usually small: one thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../arch/arch.h"
#include "../target/target.h"
#include "reach.h"
#include "roots.h"
#include "scanwords.h"

#define STACK_MAX ((size_t)1 << 19)   /* entries per thread: 4 MiB */
#define FILL_MAX_THREADS 16
#define MARK_MAX_THREADS 16
/* Blocks a marking thread hands over or takes at a time.  */
#define SHARE_BATCH 256

/* ---- filling the map --------------------------------------------------- */

/* Each fill thread's own; aligned so that no two share a cache line.  */
struct filler {
	_Alignas(128) struct hw_blockmap *map;
	struct bm_filler bf;
	struct hw_ranges owned;
	uint64_t blocks, bytes, unplaced, unplaced_addr;
};

/* Block c in use into the map.  */
static void add_used(struct filler *f, const struct hw_chunk *c)
{
	if (bm_add(f->map, &f->bf, c->addr, c->size ? c->size : 1)) {
		f->blocks++;
		f->bytes += c->size;
	} else {
		if (!f->unplaced)
			f->unplaced_addr = c->addr;
		f->unplaced++;
	}
}

static bool fill_one(void *cookie, const struct hw_chunk *c)
{
	struct filler *f = cookie;
	if (c->chunk_size)
		hw_ranges_add(&f->owned, c->chunk, c->chunk + c->chunk_size);
	if (hw_program_block(c))
		add_used(f, c);
	return !f->owned.oom;
}

/* A block given in the other state: free after all, or (a wrong guess)
   in use after all (fill's first filler; before the map is sealed).  */
static bool restate_one(void *cookie, const struct hw_chunk *c)
{
	struct filler *f = cookie;
	if (c->used) {
		add_used(f, c);
		return true;
	}
	if (bm_remove(f->map, c->addr)) {
		f->blocks--;
		f->bytes -= c->size;
	}
	return true;
}

static void add_internal(void *cookie, uint64_t start, uint64_t end)
{
	hw_ranges_add(cookie, start, end);
}

static bool fill(struct hw_session *s, struct hw_reach *r,
		 struct hw_ranges *owned)
{
	unsigned n = s->alloc->chunks_parallel || s->alloc->states_parallel
		     ? hw_threads(s) : 1;
	if (n > FILL_MAX_THREADS)
		n = FILL_MAX_THREADS;
	struct filler fs[FILL_MAX_THREADS];
	void *cookies[FILL_MAX_THREADS];
	for (unsigned k = 0; k < n; k++) {
		fs[k] = (struct filler){ .map = &r->map,
					 .bf = { .lo = UINT64_MAX } };
		cookies[k] = &fs[k];
	}
	/* Only whether each block is in use matters here.  */
	if (s->alloc->states_parallel)
		hw_walk_states_parallel(s, n, fill_one, cookies,
					  restate_one);
	else if (n > 1)
		hw_walk_blocks_parallel(s, n, fill_one, cookies,
					  restate_one);
	else
		hw_walk_blocks(s, fill_one, &fs[0]);
	for (unsigned k = 0; k < n; k++) {
		bm_fill_done(&r->map, &fs[k].bf);
		r->blocks += fs[k].blocks;
		r->bytes += fs[k].bytes;
		if (fs[k].unplaced && (!r->unplaced ||
				       fs[k].unplaced_addr < r->unplaced_addr))
			r->unplaced_addr = fs[k].unplaced_addr;
		r->unplaced += fs[k].unplaced;
		hw_ranges_take(owned, &fs[k].owned);
	}
	if (!bm_seal(&r->map))
		return false;
	struct hw_ranges internal = { 0 };
	if (s->alloc->internal)
		s->alloc->internal(s->alloc_state, add_internal, &internal);
	for (size_t i = 0; i < internal.n; i++) {
		/* A block the allocator keeps for itself: reachable by
		   definition, and what it holds is the allocator's.  */
		struct bm_ref ref;
		bool exact;
		if (bm_find(&r->map, internal.v[i].start, &ref, &exact)) {
			bm_set_mark(&ref, BM_REACHABLE);
			bm_set_done(&ref);
			r->internal_blocks++;
		}
	}
	for (size_t i = 0; i < internal.n; i++)
		hw_ranges_add(&r->internal, internal.v[i].start,
			      internal.v[i].end);
	hw_ranges_normalize(&r->internal);
	owned->oom |= r->internal.oom;
	hw_ranges_take(owned, &internal);
	hw_ranges_normalize(owned);
	return !owned->oom && !r->map.oom;
}

/* ---- marking ----------------------------------------------------------- */

enum phase { PH_REACH, PH_POSSIBLE, PH_CLIQUE };

struct mark_pool;

/* Words met in a scan wait in a batch of this many; the batch's lookups
   go step by step together (struct bm_probe), their cache misses
   overlapping.  Large enough to keep a core's memory busy, small enough
   to stay in L1.  */
#define VISIT_BATCH 64
_Static_assert(VISIT_BATCH <= 256, "flush() keeps a batch's indexes in bytes");

struct marker {
	struct hw_reach *r;
	struct hw_target *t;
	const struct hw_blockmap *m;
	const struct bm_run *hint;    /* the range of the last hit */
	const struct hw_region *region;  /* of the last word scanned */
	const struct hw_region *push_region;  /* of the last block pushed */
	uint64_t mask;
	uint64_t header;          /* alloc.h's header_bytes */
	enum phase phase;
	uint64_t leader;          /* PH_CLIQUE: the block leading it */
	uint64_t *stack;
	size_t n, cap;
	bool overflow;
	uint64_t reached;         /* blocks marked from unreached */
	uint64_t possible;        /* marked possible in phase 1, still so */
	uint64_t unreadable;      /* bytes to scan the target lacks */
	struct mark_pool *pool;   /* phase 1 in threads: marks are atomic */
	bool defer;               /* pool: leave what is marked to the sweep */
	bool collect;             /* roots only push (threads drain later) */
	/* The block being scanned: a word pointing into it changes no mark
	   (a block is scanned only once marked as what its words would mark
	   it), so it is passed over without a lookup (redis's embedded
	   strings, a list's sentinel).  */
	uint64_t self_lo, self_len;
	/* A sweep in address order is at ahead_lo (and goes up to
	   ahead_hi): a block it has still to reach is marked but not pushed,
	   for the sweep to scan in address order, sequentially, instead of
	   now, a cache and TLB miss away (a chained hash table's entries
	   point every which way).  Empty outside sweeps.  */
	uint64_t ahead_lo, ahead_hi;
	/* Sweeps in threads: all parts' (for the blocks they have still to
	   reach), and which part is this thread's.  */
	struct sweep_shared *sweeps;
	unsigned part;
	struct bm_probe batch[VISIT_BATCH];
	unsigned nbatch;
};

/* False when the stack is full (then k->overflow is set).  */
static bool push(struct marker *k, uint64_t addr)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 4096;
		uint64_t *v = cap <= STACK_MAX ? realloc(k->stack, cap * sizeof *v)
					       : NULL;
		if (!v) {
			k->overflow = true;
			return false;
		}
		k->stack = v;
		k->cap = cap;
	}
	k->stack[k->n++] = addr;
	return true;
}

static bool other_sweep_reaches(const struct marker *k, uint64_t addr);

/* Block ref, just marked, to be scanned: pushed, unless the sweep under
   way will reach it.  Pushed, it is done from then on (`done` means
   scanned or on a stack to be), so that neither a sweep nor its block's
   other words take it again, and popping it needs only its end, not
   its mark byte.  Its first bytes are started on their way to the
   cache: it is scanned soon (the stack is last in, first out), and on a
   big heap its memory is a cache and TLB miss otherwise, most of a
   scan's time when blocks are reached in pointer order.  A full stack
   leaves it marked but not done: a sweep finds it.  */
static void to_scan(struct marker *k, const struct bm_ref *ref)
{
	if (ref->addr > k->ahead_lo && ref->addr < k->ahead_hi)
		return;
	if (k->sweeps && other_sweep_reaches(k, ref->addr))
		return;
	if (!push(k, ref->addr))
		return;
	if (k->pool)
		__atomic_fetch_or(ref->mk, (uint8_t)BM_DONE, __ATOMIC_RELAXED);
	else
		bm_set_done(ref);
	const uint8_t *p = hw_peek_near(k->t, &k->push_region, ref->addr, 1);
	if (p)
		__builtin_prefetch(p, 0, 3);
}

/* Push again block addr, taken from another stack (done since its first
   push); if this stack is full, it is made not done again, for the sweep
   that the full stack calls for to find.  */
static void repush(struct marker *k, uint64_t addr)
{
	struct bm_ref ref;
	bool exact;
	if (!push(k, addr) && bm_find(k->m, addr, &ref, &exact))
		__atomic_fetch_and(ref.mk, (uint8_t)~BM_DONE,
				   __ATOMIC_RELAXED);
}

/* Is v, inside the block at ref, the address of the header of the chunk
   after it (whatever that chunk's state)?  ptmalloc's header overlaps a
   block's last bytes: a chunk of size n has n - 8 usable bytes, which
   the map rounds up to n, so the next header starts 16 bytes before the
   end the map gives.  */
static bool header_of_next(struct marker *k, const struct bm_ref *ref,
			   uint64_t v)
{
	return v == bm_block_end(k->m, ref) - k->header;
}

/* Phase 1 in threads: the bits alone, atomically; bm_settle_marks()
   makes marks of them afterwards.  The plain load first: most words
   point to blocks marked already, and a locked OR costs more than a
   load.  The OR is sequentially consistent for the sweeps in threads
   (see SWEEP_STEP).  */
static void visit_reach_atomic(struct marker *k, const struct bm_ref *ref,
			       bool exact)
{
	uint8_t mk = __atomic_load_n(ref->mk, __ATOMIC_RELAXED);
	if (!exact) {
		if (!(mk & (BM_REACHABLE | BM_POSSIBLE)))
			__atomic_fetch_or(ref->mk, (uint8_t)BM_POSSIBLE,
					  __ATOMIC_RELAXED);
		return;
	}
	if ((mk & BM_REACHABLE) ||
	    (__atomic_fetch_or(ref->mk, (uint8_t)BM_REACHABLE,
			       __ATOMIC_SEQ_CST) & BM_REACHABLE))
		return;
	if (k->defer)
		k->overflow = true;     /* a big block's slice: the sweep's */
	else
		to_scan(k, ref);
}

/* Phase 2 in threads: reachable marks are settled and stay, so an
   unreached block can only become possible, which an OR does whoever
   wins; the winner scans it.  */
static void visit_possible_atomic(struct marker *k, const struct bm_ref *ref)
{
	if ((__atomic_load_n(ref->mk, __ATOMIC_RELAXED) & BM_MARK_BITS) ||
	    (__atomic_fetch_or(ref->mk, (uint8_t)BM_POSSIBLE,
			       __ATOMIC_SEQ_CST) & BM_MARK_BITS))
		return;
	k->reached++;
	to_scan(k, ref);
}

/* Word v, found to point into the block at ref (at its start: exact).  */
static void visit_ref(struct marker *k, uint64_t v, const struct bm_ref *rf,
		      bool exact)
{
	struct bm_ref ref = *rf;
	if (!exact && k->header && header_of_next(k, &ref, v))
		return;
	if (k->pool) {
		if (k->phase == PH_REACH)
			visit_reach_atomic(k, &ref, exact);
		else
			visit_possible_atomic(k, &ref);
		return;
	}
	enum bm_mark mark = bm_mark_of(&ref);
	switch (k->phase) {
	case PH_REACH:
		if (mark == BM_REACHABLE)
			return;
		k->reached += mark == BM_UNREACHED;
		if (exact) {
			k->possible -= mark == BM_POSSIBLE;
			bm_set_mark(&ref, BM_REACHABLE);
			to_scan(k, &ref);
		} else if (mark == BM_UNREACHED) {
			bm_set_mark(&ref, BM_POSSIBLE);
			k->possible++;
		}
		return;
	case PH_POSSIBLE:
		if (mark == BM_UNREACHED) {
			bm_set_mark(&ref, BM_POSSIBLE);
			k->reached++;
			to_scan(k, &ref);
		}
		return;
	case PH_CLIQUE:
		if (mark == BM_UNREACHED && ref.addr != k->leader) {
			bm_set_mark(&ref, BM_INDIRECT);
			/* An earlier leader was scanned already: what it
			   reaches is indirect already.  */
			if (!bm_done(&ref))
				to_scan(k, &ref);
		}
		return;
	}
}

/* The batch's lookups, step by step all together, then their visits in
   the order the words came.  Before anything looks at the mark stack
   or the marks (a drain, a sweep's next block, the end of a phase):
   what the batch holds is not marked yet.  */
static void flush(struct marker *k)
{
	unsigned n = k->nbatch;
	/* Each round steps the probes still under way (their indexes).  */
	uint8_t busy[VISIT_BATCH];
	unsigned nbusy = 0;
	for (unsigned i = 0; i < n; i++)
		if (bm_probe_busy(&k->batch[i]))
			busy[nbusy++] = (uint8_t)i;
	while (nbusy) {
		unsigned still = 0;
		for (unsigned j = 0; j < nbusy; j++)
			if (bm_probe_step(k->m, &k->batch[busy[j]]))
				busy[still++] = busy[j];
		nbusy = still;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct bm_probe *p = &k->batch[i];
		if (p->found)
			visit_ref(k, p->addr, &p->ref, p->exact);
	}
	k->nbatch = 0;
}

/* A word that may point into a block: into the batch.  */
static void visit(struct marker *k, uint64_t v)
{
	if (v - k->self_lo < k->self_len)
		return;
	bm_probe_start(k->m, &k->hint, &k->batch[k->nbatch], v);
	if (++k->nbatch == VISIT_BATCH)
		flush(k);
}

/* visit() as scanwords.h's callback: the leaks scan never stops early.  */
static bool visit_word(void *cookie, uint64_t slot, uint64_t v)
{
	(void)slot;
	visit(cookie, v);
	return true;
}

/* Every aligned word of [start, end) that the target holds; what it
   lacks is counted in k->unreadable.  */
static void scan(struct marker *k, uint64_t start, uint64_t end)
{
	/* Words pointing into what is scanned are passed over: a block's
	   into itself (see self_lo), a root's into the roots (no block
	   lies there).  */
	k->self_lo = start;
	k->self_len = end - start;
	hw_scan_words(k->t, &k->region, start, end, k->mask, k->m->lo,
		      k->m->hi,
		      visit_word, k, &k->unreadable);
}

/* A block larger than this is scanned in slices of SLICE bytes, which
   any marking thread may take.  */
#define BIG_BLOCK ((uint64_t)1 << 20)
#define SLICE ((uint64_t)256 << 10)

static bool hand_out(struct mark_pool *p, uint64_t lo, uint64_t hi);

/* A big block of pointers (the bench program's tables hold millions)
   would keep one marking thread busy while the others wait, and mark
   more blocks than a stack holds, to be scanned in pointer order, a
   cache miss each.  So in threads its slices go to the pool for any
   thread to scan, and the blocks they mark are left to the sweep that
   follows, which takes them in address order in every thread.  */
static void scan_block(struct marker *k, uint64_t addr, uint64_t end)
{
	if (k->pool && end - addr > BIG_BLOCK && hand_out(k->pool, addr, end))
		return;
	scan(k, addr, end);
}

/* Scan block ref, which a sweep or a clique's lead found marked and not
   done.  */
static void scan_found(struct marker *k, const struct bm_ref *ref)
{
	if (k->pool)
		__atomic_fetch_or(ref->mk, (uint8_t)BM_DONE, __ATOMIC_RELAXED);
	else
		bm_set_done(ref);
	scan_block(k, ref->addr, bm_block_end(k->m, ref));
}

/* Scan the block on top of the stack (done since it was pushed).  */
static void scan_popped(struct marker *k)
{
	uint64_t addr = k->stack[--k->n];
	scan_block(k, addr, bm_end_near(k->m, &k->hint, addr));
}

/* Is there a block to scan on k's stack?  The batch's visits go first
   when it is empty: they may push some.  */
static bool more_to_scan(struct marker *k)
{
	if (!k->n && k->nbatch)
		flush(k);
	return k->n != 0;
}

/* Scan the blocks on k's stack and those their words push, until none
   is left.  Lazily (in a sweep, which goes on to its next block), the
   visits still in the batch when the stack runs dry wait for the next
   blocks' words to fill it: flushed after every small block, a batch
   would overlap next to nothing.  The sweep drains eagerly at its end.  */
static void drain(struct marker *k, bool lazy)
{
	for (;;) {
		if (!k->n) {
			if (lazy || !k->nbatch)
				return;
			flush(k);
			if (!k->n)
				return;
		}
		scan_popped(k);
	}
}

struct sweep {
	struct marker *k;
	enum bm_mark want;
};

static bool sweep_one(void *cookie, const struct bm_ref *ref)
{
	struct sweep *w = cookie;
	if (bm_mark_of(ref) == w->want && !bm_done(ref)) {
		w->k->ahead_lo = ref->addr;
		scan_found(w->k, ref);
		drain(w->k, true);
	}
	return true;
}

/* Scan every block marked `want` and not done yet, and what they mark,
   until no mark was left behind by a full stack.  */
static void sweep(struct marker *k, enum bm_mark want)
{
	struct sweep w = { k, want };
	do {
		k->overflow = false;
		k->ahead_lo = 0;
		k->ahead_hi = UINT64_MAX;
		bm_each(k->m, sweep_one, &w);
		k->ahead_hi = 0;
		drain(k, false);
	} while (k->overflow);
}

/* ---- phase 1 in threads -------------------------------------------------- */

struct slice {
	uint64_t lo, hi;
};

struct mark_pool {
	pthread_mutex_t lock;
	pthread_cond_t more;
	uint64_t *v;              /* blocks handed over, to be scanned */
	size_t n, cap;
	struct slice *slices;     /* big blocks' slices, to be scanned */
	size_t nslices, slices_cap;
	bool slicing;             /* phase 1's pool (the sweep's has none) */
	unsigned threads, idle;
	int hungry;               /* atomic: a thread waits for work */
	bool finished;
};

/* Put [lo, hi) in the pool in slices; false when it cannot (then the
   caller scans it all).  */
static bool hand_out(struct mark_pool *p, uint64_t lo, uint64_t hi)
{
	if (!p->slicing)
		return false;
	size_t add = (size_t)((hi - lo + SLICE - 1) / SLICE);
	pthread_mutex_lock(&p->lock);
	if (p->nslices + add > p->slices_cap) {
		size_t cap = p->slices_cap ? 2 * p->slices_cap : 64;
		while (cap < p->nslices + add)
			cap *= 2;
		struct slice *v = realloc(p->slices, cap * sizeof *v);
		if (!v) {
			pthread_mutex_unlock(&p->lock);
			return false;
		}
		p->slices = v;
		p->slices_cap = cap;
	}
	for (uint64_t at = lo; at < hi; at += SLICE)
		p->slices[p->nslices++] = (struct slice){
			at, hi - at > SLICE ? at + SLICE : hi };
	__atomic_store_n(&p->hungry, p->idle > 0, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&p->more);
	pthread_mutex_unlock(&p->lock);
	return true;
}

/* Hand the older half of k's stack to the pool (it has the most work
   under it); k keeps it all when the pool cannot grow.  */
static void share(struct marker *k, struct mark_pool *p)
{
	size_t give = k->n / 2;
	pthread_mutex_lock(&p->lock);
	if (p->n + give > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		while (cap < p->n + give)
			cap *= 2;
		uint64_t *v = realloc(p->v, cap * sizeof *v);
		if (!v) {
			pthread_mutex_unlock(&p->lock);
			return;
		}
		p->v = v;
		p->cap = cap;
	}
	memcpy(p->v + p->n, k->stack, give * sizeof *k->stack);
	p->n += give;
	memmove(k->stack, k->stack + give, (k->n - give) * sizeof *k->stack);
	k->n -= give;
	pthread_cond_broadcast(&p->more);
	pthread_mutex_unlock(&p->lock);
}

/* Take a slice into *job, or else up to a batch of blocks into k's
   stack, waiting while other threads may still hand some over; false
   when every thread is idle and the pool empty: phase 1 is over.  */
static bool take(struct marker *k, struct mark_pool *p, struct slice *job)
{
	pthread_mutex_lock(&p->lock);
	if (!p->n && !p->nslices) {
		p->idle++;
		__atomic_store_n(&p->hungry, 1, __ATOMIC_RELAXED);
		while (!p->n && !p->nslices && !p->finished) {
			if (p->idle == p->threads) {
				p->finished = true;
				pthread_cond_broadcast(&p->more);
				break;
			}
			pthread_cond_wait(&p->more, &p->lock);
		}
		if (p->finished) {
			pthread_mutex_unlock(&p->lock);
			return false;
		}
		p->idle--;
	}
	if (p->nslices) {
		*job = p->slices[--p->nslices];
	} else {
		size_t n = p->n < SHARE_BATCH ? p->n : SHARE_BATCH;
		for (size_t i = 0; i < n; i++)
			repush(k, p->v[--p->n]);
	}
	if (!p->n && !p->nslices)
		__atomic_store_n(&p->hungry, p->idle > 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	return true;
}

static void *mark_worker(void *arg)
{
	struct marker *k = arg;
	struct mark_pool *p = k->pool;
	struct slice job = { 0, 0 };
	do {
		if (job.hi) {
			/* A slice: what it marks is the sweep's.  */
			k->defer = true;
			scan(k, job.lo, job.hi);
			flush(k);
			k->defer = false;
			job.lo = job.hi = 0;
		}
		while (more_to_scan(k)) {
			scan_popped(k);
			if (k->n >= 2 * SHARE_BATCH &&
			    __atomic_load_n(&p->hungry, __ATOMIC_RELAXED))
				share(k, p);
		}
	} while (take(k, p, &job));
	return NULL;
}

/* Phase 1 from the blocks the roots marked (on k's stack) to the end,
   in nthreads threads, k's own included.  Marks not settled yet.  */
static void mark_parallel(struct marker *k, unsigned nthreads)
{
	struct mark_pool p = { .threads = nthreads, .slicing = true };
	struct marker ks[MARK_MAX_THREADS];
	pthread_t tids[MARK_MAX_THREADS];
	bool started[MARK_MAX_THREADS] = { false };
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.more, NULL);
	for (unsigned i = 0; i < nthreads; i++) {
		ks[i] = *k;
		ks[i].pool = &p;
		if (i) {
			/* Thread 0 keeps what the roots' scan counted.  */
			ks[i].unreadable = 0;
			ks[i].stack = NULL;
			ks[i].n = ks[i].cap = 0;
			ks[i].overflow = false;
			ks[i].hint = NULL;
		}
	}
	/* Each thread starts with its share of the roots' blocks.  */
	for (unsigned i = 1; i < nthreads; i++)
		for (size_t j = i; j < k->n; j += nthreads)
			repush(&ks[i], k->stack[j]);
	size_t n = 0;
	for (size_t j = 0; j < k->n; j += nthreads)
		ks[0].stack[n++] = k->stack[j];
	ks[0].n = n;
	for (unsigned i = 1; i < nthreads; i++)
		started[i] = pthread_create(&tids[i], NULL, mark_worker,
					    &ks[i]) == 0;
	for (unsigned i = 1; i < nthreads; i++)
		if (!started[i]) {
			/* Its blocks go to the pool instead.  */
			pthread_mutex_lock(&p.lock);
			p.threads--;
			pthread_mutex_unlock(&p.lock);
			while (ks[i].n)
				repush(&ks[0], ks[i].stack[--ks[i].n]);
		}
	mark_worker(&ks[0]);
	for (unsigned i = 1; i < nthreads; i++)
		if (started[i])
			pthread_join(tids[i], NULL);
	*k = ks[0];
	k->pool = NULL;
	for (unsigned i = 1; i < nthreads; i++) {
		k->overflow |= ks[i].overflow;
		k->unreadable += ks[i].unreadable;
		free(ks[i].stack);
	}
	free(p.v);
	free(p.slices);
	pthread_cond_destroy(&p.more);
	pthread_mutex_destroy(&p.lock);
}

static void root_one(void *cookie, const struct hw_root *root)
{
	struct marker *k = cookie;
	if (root->kind == HW_ROOT_REGISTER || root->kind == HW_ROOT_DTV) {
		k->r->registers += root->kind == HW_ROOT_REGISTER;
		uint64_t v = root->value & k->mask;
		k->self_len = 0;
		if (v - k->m->lo < k->m->hi - k->m->lo)
			visit(k, v);
	} else {
		k->r->root_ranges++;
		k->r->root_bytes += root->end - root->start;
		scan(k, root->start, root->end);
	}
	if (!k->collect)
		drain(k, false);
}

static bool lead_clique(void *cookie, const struct bm_ref *ref)
{
	struct marker *k = cookie;
	if (bm_mark_of(ref) != BM_UNREACHED || bm_done(ref))
		return true;
	k->leader = ref->addr;
	scan_found(k, ref);
	drain(k, false);
	if (k->overflow)
		sweep(k, BM_INDIRECT);
	return true;
}

/* ---- sweeps in threads ------------------------------------------------- */

/* Where a mark stack filled up (a block of millions of pointers: the
   bench's tables, redis's dictionary), the blocks left behind are marked
   reachable and not done; and in phase 2 every block marked possible is
   to be scanned.  The map is cut into parts, ranges of addresses of
   about as many blocks each, more parts than threads (how much there is
   to scan in each is known only when it is done); each thread takes the
   next part not taken and sweeps it in address order, scanning what it
   finds and what that marks (marks atomic, as in phase 1 in threads).
   Going through the map in address order reads the heap almost
   sequentially: faster than pointer order.

   A block a thread marks that the sweep of its part has still to reach
   is left to that sweep (see `ahead_lo`), and so is one that another
   part's sweep has still to reach: each part publishes how far its
   sweep may have looked (a bound, raised SWEEP_STEP bytes at a time;
   its start until taken, everything once swept), and a thread that has
   just marked a block at or past that bound of its part leaves it.  The
   mark (an atomic read-modify-write) and the load of the bound, and the
   bound's store and the sweep's load of the mark, are sequentially
   consistent: either the marking thread sees that the sweep may have
   passed (and pushes the block itself), or the sweep's load of the mark
   comes after it and sees it.  */
#define SWEEP_STEP ((uint64_t)64 << 10)
#define SWEEP_PARTS_PER_THREAD 16
#define SWEEP_MAX_PARTS (SWEEP_PARTS_PER_THREAD * MARK_MAX_THREADS)

struct sweep_shared {
	uint64_t cuts[SWEEP_MAX_PARTS + 1];   /* part p: [cuts[p], cuts[p+1]) */
	unsigned nparts;
	unsigned next;                        /* atomic: the next part to take */
	struct {
		_Alignas(128) uint64_t at;      /* atomic: the sweep of this
						   part has not loaded the mark
						   of a block at or past it */
	} bound[SWEEP_MAX_PARTS];
};

struct sweep_part {
	struct marker k;
	enum bm_mark want;
	uint64_t bound;           /* this part's, as published */
};

/* The part holding addr.  */
static unsigned part_of(const struct sweep_shared *sh, uint64_t addr)
{
	unsigned lo = 0, hi = sh->nparts;       /* cuts[lo] <= addr */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		if (addr >= sh->cuts[mid])
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static bool other_sweep_reaches(const struct marker *k, uint64_t addr)
{
	const struct sweep_shared *sh = k->sweeps;
	unsigned q = part_of(sh, addr);
	return q != k->part &&
	       addr >= __atomic_load_n(&sh->bound[q].at, __ATOMIC_SEQ_CST);
}

static bool sweep_found(void *cookie, const struct bm_ref *ref)
{
	struct sweep_part *sp = cookie;
	struct marker *k = &sp->k;
	if (ref->addr >= sp->bound) {
		sp->bound = ref->addr + SWEEP_STEP;
		__atomic_store_n(&k->sweeps->bound[k->part].at, sp->bound,
				 __ATOMIC_SEQ_CST);
	}
	uint8_t mk = __atomic_load_n(ref->mk, __ATOMIC_SEQ_CST);
	/* Phase 1's marks are bits until settled: the reachable bit.  */
	bool want = sp->want == BM_REACHABLE ? (mk & BM_REACHABLE) != 0
		    : (mk & BM_MARK_BITS) == sp->want;
	if (!want || (mk & BM_DONE))
		return true;
	k->ahead_lo = ref->addr;
	scan_found(k, ref);
	drain(k, true);
	return true;
}

static void *sweep_worker(void *arg)
{
	struct sweep_part *sp = arg;
	struct marker *k = &sp->k;
	struct sweep_shared *sh = k->sweeps;
	for (;;) {
		unsigned p = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED);
		if (p >= sh->nparts)
			break;
		k->part = p;
		k->ahead_lo = sp->bound = sh->cuts[p];
		k->ahead_hi = sh->cuts[p + 1];
		bm_each_range(k->m, sh->cuts[p], sh->cuts[p + 1], sweep_found,
			      sp);
		__atomic_store_n(&sh->bound[p].at, UINT64_MAX,
				 __ATOMIC_SEQ_CST);
	}
	k->ahead_hi = 0;
	drain(k, false);
	return NULL;
}

/* sweep(k, want) in nthreads threads: phase 1's after phase 1 in threads
   (marks settled, and settled again after), or phase 2's.  */
static void sweep_parallel(struct marker *k, unsigned nthreads,
			   enum bm_mark want)
{
	struct mark_pool none = { .threads = nthreads };  /* atomic marks */
	struct sweep_part sp[MARK_MAX_THREADS];
	struct sweep_shared *sh = malloc(sizeof *sh);
	if (!sh) {
		/* One thread, a part of its own.  */
		sweep(k, want);
		return;
	}
	sh->nparts = nthreads * SWEEP_PARTS_PER_THREAD;
	bm_part_cuts(k->m, sh->nparts, sh->cuts);
	do {
		k->overflow = false;
		sh->next = 0;
		for (unsigned p = 0; p < sh->nparts; p++)
			sh->bound[p].at = sh->cuts[p];
		for (unsigned i = 0; i < nthreads; i++) {
			sp[i] = (struct sweep_part){ .k = *k, .want = want };
			sp[i].k.pool = &none;
			sp[i].k.sweeps = sh;
			sp[i].k.stack = NULL;
			sp[i].k.n = sp[i].k.cap = 0;
			sp[i].k.unreadable = 0;
			sp[i].k.reached = 0;
			sp[i].k.hint = NULL;
			sp[i].k.region = NULL;
			sp[i].k.push_region = NULL;
		}
		hw_run_parts(sp, sizeof *sp, nthreads, sweep_worker);
		for (unsigned i = 0; i < nthreads; i++) {
			k->overflow |= sp[i].k.overflow;
			k->unreadable += sp[i].k.unreadable;
			k->reached += sp[i].k.reached;
			free(sp[i].k.stack);
		}
		if (want == BM_REACHABLE)
			bm_settle_marks(&k->r->map, &k->reached, &k->possible);
	} while (k->overflow);
	free(sh);
}

static void mark(struct hw_session *s, struct hw_reach *r,
		 const struct hw_ranges *owned)
{
	const struct hw_arch *a = s->arch ? s->arch : s->target->arch;
	struct marker k = {
		.r = r, .t = s->target, .m = &r->map,
		.mask = a ? a->ptr_mask : ~(uint64_t)0, .phase = PH_REACH,
		.header = s->alloc->header_bytes,
	};
	k.reached = r->internal_blocks;
	r->ptr_mask = k.mask;
	unsigned nthreads = hw_threads(s);
	if (nthreads > MARK_MAX_THREADS)
		nthreads = MARK_MAX_THREADS;
	k.collect = nthreads > 1;
	hw_roots_each(s, owned, root_one, &k);
	flush(&k);
	if (k.collect) {
		mark_parallel(&k, nthreads);
		k.collect = false;
		bm_settle_marks(&r->map, &k.reached, &k.possible);
	}
	if (k.overflow && nthreads > 1)
		sweep_parallel(&k, nthreads, BM_REACHABLE);
	else if (k.overflow)
		sweep(&k, BM_REACHABLE);
	/* The sweeps visit every block of the map: only when some block
	   may need them.  */
	k.phase = PH_POSSIBLE;
	if (k.possible && nthreads > 1)
		sweep_parallel(&k, nthreads, BM_POSSIBLE);
	else if (k.possible)
		sweep(&k, BM_POSSIBLE);
	k.phase = PH_CLIQUE;
	r->all_reachable = k.reached == r->blocks && !k.possible;
	if (k.reached < r->blocks)
		bm_each(&r->map, lead_clique, &k);
	r->unreadable += k.unreadable;
	free(k.stack);
}

/* ---- the session's reach ------------------------------------------------ */

static bool add_slab(void *cookie, uint64_t lo, uint64_t hi, uint64_t base,
		     uint64_t slot, uint32_t nslots, bool interior)
{
	return bm_add_slab(cookie, lo, hi, base, slot, nslots, interior);
}

/* The allocator's slabs into the map, before its blocks.  */
static bool add_slabs(struct hw_session *s, struct hw_reach *r)
{
	if (s->alloc->slabs)
		s->alloc->slabs(s->alloc_state, add_slab, &r->map);
	return bm_slabs_done(&r->map);
}

static void release_reach(void *r)
{
	hw_reach_free(r);
}

const struct hw_reach *hw_reach_get(struct hw_session *s)
{
	struct hw_reach *have = hw_slot_get(s, HW_SLOT_REACH);
	if (have)
		return have;
	struct hw_reach *r = calloc(1, sizeof *r);
	if (!r || !bm_init(&r->map, s->target,
			   s->alloc->block_align ? s->alloc->block_align : 16)) {
		free(r);
		hw_error(s, HW_BAD_TARGET, "out of memory");
		return NULL;
	}
	if (!add_slabs(s, r) || !fill(s, r, &r->owned)) {
		hw_reach_free(r);
		hw_error(s, HW_BAD_TARGET, "out of memory: no room for the "
			 "map of the heap's blocks");
		return NULL;
	}
	mark(s, r, &r->owned);
	hw_slot_set(s, HW_SLOT_REACH, r, release_reach);
	return r;
}

void hw_reach_free(struct hw_reach *r)
{
	if (!r)
		return;
	bm_free(&r->map);
	hw_ranges_free(&r->owned);
	hw_ranges_free(&r->internal);
	free(r);
}

bool hw_reach_mark(const struct hw_reach *r, uint64_t addr,
		   enum bm_mark *mark)
{
	const struct bm_run *hint = NULL;
	return hw_reach_mark_near(r, &hint, addr, mark);
}

bool hw_reach_mark_near(const struct hw_reach *r, const struct bm_run **hint,
			uint64_t addr, enum bm_mark *mark)
{
	struct bm_ref ref;
	bool exact;
	if (!bm_find_near(&r->map, hint, addr, &ref, &exact) || !exact)
		return false;
	*mark = bm_mark_of(&ref);
	return true;
}
