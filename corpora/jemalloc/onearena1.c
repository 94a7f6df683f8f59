/* onearena1 - one thread, one arena on Debian's jemalloc: basic1's heap
 * without its very large (>= 8 MiB) allocations, so 5.3's huge arena is
 * never created, then a server-like churn: many small strings, every other
 * one freed.  abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog onearena1.c -ljemalloc && ./prog truth.txt
 *
 * Why it exists: with a single arena the arena's index is 0, and arena_t
 * holds, well before its base pointer, pointers to free extents a little
 * below it (the extent caches' smallest addresses) whose first word is 0,
 * just like base_t.ind of arena 0.  A reader that takes the first such
 * offset for arena_t.base finds no base_t; every core of basic1/threads8
 * has a second arena, whose index 1 rules those decoys out.
 *
 * The ground truth goes to argv[1] (format: truth.h).  Nothing here may
 * call malloc except through the recorded ja()/jf() helpers.
 */
#include "truth.h"

#define STRINGS 6000

int main(int argc, char **argv)
{
	static void *str[STRINGS];

	if (argc != 2)
		die("usage: onearena1 TRUTHFILE");
	live_truth_open(argv[1]);
	int t = thread_register();
	je_config();
	void *first = ja(t, 100);
	je_warmup(first);

	/* v = 1: build_heap's very large allocations are for v % 3 == 0.  */
	build_heap(t, 1, 1);
	/* Keys and values of 17 to 120 bytes, then every other one freed
	   (tcache, then slabs as the tcache overflows).  */
	for (unsigned i = 0; i < STRINGS; i++)
		str[i] = ja(t, 17 + (i * 7) % 104);
	for (unsigned i = 0; i < STRINGS; i += 2)
		jf(t, str[i]);
	tcache_flush();
	final_frees(t, 1);
	truth_write_and_abort("onearena1");
}
