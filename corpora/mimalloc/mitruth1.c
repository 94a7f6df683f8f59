/* mitruth1.c - a mimalloc program that records the truth of its heap for
 * tests/t0490-mimalloc-walk.sh (and t0491, t0492), then stops for its
 * core.  Plain malloc and free: the program is linked with -lmimalloc
 * (or has mimalloc's src/static.c compiled in), which takes malloc over.
 *
 *   mitruth1 THREADS MODE
 *     THREADS  1 to 16 worker threads (the main thread is worker 0),
 *              plus one more thread that allocates, frees some of its
 *              blocks and exits before the core (its heap is abandoned,
 *              its blocks stay in use)
 *     MODE     words separated by commas:
 *              abort    write truth.txt, then abort (the test's core);
 *                       the default
 *              wait     write truth.txt, print "ready", read stdin to its
 *                       end (the test's --pid), exit 0
 *              visit    also record mimalloc's own view of every block in
 *                       use (mi_heap_visit_blocks, below)
 *              mistats  also record mimalloc's own counters
 *                       (mi_process_info, mi_stats_print_out)
 *     Built with -DMI_HAVE_HEADER (mimalloc.h at hand) usable sizes are
 *     mi_usable_size's, else malloc_usable_size's (the same function in
 *     mimalloc), and visit and mistats are refused without it.
 *
 * Each worker allocates 160 blocks (the exiting thread 48) across
 * mimalloc's size classes: from 1 byte (the 8-byte class) through small
 * (up to 16 KiB in 2.x), medium (up to 128 KiB) and large (up to 16 MiB)
 * pages; worker 0 one huge block past 32 MiB (a segment of its own,
 * kept), worker 1 one of 17 MiB (freed by another thread).  By malloc,
 * calloc, posix_memalign (64 and 4096; one block a thread aligned to
 * 1 MiB, over-allocated into a large page), aligned_alloc (64) and
 * realloc (grown: a new block; shrunk: in place).  An aligned block may
 * start inside mimalloc's block (the page is flagged has_aligned):
 * mi_usable_size is then the block's size less that offset, so the
 * block's end is USER + USABLE either way.
 * mimalloc leaves its free-list link (a pointer to the next free block,
 * which may become a hidden one) in the first word of a block it hands
 * out: the first 64 bytes from the pointer are filled, and for an
 * aligned block the bytes before it from the block's start (block_start:
 * found by mi_usable_size alone), so that no stale pointer in a block in
 * use reaches another block.
 *
 * Frees, in phases the threads meet for at barriers (no sleeps: every
 * block is where the truth says):
 *   1  the exiting thread frees every third of its blocks, hides every
 *      eleventh of the rest and exits (pthread_join; 2.x abandons its
 *      segments, and no thread allocates afterwards to reclaim them)
 *   2  every third block of each worker: even multiples of three by the
 *      owner (its page's local_free), odd ones by the next worker
 *      (t + 1) % THREADS: another thread's free goes to the page's
 *      xthread_free, or in 2.x to the owning heap's thread_delayed_free
 *      list for the first such free of a page (a 2.x page starts out
 *      "use delayed free"); and some of the exited thread's blocks, by
 *      workers (into abandoned pages; 3.x: the freeing thread takes the
 *      page over)
 *   -  with visit: the heaps visited (below)
 *   3  each worker's blocks i % 9 == 4 by the next worker (for one
 *      thread: by itself, to local_free), the 17 MiB huge block among
 *      them; more of the exited thread's blocks
 * Every eleventh block a worker keeps has its pointer hidden (stored XOR
 * a key, so no word in memory points at it): a leak.  The workers stay
 * alive (parked) to the core: their heaps are live heaps.
 *
 * visit: in 2.x (and 3.0, 3.1) mi_heap_visit_blocks(mi_heap_get_default(),
 * true, ...) from each worker between phases 2 and 3, and from the
 * exiting thread before it exits, reports every block its heap's pages
 * hold in use, the C library's own mallocs among them (the dtv of each
 * thread, ...); in 3.0 and 3.1 the main thread also visits the pages no
 * heap owns (mi_abandoned_visit_blocks: full pages threads gave up, the
 * exited thread's, pages of the OS's).  From 3.2 on a thread's theap
 * does not hold its full
 * pages: the main thread visits mimalloc's whole heap, mi_heap_main(),
 * once, between phases 2 and 3, for every thread.  A visit collects each
 * page's local_free and xthread_free lists into the page's free list
 * first (_mi_page_free_collect): that changes which list a free block is
 * on, never whether it is free, and is why phase 3 comes after it (its
 * frees stay on local_free and xthread_free).  Blocks on a 2.x heap's
 * thread_delayed_free list are not collected: the visit reports them in
 * use (the program freed them: the truth says which).  Nothing is
 * allocated inside the visitor: every record goes to static arrays,
 * addresses stored XOR the key (a visited block's address would be a
 * pointer to a hidden block).
 * Pages: at the end (after phase 3) each worker (3.2 on: the main thread,
 * every page), and the exiting thread before it exits, records its pages
 * as mimalloc's visitor gives them without visiting blocks (nothing
 * collected): block size, capacity and used, where used counts blocks in
 * use plus blocks freed by other threads and not yet collected
 * (xthread_free, thread_delayed_free).
 *
 * truth.txt, one record a line (written with write(2) from a static
 * buffer, corpora/common/out.h: the heap is not touched after the last
 * free):
 *   prog mitruth1 THREADS MODE
 *   mimalloc VERSION                 mi_version() (209 is 2.0.9), or
 *                                    "unknown" without mimalloc.h
 *   thread T TID 0xSELF 0xHEAP [exited]
 *                                    each thread: T the worker's number
 *                                    (THREADS: the exited one), its tid,
 *                                    pthread_self() (mimalloc's thread id
 *                                    on x86_64 and aarch64: the thread
 *                                    pointer), its default heap (3.2 and
 *                                    later: its theap)
 *   alloc 0xUSER REQ USABLE THREAD   in use; USABLE = mi_usable_size
 *   lost 0xUSER REQ USABLE THREAD    in use, no pointer to it remains
 *   freed 0xUSER REQ THREAD FREEDBY PHASE USABLE
 *                                    freed by thread FREEDBY in PHASE
 *                                    (1-3 above); USABLE before the free
 *   visitor THREAD PHASE own|all     (visit) THREAD visited its own heap
 *                                    (own), or mimalloc's whole heap
 *                                    (all: 3.2 and later), after PHASE
 *   visit 0xBLOCK BLOCKSIZE USED THREAD
 *                                    (visit) a block THREAD's visit
 *                                    reported in use: its start, its
 *                                    page's usable block size, the page's
 *                                    used count then
 *   area 0xSTART BLOCKSIZE FULLSIZE RESERVED COMMITTED USED THREAD
 *                                    a page of THREAD's heap (3.2 on,
 *                                    THREAD 0: of the whole heap) at the end
 *                                    (mi_heap_area_t: start of its first
 *                                    block, usable and full block size,
 *                                    bytes of blocks reserved and
 *                                    carved (capacity), blocks used)
 *   mistat KEY N                     (mistats) mi_process_info's figures
 *   mistats TEXT                     (mistats) mi_stats_print_out's lines
 *   end
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef MI_HAVE_HEADER
#include <mimalloc.h>
#endif

/* MI_MALLOC_VERSION as major * 10000 + minor * 100 + patch: mimalloc
   wrote 3.0.1 as 301, 3.0.12 as 3012, 3.1.6 as 316, and from 3.4 on two
   digits each (30403).  */
#if !defined MI_HAVE_HEADER
#define MI_V 0
#elif MI_MALLOC_VERSION < 1000
#define MI_V (MI_MALLOC_VERSION / 100 * 10000 + \
	      MI_MALLOC_VERSION / 10 % 10 * 100 + MI_MALLOC_VERSION % 10)
#elif MI_MALLOC_VERSION < 10000
#define MI_V (MI_MALLOC_VERSION / 1000 * 10000 + \
	      MI_MALLOC_VERSION / 100 % 10 * 100 + MI_MALLOC_VERSION % 100)
#else
#define MI_V MI_MALLOC_VERSION
#endif

#include "../common/out.h"

#define MAX_THREADS 16
#define PER_THREAD 160
#define EXITER_BLOCKS 48
#define MAX_VISIT 4096
#define MAX_AREAS 1024
#define HIDE_KEY ((uintptr_t)0x5a5a5a5a5a5a5a5aull)

enum { ALIVE, FREED, LOST };

struct block {
	uintptr_t p;          /* the pointer, or it XOR HIDE_KEY when lost */
	size_t req, usable;
	unsigned char state, freedby, phase;
};

struct vrec {                 /* a visited block */
	uintptr_t addr;       /* XOR HIDE_KEY */
	size_t size, used;
};

struct arec {                 /* a page (mi_heap_area_t) */
	uintptr_t start;      /* XOR HIDE_KEY */
	size_t size, full, reserved, committed, used;
};

struct thread {
	long tid;
	uintptr_t self, heap;
	size_t nblocks, nvisit, nareas;
	bool overflow;
	bool want_blocks;     /* this visit records blocks, not pages */
	int visited;          /* it visited its heap after this phase */
	bool visited_all;     /* the whole heap, every thread's pages */
};

static struct block blocks[MAX_THREADS + 1][PER_THREAD];
static struct vrec visits[MAX_THREADS + 1][MAX_VISIT];
static struct arec areas[MAX_THREADS + 1][MAX_AREAS];
static struct thread threads[MAX_THREADS + 1];
static int nthreads;          /* workers; the exiting thread is number nthreads */
static bool mode_wait, mode_visit, mode_stats;
static const char *mode_arg = "abort";
static pthread_barrier_t allocated, exited, freed, visited, done, recorded;
static pthread_t exiter_thread;

#ifdef MI_HAVE_HEADER
#define USABLE(p) mi_usable_size(p)
#else
#define USABLE(p) malloc_usable_size(p)
#endif

/* The request of block i of thread t.  */
static size_t request(int t, int i)
{
	if (t == 0 && i == 119)         /* huge, past a 32 MiB segment */
		return ((size_t)33 << 20) + 4096;
	if (t == 1 && i == 139)         /* huge (over 16 MiB), freed in phase 3 */
		return ((size_t)17 << 20) + 512;
	if (i % 40 == 39)               /* large pages */
		return (i == 79 ? (size_t)3 << 20 : (size_t)200 << 10) +
		       (size_t)(t * 4096 + i * 100);
	if (i % 16 == 15)               /* medium */
		return 16500 + (size_t)(t * 997 + i * 331) % 110000;
	if (i % 8 == 6)                 /* the larger small classes */
		return 1500 + (size_t)(t * 131 + i * 977) % 14000;
	return 1 + (size_t)(t * 37 + i * 53) % 1500;
}

/* Block i of thread t (n workers): what becomes of it.  Returns its end
   state; *by and *phase say who frees it when.  */
static int plan(int t, int i, int n, int *by, int *phase)
{
	if (t == n) {                   /* the exiting thread */
		if (i % 3 == 0) {
			*by = n, *phase = 1;
			return FREED;
		}
		if (i % 11 == 0)
			return LOST;
		if (i % 3 == 1 && i % 5 == 1) {
			*by = (i / 5) % n, *phase = 2;
			return FREED;
		}
		if (i % 3 == 2 && i % 7 == 2) {
			*by = (i / 7) % n, *phase = 3;
			return FREED;
		}
		return ALIVE;
	}
	if (i % 3 == 0) {
		*by = i % 6 == 0 ? t : (t + 1) % n, *phase = 2;
		return FREED;
	}
	if (i % 11 == 0)
		return LOST;
	if (i % 9 == 4) {
		*by = (t + 1) % n, *phase = 3;
		return FREED;
	}
	return ALIVE;
}

static void *must(void *p)
{
	if (!p)
		die("out of memory");
	return p;
}

static void *aligned(size_t alignment, size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, alignment, n))
		die("posix_memalign failed");
	return p;
}

static void *allocate(int t, int i, size_t *req, size_t *alignment)
{
	size_t n = request(t, i);
	void *p;
	*req = n;
	*alignment = 1;
	if (i == 50)                    /* aligned past 64 KiB */
		return aligned(*alignment = (size_t)1 << 20, n);
	switch (i % 7) {
	case 1:
		return must(calloc(1, n));
	case 2:
		return aligned(*alignment = 64, n);
	case 3:
		return aligned(*alignment = 4096, n);
	case 4:                          /* grown: a new block */
		p = must(malloc(n / 2 + 1));
		return must(realloc(p, n));
	case 5:                          /* shrunk: in place */
		p = must(malloc(n + 200));
		return must(realloc(p, n));
	case 6:
		*req = (n + 63) & ~(size_t)63;
		return must(aligned_alloc(*alignment = 64, *req));
	default:
		return must(malloc(n));
	}
}

static void note_thread(int t)
{
	struct thread *th = &threads[t];
	th->tid = (long)syscall(SYS_gettid);
	th->self = (uintptr_t)pthread_self();
#ifdef MI_HAVE_HEADER
#if MI_V >= 30200
	th->heap = (uintptr_t)mi_theap_get_default();
#else
	th->heap = (uintptr_t)mi_heap_get_default();
#endif
#endif
}

/* The start of mimalloc's block that holds p, an allocation aligned to
   `alignment`: p itself, or up to alignment - 1 bytes before it when
   mimalloc over-allocated and aligned inside the block.  Its usable size
   is counted to the block's end, from any byte of the block: one more a
   byte back while still inside it.  */
static uintptr_t block_start(uintptr_t p, size_t alignment)
{
	size_t u = USABLE((void *)p), d = 1;
	while (d < alignment && USABLE((void *)(p - d)) == u + d)
		d++;
	return p - (d - 1);
}

static void allocate_all(int t, int count)
{
	for (int i = 0; i < count; i++) {
		struct block *b = &blocks[t][i];
		size_t alignment;
		void *p = allocate(t, i, &b->req, &alignment);
		b->usable = USABLE(p);
		if (b->usable < b->req)
			die("usable size below the request");
		memset(p, 0x40 + t, b->usable < 64 ? b->usable : 64);
		/* The block's first word is the free-list link mimalloc left
		   in it (a pointer to the next free block, which may become
		   a hidden one): an aligned block's start lies before p.  */
		uintptr_t start = block_start((uintptr_t)p, alignment);
		if (start < (uintptr_t)p)
			memset((void *)start, 0x40 + t,
			       (uintptr_t)p - start < 64 ? (uintptr_t)p - start
							 : 64);
		b->p = (uintptr_t)p;
	}
	threads[t].nblocks = (size_t)count;
}

/* Thread w's frees of phase `phase`, its own blocks' and others'.  */
static void free_phase(int w, int phase)
{
	for (int t = 0; t <= nthreads; t++)
		for (size_t i = 0; i < threads[t].nblocks; i++) {
			int by = -1, ph = 0;
			struct block *b = &blocks[t][i];
			if (plan(t, (int)i, nthreads, &by, &ph) != FREED ||
			    by != w || ph != phase)
				continue;
			free((void *)b->p);
			b->state = FREED;
			b->freedby = (unsigned char)w;
			b->phase = (unsigned char)phase;
		}
}

static void hide_own(int t)
{
	for (size_t i = 0; i < threads[t].nblocks; i++) {
		int by, ph;
		if (plan(t, (int)i, nthreads, &by, &ph) == LOST) {
			blocks[t][i].p ^= HIDE_KEY;
			blocks[t][i].state = LOST;
		}
	}
}

#ifdef MI_HAVE_HEADER
/* mimalloc's visitor: called once per page (block NULL), then per block
   in use when visiting blocks.  Static arrays only.  */
static bool visitor(const mi_heap_t *heap, const mi_heap_area_t *area,
		    void *block, size_t block_size, void *arg)
{
	struct thread *th = arg;
	int t = (int)(th - threads);
	(void)heap;
	if (!th->want_blocks && !block) {
		if (th->nareas == MAX_AREAS) {
			th->overflow = true;
			return false;
		}
		struct arec *a = &areas[t][th->nareas++];
		a->start = (uintptr_t)area->blocks ^ HIDE_KEY;
		a->size = area->block_size;
		a->full = area->full_block_size;
		a->reserved = area->reserved;
		a->committed = area->committed;
		a->used = area->used;
	} else if (th->want_blocks && block) {
		if (th->nvisit == MAX_VISIT) {
			th->overflow = true;
			return false;
		}
		struct vrec *v = &visits[t][th->nvisit++];
		v->addr = (uintptr_t)block ^ HIDE_KEY;
		v->size = block_size;
		v->used = area->used;
	}
	return true;
}

/* Thread t's visit after phase `phase` (blocks), or at the end (pages
   only).  */
static void visit_own(int t, bool want_blocks, int phase)
{
	threads[t].want_blocks = want_blocks;
#if MI_V >= 30200
	/* 3.2 and later: a thread's theap holds only some of its pages
	   (full ones go back to the arenas), mimalloc's own heap all of
	   them: the main thread visits it for everyone.  */
	if (t != 0)
		return;
	mi_heap_visit_blocks(mi_heap_main(), want_blocks, visitor,
			     &threads[t]);
	threads[t].visited_all = true;
#else
	mi_heap_visit_blocks(mi_heap_get_default(), want_blocks, visitor,
			     &threads[t]);
#if MI_V >= 30000
	/* 3.0 and 3.1: a page no heap owns (a full page a thread gave up,
	   a page of the OS's) is abandoned: the main thread visits those
	   for everyone, while every thread is in its own visit.  */
	if (t == 0)
		mi_abandoned_visit_blocks(mi_subproc_main(), 0, want_blocks,
					  visitor, &threads[t]);
#endif
#endif
	if (want_blocks)
		threads[t].visited = phase;
}
#else
static void visit_own(int t, bool want_blocks, int phase)
{
	(void)t, (void)want_blocks, (void)phase;
}
#endif

/* Zero the dead stack below the caller's frame: the frees and
   mimalloc's visit leave block addresses there, a hidden block's among
   them, and a leak checker scans a thread's stack from just below its
   stack pointer (x86_64's red zone), as Valgrind does.  */
static __attribute__((noinline)) void scrub_stack(void)
{
	char dead[16384];
	explicit_bzero(dead, sizeof dead);
}

static void *exiter_main(void *arg)
{
	int t = nthreads;
	(void)arg;
	note_thread(t);
	allocate_all(t, EXITER_BLOCKS);
	pthread_barrier_wait(&allocated);
	free_phase(t, 1);
	hide_own(t);
	if (mode_visit)
		visit_own(t, true, 1);
	visit_own(t, false, 0);
	/* (Its stack stays mapped, glibc keeping it for a next thread.)  */
	scrub_stack();
	return NULL;     /* mimalloc abandons this thread's heap */
}


static void *worker_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	note_thread(t);
	allocate_all(t, PER_THREAD);
	pthread_barrier_wait(&allocated);
	if (t == 0 && pthread_join(exiter_thread, NULL))
		die("pthread_join failed");
	pthread_barrier_wait(&exited);
	hide_own(t);
	free_phase(t, 2);
	pthread_barrier_wait(&freed);
	if (mode_visit)
		visit_own(t, true, 2);
	pthread_barrier_wait(&visited);
	free_phase(t, 3);
	pthread_barrier_wait(&done);
	visit_own(t, false, 0);
#if defined MI_HAVE_HEADER && MI_V < 30200
	/* (3.2 and later keep their statistics per heap, not per thread:
	   no merge to ask for.)  */
	if (mode_stats)
		mi_stats_merge();
#endif
	scrub_stack();
	pthread_barrier_wait(&recorded);
	if (t == 0)
		return NULL;
	for (;;)         /* alive to the core, its heap a live one */
		pause();
}

/* ---- the record ------------------------------------------------------ */

static void out_hex(uintptr_t v)
{
	out_str(" ");
	out_num(v, 16);
}

#ifdef MI_HAVE_HEADER
static char stats_buf[1 << 16];
static size_t stats_len;

static void stats_out(const char *msg, void *arg)
{
	(void)arg;
	for (; *msg && stats_len < sizeof stats_buf - 1; msg++)
		stats_buf[stats_len++] = *msg;
}

static void record_stats(void)
{
	size_t elapsed, user, sys, rss, peak_rss, commit, peak_commit, faults;
	mi_process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit,
			&peak_commit, &faults);
	out_kv("mistat", "current_rss", rss);
	out_kv("mistat", "peak_rss", peak_rss);
	out_kv("mistat", "current_commit", commit);
	out_kv("mistat", "peak_commit", peak_commit);
	mi_stats_print_out(stats_out, NULL);
	/* One "mistats" record a line of its table.  */
	size_t start = 0;
	for (size_t i = 0; i <= stats_len; i++) {
		if (i < stats_len && stats_buf[i] != '\n')
			continue;
		if (i > start) {
			stats_buf[i] = 0;
			out_str("mistats ");
			out_str(stats_buf + start);
			out_str("\n");
		}
		start = i + 1;
	}
}
#endif

static void record(void)
{
	out_fd = open("truth.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot write truth.txt");
	out_str("prog mitruth1");
	out_sp((unsigned long long)nthreads);
	out_str(" ");
	out_str(mode_arg);
	out_str("\nmimalloc ");
#ifdef MI_HAVE_HEADER
	out_num((unsigned long long)mi_version(), 10);
#else
	out_str("unknown");
#endif
	out_str("\n");
	for (int t = 0; t <= nthreads; t++) {
		const struct thread *th = &threads[t];
		if (th->overflow)
			die("a visit overflowed its record");
		out_str("thread");
		out_sp((unsigned long long)t);
		out_sp((unsigned long long)th->tid);
		out_hex(th->self);
		out_hex(th->heap);
		out_str(t == nthreads ? " exited\n" : "\n");
		if (th->visited) {
			out_str("visitor");
			out_sp((unsigned long long)t);
			out_sp((unsigned long long)th->visited);
			out_str(th->visited_all ? " all\n" : " own\n");
		}
	}
	for (int t = 0; t <= nthreads; t++)
		for (size_t i = 0; i < threads[t].nblocks; i++) {
			const struct block *b = &blocks[t][i];
			if (b->state == FREED) {
				out_str("freed");
				out_hex(b->p);
				out_sp(b->req);
				out_sp((unsigned long long)t);
				out_sp(b->freedby);
				out_sp(b->phase);
				out_sp(b->usable);
			} else {
				out_str(b->state == LOST ? "lost" : "alloc");
				out_hex(b->state == LOST ? b->p ^ HIDE_KEY : b->p);
				out_sp(b->req);
				out_sp(b->usable);
				out_sp((unsigned long long)t);
			}
			out_str("\n");
		}
	for (int t = 0; t <= nthreads; t++) {
		for (size_t k = 0; k < threads[t].nvisit; k++) {
			const struct vrec *v = &visits[t][k];
			out_str("visit");
			out_hex(v->addr ^ HIDE_KEY);
			out_sp(v->size);
			out_sp(v->used);
			out_sp((unsigned long long)t);
			out_str("\n");
		}
		for (size_t k = 0; k < threads[t].nareas; k++) {
			const struct arec *a = &areas[t][k];
			out_str("area");
			out_hex(a->start ^ HIDE_KEY);
			out_sp(a->size);
			out_sp(a->full);
			out_sp(a->reserved);
			out_sp(a->committed);
			out_sp(a->used);
			out_sp((unsigned long long)t);
			out_str("\n");
		}
	}
#ifdef MI_HAVE_HEADER
	if (mode_stats)
		record_stats();
#endif
	out_str("end\n");
	out_flush();
	if (close(out_fd))
		die("cannot write truth.txt");
}

static void parse_mode(const char *m)
{
	mode_arg = m;
	while (*m) {
		size_t n = strcspn(m, ",");
		if (n == 5 && !strncmp(m, "abort", 5))
			mode_wait = false;
		else if (n == 4 && !strncmp(m, "wait", 4))
			mode_wait = true;
		else if (n == 5 && !strncmp(m, "visit", 5))
			mode_visit = true;
		else if (n == 7 && !strncmp(m, "mistats", 7))
			mode_stats = true;
		else
			die("MODE: abort, wait, visit, mistats, separated by commas");
		m += n;
		if (*m == ',')
			m++;
	}
#ifndef MI_HAVE_HEADER
	if (mode_visit || mode_stats)
		die("visit and mistats need mimalloc.h (-DMI_HAVE_HEADER)");
#endif
}

int main(int argc, char **argv)
{
	pthread_t tid[MAX_THREADS];
	nthreads = argc > 1 ? atoi(argv[1]) : 1;
	if (nthreads < 1 || nthreads > MAX_THREADS)
		die("THREADS: 1 to 16");
	parse_mode(argc > 2 ? argv[2] : "abort");
	unsigned n = (unsigned)nthreads;
	if (pthread_barrier_init(&allocated, NULL, n + 1) ||
	    pthread_barrier_init(&exited, NULL, n) ||
	    pthread_barrier_init(&freed, NULL, n) ||
	    pthread_barrier_init(&visited, NULL, n) ||
	    pthread_barrier_init(&done, NULL, n) ||
	    pthread_barrier_init(&recorded, NULL, n))
		die("pthread_barrier_init failed");
	for (int t = 1; t < nthreads; t++)
		if (pthread_create(&tid[t], NULL, worker_main,
				   (void *)(intptr_t)t))
			die("pthread_create failed");
	if (pthread_create(&exiter_thread, NULL, exiter_main, NULL))
		die("pthread_create failed");
	worker_main((void *)0);
	record();
	/* (record() unhid the lost blocks' addresses to print them: the
	   dead stack below must not keep them.)  */
	scrub_stack();
	if (mode_wait) {
		char buf[64];
		if (write(1, "ready\n", 6) != 6)
			return 2;
		while (read(0, buf, sizeof buf) > 0)
			;
		return 0;
	}
	abort();
}
