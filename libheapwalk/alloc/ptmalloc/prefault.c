/* prefault.c - guess the heaps early, so their pages are faulted in while
 * symbols and debug info load (the target's helper: target/prefault.c
 * says why).
 *
 * Nothing is known yet (no main_arena, no layout), so this goes by what
 * every glibc 2.17-2.44 leaves behind: a thread heap is a mapping aligned
 * to HEAP_MAX_SIZE (64 MiB on LP64) that starts with a heap_info whose
 * size and mprotect_size are sane and whose prev is 0 or another aligned
 * heap; the brk heap is the first anonymous writable mapping after the
 * executable's.  A wrong guess costs the helper some reads, nothing more:
 * the walk itself never relies on this.
 */
#include <string.h>

#include "ptmalloc.h"

#define GUESS_HEAP_MAX (64ull << 20)

static bool looks_like_thread_heap(struct hw_target *t,
				   const struct hw_region *r)
{
	uint64_t w[4];
	if (r->start & (GUESS_HEAP_MAX - 1) || r->avail < sizeof w)
		return false;
	if (!hw_read(t, r->start, w, sizeof w))
		return false;
	/* ar_ptr, prev, size, mprotect_size */
	return w[0] && !(w[1] & (GUESS_HEAP_MAX - 1)) && w[1] != r->start &&
	       w[2] >= 4096 && w[2] <= GUESS_HEAP_MAX && w[3] >= w[2] &&
	       w[3] <= GUESS_HEAP_MAX;
}

void pm_prefault_start(struct pm_state *p)
{
	struct hw_target *t = p->t;
	const char *exe = t->exe;
	size_t after_exe = 0;
	for (size_t i = 0; i < t->nregions; i++)
		if (exe && t->regions[i].file >= 0 &&
		    strcmp(t->files[t->regions[i].file].path, exe) == 0)
			after_exe = i + 1;
	for (size_t i = 0; i < t->nregions; i++) {
		const struct hw_region *r = &t->regions[i];
		if (r->file >= 0 || !(r->prot & HW_PROT_W) || !r->data ||
		    r->avail < (1u << 20))
			continue;
		if ((i == after_exe && exe) || looks_like_thread_heap(t, r))
			if (!hw_target_prefault_add(t, r))
				break;
	}
	hw_target_prefault_start(t);
}
