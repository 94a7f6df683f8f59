/* multiheap1 - thread arenas of two 64 MiB heaps each, their free lists
 * crossing from one heap to the other, then abort().
 *
 *   gcc -O0 -g -pthread -o prog multiheap1.c && ./prog truth.txt
 *
 * The case of tests/t0241-multiheap-proof.sh: heapwalk's counting walks
 * prove the small and large bins and the fastbins by sums instead of
 * walking them (libheapwalk/alloc/ptmalloc/linksums.c), and the fastbin
 * entries they count are guesses.  This program makes the heap where that
 * is hardest: lists whose entries lie in two heaps of one arena, and the
 * chunk glibc frees itself when an arena grows a heap.
 *
 * Three worker threads take turns (corpora/common/turns.h: no two touch
 * the heap at once, so each run does the same operations in the same
 * order), each in an arena of its own:
 *  1. allocation: blocks of random sizes (a fixed seed per worker; by
 *     count mostly 16-120 bytes, some 129-2000, a few 4000-30000, which
 *     carry most of the bytes) until ALLOC_BYTES of chunks are taken:
 *     more than one heap holds, so the arena maps a second heap.  All of
 *     them come from top, in address order.
 *  2. near the end of the first heap the program steers: it peeks at the
 *     arena's top (malloc_state.top) and takes one block that leaves a
 *     top of exactly OLDTOP + MINSIZE bytes, then one that no longer
 *     fits.  glibc maps the second heap and frees the first heap's old
 *     top (sysmalloc's _int_free of old_top), a chunk of OLDTOP bytes,
 *     into the empty tcache; the program takes it back at once.  Its
 *     first word is then the safe-linked NULL of a tcache list's end.
 *  3. frees: every third block in allocation order (i % 3 == 1), 90% of
 *     them, so every freed block has live neighbours (nothing coalesces)
 *     and each list's entries lie in both heaps: the first seven of each
 *     size go to the tcache, the rest of the small ones to the fastbins,
 *     the others to the unsorted bin.
 *  4. two malloc(SORT_REQ): a small-bin size nothing freed has, so each
 *     sorts the whole unsorted bin into the small and large bins and
 *     splits a bigger free chunk (a large request would consolidate the
 *     fastbins first: none is made after the frees).
 *  5. the last 10% of the frees (they stay in the unsorted bin, the
 *     fastbins and the tcache).
 *  6. churn: CHURN_EACH mallocs of each of the three smallest chunk sizes
 *     (0x20, 0x30, 0x40), which the tcache and the fastbins serve.
 * The heap operations are the same in both modes; what differs is what
 * the program writes into its blocks:
 *  - clean (multiheap1.c): every byte of every block, a byte with its top
 *    bit set, so that no word of data decodes as a safe-linked pointer
 *    into the heap nor to NULL (heapwalk's guess takes only those).
 *  - churn (multiheap2.c, which defines MULTIHEAP_CHURN): the blocks glibc
 *    hands back from its lists (every malloc after the first free, and
 *    the old top taken back) are written from offset 8 on: their first
 *    word keeps the stale link the list left there, as a program that
 *    never writes the first field of a struct leaves it.
 *
 * Then main, once every worker is parked for good, computes what the
 * truth file says (no heap operation after the workers finish), calls
 * mallinfo2() last, writes the truth with write(2) from static storage
 * and aborts.  To know its own arenas' fastbins the program reads
 * glibc's malloc_state, as glibc 2.27-2.42 lay it out on LP64
 * (fastbinsY at offset 16, top at 96), and the heap_info at each heap's
 * 64 MiB-aligned start (ar_ptr first); it checks those reads against
 * mallinfo2() (the fastbin entries of all arenas = smblks, their bytes =
 * fsmblks) and refuses (exit 2, no core) when they disagree.
 *
 * Truth format (text, one record per line, fields separated by one
 * space; '#' lines are comments):
 *   prog NAME                 multiheap1 or multiheap2
 *   mode clean|churn
 *   worker W TID 0xARENA NHEAPS 0xSPANLO 0xSPANHI
 *       W: 1..3; ARENA: its malloc_state; NHEAPS: the 64 MiB heaps its
 *       blocks lie in (their addresses >> 26); [SPANLO, SPANHI): from the
 *       lowest of those heaps' starts to the end of the highest
 *   oldtop W 0xCHUNK SIZE     the first heap's old top glibc freed, taken
 *                             back (a live block at CHUNK + 16)
 *   fast W SIZE ENTRIES SUSPECTS NULLS
 *       for each fastbin (chunk SIZE 32..176): ENTRIES, the chunks in
 *       worker W's arena's fastbin (the program walked it); SUSPECTS, the
 *       live blocks of that chunk size whose first word, read as a
 *       safe-linked fd at that block, decodes to 0 or to a 16-aligned
 *       address in [SPANLO, SPANHI) other than its own chunk: what a
 *       guess by the data alone would take for a fastbin entry; NULLS,
 *       those of them whose word decodes to 0 (a list's end)
 *   live W 0xADDR USABLE      a block the program holds: malloc's pointer
 *                             and malloc_usable_size()
 *   freed W 0xADDR            a block the program freed (a later malloc
 *                             may have handed it out again: then a live
 *                             line follows for it, or for a block around
 *                             it)
 *   mallinfo2 KEY VALUE       the ten fields, the program's own
 *                             mallinfo2() after its last heap operation
 *   end
 * Blocks are listed worker by worker, each in allocation order.
 * Comment lines: "# glibc VERSION" (gnu_get_libc_version() at run time).
 * tests/tools/blockcheck.c reads it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/out.h"
#include "../common/glibcver.h"
#include "../common/turns.h"

#ifndef MULTIHEAP_CHURN
#define MULTIHEAP_CHURN 0
#endif
#if MULTIHEAP_CHURN
#define PROG_NAME "multiheap2"
#else
#define PROG_NAME "multiheap1"
#endif

#define NWORKERS 3
#define HEAP_MAX ((uintptr_t)64 << 20)   /* HEAP_MAX_SIZE on LP64 */
#define ALLOC_BYTES ((size_t)76 << 20)  /* per worker: past one heap */
#define MAX_BLOCKS 100000                /* per worker, all phases */
#define MINSIZE 32
#define NFASTBINS 10                     /* chunk sizes 0x20..0xb0 */
/* glibc 2.27-2.42, LP64: struct malloc_state's fastbinsY and top.  */
#define MS_FASTBINS 16
#define MS_TOP 96
/* A request of chunk 0x3f0 (requests 985-1000): the largest small-bin
   size; the random sizes skip it, so nothing free fits it exactly.  */
#define SORT_REQ 1000
#define SORT_LO 985
#define SORT_HI 1000
#define CHURN_EACH 150
/* Steer the first heap's end once less than this is left of it: the
   block that fills it stays below the 128 KiB mmap threshold.  */
#define STEER_AT (100 * 1024)

enum { LIVE, FREED };

struct block {
	uintptr_t p;
	uint32_t usable;
	uint8_t state;
	uint8_t keep;        /* never freed: the blocks the steering took */
};

struct worker {
	pid_t tid;
	uint32_t seed;
	size_t oldtop_size;          /* the chunk size the old top is made */
	uintptr_t oldtop;            /* its chunk, once taken back */
	int n;
	struct block b[MAX_BLOCKS];
	/* What main computes at the end.  */
	uintptr_t arena, span_lo, span_hi;
	int nheaps;
	unsigned long entries[NFASTBINS], suspects[NFASTBINS], nulls[NFASTBINS];
};

static struct worker W[NWORKERS + 1];   /* 1..NWORKERS */

/* ---- peeking at glibc's own structures ------------------------------ */

static size_t chunk_size_of(uintptr_t user)
{
	return ((const size_t *)user)[-1] & ~(size_t)7;
}

/* The arena of a thread arena's block: heap_info.ar_ptr, the first word
   of its 64 MiB-aligned heap.  */
static uintptr_t arena_of(uintptr_t user)
{
	if (!(((const size_t *)user)[-1] & 4))   /* NON_MAIN_ARENA */
		die("plan error: a worker's block is in main_arena");
	return *(const uintptr_t *)((user - 16) & ~(HEAP_MAX - 1));
}

static uintptr_t arena_top(uintptr_t arena)
{
	return *(const uintptr_t *)(arena + MS_TOP);
}


/* ---- blocks ---------------------------------------------------------- */

static uint32_t next_rand(struct worker *w)
{
	/* xorshift32: the same sizes every run.  */
	uint32_t x = w->seed;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	w->seed = x;
	return x;
}

/* Fill [p + from, p + n) with data no safe-linked decoding takes for a
   link: every byte has its top bit set, so every word decodes (XORed
   with an address >> 12, which leaves the top byte) above any user
   address.  */
static void fill(uintptr_t p, size_t n, size_t from, int seq)
{
	if (from < n)
		memset((char *)p + from, 0x80 | (seq & 0x7f), n - from);
}

/* malloc(req), recorded; `handed_back`: a block glibc may give from one
   of its lists, whose first word the churn mode leaves alone.  */
static uintptr_t take(struct worker *w, size_t req, int handed_back, int keep)
{
	if (w->n == MAX_BLOCKS)
		die("plan error: too many blocks");
	void *v = malloc(req);
	if (!v)
		die("malloc failed");
	uintptr_t p = (uintptr_t)v;
	struct block *b = &w->b[w->n];
	b->p = p;
	b->usable = (uint32_t)malloc_usable_size(v);
	b->state = LIVE;
	b->keep = (uint8_t)keep;
	fill(p, b->usable, MULTIHEAP_CHURN && handed_back ? 8 : 0, w->n);
	w->n++;
	return p;
}

static void give_back(struct worker *w, int i)
{
	struct block *b = &w->b[i];
	if (b->state != LIVE || b->keep)
		die("plan error: freeing a kept or freed block");
	b->state = FREED;
	free((void *)b->p);
}

static size_t random_request(struct worker *w)
{
	uint32_t r = next_rand(w) % 1000;
	if (r < 720)
		return 16 + next_rand(w) % 105;          /* 16..120 */
	if (r < 950) {
		size_t s = 129 + next_rand(w) % 1872;    /* 129..2000 */
		if (s >= SORT_LO && s <= SORT_HI)
			s += 16;                         /* not the sort size */
		return s;
	}
	return 4000 + next_rand(w) % 26001;              /* 4000..30000 */
}

/* The end of the first heap: leave a top of w->oldtop_size + MINSIZE
   bytes, then ask for more than that.  sysmalloc cannot grow the heap
   past 64 MiB, maps a second one, and frees the old top less MINSIZE
   (its fenceposts) -- w->oldtop_size bytes -- into the tcache, empty
   as nothing was freed yet.  The next malloc of that size takes it.  */
static void steer_old_top(struct worker *w, uintptr_t arena)
{
	uintptr_t top = arena_top(arena);
	uintptr_t heap_end = (top & ~(HEAP_MAX - 1)) + HEAP_MAX;
	size_t fill_chunk = heap_end - top - (w->oldtop_size + MINSIZE);
	uintptr_t p;

	take(w, fill_chunk - 8, 0, 1);
	if (arena_top(arena) != heap_end - (w->oldtop_size + MINSIZE))
		die("plan error: the first heap's top is not where steered");
	p = take(w, 200, 0, 1);                 /* chunk 0xd0: no room */
	if ((p & ~(HEAP_MAX - 1)) == (top & ~(HEAP_MAX - 1)))
		die("plan error: no second heap");
	uintptr_t old = heap_end - (w->oldtop_size + MINSIZE);
	if (chunk_size_of(old + 16) != w->oldtop_size)
		die("plan error: the old top is not of the steered size");
	p = take(w, w->oldtop_size - 8, 1, 1);
	if (p != old + 16)
		die("plan error: the old top was not taken back from the tcache");
	w->oldtop = old;
}

static void run_worker(struct worker *w)
{
	size_t bytes = 0;
	uintptr_t arena = 0, first_heap = 0;
	int i, nalloc, split;

	/* 1, 2: allocation, steering at the first heap's end.  */
	while (bytes < ALLOC_BYTES) {
		if (arena && !w->oldtop) {
			uintptr_t top = arena_top(arena);
			if ((top & ~(HEAP_MAX - 1)) == first_heap &&
			    first_heap + HEAP_MAX - top < STEER_AT)
				steer_old_top(w, arena);
		}
		uintptr_t p = take(w, random_request(w), 0, 0);
		bytes += chunk_size_of(p);
		if (!arena) {
			arena = arena_of(p);
			first_heap = p & ~(HEAP_MAX - 1);
		}
	}
	if (!w->oldtop)
		die("plan error: the first heap never filled");
	take(w, 40, 0, 1);     /* a live block between the last and top */
	nalloc = w->n;
	split = nalloc / 10 * 9;

	/* 3: the first 90% of the frees.  */
	for (i = 1; i < split; i += 3)
		if (!w->b[i].keep)
			give_back(w, i);
	/* 4: the unsorted bin sorted.  */
	take(w, SORT_REQ, 1, 0);
	take(w, SORT_REQ, 1, 0);
	/* 5: the rest of the frees.  */
	for (; i < nalloc; i += 3)
		if (!w->b[i].keep)
			give_back(w, i);
	/* 6: churn, from the tcache and the fastbins.  */
	for (size_t req = 24; req <= 56; req += 16)
		for (int k = 0; k < CHURN_EACH; k++)
			take(w, req, 1, 0);
}

static void *worker_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	struct worker *w = &W[idx];
	w->tid = gettid();
	turn_wait(idx);
	run_worker(w);
	turn_pass(idx + 1);
	park_forever();
	return NULL;
}

/* ---- the truth ------------------------------------------------------- */

/* What main computes from its records and the arena, read only.  */
static void survey(struct worker *w)
{
	uintptr_t heaps[16];
	int nh = 0;

	w->arena = arena_of(w->b[0].p);
	w->span_lo = UINTPTR_MAX;
	w->span_hi = 0;
	for (int i = 0; i < w->n; i++) {
		uintptr_t p = w->b[i].p, h = p & ~(HEAP_MAX - 1);
		int k;
		if (w->b[i].state == LIVE && arena_of(p) != w->arena)
			die("plan error: a worker's blocks are in two arenas");
		for (k = 0; k < nh && heaps[k] != h; k++)
			;
		if (k == nh) {
			if (nh == 16)
				die("plan error: too many heaps");
			heaps[nh++] = h;
		}
		if (h < w->span_lo)
			w->span_lo = h;
		if (h + HEAP_MAX > w->span_hi)
			w->span_hi = h + HEAP_MAX;
	}
	w->nheaps = nh;

	/* The fastbins, walked: a head is a plain chunk pointer, each fd is
	   safe-linked (stored XORed with its own address >> 12).  */
	const uintptr_t *head = (const uintptr_t *)(w->arena + MS_FASTBINS);
	for (int k = 0; k < NFASTBINS; k++) {
		unsigned long n = 0;
		for (uintptr_t c = head[k]; c;) {
			if (c < w->span_lo || c >= w->span_hi || (c & 15) ||
			    chunk_size_of(c + 16) != (size_t)(k + 2) * 16)
				die("plan error: a fastbin entry is not what it "
				    "should be");
			if (++n > MAX_BLOCKS)
				die("plan error: a fastbin list loops");
			c = *(const uintptr_t *)(c + 16) ^ ((c + 16) >> 12);
		}
		w->entries[k] = n;
	}

	/* The live blocks a guess by their data would take.  */
	for (int i = 0; i < w->n; i++) {
		const struct block *b = &w->b[i];
		size_t sz = chunk_size_of(b->p);
		if (b->state != LIVE || sz / 16 - 2 >= NFASTBINS)
			continue;
		uintptr_t d = *(const uintptr_t *)b->p ^ (b->p >> 12);
		if (d == 0 || (!(d & 15) && d >= w->span_lo && d < w->span_hi &&
			       d != b->p - 16))
			w->suspects[sz / 16 - 2]++;
		if (d == 0)
			w->nulls[sz / 16 - 2]++;
	}
}

static void out_hex_kv(const char *tag, int w, uintptr_t a)
{
	out_str(tag);
	out_sp((unsigned)w);
	out_str(" ");
	out_num(a, 16);
}

int main(int argc, char **argv)
{
	pthread_t th[NWORKERS];
	/* The old tops' chunk sizes: two fastbins the churn leaves alone
	   (in the churn core each fails by its one stale NULL) and one it
	   churns anyway.  */
	static const size_t oldtop_sizes[NWORKERS + 1] = { 0, 0x50, 0x60, 0x30 };

	if (argc != 2)
		die("usage: " PROG_NAME " TRUTHFILE");
	if (glibc_minor() < 32 || glibc_minor() > 42)
		die("needs glibc 2.32-2.42 (safe-linked fastbins, this "
		    "malloc_state layout)");
	out_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0)
		die("cannot create the truth file");
	/* An arena per worker, whatever the machine's cores.  */
	if (mallopt(M_ARENA_MAX, 4 * NWORKERS) != 1)
		die("mallopt(M_ARENA_MAX) failed");
	for (int i = 1; i <= NWORKERS; i++) {
		W[i].seed = 0x9e3779b9u * (uint32_t)i;
		W[i].oldtop_size = oldtop_sizes[i];
		if (pthread_create(&th[i - 1], NULL, worker_main,
				   (void *)(intptr_t)i))
			die("pthread_create failed");
	}
	turn_pass(1);
	turn_wait(NWORKERS + 1);   /* every worker done and parked */

	unsigned long fast_n = 0, fast_bytes = 0;
	for (int i = 1; i <= NWORKERS; i++) {
		survey(&W[i]);
		for (int k = 0; k < NFASTBINS; k++) {
			fast_n += W[i].entries[k];
			fast_bytes += W[i].entries[k] * (unsigned long)(k + 2) * 16;
		}
	}
	/* Last: glibc walks its own lists for it.  */
	struct mallinfo2 m = mallinfo2();
	if (m.smblks != fast_n || m.fsmblks != fast_bytes)
		die("plan error: the fastbins walked here are not mallinfo2's "
		    "(another malloc_state layout, or main_arena has some)");

	out_str("# heapwalk corpus ground truth, format: corpora/ptmalloc/"
		"multiheap1.c\n# glibc ");
	out_str(gnu_get_libc_version());
	out_str("\nprog " PROG_NAME "\nmode ");
	out_str(MULTIHEAP_CHURN ? "churn\n" : "clean\n");
	for (int i = 1; i <= NWORKERS; i++) {
		const struct worker *w = &W[i];
		out_str("worker");
		out_sp((unsigned)i);
		out_sp((unsigned long long)w->tid);
		out_str(" ");
		out_num(w->arena, 16);
		out_sp((unsigned)w->nheaps);
		out_str(" ");
		out_num(w->span_lo, 16);
		out_str(" ");
		out_num(w->span_hi, 16);
		out_str("\n");
		out_hex_kv("oldtop", i, w->oldtop);
		out_sp(w->oldtop_size);
		out_str("\n");
		for (int k = 0; k < NFASTBINS; k++) {
			out_str("fast");
			out_sp((unsigned)i);
			out_sp((unsigned)(k + 2) * 16);
			out_sp(w->entries[k]);
			out_sp(w->suspects[k]);
			out_sp(w->nulls[k]);
			out_str("\n");
		}
	}
	for (int i = 1; i <= NWORKERS; i++)
		for (int j = 0; j < W[i].n; j++) {
			const struct block *b = &W[i].b[j];
			out_hex_kv(b->state == LIVE ? "live" : "freed", i, b->p);
			if (b->state == LIVE)
				out_sp(b->usable);
			out_str("\n");
		}
	const char *k[10] = { "arena", "ordblks", "smblks", "hblks", "hblkhd",
			      "usmblks", "fsmblks", "uordblks", "fordblks",
			      "keepcost" };
	size_t v[10] = { m.arena, m.ordblks, m.smblks, m.hblks, m.hblkhd,
			 m.usmblks, m.fsmblks, m.uordblks, m.fordblks,
			 m.keepcost };
	for (int i = 0; i < 10; i++)
		out_kv("mallinfo2", k[i], v[i]);
	out_str("end\n");
	out_flush();
	close(out_fd);
	abort();
}
