/* basic1 - one thread on Debian's jemalloc: every small size class, slabs
 * full and partly free, regions parked in the tcache and flushed back,
 * one bin whose tcache overflows, large and very large (>= 8 MiB)
 * allocations live and freed, then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog basic1.c -ljemalloc && ./prog truth.txt
 *
 * The ground truth goes to argv[1] (format: truth.h).  Nothing here may
 * call malloc except through the recorded ja()/jf() helpers.
 */
#include "truth.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: basic1 TRUTHFILE");
	live_truth_open(argv[1]);
	int t = thread_register();
	je_config();
	/* The first malloc sets up the thread's tcache; a very large one
	   also brings 5.3's huge arena into being before the warm-up.  */
	void *first = ja(t, 9u << 20);
	je_warmup(first);

	build_heap(t, 0, 1);
	final_frees(t, 0);
	truth_write_and_abort("basic1");
}
