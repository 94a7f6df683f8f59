/* tcmalloc.c - gperftools tcmalloc 2.x behind the allocator interface.
 *
 * Opening reads all metadata once: the page map's spans, then every free
 * list (spans', transfer slots, thread caches) into one sorted array.
 * Walks after that are linear passes over the spans that allocate
 * nothing.
 */
#include <stdlib.h>

#include <string.h>

#include "tcmalloc.h"

static void tc_close(void *state)
{
	struct tc_state *tc = state;
	if (!tc)
		return;
	free(tc->spans);
	free(tc->bucket_first);
	free(tc->piece_start);
	free(tc->holders);
	free(tc->maybe_free);
	free(tc->caches);
	tc_prof_free(tc->prof);
	free(tc);
}

static enum hw_status tc_open(struct hw_session *s, void **state)
{
	struct tc_state *tc = calloc(1, sizeof *tc);
	if (!tc)
		return hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	tc->s = s;
	tc->t = s->target;
	enum hw_status st = tc_find_module(tc);
	if (st == HW_OK)
		st = tc_find_roots(tc);
	if (st == HW_OK)
		st = tc_read_spans(tc);
	if (st == HW_OK && !tc_index_spans(tc))
		st = hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	if (st == HW_OK)
		st = tc_read_lists(tc);
	if (st != HW_OK) {
		tc_close(tc);
		return st;
	}
	*state = tc;
	return HW_OK;
}

/* What tcmalloc holds from the system: its page heap's spans.  */
static void tc_describe(void *state, struct hw_instance_info *info)
{
	struct tc_state *tc = state;
	info->module = tc->module;
	info->arch = tc->have_mod ? hw_elf_arch_at(tc->t, tc->mod.low) : NULL;
	/* Its own library (not a program it is linked into).  */
	const char *base = strrchr(tc->module, '/');
	base = base ? base + 1 : tc->module;
	if (tc->have_mod && !strncmp(base, "libtcmalloc", 11)) {
		info->own_low = tc->mod.low;
		info->own_high = tc->mod.high;
	}
	info->held = 0;
	for (size_t i = 0; i < tc->nspans; i++)
		info->held += tc->spans[i].bytes;
}

static const char *tc_version(void *state)
{
	return ((struct tc_state *)state)->version;
}

/* One page heap, shared by every thread.  */
static size_t tc_narenas(void *state)
{
	(void)state;
	return 1;
}

static bool tc_chunks(void *state, hw_chunk_fn *fn, void *cookie)
{
	return tc_walk(state, fn, cookie);
}

static bool tc_chunks_parallel(void *state, unsigned nparts,
			       hw_chunk_fn *fn, void *const cookies[],
			       hw_chunk_fn *restate)
{
	(void)restate;        /* every block is given in its final state */
	return tc_walk_parallel(state, nparts, fn, cookies);
}

static size_t tc_pieces_op(void *state, unsigned nthreads)
{
	(void)nthreads;       /* the spans are known: no walk needed */
	return tc_pieces(state);
}

static bool tc_chunks_piece(void *state, size_t i, hw_chunk_fn *fn,
			    void *cookie)
{
	return tc_walk_piece(state, i, fn, cookie);
}

static bool tc_chunks_around(void *state, uint64_t addr, size_t before,
			     size_t after, hw_chunk_fn *fn, void *cookie)
{
	return tc_walk_around(state, addr, before, after, fn, cookie);
}

/* A usable size's class: tcmalloc's own size classes up to 256 KiB,
   whole pages above.  */
static uint64_t tc_size_class(void *state, uint64_t usable, uint64_t *min)
{
	const struct tc_state *tc = state;
	for (unsigned c = 1; c < tc->nclasses; c++)
		if (usable <= tc->class_size[c]) {
			*min = tc->class_size[c - 1] + 1;
			return tc->class_size[c];
		}
	*min = usable;
	return usable;
}

static enum hw_status tc_profile(void *state, const struct hw_profile **out,
			      const char **why)
{
	struct tc_state *tc = state;
	if (!tc->prof_read) {
		enum hw_status st = tc_read_profile(tc, &tc->prof, &tc->prof_why);
		if (st != HW_OK)
			return st;
		tc->prof_read = true;
	}
	*out = tc_prof_profile(tc->prof);
	*why = tc->prof_why;
	return HW_OK;
}

/* A sampled object has a span of its own (a large block); the heap
   profiler records every block.  */
static const struct hw_prof_site *tc_site_of(void *state,
					     const struct hw_chunk *c)
{
	struct tc_state *tc = state;
	const struct hw_profile *p = tc_prof_profile(tc->prof);
	if (!p || !c->used || (!p->all_allocations && c->where != HW_WHERE_LARGE))
		return NULL;
	return tc_prof_site_of(tc->prof, c->addr);
}

/* tcmalloc's metadata (span descriptors, thread caches, the page map)
   points only at free objects and at itself.  The heap profiler's and
   the leak checker's table points at every block they recorded: with
   either on, its memory must not count as a root.  */
static void tc_internal(void *state, hw_range_fn *fn, void *cookie)
{
	struct tc_state *tc = state;
	const struct hw_profile *p;
	const char *why;
	if (tc_profile(state, &p, &why) == HW_OK)
		tc_prof_internal(tc->prof, fn, cookie);
}

/* Every span in use: its objects' slots, or a large block as the one
   slot of its span.  */
static void tc_slabs(void *state, hw_slab_fn *fn, void *cookie)
{
	struct tc_state *tc = state;
	for (size_t i = 0; i < tc->nspans; i++) {
		const struct tc_span *sp = &tc->spans[i];
		uint64_t slot = sp->objsize ? sp->objsize : sp->bytes;
		if (sp->location || !slot || sp->bytes / slot > UINT32_MAX)
			continue;
		if (!fn(cookie, sp->addr, sp->addr + sp->bytes, sp->addr, slot,
			(uint32_t)(sp->bytes / slot), false))
			return;
	}
}

static const struct hw_maps_nouns tc_maps_nouns = {
	.in_use = "spans in use",
	.one_heap = true,
	.mmapped = "mmapped chunks",
	.unused = "free spans (page heap, returned)",
};

/* gperftools' entry points (tc_* and the C library's names it
   replaces) and its C++ classes (mangled in namespace tcmalloc).  */
static const char *const tc_functions[] = {
	"malloc", "free", "calloc", "realloc", "cfree", "memalign",
	"posix_memalign", "aligned_alloc", "valloc", "pvalloc", "tc_*",
	"_ZN8tcmalloc*", NULL,
};

const struct hw_allocator_ops hw_tcmalloc_ops = {
	.name = "tcmalloc",
	.functions = tc_functions,
	.maps_nouns = &tc_maps_nouns,
	/* Its page heap's free spans, committed or given back.  */
	.reserve_places = HW_PLACE_BIT(HW_WHERE_PAGEHEAP) |
			  HW_PLACE_BIT(HW_WHERE_RETURNED),
	.block_noun = "objects/spans",
	.container = "span",
	.small_noun = "object",
	.open = tc_open,
	.describe = tc_describe,
	.close = tc_close,
	.version = tc_version,
	.narenas = tc_narenas,
	.chunks = tc_chunks,
	.chunks_parallel = tc_chunks_parallel,
	.pieces = tc_pieces_op,
	.chunks_piece = tc_chunks_piece,
	.chunks_around = tc_chunks_around,
	.summary = tc_report_summary,
	.arenas = tc_report_arenas,
	.bins = tc_report_bins,
	.bins_list = tc_report_bins_list,
	.arena = tc_report_arena,
	.params = tc_report_params,
	.tcaches = tc_report_tcaches,
	.anatomy = tc_anatomy,
	.size_class = tc_size_class,
	.internal = tc_internal,
	.slabs = tc_slabs,
	.profile = tc_profile,
	.site_of = tc_site_of,
	/* The 8-byte class's objects are 8-aligned.  */
	.block_align = 8,
	.walk_sorted = true,        /* spans by address */
};
