/* ptmalloc.c - glibc malloc behind the allocator interface.
 *
 * Opening does all the metadata work once: roots, heaps, every free list
 * and the mmapped chunks.  Chunk walks afterwards are linear passes over
 * the heaps that allocate nothing.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "ptmalloc.h"

static void pm_close(void *state)
{
	struct pm_state *p = state;
	if (!p)
		return;
	hw_prefault_stop(&p->prefault);
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

static enum hw_status pm_open(struct hw_session *s, void **state)
{
	struct pm_state *p = calloc(1, sizeof *p);
	if (!p)
		return hw_error(s, HW_NO_ALLOCATOR, "out of memory");
	p->s = s;
	p->t = s->target;
	pm_prefault_start(p);
	enum hw_status st = pm_find_roots(p);
	if (st == HW_OK)
		st = pm_find_heaps(p);
	if (st != HW_OK) {
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
	pm_era_conclude(p);
	pm_walk_lists(p);
	pm_find_mmapped(p);
	*state = p;
	return HW_OK;
}

static const char *pm_version(void *state)
{
	return ((struct pm_state *)state)->version;
}

static size_t pm_narenas(void *state)
{
	return ((struct pm_state *)state)->narenas;
}

static bool pm_chunks(void *state, hw_chunk_fn *fn, void *cookie)
{
	return pm_walk_chunks(state, fn, cookie);
}

static bool pm_chunks_parallel(void *state, unsigned nparts, hw_chunk_fn *fn,
			       void *const cookies[])
{
	return pm_walk_chunks_parallel(state, nparts, fn, cookies);
}

const struct hw_allocator_ops hw_ptmalloc_ops = {
	.name = "ptmalloc",
	.open = pm_open,
	.close = pm_close,
	.version = pm_version,
	.narenas = pm_narenas,
	.chunks = pm_chunks,
	.chunks_parallel = pm_chunks_parallel,
	.summary = pm_report_summary,
	.arenas = pm_report_arenas,
	.bins = pm_report_bins,
	.size_class = pm_size_class,
	.check = NULL,
};
