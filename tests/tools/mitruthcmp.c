/* mitruthcmp - the truth a mimalloc corpus program recorded
 * (corpora/mimalloc/mitruth1.c) checked by itself, and heapwalk's reports
 * of its core held to it.
 *
 *   mitruthcmp --check-truth TRUTH
 *   mitruthcmp [--damaged] TRUTH CHUNKS LEAKS SUMMARY
 *       TRUTH    truth.txt (its format: mitruth1.c's head)
 *       CHUNKS   `heapwalk --json CORE chunks`  (JSON Lines)
 *       LEAKS    `heapwalk --json CORE leaks`   (JSON Lines)
 *       SUMMARY  `heapwalk --json CORE summary`
 *
 * The truth alone (--check-truth, and first in every comparison):
 *  - prog, mimalloc, a thread line for each worker and the exited
 *    thread, end; USABLE >= REQ; no two recorded blocks overlap
 *    ([USER, USER + USABLE));
 *  - with visit records (mimalloc's own view: blocks in use at the
 *    visit): visited blocks do not overlap; every block in use at the
 *    end, and every block freed after its owner's visit, lies in one
 *    visited block of its owner's heap that ends where it ends (an
 *    aligned block may start inside mimalloc's block: USABLE is the
 *    block's size less that offset); a block its owner freed before the
 *    visit lies in none; one another thread freed before the visit lies
 *    in one only if it waits on the heap's thread_delayed_free list (the
 *    visit collects the pages' own lists, not that one); the visited
 *    blocks the program did not allocate are the C library's (counted);
 *  - every block in use and every visited block lies in a page (area
 *    record) of its owner's heap, at a block boundary of that page, with
 *    the page's block size;
 *  - with visit records, each heap's pages' used counts add up to its
 *    visited blocks less those its owner freed after the visit (frees by
 *    other threads leave `used` alone until collected).
 * Which visit saw a block: its owner's (visitor T PHASE own: 2.x, 3.0,
 * 3.1), or the one of the whole heap (visitor 0 PHASE all: 3.2 on).  In
 * 3.x a thread freeing into an abandoned page takes the page over: a
 * block or page recorded twice, by the exited thread and later by a
 * worker, is the worker's; the owners of pages and visits are not
 * checked against the blocks' and the used counts are not added up per
 * heap.
 *
 * heapwalk against it (chunk JSON as doc/heapwalk.md: addr, size,
 * state, where; a block's extent is chunk/chunk_size when given, else
 * addr/size):
 *  - the lines come in address order and do not overlap;
 *  - every alloc and lost block is covered by a line in use (where
 *    "page" or "huge") that ends where the block ends (addr + size ==
 *    USER + USABLE: size is the page's block size, addr the block's
 *    start, which an aligned block's pointer may lie past);
 *  - every freed block lies in a free line, or in none (memory given
 *    back); mimalloc 2.x: in a block line whose place is the list the
 *    free put it on, as mimalloc 2.0.9 does it (pages start out "use
 *    delayed free", and nothing collects after the visit):
 *      freed by another thread, not collected since  thread-free
 *        (the page's xthread_free, or the heap's thread_delayed_free)
 *      freed by another thread, collected by the visit  page-free
 *      freed by the exited thread itself  page-free (collected as the
 *        thread abandoned its heap)
 *      freed by its owner, collected by the visit  page-free
 *      freed by its owner, not collected (no visit, or after it)
 *        local-free
 *    or in a free span ("dirty", "retained") when its page was freed;
 *  - with visit records, the lines in use are exactly the visited blocks
 *    the program did not free, each at the visited block's address with
 *    its block size;
 *  - each page (area record): its lines in use plus its "thread-free"
 *    lines are the page's used count;
 *  - `leaks` lists (definite or possible) every lost block's line and no
 *    other block of the program's (an aligned block's pointer, inside
 *    it, holds it: mimalloc's free takes it); a block not the program's
 *    (the C library's: an exited thread's dtv, held by a pointer 16
 *    bytes in) may be "possible", never "definite";
 *  - summary: allocator "mimalloc", findings 0.
 * With --damaged (a core damaged on purpose): findings may be non-zero,
 * a freed block may be covered by a line in use marked maybe_free or
 * orphaned (its list was broken before it), the free lists' places, the
 * exact count and the pages' counts are not checked; every block the
 * program holds must still be as recorded, and with visit records every
 * other line in use must be marked so.
 *
 * Prints each mismatch (the first 20, then how many more), then
 * "mitruthcmp: <what was compared>, M mismatches"; exits 0 when M is 0,
 * 1 when not, 2 on unusable input.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#define CMP_NAME "mitruthcmp"
#include "cmp.h"

typedef unsigned long long u64;

#define VEC(NAME, T)           \
	struct NAME {          \
		T *v;          \
		size_t n, cap; \
	}
#define VPUSH(vec)                                                        \
	((vec).n == (vec).cap                                             \
		 ? ((vec).cap = (vec).cap ? 2 * (vec).cap : 256,         \
		    (vec).v = xrealloc((vec).v, (vec).cap * sizeof *(vec).v)) \
		 : 0,                                                     \
	 memset(&(vec).v[(vec).n], 0, sizeof *(vec).v), &(vec).v[(vec).n++])

/* ---- the truth ------------------------------------------------------ */

enum kind { K_ALLOC, K_LOST, K_FREED };

struct tblock {
	u64 user, req, usable;
	int thread, freedby, phase;
	enum kind kind;
	long visit;            /* the visited block covering it, or -1 */
	unsigned long line;
	bool unvisited_os;     /* in an OS page 3.2-3.5's visit skips */
};

struct tvisit {
	u64 addr, size, used;
	int thread;
	long block;            /* the recorded block in it, or -1 */
	bool freed;            /* that block was freed */
};

struct tarea {
	u64 start, size, full, reserved, committed, used;
	int thread;
};

#define MAX_THREADS 64

static struct {
	int nthreads;          /* workers; the exited thread is number nthreads */
	int vphase[MAX_THREADS + 1];  /* its visit came after this phase */
	int all_phase;         /* one visit of the whole heap after this phase */
	unsigned long version; /* mi_version(); 0 unknown */
	int nthread_lines;
	bool have_end, have_prog;
	VEC(, struct tblock) blocks;
	VEC(, struct tvisit) visits;
	VEC(, struct tarea) areas;
} T;

static bool damaged;

/* The phase after which the visit that saw thread t's blocks came (2.x:
   each thread visits its own heap, the exited thread after phase 1, the
   workers after phase 2; 3.2 and later: the main thread the whole heap
   after phase 2), 0 when none did.  */
static int visit_phase(int t)
{
	return T.all_phase ? T.all_phase : T.vphase[t];
}

static void read_truth(const char *path)
{
	char *buf = slurp(path, NULL);
	unsigned long lineno = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char tag[16];
		u64 a, b, c, d, e, f;
		int t, by, ph;
		lineno++;
		if (sscanf(line, "%15s", tag) != 1)
			continue;
		if (!strcmp(tag, "prog")) {
			if (sscanf(line, "prog mitruth1 %d", &T.nthreads) != 1 ||
			    T.nthreads < 1 || T.nthreads >= MAX_THREADS)
				fatal("%s:%lu: bad prog line", path, lineno);
			T.have_prog = true;
		} else if (!strcmp(tag, "mimalloc")) {
			if (sscanf(line, "mimalloc %lu", &T.version) != 1)
				T.version = 0;
		} else if (!strcmp(tag, "thread")) {
			T.nthread_lines++;
		} else if (!strcmp(tag, "visitor")) {
			char scope[8];
			if (sscanf(line, "visitor %d %d %7s", &t, &ph, scope) != 3 ||
			    t < 0 || t > T.nthreads || ph < 1)
				fatal("%s:%lu: bad visitor line", path, lineno);
			if (!strcmp(scope, "all"))
				T.all_phase = ph;
			else
				T.vphase[t] = ph;
		} else if (!strcmp(tag, "alloc") || !strcmp(tag, "lost")) {
			struct tblock *x = VPUSH(T.blocks);
			if (sscanf(line, "%*s %llx %llu %llu %d", &a, &b, &c,
				   &t) != 4)
				fatal("%s:%lu: bad %s line", path, lineno, tag);
			*x = (struct tblock){ a, b, c, t, -1, 0,
					      tag[0] == 'l' ? K_LOST : K_ALLOC,
					      -1, lineno, false };
		} else if (!strcmp(tag, "freed")) {
			struct tblock *x = VPUSH(T.blocks);
			if (sscanf(line, "freed %llx %llu %d %d %d %llu", &a, &b,
				   &t, &by, &ph, &c) != 6)
				fatal("%s:%lu: bad freed line", path, lineno);
			*x = (struct tblock){ a, b, c, t, by, ph, K_FREED, -1,
					      lineno, false };
		} else if (!strcmp(tag, "visit")) {
			struct tvisit *v = VPUSH(T.visits);
			if (sscanf(line, "visit %llx %llu %llu %d", &a, &b, &c,
				   &t) != 4)
				fatal("%s:%lu: bad visit line", path, lineno);
			*v = (struct tvisit){ a, b, c, t, -1, false };
		} else if (!strcmp(tag, "area")) {
			struct tarea *r = VPUSH(T.areas);
			if (sscanf(line, "area %llx %llu %llu %llu %llu %llu %d",
				   &a, &b, &c, &d, &e, &f, &t) != 7)
				fatal("%s:%lu: bad area line", path, lineno);
			*r = (struct tarea){ a, b, c, d, e, f, t };
		} else if (!strcmp(tag, "end")) {
			T.have_end = true;
		}
	}
	free(buf);
	if (!T.have_prog || !T.have_end)
		fatal("%s: no prog line or no end (the program did not finish)",
		      path);
}

static const char *kind_name(const struct tblock *b)
{
	return b->kind == K_ALLOC ? "alloc" : b->kind == K_LOST ? "lost"
								: "freed";
}

static int by_user(const void *x, const void *y)
{
	const struct tblock *a = x, *b = y;
	return a->user < b->user ? -1 : a->user > b->user;
}

static int by_vaddr(const void *x, const void *y)
{
	const struct tvisit *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int by_start(const void *x, const void *y)
{
	const struct tarea *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The visited block covering addr, or -1 (visits sorted).  */
static long visit_of(u64 addr)
{
	size_t lo = 0, hi = T.visits.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (T.visits.v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const struct tvisit *v = &T.visits.v[lo - 1];
	return addr < v->addr + v->size ? (long)(lo - 1) : -1;
}

/* The program's block at addr exactly, or NULL (blocks sorted, by
   check_truth).  */
static const struct tblock *block_at(u64 addr)
{
	size_t lo = 0, hi = T.blocks.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (T.blocks.v[mid].user < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < T.blocks.n && T.blocks.v[lo].user == addr ? &T.blocks.v[lo]
							       : NULL;
}

/* The page covering addr, or NULL (areas sorted).  */
static const struct tarea *area_of(u64 addr)
{
	size_t lo = 0, hi = T.areas.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (T.areas.v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct tarea *r = &T.areas.v[lo - 1];
	return addr < r->start + (r->reserved ? r->reserved : r->full)
		       ? r : NULL;
}

/* Was block b freed after the visit that saw its heap?  */
static bool freed_after_visit(const struct tblock *b)
{
	return b->kind == K_FREED && visit_phase(b->thread) &&
	       b->phase > visit_phase(b->thread);
}

static unsigned long n_foreign, n_delayed, n_cross, n_moved, n_os;

/* mimalloc 3.0.2 to 3.5 visit a heap through its arenas' page bitmaps:
   a page the OS gave alone (a block aligned past what an arena gives)
   is in no arena and never visited, neither its page record nor its
   blocks (seen in 3.0.12, 3.1.6, 3.2.8, 3.3.2 and 3.4.3; 3.0.1's and
   3.6.0's visits report it).  */
static bool visit_skips_os_pages(void)
{
	/* (mi_version() as major * 10000 + minor * 100 + patch: mimalloc
	   says 3.1.6 as 316, 3.0.12 as 3012, 3.4.3 as 30403.)  */
	unsigned long v = T.version;
	if (v < 1000)
		v = v / 100 * 10000 + v / 10 % 10 * 100 + v % 10;
	else if (v < 10000)
		v = v / 1000 * 10000 + v / 100 % 10 * 100 + v % 100;
	return v >= 30002 && v < 30600;
}

static void check_truth(void)
{
	/* 3.x: pages of an abandoned heap change hands.  */
	bool v3 = T.version >= 300;
	struct tblock *B = T.blocks.v;
	size_t nb = T.blocks.n;
	if (T.nthread_lines != T.nthreads + 1)
		mismatch("truth: %d thread lines for %d workers and the exited "
			 "thread", T.nthread_lines, T.nthreads);
	qsort(B, nb, sizeof *B, by_user);
	qsort(T.visits.v, T.visits.n, sizeof *T.visits.v, by_vaddr);
	qsort(T.areas.v, T.areas.n, sizeof *T.areas.v, by_start);
	/* A block or page recorded twice: in 3.x a worker freeing into the
	   exited thread's abandoned page takes the page over, and its own
	   (later) record of it stands.  In 2.x pages never move.  */
	size_t n = 0;
	for (size_t k = 0; k < T.visits.n; k++) {
		struct tvisit *v = &T.visits.v[k];
		if (n && T.visits.v[n - 1].addr == v->addr) {
			struct tvisit *w = &T.visits.v[n - 1];
			if (!v3 || (w->thread != T.nthreads &&
				    v->thread != T.nthreads))
				mismatch("truth: mimalloc's visits report %#llx "
					 "twice (threads %d and %d)", v->addr,
					 w->thread, v->thread);
			if (w->thread == T.nthreads)
				*w = *v;
			n_moved++;
			continue;
		}
		T.visits.v[n++] = *v;
	}
	T.visits.n = n;
	n = 0;
	for (size_t k = 0; k < T.areas.n; k++) {
		struct tarea *r = &T.areas.v[k];
		if (n && T.areas.v[n - 1].start == r->start) {
			struct tarea *w = &T.areas.v[n - 1];
			if (!v3 || (w->thread != T.nthreads &&
				    r->thread != T.nthreads))
				mismatch("truth: mimalloc reports page %#llx "
					 "twice (threads %d and %d)", r->start,
					 w->thread, r->thread);
			if (w->thread == T.nthreads)
				*w = *r;
			continue;
		}
		T.areas.v[n++] = *r;
	}
	T.areas.n = n;
	for (size_t i = 0; i < nb; i++) {
		if (B[i].usable < B[i].req)
			mismatch("truth:%lu: usable %llu below the request %llu",
				 B[i].line, B[i].usable, B[i].req);
		if (i && B[i - 1].user + B[i - 1].usable > B[i].user)
			mismatch("truth:%lu: %#llx overlaps the block at %#llx",
				 B[i].line, B[i].user, B[i - 1].user);
		if (B[i].kind == K_FREED && B[i].freedby != B[i].thread)
			n_cross++;
	}
	for (size_t k = 1; k < T.visits.n; k++)
		if (T.visits.v[k - 1].addr + T.visits.v[k - 1].size >
		    T.visits.v[k].addr)
			mismatch("truth: visited blocks %#llx and %#llx overlap",
				 T.visits.v[k - 1].addr, T.visits.v[k].addr);
	for (size_t k = 1; k < T.areas.n; k++)
		if (T.areas.v[k - 1].start + T.areas.v[k - 1].reserved >
		    T.areas.v[k].start)
			mismatch("truth: pages at %#llx and %#llx overlap",
				 T.areas.v[k - 1].start, T.areas.v[k].start);

	bool visited = T.visits.n > 0;
	for (size_t i = 0; i < nb; i++) {
		struct tblock *b = &B[i];
		u64 end = b->user + b->usable;
		if ((b->kind != K_FREED || freed_after_visit(b)) &&
		    !area_of(b->user) && visit_skips_os_pages() &&
		    visit_of(b->user) < 0) {
			b->unvisited_os = b->kind != K_FREED;
			n_os++;
			continue;
		}
		if (b->kind != K_FREED) {
			const struct tarea *r = area_of(b->user);
			if (!r)
				mismatch("truth: %s %#llx in no page of a heap",
					 kind_name(b), b->user);
			else if ((!v3 && r->thread != b->thread) || r->full == 0 ||
				 end > r->start + r->committed ||
				 (r->size == r->full &&
				  (end - r->start) % r->full))
				mismatch("truth: %s %#llx (thread %d, ends at "
					 "%#llx) not at a block boundary of its "
					 "page %#llx (thread %d, blocks of %llu)",
					 kind_name(b), b->user, b->thread, end,
					 r->start, r->thread, r->full);
		}
		if (!visited || !visit_phase(b->thread))
			continue;
		long k = visit_of(b->user);
		bool must = b->kind != K_FREED || freed_after_visit(b);
		bool may = must || (b->kind == K_FREED &&
				    b->freedby != b->thread);
		if (k < 0) {
			if (must)
				mismatch("truth: %s %#llx (thread %d) in no "
					 "block mimalloc's visit reported",
					 kind_name(b), b->user, b->thread);
			continue;
		}
		struct tvisit *v = &T.visits.v[k];
		if (!may) {
			mismatch("truth: %#llx, freed by its owner before the "
				 "visit, is in a visited block %#llx",
				 b->user, v->addr);
			continue;
		}
		if (v->addr + v->size != end || (!v3 && v->thread != b->thread))
			mismatch("truth: %s %#llx..%#llx (thread %d): mimalloc "
				 "visited %#llx..%#llx (thread %d)",
				 kind_name(b), b->user, end, b->thread,
				 v->addr, v->addr + v->size, v->thread);
		if (v->block >= 0)
			mismatch("truth: visited block %#llx holds two blocks",
				 v->addr);
		v->block = (long)i;
		v->freed = b->kind == K_FREED;
		b->visit = k;
		if (!must)
			n_delayed++;
	}
	for (size_t k = 0; k < T.visits.n; k++) {
		const struct tvisit *v = &T.visits.v[k];
		const struct tarea *r = area_of(v->addr);
		if (v->block < 0)
			n_foreign++;
		if (v->freed)    /* (its page may have gone since) */
			continue;
		if (!r || (!v3 && r->thread != v->thread) || r->size != v->size ||
		    (v->addr - r->start) % r->full)
			mismatch("truth: visited block %#llx (thread %d, %llu "
				 "bytes) is no block of a page of its heap",
				 v->addr, v->thread, v->size);
	}
	/* Each heap's used counts: visited blocks, less those the owner
	   freed after the visit.  */
	if (visited && !v3)
		for (int t = 0; t <= T.nthreads; t++) {
			u64 used = 0, want = 0;
			for (size_t k = 0; k < T.areas.n; k++)
				if (T.areas.v[k].thread == t)
					used += T.areas.v[k].used;
			for (size_t k = 0; k < T.visits.n; k++)
				if (T.visits.v[k].thread == t)
					want++;
			for (size_t i = 0; i < nb; i++)
				if (B[i].kind == K_FREED && B[i].thread == t &&
				    B[i].freedby == t && freed_after_visit(&B[i]))
					want--;
			if (used != want)
				mismatch("truth: thread %d's pages count %llu "
					 "blocks used, its visit %llu", t, used,
					 want);
		}
}

/* ---- heapwalk's reports ---------------------------------------------- */

struct line {
	u64 addr, size, start, len;   /* start, len: its extent */
	bool used, maybe_free, orphaned;
	char where[24];
	unsigned long lineno;
};

static VEC(, struct line) L;

static void read_chunk_lines(const char *path)
{
	size_t len;
	char *buf = slurp(path, &len);
	char *end = buf + len;
	unsigned long lineno = 0;
	for (char *line = buf; line && line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		if (nl)
			*nl = 0;
		lineno++;
		char state[16];
		u64 c = 0, cs = 0;
		struct line x = { .lineno = lineno };
		if (!*jws(line)) {
			/* blank */
		} else if (!jvalid(line) || *jws(line) != '{') {
			mismatch("%s:%lu: not a JSON object", path, lineno);
		} else if (!jhex(jget(line, "addr"), &x.addr) ||
			   !jnum(jget(line, "size"), &x.size) ||
			   !jstr(jget(line, "state"), state, sizeof state) ||
			   !jstr(jget(line, "where"), x.where, sizeof x.where)) {
			mismatch("%s:%lu: addr/size/state/where missing or "
				 "malformed", path, lineno);
		} else {
			x.used = !strcmp(state, "used");
			if (!x.used && strcmp(state, "free"))
				mismatch("%s:%lu: state \"%s\"", path, lineno,
					 state);
			const char *m = jget(line, "maybe_free");
			x.maybe_free = m && !strncmp(jws(m), "true", 4);
			m = jget(line, "orphaned");
			x.orphaned = m && !strncmp(jws(m), "true", 4);
			x.start = x.addr, x.len = x.size;
			if (jhex(jget(line, "chunk"), &c) &&
			    jnum(jget(line, "chunk_size"), &cs))
				x.start = c, x.len = cs;
			*VPUSH(L) = x;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
}

/* The line whose extent covers addr, or NULL (lines sorted).  */
static struct line *line_of(u64 addr)
{
	size_t lo = 0, hi = L.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L.v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct line *x = &L.v[lo - 1];
	return addr < x->start + (x->len ? x->len : 1) ? x : NULL;
}

/* The first line starting at or past addr (lines sorted).  */
static struct line *line_from(u64 addr)
{
	size_t lo = 0, hi = L.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L.v[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return L.v + lo;
}

static int line_by_start(const void *x, const void *y)
{
	const struct line *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->lineno < b->lineno ? -1 : a->lineno > b->lineno;
}

static bool in_use_place(const char *w)
{
	return !strcmp(w, "page") || !strcmp(w, "huge");
}

/* The list mimalloc 2.0.9 put a freed block on (see the head).  */
static const char *expected_place(const struct tblock *b)
{
	bool collected;
	if (b->freedby != b->thread) {
		/* Another thread's free: collected by the owner's visit if
		   it came before it and did not wait on the delayed list.  */
		collected = visit_phase(b->thread) && !freed_after_visit(b) && b->visit < 0;
		return collected ? "page-free" : "thread-free";
	}
	if (b->thread == T.nthreads)   /* collected as the heap was abandoned */
		return "page-free";
	collected = visit_phase(b->thread) && !freed_after_visit(b);
	return collected ? "page-free" : "local-free";
}

struct leak {
	u64 addr;
	char kind[16];
	bool program;          /* a block of the program's */
};
static VEC(, struct leak) K;

static int leak_by_addr(const void *x, const void *y)
{
	const struct leak *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static struct leak *leak_at(u64 addr)
{
	struct leak key = { .addr = addr };
	return bsearch(&key, K.v, K.n, sizeof *K.v, leak_by_addr);
}

static void read_leaks(const char *path)
{
	size_t len;
	char *buf = slurp(path, &len);
	char *end = buf + len;
	unsigned long lineno = 0;
	for (char *line = buf; line && line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		if (nl)
			*nl = 0;
		lineno++;
		struct leak x = { .program = false };
		if (!*jws(line)) {
			/* blank */
		} else if (!jvalid(line) || !jhex(jget(line, "addr"), &x.addr) ||
			   !jstr(jget(line, "kind"), x.kind, sizeof x.kind)) {
			mismatch("%s:%lu: not a leaks line with addr and kind",
				 path, lineno);
		} else if (!strcmp(x.kind, "definite") ||
			   !strcmp(x.kind, "possible")) {
			*VPUSH(K) = x;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	qsort(K.v, K.n, sizeof *K.v, leak_by_addr);
}

static void compare(const char *chunks_path, const char *leaks,
		    const char *summary)
{
	read_chunk_lines(chunks_path);
	read_leaks(leaks);
	/* Address order, no overlap, as the file gives them.  */
	for (size_t i = 1; i < L.n; i++)
		if (L.v[i].start < L.v[i - 1].start + L.v[i - 1].len) {
			mismatch("%s:%lu: %#llx (%s) overlaps or comes before "
				 "the line before it (%#llx, %llu bytes)",
				 chunks_path, L.v[i].lineno, L.v[i].start,
				 L.v[i].where, L.v[i - 1].start,
				 L.v[i - 1].len);
			break;
		}
	qsort(L.v, L.n, sizeof *L.v, line_by_start);

	bool v2 = T.version && T.version < 300, visited = T.visits.n > 0;
	unsigned long held = 0, lost = 0, nfreed = 0, released = 0,
		      foreign_possible = 0, stale_held = 0;
	for (size_t i = 0; i < T.blocks.n; i++) {
		const struct tblock *b = &T.blocks.v[i];
		u64 end = b->user + b->usable;
		struct line *x = line_of(b->user);
		if (b->kind == K_FREED) {
			nfreed++;
			if (!x) {
				released++;
				continue;
			}
			if (x->used && !(damaged && (x->maybe_free ||
						      x->orphaned))) {
				mismatch("freed %#llx (thread %d, by %d) is in "
					 "a block in use, %s %#llx", b->user,
					 b->thread, b->freedby, x->where,
					 x->addr);
				continue;
			}
			if (!strcmp(x->where, "dirty") ||
			    !strcmp(x->where, "retained")) {
				released++;
				continue;
			}
			const char *want = expected_place(b);
			if (v2 && !damaged && strcmp(x->where, want))
				mismatch("freed %#llx (thread %d, by %d, phase "
					 "%d) is %s, mimalloc 2.x put it on %s",
					 b->user, b->thread, b->freedby,
					 b->phase, x->where, want);
			continue;
		}
		held++;
		lost += b->kind == K_LOST;
		if (!x) {
			mismatch("%s %#llx (thread %d): no block there",
				 kind_name(b), b->user, b->thread);
			continue;
		}
		if (!x->used || !in_use_place(x->where) ||
		    x->addr > b->user || x->addr + x->size != end)
			mismatch("%s %#llx..%#llx (thread %d) is %s %s "
				 "%#llx..%#llx", kind_name(b), b->user, end,
				 b->thread, x->used ? "used" : "free",
				 x->where, x->addr, x->addr + x->size);
		struct leak *k = leak_at(x->addr);
		if (k)
			k->program = true;
		if (b->kind == K_LOST) {
			/* 3.x frees a block by any address in it (and its
			   has_aligned flag is not kept), so any pointer into a
			   block holds it: a stale copy of a hidden aligned
			   pointer (a dead stack slot, a register) holds its
			   block as a stale start pointer would under
			   Valgrind.  Counted and said, for those alone (an
			   aligned pointer may also fall on its block's start:
			   a stray pointer into the block holds it the same;
			   seen once in a clean-clone run).  */
			if (!k && !v2 && (x->addr != b->user ||
					  b->user % 4096 == 0))
				stale_held++;
			else if (!k)
				mismatch("lost %#llx (its block %#llx) is not "
					 "in leaks", b->user, x->addr);
		} else if (k) {
			/* (An aligned block's pointer may lie inside it: that
			   pointer holds it, as free takes it.)  */
			mismatch("alloc %#llx (its block %#llx%s) is held, "
				 "leaks calls it %s", b->user, x->addr,
				 x->addr != b->user ? ", the pointer inside it"
						    : "", k->kind);
		}
	}
	/* Blocks not the program's: the C library's, held by glibc (a
	   thread's dtv by a pointer 16 bytes in, Valgrind's "possibly
	   lost" of pthread_create): possibly, never definitely lost.  */
	for (size_t i = 0; i < K.n; i++) {
		if (K.v[i].program)
			continue;
		if (!strcmp(K.v[i].kind, "possible"))
			foreign_possible++;
		else
			mismatch("leaks calls %#llx %s, no block the program "
				 "lost", K.v[i].addr, K.v[i].kind);
	}

	unsigned long used_lines = 0;
	for (size_t i = 0; i < L.n; i++)
		if (L.v[i].used && !L.v[i].maybe_free && !L.v[i].orphaned)
			used_lines++;
	unsigned long want_used = held;
	if (visited) {
		want_used = 0;
		for (size_t k = 0; k < T.visits.n; k++) {
			const struct tvisit *v = &T.visits.v[k];
			if (v->freed)
				continue;
			want_used++;
			struct line *x = line_of(v->addr);
			if (!x || x->addr != v->addr || !x->used ||
			    x->size != v->size)
				mismatch("mimalloc visited %#llx (%llu bytes, "
					 "thread %d) in use: heapwalk has %s %s "
					 "%#llx (%llu bytes)", v->addr, v->size,
					 v->thread, x ? (x->used ? "used" : "free")
						      : "nothing",
					 x ? x->where : "", x ? x->addr : 0,
					 x ? x->size : 0);
		}
		/* (Blocks of OS pages the visit skips: the program's
		   record holds them, in use.)  */
		for (size_t i = 0; i < T.blocks.n; i++)
			want_used += T.blocks.v[i].unvisited_os;
		if (!damaged && used_lines != want_used)
			mismatch("%lu blocks in use, mimalloc's visit says %lu",
				 used_lines, want_used);
		/* Each line in use is a block in use by mimalloc's account
		   (past a broken list, one the walk could not place says
		   maybe_free or orphaned).  */
		unsigned long extra = 0;
		for (size_t i = 0; i < L.n; i++) {
			const struct line *x = &L.v[i];
			if (!x->used || x->maybe_free || x->orphaned)
				continue;
			long k = visit_of(x->addr);
			if (k >= 0 && T.visits.v[k].addr == x->addr &&
			    !T.visits.v[k].freed)
				continue;
			const struct tblock *b = block_at(x->addr);
			if (b && b->unvisited_os)
				continue;
			if (extra++ < 3)
				mismatch("%#llx (%s, %llu bytes) in use: mimalloc's "
					 "visit has no block in use there%s",
					 x->addr, x->where, x->size,
					 damaged ? " (not marked maybe_free or "
						   "orphaned)" : "");
		}
		if (extra > 3)
			mismatch("... %lu lines in use in all that mimalloc's "
				 "visit has no block in use at", extra);
	} else if (used_lines < held) {
		mismatch("%lu blocks in use, the program alone holds %lu",
			 used_lines, held);
	}
	/* Each page's used count: its lines in use and freed by other
	   threads (not yet collected).  */
	bool v3 = T.version >= 300;
	if (!damaged)
		for (size_t k = 0; k < T.areas.n; k++) {
			const struct tarea *r = &T.areas.v[k];
			u64 count = 0, blocks = 0;
			for (struct line *x = line_from(r->start);
			     x < L.v + L.n && x->start < r->start + r->reserved;
			     x++) {
				if (x->used || !strcmp(x->where, "thread-free"))
					count++;
				blocks += strcmp(x->where, "dirty") &&
					  strcmp(x->where, "retained");
			}
			/* (3.x: an abandoned page whose last block was freed
			   after its record is given back to its arena: free
			   slices now, no page.)  */
			if (v3 && r->thread == T.nthreads && !blocks)
				continue;
			if (count != r->used)
				mismatch("page %#llx (blocks of %llu, thread %d): "
					 "%llu blocks used or freed by other "
					 "threads, mimalloc's used says %llu",
					 r->start, r->size, r->thread, count,
					 r->used);
		}

	char *sum = slurp(summary, NULL);
	char alloc[32];
	u64 findings = 0;
	if (!jvalid(sum))
		mismatch("%s: not one JSON document", summary);
	else if (!jstr(jget(sum, "allocator"), alloc, sizeof alloc) ||
		 strcmp(alloc, "mimalloc"))
		mismatch("summary: allocator is not mimalloc");
	else if (!jnum(jget(sum, "findings"), &findings) ||
		 (!damaged && findings))
		mismatch("summary: %llu findings on an undamaged heap",
			 findings);
	free(sum);

	char visit_count[32] = "not recorded";
	if (visited)
		snprintf(visit_count, sizeof visit_count, "%lu", want_used);
	unsigned long ex_held = 0, ex_freed = 0;
	for (size_t i = 0; i < T.blocks.n; i++)
		if (T.blocks.v[i].thread == T.nthreads) {
			ex_held += T.blocks.v[i].kind != K_FREED;
			ex_freed += T.blocks.v[i].kind == K_FREED &&
				    T.blocks.v[i].freedby != T.nthreads;
		}
	char what[400];
	snprintf(what, sizeof what,
		 "%lu blocks in use (%lu lost; %lu of the exited thread), "
		 "%lu freed (%lu in pages given back; %lu by workers into the "
		 "exited thread's pages), %lu lines in use (mimalloc's visit: "
		 "%s; %lu not the program's possibly lost), %zu pages%s",
		 held, lost, ex_held, nfreed, released, ex_freed, used_lines,
		 visit_count, foreign_possible, T.areas.n,
		 stale_held ? "; hidden aligned blocks a stray pointer into "
			      "them holds (3.x): " : "");
	if (stale_held) {
		size_t n = strlen(what);
		snprintf(what + n, sizeof what - n, "%lu", stale_held);
	}
	exit(cmp_finish(what));
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--check-truth")) {
		read_truth(argv[2]);
		check_truth();
		char what[256];
		snprintf(what, sizeof what,
			 "truth of %d threads and the exited one: %zu blocks "
			 "(%lu freed by another thread, %lu of them on a "
			 "delayed list at the visit), %zu visited (%lu not the "
			 "program's, %lu in pages that changed hands), %zu "
			 "pages%s", T.nthreads, T.blocks.n, n_cross, n_delayed,
			 T.visits.n, n_foreign, n_moved, T.areas.n,
			 n_os ? "; blocks of OS pages the visit skips (3.0.2-3.5): "
			      : "");
		if (n_os) {
			size_t n = strlen(what);
			snprintf(what + n, sizeof what - n, "%lu", n_os);
		}
		return cmp_finish(what);
	}
	if (argc == 6 && !strcmp(argv[1], "--damaged")) {
		damaged = true;
		argv++, argc--;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: mitruthcmp --check-truth TRUTH\n"
				"       mitruthcmp [--damaged] TRUTH CHUNKS LEAKS "
				"SUMMARY\n");
		return 2;
	}
	read_truth(argv[1]);
	check_truth();
	if (mismatches)
		fatal("%s contradicts itself (a corpus bug, not heapwalk's)",
		      argv[1]);
	compare(argv[2], argv[3], argv[4]);
	return 0;
}
