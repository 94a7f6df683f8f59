/* bigheap: build a large, realistic ptmalloc heap and then abort, leaving a
 * core file for benchmarking heapwalk.
 *
 * usage: bigheap [-w] [THREADS [ALLOCS_PER_THREAD]]
 *   THREADS worker threads (default 4; each ends up in its own arena) each
 *   make ALLOCS_PER_THREAD allocations (default 2,850,000) of mixed sizes
 *   16..1000 bytes (plus a few 1..4 KiB), free ~30% of them in random order
 *   (populating tcache, fastbins, the unsorted bin and, through later mallocs,
 *   the small and large bins), and keep a few big mmapped blocks.  The main thread does the same
 *   on a smaller scale in the main arena.  Everything stays alive (worker
 *   threads block) and the program prints its own counts with write(2) so
 *   nothing is lost in stdio buffers, then calls abort().
 *   -w: instead of aborting, print "ready" and wait for a signal (used to take
 *   a core with gdb's gcore when the kernel does not write one).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchio.h"

#define SAMPLES 24

struct worker {
    pthread_t tid;
    unsigned index;
    size_t nallocs;
    uint64_t rng;
    /* results */
    size_t allocs, live, freed, mmapped;
    size_t live_bytes;  /* sum of malloc_usable_size over live blocks */
    void **ptrs;        /* kept reachable so the heap is not "leaked" */
    /* A sample of the live blocks, spread over the table (the big
       mmapped ones and the table itself among them), for the bench to
       check heapwalk's view of them against: address, usable size.  */
    size_t nsamples;
    void *sample[SAMPLES];
    size_t sample_usable[SAMPLES];
};

static pthread_barrier_t done_barrier;

/* Mostly small blocks, a tail of bigger ones: 70% 16..64, 20% 65..256,
 * 10% 257..1000 bytes.  Average ~125 bytes requested. */
static size_t pick_size(uint64_t *rng)
{
    uint64_t r = next_rand(rng);
    unsigned bucket = (unsigned)(r % 100);
    r >>= 8;
    if (bucket < 70)
        return 16 + (size_t)(r % 49);
    if (bucket < 90)
        return 65 + (size_t)(r % 192);
    return 257 + (size_t)(r % 744);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        say("bigheap: out of memory allocating %zu bytes\n", n);
        abort();
    }
    return p;
}

static void fill(void *p, size_t n, unsigned tag)
{
    /* Touch a little of every block so the content is realistic. */
    memset(p, (int)(0x40 + tag), n < 32 ? n : 32);
}

static void release(struct worker *w, size_t i)
{
    free(w->ptrs[i]);
    w->ptrs[i] = NULL;
    w->freed++;
    w->live--;
}

static void build_heap(struct worker *w)
{
    size_t n = w->nallocs;
    size_t extra = n / 200 + 64;       /* allocations after the frees */
    size_t cap = n + extra + 3;   /* + 3 slots for the big blocks */

    /* The pointer table itself is a big mmapped malloc chunk. */
    w->ptrs = xmalloc(cap * sizeof *w->ptrs);
    w->allocs++;
    w->live++;
    w->mmapped++;

    /* Phase 1: allocate. */
    for (size_t i = 0; i < n; i++) {
        size_t sz = pick_size(&w->rng);
        w->ptrs[i] = xmalloc(sz);
        fill(w->ptrs[i], sz, w->index);
    }
    w->allocs += n;
    w->live += n;

    /* A few blocks above the mmap threshold, one of them freed again.  Done
     * before any free: a large request consolidates the fastbins. */
    void *big[3];
    for (unsigned k = 0; k < 4; k++) {
        size_t sz = (size_t)(256 + 128 * k) * 1024;
        void *p = xmalloc(sz);
        fill(p, sz, w->index);
        w->allocs++;
        if (k == 3) {
            free(p);
            w->freed++;
        } else {
            big[k] = p;
            w->live++;
            w->mmapped++;
        }
    }

    /* Phase 2: free ~25% in random order: fills tcache, fastbins, and the
     * unsorted bin (with coalescing of neighbours). */
    for (size_t k = 0; k < n / 4; k++) {
        size_t i = (size_t)(next_rand(&w->rng) % n);
        if (w->ptrs[i] != NULL)
            release(w, i);
    }

    /* Phase 3: more requests; every 64th is a large one (1..4 KiB), which
     * consolidates the fastbins and sorts the unsorted chunks into the small
     * and large bins (up to 10000 per call). */
    for (size_t i = n; i < n + extra; i++) {
        size_t sz = pick_size(&w->rng);
        if (i % 64 == 0)
            sz = 1024 + (size_t)(next_rand(&w->rng) % 3072);
        w->ptrs[i] = xmalloc(sz);
        fill(w->ptrs[i], sz, w->index);
        w->allocs++;
        w->live++;
    }

    for (unsigned k = 0; k < 3; k++)
        w->ptrs[n + extra + k] = big[k];

    /* Phase 4: free some more (total ~30%), so tcache, fastbins and the
     * unsorted bin are populated at the moment of the dump. */
    for (size_t k = 0; k < n / 14; k++) {
        size_t i = (size_t)(next_rand(&w->rng) % (n + extra));
        if (w->ptrs[i] != NULL)
            release(w, i);
    }

    for (size_t i = 0; i < cap; i++)
        if (w->ptrs[i] != NULL)
            w->live_bytes += malloc_usable_size(w->ptrs[i]);
    w->live_bytes += malloc_usable_size(w->ptrs);

    size_t stride = cap / (SAMPLES - 2) + 1;
    for (size_t i = 0; i < cap && w->nsamples < SAMPLES - 2; i += stride) {
        size_t j = i;
        while (j < cap && w->ptrs[j] == NULL)
            j++;
        if (j < cap)
            w->sample[w->nsamples++] = w->ptrs[j];
    }
    w->sample[w->nsamples++] = w->ptrs[cap - 1];   /* mmapped */
    w->sample[w->nsamples++] = w->ptrs;            /* mmapped, the table */
    for (size_t k = 0; k < w->nsamples; k++)
        w->sample_usable[k] = malloc_usable_size(w->sample[k]);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    build_heap(w);
    pthread_barrier_wait(&done_barrier);
    for (;;)
        pause();    /* stay alive: keep this thread's tcache in the core */
    return NULL;
}

int main(int argc, char **argv)
{
    int wait_mode = 0;
    int argi = 1;
    if (argi < argc && strcmp(argv[argi], "-w") == 0) {
        wait_mode = 1;
        argi++;
    }
    unsigned nthreads = 4;
    size_t per_thread = 2850000;
    if (argi < argc)
        nthreads = (unsigned)strtoul(argv[argi++], NULL, 0);
    if (argi < argc)
        per_thread = (size_t)strtoull(argv[argi++], NULL, 0);
    if (nthreads < 1 || nthreads > 64 || per_thread < 1000) {
        say("usage: bigheap [-w] [THREADS(1..64) [ALLOCS_PER_THREAD(>=1000)]]\n");
        return 2;
    }

    /* A fixed threshold: freeing an mmapped block must not raise it (glibc's
     * dynamic threshold would otherwise make the big blocks of the other
     * threads land in the heap, depending on timing). */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);

    struct worker *ws = calloc(nthreads + 1, sizeof *ws);
    if (ws == NULL)
        return 1;
    if (pthread_barrier_init(&done_barrier, NULL, nthreads + 1) != 0)
        return 1;

    for (unsigned t = 0; t < nthreads; t++) {
        ws[t].index = t + 1;
        ws[t].nallocs = per_thread;
        ws[t].rng = 0x9E3779B97F4A7C15ULL * (t + 1);
        if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) {
            say("bigheap: pthread_create failed\n");
            return 1;
        }
    }

    /* The main thread builds a smaller heap in the main arena (brk heap). */
    struct worker *m = &ws[nthreads];
    m->index = 0;
    m->nallocs = per_thread / 25 > 1000 ? per_thread / 25 : 1000;
    m->rng = 0xD1B54A32D192ED03ULL;
    build_heap(m);

    pthread_barrier_wait(&done_barrier);

    size_t allocs = 0, live = 0, freed = 0, mmapped = 0, live_bytes = 0;
    for (unsigned t = 0; t <= nthreads; t++) {
        allocs += ws[t].allocs;
        live += ws[t].live;
        freed += ws[t].freed;
        mmapped += ws[t].mmapped;
        live_bytes += ws[t].live_bytes;
    }
    struct mallinfo2 mi = mallinfo2();

    say("pid=%ld\n", (long)getpid());
    say("threads=%u\n", nthreads);
    say("allocs=%zu\n", allocs);
    say("live=%zu\n", live);
    say("freed=%zu\n", freed);
    say("mmapped=%zu\n", mmapped);
    say("live_bytes=%zu\n", live_bytes);
    /* Under LD_PRELOAD'ed jemalloc, glibc's mallinfo2 sees an idle
       heap: ask jemalloc (found at run time, so this file needs no
       jemalloc headers) for the memory its extents map.  */
    typedef int mallctl_fn(const char *, void *, size_t *, void *, size_t);
    mallctl_fn *mallctl = (mallctl_fn *)dlsym(RTLD_DEFAULT, "mallctl");
    size_t je_mapped = 0, len = sizeof je_mapped;
    uint64_t epoch = 1;
    /* gperftools' tcmalloc has no mallinfo2 either: its C interface
       says the heap's size (the memory its page heap holds).  */
    typedef int tc_prop_fn(const char *, size_t *);
    tc_prop_fn *tc_prop = (tc_prop_fn *)dlsym(RTLD_DEFAULT,
        "MallocExtension_GetNumericProperty");
    size_t tc_heap = 0;
    if (mallctl && mallctl("epoch", NULL, NULL, &epoch, sizeof epoch) == 0 &&
        mallctl("stats.mapped", &je_mapped, &len, NULL, 0) == 0) {
        say("heap_bytes=%zu\n", je_mapped);
        say("heap_how=jemalloc stats.mapped\n");
    } else if (tc_prop && tc_prop("generic.heap_size", &tc_heap)) {
        say("heap_bytes=%zu\n", tc_heap);
        say("heap_how=tcmalloc generic.heap_size\n");
    } else {
        say("heap_bytes=%zu\n", mi.arena + mi.hblkhd);
        say("heap_how=mallinfo2 arena+hblkhd\n");
    }
    say_mallinfo(&mi);

    for (unsigned t = 0; t <= nthreads; t++)
        say_samples(ws[t].sample, ws[t].sample_usable, ws[t].nsamples);

    finish(wait_mode);
}
