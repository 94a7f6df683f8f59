/* ptmalloc.c - glibc malloc behind the allocator interface.
 *
 * Opening finds the roots, heaps, tcaches and thread arenas: what every
 * command needs, and cheap.  The free lists (millions of scattered nodes
 * on a big heap) and the mmapped chunks (found by reading every page
 * start outside the heaps) are looked for on first use: every report and
 * chunk walk needs them all, a lookup of one address only the few lists
 * its chunks could be on and the one mapping that holds it.  Chunk walks
 * are linear passes over the heaps that allocate nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../../sym/sym.h"
#include "ptmalloc.h"

static void pm_close(void *state)
{
	struct pm_state *p = state;
	if (!p)
		return;
	pm_pieces_free(p);
	for (size_t i = 0; i < p->nheaps; i++)
		munmap(p->heaps[i].tags, p->heaps[i].tags_len);
	free(p->heaps);
	free(p->arenas);
	free(p->tcaches);
	free(p->thread_arenas);
	free(p->tcached.slots);
	free(p->mmapped);
	free(p);
}

static enum hw_status open_state(struct hw_session *s, bool dwarf_now,
				 bool *deferred, void **state)
{
	struct pm_state *p = calloc(1, sizeof *p);
	if (!p)
		return hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	p->s = s;
	p->t = s->target;
	p->opening = s->opening;
	p->dwarf_now = dwarf_now;
	p->libc_file = -1;
	/* Faulting the heaps in takes the other core.  When jemalloc or
	   tcmalloc opened first, this glibc is most likely the idle one
	   beside it: its heaps are faulted in once it is the one walked
	   (pm_settle).  */
	if (s->policy.prefault && hw_threads(s) > 1 && !s->ninstances)
		pm_prefault_start(p);
	enum hw_status st = pm_find_roots(p);
	if (st == HW_OK)
		st = pm_find_heaps(p);
	if (st != HW_OK) {
		*deferred = p->dwarf_later;
		pm_close(p);
		return st;
	}
	/* No list can be longer than the heaps hold chunks.  */
	uint64_t bytes = 0;
	for (size_t i = 0; i < p->nheaps; i++)
		bytes += p->heaps[i].end - p->heaps[i].start;
	p->list_limit = bytes / PM_MINSIZE + 1;
	pm_find_tcaches(p);
	pm_find_thread_arenas(p);
	pm_era_links(p);
	if (!pm_era_conclude(p)) {
		*deferred = p->dwarf_later;
		pm_close(p);
		return HW_NO_ALLOCATOR;
	}
	*state = p;
	return HW_OK;
}

/* A heap that the built-in layout cannot read may be a patched glibc's
   that DWARF describes: then the open is done again with DWARF's (what
   the first one found is void).  */
static enum hw_status pm_open(struct hw_session *s, void **state)
{
	struct hw_findings_mark m = hw_findings_mark(s);
	bool deferred = false;
	enum hw_status st = open_state(s, false, &deferred, state);
	if (st == HW_OK || !deferred)
		return st;
	hw_findings_drop(s, m);
	return open_state(s, true, &deferred, state);
}

/* Do a and b give every member the same offset?  (Both are copies of
   one layout, so their padding is alike too.)  */
static bool same_offsets(const struct pm_layout *a, struct pm_layout b)
{
	b.source = a->source;
	return memcmp(a, &b, sizeof b) == 0;
}

/* The walked instance: libc's DWARF, if any, has the last word on the
   layouts.  Where it gives the built-in offsets (every glibc build seen
   so far), the open stands and only says where its layouts come from;
   where it does not (a patched glibc), everything read with the
   built-in ones is void, and the instance is opened again with DWARF's
   from the start.  */
static bool pm_settle(struct hw_session *s, void **state)
{
	struct pm_state *p = *state;
	/* (Not started at open when another allocator opened first.)  */
	if (s->policy.prefault && hw_threads(s) > 1 &&
	    !hw_target_prefault_started(p->t))
		pm_prefault_start(p);
	if (!p->dwarf_later)
		return false;
	p->dwarf_later = false;
	struct pm_layout built = p->l;
	size_t cached = hw_syms_layouts_cached(s->syms);
	pm_layout_from_dwarf(p, &p->libc_mod);
	if (same_offsets(&built, p->l))
		return false;
	/* Answers kept in the layout cache that disagree with the built-in
	   layout are checked against the debug file before they are
	   believed: a cache file is no proof (a bug, a disk, a hand).  */
	if (hw_syms_layouts_cached(s->syms) > cached) {
		struct pm_layout from_cache = p->l;
		p->l = built;
		hw_syms_layout_cache_forget(s->syms, &p->libc_mod);
		pm_layout_from_dwarf(p, &p->libc_mod);
		p->layout_cache_wrong = !same_offsets(&from_cache, p->l);
		if (same_offsets(&built, p->l))
			return false;
	}
	size_t keep = s->opening;
	void *fresh = NULL;
	s->opening = p->opening;
	bool deferred;
	enum hw_status st = open_state(s, true, &deferred, &fresh);
	s->opening = keep;
	if (st != HW_OK) {
		/* No heap with DWARF's layouts: the walk stays with what was
		   read, and its layout says why (the failed open's findings
		   are dropped).  */
		p->l = built;
		p->l.source = "built-in (libc's DWARF gives other layouts, "
			      "and with them no heap was found)";
		s->err[0] = '\0';
		return false;
	}
	((struct pm_state *)fresh)->layout_cache_wrong = p->layout_cache_wrong;
	pm_close(p);
	*state = fresh;
	return true;
}

void pm_instance_arch(struct pm_state *p, const char *libc_path)
{
	p->libc_path = libc_path ? libc_path : "";
	p->arch = hw_elf_arch_at(p->t, p->libc_base);
	if (!p->arch)
		p->arch = p->t->arch;
	p->guest = p->arch != p->t->arch;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* An mmapped chunk says nothing of the malloc that made it, and every
   libc copy's scan finds every one.  mmap places a process's mappings
   near its libraries (the kernel top-down for a native libc, qemu-user
   from its guest's mmap base for the guest's), so the chunk goes to the
   nearest libc copy.  A heuristic, needed only with several copies; the
   mp_ counts check it (pm_find_mmapped notes a disagreement).  */
bool pm_mmapped_ours(const struct pm_state *p, uint64_t addr)
{
	const struct hw_target *t = p->t;
	uint64_t mine = distance(addr, p->libc_base);
	for (size_t i = 0; i < t->nfiles; i++)
		if (pm_libc_copy_at(t, i) && t->files[i].start != p->libc_base &&
		    distance(addr, t->files[i].start) < mine)
			return false;
	return true;
}

/* What ptmalloc holds from the system: every arena's heap memory and the
   mmapped chunks found, or until they are looked for, mp_'s count of
   them (damage could inflate it: only the choice of the default instance
   and summary's instance list rest on it).  */
static void pm_describe(void *state, struct hw_instance_info *info)
{
	const struct pm_state *p = state;
	info->module = p->libc_path;
	info->arch = p->arch;
	info->held = p->mmapped_done ? 0 : p->mmapped_mem;
	for (size_t i = 0; i < p->nmmapped; i++)
		info->held += p->mmapped[i].size + p->mmapped[i].tail;
	for (size_t i = 0; i < p->narenas; i++)
		info->held += p->arenas[i].system_mem;
}

static const char *pm_version(void *state)
{
	return ((struct pm_state *)state)->version;
}

static size_t pm_narenas(void *state)
{
	return ((struct pm_state *)state)->narenas;
}

/* What a walk of everything needs first.  */
static void pm_prepare_all(struct pm_state *p)
{
	pm_walk_lists(p);
	pm_find_mmapped(p);
}

/* A walk in address order shows each chunk's bin.  Commands that show
   no list (chunks, frag, map: they declare no HW_NEED_LISTS) take the
   bins from the sums of a first walk in threads; the others, and a
   session that did not say what it needs, walk the lists.  */
static void prepare_in_order(struct pm_state *p)
{
	unsigned needs = p->s->opts.needs;
	if (p->bins_summed && p->fast_lists_done)
		pm_find_mmapped(p);
	else if (needs && !(needs & HW_NEED_LISTS) && pm_link_sums_usable(p))
		pm_settle_lists(p);
	else
		pm_prepare_all(p);
}

static bool pm_chunks(void *state, hw_chunk_fn *fn, void *cookie)
{
	struct pm_state *p = state;
	prepare_in_order(p);
	return pm_walk_chunks(p, fn, cookie);
}

/* The walk in address order in pieces: the walk in threads that settles
   the lists marks them; when the lists were walked instead, one walk in
   threads marks them (and takes the findings a first walk takes).  */
static size_t pm_pieces(void *state, unsigned nthreads)
{
	struct pm_state *p = state;
	p->pieces.want = true;
	prepare_in_order(p);
	if (!p->pieces.marked) {
		void *cookies[PM_MAX_PARTS] = { NULL };
		atomic_fetch_add(&p->s->work.walks, 1);
		pm_walk_chunks_parallel(p, nthreads, pm_take_nothing, cookies,
					PM_WALK_ALL);
	}
	return pm_pieces_build(p);
}

static bool pm_chunks_piece(void *state, size_t i, hw_chunk_fn *fn,
			    void *cookie)
{
	return pm_walk_piece(state, i, fn, cookie);
}

static bool pm_chunks_around(void *state, uint64_t addr, size_t before,
			     size_t after, hw_chunk_fn *fn, void *cookie)
{
	return pm_walk_around(state, addr, before, after, fn, cookie);
}

/* A walk for counting (summary, sizes): every chunk's state, its bin
   only where it is a tcache or fastbin.  Rather than walk the small and
   large bins first (millions of scattered reads on a big heap), the walk
   hashes the links of their chunks, and the sums settle it afterwards
   (linksums.c); only when they disagree are those lists walked, to say
   where they break.  */
static bool pm_chunks_parallel(void *state, unsigned nparts, hw_chunk_fn *fn,
			       void *const cookies[], hw_chunk_fn *restate)
{
	struct pm_state *p = state;
	if (!pm_link_sums_usable(p)) {
		pm_prepare_all(p);
		return pm_walk_chunks_parallel(p, nparts, fn, cookies,
					       PM_WALK_ALL);
	}
	/* Guesses are given as free: only a caller that can take them
	   back (restate) may have them.  */
	return pm_walk_by_sums(p, nparts, fn, cookies, restate,
			       restate != NULL, false);
}

static bool pm_states_parallel(void *state, unsigned nparts,
			       hw_chunk_fn *fn, void *const cookies[],
			       hw_chunk_fn *restate)
{
	struct pm_state *p = state;
	pm_find_mmapped(p);
	if (!restate || p->lists_done || p->fast_lists_done) {
		pm_walk_fast_lists(p);
		return pm_walk_chunks_parallel(p, nparts, fn, cookies,
					       PM_WALK_STATES);
	}
	/* No fast list read yet.  The tcaches are few entries, read first:
	   a broken tcache list's orphans are found by the chunk walk
	   (pm_tcache_orphan).  The fastbin entries are guessed (linksums.c)
	   and given as free; if the guesses' sums disagree they are given
	   again as in use.  Without guessing (or after wrong guesses),
	   fastbin chunks go out as in use (their headers say so) and are
	   given again as free once the lists are read, when the walk has
	   brought the heap's pages in.  */
	pm_walk_tcaches(p);
	bool guess = pm_fast_guess_begin(p);
	bool ok = pm_walk_chunks_parallel(p, nparts, fn, cookies,
					  PM_WALK_STATES |
					  (guess ? PM_WALK_GUESS_FAST : 0));
	enum pm_guess_end end = !guess ? PM_GUESS_DROPPED
			      : pm_fast_guess_settle(p, ok, ok ? restate : NULL,
						     cookies[0]);
	if (end == PM_GUESS_SETTLED)
		return ok;
	if (end == PM_GUESS_STOPPED)
		return false;
	pm_walk_fast_lists(p);
	return ok && pm_retract_parked(p, restate, cookies[0]) &&
	       pm_retract_fast_orphans(p, restate, cookies[0]);
}

/* main_arena and mp_ (in libc's data), and each thread heap's header:
   its heap_info, and in an arena's first heap the malloc_state.  */
static void pm_internal(void *state, hw_range_fn *fn, void *cookie)
{
	struct pm_state *p = state;
	if (p->main_arena && p->l.ms_sizeof)
		fn(cookie, p->main_arena, p->main_arena + p->l.ms_sizeof);
	if (p->mp && p->l.mp_sizeof)
		fn(cookie, p->mp, p->mp + p->l.mp_sizeof);
	for (size_t i = 0; i < p->nheaps; i++)
		if (p->heaps[i].info && p->heaps[i].info < p->heaps[i].start)
			fn(cookie, p->heaps[i].info, p->heaps[i].start);
}

static uint64_t pm_arena_addr(void *state, int32_t arena)
{
	const struct pm_state *p = state;
	return arena >= 0 && (size_t)arena < p->narenas ? p->arenas[arena].addr
							: 0;
}

static void pm_summary(void *state, struct hw_emitter *e)
{
	struct pm_state *p = state;
	/* (After a counting walk whose link sums agreed, the bins' totals
	   are known without their lists.)  */
	if (p->bins_summed || p->free_summed)
		pm_find_mmapped(p);
	else
		pm_prepare_all(p);
	pm_report_summary(p, e);
}

static enum hw_status pm_arenas(void *state, struct hw_emitter *e)
{
	pm_prepare_all(state);
	return pm_report_arenas(state, e);
}

static enum hw_status pm_bins(void *state, struct hw_emitter *e,
			      const char *kind)
{
	pm_walk_lists(state);
	return pm_report_bins(state, e, kind, false);
}

static int32_t pm_thread_arena(void *state, int64_t tid, const char **why)
{
	struct pm_state *p = state;
	if (!p->thread_arenas) {
		*why = p->how_thread_arena;
		return -1;
	}
	for (size_t i = 0; i < p->nthread_arenas; i++) {
		const struct pm_thread_arena *ta = &p->thread_arenas[i];
		if (ta->tid != tid)
			continue;
		*why = ta->arena == PM_TA_NONE ? "it never called malloc"
		       : ta->arena == PM_TA_OTHER ? "its thread_arena is no "
						     "arena's address"
		       : "its thread_arena is not in the core";
		return ta->arena >= 0 ? ta->arena : -1;
	}
	*why = "no such thread in the target";
	return -1;
}

static enum hw_status pm_tcaches(void *state, struct hw_emitter *e,
				 int64_t tid)
{
	/* (The walk's count of each list's entries comes with the lists.)  */
	pm_walk_tcaches(state);
	return pm_report_tcaches(state, e, tid);
}

static enum hw_status pm_bins_list(void *state, struct hw_emitter *e,
				   const char *kind)
{
	pm_walk_lists(state);
	return pm_report_bins(state, e, kind, true);
}

static const struct hw_maps_nouns pm_maps_nouns = {
	.in_use = "malloc heap",
	.main_arena = "malloc heap, main arena",
	.mmapped = "mmapped chunks",
	.unused = "unused memory",
};

/* glibc malloc.c's entry points (exported, so named in any libc) and
   the internal functions a symbol table (libc6-dbg, a static program's
   .symtab) names too.  */
static const char *const pm_functions[] = {
	"malloc", "free", "calloc", "realloc", "cfree", "memalign",
	"posix_memalign", "aligned_alloc", "valloc", "pvalloc",
	"malloc_trim", "malloc_usable_size", "__libc_malloc", "__libc_free",
	"__libc_calloc", "__libc_realloc", "__libc_memalign",
	"__libc_valloc", "__libc_pvalloc", "__posix_memalign",
	"_int_malloc", "_int_free", "_int_free_*", "_int_realloc",
	"_int_memalign", "malloc_consolidate", "sysmalloc", "tcache_*",
	"unlink_chunk", "arena_get2", "arena_get_retry", "get_free_list",
	"reused_arena", "_int_new_arena", "malloc_printerr", "mtrim",
	"systrim", "heap_trim", "new_heap", "alloc_new_heap", "grow_heap",
	"shrink_heap", "munmap_chunk", "mremap_chunk", NULL,
};

const struct hw_allocator_ops hw_ptmalloc_ops = {
	.name = "ptmalloc",
	.functions = pm_functions,
	.maps_nouns = &pm_maps_nouns,
	/* Each heap's top chunk: memory at its end glibc may give back.  */
	.reserve_places = HW_PLACE_BIT(HW_WHERE_TOP),
	.open = pm_open,
	.count = pm_count_libcs,
	.describe = pm_describe,
	.close = pm_close,
	.settle = pm_settle,
	.version = pm_version,
	.narenas = pm_narenas,
	.chunks = pm_chunks,
	.chunks_parallel = pm_chunks_parallel,
	.states_parallel = pm_states_parallel,
	.chunks_around = pm_chunks_around,
	.pieces = pm_pieces,
	.chunks_piece = pm_chunks_piece,
	.summary = pm_summary,
	.arenas = pm_arenas,
	.arena = pm_report_arena,
	.params = pm_report_mp,
	.tcaches = pm_tcaches,
	.thread_arena = pm_thread_arena,
	.bins = pm_bins,
	.bins_list = pm_bins_list,
	.size_class = pm_size_class,
	.arena_addr = pm_arena_addr,
	.block_align = PM_ALIGN,
	.header_bytes = PM_HDR,
	.internal = pm_internal,
	.check = NULL,
	.anatomy = pm_anatomy,
};
