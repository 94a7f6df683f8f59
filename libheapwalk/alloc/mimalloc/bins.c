/* bins.c - mimalloc's `bins`: per size class (bin), its pages and their
 * blocks by state (in use; on the pages' free, local_free and
 * thread-free lists; not yet made blocks); with --list each page's
 * lists, entry by entry in the list's own order.
 */
#include <stdlib.h>
#include <string.h>

#include "../../emit/emit.h"
#include "mimalloc.h"

#define MAX_BIN 80

static const struct em_field BIN_COLS[] = {
	{ .key = "bin", .label = "bin", .width = 4 },
	{ .key = "size", .label = "block size", .width = 10, .none = "-" },
	{ .key = "pages", .label = "pages", .width = 6 },
	{ .key = "blocks", .label = "blocks", .width = 8 },
	{ .key = "used", .label = "used", .width = 8 },
	{ .key = "free", .label = "free", .width = 8 },
	{ .key = "local_free", .label = "local", .width = 8 },
	{ .key = "thread_free", .label = "thread", .width = 8 },
	{ .key = "used_bytes", .label = "in use", .width = 10,
	  .form = EM_T_HUMAN },
};
static const struct em_table BIN_TABLE = {
	.key = "bins", .cols = BIN_COLS, .ncols = 9 };

static enum hw_status bad_kind(struct mi_state *mi, const char *kind)
{
	return hw_error(mi->s, HW_USAGE, "bins: unknown kind '%s' (mimalloc: "
			"bins)", kind);
}

enum hw_status mi_report_bins(void *state, struct hw_emitter *e,
			      const char *kind)
{
	struct mi_state *mi = state;
	if (kind && strcmp(kind, "bins") != 0)
		return bad_kind(mi, kind);
	uint64_t (*sum)[7] = calloc(MAX_BIN, sizeof *sum);
	if (!sum)
		return hw_error(mi->s, HW_NO_ALLOCATOR, "out of memory");
	for (uint32_t i = 0; i < mi->npages; i++) {
		const struct mi_page *pg = &mi->pages[i];
		if (!pg->block_size || pg->bin >= MAX_BIN)
			continue;
		uint64_t free = (uint64_t)pg->nfree + pg->nlocal + pg->nthread;
		uint64_t used = pg->capacity > free ? pg->capacity - free : 0;
		uint64_t *s = sum[pg->bin];
		s[0]++;
		s[1] += pg->capacity;
		s[2] += used;
		s[3] += pg->nfree;
		s[4] += pg->nlocal;
		s[5] += pg->nthread;
		s[6] += used * pg->block_size;
	}
	em_doc_begin(e);
	em_table_begin(e, &BIN_TABLE);
	for (unsigned b = 0; b < MAX_BIN; b++) {
		const uint64_t *s = sum[b];
		if (!s[0])
			continue;
		uint64_t size = mi_bin_size(b);
		const struct em_val v[] = {
			ev_u64(b), size ? ev_u64(size) : ev_null(),
			ev_u64(s[0]), ev_u64(s[1]), ev_u64(s[2]), ev_u64(s[3]),
			ev_u64(s[4]), ev_u64(s[5]), ev_u64(s[6]),
		};
		em_row(e, v);
	}
	em_table_end(e);
	em_doc_end(e);
	free(sum);
	return HW_OK;
}

/* bins --list: each page's lists, entries in order.  */
static const struct em_field LIST_COLS[] = {
	{ .key = "bin", .label = "bin", .width = 4 },
	{ .key = "page", .label = "page", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "list", .label = "list", .width = -12 },
	{ .key = "position", .label = "pos", .width = 5 },
	{ .key = "block", .label = "block", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
};
static const struct em_table LIST_TABLE = {
	.key = "lists", .cols = LIST_COLS, .ncols = 5 };

/* One list from head, as lists.c read it: as far as its entries are
   blocks of the page (or, for `heap`, of that heap's pages), at most
   `limit` of them.  */
static void list_rows(struct mi_state *mi, struct hw_emitter *e,
		      const struct mi_page *pg, const char *name,
		      uint64_t head, uint64_t null, const uint64_t keys[2],
		      uint64_t limit)
{
	uint64_t b = head, n = 0;
	while (b && n < limit) {
		uint32_t pi = mi_page_of(mi, b);
		const struct mi_page *bp = pi == MI_NONE ? NULL : &mi->pages[pi];
		if (!bp || !bp->block_size || b < bp->start ||
		    (pg && bp != pg))
			break;
		const struct em_val v[] = {
			ev_u64(bp->bin), ev_addr(bp->area), ev_str(name),
			ev_u64(n), ev_addr(b),
		};
		em_row(e, v);
		n++;
		uint64_t w;
		if (!hw_read_u64(mi->t, b, &w))
			break;
		b = mi_decode_next(mi, w, null, keys);
	}
}

enum hw_status mi_report_bins_list(void *state, struct hw_emitter *e,
				   const char *kind)
{
	struct mi_state *mi = state;
	if (kind && strcmp(kind, "bins") != 0)
		return bad_kind(mi, kind);
	em_doc_begin(e);
	em_table_begin(e, &LIST_TABLE);
	for (uint32_t i = 0; i < mi->npages; i++) {
		const struct mi_page *pg = &mi->pages[i];
		if (!pg->block_size)
			continue;
		uint64_t lim = pg->capacity;
		list_rows(mi, e, pg, "free", pg->free, pg->meta, pg->keys, lim);
		list_rows(mi, e, pg, "local_free", pg->local_free, pg->meta,
			  pg->keys, lim);
		list_rows(mi, e, pg, "thread_free", pg->thread_free, pg->meta,
			  pg->keys, lim);
	}
	for (uint32_t k = 0; k < mi->nheaps; k++) {
		const struct mi_heap *h = &mi->heaps[k];
		list_rows(mi, e, NULL, "delayed", h->delayed, h->addr, h->keys,
			  mi->nblocks);
	}
	em_table_end(e);
	em_doc_end(e);
	return HW_OK;
}
