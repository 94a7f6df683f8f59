/* truth.h - heap-free ground-truth recording for the tcmalloc corpus.
 *
 * Included by the tcmalloc corpus programs (basic1.c, threads8.c), which
 * are linked with Debian's gperftools tcmalloc: -ltcmalloc_minimal, or
 * -ltcmalloc (the library with the heap checker and profiler; see
 * scripts/corpus/make-core.sh).  A program builds a heap through the
 * recording helpers below, keeps its record in static storage (never on
 * the heap), reads tcmalloc's own statistics through MallocExtension's C
 * interface once every heap operation is done, writes the record to the
 * file named by argv[1] with open(2)/write(2) and a home-made number
 * formatter (corpora/common/out.h: nothing here calls malloc) and
 * abort()s so the kernel writes a core.
 *
 * Rules the helpers enforce (a broken rule is a plan error: message on
 * stderr, exit 2, no core):
 *  - Threads take turns (turn_wait/turn_pass): only one thread touches
 *    the heap at a time, so the record needs no locking and every heap
 *    operation has a known order.
 *  - Every statistic read at the end is read once before the measured
 *    heap is built (tc_warmup), and read twice at the end: the two reads
 *    must agree, so that reading changed nothing.
 *  - A recorded malloc whose [p, p+usize) overlaps a freed record drops
 *    that record (the memory was handed out again).
 *
 * Output format (one record per line, fields separated by one space):
 *   # tcmalloc MAJOR.MINOR               (tc_version())
 *   prog NAME
 *   config version MAJOR.MINOR
 *   config page PAGESIZE                 ("Tcmalloc page size" of the stats)
 *   config library minimal|full
 *   thread IDX TID PTHREAD               IDX 0 = main; PTHREAD =
 *        pthread_self(), what tcmalloc keeps as its thread cache's tid
 *   alloc 0xUSER REQ USIZE WHERE THREADIDX
 *        USIZE: malloc_usable_size (== nallocx(REQ));
 *        WHERE: used (live) | freed (freed: in a thread cache, a
 *               central or transfer cache, a span's free list or a free
 *               span of the page heap)
 *   freeclass CLASS SIZE OBJS            per class with free objects (the
 *        only classes the stats name): the
 *        stats' "Total size of freelists for per-thread caches, transfer
 *        cache, and central cache, by size class"
 *   prop NAME VALUE     MallocExtension's numeric properties:
 *        generic.current_allocated_bytes, generic.heap_size,
 *        tcmalloc.pageheap_free_bytes, tcmalloc.pageheap_unmapped_bytes,
 *        tcmalloc.central_cache_free_bytes,
 *        tcmalloc.transfer_cache_free_bytes,
 *        tcmalloc.thread_cache_free_bytes
 *   stat KEY VALUE      spans (in use), thread_heaps, metadata (bytes),
 *                       from the stats text
 *   ...                 what a program adds (TC_EXTRA_TRUTH: damage1.c)
 *   end
 * The program checks that the live records' usable sizes add up to at
 * most generic.current_allocated_bytes.
 * See tests/tools/tctruthcmp.c for the consumer.
 */
#ifndef TC_TRUTH_H
#define TC_TRUTH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gperftools/malloc_extension_c.h>
#include <gperftools/nallocx.h>
#include <gperftools/tcmalloc.h>

#include "../common/out.h"
#include "../common/turns.h"
#include "../common/live.h"

#define MAX_THREADS 16
#define MAX_RECS 60000
#define MAX_CLASSES 256
#define STATS_BYTES (1 << 17)

enum where { W_USED, W_FREED, W_GONE };
static const char *const where_name[] = { "used", "freed", "gone" };

struct rec {
	void *p;
	size_t req, usize;
	unsigned char w, t;
};

static struct rec R[MAX_RECS];
static int R_count;

struct tinfo {
	pid_t tid;
	pthread_t self;
};
static struct tinfo T[MAX_THREADS];
static int T_count;

static const char *const prop_names[] = {
	"generic.current_allocated_bytes",
	"generic.heap_size",
	"tcmalloc.pageheap_free_bytes",
	"tcmalloc.pageheap_unmapped_bytes",
	"tcmalloc.central_cache_free_bytes",
	"tcmalloc.transfer_cache_free_bytes",
	"tcmalloc.thread_cache_free_bytes",
};
#define NPROPS (sizeof prop_names / sizeof prop_names[0])

/* The final statistics, read by tc_stats().  */
static struct {
	int major, minor;
	size_t props[NPROPS];
	char text[STATS_BYTES];       /* MallocExtension_GetStats() */
	size_t page, spans, thread_heaps, metadata;
	unsigned nclasses;
	unsigned cls[MAX_CLASSES];
	size_t cls_size[MAX_CLASSES], cls_free[MAX_CLASSES];
} S;

/* ---- the statistics ---------------------------------------------- */

/* The number after the first occurrence of key in the stats text, read
   backwards from key ("MALLOC:   8192   Tcmalloc page size"), or from
   the position after it when `after`.  */
static size_t num_before(const char *text, const char *key)
{
	const char *k = strstr(text, key);
	if (!k)
		die(key);
	const char *p = k;
	while (p > text && p[-1] == ' ')
		p--;
	const char *e = p;
	while (p > text && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == e)
		die(key);
	size_t v = 0;
	for (; p < e; p++)
		v = v * 10 + (size_t)(*p - '0');
	return v;
}

/* "MALLOC: +   2490368 (    2.4 MiB) Bytes in malloc metadata": the
   number before the "(".  */
static size_t bytes_line(const char *text, const char *key)
{
	const char *k = strstr(text, key);
	if (!k)
		die(key);
	const char *p = k;
	while (p > text && p[-1] != '\n')
		p--;
	while (*p && (*p < '0' || *p > '9'))
		p++;
	size_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (size_t)(*p - '0');
	return v;
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

static const char *read_num(const char *p, size_t *v)
{
	*v = 0;
	if (*p < '0' || *p > '9')
		die("stats: a number was expected");
	for (; *p >= '0' && *p <= '9'; p++)
		*v = *v * 10 + (size_t)(*p - '0');
	return p;
}

/* "class  11 [      160 bytes ] :       50 objs; ..." lines.  */
static void parse_classes(void)
{
	S.nclasses = 0;
	for (const char *p = strstr(S.text, "\nclass "); p;
	     p = strstr(p + 1, "\nclass ")) {
		size_t cls, size, objs;
		const char *q = read_num(skip_spaces(p + 7), &cls);
		q = skip_spaces(q);
		if (*q++ != '[')
			die("stats: class line");
		q = read_num(skip_spaces(q), &size);
		q = strstr(q, "] :");
		if (!q)
			die("stats: class line");
		read_num(skip_spaces(q + 3), &objs);
		if (S.nclasses == MAX_CLASSES)
			die("stats: too many classes");
		S.cls[S.nclasses] = (unsigned)cls;
		S.cls_size[S.nclasses] = size;
		S.cls_free[S.nclasses++] = objs;
	}
}

/* Read every statistic into S.  */
static void tc_stats(void)
{
	for (size_t i = 0; i < NPROPS; i++)
		if (!MallocExtension_GetNumericProperty(prop_names[i],
							&S.props[i]))
			die(prop_names[i]);
	MallocExtension_GetStats(S.text, sizeof S.text);
	S.page = num_before(S.text, "Tcmalloc page size");
	S.spans = num_before(S.text, "Spans in use");
	S.thread_heaps = num_before(S.text, "Thread heaps in use");
	S.metadata = bytes_line(S.text, "Bytes in malloc metadata");
	parse_classes();
}

/* Every statistic of the final read, once, before the measured heap. */
static void tc_warmup(void)
{
	const char *v = tc_version(&S.major, &S.minor, NULL);
	if (!v || S.major != 2)
		die("not gperftools 2.x");
	tc_stats();
}

/* ---- threads ------------------------------------------------------ */

static int thread_register(void)
{
	int t = __atomic_fetch_add(&T_count, 1, __ATOMIC_SEQ_CST);
	if (t >= MAX_THREADS)
		die("too many threads");
	T[t].tid = gettid();
	T[t].self = pthread_self();
	return t;
}

/* ---- recorded malloc and free ------------------------------------- */

static void *ta(int t, size_t req)
{
	void *p = malloc(req);
	if (!p)
		die("malloc failed");
	size_t us = malloc_usable_size(p);
	if (us != nallocx(req, 0) || us < req)
		die("usable size disagrees with nallocx");
	uintptr_t lo = (uintptr_t)p, hi = lo + us;
	for (int i = 0; i < R_count; i++) {
		struct rec *o = &R[i];
		uintptr_t olo = (uintptr_t)o->p, ohi = olo + o->usize;
		if (o->w == W_GONE || olo >= hi || lo >= ohi)
			continue;
		if (o->w == W_USED)
			die("malloc returned live memory");
		o->w = W_GONE;
	}
	if (R_count == MAX_RECS)
		die("too many records");
	struct rec *r = &R[R_count++];
	r->p = p;
	r->req = req;
	r->usize = us;
	r->w = W_USED;
	r->t = (unsigned char)t;
	live_fill(p, us);
	return p;
}

static struct rec *rec_of(const void *p)
{
	for (int i = R_count - 1; i >= 0; i--)
		if (R[i].p == p && R[i].w == W_USED)
			return &R[i];
	return NULL;
}

static void tf(void *p)
{
	struct rec *r = rec_of(p);
	if (!r)
		die("plan error: free of an unrecorded block");
	r->w = W_FREED;
	free(p);
}

/* ---- the final record --------------------------------------------- */

/* Live mode: every live block still holds its pattern.  */
static int live_blocks_intact(void)
{
	for (int i = 0; i < R_count; i++) {
		long off;
		if (R[i].w != W_USED)
			continue;
		off = live_bad(R[i].p, R[i].usize);
		if (off >= 0) {
			live_say_addr("a live block changed:", (uintptr_t)R[i].p,
				      off);
			return -1;
		}
	}
	return 0;
}

/* Read the statistics, check them, write everything and abort().  No
   heap operation may come between the last recorded one and this.
   `full`: the program runs on libtcmalloc (not _minimal).  */
static void truth_write_and_abort(const char *prog, bool full)
{
	size_t first[NPROPS];
	tc_stats();
	memcpy(first, S.props, sizeof first);
	tc_stats();
	if (memcmp(first, S.props, sizeof first) != 0)
		die("reading the statistics changed them");
	size_t live = 0;
	for (int i = 0; i < R_count; i++)
		if (R[i].w == W_USED)
			live += R[i].usize;
	if (live > S.props[0])
		die("the live records exceed generic.current_allocated_bytes");

	out_str("# heapwalk tcmalloc corpus ground truth, see tests/tools/tctruthcmp.c\n");
	out_str("# tcmalloc ");
	out_num((unsigned)S.major, 10);
	out_str(".");
	out_num((unsigned)S.minor, 10);
	out_str("\nprog ");
	out_str(prog);
	out_str("\nconfig version ");
	out_num((unsigned)S.major, 10);
	out_str(".");
	out_num((unsigned)S.minor, 10);
	out_str("\n");
	out_kv("config", "page", S.page);
	out_str(full ? "config library full\n" : "config library minimal\n");
	for (int t = 0; t < T_count; t++) {
		out_str("thread");
		out_sp((unsigned)t);
		out_sp((unsigned long long)T[t].tid);
		out_str(" ");
		out_num((unsigned long long)T[t].self, 16);
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
		out_str("\n");
	}
	for (unsigned i = 0; i < S.nclasses; i++) {
		out_str("freeclass");
		out_sp(S.cls[i]);
		out_sp(S.cls_size[i]);
		out_sp(S.cls_free[i]);
		out_str("\n");
	}
	for (size_t i = 0; i < NPROPS; i++)
		out_kv("prop", prop_names[i], S.props[i]);
	out_kv("stat", "spans", S.spans);
	out_kv("stat", "thread_heaps", S.thread_heaps);
	out_kv("stat", "metadata", S.metadata);
#ifdef TC_EXTRA_TRUTH
	TC_EXTRA_TRUTH();
#endif
	out_str("end\n");
	out_flush();
	close(out_fd);
	if (live_mode()) {
		live_threads = T_count;
		live_park(live_blocks_intact);
	}
	abort();
}

/* ---- the shared scenario ------------------------------------------ */

/* Large requests (bytes): above kMaxSize (256 KiB) they are spans of
   their own; those below are the largest small classes.  */
static const size_t large_req[] = { 40000, 70000, 200000, 262144, 300000,
				    1 << 20, (3 << 20) + 5, 9 << 20 };

/* The size classes, as nallocx() rounds requests up to them.  */
static size_t class_sizes[MAX_CLASSES];
static unsigned nclass_sizes;

static void find_classes(void)
{
	size_t last = 0;
	for (size_t req = 1; req <= 256 * 1024; req += req < 1024 ? 1 : 16) {
		size_t sz = nallocx(req, 0);
		if (sz == last)
			continue;
		if (nclass_sizes == MAX_CLASSES)
			die("too many size classes");
		class_sizes[nclass_sizes++] = last = sz;
	}
}

/* Every size class, a few blocks of each (many of one class in ten, `v`
   picks which), a third of them freed (into the thread cache, and past
   its limit into the central lists), then large spans live and freed.
   `v` varies the counts between threads.  */
static void build_heap(int t, unsigned v)
{
	static void *ptrs[4096];
	size_t prev = 0;

	if (!nclass_sizes)
		find_classes();
	for (unsigned c = 0; c < nclass_sizes; c++) {
		size_t sz = class_sizes[c];
		unsigned n = 4 + (c + v) % 5;
		if (c % 10 == v % 10)
			n = sz <= 1024 ? 400 : 60;     /* past the thread cache */
		for (unsigned i = 0; i < n; i++) {
			/* Requests spread over the class: sz, just above the
			   class below, the middle.  */
			size_t lo = prev + 1;
			size_t req = i % 3 == 0 ? sz : i % 3 == 1 ? lo
							  : lo + (sz - lo) / 2;
			ptrs[i] = ta(t, req);
		}
		for (unsigned i = n / 3; i < n; i += 3)
			tf(ptrs[i]);
		prev = sz;
	}
	for (unsigned k = 0; k < sizeof large_req / sizeof large_req[0]; k++) {
		void *a = ta(t, large_req[k] + v * 64);
		void *b = ta(t, large_req[k] + v * 64);
		(void)b;
		if ((k + v) % 2)
			tf(a);
	}
}

#endif /* TC_TRUTH_H */
