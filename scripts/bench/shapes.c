/* shapes: build one of several glibc heap shapes that bigheap.c does not
 * make, then abort, leaving a core for scripts/bench.sh.  Each shape is
 * one that a walk tuned on bigheap's heap may be slow or wrong on.
 *
 * usage: shapes [-w] MODE [PER_THREAD]
 *
 *   manyheaps  4 threads, each in its own arena of ~ten 64 MiB heaps
 *              (PER_THREAD default 5,000,000 blocks of 16..2000 bytes, 85%
 *              <= 128); every third block is freed, in allocation order,
 *              so the neighbours of each free chunk stay in use: nothing
 *              coalesces, the fastbins fill up (hundreds of thousands of
 *              entries each) and the unsorted bin holds the rest.
 *   churn      4 threads (PER_THREAD default 2,500,000): blocks are freed
 *              and malloc'd again over three rounds, the program writing
 *              each new block only from offset 8 on, so the fd word a
 *              free left (safe-linked, decoding into the same heap) stays
 *              in chunks that are in use; a last round of frees leaves the
 *              bins full.  A walk that takes an in-use chunk of a fastbin
 *              size with a plausible fd for a fastbin entry guesses wrong
 *              here, and must find out.
 *   ptrs       4 threads (PER_THREAD default 2,000,000 nodes): singly and
 *              doubly linked lists and binary trees whose nodes' first
 *              word is a heap pointer (next, or the parent), a fifth of
 *              the list nodes unlinked and freed and a third of the tree
 *              leaves cut off and freed: the first word of every in-use
 *              block looks like a free chunk's fd, and leaks' marking
 *              follows millions of pointers.
 *   arenas64   64 threads with M_ARENA_MAX raised to 128, each in an arena
 *              of its own with a small heap (PER_THREAD default 40,000
 *              blocks, a quarter freed at random).
 *
 * Every block that is not freed stays reachable (from each thread's table,
 * itself a malloc'd block the worker keeps), so `leaks` must find nothing
 * lost.  The main thread builds a small heap of the same kind in the main
 * arena.  When every worker has built its heap (a barrier, not a sleep) the
 * main thread takes mallinfo2() -- after it nothing calls malloc or free --
 * and prints, with write(2):
 *   allocs= live= freed= mmapped= live_bytes= heap_bytes= heap_how=
 *   arenas_used=N   (distinct arenas the workers' blocks lie in, + main)
 *   mallinfo arena=... (glibc's own statistics, for heapwalk's to equal)
 *   sample addr=0x... usable=N   (live blocks of every arena, mmapped ones
 *                                 and the tables among them)
 * then aborts.  -w: print "ready" and wait for a signal instead (the bench
 * takes the core with gdb's gcore when the kernel does not write one).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchio.h"

#define MAX_THREADS 64
#define SAMPLES 24              /* per worker, at most */
#define HEAP_MAX (64UL << 20)   /* a non-main arena's heap: aligned to this */
#define MMAP_THRESHOLD (128 * 1024)   /* fixed by main(): see there */

enum mode { MANYHEAPS, CHURN, PTRS, ARENAS64 };

struct worker {
    pthread_t tid;
    unsigned index;
    enum mode mode;
    size_t n;                   /* this worker's size parameter */
    uint64_t rng;
    unsigned want_samples;
    /* results */
    size_t allocs, live, freed, mmapped, live_bytes;
    void **tab;                 /* every live block, or the structures' roots */
    size_t cap;
    uintptr_t arena_key;        /* which arena (heap) the blocks went to */
    size_t nsamples;
    void *sample[SAMPLES];
    size_t sample_usable[SAMPLES];
};

static pthread_barrier_t built;

static double unit(uint64_t *s)
{
    return (double)(next_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

static void *xmalloc(struct worker *w, size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        say("shapes: out of memory allocating %zu bytes\n", n);
        abort();
    }
    w->allocs++;
    w->live++;
    if (n >= MMAP_THRESHOLD)
        w->mmapped++;
    return p;
}

static void xfree(struct worker *w, void *p)
{
    free(p);
    w->freed++;
    w->live--;
}

/* manyheaps: 85% of 16..128 bytes; the rest 129..2000 weighted to the
 * small end (u^6: mean ~400), which makes ~5 M blocks about ten 64 MiB
 * heaps. */
static size_t size_manyheaps(uint64_t *s)
{
    if (next_rand(s) % 100 < 85)
        return 16 + (size_t)(next_rand(s) % 113);
    double u = unit(s);
    return 129 + (size_t)(1871.0 * u * u * u * u * u * u);
}

/* churn and arenas64: bigheap's mix, 70% 16..64, 20% 65..256, 10% ..1000. */
static size_t size_mixed(uint64_t *s)
{
    uint64_t r = next_rand(s);
    unsigned b = (unsigned)(r % 100);
    r >>= 8;
    if (b < 70)
        return 16 + (size_t)(r % 49);
    if (b < 90)
        return 65 + (size_t)(r % 192);
    return 257 + (size_t)(r % 744);
}

/* Write a block as a program would, from byte FROM on (churn: 8, leaving
 * the word where free put the fd). */
static void fill(void *p, size_t n, size_t from, unsigned tag)
{
    if (n > from)
        memset((char *)p + from, (int)(0x40 + tag), n - from < 32 ? n - from : 32);
}

/* Two blocks above the mmap threshold, kept: the samples include them. */
static void big_blocks(struct worker *w, size_t at)
{
    for (size_t k = 0; k < 2; k++) {
        size_t sz = (256 + 128 * k) * 1024;
        w->tab[at + k] = xmalloc(w, sz);
        fill(w->tab[at + k], sz, 0, w->index);
    }
}

/* The table of n blocks of the sizes size_of draws, each written whole,
   and the two big blocks after them: how manyheaps, churn and arenas64
   begin.  Returns n. */
static size_t alloc_table(struct worker *w, size_t (*size_of)(uint64_t *))
{
    size_t n = w->n;
    w->cap = n + 2;
    w->tab = xmalloc(w, w->cap * sizeof *w->tab);
    big_blocks(w, n);
    for (size_t i = 0; i < n; i++) {
        size_t sz = size_of(&w->rng);
        w->tab[i] = xmalloc(w, sz);
        fill(w->tab[i], sz, 0, w->index);
    }
    return n;
}

static void build_manyheaps(struct worker *w)
{
    size_t n = alloc_table(w, size_manyheaps);
    /* A third, in allocation order: each freed chunk sits between two in
       use, so none coalesces and no free reaches the 64 KiB that would
       consolidate the fastbins. */
    for (size_t i = 1; i < n; i += 3) {
        xfree(w, w->tab[i]);
        w->tab[i] = NULL;
    }
}

static void build_churn(struct worker *w)
{
    size_t n = alloc_table(w, size_mixed);
    /* The program's own list of holes: malloc'd before any free, so
       that its large request finds no fastbin to consolidate. */
    size_t *holes = xmalloc(w, n * sizeof *holes);
    /* Three rounds: free 30% at random, then malloc as many again (from
       the tcache, the fastbins, the bins: wherever malloc finds them),
       writing only from offset 8 on. */
    for (int round = 0; round < 3; round++) {
        size_t nh = 0;
        for (size_t k = 0; k < n * 3 / 10; k++) {
            size_t i = (size_t)(next_rand(&w->rng) % n);
            if (w->tab[i] != NULL) {
                xfree(w, w->tab[i]);
                w->tab[i] = NULL;
                holes[nh++] = i;
            }
        }
        for (size_t k = 0; k < nh; k++) {
            size_t sz = size_mixed(&w->rng);
            w->tab[holes[k]] = xmalloc(w, sz);
            fill(w->tab[holes[k]], sz, 8, w->index);
        }
    }
    if (n * sizeof *holes >= MMAP_THRESHOLD)
        w->mmapped--;
    xfree(w, holes);
    /* The last frees: the bins hold entries at the crash, beside in-use
       chunks that carry the fd words of earlier ones. */
    for (size_t k = 0; k < n / 5; k++) {
        size_t i = (size_t)(next_rand(&w->rng) % n);
        if (w->tab[i] != NULL) {
            xfree(w, w->tab[i]);
            w->tab[i] = NULL;
        }
    }
}

/* ptrs: the nodes.  The first word of each is a heap pointer. */
struct snode {                  /* singly linked */
    struct snode *next;
    uint64_t key;
    char payload[];
};
struct dnode {                  /* doubly linked */
    struct dnode *next, *prev;
    uint64_t key;
    char payload[];
};
struct tnode {                  /* binary search tree, parent first */
    struct tnode *parent, *left, *right;
    uint64_t key;
    char payload[];
};

static size_t payload(uint64_t *s)
{
    return (size_t)(next_rand(s) % 97);   /* nodes of 16..128 bytes */
}

/* A third of the leaves (in a walk from ROOT) cut off and freed.  The walk's
 * stack is an array on the thread's stack, not malloc'd: a request of
 * its size (a "large" one, over 1 KiB) would consolidate the fastbins
 * that the frees fill.  Each node pops one entry and pushes at most two,
 * so a tree of NODES nodes needs NODES + 1. */
#define TREE_NODES 1000
static void prune(struct worker *w, struct tnode *root)
{
    struct tnode *stack[TREE_NODES + 1];
    size_t top = 0;
    stack[top++] = root;
    while (top > 0) {
        struct tnode *t = stack[--top];
        if (t->left == NULL && t->right == NULL) {
            if (t->parent != NULL && next_rand(&w->rng) % 3 == 0) {
                if (t->parent->left == t)
                    t->parent->left = NULL;
                else
                    t->parent->right = NULL;
                xfree(w, t);
            }
            continue;
        }
        if (t->left != NULL)
            stack[top++] = t->left;
        if (t->right != NULL)
            stack[top++] = t->right;
    }
}

/* ptrs: every structure is built first, then a guard block is taken, then
 * the frees run.  Without the guard a free of the chunk next to the top
 * would merge into it, and a free chunk of 64 KiB or more consolidates
 * every fastbin: the frees must leave full fastbins, as in a program
 * whose newest block stays. */
static void build_ptrs(struct worker *w)
{
    const size_t per = TREE_NODES;         /* nodes per list or tree */
    size_t nstruct = w->n / per + 1;
    /* tab: the structures, the guard, the two big blocks (last, as in
       the other shapes). */
    w->cap = nstruct + 3;
    w->tab = xmalloc(w, w->cap * sizeof *w->tab);
    big_blocks(w, nstruct + 1);
    for (size_t s = 0; s < nstruct; s++) {
        unsigned kind = (unsigned)(s % 3);
        if (kind == 0) {
            struct snode *head = NULL;
            for (size_t i = 0; i < per; i++) {
                size_t pl = payload(&w->rng);
                struct snode *x = xmalloc(w, sizeof *x + pl);
                x->next = head;
                x->key = next_rand(&w->rng);
                memset(x->payload, 0x5a, pl);
                head = x;
            }
            w->tab[s] = head;
        } else if (kind == 1) {
            struct dnode *head = NULL;
            for (size_t i = 0; i < per; i++) {
                size_t pl = payload(&w->rng);
                struct dnode *x = xmalloc(w, sizeof *x + pl);
                x->next = head;
                x->prev = NULL;
                x->key = next_rand(&w->rng);
                memset(x->payload, 0xa5, pl);
                if (head != NULL)
                    head->prev = x;
                head = x;
            }
            w->tab[s] = head;
        } else {
            struct tnode *root = NULL;
            for (size_t i = 0; i < per; i++) {
                size_t pl = payload(&w->rng);
                struct tnode *x = xmalloc(w, sizeof *x + pl);
                x->left = x->right = x->parent = NULL;
                x->key = next_rand(&w->rng);
                memset(x->payload, 0x3c, pl);
                if (root == NULL) {
                    root = x;
                    continue;
                }
                struct tnode *t = root;
                for (;;) {
                    struct tnode **next = x->key < t->key ? &t->left : &t->right;
                    if (*next == NULL) {
                        *next = x;
                        x->parent = t;
                        break;
                    }
                    t = *next;
                }
            }
            w->tab[s] = root;
        }
    }
    /* Zeroed: record() reads a sampled block's first words as links. */
    w->tab[nstruct] = xmalloc(w, 64);
    memset(w->tab[nstruct], 0, 64);
    for (size_t s = 0; s < nstruct; s++) {
        unsigned kind = (unsigned)(s % 3);
        if (kind == 0) {
            /* Every fifth node unlinked and freed. */
            size_t i = 0;
            for (struct snode **pp = (struct snode **)&w->tab[s]; *pp != NULL; i++) {
                if (i % 5 == 4) {
                    struct snode *x = *pp;
                    *pp = x->next;
                    xfree(w, x);
                } else {
                    pp = &(*pp)->next;
                }
            }
        } else if (kind == 1) {
            size_t i = 0;
            for (struct dnode *x = w->tab[s]; x != NULL; i++) {
                struct dnode *nx = x->next;
                if (i % 5 == 4) {       /* never the head (i = 0) */
                    x->prev->next = x->next;
                    if (x->next != NULL)
                        x->next->prev = x->prev;
                    xfree(w, x);
                }
                x = nx;
            }
        } else {
            prune(w, w->tab[s]);
        }
    }
}

static void build_arenas64(struct worker *w)
{
    size_t n = alloc_table(w, size_mixed);
    for (size_t k = 0; k < n / 4; k++) {
        size_t i = (size_t)(next_rand(&w->rng) % n);
        if (w->tab[i] != NULL) {
            xfree(w, w->tab[i]);
            w->tab[i] = NULL;
        }
    }
}

/* The truth the bench checks heapwalk against: the live bytes, and a
 * sample spread over the table (for ptrs: the structures' roots and heads,
 * and the nodes below them), the big blocks and the table itself. */
static void record(struct worker *w)
{
    size_t want = w->want_samples;
    size_t stride = w->cap / (want - 2) + 1;
    for (size_t i = 0; i < w->cap && w->nsamples < want - 2; i += stride) {
        size_t j = i;
        while (j < w->cap && w->tab[j] == NULL)
            j++;
        if (j >= w->cap)
            break;
        void *p = w->tab[j];
        /* ptrs: a node one step down, not only the head or root. */
        if (w->mode == PTRS && j < w->cap - 2 && w->nsamples % 2 == 1) {
            void **node = p;
            void *down = j % 3 == 2 ? node[1] : node[0];  /* tree: left */
            if (down != NULL)
                p = down;
        }
        w->sample[w->nsamples++] = p;
    }
    w->sample[w->nsamples++] = w->tab[w->cap - 1];   /* mmapped */
    w->sample[w->nsamples++] = w->tab;               /* the table */
    for (size_t k = 0; k < w->nsamples; k++)
        w->sample_usable[k] = malloc_usable_size(w->sample[k]);
    /* A block of the worker's arena (not an mmapped one): its heap's
       start names the arena (the main arena's brk heap is not aligned). */
    for (size_t j = 0; j < w->cap - 2; j++)
        if (w->tab[j] != NULL) {
            w->arena_key = (uintptr_t)w->tab[j] & ~(HEAP_MAX - 1);
            break;
        }
}

/* live_bytes: the usable bytes of every live block.  For ptrs the nodes
 * are walked; the tables' entries are the blocks elsewhere. */
static size_t tree_bytes(struct tnode *t)
{
    size_t b = 0;
    while (t != NULL) {
        b += malloc_usable_size(t) + tree_bytes(t->left);
        t = t->right;
    }
    return b;
}

static void count_live(struct worker *w)
{
    size_t b = malloc_usable_size(w->tab);
    if (w->mode != PTRS) {
        for (size_t i = 0; i < w->cap; i++)
            if (w->tab[i] != NULL)
                b += malloc_usable_size(w->tab[i]);
    } else {
        size_t nstruct = w->cap - 3;
        for (size_t s = 0; s < nstruct; s++) {
            if (s % 3 == 0)
                for (struct snode *x = w->tab[s]; x; x = x->next)
                    b += malloc_usable_size(x);
            else if (s % 3 == 1)
                for (struct dnode *x = w->tab[s]; x; x = x->next)
                    b += malloc_usable_size(x);
            else
                b += tree_bytes(w->tab[s]);
        }
        for (size_t i = nstruct; i < w->cap; i++)   /* guard, big blocks */
            b += malloc_usable_size(w->tab[i]);
    }
    w->live_bytes = b;
}

static void build(struct worker *w)
{
    switch (w->mode) {
    case MANYHEAPS: build_manyheaps(w); break;
    case CHURN:     build_churn(w); break;
    case PTRS:      build_ptrs(w); break;
    case ARENAS64:  build_arenas64(w); break;
    }
    count_live(w);
    record(w);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    build(w);
    pthread_barrier_wait(&built);
    for (;;)
        pause();    /* alive at the crash: its tcache is in the core */
    return NULL;
}

int main(int argc, char **argv)
{
    int wait_mode = 0, argi = 1;
    if (argi < argc && strcmp(argv[argi], "-w") == 0) {
        wait_mode = 1;
        argi++;
    }
    if (argi >= argc) {
        say("usage: shapes [-w] manyheaps|churn|ptrs|arenas64 [PER_THREAD]\n");
        return 2;
    }
    const char *name = argv[argi++];
    enum mode mode;
    unsigned nthreads = 4;
    size_t per;
    if (strcmp(name, "manyheaps") == 0)
        mode = MANYHEAPS, per = 5000000;
    else if (strcmp(name, "churn") == 0)
        mode = CHURN, per = 2500000;
    else if (strcmp(name, "ptrs") == 0)
        mode = PTRS, per = 2000000;
    else if (strcmp(name, "arenas64") == 0)
        mode = ARENAS64, per = 40000, nthreads = 64;
    else {
        say("shapes: unknown shape %s\n", name);
        return 2;
    }
    if (argi < argc)
        per = (size_t)strtoull(argv[argi++], NULL, 0);
    if (per < 3000) {
        say("shapes: PER_THREAD must be >= 3000\n");
        return 2;
    }

    /* A fixed threshold (glibc's dynamic one would move the big blocks
       into the heaps depending on which thread freed one first), and
       room for an arena per thread (the default limit is 8 per CPU). */
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    mallopt(M_ARENA_MAX, 128);

    struct worker *ws = calloc(nthreads + 1, sizeof *ws);
    if (ws == NULL || pthread_barrier_init(&built, NULL, nthreads + 1) != 0)
        return 1;
    for (unsigned t = 0; t <= nthreads; t++) {
        ws[t].index = t + 1;
        ws[t].mode = mode;
        ws[t].n = per;
        ws[t].rng = 0x9E3779B97F4A7C15ULL * (t + 1) ^ (uint64_t)mode;
        ws[t].want_samples = nthreads > 8 ? 6 : SAMPLES;
    }
    /* The main thread's share, in the main arena: a twenty-fifth. */
    struct worker *m = &ws[nthreads];
    m->index = 0;
    m->n = per / 25 > 3000 ? per / 25 : 3000;
    m->want_samples = SAMPLES;
    /* Threads all start before any builds, so that each gets an arena of
       its own (a thread that exits would hand its arena to the next). */
    for (unsigned t = 0; t < nthreads; t++)
        if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]) != 0) {
            say("shapes: pthread_create failed\n");
            return 1;
        }
    build(m);
    pthread_barrier_wait(&built);

    size_t allocs = 0, live = 0, freed = 0, mmapped = 0, live_bytes = 0;
    uintptr_t keys[MAX_THREADS + 1];
    size_t nkeys = 0;
    for (unsigned t = 0; t <= nthreads; t++) {
        allocs += ws[t].allocs;
        live += ws[t].live;
        freed += ws[t].freed;
        mmapped += ws[t].mmapped;
        live_bytes += ws[t].live_bytes;
        size_t k = 0;
        while (k < nkeys && keys[k] != ws[t].arena_key)
            k++;
        if (k == nkeys)
            keys[nkeys++] = ws[t].arena_key;
    }
    /* The last thing before the crash that reads the heap: after it no
       malloc or free runs (say() formats on the stack). */
    struct mallinfo2 mi = mallinfo2();

    say("shape=%s\n", name);
    say("pid=%ld\n", (long)getpid());
    say("threads=%u\n", nthreads);
    say("allocs=%zu\n", allocs);
    say("live=%zu\n", live);
    say("freed=%zu\n", freed);
    say("mmapped=%zu\n", mmapped);
    say("live_bytes=%zu\n", live_bytes);
    say("arenas_used=%zu\n", nkeys);
    say("heap_bytes=%zu\n", mi.arena + mi.hblkhd);
    say("heap_how=mallinfo2 arena+hblkhd\n");
    say("leaks_truth=none\n");
    say_mallinfo(&mi);
    for (unsigned t = 0; t <= nthreads; t++)
        say_samples(ws[t].sample, ws[t].sample_usable, ws[t].nsamples);
    finish(wait_mode);
}
