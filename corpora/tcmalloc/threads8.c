/* threads8 - eight threads on Debian's gperftools tcmalloc, one after
 * the other (turns), each building its own heap (truth.h's scenario,
 * varied by thread) in its own thread cache, then parked alive while
 * the main thread aborts: every thread cache still holds its frees.
 *
 *   gcc -O0 -g -pthread -o prog threads8.c -ltcmalloc_minimal
 *   ./prog truth.txt
 *
 * Built with -DTC_FULL against -ltcmalloc.  Format: truth.h.
 */
#include "truth.h"

#ifdef TC_FULL
#define FULL true
#else
#define FULL false
#endif

#define NTHREADS 8

static void *worker(void *arg)
{
	unsigned v = (unsigned)(uintptr_t)arg;
	turn_wait((int)v);
	int t = thread_register();
	build_heap(t, v);
	turn_pass((int)v + 1);
	park_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t th[NTHREADS];
	if (argc != 2)
		die("usage: threads8 TRUTHFILE");
	live_truth_open(argv[1]);
	int t = thread_register();
	tc_warmup();
	/* Every thread is made before the first recorded free: making one
	   mallocs (glibc's thread-local storage vectors), and such an
	   unrecorded block could take a freed record's memory.  */
	turn = -2;
	for (unsigned i = 1; i <= NTHREADS; i++)
		if (pthread_create(&th[i - 1], NULL, worker,
				   (void *)(uintptr_t)i) != 0)
			die("pthread_create failed");
	turn_pass(1);
	turn_wait(NTHREADS + 1);
	build_heap(t, 0);
	truth_write_and_abort("threads8", FULL);
}
