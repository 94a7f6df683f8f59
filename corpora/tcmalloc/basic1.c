/* basic1 - one thread on Debian's gperftools tcmalloc: every size class,
 * blocks freed into the thread cache and, for one class in ten, so many
 * that the cache hands them back to the central free lists; large spans
 * live and freed (back to the page heap); then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog basic1.c -ltcmalloc_minimal
 *   ./prog truth.txt
 *
 * Built with -DTC_FULL against -ltcmalloc, the library with the heap
 * checker and profiler.  The ground truth goes to argv[1] (format:
 * truth.h).  Nothing here may call malloc except through the recorded
 * ta()/tf() helpers.
 */
#include "truth.h"

#ifdef TC_FULL
#define FULL true
#else
#define FULL false
#endif

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: basic1 TRUTHFILE");
	live_truth_open(argv[1]);
	int t = thread_register();
	tc_warmup();
	build_heap(t, 0);
	truth_write_and_abort("basic1", FULL);
}
