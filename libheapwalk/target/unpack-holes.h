/* unpack-holes.h - where an unpacked core is zeros, and a mapping of it
 * that serves those stretches from the kernel's zero page.
 *
 * A hole in a memfd is no cheaper than data once it is read through a
 * mapping: each page read is allocated (shmem has no zero-page mapping),
 * and a walker that looks at every page of a mapping (ptmalloc's search
 * for mmapped chunks does) would fill memory with zeros it cannot give
 * back without swap.  An anonymous private mapping, read, maps the one
 * shared zero page instead (on the kernels that use it: some VM kernels
 * allocate there too, which is then no worse).  So the unpacked core is
 * mapped as an anonymous reservation of its whole length, with the memfd
 * mapped over it where it holds data: the long runs of zeros cost
 * nothing, even when read.  The number of pieces is bounded (each is a
 * kernel VMA, and a process has at most vm.max_map_count of them): when
 * the runs are too many, only the longer ones are kept as holes.
 */
#ifndef HW_UNPACK_HOLES_H
#define HW_UNPACK_HOLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hw_holes {
	struct hw_hole {
		uint64_t start, end;   /* page-aligned, [start, end) */
	} *v;
	size_t n;
	uint64_t min;         /* shorter runs are not kept */
	uint64_t page;        /* the system's page size */
	uint64_t zero_from;   /* where the run of zeros being passed
				 started, or UINT64_MAX */
};

/* An empty list; false when out of memory.  */
bool hw_holes_init(struct hw_holes *h);
void hw_holes_free(struct hw_holes *h);

/* The block of the file that starts at off holds only zeros, or (zero
   false) some data.  Blocks come in file order, one after the other.  */
void hw_holes_block(struct hw_holes *h, uint64_t off, bool zero);

/* Map the file fd, `size` bytes, with its holes (the last block passed
   must end at size) from the zero page: private and writable, as a plain
   core is mapped.  NULL (errno set) when it cannot be mapped; unmap with
   munmap(map, size).  */
uint8_t *hw_holes_map(struct hw_holes *h, int fd, uint64_t size);

#endif /* HW_UNPACK_HOLES_H */
