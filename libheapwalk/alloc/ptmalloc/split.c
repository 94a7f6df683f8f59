/* split.c - one big heap walked by several threads at once.
 *
 * The walk in threads gives each thread whole heaps.  A program with one
 * arena (most programs that are not servers: python3, sqlite3, any tool
 * run from a shell) has one heap holding nearly everything, and its
 * first walk went in one thread while the others sat idle: on a 1 GiB
 * python3 heap, all of `summary` in one thread.
 *
 * A heap is a chain of sizes: where its chunks start is known only by
 * following the chain from its start.  But following it is cheap next to
 * what the walk does with each chunk (classify it, hash its links, guess
 * its fastbin, call the command's fn): one header read per chunk, front
 * to back.  So one thread follows the chain alone and publishes, every
 * PM_PIECE_BYTES, the first chunk that starts there (a bound); the other
 * threads walk the pieces between published bounds, each with the full
 * walk (walk_heap_range), while the follower runs ahead.  When it is
 * done it walks pieces too.
 *
 * The follower goes only where the walk would go without a second
 * thought: a chunk whose size fits the heap, followed by one whose size
 * fits too, neither the top chunk nor a fencepost.  At anything else (the
 * top, the heap's end, a damaged header, pages missing from the core) it
 * stops, and the rest of the heap from its last bound is one piece, the
 * tail, walked as a whole heap's end is walked: findings, resync and all.
 * Every bound is therefore a chunk the walk from the heap's start meets,
 * and a walk from one bound to the next meets exactly the chunks that
 * walk met between them.
 */
#include <stdlib.h>

#include "ptmalloc.h"

/* A heap smaller than this is walked whole by one thread: the split's
   hand-over costs more than it saves.  (A build with it 0 splits every
   heap, whatever its share: the stress test of the pieces' seams.)  */
#ifndef PM_SPLIT_MIN_BYTES
#define PM_SPLIT_MIN_BYTES (8u << 20)
#endif
/* Bounds are published this many at a time (4 MiB of heap): few enough
   lock rounds, soon enough for the walkers to start.  */
#define PUBLISH_EVERY 16

bool pm_split_begin(struct pm_split *sp, struct pm_state *p, size_t unit,
		    unsigned nparts, uint64_t total_bytes, bool mark)
{
	*sp = (struct pm_split){ .unit = unit };
	if (nparts < 2 || unit >= p->nheaps)
		return false;
	struct pm_heap *h = &p->heaps[unit];
	uint64_t bytes = h->end - h->start;
	/* Split only what would be the walk's critical path: a heap bigger
	   than a thread's share of everything.  */
	uint64_t min_bytes = PM_SPLIT_MIN_BYTES;
	if (min_bytes && (bytes < min_bytes || bytes * nparts <= total_bytes))
		return false;
	const uint8_t *base = NULL;
	if (hw_readable_run(p->t, h->start, &base) < bytes || !base)
		return false;   /* the follower reads the heap in place */
	size_t cap = (size_t)(bytes / PM_PIECE_BYTES) + 2;
	sp->bounds = malloc(cap * sizeof *sp->bounds);
	sp->shadow = calloc(nparts, sizeof *sp->shadow);
	if (!sp->bounds || !sp->shadow) {
		free(sp->bounds);
		free(sp->shadow);
		*sp = (struct pm_split){ .unit = unit };
		return false;
	}
	/* Each part walks its pieces as a copy of the heap whose sums are
	   its own (tags and marks are shared: pieces set different bytes).  */
	for (unsigned k = 0; k < nparts; k++) {
		sp->shadow[k] = *h;
		memset(&sp->shadow[k].sums, 0, sizeof sp->shadow[k].sums);
	}
	sp->p = p;
	sp->h = h;
	sp->base = base;
	sp->nparts = nparts;
	sp->mark = mark && h->marks;
	sp->bounds[0] = h->start;
	sp->published = 1;
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->more, NULL);
	sp->active = true;
	return true;
}

static void publish(struct pm_split *sp, size_t n, bool finished)
{
	pthread_mutex_lock(&sp->lock);
	sp->published = n;
	sp->finished = finished;
	pthread_cond_broadcast(&sp->more);
	pthread_mutex_unlock(&sp->lock);
}

static uint64_t header_at(const struct pm_split *sp, uint64_t c)
{
	uint64_t field;
	memcpy(&field, sp->base + (c - sp->h->start) + 8, sizeof field);
	return field;
}

/* Does a chunk of size sz at c fit as the walk wants it, neither a
   fencepost nor past the end?  (walk.c's test, less the fenceposts,
   where the follower stops.)  */
static bool plain_size(uint64_t c, uint64_t sz, uint64_t end)
{
	return sz >= PM_MINSIZE && !(sz & 15) && sz <= end - c;
}

void pm_split_follow(struct pm_split *sp, _Atomic bool *stop)
{
	const struct pm_heap *h = sp->h;
	uint64_t top = sp->p->arenas[h->arena].top;
	uint64_t end = h->end, c = h->start;
	uint64_t next_bound = h->start + PM_PIECE_BYTES;
	uint64_t prefetched = c;
	size_t n = 1, told = 1;
	if (sp->mark)
		h->marks[0] = c;
	/* Chunk c, of size sz, is one the walk goes on from to c + sz.  */
	uint64_t sz = header_at(sp, c) & ~(uint64_t)PM_SIZE_BITS;
	if (c == top || !plain_size(c, sz, end))
		goto done;
	for (;;) {
		uint64_t next = c + sz;
		/* Each header's address comes from the one before, so the
		   hardware cannot run ahead: a few lines ahead, as the walk
		   itself does (walk.c).  */
		if (prefetched < next)
			prefetched = next;
		if (prefetched < next + 1024 && prefetched + 256 <= end) {
			const uint8_t *q = sp->base + (prefetched - h->start);
			__builtin_prefetch(q);
			__builtin_prefetch(q + 64);
			__builtin_prefetch(q + 128);
			__builtin_prefetch(q + 192);
			prefetched += 256;
		}
		if (next + 16 > end)
			break;    /* c is the last chunk: the tail's */
		uint64_t nsz = header_at(sp, next) & ~(uint64_t)PM_SIZE_BITS;
		if (next != top && !plain_size(next, nsz, end))
			break;    /* the walk would look again at c */
		c = next;
		sz = nsz;
		if (c >= next_bound) {
			uint64_t k = (c - h->start) / PM_PIECE_BYTES;
			if (sp->mark)
				h->marks[k] = c;
			sp->bounds[n++] = c;
			next_bound = h->start + (k + 1) * PM_PIECE_BYTES;
			if (n - told >= PUBLISH_EVERY) {
				if (atomic_load_explicit(stop,
							 memory_order_relaxed))
					break;
				publish(sp, n, false);
				told = n;
			}
		}
		if (c == top)
			break;
	}
done:
	publish(sp, n, true);
}

bool pm_split_take(struct pm_split *sp, _Atomic bool *stop, uint64_t *from,
		   uint64_t *until, bool *tail)
{
	pthread_mutex_lock(&sp->lock);
	/* Piece i runs from bound i to bound i+1, or (the tail, once the
	   follower is done) from the last bound to the heap's end.  */
	while (!sp->finished && sp->next + 1 >= sp->published &&
	       !atomic_load_explicit(stop, memory_order_relaxed))
		pthread_cond_wait(&sp->more, &sp->lock);
	bool got = sp->next < sp->published &&
		   (sp->finished || sp->next + 1 < sp->published) &&
		   !atomic_load_explicit(stop, memory_order_relaxed);
	if (got) {
		size_t i = sp->next++;
		*from = sp->bounds[i];
		*tail = i + 1 == sp->published;
		*until = *tail ? sp->h->end : sp->bounds[i + 1];
	}
	pthread_mutex_unlock(&sp->lock);
	return got;
}

void pm_split_wake(struct pm_split *sp)
{
	if (!sp->active)
		return;
	pthread_mutex_lock(&sp->lock);
	pthread_cond_broadcast(&sp->more);
	pthread_mutex_unlock(&sp->lock);
}

void pm_split_end(struct pm_split *sp)
{
	if (!sp->active)
		return;
	for (unsigned k = 0; k < sp->nparts; k++)
		pm_sums_add(&sp->h->sums, &sp->shadow[k].sums);
	atomic_fetch_add(&sp->p->s->work.heaps_cut, 1);
	atomic_fetch_add(&sp->p->s->work.cut_pieces, sp->published);
	pthread_mutex_destroy(&sp->lock);
	pthread_cond_destroy(&sp->more);
	free(sp->bounds);
	free(sp->shadow);
	sp->active = false;
}
