/* tcaches.c - `tcache [TID]` for jemalloc: each thread cache the scan
 * found (tcache.c), where its cache bins are, and per bin that holds
 * anything its count, its stack's room (ncached_max), its low-water
 * mark (what the next GC pass may flush), its request count, and the
 * entry malloc takes next.  The bins are decoded afresh from the target.
 */
#include <stdlib.h>

#include "../../emit/emit.h"
#include "jemalloc.h"

static const struct em_field TC_COLS[] = {
	{ .key = "index", .label = "bin", .width = 5 },
	{ .key = "size", .label = "size", .width = 8 },
	{ .key = "count", .label = "count", .width = 6 },
	{ .key = "max", .label = "max", .width = 6, .none = "?" },
	{ .key = "low_water", .label = "low_water", .width = 9 },
	{ .key = "nrequests", .label = "nrequests", .width = 10 },
	{ .key = "head", .label = "stack (next taken)", .join = "  " },
};
static const struct em_table TC_BINS = {
	.key = "bins", .cols = TC_COLS, .ncols = 7 };
static const struct em_field TC_THREAD_COLS[] = {
	{ .key = "thread", .pre = "tcache of thread ", .none = "?" },
	{ .key = "addr", .join = " at " },
	{ .key = "arena", .join = " (its thread's arena ", .post = ")" },
};
static const struct em_table TC_TABLE = {
	.key = "tcaches", .cols = TC_THREAD_COLS, .ncols = 3,
	.flags = EM_TB_NO_HEADER };

enum hw_status je_report_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid)
{
	struct je_state *j = state;
	bool found = tid < 0;
	for (size_t i = 0; i < j->ntcaches && !found; i++)
		found = j->tcaches[i].tid == tid;
	if (!found)
		return hw_error(j->s, HW_USAGE, "tcache: no tcache of thread "
				"%lld (%zu tcaches found by %s)",
				(long long)tid, j->ntcaches,
				j->how_tcache ? j->how_tcache : "no scan");
	struct je_cache_bin *bins = malloc(JE_MAX_SIZES * sizeof *bins);
	if (!bins)
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	em_doc_begin(e);
	em_table_begin(e, &TC_TABLE);
	for (size_t i = 0; i < j->ntcaches; i++) {
		const struct je_tcache *tc = &j->tcaches[i];
		if (tid >= 0 && tc->tid != tid)
			continue;
		const struct em_val tv[] = {
			tc->tid ? ev_i64(tc->tid) : ev_null(),
			ev_addr(tc->addr),
			tc->arena >= 0 ? ev_i64(tc->arena) : ev_absent(),
		};
		em_row_open(e, tv);
		em_table_begin(e, &TC_BINS);
		unsigned nb = je_tcache_bins(j, tc, bins);
		for (unsigned k = 0; k < nb && k < j->nsizes; k++) {
			const struct je_cache_bin *b = &bins[k];
			if (!b->n)
				continue;
			uint64_t head = 0;
			hw_read_u64(j->t, b->items, &head);
			const struct em_val v[] = {
				ev_u64(k), ev_u64(j->sizes[k]), ev_u64(b->n),
				b->max ? ev_u64(b->max) : ev_null(),
				ev_i64(b->low_water), ev_u64(b->nrequests),
				ev_addr(head),
			};
			em_row(e, v);
		}
		em_table_end(e);
		em_row_close(e);
	}
	em_table_end(e);
	em_doc_end(e);
	free(bins);
	return HW_OK;
}
