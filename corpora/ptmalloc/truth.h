/* truth.h - heap-free ground-truth recording for the ptmalloc corpus.
 *
 * Included by the corpus programs (bins1.c, threads8.c).  Every program
 * builds a heap whose free lists are known by construction, records what
 * it did in static storage (never on the heap), writes the record to the
 * file named by argv[1] with open(2)/write(2) and a home-made number
 * formatter (no stdio: stdio buffers come from malloc), calls mallinfo2()
 * as the very last thing and then abort()s so the kernel writes a core.
 *
 * The expected free list of every free() is derived from a small model of
 * glibc 2.36 (tcache first while fewer than 7 entries, then fastbins for
 * chunk sizes <= 0x80, else the unsorted bin; the unsorted bin is sorted
 * into small/large bins by a large malloc that nothing free can satisfy).
 * Also right for 2.31 (checked with gdb); from 2.41 on, free() puts a
 * small (< 0x400) chunk straight into its small bin instead of the
 * unsorted bin; 2.43 has no fastbins and 16 chunks per tcache bin (the
 * running glibc's version decides).
 * The model refuses plans that would make glibc do something else
 * (consolidation, reuse of a freed chunk, merging with a free neighbour),
 * and the program then exits with status 2 instead of dumping a core.
 *
 * Output format (one record per line, fields separated by one space):
 *   prog NAME
 *   thread IDX TID ARENA NHEAPS   ARENA: "main", the malloc_state address
 *        or "none" (no live heap chunk: a thread that never called malloc)
 *   alloc 0xUSER REQ USABLE WHERE IDX
 *        WHERE: heap | mmapped (live) | tcache | fastbin | unsorted |
 *        smallbin | largebin (freed, in that list) | merged (freed and
 *        coalesced into top or a neighbour: no longer a chunk)
 *   mallinfo2 KEY VALUE           (the ten fields, recorded last)
 *   end
 * Comment lines: "# glibc VERSION" (gnu_get_libc_version() at run time)
 * and, when built against a glibc older than 2.33 (no mallinfo2) or with
 * -DHW_NO_MALLINFO2, "# mallinfo2 from mallinfo(): int fields" -- the
 * values then come from mallinfo(), whose fields are int: exact while
 * every total is below 2 GiB (the corpus heaps are far smaller).
 * See tests/tools/truthcmp.c for the consumer.
 */
#ifndef CORPUS_TRUTH_H
#define CORPUS_TRUTH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/out.h"
#include "../common/glibcver.h"
#include "../common/live.h"

/* mallinfo2() is glibc 2.33+; older ones only have int mallinfo().  */
#if !defined(HW_NO_MALLINFO2) && defined(__GLIBC__) && \
	(__GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 33))
#define HW_NO_MALLINFO2 1
#endif

#define MAX_THREADS 16
#define MAX_RECS 1024

/* glibc 2.36, LP64 */
#define CHUNK_PREV_INUSE 1u
#define CHUNK_IS_MMAPPED 2u
#define CHUNK_NON_MAIN 4u
#define HEAP_MAX ((uintptr_t)64 << 20)
/* 2.43 removed the fastbins and fills each tcache bin with 16 chunks
   (mp_.tcache_count) instead of 7; glibc_minor() is glibcver.h's.  */
#define TCACHE_FILL (glibc_minor() >= 43 ? 16 : 7)
#define TCACHE_MAX_CHUNK 0x410
#define FAST_MAX_CHUNK (glibc_minor() >= 43 ? 0 : 0x80)
#define MIN_LARGE_CHUNK 0x400

enum where {
	W_HEAP, W_MMAPPED, W_TCACHE, W_FASTBIN, W_UNSORTED, W_SMALLBIN,
	W_LARGEBIN, W_MERGED
};
static const char *const where_name[] = {
	"heap", "mmapped", "tcache", "fastbin", "unsorted", "smallbin",
	"largebin", "merged"
};

struct rec {
	void *p;
	size_t req, usable, chunk;
	enum where w;
};

struct tinfo {
	pid_t tid;
	int nrec;
	int tc[TCACHE_MAX_CHUNK / 16 + 1]; /* our frees into each tcache bin */
	int has_tcache;                    /* 2.43+: made on the first free */
	struct rec r[MAX_RECS];
};

static struct tinfo T[MAX_THREADS];
static int T_count;

/* ---- chunk header peeking ----------------------------------------- */

static size_t size_word(const void *p)
{
	return ((const size_t *)p)[-1];
}

static size_t chunk_size(const void *p)
{
	return size_word(p) & ~(size_t)7;
}

/* The arena a live heap chunk belongs to: 0 = main_arena.  */
static uintptr_t arena_of(const void *p)
{
	if (!(size_word(p) & CHUNK_NON_MAIN))
		return 0;
	uintptr_t heap = ((uintptr_t)p - 16) & ~(HEAP_MAX - 1);
	return *(const uintptr_t *)heap; /* heap_info.ar_ptr */
}

/* ---- the model ---------------------------------------------------- */

static int thread_register(void)
{
	int t = __atomic_fetch_add(&T_count, 1, __ATOMIC_SEQ_CST);
	if (t >= MAX_THREADS)
		die("too many threads");
	T[t].tid = gettid();
	return t;
}

static void *ta(int t, size_t req)
{
	struct tinfo *ti = &T[t];
	void *p = malloc(req);
	if (!p)
		die("malloc failed");
	for (int i = 0; i < ti->nrec; i++)
		if (ti->r[i].p == p)
			die("plan error: malloc reused a recorded chunk");
	if (ti->nrec == MAX_RECS)
		die("too many records");
	struct rec *r = &ti->r[ti->nrec++];
	r->p = p;
	r->req = req;
	r->usable = malloc_usable_size(p);
	r->chunk = chunk_size(p);
	r->w = (size_word(p) & CHUNK_IS_MMAPPED) ? W_MMAPPED : W_HEAP;
	live_fill(p, r->usable);
	return p;
}

static struct rec *find_rec(int t, const void *p)
{
	for (int i = T[t].nrec - 1; i >= 0; i--)
		if (T[t].r[i].p == p)
			return &T[t].r[i];
	die("free of an unrecorded pointer");
	return NULL;
}

static int any_state(int t, enum where w)
{
	for (int i = 0; i < T[t].nrec; i++)
		if (T[t].r[i].w == w)
			return 1;
	return 0;
}

/* Is the chunk right before/after r a chunk we know to be free in a
   doubly-linked bin (so free() would coalesce)?  */
static int free_neighbour(int t, const struct rec *r)
{
	uintptr_t c = (uintptr_t)r->p - 16;
	for (int i = 0; i < T[t].nrec; i++) {
		const struct rec *o = &T[t].r[i];
		if (o->w != W_UNSORTED && o->w != W_SMALLBIN &&
		    o->w != W_LARGEBIN)
			continue;
		uintptr_t oc = (uintptr_t)o->p - 16;
		if (oc + o->chunk == c || c + r->chunk == oc)
			return 1;
	}
	return 0;
}


/* What a malloc that nothing free satisfies exactly does to the unsorted
   bin: every chunk in it goes to its small or large bin.  */
static void sort_unsorted_bin(int t)
{
	for (int i = 0; i < T[t].nrec; i++) {
		struct rec *r = &T[t].r[i];
		if (r->w == W_UNSORTED)
			r->w = r->chunk < MIN_LARGE_CHUNK ? W_SMALLBIN
							  : W_LARGEBIN;
	}
}

/* free(p) where glibc's choice follows from the model; `into_top` says
   the caller knows p is the chunk just below top (it merges).  */
static void tf_(int t, void *p, int into_top)
{
	struct rec *r = find_rec(t, p);
	if (r->w != W_HEAP)
		die("plan error: freeing a non-heap or freed chunk");
	size_t cs = r->chunk;
	enum where w;
	if (cs <= TCACHE_MAX_CHUNK && T[t].tc[cs / 16] < TCACHE_FILL) {
		/* 2.43 makes a thread's tcache on its first free into one:
		   that malloc sorts the unsorted bin as any small request
		   does, and must find its chunk elsewhere (top, or a free
		   chunk the program never recorded).  */
		if (glibc_minor() >= 43 && !T[t].has_tcache)
			sort_unsorted_bin(t);
		T[t].has_tcache = 1;
		T[t].tc[cs / 16]++;
		w = W_TCACHE;
	} else if (cs <= FAST_MAX_CHUNK) {
		w = W_FASTBIN;
	} else {
		if (cs >= 65536 && any_state(t, W_FASTBIN))
			die("plan error: this free would consolidate fastbins");
		if (free_neighbour(t, r))
			die("plan error: freed chunk would coalesce");
		if (into_top) {
			if (any_state(t, W_FASTBIN))
				die("plan error: merging into top consolidates");
			w = W_MERGED;
		} else {
			/* Really not next to top?  The next chunk's size word
			   must be a recorded live chunk's.  */
			const char *next = (const char *)p + cs;
			int ok = 0;
			for (int i = 0; i < T[t].nrec; i++)
				if (T[t].r[i].p == next && T[t].r[i].w == W_HEAP)
					ok = 1;
			if (!ok)
				die("plan error: no live guard after a freed chunk");
			/* 2.41+: small chunks skip the unsorted bin.  */
			w = (glibc_minor() >= 41 && cs < MIN_LARGE_CHUNK)
				    ? W_SMALLBIN
				    : W_UNSORTED;
		}
	}
	r->w = w;
	free(p);
}

#define tf(t, p) tf_(t, p, 0)

/* A large malloc that nothing in the bins can satisfy: glibc sorts the
   whole unsorted bin into small/large bins and serves it from top.  */
static void *sort_unsorted(int t, size_t req)
{
	size_t nb = (req + 8 + 15) & ~(size_t)15;
	if (nb < MIN_LARGE_CHUNK)
		die("plan error: sort request must be a large request");
	if (any_state(t, W_FASTBIN))
		die("plan error: large malloc would consolidate fastbins");
	for (int i = 0; i < T[t].nrec; i++) {
		struct rec *r = &T[t].r[i];
		if (r->w == W_UNSORTED || r->w == W_SMALLBIN ||
		    r->w == W_LARGEBIN) {
			if (r->chunk >= nb)
				die("plan error: sort request would split a bin");
		}
	}
	sort_unsorted_bin(t);
	return ta(t, req);
}

/* ---- the shared scenario ------------------------------------------ */

/* Populate tcache, fastbins, unsorted, small and large bins of the calling
   thread's arena; `v` varies the size classes between threads.  Leaves
   the last allocation below top live.  */
static void build_bins(int t, unsigned v)
{
	const size_t guard = 130; /* chunk 0x90, never freed */
	void *fa[12], *fb[10], *fc[8], *tc[3], *sa[10], *sb[9], *lg[7], *us[4];
	size_t fa_sz = 40 + 16 * (v % 4);   /* chunks 0x30..0x60 */
	size_t sa_sz = 200 + 32 * (v % 8);  /* chunks 0xd0..0x1b0 */
	size_t sb_sz = 600 + 16 * (v % 8);  /* chunks 0x260..0x2d0 */
	size_t lg_sz[7] = { 1400, 1410, 1410, 3000 + 64 * v, 8000, 20000,
			    1100 + 16 * v };

	/* Live odds and ends.  */
	ta(t, 0);
	ta(t, 1);
	ta(t, 17);
	ta(t, 1000);
	ta(t, 4000 + v);

	for (int i = 0; i < 12; i++)
		fa[i] = ta(t, fa_sz);
	for (int i = 0; i < 10; i++)
		fb[i] = ta(t, 24);
	for (int i = 0; i < 8; i++)
		fc[i] = ta(t, 104);                  /* chunk 0x70 */
	for (int i = 0; i < 3; i++)
		tc[i] = ta(t, 900 + 16 * (v % 4));  /* partial tcache, 0x390.. */
	for (int i = 0; i < 10; i++) {
		sa[i] = ta(t, sa_sz);
		ta(t, guard);
	}
	for (int i = 0; i < 9; i++) {
		sb[i] = ta(t, sb_sz);
		ta(t, guard);
	}
	for (int i = 0; i < 7; i++) {
		lg[i] = ta(t, lg_sz[i]);
		ta(t, guard);
	}
	us[0] = ta(t, 2000 + 16 * v);
	ta(t, guard);
	us[1] = ta(t, 5000);
	ta(t, guard);
	us[2] = ta(t, 1200);
	ta(t, guard);
	us[3] = ta(t, sa_sz);                       /* tcache full by then */
	ta(t, guard);
	ta(t, 60000);
	ta(t, guard);

	/* Phase 1: into unsorted, to be sorted: 7 tcache + 3, 7 + 2, 7 large. */
	for (int i = 0; i < 10; i++)
		tf(t, sa[i]);
	for (int i = 0; i < 9; i++)
		tf(t, sb[i]);
	for (int i = 0; i < 7; i++)
		tf(t, lg[i]);

	/* Sort them, then give the sort chunk back: it is next to top.  */
	void *s = sort_unsorted(t, 40000);
	tf_(t, s, 1);

	/* Phase 2: these stay in the unsorted bin.  */
	for (int i = 0; i < 4; i++)
		tf(t, us[i]);

	/* Phase 3: tcache and fastbins (no large malloc/free after this).  */
	for (int i = 0; i < 3; i++)
		tf(t, tc[i]);
	for (int i = 0; i < 12; i++)
		tf(t, fa[i]);
	for (int i = 0; i < 10; i++)
		tf(t, fb[i]);
	for (int i = 0; i < 8; i++)
		tf(t, fc[i]);
}

/* ---- writing the truth -------------------------------------------- */

static void truth_open(const char *path, const char *prog)
{
	live_truth_open(path);
	out_str("# heapwalk corpus ground truth, see tests/tools/truthcmp.c\n");
	out_str("# glibc ");
	out_str(gnu_get_libc_version());
	out_str("\n");
	out_str("prog ");
	out_str(prog);
	out_str("\n");
}

static void truth_threads_and_allocs(void)
{
	for (int t = 0; t < T_count; t++) {
		uintptr_t arena = 0;
		uintptr_t heaps[64];
		int nheaps = 0, seen = 0;
		for (int i = 0; i < T[t].nrec; i++) {
			const struct rec *r = &T[t].r[i];
			if (r->w != W_HEAP)
				continue;
			uintptr_t a = arena_of(r->p);
			if (!seen) {
				arena = a;
				seen = 1;
			} else if (a != arena) {
				die("a thread's chunks are in two arenas");
			}
			uintptr_t h = a ? ((uintptr_t)r->p & ~(HEAP_MAX - 1)) : 0;
			int k;
			for (k = 0; k < nheaps; k++)
				if (heaps[k] == h)
					break;
			if (k == nheaps && nheaps < 64)
				heaps[nheaps++] = h;
		}
		out_str("thread ");
		out_num((unsigned)t, 10);
		out_str(" ");
		out_num((unsigned long long)T[t].tid, 10);
		out_str(" ");
		if (!seen)
			out_str("none");
		else if (arena)
			out_num(arena, 16);
		else
			out_str("main");
		out_str(" ");
		out_num((unsigned)nheaps, 10);
		out_str("\n");
	}
	for (int t = 0; t < T_count; t++)
		for (int i = 0; i < T[t].nrec; i++) {
			const struct rec *r = &T[t].r[i];
			out_str("alloc ");
			out_num((uintptr_t)r->p, 16);
			out_str(" ");
			out_num(r->req, 10);
			out_str(" ");
			out_num(r->usable, 10);
			out_str(" ");
			out_str(where_name[r->w]);
			out_str(" ");
			out_num((unsigned)t, 10);
			out_str("\n");
		}
	out_flush();
}

/* Live mode: every live chunk still holds its pattern.  */
static int live_chunks_intact(void)
{
	for (int t = 0; t < T_count; t++)
		for (int i = 0; i < T[t].nrec; i++) {
			const struct rec *r = &T[t].r[i];
			long off;
			if (r->w != W_HEAP && r->w != W_MMAPPED)
				continue;
			off = live_bad(r->p, r->usable);
			if (off >= 0) {
				live_say_addr("a live chunk changed:",
					      (uintptr_t)r->p, off);
				return -1;
			}
		}
	return 0;
}

/* The last thing before the crash: mallinfo2() only reads (glibc 2.36
   int_mallinfo walks the lists under the arena locks; no consolidation),
   and writing it out needs no malloc.  Ends the truth file; a program
   that dies otherwise than by abort() (doublefree1.c, segv1.c)
   crashes after it.  */
static void truth_mallinfo_end(void)
{
#ifdef HW_NO_MALLINFO2
	/* int fields: a total of 2 GiB or more would wrap.  */
	struct mallinfo m = mallinfo();
	if (m.arena < 0 || m.hblkhd < 0 || m.uordblks < 0 || m.fordblks < 0)
		die("mallinfo() overflowed its int fields");
	out_str("# mallinfo2 from mallinfo(): int fields\n");
#else
	struct mallinfo2 m = mallinfo2();
#endif
	const char *k[10] = { "arena", "ordblks", "smblks", "hblks", "hblkhd",
			      "usmblks", "fsmblks", "uordblks", "fordblks",
			      "keepcost" };
	size_t v[10] = { m.arena, m.ordblks, m.smblks, m.hblks, m.hblkhd,
			 m.usmblks, m.fsmblks, m.uordblks, m.fordblks,
			 m.keepcost };
	for (int i = 0; i < 10; i++) {
		out_str("mallinfo2 ");
		out_str(k[i]);
		out_str(" ");
		out_num(v[i], 10);
		out_str("\n");
	}
	out_str("end\n");
	out_flush();
	close(out_fd);
	if (live_mode()) {
		live_threads = T_count;
		live_park(live_chunks_intact);
	}
}

static void truth_mallinfo_and_abort(void)
{
	truth_mallinfo_end();
	abort();
}

#endif
