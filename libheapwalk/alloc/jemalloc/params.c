/* params.c - `mp`, `tcache` and `arena N` for jemalloc.  `mp`: the
 * build's parameters as the heap shows them, under the names mallctl
 * gives them (arenas.page, arenas.quantum, arenas.nbins,
 * arenas.nlextents, arenas.narenas, the largest small and large
 * classes), the radix tree's shape, and where heapwalk found each of
 * jemalloc's roots.  `tcache [TID]`: each thread cache the scan found
 * (tcache.c), where its cache bins are, and per bin that holds anything
 * its count, its stack's room (ncached_max), its low-water mark (what
 * the next GC pass may flush), its request count, and the entry malloc
 * takes next; the bins are decoded afresh from the target.  `arena N`:
 * what the heap says of one arena (arena_t, its base, its extents).
 */
#include <stdlib.h>

#include "../../emit/emit.h"
#include "jemalloc.h"

static const struct em_field F_VERSION = {
	.key = "version", .label = "version:" };
static const struct em_section S_PARAMS = {
	.key = "params", .indent = 2, .label_width = 18 };
static const struct em_field F_PAGE = {
	.key = "page", .label = "arenas.page:" };
static const struct em_field F_QUANTUM = {
	.key = "quantum", .label = "arenas.quantum:" };
static const struct em_field F_NBINS = {
	.key = "nbins", .label = "arenas.nbins:",
	.post = " small size classes" };
static const struct em_field F_NLEXTENTS = {
	.key = "nlextents", .label = "arenas.nlextents:",
	.post = " large size classes" };
static const struct em_field F_SMALL_MAX = {
	.key = "small_max", .label = "small max:", .form = EM_T_HUMAN };
static const struct em_field F_LARGE_MAX = {
	.key = "large_max", .label = "large max:", .form = EM_T_HUMAN };
static const struct em_field F_NARENAS = {
	.key = "narenas", .label = "arenas.narenas:", .none = "?" };
static const struct em_field F_LG_VADDR = {
	.key = "lg_vaddr", .label = "lg_vaddr:",
	.post = " (bits of a virtual address)" };
static const struct em_field F_LEVELS = {
	.key = "rtree_levels", .label = "radix tree:", .post = " levels" };
static const struct em_field F_TCACHES = {
	.key = "tcaches", .label = "tcaches:", .post = " found" };
static const struct em_section S_ROOTS = {
	.key = "roots", .title = "found:", .indent = 2, .label_width = 18 };
static const struct em_field F_ROOT[] = {
	{ .key = "rtree_root", .label = "radix tree:", .none = "-" },
	{ .key = "size_table", .label = "size classes:", .none = "-" },
	{ .key = "bin_infos", .label = "bin infos:", .none = "-" },
	{ .key = "arenas", .label = "arenas array:", .none = "-" },
};
static const struct em_field F_ROOT_FROM[] = {
	{ .key = "rtree_from", .join = "  " }, { .key = "sizes_from", .join = "  " },
	{ .key = "bins_from", .join = "  " }, { .key = "arenas_from", .join = "  " },
};

static const struct em_field F_SLABCUR_FROM = {
	.key = "slabcur_from", .label = "current slabs:" };

enum hw_status je_report_params(void *state, struct hw_emitter *e)
{
	struct je_state *j = state;
	em_doc_begin(e);
	em_kv(e, &F_VERSION, ev_str(j->git[0] ? j->git : j->version));
	em_section_begin(e, &S_PARAMS);
	em_kv(e, &F_PAGE, ev_u64((uint64_t)1 << j->p.lg_page));
	em_kv(e, &F_QUANTUM, ev_u64((uint64_t)1 << j->p.lg_quantum));
	em_kv(e, &F_NBINS, ev_u64(j->nbins));
	em_kv(e, &F_NLEXTENTS, ev_u64(j->nsizes - j->nbins));
	em_kv(e, &F_SMALL_MAX, j->nbins ? ev_u64(j->sizes[j->nbins - 1])
				       : ev_null());
	em_kv(e, &F_LARGE_MAX, j->nsizes ? ev_u64(j->sizes[j->nsizes - 1])
					 : ev_null());
	em_kv(e, &F_NARENAS, j->arenas_array ? ev_u64(j->narena_slots)
					     : ev_null());
	em_kv(e, &F_LG_VADDR, ev_u64((uint64_t)j->p.lg_vaddr));
	em_kv(e, &F_LEVELS, ev_u64((uint64_t)j->p.height));
	em_kv(e, &F_TCACHES, ev_u64(j->ntcaches));
	em_section_end(e);
	em_section_begin(e, &S_ROOTS);
	const uint64_t at[] = { j->rtree_root, j->size_table, j->bin_infos,
				j->arenas_array };
	const char *from[] = { j->how_rtree, j->how_sizes, j->how_bins,
			       j->how_arenas };
	for (unsigned k = 0; k < sizeof at / sizeof *at; k++) {
		em_kv(e, &F_ROOT[k], ev_addr_or_null(at[k]));
		em_kv(e, &F_ROOT_FROM[k], from[k] ? ev_str(from[k]) : ev_null());
	}
	const struct je_slabcur *sc = je_slabcurs(j);
	em_kv(e, &F_SLABCUR_FROM, ev_str(sc ? sc->how : "out of memory"));
	em_section_end(e);
	em_doc_end(e);
	return HW_OK;
}

/* ---- tcache ---------------------------------------------------------- */

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

/* ---- one arena ----------------------------------------------------------- */

/* `arena N`: what the heap says of one arena -- its arena_t when the
   arena array was found (nthreads, the base_t and its counters), the
   threads bound to it, its extents by state, its slabs, large extents
   and the regions of them cached in threads' tcaches.  */
static const struct em_field F_A_INDEX = { .key = "arena", .label = "arena" };
static const struct em_field F_A_ADDR = {
	.key = "addr", .join = " at ", .none = "(its arena_t was not found)" };
static const struct em_section S_A_FIELDS = { .indent = 2, .label_width = 12 };
static const struct em_field F_A_NTHREADS = {
	.key = "nthreads", .label = "nthreads:", .none = "?",
	.post = " (jemalloc's count of threads bound to it)" };
static const struct em_field F_A_THREADS = {
	.key = "threads", .only = EM_JSON_ONLY };
static const struct em_field F_A_THREADS_TEXT = {
	.label = "threads:", .only = EM_TEXT_ONLY };
static const struct em_field F_A_BASE = {
	.key = "base", .label = "base:", .none = "?" };
static const struct em_field F_A_BASE_ALLOC = {
	.key = "base_allocated", .join = "  (its base_t: allocated ",
	.form = EM_T_HUMAN };
static const struct em_field F_A_BASE_RES = {
	.key = "base_resident", .join = ", resident ", .form = EM_T_HUMAN };
static const struct em_field F_A_BASE_MAPPED = {
	.key = "base_mapped", .join = ", mapped ", .post = ")",
	.form = EM_T_HUMAN };
static const struct em_section S_A_EXTENTS = {
	.key = "extents", .title = "extents:", .indent = 4, .label_width = 10 };
static const struct em_section S_A_STATE[4] = {
	{ .key = "active" }, { .key = "dirty" }, { .key = "muzzy" },
	{ .key = "retained" } };
static const struct em_field F_A_STATE_COUNT[4] = {
	{ .key = "count", .label = "active:" }, { .key = "count", .label = "dirty:" },
	{ .key = "count", .label = "muzzy:" },
	{ .key = "count", .label = "retained:" } };
static const struct em_field F_A_STATE_BYTES = {
	.key = "bytes", .join = " extents, ", .form = EM_T_HUMAN };
static const struct em_field F_A_SLABS = { .key = "slabs", .label = "slabs:" };
static const struct em_field F_A_REGIONS = {
	.key = "regions_used", .join = ", ", .post = " regions in use" };
static const struct em_field F_A_SMALL = {
	.key = "small_bytes", .join = " (", .post = ")", .form = EM_T_HUMAN };
static const struct em_field F_A_LARGE = {
	.key = "large", .label = "large:", .post = " extents in use" };
static const struct em_field F_A_LARGE_BYTES = {
	.key = "large_bytes", .join = " (", .post = ")", .form = EM_T_HUMAN };
static const struct em_field F_A_TCACHED = {
	.key = "tcached", .label = "tcached:",
	.post = " (of those, parked in threads' tcaches)" };

enum hw_status je_report_arena(void *state, struct hw_emitter *e, size_t n)
{
	struct je_state *j = state;
	struct je_usage u = { 0 };
	uint64_t count[4] = { 0 };   /* extents by state */
	for (size_t i = 0; i < j->next; i++) {
		const struct je_extent *x = &j->ext[i];
		if (x->arena != n)
			continue;
		je_add_extent(j, &u, x);
		if (x->state <= JE_RETAINED)
			count[x->state]++;
	}
	const uint64_t bytes[4] = { [JE_ACTIVE] = u.active,
				    [JE_DIRTY] = u.dirty, [JE_MUZZY] = u.muzzy,
				    [JE_RETAINED] = u.retained };
	if (n >= JE_MAX_ARENAS || (!u.any && !j->arena_addr[n]))
		return hw_error(j->s, HW_USAGE, "arena: no arena %zu (arenas "
				"lists every arena this heap has)", n);
	int32_t *tids = malloc((j->ntcaches + 1) * sizeof *tids);
	if (!tids)
		return hw_error(j->s, HW_BAD_TARGET, "out of memory");
	size_t ntids = 0;
	for (size_t i = 0; i < j->ntcaches; i++)
		if (j->tcaches[i].arena == (int32_t)n && j->tcaches[i].tid)
			tids[ntids++] = j->tcaches[i].tid;
	char threads[256];
	je_thread_list(j, (unsigned)n, threads, sizeof threads);
	uint64_t base = 0;
	const struct je_base *b = NULL;
	if (j->arena_addr[n] && j->arena_base_off &&
	    hw_read_u64(j->t, j->arena_addr[n] + j->arena_base_off, &base))
		for (size_t i = 0; i < j->nbases && !b; i++)
			if (j->bases[i].addr == base)
				b = &j->bases[i];
	int64_t nt = je_arena_nthreads(j, (unsigned)n);
	em_doc_begin(e);
	em_kv(e, &F_A_INDEX, ev_u64(n));
	em_kv(e, &F_A_ADDR, ev_addr_or_null(j->arena_addr[n]));
	em_section_begin(e, &S_A_FIELDS);
	em_kv(e, &F_A_NTHREADS, nt >= 0 ? ev_u64((uint64_t)nt) : ev_null());
	em_kv(e, &F_A_THREADS, je_have_thread_pointers(j) && j->arenas_array
			       ? ev_ids(tids, ntids) : ev_null());
	em_kv(e, &F_A_THREADS_TEXT, ev_str(threads));
	em_kv(e, &F_A_BASE, ev_addr_or_null(base));
	em_kv(e, &F_A_BASE_ALLOC, b && j->base_counters ? ev_u64(b->allocated)
							: ev_absent());
	em_kv(e, &F_A_BASE_RES, b && j->base_counters ? ev_u64(b->resident)
						      : ev_absent());
	em_kv(e, &F_A_BASE_MAPPED, b && j->base_counters ? ev_u64(b->mapped)
							 : ev_absent());
	em_section_begin(e, &S_A_EXTENTS);
	for (int st = 0; st < 4; st++) {
		em_section_begin(e, &S_A_STATE[st]);
		em_kv(e, &F_A_STATE_COUNT[st], ev_u64(count[st]));
		em_kv(e, &F_A_STATE_BYTES, ev_u64(bytes[st]));
		em_section_end(e);
	}
	em_section_end(e);
	em_kv(e, &F_A_SLABS, ev_u64(u.slabs));
	em_kv(e, &F_A_REGIONS, ev_u64(u.regs_used));
	em_kv(e, &F_A_SMALL, ev_u64(u.small_bytes));
	em_kv(e, &F_A_LARGE, ev_u64(u.large));
	em_kv(e, &F_A_LARGE_BYTES, ev_u64(u.large_bytes));
	em_kv(e, &F_A_TCACHED, ev_u64(u.cached));
	em_section_end(e);
	em_doc_end(e);
	free(tids);
	return HW_OK;
}
