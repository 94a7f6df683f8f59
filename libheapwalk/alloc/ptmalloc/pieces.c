/* pieces.c - the walk in address order, cut into pieces that threads
 * can walk apart and still report in order (`chunks` in threads).
 *
 * A heap is one chain of sizes: where its chunks start is known only by
 * walking it from its start.  The first walk of every heap in threads
 * (the one that settles the lists by their sums) notes, for each
 * PM_PIECE_BYTES of a heap, the first chunk it met there.  A walk from
 * such a mark meets exactly the chunks that walk met after it, damage
 * and resynchronisation included (the way depends on the core alone),
 * so the pieces between marks, walked in any order by any threads, give
 * every chunk once, and put back in order they are the whole walk.
 */
#include <stdlib.h>

#include "ptmalloc.h"

bool pm_pieces_mark_begin(struct pm_state *p)
{
	if (!p->pieces.want || p->pieces.marked)
		return false;
	for (size_t i = 0; i < p->nheaps; i++) {
		struct pm_heap *h = &p->heaps[i];
		size_t n = (size_t)((h->end - h->start + PM_PIECE_BYTES - 1) /
				    PM_PIECE_BYTES);
		free(h->marks);
		h->marks = calloc(n ? n : 1, sizeof *h->marks);
		if (!h->marks)
			return false;     /* (no pieces: one walker) */
	}
	return true;
}

void pm_pieces_mark_end(struct pm_state *p, bool complete)
{
	p->pieces.marked = complete;
}

/* Append piece {unit, from, until}; *cap grows the table.  */
static bool add_piece(struct pm_state *p, size_t *cap, size_t unit,
		      uint64_t from, uint64_t until)
{
	if (p->pieces.n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct pm_piece *v = realloc(p->pieces.v, ncap * sizeof *v);
		if (!v)
			return false;
		p->pieces.v = v;
		*cap = ncap;
	}
	p->pieces.v[p->pieces.n++] = (struct pm_piece){ unit, from, until };
	return true;
}

/* Heap i's pieces, mark to mark.  */
static bool heap_pieces(struct pm_state *p, size_t *cap, size_t i)
{
	const struct pm_heap *h = &p->heaps[i];
	size_t n = (size_t)((h->end - h->start + PM_PIECE_BYTES - 1) /
			    PM_PIECE_BYTES);
	uint64_t from = 0;
	for (size_t k = 0; k < n; k++) {
		if (!h->marks[k])
			continue;
		if (from && !add_piece(p, cap, i, from, h->marks[k]))
			return false;
		from = h->marks[k];
	}
	return !from || add_piece(p, cap, i, from, h->end);
}

size_t pm_pieces_build(struct pm_state *p)
{
	size_t cap = 0;
	free(p->pieces.v);
	p->pieces.v = NULL;
	p->pieces.n = 0;
	if (!p->pieces.marked)
		return 0;
	/* Heaps and mmapped chunks merged by address, as pm_walk_chunks
	   takes them.  */
	size_t hi = 0, mi = 0;
	while (hi < p->nheaps || mi < p->nmmapped) {
		bool ok;
		if (mi == p->nmmapped ||
		    (hi < p->nheaps &&
		     p->heaps[hi].start < p->mmapped[mi].chunk)) {
			ok = heap_pieces(p, &cap, hi++);
		} else {
			ok = add_piece(p, &cap, p->nheaps + mi, 0, 0);
			mi++;
		}
		if (!ok) {          /* (then one thread walks) */
			p->pieces.n = 0;
			return 0;
		}
	}
	return p->pieces.n;
}

void pm_pieces_free(struct pm_state *p)
{
	for (size_t i = 0; i < p->nheaps; i++)
		free(p->heaps[i].marks);
	free(p->pieces.v);
}
