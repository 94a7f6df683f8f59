/* truthcmp - compare heapwalk's output with a corpus program's ground truth.
 *
 *   truthcmp TRUTH CHUNKS SUMMARY
 *       TRUTH    truth.txt written by a corpora/ptmalloc program
 *       CHUNKS   `heapwalk --json CORE chunks` (JSON Lines)
 *       SUMMARY  `heapwalk --json CORE summary` (one JSON object)
 *   truthcmp --sizes SIZES SUMMARY CHUNKS
 *       cross-checks `heapwalk --json CORE sizes --exact` against summary
 *       and chunks
 *   truthcmp --arenas TRUTH ARENAS [--unknown]
 *       `heapwalk --json CORE arenas`: each thread (by tid) listed under
 *       the arena the truth's thread line names; --unknown: the core has
 *       no thread pointers, so no arena may list threads
 *   truthcmp --classes SIZES EXACT
 *       `sizes` (size classes) against `sizes --exact`: every exact size
 *       in one class [min, size], each class the sum of its exact rows
 *   truthcmp --bins TRUTH BINS CHUNKS
 *       `heapwalk --json CORE bins` against the chunk lines (CHUNKS, which
 *       the first form checks against the truth) and the truth: per arena
 *       and list kind, the bins' counts and bytes are exactly the free
 *       chunk lines of that list (tcache, fast = fastbin, unsorted,
 *       small = smallbin, large = largebin); an entry with a chunk_size
 *       holds count x chunk_size bytes; and every free chunk the truth
 *       puts in a list is counted there: per (arena, kind, chunk size),
 *       and for tcaches per thread (by tid), the bins hold at least the
 *       truth's (glibc frees chunks of its own too, e.g. a full heap's
 *       leftover top)
 *
 * Prints each mismatch (the first 20, then how many more), then
 * "truthcmp: N allocations, M mismatches" (or "truthcmp: sizes: N classes,
 * M mismatches"); exits 0 when M is 0, 1 when not, 2 on unusable input.
 *
 * Truth format (corpora/ptmalloc/truth.h writes it): text, one record per
 * line, fields separated by blanks, '#' lines are comments.
 *   prog NAME
 *   thread IDX TID ARENA NHEAPS
 *       IDX: 0.. (0 = main); ARENA: "main", the malloc_state address
 *       (0x...) or "none" (never called malloc); NHEAPS: heaps the
 *       thread's chunks lie in
 *   alloc 0xUSER REQ USABLE WHERE IDX
 *       USER: pointer malloc returned; REQ: requested size; USABLE:
 *       malloc_usable_size() while live; WHERE: heap | mmapped (live) or
 *       tcache | fastbin | unsorted | smallbin | largebin (freed, in that
 *       list) or merged (freed and coalesced: not checked); IDX: thread
 *   mallinfo2 KEY VALUE
 *       KEY: arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks
 *       fordblks keepcost; the program's own mallinfo2() just before abort
 *   end
 *
 * Checks: every recorded allocation except "merged" is a chunk line with
 * that addr, size == USABLE, where == WHERE, state "used" for heap and
 * mmapped and "free" otherwise; allocations of one arena share heapwalk's
 * arena index, main_arena's is 0, different arenas get different ones;
 * no two chunk lines overlap ([chunk, chunk + chunk_size)), addr == chunk
 * + 16; summary "mallinfo" equals the recorded mallinfo2 field by field,
 * "threads" the thread count and "arenas" the number of arenas.
 *
 * JSON is read by key, whatever the order of keys, with the small
 * validating reader of json.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_NAME "truthcmp"
#include "cmp.h"

/* ---- chunks.jsonl ------------------------------------------------- */

/* ptmalloc's lines name their chunk; where they do not, the chunk is the
   header before addr, 8 bytes longer than the usable size (16 when
   mmapped).  */
static void chunk_defaults(void)
{
	for (size_t i = 0; i < nchunks; i++) {
		struct chunk *c = &chunks[i];
		if (!c->chunk)
			c->chunk = c->addr - 16;
		if (!c->chunk_size)
			c->chunk_size = c->size +
				(!strcmp(c->where, "mmapped") ? 16 : 8);
	}
}

static int by_chunk(const void *a, const void *b)
{
	const struct chunk *x = *(const struct chunk *const *)a;
	const struct chunk *y = *(const struct chunk *const *)b;
	return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static void check_overlaps(void)
{
	struct chunk **v = xrealloc(NULL, nchunks * sizeof *v);
	for (size_t i = 0; i < nchunks; i++)
		v[i] = &chunks[i];
	qsort(v, nchunks, sizeof *v, by_chunk);
	unsigned long long end = 0;
	const struct chunk *prev = NULL;
	for (size_t i = 0; i < nchunks; i++) {
		const struct chunk *c = v[i];
		if (c->addr != c->chunk + 16)
			mismatch("line %lu: addr 0x%llx is not chunk 0x%llx + 16",
				 c->line, c->addr, c->chunk);
		if (prev && c->chunk < end)
			mismatch("chunk 0x%llx (line %lu) overlaps chunk 0x%llx "
				 "(line %lu, size %llu)", c->chunk, c->line,
				 prev->chunk, prev->line, prev->chunk_size);
		if (!prev || c->chunk + c->chunk_size > end) {
			end = c->chunk + c->chunk_size;
			prev = c;
		}
	}
	free(v);
}

/* ---- truth -------------------------------------------------------- */

static const char *const mi_keys[10] = {
	"arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
	"fsmblks", "uordblks", "fordblks", "keepcost"
};

#define MAX_THREADS 256

struct tarena {
	unsigned long long arena;   /* 0 = main_arena */
	long long hw;               /* heapwalk's index, -1 = not seen */
};

static int truth_mode(const char *tpath, const char *cpath, const char *spath)
{
	FILE *f = fopen(tpath, "r");
	if (!f)
		fatal("%s: %s", tpath, strerror(errno));
	read_chunks(cpath);
	chunk_defaults();
	char *summary = slurp(spath, NULL);
	if (!jvalid(summary) || *jws(summary) != '{')
		fatal("%s: not a JSON object", spath);

	unsigned long long th_arena[MAX_THREADS];
	bool th_seen[MAX_THREADS] = { false };
	struct tarena ar[MAX_THREADS];
	size_t nar = 0, nthreads = 0;
	unsigned long nalloc = 0, lineno = 0;
	bool have_mi[10] = { false }, ended = false;
	char line[512];

	while (fgets(line, sizeof line, f)) {
		char kw[16], a1[64], a2[64], a3[64], a4[64], a5[64];
		lineno++;
		int n = sscanf(line, "%15s %63s %63s %63s %63s %63s", kw, a1, a2,
			       a3, a4, a5);
		if (n <= 0 || kw[0] == '#' || !strcmp(kw, "prog"))
			continue;
		if (!strcmp(kw, "end")) {
			ended = true;
		} else if (!strcmp(kw, "thread") && n >= 4) {
			unsigned long idx = strtoul(a1, NULL, 10);
			if (idx >= MAX_THREADS || th_seen[idx])
				fatal("%s:%lu: bad thread index", tpath, lineno);
			unsigned long long a =
				strcmp(a3, "main") ? strtoull(a3, NULL, 16) : 0;
			th_seen[idx] = true;
			th_arena[idx] = a;
			nthreads++;
			if (!strcmp(a3, "none"))
				continue;  /* no chunk, no arena */
			size_t k;
			for (k = 0; k < nar && ar[k].arena != a; k++)
				;
			if (k == nar) {
				ar[nar].arena = a;
				ar[nar++].hw = a ? -1 : 0;
			}
		} else if (!strcmp(kw, "alloc") && n == 6) {
			unsigned long long addr = strtoull(a1, NULL, 16);
			unsigned long long usable = strtoull(a3, NULL, 10);
			unsigned long t = strtoul(a5, NULL, 10);
			const char *w = a4;
			nalloc++;
			if (t >= MAX_THREADS || !th_seen[t])
				fatal("%s:%lu: unknown thread %s", tpath, lineno, a5);
			if (!strcmp(w, "merged"))
				continue;
			bool live = !strcmp(w, "heap") || !strcmp(w, "mmapped");
			struct chunk *c = find_chunk(addr);
			if (!c) {
				mismatch("0x%llx (%s, %llu bytes): no chunk line",
					 addr, w, usable);
				continue;
			}
			if (c->used != live)
				mismatch("0x%llx: state %s, expected %s", addr,
					 c->used ? "used" : "free",
					 live ? "used" : "free");
			if (strcmp(c->where, w))
				mismatch("0x%llx: where %s, expected %s", addr,
					 c->where, w);
			if (c->size != usable)
				mismatch("0x%llx (%s): size %llu, expected %llu",
					 addr, w, c->size, usable);
			if (!strcmp(w, "mmapped"))
				continue;
			/* Arena numbering must agree with the truth.  */
			size_t k;
			for (k = 0; k < nar && ar[k].arena != th_arena[t]; k++)
				;
			if (c->arena < 0) {
				mismatch("0x%llx: no arena", addr);
			} else if (ar[k].hw < 0) {
				for (size_t j = 0; j < nar; j++)
					if (ar[j].hw == c->arena)
						mismatch("0x%llx: arena %lld is also "
							 "another arena's index",
							 addr, c->arena);
				ar[k].hw = c->arena;
			} else if (ar[k].hw != c->arena) {
				mismatch("0x%llx: arena %lld, expected %lld (%s)",
					 addr, c->arena, ar[k].hw,
					 ar[k].arena ? "thread arena" : "main arena");
			}
		} else if (!strcmp(kw, "mallinfo2") && n == 3) {
			int k;
			for (k = 0; k < 10 && strcmp(a1, mi_keys[k]); k++)
				;
			if (k == 10)
				fatal("%s:%lu: unknown mallinfo2 field %s", tpath,
				      lineno, a1);
			have_mi[k] = true;
			unsigned long long want = strtoull(a2, NULL, 10), got;
			char path[80];
			snprintf(path, sizeof path, "mallinfo.%s", a1);
			if (!jnum(jpath(summary, path), &got))
				mismatch("summary: %s missing", path);
			else if (got != want)
				mismatch("summary: %s %llu, mallinfo2 said %llu",
					 path, got, want);
		} else {
			fatal("%s:%lu: cannot parse", tpath, lineno);
		}
	}
	fclose(f);
	if (!ended)
		fatal("%s: no \"end\" line: the program did not finish", tpath);
	for (int k = 0; k < 10; k++)
		if (!have_mi[k])
			fatal("%s: mallinfo2 %s not recorded", tpath, mi_keys[k]);

	unsigned long long v;
	if (!jnum(jget(summary, "threads"), &v))
		mismatch("summary: threads missing");
	else if (v != nthreads)
		mismatch("summary: threads %llu, expected %zu", v, nthreads);
	if (!jnum(jget(summary, "arenas"), &v))
		mismatch("summary: arenas missing");
	else if (v != nar)
		mismatch("summary: arenas %llu, expected %zu", v, nar);

	check_overlaps();
	char what[64];
	snprintf(what, sizeof what, "%lu allocations", nalloc);
	free(summary);
	free(chunks);
	return cmp_finish(what);
}

/* ---- --sizes ------------------------------------------------------ */

static int sizes_mode(const char *zpath, const char *spath, const char *cpath)
{
	char *sizes = slurp(zpath, NULL), *summary = slurp(spath, NULL);
	if (!jvalid(sizes) || !jvalid(summary))
		fatal("%s or %s is not valid JSON", zpath, spath);
	read_chunks(cpath);

	unsigned long long cu = 0, cub = 0, cf = 0, cfb = 0;
	for (size_t i = 0; i < nchunks; i++) {
		if (chunks[i].used) {
			cu++;
			cub += chunks[i].size;
		} else {
			cf++;
			cfb += chunks[i].size;
		}
	}

	const char *classes = jget(sizes, "classes");
	if (!classes || *jws(classes) != '[')
		fatal("%s: no \"classes\" array", zpath);
	unsigned long long su = 0, sub = 0, sf = 0, sfb = 0, prev = 0;
	unsigned long ncls = 0;
	bool bad = false;
	for (const char *el = jfirst(classes); el; el = jnext(el, &bad)) {
		unsigned long long size, u, ub, fr, fb;
		ncls++;
		if (!jnum(jget(el, "size"), &size) ||
		    !jnum(jget(el, "used"), &u) ||
		    !jnum(jget(el, "used_bytes"), &ub) ||
		    !jnum(jget(el, "free"), &fr) ||
		    !jnum(jget(el, "free_bytes"), &fb)) {
			mismatch("sizes: class %lu lacks a field", ncls);
			continue;
		}
		if (ub != size * u || fb != size * fr)
			mismatch("sizes: class %llu: %llu used in %llu bytes, "
				 "%llu free in %llu bytes", size, u, ub, fr, fb);
		if (ncls > 1 && size <= prev)
			mismatch("sizes: class %llu after %llu (not ascending "
				 "or repeated)", size, prev);
		prev = size;
		su += u;
		sub += ub;
		sf += fr;
		sfb += fb;
	}
	if (bad)
		fatal("%s: malformed classes array", zpath);

	struct {
		const char *what;
		unsigned long long sizes, chunks;
		const char *path;
	} t[4] = {
		{ "used count", su, cu, "used.count" },
		{ "used bytes", sub, cub, "used.bytes" },
		{ "free count", sf, cf, "free.count" },
		{ "free bytes", sfb, cfb, "free.bytes" },
	};
	for (int i = 0; i < 4; i++) {
		unsigned long long s;
		if (t[i].sizes != t[i].chunks)
			mismatch("%s: sizes total %llu, chunk lines %llu",
				 t[i].what, t[i].sizes, t[i].chunks);
		if (!jnum(jpath(summary, t[i].path), &s))
			mismatch("summary: %s missing", t[i].path);
		else if (s != t[i].sizes)
			mismatch("%s: summary %s %llu, sizes total %llu",
				 t[i].what, t[i].path, s, t[i].sizes);
	}
	char what[64];
	snprintf(what, sizeof what, "sizes: %lu classes", ncls);
	free(sizes);
	free(summary);
	free(chunks);
	return cmp_finish(what);
}

/* ---- --classes ---------------------------------------------------- */

/* The counters of one `sizes` row, in the order of class_keys.  */
static const char *const class_keys[6] = {
	"used", "used_bytes", "free", "free_bytes", "cached", "cached_bytes"
};

struct srow {
	unsigned long long min, size, v[6], sum[6];
};

/* The rows of a `sizes --json` document (min = size when it has none).  */
static struct srow *read_rows(const char *path, size_t *n)
{
	char *doc = slurp(path, NULL);
	if (!jvalid(doc))
		fatal("%s: not valid JSON", path);
	const char *arr = jget(doc, "classes");
	if (!arr || *jws(arr) != '[')
		fatal("%s: no \"classes\" array", path);
	struct srow *rows = NULL;
	size_t k = 0;
	bool bad = false;
	for (const char *el = jfirst(arr); el; el = jnext(el, &bad)) {
		rows = xrealloc(rows, (k + 1) * sizeof *rows);
		struct srow *r = &rows[k++];
		memset(r, 0, sizeof *r);
		if (!jnum(jget(el, "size"), &r->size))
			fatal("%s: row %zu has no size", path, k);
		if (!jnum(jget(el, "min"), &r->min))
			r->min = r->size;
		for (int i = 0; i < 6; i++)
			if (!jnum(jget(el, class_keys[i]), &r->v[i]))
				fatal("%s: row %zu has no %s", path, k,
				      class_keys[i]);
	}
	if (bad)
		fatal("%s: malformed classes array", path);
	free(doc);
	*n = k;
	return rows;
}

/* `sizes` (classes) against `sizes --exact`: the classes ascend without
   overlapping, every exact size lies in one class's [min, size], and each
   class's counts are the sums of its exact rows (so the totals agree).  */
static int classes_mode(const char *gpath, const char *xpath)
{
	size_t ng, nx;
	struct srow *g = read_rows(gpath, &ng), *x = read_rows(xpath, &nx);
	for (size_t i = 0; i < ng; i++) {
		if (g[i].min > g[i].size)
			mismatch("class %llu: min %llu above its size",
				 g[i].size, g[i].min);
		if (i > 0 && g[i].min <= g[i - 1].size)
			mismatch("class %llu-%llu overlaps or follows class "
				 "%llu-%llu", g[i].min, g[i].size,
				 g[i - 1].min, g[i - 1].size);
	}
	size_t k = 0;
	for (size_t i = 0; i < nx; i++) {
		while (k < ng && g[k].size < x[i].size)
			k++;
		if (k == ng || g[k].min > x[i].size) {
			mismatch("exact size %llu is in no class", x[i].size);
			continue;
		}
		for (int f = 0; f < 6; f++)
			g[k].sum[f] += x[i].v[f];
	}
	unsigned long long tot[2][6] = { { 0 } };
	for (size_t i = 0; i < ng; i++)
		for (int f = 0; f < 6; f++) {
			tot[0][f] += g[i].v[f];
			if (g[i].v[f] != g[i].sum[f])
				mismatch("class %llu-%llu: %s %llu, its exact "
					 "rows sum to %llu", g[i].min, g[i].size,
					 class_keys[f], g[i].v[f], g[i].sum[f]);
		}
	for (size_t i = 0; i < nx; i++)
		for (int f = 0; f < 6; f++)
			tot[1][f] += x[i].v[f];
	for (int f = 0; f < 6; f++)
		if (tot[0][f] != tot[1][f])
			mismatch("total %s: classes %llu, exact rows %llu",
				 class_keys[f], tot[0][f], tot[1][f]);
	char what[64];
	snprintf(what, sizeof what, "classes: %zu classes of %zu sizes", ng,
		 nx);
	free(g);
	free(x);
	return cmp_finish(what);
}

/* ---- --bins ------------------------------------------------------- */

/* bins' kinds and the chunk lines' "where" of the same list.  */
static const char *const bin_kinds[5][2] = {
	{ "tcache", "tcache" }, { "fast", "fastbin" },
	{ "unsorted", "unsorted" }, { "small", "smallbin" },
	{ "large", "largebin" },
};

static int bin_kind(const char *name, int col)
{
	for (int k = 0; k < 5; k++)
		if (!strcmp(bin_kinds[k][col], name))
			return k;
	return -1;
}

/* One tally: a list (kind) of an arena, optionally one chunk size and
   one thread (0 = any).  */
struct btally {
	int kind;
	long long arena;
	unsigned long long chunk_size, tid;
	unsigned long long count, bytes;      /* from bins */
	unsigned long long want, want_bytes;  /* from the chunk lines */
	unsigned long long truth;             /* the truth's chunks */
};

static struct btally *btal;
static size_t nbtal, capbtal;

static struct btally *btally(int kind, long long arena,
			     unsigned long long chunk_size,
			     unsigned long long tid)
{
	for (size_t i = 0; i < nbtal; i++)
		if (btal[i].kind == kind && btal[i].arena == arena &&
		    btal[i].chunk_size == chunk_size && btal[i].tid == tid)
			return &btal[i];
	if (nbtal == capbtal) {
		capbtal = capbtal ? 2 * capbtal : 64;
		btal = xrealloc(btal, capbtal * sizeof *btal);
	}
	btal[nbtal] = (struct btally){ .kind = kind, .arena = arena,
				       .chunk_size = chunk_size, .tid = tid };
	return &btal[nbtal++];
}

static int bins_mode(const char *tpath, const char *bpath, const char *cpath)
{
	char *doc = slurp(bpath, NULL);
	if (!jvalid(doc))
		fatal("%s: not valid JSON", bpath);
	const char *arr = jget(doc, "bins");
	if (!arr || *jws(arr) != '[')
		fatal("%s: no \"bins\" array", bpath);
	read_chunks(cpath);
	chunk_defaults();

	/* The bins: per (kind, arena) totals (chunk_size 0, tid 0), per
	   (kind, arena, chunk size) and, for tcaches, per (arena, chunk size,
	   thread).  */
	unsigned long n = 0;
	bool bad = false;
	for (const char *el = jfirst(arr); el; el = jnext(el, &bad)) {
		char kname[16];
		unsigned long long arena, cs = 0, tid = 0, count, bytes;
		n++;
		if (!jstr(jget(el, "kind"), kname, sizeof kname) ||
		    !jnum(jget(el, "arena"), &arena) ||
		    !jnum(jget(el, "count"), &count) ||
		    !jnum(jget(el, "bytes"), &bytes)) {
			mismatch("bins: entry %lu lacks kind/arena/count/bytes", n);
			continue;
		}
		int k = bin_kind(kname, 0);
		if (k < 0) {
			mismatch("bins: entry %lu: unknown kind \"%s\"", n, kname);
			continue;
		}
		if (jnum(jget(el, "chunk_size"), &cs) && bytes != count * cs)
			mismatch("bins: %s arena %llu chunk size %llu: %llu "
				 "chunks in %llu bytes", kname, arena, cs,
				 count, bytes);
		if (k == 0 && !jnum(jget(el, "thread"), &tid))
			tid = 0;
		struct btally *t = btally(k, (long long)arena, 0, 0);
		t->count += count;
		t->bytes += bytes;
		if (cs) {
			t = btally(k, (long long)arena, cs, 0);
			t->count += count;
			t->bytes += bytes;
			if (tid) {
				t = btally(k, (long long)arena, cs, tid);
				t->count += count;
				t->bytes += bytes;
			}
		}
	}
	if (bad)
		fatal("%s: malformed bins array", bpath);

	/* The free chunk lines of each list, per arena.  */
	for (size_t i = 0; i < nchunks; i++) {
		const struct chunk *c = &chunks[i];
		int k = bin_kind(c->where, 1);
		if (c->used || k < 0)
			continue;
		struct btally *t = btally(k, c->arena, 0, 0);
		t->want++;
		t->want_bytes += c->chunk_size;
	}
	for (size_t i = 0; i < nbtal; i++) {
		const struct btally *t = &btal[i];
		if (t->chunk_size || t->tid)
			continue;
		if (t->count != t->want || t->bytes != t->want_bytes)
			mismatch("bins: %s of arena %lld: %llu chunks in %llu "
				 "bytes, the chunk lines have %llu in %llu",
				 bin_kinds[t->kind][0], t->arena, t->count,
				 t->bytes, t->want, t->want_bytes);
	}

	/* The truth's free chunks: at least that many in each list.  */
	FILE *f = fopen(tpath, "r");
	if (!f)
		fatal("%s: %s", tpath, strerror(errno));
	unsigned long long tids[MAX_THREADS] = { 0 };
	unsigned long listed = 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char kw[16], a1[64], a2[64], a3[64], a4[64], a5[64];
		int m = sscanf(line, "%15s %63s %63s %63s %63s %63s", kw, a1, a2,
			       a3, a4, a5);
		if (m == 6 && !strcmp(kw, "alloc")) {
			int k = bin_kind(a4, 1);
			unsigned long t = strtoul(a5, NULL, 10);
			if (k < 0)
				continue;
			listed++;
			const struct chunk *c = find_chunk(strtoull(a1, NULL, 16));
			if (!c || c->arena < 0)
				continue; /* the first form reports it */
			unsigned long long cs = c->chunk_size;
			btally(k, c->arena, 0, 0)->truth++;
			/* unsorted and large entries span sizes */
			if (k == 2 || k == 4)
				continue;
			btally(k, c->arena, cs, 0)->truth++;
			if (k == 0 && t < MAX_THREADS && tids[t])
				btally(k, c->arena, cs, tids[t])->truth++;
		} else if (m >= 3 && !strcmp(kw, "thread")) {
			unsigned long t = strtoul(a1, NULL, 10);
			if (t < MAX_THREADS)
				tids[t] = strtoull(a2, NULL, 10);
		}
	}
	fclose(f);
	for (size_t i = 0; i < nbtal; i++) {
		const struct btally *t = &btal[i];
		if (t->count >= t->truth)
			continue;
		if (t->tid)
			mismatch("bins: tcache of thread %llu (arena %lld), "
				 "chunk size %llu: %llu chunks, the truth has "
				 "%llu there", t->tid, t->arena, t->chunk_size,
				 t->count, t->truth);
		else if (t->chunk_size)
			mismatch("bins: %s of arena %lld, chunk size %llu: %llu "
				 "chunks, the truth has %llu there",
				 bin_kinds[t->kind][0], t->arena, t->chunk_size,
				 t->count, t->truth);
		else
			mismatch("bins: %s of arena %lld: %llu chunks, the "
				 "truth has %llu there", bin_kinds[t->kind][0],
				 t->arena, t->count, t->truth);
	}
	char what[80];
	snprintf(what, sizeof what, "bins: %lu entries, %lu listed allocations",
		 n, listed);
	free(doc);
	free(chunks);
	free(btal);
	return cmp_finish(what);
}

/* ---- --arenas ----------------------------------------------------- */

/* Is `tid` in the JSON array of numbers at `arr`?  */
static bool tid_listed(const char *arr, unsigned long long tid)
{
	bool bad = false;
	unsigned long long v;
	for (const char *el = jfirst(arr); el; el = jnext(el, &bad))
		if (jnum(el, &v) && v == tid)
			return true;
	return false;
}

/* `arenas --json` against the truth's thread lines: each thread's tid is
   in the "threads" of the arena its chunks are in (main_arena for
   "main") and in no other arena's, nor in "no_arena"; a thread of arena
   "none" is in "no_arena" only.  With unknown set,
   the core has no thread pointers: every arena's "threads" must be null
   and "threads_from" must say "unknown".  */
static int arenas_mode(const char *tpath, const char *apath, bool unknown)
{
	FILE *f = fopen(tpath, "r");
	if (!f)
		fatal("%s: %s", tpath, strerror(errno));
	char *doc = slurp(apath, NULL);
	if (!jvalid(doc))
		fatal("%s: not valid JSON", apath);
	const char *arenas = jget(doc, "arenas");
	char from[256] = "";
	if (!arenas || *jws(arenas) != '[')
		fatal("%s: no \"arenas\" array", apath);
	if (!jstr(jget(doc, "threads_from"), from, sizeof from))
		mismatch("arenas: no threads_from");
	if (unknown && strncmp(from, "unknown", 7))
		mismatch("arenas: threads_from \"%s\", expected unknown", from);
	unsigned long nthreads = 0;
	char line[512];
	while (!unknown && fgets(line, sizeof line, f)) {
		char kw[16], idx[16], tid[32], arena[64];
		if (sscanf(line, "%15s %15s %31s %63s", kw, idx, tid, arena) != 4 ||
		    strcmp(kw, "thread"))
			continue;
		nthreads++;
		unsigned long long t = strtoull(tid, NULL, 10), a = 0, addr;
		bool main = !strcmp(arena, "main"), none = !strcmp(arena, "none");
		if (!main)
			a = strtoull(arena, NULL, 16);
		unsigned found = 0, right = 0;
		bool bad = false;
		for (const char *el = jfirst(arenas); el; el = jnext(el, &bad)) {
			char kind[16] = "";
			jstr(jget(el, "kind"), kind, sizeof kind);
			bool mine = main ? !strcmp(kind, "main")
					 : jhex(jget(el, "addr"), &addr) && addr == a;
			if (tid_listed(jget(el, "threads"), t)) {
				found++;
				right += mine;
			}
		}
		bool no_arena = tid_listed(jget(doc, "no_arena"), t);
		if (none && (found || !no_arena))
			mismatch("thread %s (tid %llu): never called malloc, "
				 "yet not (only) in no_arena", idx, t);
		else if (none)
			continue;
		else if (no_arena)
			mismatch("thread %s (tid %llu): in no_arena, expected "
				 "arena %s", idx, t, arena);
		else if (!found)
			mismatch("thread %s (tid %llu): in no arena's threads, "
				 "expected %s (%s)", idx, t, arena, from);
		else if (found != 1 || !right)
			mismatch("thread %s (tid %llu): listed in %u arenas, "
				 "%s its own (%s)", idx, t, found,
				 right ? "one of them" : "not", arena);
	}
	bool bad = false;
	for (const char *el = jfirst(arenas); el && unknown;
	     el = jnext(el, &bad)) {
		const char *th = jget(el, "threads");
		if (!th || strncmp(jws(th), "null", 4))
			mismatch("arenas: threads given without thread pointers");
	}
	fclose(f);
	free(doc);
	char what[64];
	snprintf(what, sizeof what, "arenas: %lu threads", nthreads);
	return cmp_finish(what);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--sizes"))
		return sizes_mode(argv[2], argv[3], argv[4]);
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "--unknown"))) &&
	    !strcmp(argv[1], "--arenas"))
		return arenas_mode(argv[2], argv[3], argc == 5);
	if (argc == 4 && !strcmp(argv[1], "--classes"))
		return classes_mode(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "--bins"))
		return bins_mode(argv[2], argv[3], argv[4]);
	if (argc == 4 && argv[1][0] != '-')
		return truth_mode(argv[1], argv[2], argv[3]);
	fprintf(stderr, "usage: truthcmp TRUTH CHUNKS.jsonl SUMMARY.json\n"
			"       truthcmp --sizes SIZES.json SUMMARY.json CHUNKS.jsonl\n"
			"       truthcmp --classes SIZES.json EXACT.json\n"
			"       truthcmp --arenas TRUTH ARENAS.json [--unknown]\n"
			"       truthcmp --bins TRUTH BINS.json CHUNKS.jsonl\n");
	return 2;
}
