/* totals.c - what one walk of every block counts, for the reports that
 * add up (summary, sizes, diff): blocks and bytes in use and free, per
 * exact size, per arena, top, overhead, the largest free block and, for
 * summary --leaks, per reachability mark.
 *
 * Most blocks are small: their sizes are counted in a direct array, the
 * rest in an open-addressing table, so a walk of ten million chunks
 * makes no allocation per chunk.  A walker that can split its work
 * counts in threads, each into its own tables, merged at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "loss.h"
#include "totals.h"

/* Usable sizes below this are counted in a direct array (most chunks),
   the rest in an open-addressing table.  */
#define SMALL_SIZES 8192

/* The class of `size` in the open-addressing table, made if new.  */
static struct hw_size_class *hashed_slot(struct hw_size_table *t,
					 uint64_t size)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct hw_size_class *s = calloc(cap, sizeof *s);
		if (!s) {
			t->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slots[i].size)
				continue;
			size_t j = (t->slots[i].size * 0x9e3779b97f4a7c15ull) >> 40 & (cap - 1);
			while (s[j].size)
				j = (j + 1) & (cap - 1);
			s[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = s;
		t->cap = cap;
	}
	/* size 0 marks an empty slot; a 0-byte class is stored as ~0.  */
	uint64_t key = size ? size : ~(uint64_t)0;
	size_t j = (key * 0x9e3779b97f4a7c15ull) >> 40 & (t->cap - 1);
	while (t->slots[j].size && t->slots[j].size != key)
		j = (j + 1) & (t->cap - 1);
	if (!t->slots[j].size) {
		t->slots[j].size = key;
		t->n++;
	}
	return &t->slots[j];
}

static struct hw_size_class *size_slot(struct hw_size_table *t,
				       uint64_t size)
{
	if (size < SMALL_SIZES && t->small)
		return &t->small[size];
	return hashed_slot(t, size);
}

static void class_add(struct hw_size_class *a, const struct hw_size_class *b)
{
	a->used += b->used;
	a->used_bytes += b->used_bytes;
	a->free += b->free;
	a->free_bytes += b->free_bytes;
	a->cached += b->cached;
	a->cached_bytes += b->cached_bytes;
}



/* Arena indexes past this are a walker's bug, not arenas: counted in
   the totals and the classes, not per arena.  */
#define MAX_ARENA_SLOTS 65536

/* Room for slot i (< MAX_ARENA_SLOTS); false when out of memory.  */
static bool arenas_room(struct hw_totals *t, uint64_t i)
{
	if (i < t->narenas)
		return true;
	size_t n = t->narenas ? 2 * t->narenas : 8;
	while (n <= i)
		n *= 2;
	struct hw_arena_count *a = realloc(t->arenas, n * sizeof *a);
	if (!a) {
		t->sizes.oom = true;
		return false;
	}
	memset(a + t->narenas, 0, (n - t->narenas) * sizeof *a);
	t->arenas = a;
	t->narenas = n;
	return true;
}

/* The counts of arena `arena` (slot arena + 1), made room for; NULL
   past MAX_ARENA_SLOTS or out of memory.  */
static struct hw_arena_count *arena_slot(struct hw_totals *t, int32_t arena)
{
	uint64_t i = (uint64_t)((int64_t)arena + 1);
	/* (Once per block: the slot is there but for the first of an
	   arena.)  */
	if (__builtin_expect(i < t->narenas, 1))
		return &t->arenas[i];
	if (i >= MAX_ARENA_SLOTS || !arenas_room(t, i))
		return NULL;
	return &t->arenas[i];
}

/* Count block c in its state (used or free) into t, or (dir -1) take
   it out again: the counters wrap, so a thread's table may go below zero
   until the tables are merged.  */
static inline void count_state(struct hw_totals *t, const struct hw_chunk *c,
			       struct hw_size_class *sc, uint64_t dir)
{
	uint64_t bytes = c->size * dir;
	struct hw_arena_count *a = arena_slot(t, c->arena);
	if (c->used) {
		t->used += dir;
		t->used_bytes += bytes;
		enum bm_mark mark;
		if (t->reach && hw_reach_mark(t->reach, c->addr, &mark)) {
			unsigned k = hw_loss_kind(mark, c);
			t->marked[k] += dir;
			t->marked_bytes[k] += bytes;
		}
		if (sc) {
			sc->used += dir;
			sc->used_bytes += bytes;
		}
		if (a) {
			a->used += dir;
			a->used_bytes += bytes;
		}
		return;
	}
	t->free += dir;
	t->free_bytes += bytes;
	const struct hw_place *p = hw_place(c->where);
	if (p->reserve == HW_RESERVE_TOP)
		t->top_bytes += bytes;
	/* Taking a free block out cannot lower the largest (sizes are not
	   kept per block): the only ones taken out are wrong fastbin
	   guesses, at most 176 bytes, below any top or binned chunk of a
	   heap that has one.  */
	if (dir == 1 && c->size > t->largest_free)
		t->largest_free = c->size;
	if (sc) {
		sc->free += dir;
		sc->free_bytes += bytes;
		if (p->flags & HW_PLACE_CACHED) {
			sc->cached += dir;
			sc->cached_bytes += bytes;
		}
	}
	if (a) {
		a->free += dir;
		a->free_bytes += bytes;
	}
}

static bool add_total(void *cookie, const struct hw_chunk *c)
{
	struct hw_totals *t = cookie;
	hw_maps_acc_chunk(&t->maps, c);
	/* Unused pages (jemalloc's unused extents, tcmalloc's free
	   page-heap spans) are page reserves, not free blocks (as in frag);
	   the allocator's own summary lines show them.  */
	if (hw_place_unused_pages(c->where))
		return true;
	count_state(t, c, size_slot(&t->sizes, c->size), 1);
	t->overhead += c->chunk_size - c->size;
	return !t->sizes.oom;
}

/* Block c was given in the other state (ptmalloc's guessed fastbin
   entries): move it.  Its memory and overhead were counted then.  */
static bool restate_total(void *cookie, const struct hw_chunk *c)
{
	struct hw_totals *t = cookie;
	struct hw_chunk was = *c;
	was.used = !c->used;
	was.where = c->used ? HW_WHERE_FASTBIN : HW_WHERE_HEAP;
	struct hw_size_class *sc = size_slot(&t->sizes, c->size);
	count_state(t, &was, sc, (uint64_t)-1);
	count_state(t, c, sc, 1);
	return !t->sizes.oom;
}

static int class_cmp(const void *a, const void *b)
{
	const struct hw_size_class *x = a, *y = b;
	uint64_t sx = x->size == ~(uint64_t)0 ? 0 : x->size;
	uint64_t sy = y->size == ~(uint64_t)0 ? 0 : y->size;
	return sx < sy ? -1 : sx > sy;
}

/* At most this many walk threads for the totals (each has its own
   tables, merged at the end).  */
#define GATHER_MAX_THREADS 16
/* Add u's counts into t (both still in their walk form).  */
static void merge_totals(struct hw_totals *t, struct hw_totals *u)
{
	t->used += u->used;
	t->used_bytes += u->used_bytes;
	t->free += u->free;
	t->free_bytes += u->free_bytes;
	t->overhead += u->overhead;
	t->top_bytes += u->top_bytes;
	for (int k = 0; k < 5; k++) {
		t->marked[k] += u->marked[k];
		t->marked_bytes[k] += u->marked_bytes[k];
	}
	if (u->largest_free > t->largest_free)
		t->largest_free = u->largest_free;
	t->sizes.oom |= u->sizes.oom;
	for (size_t i = 0; i < SMALL_SIZES && t->sizes.small && u->sizes.small; i++)
		class_add(&t->sizes.small[i], &u->sizes.small[i]);
	for (size_t i = 0; i < u->sizes.cap && !t->sizes.oom; i++) {
		const struct hw_size_class *b = &u->sizes.slots[i];
		if (!b->size)
			continue;
		struct hw_size_class *a = size_slot(&t->sizes,
				b->size == ~(uint64_t)0 ? 0 : b->size);
		if (!a)
			break;
		class_add(a, b);
	}
	free(u->sizes.small);
	free(u->sizes.slots);
	hw_maps_acc_take(&t->maps, &u->maps);
	for (size_t i = 0; i < u->narenas; i++) {
		const struct hw_arena_count *b = &u->arenas[i];
		if (!b->used && !b->free)
			continue;
		if (!arenas_room(t, i))
			break;
		struct hw_arena_count *a = &t->arenas[i];
		a->used += b->used;
		a->used_bytes += b->used_bytes;
		a->free += b->free;
		a->free_bytes += b->free_bytes;
	}
	free(u->arenas);
}

enum hw_status hw_totals_gather(struct hw_session *s, struct hw_totals *t,
			       const struct hw_reach *reach)
{
	/* The session's policy: one thread inside gdb, the cores otherwise;
	   only a walker that can split its work uses more than one.  */
	unsigned nthreads = s->alloc->chunks_parallel ? hw_threads(s) : 1;
	/* (One thread too takes chunks_parallel: it may spare list walks
	   that chunks needs for its blocks' order.)  */
	if (nthreads > GATHER_MAX_THREADS)
		nthreads = GATHER_MAX_THREADS;
	struct hw_totals extra[GATHER_MAX_THREADS - 1];
	void *cookies[GATHER_MAX_THREADS] = { t };
	memset(t, 0, sizeof *t);
	memset(extra, 0, sizeof extra);
	t->reach = reach;
	for (unsigned k = 0; k + 1 < GATHER_MAX_THREADS; k++)
		extra[k].reach = reach;
	t->sizes.small = calloc(SMALL_SIZES, sizeof *t->sizes.small);
	bool oom = !t->sizes.small;
	for (unsigned k = 1; k < nthreads; k++) {
		extra[k - 1].sizes.small = calloc(SMALL_SIZES,
						  sizeof *t->sizes.small);
		oom |= !extra[k - 1].sizes.small;
		cookies[k] = &extra[k - 1];
	}
	if (oom)
		t->sizes.oom = true;
	else if (s->alloc->chunks_parallel)
		hw_walk_blocks_parallel(s, nthreads, add_total,
					  cookies, restate_total);
	else
		hw_walk_blocks(s, add_total, t);
	for (unsigned k = 1; k < nthreads; k++)
		merge_totals(t, &extra[k - 1]);
	/* Move the small classes that occurred into the table.  */
	for (size_t i = 0; i < SMALL_SIZES && t->sizes.small && !t->sizes.oom; i++) {
		struct hw_size_class *sc = &t->sizes.small[i];
		if (!sc->used && !sc->free)
			continue;
		struct hw_size_class *d = hashed_slot(&t->sizes, i);
		if (d)
			class_add(d, sc);
	}
	free(t->sizes.small);
	t->sizes.small = NULL;
	if (t->sizes.oom) {
		free(t->sizes.slots);
		hw_maps_acc_free(&t->maps);
		free(t->arenas);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < t->sizes.cap; i++)
		if (t->sizes.slots[i].size) {
			t->sizes.slots[n] = t->sizes.slots[i];
			if (t->sizes.slots[n].size == ~(uint64_t)0)
				t->sizes.slots[n].size = 0;
			n++;
		}
	if (t->sizes.slots)
		qsort(t->sizes.slots, n, sizeof *t->sizes.slots, class_cmp);
	t->sizes.n = n;
	return HW_OK;
}

struct hw_size_row *hw_size_rows(struct hw_session *s,
				 const struct hw_size_table *t, bool exact,
				 size_t *nrows)
{
	struct hw_size_row *rows = calloc(t->n ? t->n : 1, sizeof *rows);
	if (!rows)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct hw_size_class *sc = &t->slots[i];
		uint64_t min = sc->size, size = sc->size;
		if (!exact && s->alloc->size_class)
			size = s->alloc->size_class(s->alloc_state, sc->size,
						    &min);
		if (n > 0 && rows[n - 1].c.size == size) {
			class_add(&rows[n - 1].c, sc);
			continue;
		}
		rows[n].min = min;
		rows[n].c = *sc;
		rows[n].c.size = size;
		n++;
	}
	*nrows = n;
	return rows;
}

uint64_t hw_arena_slot_addr(struct hw_session *s, size_t i)
{
	if (!i || !s->alloc->arena_addr)
		return 0;
	return s->alloc->arena_addr(s->alloc_state, (int32_t)(i - 1));
}

static const struct em_section S_LEAK_KIND[] = {
	{ .key = "definite", .only = EM_JSON_ONLY },
	{ .key = "indirect", .only = EM_JSON_ONLY },
	{ .key = "possible", .only = EM_JSON_ONLY },
	{ .key = "unknown", .only = EM_JSON_ONLY },
};
static const struct em_field F_KIND_COUNT = { .key = "count" };
static const struct em_field F_KIND_BYTES = { .key = "bytes" };

void hw_emit_leak_kinds(const struct hw_totals *t, struct hw_emitter *e)
{
	const unsigned kinds[4] = { BM_UNREACHED, BM_INDIRECT, BM_POSSIBLE,
				    HW_KIND_UNKNOWN };
	for (int k = 0; k < 4; k++) {
		em_section_begin(e, &S_LEAK_KIND[k]);
		em_kv(e, &F_KIND_COUNT, ev_u64(t->marked[kinds[k]]));
		em_kv(e, &F_KIND_BYTES, ev_u64(t->marked_bytes[kinds[k]]));
		em_section_end(e);
	}
}
