/* unpack-holes.c - the runs of zeros of an unpacked core, mapped from
 * the zero page (see unpack-holes.h for why).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "unpack-holes.h"

/* At most this many holes (twice as many pieces mapped): far below the
   default vm.max_map_count (65530), with room left for everything else
   heapwalk maps.  */
#define HOLES_MAX 8192
/* Runs shorter than this are not worth a mapping of their own, at
   first: when there are too many, the bar is raised.  */
#define HOLE_MIN (64u << 10)

bool hw_holes_init(struct hw_holes *h)
{
	long page = sysconf(_SC_PAGESIZE);
	*h = (struct hw_holes){
		.v = malloc(HOLES_MAX * sizeof *h->v),
		.min = HOLE_MIN,
		.page = page > 0 ? (uint64_t)page : 4096,
		.zero_from = UINT64_MAX,
	};
	if (h->min < h->page)
		h->min = h->page;
	return h->v != NULL;
}

void hw_holes_free(struct hw_holes *h)
{
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

/* Keep [start, end), cut to whole pages, if it is long enough; when the
   list is full, keep only the runs at least twice as long as before.  */
static void add_hole(struct hw_holes *h, uint64_t start, uint64_t end)
{
	start = (start + h->page - 1) & ~(h->page - 1);
	end &= ~(h->page - 1);
	if (end <= start || end - start < h->min)
		return;
	while (h->n == HOLES_MAX) {
		h->min *= 2;
		size_t out = 0;
		for (size_t i = 0; i < h->n; i++)
			if (h->v[i].end - h->v[i].start >= h->min)
				h->v[out++] = h->v[i];
		h->n = out;
		if (end - start < h->min)
			return;
	}
	h->v[h->n++] = (struct hw_hole){ start, end };
}

void hw_holes_block(struct hw_holes *h, uint64_t off, bool zero)
{
	if (zero) {
		if (h->zero_from == UINT64_MAX)
			h->zero_from = off;
		return;
	}
	if (h->zero_from != UINT64_MAX)
		add_hole(h, h->zero_from, off);
	h->zero_from = UINT64_MAX;
}

uint8_t *hw_holes_map(struct hw_holes *h, int fd, uint64_t size)
{
	if (h->zero_from != UINT64_MAX)
		add_hole(h, h->zero_from, size);
	h->zero_from = UINT64_MAX;
	if (size == 0 || size > SIZE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* MAP_NORESERVE: the holes are only ever read.  */
	uint8_t *base = mmap(NULL, size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	uint64_t at = 0;   /* where the data after the last hole starts */
	for (size_t i = 0; i <= h->n; i++) {
		uint64_t end = i < h->n ? h->v[i].start : size;
		if (end > at &&
		    mmap(base + at, end - at, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_FIXED, fd, (off_t)at) == MAP_FAILED) {
			int e = errno;
			munmap(base, size);
			errno = e;
			return NULL;
		}
		if (i < h->n)
			at = h->v[i].end;
	}
	return base;
}
