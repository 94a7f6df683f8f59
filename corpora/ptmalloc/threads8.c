/* threads8 - 8 live threads, each with its own arena, then abort().
 *
 *   gcc -O0 -g -pthread -o prog threads8.c && ./prog truth.txt
 *
 * Threads 1..7 run the shared scenario of truth.h in their own arenas
 * (with size classes varied by thread), threads 3 and 6 also hold an
 * mmapped chunk (up to glibc 2.42: 2.43 serves it from the arena's heap).  Thread 8 allocates 700 chunks of 100 KiB (below the
 * 128 KiB mmap threshold, which nothing raises: no mmapped chunk is ever
 * freed), so its arena needs a second 64 MiB heap; it frees three of them
 * into the unsorted bin and fills tcache and fastbins.  Main (thread 0)
 * runs the scenario in main_arena after every thread is parked, writes
 * the truth (format: truth.h) and aborts.  The truth numbers threads in
 * the order they registered (main is 0), each with its kernel tid.
 * One more thread never calls malloc: its thread_arena stays NULL (the
 * truth says arena "none").
 *
 * glibc 2.36 gives each thread a new arena: the arena limit is only
 * computed once more than 8 arenas exist (arena_test), and then it is
 * 8 x cores, so even one core allows main + 8 thread arenas; 2.44 would
 * stop at max(8, cores), so the program sets M_ARENA_MAX itself.
 */
#include "truth.h" /* first: it defines _GNU_SOURCE */

#include <pthread.h>

#define NTHREADS 8
#define PIECES 700
#define PIECE (100 * 1024)

static pthread_barrier_t ready, park;

static void big_thread(int t)
{
	static void *piece[PIECES];
	void *fa[10], *fb[9];

	/* Small ones first: once the first heap is full its leftover top is
	   freed and a later small malloc would be cut from it.  */
	for (int i = 0; i < 10; i++)
		fa[i] = ta(t, 24);
	for (int i = 0; i < 9; i++)
		fb[i] = ta(t, 72);
	for (int i = 0; i < PIECES; i++)
		piece[i] = ta(t, PIECE);
	/* Neighbours stay live: these go to the unsorted bin.  */
	tf(t, piece[100]);
	tf(t, piece[400]);
	tf(t, piece[690]);
	/* No malloc after this.  */
	for (int i = 0; i < 10; i++)
		tf(t, fa[i]);   /* 7 tcache, 3 fastbin */
	for (int i = 0; i < 9; i++)
		tf(t, fb[i]);   /* 7 tcache, 2 fastbin */
}

static void *worker(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	int t = thread_register();

	if (idx == NTHREADS + 1) {
		/* No malloc: thread_register and the barriers take none.  */
	} else if (idx == NTHREADS) {
		big_thread(t);
	} else {
		/* 2.43 serves even tens of MiB from a thread arena's heap
		   (it grows the heap before it maps a chunk of its own).  */
		if (idx % 3 == 0 && glibc_minor() < 43) {
			ta(t, 250000 + 4096 * idx);
			if (T[t].r[0].w != W_MMAPPED)
				die("a big allocation is not mmapped");
		}
		build_bins(t, idx);
	}
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&park);   /* main never comes: parked here */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS + 1];

	if (argc != 2)
		die("usage: threads8 TRUTHFILE");
	truth_open(argv[1], "threads8");
	if (thread_register() != 0)
		die("main is not thread 0");
	/* Room for an arena per thread: 2.44 caps the arenas at
	   max(8, cores) where 2.36 allowed 8 x cores.  */
	if (mallopt(M_ARENA_MAX, 2 * NTHREADS) != 1)
		die("mallopt(M_ARENA_MAX) failed");
	pthread_barrier_init(&ready, NULL, NTHREADS + 2);
	pthread_barrier_init(&park, NULL, NTHREADS + 2);
	for (unsigned i = 1; i <= NTHREADS + 1; i++)
		if (pthread_create(&th[i - 1], NULL, worker, (void *)(uintptr_t)i))
			die("pthread_create failed");
	pthread_barrier_wait(&ready);

	build_bins(0, 0);

	truth_threads_and_allocs();
	truth_mallinfo_and_abort();
}
