/* miversions.c - a small mimalloc heap whose every block is known, for
 * the committed cores of mimalloc's 2.x releases
 * (scripts/corpus/mimalloc-versions.sh builds it with a release's
 * src/static.c compiled in and keeps its core and truth under
 * corpora/mimalloc/cores/; tests/t0494-mimalloc-versions.sh holds
 * heapwalk to them).  Plain malloc and free: the static mimalloc takes
 * malloc over (MI_MALLOC_OVERRIDE); mimalloc.h is included for
 * mi_usable_size, mi_version and mi_heap_visit_blocks only, which every
 * 2.x release has with the same signatures.
 *
 *   miversions [RELEASE]  writes truth.txt in the current directory,
 *                         then aborts (the core); RELEASE (the tag the
 *                         mimalloc compiled in came from, as v2.1.7) is
 *                         recorded as given: mi_version() does not
 *                         always say (2.0.2's says 201, 2.1.7a's 217)
 *
 * Threads: the main thread and two workers (threads 0, 1, 2) allocate
 * 40 blocks each, a fourth thread (3) 18 and exits before the core.
 * Sizes run from 1 byte to 200 KiB over small, medium and large pages
 * (a table, walked at a different pace by each thread); thread 0's first
 * block is a large one of about 1 MiB, thread 1's a huge one of 40 MiB
 * (a segment of its own), both kept.  Every sixth block is
 * posix_memalign'd to 64 bytes, every sixth (another) to 4096: mimalloc
 * may then hand out a pointer inside its block (the page gets
 * has_aligned), and mi_usable_size counts from that pointer to the
 * block's end, so the block ends at USER + USABLE either way.
 *
 * What becomes of block i of worker t (plan() below):
 *   i % 8 == 1   freed by its owner in phase 2 (local_free; the visit
 *                then collects it onto the page's free list)
 *   i % 8 == 3   freed by thread (t + 1) % 3 in phase 2 (the page's
 *                xthread_free, or, for a page still "use delayed free",
 *                the owning heap's thread_delayed_free list, which the
 *                visit leaves alone)
 *   i % 8 == 4   freed by thread (t + 2) % 3 in phase 3, after the visit
 *                (xthread_free or the delayed list, as left)
 *   i % 8 == 6   freed by its owner in phase 3 (local_free, as left)
 *   otherwise    kept (i % 8 == 0, 2, 5 or 7)
 * Thread 3 frees every third of its blocks itself in phase 1, visits its
 * heap and exits (its pages abandoned); the workers free some of the
 * rest in phase 2 and 3, into abandoned pages (2.1.4 to 2.1.7 reclaim
 * such a page's segment for the freeing thread: their option
 * abandoned_reclaim_on_free is on).
 * Phases, each closed by a barrier (no sleeps):
 *   0  every thread allocates
 *   1  thread 3 frees its share, visits its heap and exits; thread 0
 *      joins it
 *   2  frees by owners and by other threads
 *   -  each worker visits its own heap (mi_heap_visit_blocks, blocks in
 *      use), one at a time: a block the visit reports in which no
 *      pointer this program was ever given lies is the C library's,
 *      recorded as a `libc` line (glibc 2.36: the dtv it callocs for
 *      each thread it creates, in the creating thread's heap: three, in
 *      thread 0's; the main thread's comes from ld.so)
 *   3  more frees, left where they land
 * then thread 0 writes the truth and aborts; the workers stay parked.
 * Nothing allocates after the visits, so the blocks in use at the core
 * are exactly the alloc and libc lines (the visits see the blocks
 * waiting on a heap's delayed list as in use: those are the program's,
 * and freed).
 *
 * truth.txt (write(2) from a static buffer, corpora/common/out.h):
 *   prog miversions
 *   release TAG                      the argument, or "unknown"
 *   version N                        mi_version(): 206 for 2.0.6, 20401
 *                                    for 2.4.1
 *   thread T TID 0xSELF [exited]     each thread, its pthread_self()
 *   alloc 0xUSER REQ USABLE THREAD   in use: USABLE is mi_usable_size
 *   freed 0xUSER REQ THREAD BY PHASE freed (by thread BY, in PHASE)
 *   libc 0xBLOCK USABLE THREAD       a block in use the program did not
 *                                    allocate, as THREAD's visit found
 *                                    it: its start, mi_usable_size
 *   end
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mimalloc.h>

#include "../common/out.h"

#define WORKERS 3
#define EXITER WORKERS             /* thread 3 */
#define NTHREADS (WORKERS + 1)
#define PER_WORKER 40
#define PER_EXITER 18
#define MAX_LIBC 64

enum { KEPT, FREED };

struct block {
	uintptr_t p;
	size_t req, usable;
	int state, by, phase;
};

struct libc_block {
	uintptr_t p;
	size_t usable;
	int thread;
};

static struct block blocks[NTHREADS][PER_WORKER];
static int nblocks[NTHREADS];
static struct libc_block libc[MAX_LIBC];
static int nlibc;
static bool libc_overflow;
static long tids[NTHREADS];
static uintptr_t selves[NTHREADS];
static pthread_barrier_t allocated, exited, freed, visited, done;
static pthread_t exiter;

/* From 1 byte to 200 KiB: small pages (to 16 KiB, 8 KiB from 2.2),
   medium (to 128 KiB, 64 KiB from 2.2) and large pages (one block
   each; to half a segment, past it huge).  */
static const size_t sizes[] = {
	1, 8, 13, 24, 40, 64, 96, 128, 200, 320, 512, 700, 1024, 1600,
	2500, 4000, 6000, 8192, 12000, 16384, 24000, 33000, 48000, 65536,
	90000, 131072, 160000, 204800,
};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static size_t request(int t, int i)
{
	if (t == 0 && i == 0)
		return ((size_t)1 << 20) + 1000;     /* large: about 1 MiB */
	if (t == 1 && i == 0)
		return (size_t)40 << 20;             /* huge: 40 MiB */
	return sizes[(size_t)(i * (2 * t + 5) + t * 3) % NSIZES];
}

/* The fate of block i of thread t: KEPT or FREED, and then by whom in
   which phase.  */
static int plan(int t, int i, int *by, int *phase)
{
	if (t == EXITER) {
		if (i % 3 == 0) {
			*by = EXITER, *phase = 1;
			return FREED;
		}
		if (i % 3 == 1 && i % 2 == 0) {
			*by = (i / 3) % WORKERS, *phase = 2;
			return FREED;
		}
		if (i % 3 == 2 && i % 4 == 1) {
			*by = (i / 3 + 1) % WORKERS, *phase = 3;
			return FREED;
		}
		return KEPT;
	}
	if (i % 8 == 1) {
		*by = t, *phase = 2;
		return FREED;
	}
	if (i % 8 == 3) {
		*by = (t + 1) % WORKERS, *phase = 2;
		return FREED;
	}
	if (i % 8 == 4) {
		*by = (t + 2) % WORKERS, *phase = 3;
		return FREED;
	}
	if (i % 8 == 6) {
		*by = t, *phase = 3;
		return FREED;
	}
	return KEPT;
}

static void *allocate(int i, size_t n)
{
	void *p = NULL;
	size_t alignment = 0;
	if (i > 0 && i % 6 == 2)
		alignment = 64;
	else if (i > 0 && i % 6 == 5)
		alignment = 4096;
	if (alignment) {
		if (posix_memalign(&p, alignment, n))
			die("posix_memalign failed");
	} else {
		p = malloc(n);
	}
	if (!p)
		die("out of memory");
	return p;
}

static void allocate_all(int t, int count)
{
	for (int i = 0; i < count; i++) {
		struct block *b = &blocks[t][i];
		b->req = request(t, i);
		void *p = allocate(i, b->req);
		b->p = (uintptr_t)p;
		b->usable = mi_usable_size(p);
		if (b->usable < b->req)
			die("mi_usable_size below the request");
		/* A few bytes written, the rest left as mimalloc gave it:
		   the core stays small.  */
		memset(p, 0x41 + t, b->req < 32 ? b->req : 32);
	}
	nblocks[t] = count;
}

/* Thread w's frees of `phase`, of its own blocks and others'.  */
static void free_phase(int w, int phase)
{
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < nblocks[t]; i++) {
			struct block *b = &blocks[t][i];
			int by = -1, ph = 0;
			if (plan(t, i, &by, &ph) != FREED || by != w ||
			    ph != phase)
				continue;
			free((void *)b->p);
			b->state = FREED;
			b->by = w;
			b->phase = phase;
		}
}

/* Does an allocation of this program (in use or freed) lie in the
   block [p, p + size)?  */
static bool ours(uintptr_t p, size_t size)
{
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < nblocks[t]; i++)
			if (blocks[t][i].p >= p && blocks[t][i].p < p + size)
				return true;
	return false;
}

/* mimalloc's visitor: called for each page (block NULL), then for each
   block in use.  Records what is not the program's; allocates nothing. */
static bool visitor(const mi_heap_t *heap, const mi_heap_area_t *area,
		    void *block, size_t block_size, void *arg)
{
	int t = (int)(intptr_t)arg;
	(void)heap, (void)area;
	if (!block || ours((uintptr_t)block, block_size))
		return true;
	if (nlibc == MAX_LIBC) {
		libc_overflow = true;
		return false;
	}
	libc[nlibc].p = (uintptr_t)block;
	libc[nlibc].usable = mi_usable_size(block);
	libc[nlibc].thread = t;
	nlibc++;
	return true;
}

static void visit_own(int t)
{
	mi_heap_visit_blocks(mi_heap_get_default(), true, visitor,
			     (void *)(intptr_t)t);
}

static void note_thread(int t)
{
	tids[t] = (long)syscall(SYS_gettid);
	selves[t] = (uintptr_t)pthread_self();
}

static void *exiter_main(void *arg)
{
	(void)arg;
	note_thread(EXITER);
	allocate_all(EXITER, PER_EXITER);
	pthread_barrier_wait(&allocated);
	free_phase(EXITER, 1);
	visit_own(EXITER);
	return NULL;                 /* mimalloc abandons its heap */
}

/* The workers' visits run one at a time (the record is shared).  */
static pthread_mutex_t visit_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	note_thread(t);
	allocate_all(t, PER_WORKER);
	pthread_barrier_wait(&allocated);
	if (t == 0 && pthread_join(exiter, NULL))
		die("pthread_join failed");
	pthread_barrier_wait(&exited);
	free_phase(t, 2);
	pthread_barrier_wait(&freed);
	pthread_mutex_lock(&visit_lock);
	visit_own(t);
	pthread_mutex_unlock(&visit_lock);
	pthread_barrier_wait(&visited);
	free_phase(t, 3);
	pthread_barrier_wait(&done);
	if (t == 0)
		return NULL;
	for (;;)                     /* parked to the core: a live heap */
		pause();
}

static void out_hex(uintptr_t v)
{
	out_str(" ");
	out_num(v, 16);
}

static const char *release = "unknown";

static void record(void)
{
	if (libc_overflow)
		die("more of the C library's blocks than the record holds");
	out_fd = open("truth.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot write truth.txt");
	out_str("prog miversions\nrelease ");
	out_str(release);
	out_str("\nversion");
	out_sp((unsigned long long)mi_version());
	out_str("\n");
	for (int t = 0; t < NTHREADS; t++) {
		out_str("thread");
		out_sp((unsigned long long)t);
		out_sp((unsigned long long)tids[t]);
		out_hex(selves[t]);
		out_str(t == EXITER ? " exited\n" : "\n");
	}
	for (int t = 0; t < NTHREADS; t++)
		for (int i = 0; i < nblocks[t]; i++) {
			const struct block *b = &blocks[t][i];
			if (b->state == FREED) {
				out_str("freed");
				out_hex(b->p);
				out_sp(b->req);
				out_sp((unsigned long long)t);
				out_sp((unsigned long long)b->by);
				out_sp((unsigned long long)b->phase);
			} else {
				out_str("alloc");
				out_hex(b->p);
				out_sp(b->req);
				out_sp(b->usable);
				out_sp((unsigned long long)t);
			}
			out_str("\n");
		}
	for (int k = 0; k < nlibc; k++) {
		out_str("libc");
		out_hex(libc[k].p);
		out_sp(libc[k].usable);
		out_sp((unsigned long long)libc[k].thread);
		out_str("\n");
	}
	out_str("end\n");
	out_flush();
	if (close(out_fd))
		die("cannot write truth.txt");
}

int main(int argc, char **argv)
{
	pthread_t tid[WORKERS];
	if (argc > 1)
		release = argv[1];
	if (pthread_barrier_init(&allocated, NULL, NTHREADS) ||
	    pthread_barrier_init(&exited, NULL, WORKERS) ||
	    pthread_barrier_init(&freed, NULL, WORKERS) ||
	    pthread_barrier_init(&visited, NULL, WORKERS) ||
	    pthread_barrier_init(&done, NULL, WORKERS))
		die("pthread_barrier_init failed");
	for (int t = 1; t < WORKERS; t++)
		if (pthread_create(&tid[t], NULL, worker_main,
				   (void *)(intptr_t)t))
			die("pthread_create failed");
	if (pthread_create(&exiter, NULL, exiter_main, NULL))
		die("pthread_create failed");
	worker_main((void *)0);
	record();
	abort();
}
