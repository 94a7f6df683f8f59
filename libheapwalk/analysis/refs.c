/* refs.c - referrers of a block, and the shortest chain from a root
 * (refs.h).
 *
 * Both are on-demand queries, so neither keeps anything between calls:
 * `refs` is one linear pass over the roots and the blocks in use; `why`
 * a breadth-first search that keeps only the visited blocks' addresses
 * and stops as soon as it meets the target.
 */
#include <stdlib.h>
#include <string.h>

#include "../target/target.h"
#include "refs.h"
#include "scanwords.h"

/* Whether [start, end) overlaps the allocator's own memory: a block
   there is the allocator's, and `leaks` never scans it.  */
static bool is_internal(const struct hw_reach *r, uint64_t start,
			uint64_t end)
{
	return hw_ranges_overlap(&r->internal, start, end);
}

bool hw_refs_internal(const struct hw_reach *r, uint64_t start, uint64_t end)
{
	return is_internal(r, start, end);
}

/* ---- refs ----------------------------------------------------------------- */

struct refs_walk {
	struct hw_session *s;
	const struct hw_reach *r;
	uint64_t start, end;
	hw_ref_fn *fn;
	void *cookie;
	bool stop;
	struct hw_ref cur;        /* the place being scanned */
	const struct hw_region *region;  /* of the last block scanned */
};

static bool ref_word(void *cookie, uint64_t slot, uint64_t v)
{
	struct refs_walk *w = cookie;
	w->cur.slot = slot;
	w->cur.value = v;
	if (!w->fn(w->cookie, &w->cur))
		w->stop = true;
	return !w->stop;
}

static void ref_root(void *cookie, const struct hw_root *root)
{
	struct refs_walk *w = cookie;
	if (w->stop)
		return;
	switch (root->kind) {
	case HW_ROOT_REGISTER:
	case HW_ROOT_DTV: {
		uint64_t v = root->kind == HW_ROOT_DTV
			     ? root->value : root->value & w->r->ptr_mask;
		if (v < w->start || v >= w->end)
			return;
		w->cur = (struct hw_ref){
			.kind = root->kind == HW_ROOT_DTV ? HW_REF_DTV
							  : HW_REF_REGISTER,
			.thread = root->thread, .reg = root->reg };
		ref_word(w, 0, v);
		return;
	}
	case HW_ROOT_STACK:
	case HW_ROOT_MEMORY:
		w->cur = (struct hw_ref){
			.kind = root->kind == HW_ROOT_STACK ? HW_REF_STACK
							    : HW_REF_MEMORY,
			.thread = root->thread, .reg = -1 };
		hw_scan_words(w->s->target, NULL, root->start, root->end,
			      w->r->ptr_mask, w->start, w->end, ref_word, w,
			      NULL);
		return;
	}
}

static bool ref_block(void *cookie, const struct bm_ref *b)
{
	struct refs_walk *w = cookie;
	uint64_t end = bm_block_end(&w->r->map, b);
	if (is_internal(w->r, b->addr, end))
		return true;
	w->cur = (struct hw_ref){ .kind = HW_REF_BLOCK, .thread = -1,
				  .reg = -1, .holder = b->addr,
				  .holder_end = end };
	hw_scan_words(w->s->target, &w->region, b->addr, end,
		      w->r->ptr_mask, w->start, w->end, ref_word, w, NULL);
	return !w->stop;
}

void hw_refs_each(struct hw_session *s, const struct hw_reach *r,
		  uint64_t start, uint64_t end, hw_ref_fn *fn, void *cookie)
{
	struct refs_walk w = { .s = s, .r = r, .start = start, .end = end,
			       .fn = fn, .cookie = cookie };
	hw_roots_each(s, &r->owned, ref_root, &w);
	if (!w.stop)
		bm_each(&r->map, ref_block, &w);
}

/* ---- why: breadth first from the roots ------------------------------------ */

/* The search keeps no record per block but its address in visit order:
 * the queue is also the list of every visited block, level after level
 * (level 0: the blocks roots point to), and a block is marked visited
 * by clearing its `done` bit in the leaks map, which the reach leaves
 * set on every block (the bits are set again before the query
 * returns).  8 bytes per visited block, so even a heap of tens of
 * millions of blocks can be searched whole.  The chain is then found
 * backwards: the target's level L is known, so one block of level L - 1
 * points to it; scanning that level's blocks finds one, and so on down
 * to a root.  That costs at most one more scan of the visited blocks.  */

struct bfs {
	struct hw_session *s;
	const struct hw_reach *r;
	struct hw_blockmap *map;  /* the reach's, for its done bits */
	uint64_t target;
	bool interior;            /* interior pointers allowed */
	bool found, oom;
	uint64_t *queue;          /* every visited block, in visit order */
	size_t qn, qcap;
	size_t *levels;           /* levels[L]: the first of level L */
	size_t nlevels, lcap;
	const struct bm_run *hint;
	const struct hw_region *region;  /* of the last block scanned */
};

/* Room for one more element in a growing array.  */
static bool room(void **v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 1024;
	void *p = realloc(*v, c * size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

static bool bfs_word(void *cookie, uint64_t slot, uint64_t v)
{
	(void)slot;
	struct bfs *b = cookie;
	struct bm_ref ref;
	bool exact;
	if (!bm_find_near(b->map, &b->hint, v, &ref, &exact) ||
	    (!exact && !b->interior) || !bm_done(&ref))
		return true;
	if (!room((void **)&b->queue, b->qn, &b->qcap, sizeof *b->queue)) {
		b->oom = true;
		return false;
	}
	bm_clear_done(&ref);              /* visited */
	b->queue[b->qn++] = ref.addr;
	if (ref.addr == b->target) {
		b->found = true;
		return false;
	}
	return true;
}

static void bfs_root(void *cookie, const struct hw_root *root)
{
	struct bfs *b = cookie;
	if (b->found || b->oom)
		return;
	const struct hw_reach *r = b->r;
	switch (root->kind) {
	case HW_ROOT_REGISTER:
	case HW_ROOT_DTV: {
		uint64_t v = root->kind == HW_ROOT_DTV
			     ? root->value : root->value & r->ptr_mask;
		if (v - r->map.lo < r->map.hi - r->map.lo)
			bfs_word(b, 0, v);
		return;
	}
	case HW_ROOT_STACK:
	case HW_ROOT_MEMORY:
		hw_scan_words(b->s->target, NULL, root->start, root->end,
			      r->ptr_mask, r->map.lo, r->map.hi, bfs_word, b,
			      NULL);
		return;
	}
}

static bool new_level(struct bfs *b)
{
	if (!room((void **)&b->levels, b->nlevels, &b->lcap,
		  sizeof *b->levels)) {
		b->oom = true;
		return false;
	}
	b->levels[b->nlevels++] = b->qn;
	return true;
}

/* The extent of the block at addr, and whether `leaks` scans it.  */
static bool scanned_block(const struct bfs *b, uint64_t addr, uint64_t *end)
{
	struct bm_ref ref;
	if (!bm_at(b->map, addr, &ref))
		return false;
	*end = bm_block_end(b->map, &ref);
	/* The allocator's own blocks are not scanned, as in `leaks`.  */
	return !is_internal(b->r, addr, *end);
}

static void bfs_run(struct bfs *b)
{
	const struct hw_reach *r = b->r;
	if (!new_level(b))
		return;
	hw_roots_each(b->s, &r->owned, bfs_root, b);
	size_t lo = 0;
	while (!b->found && !b->oom && lo < b->qn) {
		/* Level L is [lo, hi); what its blocks point to, level L+1.  */
		size_t hi = b->qn;
		if (!new_level(b))
			return;
		for (size_t i = lo; i < hi && !b->found && !b->oom; i++) {
			uint64_t end;
			if (scanned_block(b, b->queue[i], &end))
				hw_scan_words(b->s->target, &b->region,
					      b->queue[i], end, r->ptr_mask,
					      r->map.lo, r->map.hi, bfs_word,
					      b, NULL);
		}
		lo = hi;
	}
}

/* Every visited block is unvisited again (its done bit set).  */
static void bfs_reset(struct bfs *b)
{
	for (size_t i = 0; i < b->qn; i++) {
		struct bm_ref ref;
		if (bm_at(b->map, b->queue[i], &ref))
			bm_set_done(&ref);
	}
	free(b->queue);
	free(b->levels);
	b->queue = NULL;
	b->levels = NULL;
	b->qn = b->qcap = b->nlevels = b->lcap = 0;
	b->found = b->oom = false;
	b->hint = NULL;
}

static bool set_done(void *cookie, const struct bm_ref *ref)
{
	(void)cookie;
	bm_set_done(ref);
	return true;
}

/* ---- the chain, backwards ------------------------------------------------ */

struct back {
	uint64_t to, to_end;      /* the block a step must point into */
	bool interior;            /* an interior pointer will do */
	const struct hw_blockmap *map;
	bool hit;
	int rank;                 /* of ref, the root found (root_rank) */
	struct hw_ref ref;        /* what holds it */
};

/* Which root a chain should start at when several hold its first block:
   a global (named in the report) before a thread's TLS, a stack word
   (often a copy of the global in a frame) and a register.  */
static int root_rank(const struct hw_ref *ref)
{
	switch (ref->kind) {
	case HW_REF_MEMORY: return 0;
	case HW_REF_DTV: return 1;
	case HW_REF_STACK: return 2;
	default: return 3;
	}
}

/* Does v hold k's block as a start pointer does?  Its start, or an
   address the map takes as one (a slab whose slots any pointer into
   holds: mimalloc's aligned blocks).  */
static bool holds(const struct back *k, uint64_t v)
{
	if (v == k->to || k->interior)
		return true;
	struct bm_ref ref;
	bool exact;
	return v > k->to && v < k->to_end &&
	       bm_find(k->map, v, &ref, &exact) && exact;
}

static bool back_word(void *cookie, uint64_t slot, uint64_t v)
{
	struct back *k = cookie;
	if (!holds(k, v))
		return true;
	k->ref.slot = slot;
	k->ref.value = v;
	k->hit = true;
	return false;
}

static bool back_root(void *cookie, const struct hw_ref *ref)
{
	struct back *k = cookie;
	if (ref->kind == HW_REF_BLOCK)
		return false;     /* the roots are through */
	if (!holds(k, ref->value))
		return true;
	int rank = root_rank(ref);
	if (!k->hit || rank < k->rank) {
		k->ref = *ref;
		k->rank = rank;
		k->hit = true;
	}
	return rank > 0;          /* a global is the best there is */
}

static bool chain(struct bfs *b, struct hw_why_step **steps, size_t *n)
{
	const struct hw_reach *r = b->r;
	size_t at = b->qn - 1, level = b->nlevels;
	while (level > 0 && b->levels[level - 1] > at)
		level--;
	/* The target is in level `level - 1`: that many steps and a root's.  */
	size_t len = level;
	struct hw_why_step *out = calloc(len ? len : 1, sizeof *out);
	if (!out || !len) {
		free(out);
		return false;
	}
	uint64_t to = b->target;
	for (size_t l = len; l-- > 0;) {
		struct bm_ref tref;
		uint64_t to_end = bm_at(b->map, to, &tref)
				  ? bm_block_end(b->map, &tref) : to + 1;
		struct back k = { .to = to, .to_end = to_end,
				  .interior = b->interior, .map = b->map };
		if (l == 0) {
			hw_refs_each(b->s, r, to, to_end, back_root, &k);
		} else {
			for (size_t i = b->levels[l - 1];
			     i < b->levels[l] && !k.hit; i++) {
				uint64_t end;
				if (!scanned_block(b, b->queue[i], &end))
					continue;
				k.ref = (struct hw_ref){
					.kind = HW_REF_BLOCK, .thread = -1,
					.reg = -1, .holder = b->queue[i],
					.holder_end = end };
				hw_scan_words(b->s->target, &b->region,
					      b->queue[i], end, r->ptr_mask,
					      to, to_end, back_word, &k, NULL);
			}
		}
		if (!k.hit) {
			/* Cannot be: the search went this way.  */
			free(out);
			return false;
		}
		out[l] = (struct hw_why_step){ .ref = k.ref, .to = to,
					       .to_end = to_end,
					       .interior = b->interior &&
							   k.ref.value != to };
		to = k.ref.holder;
	}
	*steps = out;
	*n = len;
	return true;
}

enum hw_status hw_why_chain(struct hw_session *s, const struct hw_reach *r,
			    uint64_t target, struct hw_why_step **steps,
			    size_t *n, bool *interior_pass)
{
	*steps = NULL;
	*n = 0;
	*interior_pass = false;
	struct hw_reach *own = hw_slot_get(s, HW_SLOT_REACH);
	if (own != r)
		return hw_error(s, HW_BAD_TARGET, "why: not the session's reach");
	struct bfs b = { .s = s, .r = r, .map = &own->map,
			 .target = target };
	/* Every block starts unvisited (the reach leaves every done bit
	   set; a bit it did not would hide a block from the search).  */
	bm_each(b.map, set_done, NULL);
	enum bm_mark mark = BM_UNREACHED;
	hw_reach_mark(r, target, &mark);
	/* A possible block is reached through an interior pointer only: a
	   pass over start pointers would visit every reachable block for
	   nothing.  */
	if (mark != BM_POSSIBLE)
		bfs_run(&b);
	if (!b.found && !b.oom) {
		bfs_reset(&b);
		b.interior = true;
		*interior_pass = true;
		bfs_run(&b);
	}
	enum hw_status st = HW_OK;
	if (b.oom)
		st = hw_error(s, HW_BAD_TARGET, "why: out of memory after "
			      "visiting %zu blocks", b.qn);
	else if (b.found && !chain(&b, steps, n))
		st = hw_error(s, HW_BAD_TARGET, "why: the chain to 0x%llx "
			      "could not be retraced (out of memory?)",
			      (unsigned long long)target);
	bfs_reset(&b);
	return st;
}
