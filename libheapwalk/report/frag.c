/* frag.c - the frag report: per arena, how much free memory the heap
 * holds and how scattered it is.
 *
 * "free" is memory the allocator can hand out again without new pages:
 * ptmalloc's binned and cached chunks (top excluded), jemalloc's free slab
 * regions and thread-cached ones.  Page-level reserves are separate: top
 * for ptmalloc; dirty, muzzy and retained extents for jemalloc (retained
 * is address space only: nothing is behind it).  jemalloc's summary
 * counts free the same way (ptmalloc's summary adds top to it).
 *   free_ratio = free / (used + free)
 *   frag       = 1 - largest_free / free  (0: one free block; near 1:
 *                many small ones, as in malloc_info's fragmentation)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "commands.h"
#include "emit.h"

#define MAX_ARENAS 4096

struct frag_row {
	uint64_t used, free, nfree, largest, top, dirty, muzzy, retained;
	uint64_t slab_bytes, slab_used;
	bool any;
};

static bool add_chunk(void *cookie, const struct hw_chunk *c)
{
	struct frag_row *rows = cookie;
	struct frag_row *r = &rows[(uint32_t)c->arena % MAX_ARENAS];
	r->any = true;
	switch (c->where) {
	case HW_WHERE_TOP: r->top += c->size; return true;
	case HW_WHERE_DIRTY: r->dirty += c->size; return true;
	case HW_WHERE_MUZZY: r->muzzy += c->size; return true;
	case HW_WHERE_RETAINED: r->retained += c->size; return true;
	default: break;
	}
	/* A cached jemalloc region is a slab's when it takes exactly its
	   size class (a cached large extent spans its pad too).  */
	bool in_slab = c->where == HW_WHERE_SLAB ||
		       c->where == HW_WHERE_SLAB_FREE ||
		       (c->where == HW_WHERE_TCACHE && c->extent &&
			c->chunk_size == c->size && c->chunk == c->addr);
	if (in_slab) {
		r->slab_bytes += c->size;
		if (c->where == HW_WHERE_SLAB)
			r->slab_used += c->size;
	}
	if (c->used) {
		r->used += c->size;
		return true;
	}
	r->free += c->size;
	r->nfree++;
	if (c->size > r->largest)
		r->largest = c->size;
	return true;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void emit_row(struct hw_emitter *e, const char *name, long arena,
		     const struct frag_row *r, bool je)
{
	double free_ratio = ratio(r->free, r->used + r->free);
	double frag = r->free ? 1 - ratio(r->largest, r->free) : 0;
	if (e->json) {
		em_obj_begin(e, name);
		if (arena >= 0)
			em_u64(e, "arena", (uint64_t)arena);
		em_u64(e, "used", r->used);
		em_u64(e, "free", r->free);
		em_u64(e, "free_blocks", r->nfree);
		em_u64(e, "largest_free", r->largest);
		em_fixed(e, "free_ratio", free_ratio, 4);
		em_fixed(e, "frag", frag, 4);
		if (je) {
			em_u64(e, "dirty", r->dirty);
			em_u64(e, "muzzy", r->muzzy);
			em_u64(e, "retained", r->retained);
			em_fixed(e, "slab_util", ratio(r->slab_used, r->slab_bytes), 4);
		} else {
			em_u64(e, "top", r->top);
		}
		em_obj_end(e);
		return;
	}
	char a[32], b[32], c[32], d[32], f[32], g[32];
	char label[24];
	if (arena >= 0)
		snprintf(label, sizeof label, "%ld", arena);
	else
		snprintf(label, sizeof label, "%s", name);
	if (je)
		em_printf(e, "%6s %10s %10s %10s %6.1f%% %5.1f%% %10s %10s %10s %5.1f%%\n",
			  label, hw_human(a, sizeof a, r->used),
			  hw_human(b, sizeof b, r->free),
			  hw_human(c, sizeof c, r->largest), 100 * free_ratio,
			  100 * frag, hw_human(d, sizeof d, r->dirty),
			  hw_human(f, sizeof f, r->muzzy),
			  hw_human(g, sizeof g, r->retained),
			  100 * ratio(r->slab_used, r->slab_bytes));
	else
		em_printf(e, "%6s %10s %10s %10s %6.1f%% %5.1f%% %10s\n", label,
			  hw_human(a, sizeof a, r->used),
			  hw_human(b, sizeof b, r->free),
			  hw_human(c, sizeof c, r->largest), 100 * free_ratio,
			  100 * frag, hw_human(d, sizeof d, r->top));
}

/* The columns, defined under the table (text only: JSON keys are named
   in the reference).  */
static void emit_legend(struct hw_emitter *e, bool je)
{
	em_printf(e, "\nused, free: bytes in blocks in use / free for reuse "
		  "(%s)\n", je ? "free slab regions and thread-cached ones"
		  : "binned and cached chunks, top not included");
	em_printf(e, "largest: the largest free block;  free%%: free / (used "
		  "+ free);\nfrag: 1 - largest / free (0%%: all free memory in "
		  "one block; near 100%%: scattered)\n");
	if (je)
		em_printf(e, "dirty, muzzy: unused pages jemalloc still maps "
			  "(not yet purged / lazily purged);\nretained: "
			  "address space kept for reuse, no memory behind it;  "
			  "slabs: share of slab regions in use\n");
	else
		em_printf(e, "top: the arena's top chunk(s), memory at the end "
			  "of each heap that glibc can return to the system\n");
}

enum hw_status hw_report_frag(struct hw_session *s, struct hw_emitter *e)
{
	struct frag_row *rows = calloc(MAX_ARENAS, sizeof *rows);
	if (!rows)
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	s->alloc->chunks(s->alloc_state, add_chunk, rows);
	bool je = !strcmp(s->alloc->name, "jemalloc");
	struct frag_row total = { 0 };
	if (e->json) {
		em_obj_begin(e, NULL);
		em_arr_begin(e, "arenas");
	} else if (je) {
		em_printf(e, "%6s %10s %10s %10s %7s %6s %10s %10s %10s %6s\n",
			  "arena", "used", "free", "largest", "free%", "frag",
			  "dirty", "muzzy", "retained", "slabs");
	} else {
		em_printf(e, "%6s %10s %10s %10s %7s %6s %10s\n", "arena",
			  "used", "free", "largest", "free%", "frag", "top");
	}
	for (long a = 0; a < MAX_ARENAS; a++) {
		const struct frag_row *r = &rows[a];
		if (!r->any)
			continue;
		emit_row(e, NULL, a, r, je);
		total.used += r->used;
		total.free += r->free;
		total.nfree += r->nfree;
		if (r->largest > total.largest)
			total.largest = r->largest;
		total.top += r->top;
		total.dirty += r->dirty;
		total.muzzy += r->muzzy;
		total.retained += r->retained;
		total.slab_bytes += r->slab_bytes;
		total.slab_used += r->slab_used;
	}
	if (e->json)
		em_arr_end(e);
	emit_row(e, "total", -1, &total, je);
	if (je && !e->json)
		em_printf(e, "\nfree: free slab regions + regions and large "
			  "extents in thread caches (summary's free); dirty, "
			  "muzzy: unused pages;\nretained: address space only, "
			  "no memory behind it (summary's stats.retained)\n");
	if (e->json) {
		hw_emit_partial(s, e);
		em_obj_end(e);
		em_jsonl_end(e);
	} else {
		emit_legend(e, je);
		hw_emit_partial(s, e);
	}
	free(rows);
	return HW_OK;
}
