/* jemalloc.c - jemalloc 5.x behind the allocator interface.
 *
 * Opening reads all metadata once: the radix tree's extents (with each
 * slab's bitmap counted) and every thread cache's items.  Walks after that
 * are linear passes over the extents that allocate nothing.
 */
#include <stdlib.h>

#include <string.h>

#include "jemalloc.h"
#include "prof.h"

static void je_close(void *state)
{
	struct je_state *j = state;
	if (!j)
		return;
	free(j->ext);
	free(j->piece_start);
	free(j->cached);
	free(j->tcaches);
	free(j->bases);
	je_slabcur_free(j->slabcur);
	je_prof_free(j->prof);
	free(j);
}

static enum hw_status je_open(struct hw_session *s, void **state)
{
	struct je_state *j = calloc(1, sizeof *j);
	if (!j)
		return hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	j->s = s;
	j->t = s->target;
	enum hw_status st = je_find_module(j);
	if (st == HW_OK)
		st = je_find_rtree(j);
	if (st == HW_OK) {
		je_find_size_classes(j);
		st = je_read_extents(j);
	}
	if (st != HW_OK) {
		je_close(j);
		return st;
	}
	je_find_arenas(j);
	je_find_tcaches(j);
	je_find_bases(j);
	je_find_internal(j);
	je_find_bindings(j);
	*state = j;
	return HW_OK;
}

/* What jemalloc holds from the system: every extent the radix tree maps.  */
static void je_describe(void *state, struct hw_instance_info *info)
{
	struct je_state *j = state;
	info->module = j->module;
	info->arch = j->have_mod ? hw_elf_arch_at(j->t, j->mod.low) : NULL;
	/* Its own library (not a program it is linked into).  */
	const char *base = strrchr(j->module, '/');
	base = base ? base + 1 : j->module;
	if (j->have_mod && !strncmp(base, "libjemalloc", 11)) {
		info->own_low = j->mod.low;
		info->own_high = j->mod.high;
	}
	info->held = 0;
	for (size_t i = 0; i < j->next; i++)
		info->held += j->ext[i].size;
}

static const char *je_version(void *state)
{
	return ((struct je_state *)state)->version;
}

static size_t je_narenas(void *state)
{
	struct je_state *j = state;
	size_t n = 0;
	if (j->arenas_array) {
		for (unsigned a = 0; a < j->narena_slots; a++)
			n += j->arena_addr[a] != 0;
		return n;
	}
	return je_count_arenas(j);
}

static bool je_chunks_around(void *state, uint64_t addr, size_t before,
			     size_t after, hw_chunk_fn *fn, void *cookie)
{
	return je_walk_around(state, addr, before, after, fn, cookie);
}

static bool je_chunks(void *state, hw_chunk_fn *fn, void *cookie)
{
	return je_walk(state, fn, cookie);
}

static bool je_chunks_parallel(void *state, unsigned nparts, hw_chunk_fn *fn,
			       void *const cookies[], hw_chunk_fn *retract)
{
	(void)retract;        /* every block is given in its final state */
	return je_walk_parallel(state, nparts, fn, cookies);
}

static size_t je_pieces_op(void *state, unsigned nthreads)
{
	(void)nthreads;       /* the extents are known: no walk needed */
	return je_pieces(state);
}

static bool je_chunks_piece(void *state, size_t i, hw_chunk_fn *fn,
			    void *cookie)
{
	return je_walk_piece(state, i, fn, cookie);
}

static enum hw_status je_profile(void *state, const struct hw_profile **out,
			      const char **why)
{
	struct je_state *j = state;
	if (!j->prof_read) {
		enum hw_status st = je_read_profile(j, &j->prof, &j->prof_why);
		if (st != HW_OK)
			return st;
		j->prof_read = true;
	}
	*out = j->prof ? &j->prof->p : NULL;
	*why = j->prof_why;
	return HW_OK;
}

/* A sampled object is promoted to a large extent of its own.  */
static const struct hw_prof_site *je_site_of(void *state,
					     const struct hw_chunk *c)
{
	struct je_state *j = state;
	if (!j->prof || !c->used || c->where != HW_WHERE_LARGE || !c->extent)
		return NULL;
	return je_prof_site_of(j, j->prof, c->extent);
}

/* Every active extent: a slab's regions, or a large allocation as the
   one slot of its extent (its pointer may sit past the extent's start:
   cache-oblivious placement).  */
static void je_slabs(void *state, hw_slab_fn *fn, void *cookie)
{
	struct je_state *j = state;
	for (size_t i = 0; i < j->next; i++) {
		const struct je_extent *x = &j->ext[i];
		if (x->state != JE_ACTIVE)
			continue;
		bool more = x->slab
			? fn(cookie, x->base, x->base + x->size, x->base,
			     x->reg_size, x->nregs, false)
			: fn(cookie, x->base, x->base + x->size, x->addr,
			     j->sizes[x->szind], 1, false);
		if (!more)
			return;
	}
}

static const struct hw_maps_nouns je_maps_nouns = {
	.in_use = "extents in use",
	.mmapped = "mmapped chunks",
	.unused = "unused extents (dirty, muzzy, retained)",
	.strip = "extents",
};

/* Its entry points, plain (as libjemalloc exports them) and with the
   je_ prefix of a private build (redis's), and its internal families.  */
static const char *const je_functions[] = {
	"malloc", "free", "calloc", "realloc", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "mallocx", "rallocx",
	"xallocx", "sallocx", "dallocx", "sdallocx", "nallocx",
	"malloc_usable_size", "je_*", "arena_*", "tcache_*", "extent_*",
	"ecache_*", "pac_*", "pa_*", "bin_*", "large_*", "emap_*",
	"rtree_*", "base_*", "sec_*", "hpa_*", "ifree", "isfree",
	"imalloc*", "irealloc*", "ialloc*", "idalloc*", NULL,
};

const struct hw_allocator_ops hw_jemalloc_ops = {
	.name = "jemalloc",
	.functions = je_functions,
	.maps_nouns = &je_maps_nouns,
	/* Its unused extents, by decay state.  */
	.reserve_places = HW_PLACE_BIT(HW_WHERE_DIRTY) |
			  HW_PLACE_BIT(HW_WHERE_MUZZY) |
			  HW_PLACE_BIT(HW_WHERE_RETAINED),
	.block_noun = "regions/extents",
	.container = "extent",
	.small_noun = "region",
	.open = je_open,
	.describe = je_describe,
	.close = je_close,
	.version = je_version,
	.narenas = je_narenas,
	.chunks = je_chunks,
	.chunks_parallel = je_chunks_parallel,
	.pieces = je_pieces_op,
	.chunks_piece = je_chunks_piece,
	.chunks_around = je_chunks_around,
	.summary = je_report_summary,
	.arenas = je_report_arenas,
	.arena = je_report_arena,
	.params = je_report_params,
	.bins = je_report_bins,
	.bins_list = je_report_bins_list,
	.tcaches = je_report_tcaches,
	.anatomy = je_anatomy,
	/* A region's usable size is its size class already (small and
	   large alike): no grouping.  */
	.size_class = NULL,
	/* The 8-byte class's regions are 8-aligned.  */
	.block_align = 8,
	.walk_sorted = true,        /* extents by address */
	.internal = je_internal,
	.slabs = je_slabs,
	.profile = je_profile,
	.site_of = je_site_of,
	.check = NULL,
};
