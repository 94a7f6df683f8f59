/* prefault.c - fault a mapped core's memory in from a helper thread,
 * and drop it in threads when done.
 *
 * On a big core, a walk takes tens of thousands of page faults on the
 * (page-cached) core file, and it can only start after symbols and debug
 * info are loaded, which keeps one CPU busy for tens of milliseconds while
 * the other idles.  So a walker that knows (or guesses) what it will read
 * has a helper thread read one byte per 64 KiB of it meanwhile: each read
 * faults in that 64 KiB window (the kernel's fault-around), and the walk
 * later finds its pages mapped.  It changes nothing.  Only walkers that
 * read nearly every page should use it (ptmalloc's chunk walk does;
 * jemalloc's walk reads metadata and slab headers, and faulting in all of
 * a 3 GiB core made it slower).  It reads rather than calling
 * madvise(MADV_POPULATE_READ): populating holds the address-space lock
 * for long stretches, which stalled the main thread's own mmap calls
 * (measured: no gain), while a fault holds it only briefly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../session/session.h"
#include "prefault.h"

#define PREFAULT_STEP (64u << 10)             /* the fault-around window */
#define PREFAULT_CHECK ((64u << 20) / PREFAULT_STEP) /* steps between stop checks */

static void *prefault_run(void *arg)
{
	struct hw_prefault *pf = arg;
	uint8_t sum = 0;
	unsigned steps = 0;
	for (size_t i = 0; i < pf->nranges; i++) {
		const volatile uint8_t *d = pf->ranges[i].data;
		for (uint64_t off = 0; off < pf->ranges[i].len;
		     off += PREFAULT_STEP) {
			if (++steps % PREFAULT_CHECK == 0 &&
			    atomic_load_explicit(&pf->stop,
						 memory_order_relaxed))
				return NULL;
			sum ^= d[off];
		}
	}
	return (void *)(uintptr_t)sum;   /* keeps the reads */
}

bool hw_prefault_add(struct hw_prefault *pf, const uint8_t *data, uint64_t len)
{
	if (pf->started || pf->nranges == HW_PREFAULT_MAX)
		return false;
	pf->ranges[pf->nranges].data = data;
	pf->ranges[pf->nranges].len = len;
	pf->nranges++;
	return true;
}

void hw_prefault_start(struct hw_prefault *pf)
{
	atomic_init(&pf->stop, false);
	if (pf->nranges > 0 && !pf->started)
		pf->started = pthread_create(&pf->tid, NULL, prefault_run,
					     pf) == 0;
}

void hw_prefault_stop(struct hw_prefault *pf)
{
	if (!pf->started)
		return;
	atomic_store(&pf->stop, true);
	pthread_join(pf->tid, NULL);
	pf->started = false;
}

bool hw_target_prefault_add(struct hw_target *t, const struct hw_region *r)
{
	if (!t->prefault && !(t->prefault = calloc(1, sizeof *t->prefault)))
		return false;
	if (t->prefault->started || !r->data)
		return false;
	return hw_prefault_add(t->prefault, r->data, r->avail);
}

void hw_target_prefault_start(struct hw_target *t)
{
	if (t->prefault && !t->prefault->started)
		hw_prefault_start(t->prefault);
}

bool hw_target_prefault_started(const struct hw_target *t)
{
	return t->prefault && t->prefault->nranges;
}

void hw_target_prefault_end(struct hw_target *t)
{
	if (!t->prefault)
		return;
	hw_prefault_stop(t->prefault);
	free(t->prefault);
	t->prefault = NULL;
}

/* Tearing down the page table entries of a walked core is the last thing
   a command does, and with one thread it is slow: munmap of 1.6 GiB of
   mapped pages took 50 ms on the bench core.  munmap holds the address-
   space lock for writing, so it cannot be split; dropping the pages
   (MADV_DONTNEED) takes it for reading, so threads drop a slice each
   (two threads: 28 ms), and the empty mapping then goes at once.  */
#define UNMAP_SLICE_MIN (64u << 20)

struct unmap_slice {
	uint8_t *base;
	size_t len;
};

static void *drop_slice(void *arg)
{
	struct unmap_slice *sl = arg;
	madvise(sl->base, sl->len, MADV_DONTNEED);
	return NULL;
}

void hw_unmap_parallel(void *map, size_t size, unsigned nthreads)
{
	struct unmap_slice sl[HW_MAX_PARTS];
	if (nthreads > HW_MAX_PARTS)
		nthreads = HW_MAX_PARTS;
	if (nthreads > size / UNMAP_SLICE_MIN)
		nthreads = (unsigned)(size / UNMAP_SLICE_MIN);
	if (nthreads > 1) {
		size_t step = (size / nthreads + 4095) & ~(size_t)4095, at = 0;
		unsigned n = 0;
		while (at < size && n < nthreads) {
			size_t len = size - at < step ? size - at : step;
			sl[n++] = (struct unmap_slice){ (uint8_t *)map + at, len };
			at += len;
		}
		hw_run_parts(sl, sizeof *sl, n, drop_slice);
	}
	munmap(map, size);
}
