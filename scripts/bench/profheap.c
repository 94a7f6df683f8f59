/* profheap - a jemalloc heap profile of a given size, for `make bench`.
 *
 *   MALLOC_CONF=prof:true,lg_prof_sample:0 LD_PRELOAD=libjemalloc.so.2 \
 *       profheap NOBJECTS
 *
 * Allocates NOBJECTS blocks of 64 bytes from 1024 distinct stacks (16
 * allocating functions, each reached through 0 to 63 levels of
 * recursion), so that with every allocation sampled jemalloc keeps
 * NOBJECTS sampled objects (each promoted to an extent of its own) in
 * 1024 records; then abort()s for a core.  The blocks are not written:
 * their pages stay untouched and the core small on disk.  Built with
 * -fno-optimize-sibling-calls: a tail call would leave its caller out of
 * the stack.
 */
#include <stdio.h>
#include <stdlib.h>

static void **keep;

#define LEAF(n) \
	__attribute__((noinline)) static void *leaf##n(void) \
	{ return malloc(64); }
LEAF(0) LEAF(1) LEAF(2) LEAF(3) LEAF(4) LEAF(5) LEAF(6) LEAF(7)
LEAF(8) LEAF(9) LEAF(10) LEAF(11) LEAF(12) LEAF(13) LEAF(14) LEAF(15)

static void *(*const leaves[16])(void) = {
	leaf0, leaf1, leaf2, leaf3, leaf4, leaf5, leaf6, leaf7,
	leaf8, leaf9, leaf10, leaf11, leaf12, leaf13, leaf14, leaf15,
};

/* volatile keeps the recursion from being turned into a loop.  */
__attribute__((noinline)) static void *descend(volatile unsigned depth,
					       unsigned leaf)
{
	if (depth == 0)
		return leaves[leaf]();
	void *p = descend(depth - 1, leaf);
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	if (n <= 0)
		return 2;
	keep = calloc((size_t)n, sizeof *keep);
	if (!keep)
		return 1;
	for (long i = 0; i < n; i++) {
		keep[i] = descend((unsigned)(i / 16 % 64), (unsigned)(i % 16));
		if (!keep[i])
			return 1;
	}
	fprintf(stderr, "profheap: %ld objects from 1024 stacks\n", n);
	abort();
}
