/* prof1 - a jemalloc heap profile with every allocation sampled: the
 * program turns profiling on through its own malloc_conf
 * (prof:true,lg_prof_sample:0), allocates from a few distinct functions,
 * frees some of it, lets a second thread (profile name "prof1-worker")
 * allocate and park, then has jemalloc write its own profile
 * (prof.dump: DIR/prof.heap next to the truth file), records its truth
 * and abort()s for a core.
 *
 *   gcc -O0 -g -pthread -o prog prof1.c -ljemalloc && ./prog truth.txt
 *
 * heapwalk's `prof` must turn the core into the same heap_v2 profile as
 * prof.heap, and attribute to each site exactly the live objects and
 * usable bytes the truth records (every allocation is sampled, so the
 * profile is exact).  Sites (each calls malloc itself, so its own return
 * address is the first frame below jemalloc's in the backtrace):
 *   prof_site_small   48 B x 100, 30 freed         (small size class)
 *   prof_site_large   5000 B x 20, 5 freed         (usable 5120)
 *   prof_site_huge    1 MiB x 3, 1 freed           (large extents)
 *   prof_inner        200 B x 40, 10 freed, called prof_outer ->
 *                     prof_middle -> prof_inner
 *   prof_site_inline  96 B x 30, 6 freed, always_inline into
 *                     prof_inline_host (DWARF: an inlined subroutine)
 *   prof_site_calloc  calloc(10, 40) x 12, 2 freed
 *   prof_site_realloc malloc(100) then realloc(.., 3000) x 8 (the live
 *                     objects' samples are the realloc's; the malloc's
 *                     went with the old objects)
 *   prof_site_thread  700 B x 25, 5 freed, in thread "prof1-worker",
 *                     which parks (stays alive) before the dump
 * Each site function is followed by an empty marker function NAME_end:
 * the site's code is [NAME, NAME_end) (see proftruth.h).
 *
 * On 5.3 it also turns on jemalloc's record of the last 48 sampled
 * allocations (prof_recent) and has jemalloc dump them too.
 *
 * Truth format: proftruth.h.  Nothing here may call malloc except the
 * sites and pthread_create (ld.so's DTV: in the profile, not in the
 * truth, like libstdc++'s start-up pool).
 */
#include "proftruth.h"

/* jemalloc reads this at initialisation: profiling on, every allocation
   sampled (sample period 2^0 = 1 byte).  */
const char *malloc_conf = "prof:true,lg_prof_sample:0";

/* On jemalloc 5.3 the program also keeps the last PROF1_RECENT sampled
   allocations and their frees (prof_recent): fewer than it makes, so the
   list has wrapped, and it holds frees from realloc and from the worker
   thread.  jemalloc dumps them as prof.recent.json next to prof.heap.  */
#define PROF1_RECENT 48

/* Public, so that every name is in the symbol table; not static, so
   that -O0 emits them in this order (the markers rely on it).  */
void prof_site_small(void);
void prof_site_small_end(void);
void prof_site_large(void);
void prof_site_large_end(void);
void prof_site_huge(void);
void prof_site_huge_end(void);
void prof_inner(void);
void prof_inner_end(void);
void prof_middle(void);
void prof_outer(void);
void prof_inline_host(void);
void prof_inline_host_end(void);
void prof_site_calloc(void);
void prof_site_calloc_end(void);
void prof_site_realloc(void);
void prof_site_realloc_end(void);
void prof_site_thread(void);
void prof_site_thread_end(void);

static int S_small, S_large, S_huge, S_inner, S_inline, S_calloc, S_realloc,
	S_thread;

__attribute__((noinline)) void prof_site_small(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 100; i++)
		pt_alloc(S_small, malloc(48), 48);
	for (int i = 0; i < 100; i++)
		if (i % 10 < 3)
			pt_free_rec(first + i);
}
__attribute__((noinline)) void prof_site_small_end(void) {}

__attribute__((noinline)) void prof_site_large(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 20; i++)
		pt_alloc(S_large, malloc(5000), 5000);
	for (int i = 0; i < 20; i += 4)
		pt_free_rec(first + i);
}
__attribute__((noinline)) void prof_site_large_end(void) {}

__attribute__((noinline)) void prof_site_huge(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 3; i++)
		pt_alloc(S_huge, malloc(1 << 20), 1 << 20);
	pt_free_rec(first + 1);
}
__attribute__((noinline)) void prof_site_huge_end(void) {}

__attribute__((noinline)) void prof_inner(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 40; i++)
		pt_alloc(S_inner, malloc(200), 200);
	for (int i = 0; i < 40; i += 4)
		pt_free_rec(first + i);
}
__attribute__((noinline)) void prof_inner_end(void) {}

__attribute__((noinline)) void prof_middle(void)
{
	prof_inner();
}

__attribute__((noinline)) void prof_outer(void)
{
	prof_middle();
}

/* Inlined even at -O0; DWARF describes it as an inlined subroutine of
   prof_inline_host, whose code is nothing but this.  */
static inline __attribute__((always_inline)) void prof_site_inline(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 30; i++)
		pt_alloc(S_inline, malloc(96), 96);
	for (int i = 0; i < 30; i += 5)
		pt_free_rec(first + i);
}

__attribute__((noinline)) void prof_inline_host(void)
{
	prof_site_inline();
}
__attribute__((noinline)) void prof_inline_host_end(void) {}

__attribute__((noinline)) void prof_site_calloc(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 12; i++)
		pt_alloc(S_calloc, calloc(10, 40), 400);
	pt_free_rec(first + 3);
	pt_free_rec(first + 7);
}
__attribute__((noinline)) void prof_site_calloc_end(void) {}

__attribute__((noinline)) void prof_site_realloc(void)
{
	for (int i = 0; i < 8; i++) {
		void *p = pt_alloc(S_realloc, malloc(100), 100);
		int old = PT_nrecs - 1;
		void *q = realloc(p, 3000);
		if (!q)
			die("realloc failed");
		/* realloc freed p (or moved it): the record goes.  */
		PT_rec[old].live = 0;
		pt_alloc(S_realloc, q, 3000);
	}
}
__attribute__((noinline)) void prof_site_realloc_end(void) {}

__attribute__((noinline)) void prof_site_thread(void)
{
	int first = PT_nrecs;
	for (int i = 0; i < 25; i++)
		pt_alloc(S_thread, malloc(700), 700);
	for (int i = 0; i < 25; i += 5)
		pt_free_rec(first + i);
}
__attribute__((noinline)) void prof_site_thread_end(void) {}

static void *prof_worker(void *arg)
{
	(void)arg;
	pt_name_thread("prof1-worker");
	prof_site_thread();
	pt_park_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		die("usage: prof1 TRUTHFILE");
	live_begin();
	pt_check_prof(0);
	pt_recent_begin(PROF1_RECENT);
	S_small = pt_site("prof_site_small", prof_site_small, prof_site_small_end);
	S_large = pt_site("prof_site_large", prof_site_large, prof_site_large_end);
	S_huge = pt_site("prof_site_huge", prof_site_huge, prof_site_huge_end);
	S_inner = pt_site("prof_inner", prof_inner, prof_inner_end);
	S_inline = pt_site("prof_site_inline", prof_inline_host,
			   prof_inline_host_end);
	S_calloc = pt_site("prof_site_calloc", prof_site_calloc,
			   prof_site_calloc_end);
	S_realloc = pt_site("prof_site_realloc", prof_site_realloc,
			    prof_site_realloc_end);
	S_thread = pt_site("prof_site_thread", prof_site_thread,
			   prof_site_thread_end);

	prof_site_small();
	prof_site_large();
	prof_site_huge();
	prof_outer();
	prof_inline_host();
	prof_site_calloc();
	prof_site_realloc();

	pthread_t th;
	if (pthread_create(&th, NULL, prof_worker, NULL) != 0)
		die("pthread_create failed");
	pt_wait_parked(1);

	pt_dump_write_and_abort("prof1", argv[1]);
}
