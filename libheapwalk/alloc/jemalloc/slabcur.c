/* slabcur.c - each bin's current slab (bin_t.slabcur), the slab the
 * bin's next allocation takes a region from.
 *
 * A bin_t is the bin's lock, its stats, `slabcur`, the heap of its other
 * non-full slabs and a list of full ones (kept for manual arenas only),
 * and an arena's bins are one array of bin_t records, a record per shard
 * of each small class in class order: inline in arena_t up to 5.1, right
 * after it from 5.2.  Where that array starts and how the record is laid
 * out depend on the version, the build (stats, debug) and the libc's
 * pthread_mutex_t, so both are taken from the heap itself:
 *
 *   - every word near the arena that points at an edata of one of the
 *     arena's slabs is a candidate slabcur (or heap root) of that slab's
 *     class, which puts the array at one of two places for each record
 *     layout the versions have had;
 *   - a placement is kept only where every bin's slabcur and heap root
 *     are NULL or slabs of that bin's class in that arena;
 *   - the bin's own stats (curregs, curslabs) decide between placements:
 *     they equal what the slabs' bitmaps add up to, which nothing else in
 *     the arena does at the right distance from slabcur.
 *
 * A tie that the stats cannot break (a build without stats) leaves the
 * arena's current slabs unknown rather than guessed.
 */
#include <stdlib.h>

#include "jemalloc.h"

#define WINDOW_FIXED (128u << 10)     /* arena_t is < 80 KiB in 5.x */
#define RECORD_MAX 320u               /* the largest bin_t tried */
#define MAX_SHARDS 64u                /* BIN_SHARDS_MAX */
#define MAX_CANDIDATES 4096

/* One bin_t layout: slabcur's offset, the record's size, the stats'
   offset (curregs 24 bytes in, curslabs 64).  */
struct layout {
	uint32_t cur, stride, stats;
};

struct slab_ref {
	uint64_t edata;
	uint32_t arena;
	uint16_t szind;
};

/* What one arena's search works with.  */
struct search {
	struct je_state *j;
	struct je_slabcur *sc;
	uint32_t arena;
	uint64_t at;                  /* the arena_t */
	uint64_t *win;                /* WIN bytes from `at` */
	uint8_t *readable;            /* per page of win */
	size_t nwords;
	const struct slab_ref *refs;
	size_t nrefs;
	const uint64_t *used, *slabs; /* per class: regions in use, slabs */
};

struct candidate {
	uint64_t base;                /* the first record's offset from at */
	uint8_t layout;
};

/* The layouts of 5.0 to 5.3 (research: DWARF of each, x86_64 and
   aarch64): malloc_mutex_t is 104 to 120 bytes (more in debug builds),
   bin_stats_t 136 or 144 bytes after slabcur's heap and list up to 5.2,
   80 bytes before slabcur from 5.3.  */
static unsigned layouts(const struct je_state *j, struct layout *out)
{
	unsigned n = 0;
	for (uint32_t m = 104; m <= 136; m += 8) {
		if (j->era == JE_ERA_53) {
			out[n++] = (struct layout){ m + 80, m + 112, m };
		} else {
			out[n++] = (struct layout){ m, m + 160, m + 24 };
			out[n++] = (struct layout){ m, m + 168, m + 24 };
		}
	}
	return n;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct slab_ref *x = a, *y = b;
	return x->edata < y->edata ? -1 : x->edata > y->edata;
}

static const struct slab_ref *ref_of(const struct search *q, uint64_t edata)
{
	size_t lo = 0, hi = q->nrefs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (q->refs[mid].edata < edata)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < q->nrefs && q->refs[lo].edata == edata ? &q->refs[lo] :
							     NULL;
}

/* The window's word at byte offset off, if read.  */
static bool word(const struct search *q, uint64_t off, uint64_t *w)
{
	if (off % 8 || off / 8 >= q->nwords || !q->readable[off >> 12])
		return false;
	*w = q->win[off / 8];
	return true;
}

/* Is w NULL or a slab of class szind in this arena?  */
static bool fits_bin(const struct search *q, uint64_t w, unsigned szind)
{
	if (!w)
		return true;
	const struct slab_ref *r = ref_of(q, w);
	return r && r->arena == q->arena && r->szind == szind;
}

/* Score a placement: -1 when some bin's slabcur or heap root is not NULL
   or a slab of its class; else how many bins' stats match the slabs
   (times 1000) plus how many slabcur words are set.  */
static long score(const struct search *q, const struct layout *l,
		  uint64_t base)
{
	const struct je_slabcur *sc = q->sc;
	long stats = 0, set = 0;
	for (unsigned i = 0; i < q->j->nbins; i++) {
		for (uint32_t s = sc->first[i]; s < sc->first[i + 1]; s++) {
			uint64_t rec = base + (uint64_t)s * l->stride, cur,
				 root;
			if (!word(q, rec + l->cur, &cur) ||
			    !word(q, rec + l->cur + 8, &root) ||
			    !fits_bin(q, cur, i) || !fits_bin(q, root, i))
				return -1;
			set += cur != 0;
		}
		uint64_t rec = base + (uint64_t)sc->first[i] * l->stride,
			 curregs, curslabs;
		if (sc->first[i + 1] - sc->first[i] == 1 && q->slabs[i] &&
		    word(q, rec + l->stats + 24, &curregs) &&
		    word(q, rec + l->stats + 64, &curslabs) &&
		    curregs == q->used[i] && curslabs == q->slabs[i])
			stats++;
	}
	return stats * 1000 + set;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->layout != y->layout)
		return x->layout < y->layout ? -1 : 1;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Do two placements name the same current slab for every shard?  */
static bool same_slabcurs(const struct search *q, const struct layout *la,
			  uint64_t ba, const struct layout *lb, uint64_t bb)
{
	for (uint32_t s = 0; s < q->sc->nshards; s++) {
		uint64_t x = 0, y = 0;
		(void)word(q, ba + (uint64_t)s * la->stride + la->cur, &x);
		(void)word(q, bb + (uint64_t)s * lb->stride + lb->cur, &y);
		if (x != y)
			return false;
	}
	return true;
}

/* Every (layout, array start) that some word in the window implies.  */
static size_t candidates(const struct search *q, const struct layout *ls,
			 unsigned nl, struct candidate *out)
{
	size_t n = 0;
	for (size_t k = 0; k < q->nwords && n + 2 * nl <= MAX_CANDIDATES;
	     k++) {
		if (!q->readable[(k * 8) >> 12] || !q->win[k])
			continue;
		const struct slab_ref *r = ref_of(q, q->win[k]);
		if (!r || r->arena != q->arena || r->szind >= q->j->nbins)
			continue;
		for (unsigned l = 0; l < nl; l++) {
			/* As slabcur or as the heap root of the class's
			   first shard (other shards: rare, found through
			   the first).  */
			uint64_t rec = (uint64_t)q->sc->first[r->szind] *
				       ls[l].stride;
			for (unsigned root = 0; root < 2 && root <= k; root++) {
				uint64_t off = (k - root) * 8;
				if (off < rec + ls[l].cur)
					continue;
				out[n++] = (struct candidate){
					off - rec - ls[l].cur, (uint8_t)l };
			}
		}
	}
	qsort(out, n, sizeof *out, cand_cmp);
	return n;
}

/* Arena q->arena's current slabs into sc->cur; false when the bins were
   not found or are ambiguous.  */
static bool search_arena(struct search *q, struct candidate *cand)
{
	struct layout ls[16];
	unsigned nl = layouts(q->j, ls);
	size_t n = candidates(q, ls, nl, cand);
	long best = -1;
	size_t at = 0;
	bool tie = false;
	for (size_t i = 0; i < n; i++) {
		if (i && !cand_cmp(&cand[i], &cand[i - 1]))
			continue;
		long s = score(q, &ls[cand[i].layout], cand[i].base);
		if (s < 0 || s < best)
			continue;
		if (s == best) {
			if (!same_slabcurs(q, &ls[cand[at].layout],
					   cand[at].base,
					   &ls[cand[i].layout], cand[i].base))
				tie = true;
			continue;
		}
		best = s;
		at = i;
		tie = false;
	}
	if (best <= 0 || tie)
		return false;
	const struct layout *l = &ls[cand[at].layout];
	uint64_t *cur = q->sc->cur + (size_t)q->arena * q->sc->nshards;
	for (uint32_t s = 0; s < q->sc->nshards; s++)
		(void)word(q, cand[at].base + (uint64_t)s * l->stride + l->cur,
			   &cur[s]);
	return true;
}

/* Shards per class: bin_info_t.n_shards from 5.2 (opt.bin_shards; 1 by
   default), one before.  */
static bool shard_counts(struct je_state *j, struct je_slabcur *sc)
{
	uint32_t total = 0;
	for (unsigned i = 0; i < j->nbins; i++) {
		uint32_t n = 1;
		bool v52 = j->major > 5 || (j->major == 5 && j->minor >= 2);
		if (v52 && j->bin_infos &&
		    (!hw_read_u32(j->t, j->bin_infos + (uint64_t)i *
				  j->bin_info_stride + 20, &n) ||
		     !n || n > MAX_SHARDS))
			return false;
		sc->first[i] = total;
		total += n;
	}
	sc->first[j->nbins] = total;
	sc->nshards = total;
	return true;
}

/* The window from the arena: readable pages only.  */
static void read_window(struct je_state *j, struct search *q)
{
	size_t bytes = q->nwords * 8;
	for (size_t p = 0; p * 4096 < bytes; p++) {
		size_t len = bytes - p * 4096 < 4096 ? bytes - p * 4096 : 4096;
		q->readable[p] = hw_read(j->t, q->at + p * 4096,
					 (char *)q->win + p * 4096, len);
	}
}

static bool find(struct je_state *j, struct je_slabcur *sc)
{
	if (!j->arenas_array || !j->nbins || j->nbins > JE_MAX_SIZES) {
		sc->how = "not found: no arena array";
		return true;
	}
	if (!shard_counts(j, sc)) {
		sc->how = "not found: the bin infos' shard counts are not "
			  "readable";
		return true;
	}
	size_t nrefs = 0;
	for (size_t i = 0; i < j->next; i++)
		nrefs += j->ext[i].state == JE_ACTIVE && j->ext[i].slab;
	struct slab_ref *refs = malloc((nrefs ? nrefs : 1) * sizeof *refs);
	size_t nwords = (WINDOW_FIXED + (size_t)sc->nshards * RECORD_MAX) / 8;
	struct search q = {
		.j = j, .sc = sc, .refs = refs, .nrefs = nrefs,
		.win = malloc(nwords * 8),
		.readable = malloc(nwords * 8 / 4096 + 1),
		.nwords = nwords,
	};
	/* Per arena and class: regions in use, then slabs.  */
	size_t per_arena = 2 * (size_t)j->nbins;
	uint64_t *counts = calloc((size_t)j->narena_slots * per_arena + 1,
				  sizeof *counts);
	struct candidate *cand = malloc(MAX_CANDIDATES * sizeof *cand);
	sc->cur = calloc((size_t)j->narena_slots * sc->nshards + 1,
			 sizeof *sc->cur);
	sc->known = calloc(j->narena_slots + 1, 1);
	bool ok = refs && q.win && q.readable && counts && cand && sc->cur &&
		  sc->known;
	if (ok) {
		size_t k = 0;
		for (size_t i = 0; i < j->next; i++) {
			const struct je_extent *x = &j->ext[i];
			if (x->state != JE_ACTIVE || !x->slab)
				continue;
			refs[k++] = (struct slab_ref){ x->edata, x->arena,
						       x->szind };
			if (x->arena < j->narena_slots && x->szind < j->nbins) {
				uint64_t *c = counts + x->arena * per_arena;
				c[x->szind] += x->used;
				c[j->nbins + x->szind]++;
			}
		}
		qsort(refs, nrefs, sizeof *refs, ref_cmp);
		unsigned found = 0, tried = 0;
		for (uint32_t a = 0; a < j->narena_slots; a++) {
			if (!j->arena_addr[a])
				continue;
			q.used = counts + a * per_arena;
			q.slabs = q.used + j->nbins;
			/* An arena without slabs (5.3's huge arena) has
			   none current: nothing to search for.  */
			bool any = false;
			for (unsigned i = 0; i < j->nbins && !any; i++)
				any = q.slabs[i] != 0;
			q.arena = a;
			q.at = j->arena_addr[a];
			tried++;
			if (any)
				read_window(j, &q);
			if (!any || search_arena(&q, cand)) {
				sc->known[a] = 1;
				found++;
			}
		}
		sc->how = found == tried ? "the arenas' bins, placed by their "
					   "stats and slabs" :
			  found ? "the bins of some arenas (the others' "
				  "placement is ambiguous)" :
				  "not found: no arena's bins could be placed";
	}
	free(refs);
	free(q.win);
	free(q.readable);
	free(counts);
	free(cand);
	return ok;
}

const struct je_slabcur *je_slabcurs(struct je_state *j)
{
	if (j->slabcur)
		return j->slabcur;
	struct je_slabcur *sc = calloc(1, sizeof *sc);
	if (!sc)
		return NULL;
	if (!find(j, sc)) {
		je_slabcur_free(sc);
		return NULL;
	}
	j->slabcur = sc;
	return sc;
}

int je_is_slabcur(struct je_state *j, const struct je_extent *x)
{
	const struct je_slabcur *sc = je_slabcurs(j);
	if (!x->slab || x->state != JE_ACTIVE || x->szind >= j->nbins)
		return 0;
	if (!sc || !sc->known || x->arena >= j->narena_slots ||
	    !sc->known[x->arena])
		return -1;
	const uint64_t *cur = sc->cur + (size_t)x->arena * sc->nshards;
	for (uint32_t s = sc->first[x->szind]; s < sc->first[x->szind + 1];
	     s++)
		if (cur[s] == x->edata)
			return 1;
	return 0;
}

void je_slabcur_free(struct je_slabcur *sc)
{
	if (!sc)
		return;
	free(sc->cur);
	free(sc->known);
	free(sc);
}
