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
 * stays marked but not done (the map's `done` bit), and a sweep of the
 * map finds it afterwards, so memory stays bounded whatever the shape of
 * the heap.
 *
 * Phase 1 is nearly all of the work (every reachable block's words) and
 * its result does not depend on the order of the scan, so it runs in the
 * session's walk threads: marks are set with atomic ORs (a block is
 * pushed by the one thread whose OR set its reachable bit), each thread
 * drains its own stack, and a thread that runs dry takes work that busy
 * ones hand to a shared pool.  A block of over a MiB goes to the pool in
 * slices, and what its slices mark is left to the sweep (address order,
 * all threads).  Phases 2 and 3 are ordered (a clique's
 * leader is the lowest block) and usually small: one thread.
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

struct marker {
	struct hw_reach *r;
	struct hw_target *t;
	const struct hw_blockmap *m;
	const struct bm_run *hint;    /* the range of the last hit */
	const struct hw_region *region;  /* of the last word scanned */
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
};

static void push(struct marker *k, uint64_t addr)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 4096;
		uint64_t *v = cap <= STACK_MAX ? realloc(k->stack, cap * sizeof *v)
					       : NULL;
		if (!v) {
			/* Left marked but not done: a sweep finds it.  */
			k->overflow = true;
			return;
		}
		k->stack = v;
		k->cap = cap;
	}
	k->stack[k->n++] = addr;
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

/* A word that may point into a block.  */
static void visit(struct marker *k, uint64_t v)
{
	struct bm_ref ref;
	bool exact;
	if (!bm_find_near(k->m, &k->hint, v, &ref, &exact))
		return;
	if (!exact && k->header && header_of_next(k, &ref, v))
		return;
	enum bm_mark mark = bm_mark_of(&ref);
	if (k->pool) {
		/* Several threads: the bits alone, atomically;
		   bm_settle_marks() makes marks of them afterwards.  */
		if (exact) {
			if (!(__atomic_fetch_or(ref.mk, (uint8_t)BM_REACHABLE,
						__ATOMIC_RELAXED) & BM_REACHABLE)) {
				if (k->defer)
					k->overflow = true;
				else
					push(k, ref.addr);
			}
		} else if (!(__atomic_load_n(ref.mk, __ATOMIC_RELAXED) &
			     BM_REACHABLE))
			__atomic_fetch_or(ref.mk, (uint8_t)BM_POSSIBLE,
					  __ATOMIC_RELAXED);
		return;
	}
	switch (k->phase) {
	case PH_REACH:
		if (mark == BM_REACHABLE)
			return;
		k->reached += mark == BM_UNREACHED;
		if (exact) {
			k->possible -= mark == BM_POSSIBLE;
			bm_set_mark(&ref, BM_REACHABLE);
			push(k, ref.addr);
		} else if (mark == BM_UNREACHED) {
			bm_set_mark(&ref, BM_POSSIBLE);
			k->possible++;
		}
		return;
	case PH_POSSIBLE:
		if (mark == BM_UNREACHED) {
			bm_set_mark(&ref, BM_POSSIBLE);
			k->reached++;
			push(k, ref.addr);
		}
		return;
	case PH_CLIQUE:
		if (mark == BM_UNREACHED && ref.addr != k->leader) {
			bm_set_mark(&ref, BM_INDIRECT);
			/* An earlier leader was scanned already: what it
			   reaches is indirect already.  */
			if (!bm_done(&ref))
				push(k, ref.addr);
		}
		return;
	}
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
static void scan_block(struct marker *k, const struct bm_ref *ref)
{
	if (k->pool)
		__atomic_fetch_or(ref->mk, (uint8_t)BM_DONE, __ATOMIC_RELAXED);
	else
		bm_set_done(ref);
	uint64_t end = bm_block_end(k->m, ref);
	if (k->pool && end - ref->addr > BIG_BLOCK &&
	    hand_out(k->pool, ref->addr, end))
		return;
	scan(k, ref->addr, end);
}

static bool pop_ref(struct marker *k, struct bm_ref *ref)
{
	bool exact;
	return bm_find_near(k->m, &k->hint, k->stack[--k->n], ref, &exact) &&
	       exact;
}

static void drain(struct marker *k)
{
	while (k->n) {
		struct bm_ref ref;
		if (pop_ref(k, &ref) && !bm_done(&ref))
			scan_block(k, &ref);
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
		scan_block(w->k, ref);
		drain(w->k);
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
		bm_each(k->m, sweep_one, &w);
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
			push(k, p->v[--p->n]);   /* a full stack: a sweep finds it */
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
			k->defer = false;
			job.lo = job.hi = 0;
		}
		while (k->n) {
			struct bm_ref ref;
			if (pop_ref(k, &ref))
				scan_block(k, &ref);
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
			push(&ks[i], k->stack[j]);
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
				push(&ks[0], ks[i].stack[--ks[i].n]);
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
		if (v - k->m->lo < k->m->hi - k->m->lo)
			visit(k, v);
	} else {
		k->r->root_ranges++;
		k->r->root_bytes += root->end - root->start;
		scan(k, root->start, root->end);
	}
	if (!k->collect)
		drain(k);
}

static bool lead_clique(void *cookie, const struct bm_ref *ref)
{
	struct marker *k = cookie;
	if (bm_mark_of(ref) != BM_UNREACHED || bm_done(ref))
		return true;
	k->leader = ref->addr;
	scan_block(k, ref);
	drain(k);
	if (k->overflow)
		sweep(k, BM_INDIRECT);
	return true;
}

/* ---- the sweep for phase 1, in threads ---------------------------------- */

/* Where a mark stack filled up (a block of millions of pointers: the
   bench's tables), the blocks left behind are marked reachable and not
   done; each thread sweeps a part of the map for them, in address
   order, scanning them and what they mark (marks atomic, as in phase 1
   in threads).  Going through the map in address order reads the heap
   almost sequentially: faster than phase 1's pointer order.  */
struct sweep_part {
	struct marker k;
	unsigned part, nparts;
};

static bool sweep_reached(void *cookie, const struct bm_ref *ref)
{
	struct marker *k = cookie;
	uint8_t mk = __atomic_load_n(ref->mk, __ATOMIC_RELAXED);
	if (!(mk & BM_REACHABLE) || (mk & BM_DONE))
		return true;
	scan_block(k, ref);
	while (k->n) {
		struct bm_ref next;
		if (pop_ref(k, &next))
			scan_block(k, &next);
	}
	return true;
}

static void *sweep_worker(void *arg)
{
	struct sweep_part *sp = arg;
	bm_each_part(sp->k.m, sp->part, sp->nparts, sweep_reached, &sp->k);
	return NULL;
}

/* sweep(k, BM_REACHABLE) in nthreads threads, after phase 1 in threads
   (marks settled); settles them again.  */
static void sweep_parallel(struct marker *k, unsigned nthreads)
{
	struct mark_pool none = { .threads = nthreads };  /* atomic marks */
	struct sweep_part sp[MARK_MAX_THREADS];
	do {
		k->overflow = false;
		for (unsigned i = 0; i < nthreads; i++) {
			sp[i] = (struct sweep_part){ .k = *k, .part = i,
						     .nparts = nthreads };
			sp[i].k.pool = &none;
			sp[i].k.stack = NULL;
			sp[i].k.n = sp[i].k.cap = 0;
			sp[i].k.unreadable = 0;
			sp[i].k.hint = NULL;
			sp[i].k.region = NULL;
		}
		hw_run_parts(sp, sizeof *sp, nthreads, sweep_worker);
		for (unsigned i = 0; i < nthreads; i++) {
			k->overflow |= sp[i].k.overflow;
			k->unreadable += sp[i].k.unreadable;
			free(sp[i].k.stack);
		}
		bm_settle_marks(&k->r->map, &k->reached, &k->possible);
	} while (k->overflow);
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
	if (k.collect) {
		mark_parallel(&k, nthreads);
		k.collect = false;
		bm_settle_marks(&r->map, &k.reached, &k.possible);
	}
	if (k.overflow && nthreads > 1)
		sweep_parallel(&k, nthreads);
	else if (k.overflow)
		sweep(&k, BM_REACHABLE);
	/* The sweeps visit every block of the map: only when some block
	   may need them.  */
	k.phase = PH_POSSIBLE;
	if (k.possible)
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
		     uint64_t slot, uint32_t nslots)
{
	return bm_add_slab(cookie, lo, hi, base, slot, nslots);
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
	struct bm_ref ref;
	if (!bm_at(&r->map, addr, &ref))
		return false;
	*mark = bm_mark_of(&ref);
	return true;
}
