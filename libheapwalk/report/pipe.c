/* pipe.c - a chunk walk in one thread, its report in another.
 *
 * Listing every chunk is two jobs of about the same size: the walk
 * (pointer chasing through the target) and the rendering (number
 * formatting).  With a second thread allowed, the walk runs there and
 * hands its chunks over in batches through a small ring, in walk order,
 * so the report is the same byte for byte as from a plain walk.  The
 * ring is bounded: a slow sink holds the walk back instead of letting
 * batches pile up.
 */
#include <pthread.h>
#include <stdlib.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "pipe.h"

#define PIPE_BATCH 2048       /* chunks per batch: its rows fit in a
				 fork's buffer (em_fork) */
#define PIPE_SLOTS 8          /* batches in flight */
#define PIPE_MAX_RENDERERS 16

struct pipe {
	struct hw_session *s;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct hw_chunk *slot[PIPE_SLOTS];
	size_t len[PIPE_SLOTS];
	uint64_t head, tail;  /* batches taken / published */
	size_t fill;          /* chunks in the batch being filled */
	bool have_slot;       /* the walk owns slot[tail % PIPE_SLOTS] */
	bool done, stop;
	pthread_t tid;        /* the walk's thread */
};

/* Publish the batch being filled.  */
static void publish(struct pipe *p)
{
	pthread_mutex_lock(&p->lock);
	p->len[p->tail % PIPE_SLOTS] = p->fill;
	p->tail++;
	p->have_slot = false;
	p->fill = 0;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
}

/* The walk's callback: copy the chunk into the current batch.  */
static bool take_chunk(void *cookie, const struct hw_chunk *c)
{
	struct pipe *p = cookie;
	if (!p->have_slot) {
		pthread_mutex_lock(&p->lock);
		while (p->tail - p->head == PIPE_SLOTS && !p->stop)
			pthread_cond_wait(&p->changed, &p->lock);
		bool stop = p->stop;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			return false;
		p->have_slot = true;
	}
	p->slot[p->tail % PIPE_SLOTS][p->fill++] = *c;
	if (p->fill == PIPE_BATCH)
		publish(p);
	return true;
}

static void *walker(void *arg)
{
	struct pipe *p = arg;
	hw_walk_blocks(p->s, take_chunk, p);
	if (p->have_slot && p->fill)
		publish(p);
	pthread_mutex_lock(&p->lock);
	p->done = true;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Make the ring and start the walk in a thread of its own.  False, with
   nothing left to free, when either cannot be: the caller then walks in
   its own thread.  */
static bool pipe_start(struct pipe *p)
{
	bool ok = true;
	for (size_t i = 0; i < PIPE_SLOTS && ok; i++)
		ok = (p->slot[i] = malloc(PIPE_BATCH * sizeof *p->slot[i]));
	if (ok) {
		pthread_mutex_init(&p->lock, NULL);
		pthread_cond_init(&p->changed, NULL);
		ok = pthread_create(&p->tid, NULL, walker, p) == 0;
		if (!ok) {
			pthread_cond_destroy(&p->changed);
			pthread_mutex_destroy(&p->lock);
		}
	}
	if (!ok)
		for (size_t i = 0; i < PIPE_SLOTS; i++)
			free(p->slot[i]);
	return ok;
}

/* After the last batch was taken (or the walk told to stop).  */
static void pipe_finish(struct pipe *p)
{
	pthread_join(p->tid, NULL);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	for (size_t i = 0; i < PIPE_SLOTS; i++)
		free(p->slot[i]);
}

void hw_walk_chunks_piped(struct hw_session *s, hw_chunk_fn *fn, void *cookie)
{
	struct pipe p = { .s = s };
	if (hw_threads(s) <= 1 || !pipe_start(&p)) {
		hw_walk_blocks(s, fn, cookie);
		return;
	}
	bool more = true;
	for (;;) {
		pthread_mutex_lock(&p.lock);
		while (p.head == p.tail && !p.done)
			pthread_cond_wait(&p.changed, &p.lock);
		bool empty = p.head == p.tail;
		pthread_mutex_unlock(&p.lock);
		if (empty)
			break;
		const struct hw_chunk *b = p.slot[p.head % PIPE_SLOTS];
		size_t n = p.len[p.head % PIPE_SLOTS];
		for (size_t i = 0; i < n && more; i++)
			more = fn(cookie, &b[i]);
		pthread_mutex_lock(&p.lock);
		p.head++;
		p.stop |= !more;
		pthread_cond_broadcast(&p.changed);
		pthread_mutex_unlock(&p.lock);
		if (!more)
			break;
	}
	pipe_finish(&p);
}

/* ---- rows rendered in several threads ----------------------------------- */

/* The batches go round the ring as before; each renderer claims the next
   batch not yet claimed, renders it on its fork, then waits for its turn
   (the batches before it drained) and drains the fork into the report.
   A slot is free again once its batch is out.  */
struct rows {
	struct pipe *p;
	struct hw_emitter *e;
	hw_row_fn *fn;
	const void *cookie;
	uint64_t claimed;     /* batches claimed by a renderer */
	uint64_t drained;     /* batches out (p->head follows it) */
};

struct renderer {
	struct rows *r;
	struct hw_emitter *fork;
	pthread_t tid;
	bool started;
};

static void *render(void *arg)
{
	struct renderer *me = arg;
	struct rows *r = me->r;
	struct pipe *p = r->p;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (r->claimed == p->tail && !p->done && !p->stop)
			pthread_cond_wait(&p->changed, &p->lock);
		if (r->claimed == p->tail || p->stop)
			break;
		uint64_t seq = r->claimed++;
		pthread_mutex_unlock(&p->lock);
		const struct hw_chunk *b = p->slot[seq % PIPE_SLOTS];
		size_t n = p->len[seq % PIPE_SLOTS];
		bool more = true;
		for (size_t i = 0; i < n && more; i++)
			more = r->fn((void *)r->cookie, me->fork, &b[i]);
		pthread_mutex_lock(&p->lock);
		while (r->drained != seq && !p->stop)
			pthread_cond_wait(&p->changed, &p->lock);
		if (p->stop)
			break;
		/* Our turn: the report is ours alone until drained moves
		   (a slow sink holds up no one but the next turn).  */
		pthread_mutex_unlock(&p->lock);
		em_fork_drain(r->e, me->fork);
		more &= !em_failed(r->e);
		pthread_mutex_lock(&p->lock);
		r->drained++;
		p->head = r->drained;
		p->stop |= !more;
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- rows walked and rendered in pieces --------------------------------- */

/* When the walker cuts its walk into pieces (hw_walk_pieces_begin), no
   thread is only a walker: each claims the next piece, walks it and
   renders its rows on its fork as they come, then waits for its turn
   (the pieces before it drained) and drains the fork into the report.
   Each thread holds one piece's rows at most.  */
struct pieces_run {
	struct hw_session *s;
	struct hw_emitter *e;
	hw_row_fn *fn;
	const void *cookie;
	size_t npieces;
	pthread_mutex_t lock;
	pthread_cond_t turn;
	size_t claimed, drained;
	bool stop;
};

struct piece_worker {
	struct pieces_run *r;
	struct hw_emitter *fork;
	bool caller;          /* the caller's thread: tells the progress */
};

static bool piece_row(void *cookie, const struct hw_chunk *c)
{
	struct piece_worker *w = cookie;
	return w->r->fn((void *)w->r->cookie, w->fork, c);
}

static void *piece_worker(void *arg)
{
	struct piece_worker *w = arg;
	struct pieces_run *r = w->r;
	pthread_mutex_lock(&r->lock);
	while (!r->stop && r->claimed < r->npieces) {
		size_t i = r->claimed++;
		pthread_mutex_unlock(&r->lock);
		bool more = hw_walk_piece(r->s, i, piece_row, w);
		pthread_mutex_lock(&r->lock);
		while (r->drained != i && !r->stop)
			pthread_cond_wait(&r->turn, &r->lock);
		if (r->stop)
			break;
		/* Our turn: the report is ours alone until drained moves.  */
		pthread_mutex_unlock(&r->lock);
		em_fork_drain(r->e, w->fork);
		more &= !em_failed(r->e);
		if (w->caller)
			hw_progress(r->s, "walking the heap", i + 1,
				    r->npieces);
		pthread_mutex_lock(&r->lock);
		r->drained++;
		r->stop |= !more;
		pthread_cond_broadcast(&r->turn);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* The pieces by n threads, the caller's among them (its forks made).  */
static void rows_by_pieces(struct hw_session *s, struct hw_emitter *e,
			   hw_row_fn *fn, const void *cookie, size_t npieces,
			   struct renderer *forks, unsigned n)
{
	struct pieces_run r = { .s = s, .e = e, .fn = fn, .cookie = cookie,
				.npieces = npieces };
	struct piece_worker ws[PIPE_MAX_RENDERERS] = { { 0 } };
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.turn, NULL);
	for (unsigned k = 0; k < n; k++) {
		ws[k].r = &r;
		ws[k].fork = forks[k].fork;
		ws[k].caller = k == 0;
	}
	/* (A worker whose thread could not be made runs after the caller's
	   has drained every piece: it finds none left.)  */
	hw_run_parts(ws, sizeof *ws, n, piece_worker);
	pthread_cond_destroy(&r.turn);
	pthread_mutex_destroy(&r.lock);
}

static bool plain_row(void *cookie, const struct hw_chunk *c)
{
	struct rows *r = cookie;
	return r->fn((void *)r->cookie, r->e, c);
}

void hw_walk_rows_piped(struct hw_session *s, struct hw_emitter *e,
			hw_row_fn *fn, const void *cookie)
{
	struct pipe p = { .s = s };
	struct rows r = { .p = &p, .e = e, .fn = fn, .cookie = cookie };
	struct renderer rs[PIPE_MAX_RENDERERS] = { { 0 } };
	unsigned n = hw_threads(s);
	if (n > PIPE_MAX_RENDERERS)
		n = PIPE_MAX_RENDERERS;
	bool ok = n > 1;
	for (unsigned k = 0; k < n && ok; k++) {
		rs[k].r = &r;
		ok = (rs[k].fork = em_fork(e));
	}
	size_t npieces = ok ? hw_walk_pieces_begin(s, n) : 0;
	if (npieces) {
		rows_by_pieces(s, e, fn, cookie, npieces, rs, n);
		for (unsigned k = 0; k < n; k++)
			em_fork_close(rs[k].fork);
		return;
	}
	if (!ok || !pipe_start(&p)) {
		for (unsigned k = 0; k < n; k++)
			em_fork_close(rs[k].fork);
		hw_walk_blocks(s, plain_row, &r);
		return;
	}
	/* The walker is one thread; the renderers share what is left, the
	   caller's thread among them.  */
	for (unsigned k = 1; k < n; k++)
		rs[k].started = pthread_create(&rs[k].tid, NULL, render,
					       &rs[k]) == 0;
	render(&rs[0]);
	for (unsigned k = 1; k < n; k++)
		if (rs[k].started)
			pthread_join(rs[k].tid, NULL);
	pipe_finish(&p);
	for (unsigned k = 0; k < n; k++)
		em_fork_close(rs[k].fork);
}
