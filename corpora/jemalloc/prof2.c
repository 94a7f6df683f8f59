/* prof2 - a jemalloc heap profile at the default sample rate (malloc_conf
 * "prof:true": lg_prof_sample 19, one sample per 512 KiB allocated on
 * average), so the profile is an estimate: heapwalk's `prof` must report
 * per site what jemalloc's own estimate says, which must be near the true
 * live bytes this program records.  Then prof.dump (DIR/prof.heap) and
 * abort() for a core, as prof1.c.
 *
 *   gcc -O0 -g -pthread -o prog prof2.c -ljemalloc && ./prog truth.txt
 *
 * Two sites, each allocating about 560 MiB in objects of 4 to 64 KiB (a
 * fixed pseudo-random sequence) and freeing every fifth: about 450 MiB
 * live each.
 *   prof2_site_main    in the main thread
 *   prof2_site_worker  in thread "prof2-worker", which is joined before
 *                      the dump (its profile data outlives it: jemalloc
 *                      keeps a detached thread's counters)
 * Why so much: jemalloc samples an object of usable size s with
 * probability p = 1 - exp(-s/R) (R = 2^lg_prof_sample) and counts each
 * sample as s/p bytes (5.3's unbiasing; jeprof's scaling), so the
 * estimate of B live bytes has variance sum(s^2 (1-p)/p) <= R * B: a
 * relative standard deviation of at most sqrt(R/B), 3.3% for B = 450
 * MiB, which puts the test's 15% bound 4.5 standard deviations away (60
 * MiB would leave it 1.6 sigma away, a failure in every tenth core).
 * The memory is never written, so its pages are never present and the
 * kernel leaves them out of the core (a sparse file of a few MiB on disk;
 * a gdb gcore fallback writes them all, about 1 GiB).
 *
 * Truth format: proftruth.h (BYTES: the true live usable bytes, not
 * sampled).  Nothing here may call malloc except the sites (and
 * pthread_create's DTV, left out of the truth as in prof1.c).
 */
#include "proftruth.h"

/* Profiling on at jemalloc's default sample rate.  */
const char *malloc_conf = "prof:true";

#define SITE_BYTES (560ull << 20)

void prof2_site_main(void);
void prof2_site_main_end(void);
void prof2_site_worker(void);
void prof2_site_worker_end(void);

static int S_main, S_worker;

/* The next request size, 4 KiB to 64 KiB.  */
static size_t next_size(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return 4096 + (*state >> 8) % (60 * 1024 + 1);
}

__attribute__((noinline)) void prof2_site_main(void)
{
	uint32_t st = 1;
	int first = PT_nrecs;
	for (unsigned long long b = 0; b < SITE_BYTES;) {
		size_t n = next_size(&st);
		pt_alloc(S_main, malloc(n), n);
		b += n;
	}
	for (int i = first; i < PT_nrecs; i += 5)
		pt_free_rec(i);
}
__attribute__((noinline)) void prof2_site_main_end(void) {}

__attribute__((noinline)) void prof2_site_worker(void)
{
	uint32_t st = 2;
	int first = PT_nrecs;
	for (unsigned long long b = 0; b < SITE_BYTES;) {
		size_t n = next_size(&st);
		pt_alloc(S_worker, malloc(n), n);
		b += n;
	}
	for (int i = first + 2; i < PT_nrecs; i += 5)
		pt_free_rec(i);
}
__attribute__((noinline)) void prof2_site_worker_end(void) {}

static void *prof2_worker(void *arg)
{
	(void)arg;
	pt_name_thread("prof2-worker");
	prof2_site_worker();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: prof2 TRUTHFILE");
	pt_check_prof(19);
	S_main = pt_site("prof2_site_main", prof2_site_main, prof2_site_main_end);
	S_worker = pt_site("prof2_site_worker", prof2_site_worker,
			   prof2_site_worker_end);

	prof2_site_main();
	/* The worker runs alone: the main thread waits in pthread_join.  */
	pthread_t th;
	if (pthread_create(&th, NULL, prof2_worker, NULL) != 0)
		die("pthread_create failed");
	if (pthread_join(th, NULL) != 0)
		die("pthread_join failed");

	pt_dump_write_and_abort("prof2", argv[1]);
}
