/* jetruthcmp - compare heapwalk's view of a jemalloc core with the corpus
 * program's ground truth.
 *
 *   jetruthcmp TRUTH CHUNKS SUMMARY SIZES BINS [ARENAS]
 *       TRUTH    truth.txt written by a corpora/jemalloc program
 *       CHUNKS   `heapwalk --json CORE chunks`  (JSON Lines)
 *       SUMMARY  `heapwalk --json CORE summary` (one JSON object)
 *       SIZES    `heapwalk --json CORE sizes`
 *       BINS     `heapwalk --json CORE bins`
 *       ARENAS   `heapwalk --json CORE arenas`
 *   jetruthcmp --check-truth TRUTH
 *       only the truth's own consistency (no heapwalk output needed)
 *
 * Prints each mismatch (the first 20, then how many more), then
 * "jetruthcmp: N allocations, M mismatches"; exits 0 when M is 0, 1 when
 * not, 2 on unusable input (also a truth file that contradicts itself).
 *
 * Truth format (corpora/jemalloc/truth.h writes it; one record per line,
 * fields separated by blanks, '#' lines are comments except
 * "# jemalloc VERSION"):
 *   prog NAME
 *   config KEY VALUE        version, arenas.page, arenas.quantum,
 *                           arenas.nbins, arenas.nlextents, opt.narenas,
 *                           arenas.narenas, small.max
 *   binfo BINIDX SIZE NREGS SLAB_SIZE
 *   thread IDX TID ARENA
 *   alloc 0xUSER REQ USIZE WHERE THREADIDX ARENA
 *       WHERE: slab | large (live) | tcache (certainly parked in the
 *       freeing thread's tcache) | freed (somewhere free, or reused as
 *       part of a free extent)
 *   bin ARENA BINIDX SIZE CURREGS CURSLABS       (jemalloc's stats)
 *   large ARENA LEXTIDX SIZE CURLEXTENTS
 *   stat KEY VALUE          allocated, active, resident, mapped, metadata,
 *                           retained
 *   end
 *
 * Checks (heapwalk's JSON as in the jemalloc contract):
 *  - every slab/large allocation is a chunk line with that addr, size ==
 *    USIZE, state used, where == WHERE, arena == ARENA; every tcache one
 *    is state free, where tcache, size == USIZE, arena == ARENA; no
 *    freed one is state used (a free line or no line at all is fine);
 *  - no two chunk lines overlap ([addr, addr + size));
 *  - bins: one entry per (arena, bin) the truth has slabs for, with
 *    slabs == CURSLABS and curregs == CURREGS, size (and nregs,
 *    slab_size when given) as binfo says, cached >= the truth's tcache
 *    allocations there; no entry with slabs the truth lacks;
 *  - bins "large": curlextents == CURLEXTENTS per (arena, size), no others;
 *  - bins "tcaches" (when present): the cached counts add up to the number
 *    of tcache allocations and the bytes to their USIZE sum (every thread
 *    flushed its tcache before its last frees, so the tcaches hold exactly
 *    those; the corpus program checked that against jemalloc's
 *    tcache_bytes);
 *  - sizes: used + cached of each class == the sum over arenas of CURREGS
 *    (small) or CURLEXTENTS (large), used_bytes == size * used;
 *  - summary: allocator "jemalloc", version == the truth's (MAJOR.MINOR.
 *    BUGFIX, or the full string), page == arenas.page, threads >= the
 *    threads recorded; stats.allocated, active, metadata, resident, mapped
 *    and retained (each one the truth has) equal jemalloc's, or, for a
 *    figure heapwalk lists under stats.approximate with {below, above},
 *    jemalloc's lies within [value - below, value + above];
 *  - arenas (when given): each arena's nthreads (jemalloc's own count,
 *    when not null) is the number of recorded threads bound to it; when
 *    threads_unknown is null, every recorded thread's TID is in exactly
 *    one arena's "threads", the arena its "thread" line names; when it is
 *    a string (no thread pointers in the core), no arena lists threads.
 * The truth is checked first: CURREGS (CURLEXTENTS) of each (arena,
 * class) must be at least its live + tcache allocations, and the sum of
 * CURREGS * SIZE + CURLEXTENTS * SIZE must be stat allocated.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_NAME "jetruthcmp"
#include "cmp.h"

/* Growable arrays: struct NAME { T *v; size_t n, cap; }; VPUSH(vec)
   appends a zeroed element and returns its address.  */
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

/* ---- the truth ---------------------------------------------------- */

enum where { W_SLAB, W_LARGE, W_TCACHE, W_FREED };
static const char *const where_name[] = { "slab", "large", "tcache", "freed" };

struct talloc {
	unsigned long long addr, req, usize;
	unsigned arena, thread;
	enum where w;
	unsigned long line;
};

struct tbin {   /* a "bin" or "large" line, plus what the allocs say */
	unsigned arena, idx;
	unsigned long long size, cur, slabs;
	unsigned long long live, tcache;  /* recorded allocations there */
	bool seen;                         /* matched by heapwalk */
};

struct binfo {
	unsigned long long size, nregs, slab_size;
};

VEC(tbins, struct tbin);

struct tthread {
	unsigned long long tid, arena;
	bool seen;
};

/* The stats.* figures the summary is checked on.  */
#define NSTATS 6

static struct {
	char version[128], short_version[128];
	unsigned long long page, small_max, nbins;
	bool have_page, have_small_max;
	VEC(, struct binfo) binfo;
	VEC(, struct talloc) allocs;
	struct tbins bins, large;
	unsigned long nthreads;
	VEC(, struct tthread) threads;
	unsigned long long allocated, active;
	bool have_allocated, have_active;
	struct tstat { const char *name; unsigned long long v; bool have; }
		stats[NSTATS];
} TR = { .stats = { { "allocated", 0, false }, { "active", 0, false },
		    { "metadata", 0, false }, { "resident", 0, false },
		    { "mapped", 0, false }, { "retained", 0, false } } };

static const char *truth_path;

static struct tbin *find_tbin(struct tbins *v, unsigned arena,
			      unsigned long long size)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].arena == arena && v->v[i].size == size)
			return &v->v[i];
	return NULL;
}

static bool num(const char *s, int base, unsigned long long *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoull(s, &end, base);
	return !errno && !*end;
}

static void read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fatal("%s: %s", path, strerror(errno));
	truth_path = path;
	char line[512];
	unsigned long lineno = 0;
	bool ended = false;
	while (fgets(line, sizeof line, f)) {
		char kw[16], a[6][128];
		unsigned long long v[6];
		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			fatal("%s:%lu: line too long", path, lineno);
		int n = sscanf(line, "%15s %127s %127s %127s %127s %127s %127s",
			       kw, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (n <= 0)
			continue;
		if (ended)
			fatal("%s:%lu: text after \"end\"", path, lineno);
		if (!strcmp(kw, "#")) {
			if (n >= 3 && !strcmp(a[0], "jemalloc"))
				snprintf(TR.short_version,
					 sizeof TR.short_version, "%s", a[1]);
			continue;
		}
		if (kw[0] == '#' || !strcmp(kw, "prog"))
			continue;
		if (!strcmp(kw, "end")) {
			ended = true;
		} else if (!strcmp(kw, "config") && n == 3) {
			if (!strcmp(a[0], "version")) {
				snprintf(TR.version, sizeof TR.version, "%s", a[1]);
				continue;
			}
			if (!num(a[1], 10, &v[0]))
				fatal("%s:%lu: bad config value", path, lineno);
			if (!strcmp(a[0], "arenas.page")) {
				TR.page = v[0];
				TR.have_page = true;
			} else if (!strcmp(a[0], "small.max")) {
				TR.small_max = v[0];
				TR.have_small_max = true;
			} else if (!strcmp(a[0], "arenas.nbins")) {
				TR.nbins = v[0];
			}
		} else if (!strcmp(kw, "binfo") && n == 5) {
			for (int i = 0; i < 4; i++)
				if (!num(a[i], 10, &v[i]))
					fatal("%s:%lu: bad binfo", path, lineno);
			if (v[0] != TR.binfo.n)
				fatal("%s:%lu: binfo out of order", path, lineno);
			struct binfo *b = VPUSH(TR.binfo);
			b->size = v[1];
			b->nregs = v[2];
			b->slab_size = v[3];
		} else if (!strcmp(kw, "thread") && n == 4) {
			struct tthread *th = VPUSH(TR.threads);
			if (!num(a[1], 10, &th->tid) || !num(a[2], 10, &th->arena))
				fatal("%s:%lu: bad thread line", path, lineno);
			TR.nthreads++;
		} else if ((!strcmp(kw, "nonfull") || !strcmp(kw, "slabcur")) &&
			   n == 4) {
			/* the bins' current slabs: t0108's */
		} else if (!strcmp(kw, "tcfree") && n == 3) {
			/* (The order of the tcache records' frees: the
			   stacks' order, which t0108 checks.)  */
		} else if (!strcmp(kw, "alloc") && n == 7) {
			struct talloc *t = VPUSH(TR.allocs);
			int w;
			for (w = 0; w < 4 && strcmp(a[3], where_name[w]); w++)
				;
			if (strncmp(a[0], "0x", 2) || !num(a[0] + 2, 16, &t->addr) ||
			    !num(a[1], 10, &t->req) || !num(a[2], 10, &t->usize) ||
			    w == 4 || !num(a[4], 10, &v[0]) || !num(a[5], 10, &v[1]))
				fatal("%s:%lu: bad alloc line", path, lineno);
			t->w = (enum where)w;
			t->thread = (unsigned)v[0];
			t->arena = (unsigned)v[1];
			t->line = lineno;
		} else if ((!strcmp(kw, "bin") && n == 6) ||
			   (!strcmp(kw, "large") && n == 5)) {
			bool small = kw[0] == 'b';
			for (int i = 0; i < n - 1; i++)
				if (!num(a[i], 10, &v[i]))
					fatal("%s:%lu: bad %s line", path, lineno, kw);
			struct tbin *b = small ? VPUSH(TR.bins) : VPUSH(TR.large);
			b->arena = (unsigned)v[0];
			b->idx = (unsigned)v[1];
			b->size = v[2];
			b->cur = v[3];
			b->slabs = small ? v[4] : 0;
		} else if (!strcmp(kw, "stat") && n == 3) {
			if (!num(a[1], 10, &v[0]))
				fatal("%s:%lu: bad stat value", path, lineno);
			for (int k = 0; k < NSTATS; k++)
				if (!strcmp(a[0], TR.stats[k].name)) {
					TR.stats[k].v = v[0];
					TR.stats[k].have = true;
				}
			if (!strcmp(a[0], "allocated")) {
				TR.allocated = v[0];
				TR.have_allocated = true;
			} else if (!strcmp(a[0], "active")) {
				TR.active = v[0];
				TR.have_active = true;
			}
		} else {
			fatal("%s:%lu: cannot parse", path, lineno);
		}
	}
	fclose(f);
	if (!ended)
		fatal("%s: no \"end\" line: the program did not finish", path);
	if (!TR.version[0] || !TR.have_page || !TR.have_small_max ||
	    !TR.have_allocated || !TR.have_active || !TR.nthreads)
		fatal("%s: version, arenas.page, small.max, stat allocated, "
		      "stat active or thread lines missing", path);
	if (!TR.short_version[0]) {
		size_t k = strcspn(TR.version, "-");
		memcpy(TR.short_version, TR.version, k);
		TR.short_version[k] = 0;
	}
}

/* The truth must not contradict itself (exit 2 when it does).  */
static void check_truth(void)
{
	unsigned long long sum = 0;
	for (size_t i = 0; i < TR.bins.n; i++) {
		const struct tbin *b = &TR.bins.v[i];
		sum += b->cur * b->size;
		if (b->idx >= TR.binfo.n || TR.binfo.v[b->idx].size != b->size)
			fatal("%s: bin %u of arena %u: size %llu is not binfo's",
			      truth_path, b->idx, b->arena, b->size);
		if (b->cur > b->slabs * TR.binfo.v[b->idx].nregs)
			fatal("%s: bin %u of arena %u: %llu regions in %llu slabs",
			      truth_path, b->idx, b->arena, b->cur, b->slabs);
	}
	for (size_t i = 0; i < TR.large.n; i++)
		sum += TR.large.v[i].cur * TR.large.v[i].size;
	if (sum != TR.allocated)
		fatal("%s: stat allocated %llu, bins and large add up to %llu",
		      truth_path, TR.allocated, sum);
	if (TR.active < TR.allocated)
		fatal("%s: stat active < stat allocated", truth_path);

	for (size_t i = 0; i < TR.allocs.n; i++) {
		struct talloc *t = &TR.allocs.v[i];
		if (t->w == W_FREED)
			continue;
		bool small = t->usize <= TR.small_max;
		if ((t->w == W_SLAB && !small) || (t->w == W_LARGE && small))
			fatal("%s:%lu: %s allocation of %llu bytes (small.max %llu)",
			      truth_path, t->line, where_name[t->w], t->usize,
			      TR.small_max);
		struct tbin *b = find_tbin(small ? &TR.bins : &TR.large,
					   t->arena, t->usize);
		if (!b)
			fatal("%s:%lu: no %s line for arena %u size %llu",
			      truth_path, t->line, small ? "bin" : "large",
			      t->arena, t->usize);
		if (t->w == W_TCACHE)
			b->tcache++;
		else
			b->live++;
	}
	struct tbins *both[2] = { &TR.bins, &TR.large };
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < both[k]->n; i++) {
			const struct tbin *b = &both[k]->v[i];
			if (b->live + b->tcache > b->cur)
				fatal("%s: arena %u size %llu: %llu recorded live and "
				      "tcache allocations, jemalloc counts %llu",
				      truth_path, b->arena, b->size,
				      b->live + b->tcache, b->cur);
		}
}

static void check_chunks(void)
{
	for (size_t i = 0; i < TR.allocs.n; i++) {
		const struct talloc *t = &TR.allocs.v[i];
		const char *w = where_name[t->w];
		struct chunk *c = find_chunk(t->addr);
		if (t->w == W_FREED) {
			if (c && c->used)
				mismatch("0x%llx (freed, %llu bytes): state used, "
					 "where %s", t->addr, t->usize, c->where);
			continue;
		}
		if (!c) {
			mismatch("0x%llx (%s, %llu bytes, arena %u): no chunk line",
				 t->addr, w, t->usize, t->arena);
			continue;
		}
		bool live = t->w != W_TCACHE;
		if (c->used != live)
			mismatch("0x%llx: state %s, expected %s", t->addr,
				 c->used ? "used" : "free", live ? "used" : "free");
		if (strcmp(c->where, w))
			mismatch("0x%llx: where %s, expected %s", t->addr, c->where,
				 w);
		if (c->size != t->usize)
			mismatch("0x%llx (%s): size %llu, expected %llu", t->addr, w,
				 c->size, t->usize);
		if (c->arena < 0)
			mismatch("0x%llx (%s): no arena", t->addr, w);
		else if ((unsigned long long)c->arena != t->arena)
			mismatch("0x%llx (%s): arena %lld, expected %u", t->addr,
				 w, c->arena, t->arena);
	}

	/* Overlaps (chunks are sorted by addr).  */
	unsigned long long end = 0;
	const struct chunk *prev = NULL;
	for (size_t i = 0; i < nchunks; i++) {
		const struct chunk *c = &chunks[i];
		if (prev && c->addr < end)
			mismatch("line %lu: 0x%llx (%s) overlaps line %lu: 0x%llx "
				 "(%s, %llu bytes)", c->line, c->addr, c->where,
				 prev->line, prev->addr, prev->where, prev->size);
		if (!prev || c->addr + c->size > end) {
			end = c->addr + c->size;
			prev = c;
		}
	}
}

/* ---- bins --------------------------------------------------------- */

static const char *json_array(const char *doc, const char *key,
			      const char *path)
{
	const char *a = jget(doc, key);
	if (!a || *jws(a) != '[')
		fatal("%s: no \"%s\" array", path, key);
	return a;
}

static void check_bins(const char *path)
{
	char *doc = slurp(path, NULL);
	if (!jvalid(doc) || *jws(doc) != '{')
		fatal("%s: not a JSON object", path);
	bool bad = false;
	unsigned long k = 0;
	for (const char *el = jfirst(json_array(doc, "bins", path)); el;
	     el = jnext(el, &bad)) {
		unsigned long long arena, bin, size, slabs, curregs, cached, v;
		k++;
		if (!jnum(jget(el, "arena"), &arena) || !jnum(jget(el, "bin"), &bin) ||
		    !jnum(jget(el, "size"), &size) ||
		    !jnum(jget(el, "slabs"), &slabs) ||
		    !jnum(jget(el, "curregs"), &curregs) ||
		    !jnum(jget(el, "cached"), &cached)) {
			mismatch("bins: entry %lu lacks arena/bin/size/slabs/"
				 "curregs/cached", k);
			continue;
		}
		if (bin < TR.binfo.n) {
			const struct binfo *bi = &TR.binfo.v[bin];
			if (size != bi->size)
				mismatch("bins: arena %llu bin %llu: size %llu, "
					 "expected %llu", arena, bin, size, bi->size);
			if (jnum(jget(el, "nregs"), &v) && v != bi->nregs)
				mismatch("bins: bin %llu: nregs %llu, expected %llu",
					 bin, v, bi->nregs);
			if (jnum(jget(el, "slab_size"), &v) && v != bi->slab_size)
				mismatch("bins: bin %llu: slab_size %llu, expected "
					 "%llu", bin, v, bi->slab_size);
		} else {
			mismatch("bins: bin index %llu (only %zu bins)", bin,
				 TR.binfo.n);
		}
		struct tbin *b = find_tbin(&TR.bins, (unsigned)arena, size);
		if (!b || b->idx != bin) {
			if (slabs || curregs)
				mismatch("bins: arena %llu bin %llu (%llu bytes): %llu "
					 "slabs, %llu regions; jemalloc has none",
					 arena, bin, size, slabs, curregs);
			continue;
		}
		if (b->seen)
			mismatch("bins: arena %llu bin %llu listed twice", arena, bin);
		b->seen = true;
		if (slabs != b->slabs || curregs != b->cur)
			mismatch("bins: arena %llu bin %llu (%llu bytes): %llu slabs, "
				 "%llu curregs; jemalloc: %llu slabs, %llu curregs",
				 arena, bin, size, slabs, curregs, b->slabs, b->cur);
		if (cached < b->tcache)
			mismatch("bins: arena %llu bin %llu: %llu cached, but %llu "
				 "allocations are certainly in a tcache", arena, bin,
				 cached, b->tcache);
	}
	for (size_t i = 0; i < TR.bins.n; i++) {
		const struct tbin *b = &TR.bins.v[i];
		if (!b->seen && b->slabs)
			mismatch("bins: arena %u bin %u (%llu bytes, %llu slabs, %llu "
				 "curregs) missing", b->arena, b->idx, b->size,
				 b->slabs, b->cur);
	}

	k = 0;
	for (const char *el = jfirst(json_array(doc, "large", path)); el;
	     el = jnext(el, &bad)) {
		unsigned long long arena, size, cur, cached;
		k++;
		if (!jnum(jget(el, "arena"), &arena) ||
		    !jnum(jget(el, "size"), &size) ||
		    !jnum(jget(el, "curlextents"), &cur)) {
			mismatch("bins: large entry %lu lacks arena/size/curlextents",
				 k);
			continue;
		}
		struct tbin *b = find_tbin(&TR.large, (unsigned)arena, size);
		if (!b) {
			if (cur)
				mismatch("large: arena %llu size %llu: %llu extents; "
					 "jemalloc has none", arena, size, cur);
			continue;
		}
		if (b->seen)
			mismatch("large: arena %llu size %llu listed twice", arena,
				 size);
		b->seen = true;
		if (cur != b->cur)
			mismatch("large: arena %llu size %llu: curlextents %llu, "
				 "jemalloc %llu", arena, size, cur, b->cur);
		if (jnum(jget(el, "cached"), &cached) && cached < b->tcache)
			mismatch("large: arena %llu size %llu: %llu cached, but "
				 "%llu certainly in a tcache", arena, size, cached,
				 b->tcache);
	}
	for (size_t i = 0; i < TR.large.n; i++) {
		const struct tbin *b = &TR.large.v[i];
		if (!b->seen)
			mismatch("large: arena %u size %llu (%llu extents) missing",
				 b->arena, b->size, b->cur);
	}
	const char *tcs = jget(doc, "tcaches");
	if (tcs) {
		unsigned long long n = 0, bytes = 0, wn = 0, wbytes = 0;
		if (*jws(tcs) != '[')
			fatal("%s: \"tcaches\" is not an array", path);
		k = 0;
		for (const char *el = jfirst(tcs); el; el = jnext(el, &bad)) {
			unsigned long long c, b;
			k++;
			if (!jnum(jget(el, "cached"), &c) ||
			    !jnum(jget(el, "bytes"), &b)) {
				mismatch("bins: tcache %lu lacks cached/bytes", k);
				continue;
			}
			n += c;
			bytes += b;
		}
		for (size_t i = 0; i < TR.allocs.n; i++)
			if (TR.allocs.v[i].w == W_TCACHE) {
				wn++;
				wbytes += TR.allocs.v[i].usize;
			}
		if (n != wn || bytes != wbytes)
			mismatch("bins: the tcaches hold %llu regions in %llu bytes, "
				 "expected %llu in %llu", n, bytes, wn, wbytes);
	}
	if (bad)
		fatal("%s: malformed array", path);
	free(doc);
}

/* ---- sizes -------------------------------------------------------- */

struct cls {
	unsigned long long size, want;
	bool seen;
};

static void check_sizes(const char *path)
{
	VEC(, struct cls) cl = { 0 };
	struct tbins *both[2] = { &TR.bins, &TR.large };
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < both[k]->n; i++) {
			const struct tbin *b = &both[k]->v[i];
			size_t j;
			for (j = 0; j < cl.n && cl.v[j].size != b->size; j++)
				;
			if (j == cl.n)
				VPUSH(cl)->size = b->size;
			cl.v[j].want += b->cur;
		}

	char *doc = slurp(path, NULL);
	if (!jvalid(doc) || *jws(doc) != '{')
		fatal("%s: not a JSON object", path);
	bool bad = false;
	unsigned long k = 0;
	for (const char *el = jfirst(json_array(doc, "classes", path)); el;
	     el = jnext(el, &bad)) {
		unsigned long long size, used, ub, fr, cached;
		k++;
		if (!jnum(jget(el, "size"), &size) || !jnum(jget(el, "used"), &used) ||
		    !jnum(jget(el, "used_bytes"), &ub) ||
		    !jnum(jget(el, "free"), &fr) ||
		    !jnum(jget(el, "cached"), &cached)) {
			mismatch("sizes: class %lu lacks size/used/used_bytes/free/"
				 "cached", k);
			continue;
		}
		if (ub != used * size)
			mismatch("sizes: class %llu: used_bytes %llu for %llu used",
				 size, ub, used);
		if (cached > fr)
			mismatch("sizes: class %llu: %llu cached of %llu free", size,
				 cached, fr);
		size_t j;
		for (j = 0; j < cl.n && cl.v[j].size != size; j++)
			;
		unsigned long long want = j < cl.n ? cl.v[j].want : 0;
		if (j < cl.n) {
			if (cl.v[j].seen)
				mismatch("sizes: class %llu listed twice", size);
			cl.v[j].seen = true;
		}
		if (used + cached != want)
			mismatch("sizes: class %llu: used %llu + cached %llu, jemalloc "
				 "counts %llu", size, used, cached, want);
	}
	for (size_t j = 0; j < cl.n; j++)
		if (!cl.v[j].seen && cl.v[j].want)
			mismatch("sizes: class %llu (%llu in use per jemalloc) missing",
				 cl.v[j].size, cl.v[j].want);
	if (bad)
		fatal("%s: malformed classes array", path);
	free(cl.v);
	free(doc);
}

/* ---- summary ------------------------------------------------------ */

/* One stats.* figure: exact unless stats.approximate.NAME bounds it.  */
static void check_stat(const char *stats, const struct tstat *st)
{
	unsigned long long v, below = 0, above = 0;
	if (!st->have)
		return;
	if (!jnum(jget(stats, st->name), &v)) {
		mismatch("summary: stats.%s missing or unknown (jemalloc: %llu)",
			 st->name, st->v);
		return;
	}
	const char *ap = jget(stats, "approximate");
	const char *bound = ap ? jget(ap, st->name) : NULL;
	if (!bound) {
		if (v != st->v)
			mismatch("summary: stats.%s %llu (exact), jemalloc said "
				 "%llu", st->name, v, st->v);
		return;
	}
	if (!jnum(jget(bound, "below"), &below) ||
	    !jnum(jget(bound, "above"), &above)) {
		mismatch("summary: stats.approximate.%s lacks below/above",
			 st->name);
		return;
	}
	if (st->v + below < v || st->v > v + above)
		mismatch("summary: stats.%s %llu (-%llu/+%llu), jemalloc said "
			 "%llu: outside the stated bound", st->name, v, below,
			 above, st->v);
}

static void check_summary(const char *path)
{
	char *doc = slurp(path, NULL);
	char buf[128];
	unsigned long long v;
	if (!jvalid(doc) || *jws(doc) != '{')
		fatal("%s: not a JSON object", path);
	if (!jstr(jget(doc, "allocator"), buf, sizeof buf) ||
	    strcmp(buf, "jemalloc"))
		mismatch("summary: allocator is not \"jemalloc\"");
	if (!jstr(jget(doc, "version"), buf, sizeof buf))
		mismatch("summary: version missing");
	else if (strcmp(buf, TR.short_version) && strcmp(buf, TR.version))
		mismatch("summary: version \"%s\", expected \"%s\"", buf,
			 TR.short_version);
	if (!jnum(jget(doc, "page"), &v))
		mismatch("summary: page missing");
	else if (v != TR.page)
		mismatch("summary: page %llu, expected %llu", v, TR.page);
	const char *stats = jget(doc, "stats");
	if (!stats || *jws(stats) != '{')
		mismatch("summary: no stats object");
	for (int k = 0; stats && k < NSTATS; k++)
		check_stat(stats, &TR.stats[k]);
	if (!jnum(jget(doc, "threads"), &v))
		mismatch("summary: threads missing");
	else if (v < TR.nthreads)
		mismatch("summary: threads %llu, but %lu threads were alive", v,
			 TR.nthreads);
	free(doc);
}

/* ---- arenas: nthreads and each thread's binding ------------------- */

static unsigned long truth_bound(unsigned long long arena)
{
	unsigned long n = 0;
	for (size_t i = 0; i < TR.threads.n; i++)
		n += TR.threads.v[i].arena == arena;
	return n;
}

/* Arena `index`'s "threads": each TID must be a recorded thread bound
   to it.  */
static void check_arena_threads(const char *el, unsigned long long index)
{
	bool bad = false;
	for (const char *t = jfirst(jget(el, "threads")); t; t = jnext(t, &bad)) {
		unsigned long long tid;
		size_t i;
		if (!jnum(t, &tid)) {
			mismatch("arenas: arena %llu: a thread that is not a TID",
				 index);
			continue;
		}
		for (i = 0; i < TR.threads.n && TR.threads.v[i].tid != tid; i++)
			;
		if (i == TR.threads.n) {
			mismatch("arenas: arena %llu lists thread %llu, which the "
				 "truth does not know", index, tid);
			continue;
		}
		if (TR.threads.v[i].seen)
			mismatch("arenas: thread %llu listed twice", tid);
		TR.threads.v[i].seen = true;
		if (TR.threads.v[i].arena != index)
			mismatch("arenas: thread %llu under arena %llu, jemalloc "
				 "binds it to %llu", tid, index,
				 TR.threads.v[i].arena);
	}
	if (bad)
		mismatch("arenas: arena %llu: malformed threads array", index);
}

static void check_arenas(const char *path)
{
	char *doc = slurp(path, NULL);
	if (!jvalid(doc) || *jws(doc) != '{')
		fatal("%s: not a JSON object", path);
	char why[256];
	bool known = !jstr(jget(doc, "threads_unknown"), why, sizeof why);
	bool bad = false;
	for (const char *el = jfirst(json_array(doc, "arenas", path)); el;
	     el = jnext(el, &bad)) {
		unsigned long long index, n;
		if (!jnum(jget(el, "index"), &index)) {
			mismatch("arenas: an arena without index");
			continue;
		}
		if (jnum(jget(el, "nthreads"), &n) && n != truth_bound(index))
			mismatch("arenas: arena %llu: nthreads %llu, %lu recorded "
				 "threads are bound to it", index, n,
				 truth_bound(index));
		const char *th = jget(el, "threads");
		if (!th || *jws(th) != '[') {
			if (known)
				mismatch("arenas: arena %llu: no threads array, "
					 "and threads_unknown is null", index);
			continue;
		}
		if (!known)
			mismatch("arenas: arena %llu lists threads although "
				 "\"%s\"", index, why);
		check_arena_threads(el, index);
	}
	for (size_t i = 0; known && i < TR.threads.n; i++)
		if (!TR.threads.v[i].seen)
			mismatch("arenas: thread %llu (bound to arena %llu) is in "
				 "no arena's threads", TR.threads.v[i].tid,
				 TR.threads.v[i].arena);
	if (bad)
		fatal("%s: malformed arenas array", path);
	free(doc);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--check-truth")) {
		read_truth(argv[2]);
		check_truth();
		unsigned long n[4] = { 0 };
		for (size_t i = 0; i < TR.allocs.n; i++)
			n[TR.allocs.v[i].w]++;
		printf("jetruthcmp: %s: jemalloc %s, %zu allocations (%lu slab, "
		       "%lu large, %lu tcache, %lu freed), %lu threads, %zu bin "
		       "and %zu large lines: consistent\n",
		       argv[2], TR.short_version, TR.allocs.n, n[W_SLAB],
		       n[W_LARGE], n[W_TCACHE], n[W_FREED], TR.nthreads,
		       TR.bins.n, TR.large.n);
		return 0;
	}
	if ((argc != 6 && argc != 7) || argv[1][0] == '-') {
		fprintf(stderr, "usage: jetruthcmp TRUTH CHUNKS.jsonl SUMMARY.json "
				"SIZES.json BINS.json [ARENAS.json]\n"
				"       jetruthcmp --check-truth TRUTH\n");
		return 2;
	}
	read_truth(argv[1]);
	check_truth();
	read_chunks(argv[2]);
	check_chunks();
	check_bins(argv[5]);
	check_sizes(argv[4]);
	check_summary(argv[3]);
	if (argc == 7)
		check_arenas(argv[6]);
	char what[64];
	snprintf(what, sizeof what, "%zu allocations", TR.allocs.n);
	free(chunks);
	free(TR.allocs.v);
	free(TR.bins.v);
	free(TR.large.v);
	free(TR.binfo.v);
	free(TR.threads.v);
	return cmp_finish(what);
}
