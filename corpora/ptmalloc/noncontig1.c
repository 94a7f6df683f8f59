/* noncontig1 - a main arena in pieces: the program break is blocked by a
 * mapping right after it, so glibc's sysmalloc goes on in mmapped memory
 * (1 MiB at least a time), marks main_arena NONCONTIGUOUS and ends the
 * brk heap with fenceposts.  Chunks are freed into the bins in every
 * piece, then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog noncontig1.c && ./prog truth.txt
 *
 * The ground truth goes to argv[1] (format: truth.h).  glibc frees the
 * brk heap's leftover top itself: that chunk is not in the truth.
 */
#include "truth.h"

#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define BIG 4000        /* chunk 0xfb0: neither tcache nor fastbin */
#define NBIG 600        /* about 2.4 MiB: three mmapped pieces */

/* The size of top, read from the chunk just below it.  */
static size_t top_after(const void *p)
{
	const char *top = (const char *)p - 16 + chunk_size(p);
	return ((const size_t *)top)[1] & ~(size_t)7;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: noncontig1 TRUTHFILE");
	truth_open(argv[1], "noncontig1");
	int t = thread_register();
	void *big[NBIG];

	/* The brk heap: live odds and ends, four large-bin chunks.  */
	ta(t, 0);
	ta(t, 17);
	ta(t, 1000);
	void *lg[4];
	for (int i = 0; i < 4; i++) {
		lg[i] = ta(t, 1200);
		ta(t, 130);
	}
	for (int i = 0; i < 4; i++)
		tf(t, lg[i]);
	/* Use up top, so that what is left of it cannot serve a BIG.  */
	void *p = sort_unsorted(t, BIG);
	while (top_after(p) >= (BIG + 8 + 15) / 16 * 16 + 32)
		p = ta(t, BIG);

	/* Block the break: a page right at it.  */
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t brk_end = ((uintptr_t)sbrk(0) + (uintptr_t)ps - 1) &
			    ~((uintptr_t)ps - 1);
	void *blk = mmap((void *)brk_end, (size_t)ps, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
	if (blk != (void *)brk_end)
		die("cannot map a page at the program break");

	/* Everything from here lies in mmapped pieces.  */
	for (int i = 0; i < NBIG; i++)
		big[i] = ta(t, BIG);
	if ((uintptr_t)big[0] >= brk_end - (uintptr_t)(1 << 30) &&
	    (uintptr_t)big[0] < brk_end)
		die("the main arena did not leave the brk heap");

	/* Into the unsorted bin, in every piece: chunks with a live
	   neighbour on both sides (not the last before a fencepost).  */
	for (int i = 10; i + 1 < NBIG; i += 20)
		if ((char *)big[i] + chunk_size(big[i]) == (char *)big[i + 1] &&
		    (char *)big[i - 1] + chunk_size(big[i - 1]) ==
			    (char *)big[i])
			tf(t, big[i]);

	truth_threads_and_allocs();
	truth_mallinfo_and_abort();
}
