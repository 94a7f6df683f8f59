/* linksums.c - the small and large bins checked without walking them.
 *
 * A big heap keeps millions of free chunks in its small and large bins,
 * and walking those lists is a chain of dependent reads, each on another
 * page: it cost more than the walk of the heaps itself.  But a walk that
 * counts (summary, sizes) needs only to know that the bins hold what the
 * heap's headers say is free, and the heap walk reads every free chunk's
 * fd and bk anyway (they share its header's cache line).
 *
 * So the chunk walk hashes each free chunk's two links: fd as the link
 * (chunk -> fd) and bk as the link (bk -> chunk), each added to the sums
 * of the bin the chunk's size belongs in.  Here the bin heads add
 * theirs.  A link is met once from each end, in the sums of the bins of
 * its two ends: in a bin whose chunks are all of its size (a small or
 * large bin whole and consistent) both ends are in that bin, and its
 * two sums are equal.  A forward link without its back link, a chunk of
 * the wrong size for its bin, a chunk free by its header that no bin
 * holds (its stale links no longer match its old neighbours'), or a
 * chunk in a bin that its header says is in use (its neighbours' links
 * to it are not matched), each leaves some bin's sums apart, but for a
 * hash collision (one in 2^64) or links forged to match each other both
 * ways.  Each bin is settled on its own: where its sums agree its chunks
 * are those hashed; where they do not, that bin alone is walked, to say
 * where it breaks.
 *
 * The unsorted bin mixes sizes, so its links join the sums of different
 * bins.  Before a walk that must say which bin holds each free chunk
 * (`chunks`) it is walked and its chunks are not hashed.  A walk for
 * counting needs only to know that every free chunk is in some bin: its
 * chunks are hashed too, its head's links added, and an arena's sums
 * added over all its bins must agree (pm_state.free_summed); when they
 * do not, that arena's lists are walked.
 */
#include <stdlib.h>
#include <string.h>

#include "ptmalloc.h"

/* The bins hashed: 2-63 small, 64-126 large (127 is never used).  */
#define FIRST_SORTED 2
#define LAST_SORTED (PM_NBINS - 2)

bool pm_link_sums_usable(const struct pm_state *p)
{
	if (p->lists_done || p->l.ms_bins < 0)
		return false;
	/* A lookup that walked some bin has tagged its chunks, which the
	   walk then leaves out of the sums.  */
	for (size_t a = 0; a < p->narenas; a++)
		for (int i = FIRST_SORTED; i <= LAST_SORTED; i++)
			if (p->arenas[a].bins_done[i])
				return false;
	return true;
}

/* Add arena ar's bin heads' links to fwd[] and bwd[], bin by bin (the
   unsorted bin's too when `unsorted`); false when its bins cannot be
   read.  A head half empty marks its bin in *broken.  */
static bool head_sums(struct pm_state *p, const struct pm_arena *ar,
		      bool unsorted, uint64_t fwd[], uint64_t bwd[],
		      uint64_t broken[2])
{
	/* Bin i's fd and bk follow bin i-1's: one read for all.  */
	uint64_t w[2 * LAST_SORTED];
	if (!hw_read(p->t, pm_bin_at(p, ar->addr, 1) + PM_HDR, w, sizeof w))
		return false;
	for (int i = unsorted ? 1 : FIRST_SORTED; i <= LAST_SORTED; i++) {
		uint64_t head = pm_bin_at(p, ar->addr, i);
		uint64_t fd = w[2 * (i - 1)];
		uint64_t bk = w[2 * (i - 1) + 1];
		if (fd == head && bk == head)
			continue;         /* empty */
		if (fd == head || bk == head)
			broken[i >> 6] |= 1ull << (i & 63);
		fwd[i] += pm_link_hash(head, fd);
		bwd[i] += pm_link_hash(bk, head);
	}
	return true;
}

void pm_sums_add(struct pm_sums *to, const struct pm_sums *from)
{
	for (int b = 0; b < PM_NBINS; b++) {
		to->link_fwd[b] += from->link_fwd[b];
		to->link_bwd[b] += from->link_bwd[b];
		to->bin_count[b] += from->bin_count[b];
		to->bin_bytes[b] += from->bin_bytes[b];
	}
	to->link_broken[0] |= from->link_broken[0];
	to->link_broken[1] |= from->link_broken[1];
	for (int k = 0; k < PM_NFASTBINS; k++) {
		to->guess_nodes[k] += from->guess_nodes[k];
		to->guess_links[k] += from->guess_links[k];
		to->guess_tails[k] += from->guess_tails[k];
		to->guessed[k] += from->guessed[k];
	}
}

/* Each arena's sums: its heaps' added up, in one pass over the heaps,
   and the chunks and bytes of all its bins (binned: an arena's only).  */
static void add_up_sums(struct pm_state *p)
{
	for (size_t a = 0; a < p->narenas; a++)
		memset(&p->arenas[a].sums, 0, sizeof p->arenas[a].sums);
	for (size_t i = 0; i < p->nheaps; i++)
		pm_sums_add(&p->arenas[p->heaps[i].arena].sums,
			    &p->heaps[i].sums);
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_sums *s = &p->arenas[a].sums;
		for (int b = 1; b <= LAST_SORTED; b++) {
			s->binned += s->bin_count[b];
			s->binned_bytes += s->bin_bytes[b];
		}
	}
}

/* Which of arena ar's small and large bins the sums fail in (bit b:
   bin b); every bin when its heads cannot be read.  */
static void failed_bins(struct pm_state *p, const struct pm_arena *ar,
			uint64_t failed[2])
{
	uint64_t fwd[PM_NBINS], bwd[PM_NBINS];
	memcpy(fwd, ar->sums.link_fwd, sizeof fwd);
	memcpy(bwd, ar->sums.link_bwd, sizeof bwd);
	failed[0] = ar->sums.link_broken[0];
	failed[1] = ar->sums.link_broken[1];
	if (ar->uninit) {
		/* No bins at all: any free chunk is in none.  */
		for (int b = FIRST_SORTED; b <= LAST_SORTED; b++)
			if (ar->sums.bin_count[b])
				failed[b >> 6] |= 1ull << (b & 63);
		return;
	}
	if (!head_sums(p, ar, false, fwd, bwd, failed)) {
		failed[0] = failed[1] = ~0ull;
		return;
	}
	for (int b = FIRST_SORTED; b <= LAST_SORTED; b++)
		if (fwd[b] != bwd[b])
			failed[b >> 6] |= 1ull << (b & 63);
}

/* Some bins' sums failed: the others are settled by their sums, bin by
   bin (counted, marked walked and summed), the failed ones walked, and
   the findings that need the lists looked for in the heaps of the
   arenas concerned.  Every list is then settled.  */
static void settle_bins_apart(struct pm_state *p, uint64_t (*failed)[2])
{
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_arena *ar = &p->arenas[a];
		unsigned nfailed = 0;
		for (int b = FIRST_SORTED; b <= LAST_SORTED; b++) {
			if (failed[a][b >> 6] >> (b & 63) & 1) {
				nfailed++;
				continue;
			}
			ar->bins[b].count += ar->sums.bin_count[b];
			ar->bins[b].bytes += ar->sums.bin_bytes[b];
			ar->bins_done[b] = true;
			ar->bins_summed[b >> 6] |= 1ull << (b & 63);
			atomic_fetch_add(&p->s->work.summed,
					 ar->sums.bin_count[b]);
		}
		if (!nfailed)
			continue;
		ar->lists_findings = true;
		for (int b = FIRST_SORTED; b <= LAST_SORTED; b++)
			if (failed[a][b >> 6] >> (b & 63) & 1)
				hw_work_fallback(p->s, "arena %zu %s bin %d "
						 "(%llu chunks' links)", a,
						 b < 64 ? "small" : "large", b,
						 (unsigned long long)
						 ar->sums.bin_count[b]);
	}
	pm_walk_bins_left(p);
	/* Every list is settled, walked or summed (pm_walk_arena_findings
	   reports what the walked ones say).  */
	p->lists_done = true;
	p->lists_reported = true;
}

/* Do arena ar's sums agree over all its bins, the unsorted one with
   them (a walk for counting: its unsorted bin was not walked)?  */
static bool free_sums_agree(struct pm_state *p, const struct pm_arena *ar)
{
	if (ar->sums.link_broken[0] || ar->sums.link_broken[1])
		return false;
	if (ar->uninit)
		return ar->sums.binned == 0;
	if (ar->bins_done[1])
		return false;     /* (never: the unsorted bins go together) */
	uint64_t fwd[PM_NBINS], bwd[PM_NBINS], broken[2] = { 0, 0 };
	memcpy(fwd, ar->sums.link_fwd, sizeof fwd);
	memcpy(bwd, ar->sums.link_bwd, sizeof bwd);
	if (!head_sums(p, ar, true, fwd, bwd, broken) || broken[0] ||
	    broken[1])
		return false;
	uint64_t f = 0, b = 0;
	for (int i = 1; i <= LAST_SORTED; i++) {
		f += fwd[i];
		b += bwd[i];
	}
	return f == b;
}

/* The settling of a walk for counting, arena by arena: where the sums
   over all bins agree, the arena's free chunks in bins are those hashed
   (free_summed); the other arenas' lists are walked (only theirs), and
   their heaps for the findings.  */
static bool settle_free(struct pm_state *p)
{
	bool agree = true;
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_arena *ar = &p->arenas[a];
		ar->free_summed = free_sums_agree(p, ar);
		if (ar->free_summed) {
			atomic_fetch_add(&p->s->work.summed, ar->sums.binned);
			continue;
		}
		agree = false;
		ar->lists_findings = true;
		hw_work_fallback(p->s, "arena %zu bins (%llu chunks' links)", a,
				 (unsigned long long)ar->sums.binned);
	}
	p->free_summed = true;
	if (agree)
		return true;
	for (size_t a = 0; a < p->narenas; a++)
		p->arenas[a].lists_skip = p->arenas[a].free_summed;
	pm_walk_bins_left(p);
	for (size_t a = 0; a < p->narenas; a++)
		p->arenas[a].lists_skip = false;
	return false;
}

bool pm_link_sums_settle(struct pm_state *p)
{
	add_up_sums(p);
	p->free_summed = false;
	bool counting = false;
	for (size_t a = 0; a < p->narenas; a++) {
		p->arenas[a].free_summed = false;
		counting |= !p->arenas[a].uninit && !p->arenas[a].bins_done[1];
	}
	if (counting) {
		bool agree = settle_free(p);
		pm_walk_arena_findings(p);
		return agree;
	}
	uint64_t (*failed)[2] = calloc(p->narenas ? p->narenas : 1,
				       sizeof *failed);
	if (!failed) {
		hw_oom(p->s);
		return false;
	}
	bool agree = true;
	for (size_t a = 0; a < p->narenas; a++) {
		failed_bins(p, &p->arenas[a], failed[a]);
		agree &= !failed[a][0] && !failed[a][1];
	}
	if (agree) {
		p->bins_summed = true;
		for (size_t a = 0; a < p->narenas; a++)
			atomic_fetch_add(&p->s->work.summed,
					 p->arenas[a].sums.binned);
	} else {
		settle_bins_apart(p, failed);
	}
	free(failed);
	pm_walk_arena_findings(p);
	return agree;
}

/* ---- fastbins ---------------------------------------------------------- */

/* The fastbins are singly linked and keep no count, and their entries
 * look in use in their neighbours' headers.  But from glibc 2.32 each fd
 * is safe-linked: stored XORed with its own address >> 12, so a word of
 * program data seldom decodes to 0 or to a chunk of the arena.  So the
 * walk guesses: an in-use chunk of a non-empty fastbin's size whose fd
 * decodes to 0 (a list's end) or into its arena is tagged, and hashed
 * twice: its address as a node, its fd as a link (each with its size).
 * If the guesses are exactly the fastbins' entries, every node is linked
 * to once, from a head or an entry of its size, and there are as many
 * ends as non-empty fastbins: the sums and the count agree.  A stale fd
 * left in a chunk malloc took from a fastbin, an entry the list no
 * longer reaches, a wrong size or a link out of the arena each sets them
 * apart, and then the guesses are dropped and the lists walked.  (Only a
 * cycle of guesses that no head reaches could pass, as a cycle of bins
 * could: neither is a state glibc leaves.)
 */

bool pm_fast_guess_begin(struct pm_state *p)
{
	if (!p->l.safe_linking || p->l.ms_fastbins < 0 ||
	    p->fast_lists_done || !pm_link_sums_usable(p))
		return false;
	bool any = false;
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_arena *ar = &p->arenas[a];
		ar->fast_heads = 0;
		ar->fast_guess_failed = 0;
		ar->span_lo = UINT64_MAX;
		ar->span_hi = 0;
		for (int i = 0; i < PM_NFASTBINS; i++)
			if (ar->fast_done[i])
				return false;
		if (ar->uninit)
			continue;
		if (!hw_read(p->t, ar->addr + (uint64_t)p->l.ms_fastbins,
			     ar->fast_head, sizeof ar->fast_head))
			return false;
		for (int i = 0; i < PM_NFASTBINS; i++)
			if (ar->fast_head[i])
				ar->fast_heads |= (uint16_t)(1u << i);
		any |= ar->fast_heads != 0;
	}
	if (!any)
		return false;         /* nothing to guess: walking is free */
	for (size_t i = 0; i < p->nheaps; i++) {
		struct pm_heap *h = &p->heaps[i];
		struct pm_arena *ar = &p->arenas[h->arena];
		if (h->start < ar->span_lo)
			ar->span_lo = h->start;
		if (h->end > ar->span_hi)
			ar->span_hi = h->end;
		memset(h->sums.guess_nodes, 0, sizeof h->sums.guess_nodes);
		memset(h->sums.guess_links, 0, sizeof h->sums.guess_links);
		memset(h->sums.guess_tails, 0, sizeof h->sums.guess_tails);
		memset(h->sums.guessed, 0, sizeof h->sums.guessed);
	}
	return true;
}

/* Turn heap h's guess tags (PM_TAG_BINNED: no bin was walked) into
   fastbin tags, or clear them.  */
static void settle_tags(struct pm_heap *h, bool keep)
{
	const uint64_t low = 0x5555555555555555ull;
	size_t n = h->tags_len;
	for (size_t b = 0; b + 8 <= n; b += 8) {
		uint64_t v;
		memcpy(&v, h->tags + b, 8);
		uint64_t both = v & (v >> 1) & low;    /* tags that are 3 */
		if (!both)
			continue;
		v = keep ? v ^ (both << 1) : v & ~(both | both << 1);
		memcpy(h->tags + b, &v, 8);
	}
	for (size_t b = n & ~(size_t)7; b < n; b++) {
		uint8_t v = h->tags[b];
		uint8_t both = v & (v >> 1) & 0x55;
		h->tags[b] = keep ? v ^ (uint8_t)(both << 1)
				  : v & (uint8_t)~(both | both << 1);
	}
}

struct guess_settle {
	struct pm_state *p;
	uint16_t failed;
	hw_chunk_fn *restate;
	void *cookie;
};

static bool settle_guess(void *arg, struct pm_heap *h, uint64_t chunk,
			 uint64_t field)
{
	const struct guess_settle *g = arg;
	uint64_t gr = (chunk - h->start) >> 4;
	uint8_t *t = &h->tags[gr >> 2];
	unsigned shift = (unsigned)(gr & 3) * 2;
	uint64_t k = (field & ~(uint64_t)PM_SIZE_BITS) / 16 - 2;
	if (k < PM_NFASTBINS && !(g->failed >> k & 1)) {
		*t ^= (uint8_t)(2u << shift);     /* 3 -> PM_TAG_FAST */
		return true;
	}
	*t &= (uint8_t)~(3u << shift);
	if (!g->restate || k >= PM_NFASTBINS)
		return true;
	uint64_t sz = (k + 2) * 16;
	struct hw_chunk c = {
		.addr = chunk + PM_HDR, .chunk = chunk, .chunk_size = sz,
		.arena = h->arena, .size = sz - g->p->l.usable_slack,
		.where = HW_WHERE_HEAP, .used = true,
	};
	return g->restate(g->cookie, &c);
}

/* Settle heap h's guesses fastbin by fastbin: those of the fastbins in
   `failed` are cleared and each given to restate (when not NULL) as the
   chunk in use it is after all; the others become fastbin tags.  Each
   guess's size is read again: only the heaps of an arena where some
   guesses failed pay for it.  False if restate stopped.  */
static bool settle_tags_by_bin(struct pm_state *p, struct pm_heap *h,
			       uint16_t failed, hw_chunk_fn *restate,
			       void *cookie)
{
	struct guess_settle g = { p, failed, restate, cookie };
	return pm_each_tagged(p, h, PM_TAG_BINNED, settle_guess, &g);
}

/* Which of arena ar's fastbins the guesses do not add up in.  */
static uint16_t failed_fastbins(const struct pm_arena *ar)
{
	uint16_t failed = 0;
	for (int i = 0; i < PM_NFASTBINS; i++) {
		bool head = ar->fast_heads >> i & 1;
		uint64_t links = ar->sums.guess_links[i];
		if (head)
			links += pm_fast_hash(ar->fast_head[i],
					      (uint64_t)(i + 2) * 16);
		if (ar->sums.guess_nodes[i] != links ||
		    ar->sums.guess_tails[i] != (head ? 1u : 0u))
			failed |= (uint16_t)(1u << i);
	}
	return failed;
}

enum pm_guess_end pm_fast_guess_settle(struct pm_state *p, bool complete,
				       hw_chunk_fn *restate, void *cookie)
{
	add_up_sums(p);
	bool any_failed = false;
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_arena *ar = &p->arenas[a];
		ar->fast_guess_failed = complete ? failed_fastbins(ar)
						 : ar->fast_heads;
		any_failed |= ar->fast_guess_failed != 0;
	}
	bool stopped = false;
	for (size_t i = 0; i < p->nheaps && !stopped; i++) {
		struct pm_heap *h = &p->heaps[i];
		uint64_t guessed = 0;
		for (int k = 0; k < PM_NFASTBINS; k++)
			guessed += h->sums.guessed[k];
		if (!guessed)
			continue;
		uint16_t failed = p->arenas[h->arena].fast_guess_failed;
		if (!failed)
			settle_tags(h, true);
		else if (!complete)
			settle_tags(h, false);   /* nothing to take back */
		else
			stopped = !settle_tags_by_bin(p, h, failed, restate,
						      cookie);
	}
	/* The fastbins proven: their entries are the guesses.  */
	for (size_t a = 0; a < p->narenas; a++) {
		struct pm_arena *ar = &p->arenas[a];
		for (int k = 0; k < PM_NFASTBINS; k++) {
			if (ar->fast_guess_failed >> k & 1)
				continue;
			uint64_t n = ar->sums.guessed[k];
			ar->fast[k].count += n;
			ar->fast[k].bytes += n * (uint64_t)(k + 2) * 16;
			ar->fast_done[k] = true;
			atomic_fetch_add(&p->s->work.guessed, n);
		}
	}
	if (!complete) {
		for (size_t a = 0; a < p->narenas; a++)
			p->arenas[a].fast_guess_failed = 0;
		return PM_GUESS_DROPPED;
	}
	if (stopped)
		return PM_GUESS_STOPPED;
	if (!any_failed) {
		p->fast_lists_done = true;
		return PM_GUESS_SETTLED;
	}
	/* The others are walked, each its list alone, in lock step and in
	   threads (lists.c); the entries their lists hold go out free.  */
	for (size_t a = 0; a < p->narenas; a++) {
		const struct pm_arena *ar = &p->arenas[a];
		for (int k = 0; k < PM_NFASTBINS; k++)
			if (ar->fast_guess_failed >> k & 1)
				hw_work_fallback(p->s, "arena %zu fastbin 0x%x "
						 "(%llu guesses, %llu list "
						 "ends)", a,
						 (unsigned)(k + 2) * 16,
						 (unsigned long long)
						 ar->sums.guessed[k],
						 (unsigned long long)
						 ar->sums.guess_tails[k]);
	}
	pm_walk_fastbins_left(p);
	if (restate && !(pm_retract_failed_guesses(p, restate, cookie) &&
			 pm_retract_fast_orphans(p, restate, cookie)))
		return PM_GUESS_STOPPED;
	return PM_GUESS_SETTLED;
}

/* ---- the lists settled before a walk in address order ------------------ */

bool pm_walk_by_sums(struct pm_state *p, unsigned nparts, hw_chunk_fn *fn,
		     void *const cookies[], hw_chunk_fn *restate,
		     bool may_guess, bool classify)
{
	pm_find_mmapped(p);
	bool guess = may_guess && pm_fast_guess_begin(p);
	if (classify && guess)
		pm_walk_tcaches_unsorted(p);
	else if (classify)
		pm_walk_lists_but_sorted(p);
	else if (guess)
		pm_walk_tcaches(p);
	else {
		pm_walk_fast_lists(p);
		p->tcaches_done = true;
	}
	bool ok = pm_walk_chunks_parallel(p, nparts, fn, cookies,
					  PM_WALK_SUMS |
					  (guess ? PM_WALK_GUESS_FAST : 0));
	enum pm_guess_end end = !guess ? PM_GUESS_SETTLED
			      : pm_fast_guess_settle(p, ok, ok ? restate : NULL,
						     cookies[0]);
	if (end == PM_GUESS_STOPPED)
		return false;
	/* (A walk fn stopped settles nothing: its caller gives up.  Its
	   guesses were forgotten (DROPPED, the only end of a walk that
	   stopped): the fast lists are walked for any later walk.)  */
	if (!ok) {
		pm_walk_fast_lists(p);
		return false;
	}
	/* A fastbin whose walk broke has orphans, which only a walk that
	   knew it before could name: its arena's heaps are walked again
	   for them, as those of an arena where some bin's sums fail are
	   (pm_link_sums_settle).  */
	for (size_t a = 0; a < p->narenas; a++)
		if (p->arenas[a].fast_broken)
			p->arenas[a].lists_findings = true;
	pm_link_sums_settle(p);
	return true;
}

void pm_settle_lists(struct pm_state *p)
{
	void *cookies[PM_MAX_PARTS] = { NULL };
	unsigned nparts = hw_threads(p->s);
	if (nparts > PM_MAX_PARTS)
		nparts = PM_MAX_PARTS;
	atomic_fetch_add(&p->s->work.walks, 1);
	/* Nothing is counted, so the guesses need no taking back.  */
	pm_walk_by_sums(p, nparts, pm_take_nothing, cookies, NULL, true, true);
}
