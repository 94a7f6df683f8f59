/* bins1 - one thread; tcache, fastbins, unsorted, small and large bins,
 * mmapped chunks and top all populated, then abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog bins1.c && ./prog truth.txt
 *
 * The ground truth goes to argv[1] (format: truth.h).  Nothing here may
 * call malloc except through the recorded ta()/tf() helpers.
 */
#include "truth.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: bins1 TRUTHFILE");
	truth_open(argv[1], "bins1");
	int t = thread_register();

	/* mmapped chunks first and never freed: freeing one would raise the
	   dynamic mmap threshold.  */
	ta(t, 200000);
	ta(t, 300000);
	ta(t, 1 << 20);
	for (int i = 0; i < 3; i++)
		if (T[t].r[i].w != W_MMAPPED)
			die("a big allocation is not mmapped");

	build_bins(t, 0);

	truth_threads_and_allocs();
	truth_mallinfo_and_abort();
}
