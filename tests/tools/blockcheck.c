/* blockcheck - heapwalk's counting walk of a multiheap core held to the
 * program's own record (corpora/ptmalloc/multiheap1.c writes it; its
 * comment describes the truth format).
 *
 *   blockcheck TRUTH CHUNKS SUMMARY BINS ARENAS STATS
 *       TRUTH    the program's truth.txt
 *       CHUNKS   `heapwalk --json CORE chunks` (JSON Lines)
 *       SUMMARY  `heapwalk --json CORE summary`
 *       BINS     `heapwalk --json CORE bins`
 *       ARENAS   `heapwalk --json CORE arenas`
 *       STATS    the stderr of `heapwalk --stats --json CORE summary`
 *
 * Checks:
 *  blocks  every live block is a chunk line at its address, "used",
 *          where "heap", of its malloc_usable_size, in its worker's
 *          arena (one heapwalk arena index per worker, none main_arena's,
 *          no two alike); every freed block lies in a free chunk line (its
 *          own or, had it coalesced, a bigger one) or in a used one the
 *          truth records as live (a later malloc handed it out again);
 *          each worker arena's used "heap" lines are exactly its live
 *          blocks (no chunk of its is in use that the program does not
 *          hold).
 *  heaps   the truth saw two heaps or more in each worker's arena, and
 *          `arenas` lists that many at the truth's arena address.
 *  mallinfo  summary's "mallinfo" is the program's mallinfo2(), field by
 *          field (glibc walked its own lists for it).
 *  lists   per arena and list (tcache, fast, unsorted, small, large),
 *          `bins` (which walks every list) counts the chunks and bytes
 *          the chunk lines put there (the counting walk, which proves the
 *          small and large bins by sums and guesses the fastbins); per
 *          arena and fastbin size both are the entries the program
 *          walked itself; other arenas have no fastbin entry.
 *  stats   a fastbin's guesses fail exactly when the truth has suspects
 *          (live blocks whose first word decodes to 0 or into the arena)
 *          for a non-empty fastbin: "sums failed" is their number, the
 *          second stats line names only such fastbins (those it names
 *          and the "and N more" it ends with when the rest did not fit
 *          are all of them), with, where it says them,
 *          entries + suspects guesses and 1 + the suspects that decode
 *          to 0 list ends; "guessed" is the entries of the other
 *          fastbins; "summed" is what `bins` holds in the small and
 *          large bins (and in the unsorted bin, for the stats of a
 *          counting walk: the last argument says which), and not 0.
 *          A clean truth must have no suspect
 *          (so no sum fails and something is guessed); a churn truth
 *          must have both a failing and a proven non-empty fastbin.
 *
 * Prints each mismatch (the first 20, then how many more), a line on
 * what it expected of the stats, then "blockcheck: N blocks, M
 * mismatches"; exits 0 when M is 0, 1 when not, 2 on unusable input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_NAME "blockcheck"
#include "cmp.h"

#define MAX_WORKERS 8
#define NFAST 10          /* fastbins of chunk sizes 0x20..0xb0 */
#define MAX_ARENAS 64

enum kind { K_TCACHE, K_FAST, K_UNSORTED, K_SMALL, K_LARGE, NKINDS };
static const char *const bins_kind[NKINDS] = {
	"tcache", "fast", "unsorted", "small", "large"
};
static const char *const chunk_where[NKINDS] = {
	"tcache", "fastbin", "unsorted", "smallbin", "largebin"
};

struct worker {
	bool seen;
	unsigned long long arena, span_lo, span_hi;
	unsigned nheaps;
	long long hw;                    /* heapwalk's arena index, -1 */
	unsigned long long entries[NFAST], suspects[NFAST], nulls[NFAST];
	unsigned long live;
};

struct tblock {
	unsigned long long addr, usable;
	unsigned w;
	bool live;
};

static struct worker workers[MAX_WORKERS + 1];
static struct tblock *blocks;
static size_t nblocks;
static bool churn;
static unsigned long long mallinfo2_v[10];
static const char *const mi_keys[10] = {
	"arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
	"fsmblks", "uordblks", "fordblks", "keepcost"
};

/* ---- the truth --------------------------------------------------------- */

static unsigned worker_no(const char *s, const char *path, unsigned long ln)
{
	unsigned long w = strtoul(s, NULL, 10);
	if (w < 1 || w > MAX_WORKERS)
		fatal("%s:%lu: bad worker %s", path, ln, s);
	return (unsigned)w;
}

static void read_truth(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		fatal("%s: %s", path, strerror(errno));
	size_t cap = 1 << 16;
	bool ended = false, have_mode = false, have_mi[10] = { false };
	unsigned long ln = 0;
	char line[256];
	blocks = xrealloc(NULL, cap * sizeof *blocks);
	while (fgets(line, sizeof line, f)) {
		char kw[16], a[6][40];
		ln++;
		int n = sscanf(line, "%15s %39s %39s %39s %39s %39s %39s", kw,
			       a[0], a[1], a[2], a[3], a[4], a[5]);
		if (n <= 0 || kw[0] == '#' || !strcmp(kw, "prog") ||
		    !strcmp(kw, "oldtop"))
			continue;
		if (ended)
			fatal("%s:%lu: a line after \"end\"", path, ln);
		if (!strcmp(kw, "end")) {
			ended = true;
		} else if (!strcmp(kw, "mode") && n == 2) {
			churn = !strcmp(a[0], "churn");
			if (!churn && strcmp(a[0], "clean"))
				fatal("%s:%lu: unknown mode %s", path, ln, a[0]);
			have_mode = true;
		} else if (!strcmp(kw, "worker") && n == 7) {
			struct worker *w = &workers[worker_no(a[0], path, ln)];
			w->seen = true;
			w->arena = strtoull(a[2], NULL, 16);
			w->nheaps = (unsigned)strtoul(a[3], NULL, 10);
			w->span_lo = strtoull(a[4], NULL, 16);
			w->span_hi = strtoull(a[5], NULL, 16);
			w->hw = -1;
		} else if (!strcmp(kw, "fast") && n == 6) {
			struct worker *w = &workers[worker_no(a[0], path, ln)];
			unsigned long sz = strtoul(a[1], NULL, 10);
			if (sz < 32 || sz % 16 || sz / 16 - 2 >= NFAST)
				fatal("%s:%lu: bad fastbin size", path, ln);
			w->entries[sz / 16 - 2] = strtoull(a[2], NULL, 10);
			w->suspects[sz / 16 - 2] = strtoull(a[3], NULL, 10);
			w->nulls[sz / 16 - 2] = strtoull(a[4], NULL, 10);
		} else if ((!strcmp(kw, "live") && n == 4) ||
			   (!strcmp(kw, "freed") && n == 3)) {
			unsigned w = worker_no(a[0], path, ln);
			if (!workers[w].seen)
				fatal("%s:%lu: block of an unknown worker", path, ln);
			if (nblocks == cap) {
				cap *= 2;
				blocks = xrealloc(blocks, cap * sizeof *blocks);
			}
			struct tblock *b = &blocks[nblocks++];
			b->w = w;
			b->live = kw[0] == 'l';
			b->addr = strtoull(a[1], NULL, 16);
			b->usable = b->live ? strtoull(a[2], NULL, 10) : 0;
			if (b->live)
				workers[w].live++;
		} else if (!strcmp(kw, "mallinfo2") && n == 3) {
			int k;
			for (k = 0; k < 10 && strcmp(a[0], mi_keys[k]); k++)
				;
			if (k == 10)
				fatal("%s:%lu: unknown mallinfo2 field", path, ln);
			mallinfo2_v[k] = strtoull(a[1], NULL, 10);
			have_mi[k] = true;
		} else {
			fatal("%s:%lu: cannot parse", path, ln);
		}
	}
	fclose(f);
	if (!ended)
		fatal("%s: no \"end\" line: the program did not finish", path);
	if (!have_mode)
		fatal("%s: no mode line", path);
	for (int k = 0; k < 10; k++)
		if (!have_mi[k])
			fatal("%s: mallinfo2 %s not recorded", path, mi_keys[k]);
}

/* ---- blocks -------------------------------------------------------------- */

/* The chunk line whose chunk holds address a (its header included), or
   NULL.  The lines are sorted by addr, which is chunk + 16.  */
static struct chunk *chunk_holding(unsigned long long a)
{
	size_t lo = 0, hi = nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (chunks[mid].chunk <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct chunk *c = &chunks[lo - 1];
	return a < c->chunk + c->chunk_size ? c : NULL;
}

static void check_blocks(void)
{
	/* Which chunk lines are the truth's live blocks.  */
	bool *is_live = xrealloc(NULL, (nchunks ? nchunks : 1) * sizeof *is_live);
	memset(is_live, 0, (nchunks ? nchunks : 1) * sizeof *is_live);
	for (size_t i = 0; i < nchunks; i++)
		if (!chunks[i].chunk || chunks[i].addr != chunks[i].chunk + 16)
			fatal("chunk line %lu: no chunk, or addr is not chunk + 16",
			      chunks[i].line);

	for (size_t i = 0; i < nblocks; i++) {
		const struct tblock *b = &blocks[i];
		struct worker *w = &workers[b->w];
		if (!b->live)
			continue;
		struct chunk *c = find_chunk(b->addr);
		if (!c) {
			mismatch("live 0x%llx (worker %u): no chunk line", b->addr,
				 b->w);
			continue;
		}
		is_live[c - chunks] = true;
		if (!c->used || strcmp(c->where, "heap"))
			mismatch("live 0x%llx (worker %u): %s in %s, not used in "
				 "the heap", b->addr, b->w,
				 c->used ? "used" : "free", c->where);
		if (c->size != b->usable)
			mismatch("live 0x%llx: size %llu, malloc_usable_size %llu",
				 b->addr, c->size, b->usable);
		if (c->arena < 0) {
			mismatch("live 0x%llx: no arena", b->addr);
		} else if (w->hw < 0) {
			w->hw = c->arena;
		} else if (w->hw != c->arena) {
			mismatch("live 0x%llx: arena %lld, worker %u's other "
				 "blocks are in arena %lld", b->addr, c->arena,
				 b->w, w->hw);
		}
	}
	for (unsigned i = 1; i <= MAX_WORKERS; i++) {
		if (!workers[i].seen)
			continue;
		if (workers[i].hw <= 0)
			mismatch("worker %u: heapwalk puts its blocks in arena "
				 "%lld", i, workers[i].hw);
		for (unsigned j = 1; j < i; j++)
			if (workers[j].seen && workers[j].hw == workers[i].hw)
				mismatch("workers %u and %u share heapwalk's arena "
					 "%lld", j, i, workers[i].hw);
	}

	unsigned long exact = 0, inside = 0, again = 0;
	for (size_t i = 0; i < nblocks; i++) {
		const struct tblock *b = &blocks[i];
		if (b->live)
			continue;
		const struct chunk *c = chunk_holding(b->addr - 16);
		if (!c) {
			mismatch("freed 0x%llx (worker %u): in no chunk line",
				 b->addr, b->w);
		} else if (c->used) {
			if (is_live[c - chunks])
				again++;
			else
				mismatch("freed 0x%llx (worker %u): in a chunk in "
					 "use (0x%llx, %s) the program does not "
					 "hold", b->addr, b->w, c->addr, c->where);
		} else {
			if (c->addr == b->addr)
				exact++;
			else
				inside++;
			if (c->arena != workers[b->w].hw)
				mismatch("freed 0x%llx: free in arena %lld, not "
					 "worker %u's %lld", b->addr, c->arena,
					 b->w, workers[b->w].hw);
		}
	}
	printf("blockcheck: freed blocks: %lu free chunks of their own, %lu "
	       "inside bigger free chunks, %lu handed out again\n", exact,
	       inside, again);

	/* No chunk of a worker's arena in use that the program does not
	   hold (a guess taken back, or a list walked, as in use wrongly).  */
	for (unsigned i = 1; i <= MAX_WORKERS; i++) {
		const struct worker *w = &workers[i];
		unsigned long used = 0;
		if (!w->seen)
			continue;
		for (size_t k = 0; k < nchunks; k++)
			if (chunks[k].arena == w->hw && chunks[k].used &&
			    !strcmp(chunks[k].where, "heap"))
				used++;
		if (used != w->live)
			mismatch("arena %lld (worker %u): %lu chunks used in the "
				 "heap, the program holds %lu blocks", w->hw, i,
				 used, w->live);
	}
	free(is_live);
}

/* ---- heaps, mallinfo ------------------------------------------------------ */

static void check_heaps(const char *apath)
{
	char *doc = slurp(apath, NULL);
	if (!jvalid(doc))
		fatal("%s: not valid JSON", apath);
	const char *arr = jget(doc, "arenas");
	if (!arr)
		fatal("%s: no \"arenas\" array", apath);
	for (unsigned i = 1; i <= MAX_WORKERS; i++) {
		const struct worker *w = &workers[i];
		if (!w->seen)
			continue;
		if (w->nheaps < 2)
			mismatch("worker %u: its blocks lie in %u heap(s), not two "
				 "or more: the case does not test what it should",
				 i, w->nheaps);
		bool bad = false, found = false;
		for (const char *el = jfirst(arr); el; el = jnext(el, &bad)) {
			unsigned long long idx, addr;
			if (!jnum(jget(el, "arena"), &idx) ||
			    (long long)idx != w->hw)
				continue;
			found = true;
			if (!jhex(jget(el, "addr"), &addr) || addr != w->arena)
				mismatch("arenas: arena %lld is not at 0x%llx, "
					 "worker %u's malloc_state", w->hw,
					 w->arena, i);
			unsigned n = 0;
			const char *heaps = jget(el, "heaps");
			for (const char *h = heaps ? jfirst(heaps) : NULL; h;
			     h = jnext(h, &bad))
				n++;
			if (n != w->nheaps)
				mismatch("arenas: arena %lld has %u heaps, worker "
					 "%u's blocks lie in %u", w->hw, n, i,
					 w->nheaps);
		}
		if (bad)
			fatal("%s: malformed arenas array", apath);
		if (!found)
			mismatch("arenas: no arena %lld (worker %u)", w->hw, i);
	}
	free(doc);
}

static void check_mallinfo(const char *spath)
{
	char *doc = slurp(spath, NULL);
	if (!jvalid(doc))
		fatal("%s: not valid JSON", spath);
	for (int k = 0; k < 10; k++) {
		char path[40];
		unsigned long long got;
		snprintf(path, sizeof path, "mallinfo.%s", mi_keys[k]);
		if (!jnum(jpath(doc, path), &got))
			mismatch("summary: %s missing", path);
		else if (got != mallinfo2_v[k])
			mismatch("summary: %s %llu, the program's mallinfo2 %llu",
				 path, got, mallinfo2_v[k]);
	}
	free(doc);
}

/* ---- lists: bins against the chunk lines ---------------------------------- */

struct tally {
	unsigned long long count, bytes;
};
static struct tally from_bins[MAX_ARENAS][NKINDS], from_chunks[MAX_ARENAS][NKINDS];
static struct tally fast_bins[MAX_ARENAS][NFAST], fast_chunks[MAX_ARENAS][NFAST];

static int kind_of(const char *name, const char *const *names)
{
	for (int k = 0; k < NKINDS; k++)
		if (!strcmp(name, names[k]))
			return k;
	return -1;
}

static void check_lists(const char *bpath)
{
	char *doc = slurp(bpath, NULL);
	if (!jvalid(doc))
		fatal("%s: not valid JSON", bpath);
	const char *arr = jget(doc, "bins");
	if (!arr)
		fatal("%s: no \"bins\" array", bpath);
	bool bad = false;
	for (const char *el = jfirst(arr); el; el = jnext(el, &bad)) {
		char kname[24];
		unsigned long long arena, count, bytes, cs;
		if (!jstr(jget(el, "kind"), kname, sizeof kname) ||
		    !jnum(jget(el, "arena"), &arena) ||
		    !jnum(jget(el, "count"), &count) ||
		    !jnum(jget(el, "bytes"), &bytes))
			fatal("%s: an entry lacks kind/arena/count/bytes", bpath);
		int k = kind_of(kname, bins_kind);
		if (k < 0)
			continue;           /* a list this check does not know */
		if (arena >= MAX_ARENAS)
			fatal("%s: arena %llu", bpath, arena);
		from_bins[arena][k].count += count;
		from_bins[arena][k].bytes += bytes;
		if (k == K_FAST) {
			if (!jnum(jget(el, "chunk_size"), &cs) || cs < 32 ||
			    cs % 16 || cs / 16 - 2 >= NFAST)
				fatal("%s: a fastbin without a chunk_size", bpath);
			fast_bins[arena][cs / 16 - 2].count += count;
			fast_bins[arena][cs / 16 - 2].bytes += bytes;
		}
	}
	if (bad)
		fatal("%s: malformed bins array", bpath);
	free(doc);

	for (size_t i = 0; i < nchunks; i++) {
		const struct chunk *c = &chunks[i];
		int k = kind_of(c->where, chunk_where);
		if (k < 0 || c->used)
			continue;
		if (c->arena < 0 || c->arena >= MAX_ARENAS)
			fatal("chunk line %lu: arena %lld", c->line, c->arena);
		from_chunks[c->arena][k].count++;
		from_chunks[c->arena][k].bytes += c->chunk_size;
		if (k == K_FAST) {
			if (c->chunk_size / 16 - 2 >= NFAST)
				mismatch("chunk 0x%llx: a fastbin chunk of %llu bytes",
					 c->chunk, c->chunk_size);
			else
				fast_chunks[c->arena][c->chunk_size / 16 - 2].count++;
		}
	}

	for (int a = 0; a < MAX_ARENAS; a++) {
		for (int k = 0; k < NKINDS; k++)
			if (from_bins[a][k].count != from_chunks[a][k].count ||
			    from_bins[a][k].bytes != from_chunks[a][k].bytes)
				mismatch("arena %d %s: bins walks %llu chunks, %llu "
					 "bytes; the chunk lines have %llu, %llu", a,
					 bins_kind[k], from_bins[a][k].count,
					 from_bins[a][k].bytes,
					 from_chunks[a][k].count,
					 from_chunks[a][k].bytes);
		const struct worker *w = NULL;
		for (unsigned i = 1; i <= MAX_WORKERS; i++)
			if (workers[i].seen && workers[i].hw == a)
				w = &workers[i];
		for (int s = 0; s < NFAST; s++) {
			unsigned long long want = w ? w->entries[s] : 0;
			if (fast_bins[a][s].count != want ||
			    fast_chunks[a][s].count != want)
				mismatch("arena %d fastbin 0x%x: bins walks %llu, the "
					 "chunk lines have %llu, the program's walk "
					 "%llu", a, (s + 2) * 16,
					 fast_bins[a][s].count,
					 fast_chunks[a][s].count, want);
		}
	}
}

/* ---- stats ------------------------------------------------------------------ */

/* The number after `key` in s (the first occurrence), or false.  */
static bool num_after(const char *s, const char *key, unsigned long long *v)
{
	const char *p = s ? strstr(s, key) : NULL;
	if (!p)
		return false;
	p += strlen(key);
	if (*p < '0' || *p > '9')
		return false;
	*v = strtoull(p, NULL, 10);
	return true;
}

/* The number right before `key` in s ("1378 guesses"), or false.  */
static bool num_before(const char *s, const char *key, unsigned long long *v)
{
	const char *p = strstr(s, key), *d;
	if (!p)
		return false;
	for (d = p; d > s && d[-1] >= '0' && d[-1] <= '9'; d--)
		;
	if (d == p)
		return false;
	*v = strtoull(d, NULL, 10);
	return true;
}

/* The truth's worker whose arena heapwalk numbers `hw`, or NULL.  */
static const struct worker *worker_at(long long hw)
{
	for (unsigned i = 1; i <= MAX_WORKERS; i++)
		if (workers[i].seen && workers[i].hw == hw)
			return &workers[i];
	return NULL;
}

/* Fastbin s of worker w fails, says the truth: it has entries, and live
   blocks a guess takes for entries.  */
static bool fails(const struct worker *w, int s)
{
	return w && w->entries[s] && w->suspects[s];
}

/* `counting`: the stats of a walk for counting (summary), which sums
   the unsorted bin's chunks with the small and large bins' instead of
   walking it; else of a walk that classifies (chunks), which walks it.  */
static void check_stats(const char *path, bool counting)
{
	char *text = slurp(path, NULL);
	char *first = NULL, *second = NULL;
	for (char *ln = text; ln && *ln;) {
		char *nl = strchr(ln, '\n');
		if (nl)
			*nl = 0;
		/* "heapwalk: stats: sums that disagreed[, ...]: ITEMS" */
		char *dis = strncmp(ln, "heapwalk: stats: ", 17) ? NULL
			    : strstr(ln + 17, "disagreed");
		char *colon = dis ? strstr(dis, ": ") : NULL;
		if (colon)
			second = colon + 2;
		else if (!strncmp(ln, "heapwalk: stats: ", 17) &&
			 strstr(ln, "guessed"))
			first = ln;
		ln = nl ? nl + 1 : NULL;
	}
	unsigned long long guessed, summed, failed;
	if (!first || !num_after(first, "guessed ", &guessed) ||
	    !num_after(first, "summed ", &summed) ||
	    !num_after(first, "sums failed ", &failed))
		fatal("%s: no stats line with guessed, summed and sums failed",
		      path);

	unsigned long long want_failed = 0, want_guessed = 0, suspects = 0;
	unsigned proven = 0;
	char expect[1024] = "";
	size_t elen = 0;
	for (unsigned i = 1; i <= MAX_WORKERS; i++) {
		const struct worker *w = &workers[i];
		if (!w->seen)
			continue;
		for (int s = 0; s < NFAST; s++) {
			suspects += w->suspects[s];
			if (fails(w, s)) {
				want_failed++;
				if (elen + 40 < sizeof expect)
					elen += (size_t)snprintf(expect + elen,
						sizeof expect - elen,
						" arena %lld 0x%x", w->hw,
						(s + 2) * 16);
			} else if (w->entries[s]) {
				want_guessed += w->entries[s];
				proven++;
			}
		}
	}
	unsigned long long small_large = 0;
	for (int a = 0; a < MAX_ARENAS; a++)
		small_large += from_bins[a][K_SMALL].count +
			       from_bins[a][K_LARGE].count +
			       (counting ? from_bins[a][K_UNSORTED].count : 0);
	printf("blockcheck: %s: expected %llu failed fastbins:%s; %u proven, "
	       "%llu guessed; %llu summed\n", churn ? "churn" : "clean",
	       want_failed, want_failed ? expect : " none", proven,
	       want_guessed, small_large);

	if (!churn && suspects)
		mismatch("clean truth: %llu live blocks look like fastbin "
			 "entries (the program writes every byte)", suspects);
	if (churn && (!want_failed || !proven))
		mismatch("churn truth: %llu failing and %u proven non-empty "
			 "fastbins: the case needs both", want_failed, proven);
	if (failed != want_failed)
		mismatch("stats: sums failed %llu, expected %llu", failed,
			 want_failed);
	if (guessed != want_guessed)
		mismatch("stats: guessed %llu, expected %llu (the proven "
			 "fastbins' entries)", guessed, want_guessed);
	if (summed != small_large || !summed)
		mismatch("stats: summed %llu, the small and large bins%s "
			 "hold %llu chunks", summed,
			 counting ? " and the unsorted bin" : "", small_large);
	if (!want_failed && second)
		mismatch("stats: sums disagreed, none should: %s", second);
	if (want_failed && !second)
		mismatch("stats: no line names the sums that disagreed");

	/* The second line: items "arena A fastbin 0xS" each with its "G
	   guesses" and "E list ends" (their wording around them aside),
	   "; " between them, "and N more" at the end when the rest did not
	   fit.  */
	bool cut = false;
	unsigned long named = 0, more = 0;
	bool seen_item[MAX_ARENAS][NFAST] = { { false } };
	for (char *item = second; item && *item;) {
		char *sep = strstr(item, "; ");
		if (sep)
			*sep = 0;
		int used = 0;
		if (!sep && sscanf(item, "and %lu more%n", &more, &used) == 1 &&
		    used > 0 && item[used] == 0) {
			cut = true;
			break;
		}
		unsigned a, s;
		if (sscanf(item, "arena %u fastbin 0x%x%n", &a, &s, &used) != 2 ||
		    used == 0) {
			mismatch("stats: a sum that is no fastbin's disagreed: "
				 "%s", item);
			break;
		}
		named++;
		int k = (int)(s / 16) - 2;
		const struct worker *w = worker_at(a);
		if (a >= MAX_ARENAS || s % 16 || k < 0 || k >= NFAST ||
		    !fails(w, k)) {
			mismatch("stats: arena %u fastbin 0x%x failed, the truth "
				 "has no suspect for it", a, s);
		} else if (seen_item[a][k]) {
			mismatch("stats: arena %u fastbin 0x%x named twice", a, s);
		} else {
			seen_item[a][k] = true;
			unsigned long long g, e;
			if (num_before(item, " guesses", &g) &&
			    g != w->entries[k] + w->suspects[k])
				mismatch("stats: arena %u fastbin 0x%x: %llu "
					 "guesses, the truth %llu entries + %llu "
					 "suspects", a, s, g, w->entries[k],
					 w->suspects[k]);
			if (num_before(item, " list ends", &e) &&
			    e != 1 + w->nulls[k])
				mismatch("stats: arena %u fastbin 0x%x: %llu list "
					 "ends, the truth 1 + %llu stale NULLs", a,
					 s, e, w->nulls[k]);
		}
		item = sep ? sep + 2 : NULL;
	}
	if (named + more != want_failed)
		mismatch("stats: %lu fastbins named and %lu more, expected "
			 "%llu", named, more, want_failed);
	printf("blockcheck: stats: guessed %llu, summed %llu, sums failed "
	       "%llu, %lu named%s\n", guessed, summed, failed, named,
	       cut ? " (the line was cut short)" : "");
	free(text);
}

int main(int argc, char **argv)
{
	if (argc != 8 || (strcmp(argv[7], "counting") &&
			  strcmp(argv[7], "classify"))) {
		fprintf(stderr, "usage: blockcheck TRUTH CHUNKS SUMMARY BINS "
				"ARENAS STATS counting|classify\n");
		return 2;
	}
	read_truth(argv[1]);
	read_chunks(argv[2]);
	check_blocks();
	check_heaps(argv[5]);
	check_mallinfo(argv[3]);
	check_lists(argv[4]);
	check_stats(argv[6], !strcmp(argv[7], "counting"));
	char what[64];
	snprintf(what, sizeof what, "%zu blocks", nblocks);
	free(blocks);
	free(chunks);
	return cmp_finish(what);
}
