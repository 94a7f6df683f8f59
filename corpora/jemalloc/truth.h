/* truth.h - heap-free ground-truth recording for the jemalloc corpus.
 *
 * Included by the jemalloc corpus programs (basic1.c, threads8.c), which
 * are linked with -ljemalloc (Debian's libjemalloc2, see
 * scripts/corpus/make-core.sh).  A program builds a heap through the
 * recording helpers below, keeps its record in static storage (never on
 * the heap), reads jemalloc's own statistics with mallctl() once every
 * heap operation is done, writes the record to the file named by argv[1]
 * with open(2)/write(2) and a home-made number formatter (no stdio, no
 * snprintf: nothing here calls malloc) and abort()s so the kernel writes
 * a core.
 *
 * Rules the helpers enforce (a broken rule is a plan error: message on
 * stderr, exit 2, no core):
 *  - Threads take turns (turn_wait/turn_pass): only one thread touches the
 *    heap at a time, so the record needs no locking and every heap
 *    operation has a known order.
 *  - All the mallctl()s used at the end are made once before the measured
 *    heap is built (je_warmup), so that jemalloc's lazy ctl
 *    initialisation (base allocations) is done by then; the final reads
 *    change nothing.
 *  - A recorded free is WHERE=tcache only when it is certainly parked in
 *    the freeing thread's tcache: the thread called je_final() first
 *    (mallctl "thread.tcache.flush"), nothing but frees follow in that
 *    thread, at most FINAL_PER_CLASS per size class, each usize <=
 *    FINAL_MAX_SIZE (32 KiB: tcache_maxclass of 5.2 and 5.3, whose small
 *    bins hold >= 20 and large bins 20).  The tcache GC cannot flush them:
 *    the flush set each bin's low-water mark to 0 and a GC pass visits a
 *    bin at most once in that few events.  Any other free is WHERE=freed
 *    (parked in a tcache, a free slab region, or part of a free extent).
 *  - A recorded malloc whose [p, p+usize) overlaps a freed record drops
 *    that record (the memory was handed out again).  Unrecorded
 *    allocations (thread start-up, tcache stacks) happen before the first
 *    recorded free.
 *
 * Output format (one record per line, fields separated by one space):
 *   # jemalloc MAJOR.MINOR.BUGFIX      (from mallctl "version")
 *   prog NAME
 *   config KEY VALUE    version (the full string), arenas.page,
 *                       arenas.quantum, arenas.nbins, arenas.nlextents,
 *                       opt.narenas, arenas.narenas, small.max (the largest
 *                       small size class)
 *   binfo BINIDX SIZE NREGS SLAB_SIZE       every small size class
 *   thread IDX TID ARENA     IDX 0 = main; ARENA = mallctl "thread.arena"
 *   alloc 0xUSER REQ USIZE WHERE THREADIDX ARENA
 *        USIZE: malloc_usable_size (== sallocx == nallocx(REQ));
 *        ARENA: mallctl "arenas.lookup" at allocation time;
 *        WHERE: slab (live, USIZE <= small.max) | large (live) |
 *               tcache (freed, certainly in the tcache) | freed (freed)
 *   bin ARENA BINIDX SIZE CURREGS CURSLABS    per initialised arena and
 *        bin with curregs > 0 or curslabs > 0 (stats.arenas.<i>.bins.<j>.*)
 *   large ARENA LEXTIDX SIZE CURLEXTENTS      per initialised arena and
 *        large class with curlextents > 0 (szind = nbins + LEXTIDX)
 *   nonfull ARENA BINIDX N    5.3+, after each bin line: the slabs in
 *        the bin's heap of non-full slabs (stats...bins.<j>.nonfull_slabs;
 *        the current slab is not among them)
 *   slabcur ARENA BINIDX 0xUSER   per small class: a region allocated
 *        past the tcache at the very end (probe_slabcurs), so in the
 *        bin's current slab; ARENA: arenas.lookup of it
 *   tcfree THREADIDX 0xUSER   every tcache record, in the order its thread
 *        freed it: a thread's tcache bin is a stack, so the last freed of
 *        a size class is the first its next malloc of that class takes
 *   stat KEY VALUE      allocated, active, resident, mapped, metadata,
 *                       retained (stats.*, after mallctl "epoch"; the
 *                       warm-up read them all once, so the last read
 *                       allocates nothing), tcache_bytes
 *                       (the sum of stats.arenas.<i>.tcache_bytes)
 *   end
 * The program checks stats.allocated == sum(CURREGS*SIZE) +
 * sum(CURLEXTENTS*SIZE), and that the bytes parked in all tcaches
 * (tcache_bytes) are exactly the sum of the tcache records' USIZE (every
 * thread ended with a flush and only tcache frees; before 5.3 the stat
 * leaves out large tcache bins, and only the small records are summed),
 * and exits 2 when either does not hold.
 * See tests/tools/jetruthcmp.c for the consumer.
 */
#ifndef JE_TRUTH_H
#define JE_TRUTH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jemalloc/jemalloc.h>

#include "../common/out.h"
#include "../common/turns.h"
#include "../common/live.h"

#define MAX_THREADS 16
#define MAX_RECS 40000
#define MAX_ARENAS 64
#define MAX_BINS 64
#define MAX_LEXT 256
#define FINAL_PER_CLASS 5
#define FINAL_MAX_SIZE 32768

enum where { W_SLAB, W_LARGE, W_TCACHE, W_FREED, W_GONE };
static const char *const where_name[] = { "slab", "large", "tcache", "freed",
					  "gone" };

struct rec {
	void *p;
	size_t req, usize;
	unsigned arena;
	unsigned char w, t;
};

static struct rec R[MAX_RECS];
static int R_count;
/* The tcache records (indexes into R) in the order they were freed.  */
static int TCF[MAX_RECS];
static int TCF_count;

struct tinfo {
	pid_t tid;
	unsigned arena;
	int final;                    /* je_final() was called */
	int nfinal;                   /* size classes freed since */
	size_t final_size[64];
	int final_n[64];
};
static struct tinfo T[MAX_THREADS];
static int T_count;

/* jemalloc's geometry, read by je_config().  */
static struct {
	const char *version;
	size_t page, quantum, small_max;
	unsigned nbins, nlextents, opt_narenas;
	size_t bin_size[MAX_BINS], bin_slab[MAX_BINS];
	uint32_t bin_nregs[MAX_BINS];
	size_t lext_size[MAX_LEXT];
} C;

/* The final statistics, read by je_stats().  */
static struct {
	unsigned narenas;
	bool init[MAX_ARENAS];
	size_t curregs[MAX_ARENAS][MAX_BINS], curslabs[MAX_ARENAS][MAX_BINS];
	size_t nonfull[MAX_ARENAS][MAX_BINS];   /* 5.3+ */
	size_t curlext[MAX_ARENAS][MAX_LEXT];
	size_t tcache_bytes[MAX_ARENAS];
	size_t allocated, active, resident, mapped, metadata, retained;
} S;

/* die() with two numbers: "MSG (A vs B)".  */
static void die2(const char *msg, unsigned long long a, unsigned long long b)
{
	static char m[256];
	size_t n = 0;
	char num[24];
	int k;
	for (const char *s = msg; *s && n < 180; s++)
		m[n++] = *s;
	m[n++] = ' ';
	m[n++] = '(';
	for (int i = 0; i < 2; i++) {
		unsigned long long v = i ? b : a;
		k = 0;
		do {
			num[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (k)
			m[n++] = num[--k];
		if (!i) {
			memcpy(m + n, " vs ", 4);
			n += 4;
		}
	}
	m[n++] = ')';
	m[n] = 0;
	die(m);
}

/* ---- mallctl ------------------------------------------------------ */

static void ctl_get(const char *name, void *v, size_t len)
{
	size_t l = len;
	if (mallctl(name, v, &l, NULL, 0) != 0 || l != len)
		die(name);
}

struct mib {
	size_t m[8];
	size_t len;
};

static void mib_of(struct mib *m, const char *name)
{
	m->len = 8;
	if (mallctlnametomib(name, m->m, &m->len) != 0)
		die(name);
}

/* Read the value of m with component i1 (and i2, if >= 0) replaced.  */
static int mib_get(struct mib *m, int c1, size_t i1, int c2, size_t i2,
		   void *v, size_t len)
{
	size_t l = len;
	m->m[c1] = i1;
	if (c2 >= 0)
		m->m[c2] = i2;
	int rc = mallctlbymib(m->m, m->len, v, &l, NULL, 0);
	if (rc == 0 && l != len)
		die("mallctlbymib: unexpected length");
	return rc;
}

static struct mib mib_lookup;

static unsigned arena_of(void *p)
{
	unsigned a;
	size_t l = sizeof a;
	if (mallctlbymib(mib_lookup.m, mib_lookup.len, &a, &l, &p,
			 sizeof p) != 0)
		die("arenas.lookup failed");
	return a;
}

static unsigned thread_arena(void)
{
	unsigned a;
	ctl_get("thread.arena", &a, sizeof a);
	return a;
}

static void thread_bind(unsigned a)
{
	if (mallctl("thread.arena", NULL, NULL, &a, sizeof a) != 0)
		die("thread.arena (write) failed");
}

static unsigned arena_create(void)
{
	unsigned a;
	ctl_get("arenas.create", &a, sizeof a);
	return a;
}

static void tcache_flush(void)
{
	if (mallctl("thread.tcache.flush", NULL, NULL, NULL, 0) != 0)
		die("thread.tcache.flush failed");
}

/* Is the running jemalloc older than 5.3?  */
static int je_before_5_3(void)
{
	const char *v = C.version;
	int major = 0, minor = 0;
	for (; *v >= '0' && *v <= '9'; v++)
		major = major * 10 + (*v - '0');
	if (*v == '.')
		for (v++; *v >= '0' && *v <= '9'; v++)
			minor = minor * 10 + (*v - '0');
	return major < 5 || (major == 5 && minor < 3);
}

/* Geometry: version, page, quantum and every size class.  */
static void je_config(void)
{
	struct mib m;
	ctl_get("version", &C.version, sizeof C.version);
	ctl_get("arenas.page", &C.page, sizeof C.page);
	ctl_get("arenas.quantum", &C.quantum, sizeof C.quantum);
	ctl_get("arenas.nbins", &C.nbins, sizeof C.nbins);
	ctl_get("arenas.nlextents", &C.nlextents, sizeof C.nlextents);
	ctl_get("opt.narenas", &C.opt_narenas, sizeof C.opt_narenas);
	if (C.nbins == 0 || C.nbins > MAX_BINS)
		die("arenas.nbins out of range");
	if (C.nlextents == 0 || C.nlextents > MAX_LEXT)
		die("arenas.nlextents out of range");
	mib_of(&m, "arenas.bin.0.size");
	for (unsigned j = 0; j < C.nbins; j++)
		if (mib_get(&m, 2, j, -1, 0, &C.bin_size[j], sizeof(size_t)))
			die("arenas.bin.<j>.size");
	mib_of(&m, "arenas.bin.0.nregs");
	for (unsigned j = 0; j < C.nbins; j++)
		if (mib_get(&m, 2, j, -1, 0, &C.bin_nregs[j], sizeof(uint32_t)))
			die("arenas.bin.<j>.nregs");
	mib_of(&m, "arenas.bin.0.slab_size");
	for (unsigned j = 0; j < C.nbins; j++)
		if (mib_get(&m, 2, j, -1, 0, &C.bin_slab[j], sizeof(size_t)))
			die("arenas.bin.<j>.slab_size");
	mib_of(&m, "arenas.lextent.0.size");
	for (unsigned k = 0; k < C.nlextents; k++)
		if (mib_get(&m, 2, k, -1, 0, &C.lext_size[k], sizeof(size_t)))
			die("arenas.lextent.<k>.size");
	C.small_max = C.bin_size[C.nbins - 1];
	mib_of(&mib_lookup, "arenas.lookup");
}

/* Refresh jemalloc's statistics and read them all into S.  */
static void je_stats(void)
{
	struct mib mi, mr, ms, ml, mt, mn;
	uint64_t epoch = 1;
	size_t l = sizeof epoch;
	if (mallctl("epoch", &epoch, &l, &epoch, sizeof epoch) != 0)
		die("epoch failed");
	ctl_get("arenas.narenas", &S.narenas, sizeof S.narenas);
	if (S.narenas > MAX_ARENAS)
		die("too many arenas");
	mib_of(&mi, "arena.0.initialized");
	mib_of(&mr, "stats.arenas.0.bins.0.curregs");
	mib_of(&ms, "stats.arenas.0.bins.0.curslabs");
	mib_of(&ml, "stats.arenas.0.lextents.0.curlextents");
	mib_of(&mt, "stats.arenas.0.tcache_bytes");
	if (!je_before_5_3())
		mib_of(&mn, "stats.arenas.0.bins.0.nonfull_slabs");
	for (unsigned i = 0; i < S.narenas; i++) {
		if (mib_get(&mi, 1, i, -1, 0, &S.init[i], sizeof(bool)))
			die("arena.<i>.initialized");
		if (!S.init[i])
			continue;
		if (mib_get(&mt, 2, i, -1, 0, &S.tcache_bytes[i], sizeof(size_t)))
			die("stats.arenas.<i>.tcache_bytes");
		for (unsigned j = 0; j < C.nbins; j++) {
			if (mib_get(&mr, 2, i, 4, j, &S.curregs[i][j],
				    sizeof(size_t)) ||
			    mib_get(&ms, 2, i, 4, j, &S.curslabs[i][j],
				    sizeof(size_t)))
				die("stats.arenas.<i>.bins.<j>");
			if (!je_before_5_3() &&
			    mib_get(&mn, 2, i, 4, j, &S.nonfull[i][j],
				    sizeof(size_t)))
				die("stats.arenas.<i>.bins.<j>.nonfull_slabs");
		}
		for (unsigned k = 0; k < C.nlextents; k++)
			if (mib_get(&ml, 2, i, 4, k, &S.curlext[i][k],
				    sizeof(size_t)))
				die("stats.arenas.<i>.lextents.<k>");
	}
	ctl_get("stats.allocated", &S.allocated, sizeof(size_t));
	ctl_get("stats.active", &S.active, sizeof(size_t));
	ctl_get("stats.resident", &S.resident, sizeof(size_t));
	ctl_get("stats.mapped", &S.mapped, sizeof(size_t));
	ctl_get("stats.metadata", &S.metadata, sizeof(size_t));
	ctl_get("stats.retained", &S.retained, sizeof(size_t));
}

/* Every mallctl of the final read, once, plus the ones used while
   recording (on a pointer of the caller's), so that lazy ctl set-up is
   over before the measured heap is built.  Call it again after arenas
   were created or initialised.  */
static void je_warmup(void *some_ptr)
{
	je_config();
	(void)arena_of(some_ptr);
	(void)thread_arena();
	je_stats();
}

/* ---- threads ------------------------------------------------------ */

static int thread_register(void)
{
	int t = __atomic_fetch_add(&T_count, 1, __ATOMIC_SEQ_CST);
	if (t >= MAX_THREADS)
		die("too many threads");
	T[t].tid = gettid();
	return t;
}

/* ---- recorded malloc and free ------------------------------------- */

/* Record p, just returned for a request of req bytes by thread t.  */
static void *ja_record(int t, size_t req, void *p)
{
	if (!p)
		die("malloc failed");
	size_t us = malloc_usable_size(p);
	if (us != sallocx(p, 0) || us != nallocx(req, 0) || us < req)
		die("usable size disagrees with sallocx/nallocx");
	uintptr_t lo = (uintptr_t)p, hi = lo + us;
	for (int i = 0; i < R_count; i++) {
		struct rec *o = &R[i];
		uintptr_t olo = (uintptr_t)o->p, ohi = olo + o->usize;
		if (olo < hi && lo < ohi) {
			if (o->w == W_SLAB || o->w == W_LARGE)
				die("malloc returned live memory");
			if (o->w == W_TCACHE)
				die("plan error: a tcache record was reused");
			o->w = W_GONE;
		}
	}
	if (R_count == MAX_RECS)
		die("too many records");
	struct rec *r = &R[R_count++];
	r->p = p;
	r->req = req;
	r->usize = us;
	r->arena = arena_of(p);
	r->w = us <= C.small_max ? W_SLAB : W_LARGE;
	r->t = (unsigned char)t;
	live_fill(p, us);
	return p;
}

static void *ja(int t, size_t req)
{
	if (T[t].final)
		die("plan error: malloc after je_final()");
	return ja_record(t, req, malloc(req));
}

static struct rec *live_rec(const void *p)
{
	for (int i = R_count - 1; i >= 0; i--)
		if (R[i].p == p && (R[i].w == W_SLAB || R[i].w == W_LARGE))
			return &R[i];
	die("free of an unrecorded or freed pointer");
	return NULL;
}

static void jf(int t, void *p)
{
	struct rec *r = live_rec(p);
	if (T[t].final) {
		struct tinfo *ti = &T[t];
		int k;
		if (r->usize > FINAL_MAX_SIZE)
			die("plan error: final free above the tcache limit");
		for (k = 0; k < ti->nfinal; k++)
			if (ti->final_size[k] == r->usize)
				break;
		if (k == ti->nfinal) {
			if (k == 64)
				die("too many final size classes");
			ti->final_size[k] = r->usize;
			ti->final_n[k] = 0;
			ti->nfinal++;
		}
		if (++ti->final_n[k] > FINAL_PER_CLASS)
			die("plan error: too many final frees in one class");
		r->w = W_TCACHE;
		TCF[TCF_count++] = (int)(r - R);
	} else {
		r->w = W_FREED;
	}
	free(p);
}

/* From now on thread t only frees (into its tcache).  */
static void je_final(int t)
{
	T[t].arena = thread_arena();
	tcache_flush();
	T[t].final = 1;
	T[t].nfinal = 0;
}

/* The i-th live record of thread t with usize `us` (or NULL).  */
static void *live_of(int t, size_t us, int i)
{
	for (int k = 0; k < R_count; k++)
		if (R[k].t == t && R[k].usize == us &&
		    (R[k].w == W_SLAB || R[k].w == W_LARGE) && i-- == 0)
			return R[k].p;
	return NULL;
}

/* ---- the final record --------------------------------------------- */

/* Live mode: every live region and extent still holds its pattern.  */
static int live_regions_intact(void)
{
	for (int i = 0; i < R_count; i++) {
		const struct rec *r = &R[i];
		long off;
		if (r->w != W_SLAB && r->w != W_LARGE)
			continue;
		off = live_bad(r->p, r->usize);
		if (off >= 0) {
			live_say_addr("a live block changed:", (uintptr_t)r->p,
				      off);
			return -1;
		}
	}
	return 0;
}

/* Each small class's current slab (bin_t.slabcur) in thread 0's
   arena, made known: one region of the class allocated past the tcache
   (MALLOCX_TCACHE_NONE) comes from the bin's current slab, or from the
   slab that becomes current, which stays current until the bin's next
   allocation or a free into its slabs: none follows.  The tcaches are
   not touched, so their records stay certain.  */
static void *probe_region[MAX_BINS];
static unsigned probe_arena[MAX_BINS];

static void probe_slabcurs(void)
{
	for (unsigned j = 0; j < C.nbins; j++) {
		probe_region[j] = ja_record(0, C.bin_size[j],
					    mallocx(C.bin_size[j],
						    MALLOCX_TCACHE_NONE));
		probe_arena[j] = R[R_count - 1].arena;
	}
}

/* Read the statistics, check them, write everything and abort().  No
   heap operation may come between the last recorded one and this.  */
static void truth_write_and_abort(const char *prog)
{
	probe_slabcurs();
	je_stats();

	size_t sum = 0;
	for (unsigned i = 0; i < S.narenas; i++) {
		if (!S.init[i])
			continue;
		for (unsigned j = 0; j < C.nbins; j++)
			sum += S.curregs[i][j] * C.bin_size[j];
		for (unsigned k = 0; k < C.nlextents; k++)
			sum += S.curlext[i][k] * C.lext_size[k];
	}
	if (sum != S.allocated)
		die2("stats.allocated != sum of curregs and curlextents",
		     S.allocated, sum);
	if (S.active < S.allocated)
		die("stats.active < stats.allocated");
	/* Every thread flushed its tcache and then freed only tcache
	   records: the tcaches hold exactly those.  Debian's 5.2.1 was
	   seen to leave the large tcache bins out of tcache_bytes: there
	   the small records are enough.  */
	size_t tc = 0, tc_rec = 0, tc_small = 0;
	for (unsigned i = 0; i < S.narenas; i++)
		if (S.init[i])
			tc += S.tcache_bytes[i];
	for (int i = 0; i < R_count; i++)
		if (R[i].w == W_TCACHE) {
			tc_rec += R[i].usize;
			if (R[i].usize <= C.small_max)
				tc_small += R[i].usize;
		}
	if (tc != tc_rec && !(je_before_5_3() && tc == tc_small))
		die2("the tcaches do not hold exactly the tcache records", tc,
		     tc_rec);

	out_str("# heapwalk jemalloc corpus ground truth, see tests/tools/jetruthcmp.c\n");
	out_str("# jemalloc ");
	for (const char *v = C.version; *v && *v != '-'; v++) {
		char c[2] = { *v, 0 };
		out_str(c);
	}
	out_str("\nprog ");
	out_str(prog);
	out_str("\nconfig version ");
	out_str(C.version);
	out_str("\n");
	out_kv("config", "arenas.page", C.page);
	out_kv("config", "arenas.quantum", C.quantum);
	out_kv("config", "arenas.nbins", C.nbins);
	out_kv("config", "arenas.nlextents", C.nlextents);
	out_kv("config", "opt.narenas", C.opt_narenas);
	out_kv("config", "arenas.narenas", S.narenas);
	out_kv("config", "small.max", C.small_max);
	for (unsigned j = 0; j < C.nbins; j++) {
		out_str("binfo");
		out_sp(j);
		out_sp(C.bin_size[j]);
		out_sp(C.bin_nregs[j]);
		out_sp(C.bin_slab[j]);
		out_str("\n");
	}
	for (int t = 0; t < T_count; t++) {
		out_str("thread");
		out_sp((unsigned)t);
		out_sp((unsigned long long)T[t].tid);
		out_sp(T[t].arena);
		out_str("\n");
	}
	for (int i = 0; i < R_count; i++) {
		const struct rec *r = &R[i];
		if (r->w == W_GONE)
			continue;
		out_str("alloc ");
		out_num((uintptr_t)r->p, 16);
		out_sp(r->req);
		out_sp(r->usize);
		out_str(" ");
		out_str(where_name[r->w]);
		out_sp(r->t);
		out_sp(r->arena);
		out_str("\n");
	}
	for (unsigned i = 0; i < S.narenas; i++) {
		if (!S.init[i])
			continue;
		for (unsigned j = 0; j < C.nbins; j++) {
			if (!S.curregs[i][j] && !S.curslabs[i][j])
				continue;
			out_str("bin");
			out_sp(i);
			out_sp(j);
			out_sp(C.bin_size[j]);
			out_sp(S.curregs[i][j]);
			out_sp(S.curslabs[i][j]);
			out_str("\n");
			if (je_before_5_3())
				continue;
			out_str("nonfull");
			out_sp(i);
			out_sp(j);
			out_sp(S.nonfull[i][j]);
			out_str("\n");
		}
		for (unsigned k = 0; k < C.nlextents; k++) {
			if (!S.curlext[i][k])
				continue;
			out_str("large");
			out_sp(i);
			out_sp(k);
			out_sp(C.lext_size[k]);
			out_sp(S.curlext[i][k]);
			out_str("\n");
		}
	}
	for (unsigned j = 0; j < C.nbins; j++) {
		out_str("slabcur");
		out_sp(probe_arena[j]);
		out_sp(j);
		out_str(" ");
		out_num((uintptr_t)probe_region[j], 16);
		out_str("\n");
	}
	for (int i = 0; i < TCF_count; i++) {
		const struct rec *r = &R[TCF[i]];
		if (r->w != W_TCACHE)
			continue;
		out_str("tcfree");
		out_sp(r->t);
		out_str(" ");
		out_num((uintptr_t)r->p, 16);
		out_str("\n");
	}
	out_kv("stat", "allocated", S.allocated);
	out_kv("stat", "active", S.active);
	out_kv("stat", "resident", S.resident);
	out_kv("stat", "mapped", S.mapped);
	out_kv("stat", "metadata", S.metadata);
	out_kv("stat", "retained", S.retained);
	out_kv("stat", "tcache_bytes", tc);
	out_str("end\n");
	out_flush();
	close(out_fd);
	if (live_mode()) {
		live_threads = T_count;
		live_park(live_regions_intact);
	}
	abort();
}

/* ---- the shared scenario ------------------------------------------ */

/* Large requests (bytes) used by the scenarios; on 64 KiB pages the
   smaller ones are small size classes.  */
static const size_t large_req[] = { 16384, 20000, 28000, 32768, 40000,
				    70000, 200000, 300000, 1 << 20,
				    (3 << 20) + 5 };

/* Fill size classes, make slabs full and partly free, free into the
   tcache and beyond it (a bin overflowing its tcache), flush, free more
   into slabs; `v` varies the counts between threads, `heavy` makes every
   bin fill at least one slab.  Ends with live records of every class
   <= 32 KiB for je_final().  */
static void build_heap(int t, unsigned v, int heavy)
{
	static void *ptrs[4096];

	for (unsigned j = 0; j < C.nbins; j++) {
		size_t sz = C.bin_size[j];
		unsigned nregs = C.bin_nregs[j];
		unsigned n;
		int overflow = j == (1 + v) % 4; /* many frees in this bin */
		if (heavy || (j + v) % 9 == 0)
			n = nregs + nregs / 2 + 3;     /* one slab full and more */
		else
			n = 6 + (j + v) % 7;
		if (n > 1200)
			n = 1200;
		if (overflow && n < 300)
			n = 300;
		/* Requests spread over the class: sz, sz - 1, ...  */
		for (unsigned i = 0; i < n; i++) {
			size_t lo = j ? C.bin_size[j - 1] + 1 : 1;
			size_t req = sz - (i % 3) * ((sz - lo) / 2);
			ptrs[i] = ja(t, req);
		}
		/* Free some: every third of the second half (partly free
		   slabs, tcache-parked regions), or a long run in one bin so
		   that its tcache overflows and flushes.  */
		if (overflow) {
			for (unsigned i = 10; i < 290; i++)
				jf(t, ptrs[i]);
		} else {
			for (unsigned i = n / 2; i < n; i += 3)
				jf(t, ptrs[i]);
		}
		if (j % 8 == v % 8)
			tcache_flush();        /* those go back to their slabs */
	}

	/* Large, a few of each; free one of every size but keep the
	   others.  */
	for (unsigned k = 0; k < sizeof large_req / sizeof large_req[0]; k++) {
		void *a = ja(t, large_req[k] + v * 64);
		void *b = ja(t, large_req[k] + v * 64);
		ja(t, large_req[k] + v * 64 + 1);
		if ((k + v) % 2)
			jf(t, a);
		else
			jf(t, b);
	}
	tcache_flush();
	/* Very large: >= 8 MiB (5.3: the huge arena for automatic arenas). */
	if (v % 3 == 0) {
		ja(t, (9u << 20) + v * 4096);
		void *h = ja(t, (12u << 20) + 100);
		jf(t, h);
	}

	/* Some more of every class <= 32 KiB for the final frees.  */
	for (unsigned j = 0; j < C.nbins && C.bin_size[j] <= FINAL_MAX_SIZE;
	     j++)
		for (unsigned i = 0; i < 3; i++)
			ja(t, C.bin_size[j]);
}

/* Thread t's last heap operations: flush, then free up to
   FINAL_PER_CLASS live records per size class <= 32 KiB (a varying
   number, none in some classes).  */
static void final_frees(int t, unsigned v)
{
	size_t cls[96];
	int ncls = 0;
	for (unsigned j = 0; j < C.nbins && C.bin_size[j] <= FINAL_MAX_SIZE; j++)
		cls[ncls++] = C.bin_size[j];
	for (unsigned k = 0; k < C.nlextents && C.lext_size[k] <= FINAL_MAX_SIZE;
	     k++)
		if (ncls < 96)
			cls[ncls++] = C.lext_size[k];
	je_final(t);
	for (int c = 0; c < ncls; c++) {
		int n = (int)((c + v) % (FINAL_PER_CLASS + 2)); /* 0..6 */
		if (n > FINAL_PER_CLASS)
			n = FINAL_PER_CLASS;
		for (int i = 0; i < n; i++) {
			void *p = live_of(t, cls[c], 0);
			if (!p)
				break;
			jf(t, p);
		}
	}
}

#endif
