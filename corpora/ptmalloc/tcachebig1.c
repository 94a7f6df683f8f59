/* tcachebig1 - glibc 2.42+'s large tcache bins: chunks of several sizes
 * above the small bins' 0x410, two of them mmapped, freed into a tcache
 * whose size limit the glibc.malloc.tcache_max tunable raised, then
 * abort() for a core.
 *
 *   gcc -O0 -g -pthread -o prog tcachebig1.c && ./prog truth.txt
 *
 * Tunables are read when the program starts, so it runs itself again
 * with GLIBC_TUNABLES set (nothing else in its environment changes).
 * Large bin i (64-75) holds the chunk sizes [2^(i-54), 2^(i-53)), kept
 * sorted, 16 chunks at most; from 2.43 a freed mmapped chunk goes there
 * too.  The program refuses (exit 2) on a glibc older than 2.43, whose
 * tcache would not take them all.  The ground truth goes to argv[1]
 * (format: truth.h).
 */
#include "truth.h"

#include <stdio.h>

#define TUNABLES "glibc.malloc.tcache_max=2000000"

/* Each is freed into a large tcache bin; 1100 and 1500 share bin 64,
   300000 and 1 MiB are mmapped.  */
static const size_t sizes[] = { 1500, 1100, 3000, 5000, 20000, 70000,
				300000, 1 << 20 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: tcachebig1 TRUTHFILE");
	const char *tun = getenv("GLIBC_TUNABLES");
	if (!tun || strcmp(tun, TUNABLES) != 0) {
		if (setenv("GLIBC_TUNABLES", TUNABLES, 1) != 0)
			die("setenv failed");
		execv("/proc/self/exe", argv);
		die("cannot run itself again");
	}
	truth_open(argv[1], "tcachebig1");
	if (glibc_minor() < 43) {
		out_str("# needs glibc 2.43+\n");
		_exit(2);
	}
	int t = thread_register();
	void *p[NSIZES];

	ta(t, 17);
	for (size_t i = 0; i < NSIZES; i++) {
		p[i] = ta(t, sizes[i]);
		ta(t, 40);           /* a live guard after each */
	}
	if (T[t].r[1 + 2 * 6].w != W_MMAPPED || T[t].r[1 + 2 * 7].w != W_MMAPPED)
		die("plan error: the big ones are not mmapped");
	for (size_t i = 0; i < NSIZES; i++) {
		struct rec *r = find_rec(t, p[i]);
		r->w = W_TCACHE;
		free(p[i]);
	}
	truth_threads_and_allocs();
	truth_mallinfo_and_abort();
	return 0;
}
