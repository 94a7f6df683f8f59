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
 * (chunk -> fd) and bk as the link (bk -> chunk), each tagged with the
 * bin its size belongs in.  Here the bin heads add theirs.  In lists
 * that are whole and consistent every link is met once from each end, so
 * the two sums of an arena are equal.  A forward link without its back
 * link, a chunk of the wrong size for its neighbours (or its bin), a
 * chunk free by its header that no bin holds (its stale links no longer
 * match its old neighbours'), or a chunk in a bin that its header says
 * is in use (its neighbours' links to it are not matched), each leaves
 * the sums apart, but for a hash collision (one in 2^64) or links
 * forged to match each other both ways.  The unsorted bin mixes sizes,
 * so it is walked, and its chunks are not hashed.
 *
 * When the sums agree, the bins hold exactly the chunks hashed, and
 * their counts are the arena's summed_count/bytes.  When they do not,
 * the lists are walked after all, to say where they break.
 */
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

/* Add arena ar's bin heads' links to *fwd and *bwd; false when its bins
   cannot be read or a head is half empty.  */
static bool head_sums(struct pm_state *p, const struct pm_arena *ar,
		      uint64_t *fwd, uint64_t *bwd)
{
	/* Bin i's fd and bk follow bin i-1's: one read for all.  */
	uint64_t w[2 * (LAST_SORTED - FIRST_SORTED + 1)];
	if (!hw_read(p->t, pm_bin_at(p, ar->addr, FIRST_SORTED) + PM_HDR, w,
		     sizeof w))
		return false;
	for (int i = FIRST_SORTED; i <= LAST_SORTED; i++) {
		uint64_t head = pm_bin_at(p, ar->addr, i);
		uint64_t fd = w[2 * (i - FIRST_SORTED)];
		uint64_t bk = w[2 * (i - FIRST_SORTED) + 1];
		if (fd == head && bk == head)
			continue;         /* empty */
		if (fd == head || bk == head)
			return false;
		*fwd += pm_link_hash(head, fd, (uint64_t)i);
		*bwd += pm_link_hash(bk, head, (uint64_t)i);
	}
	return true;
}

/* Each arena's sums: its heaps' added up, in one pass over the heaps.  */
static void add_up_sums(struct pm_state *p)
{
	for (size_t a = 0; a < p->narenas; a++)
		memset(&p->arenas[a].sums, 0, sizeof p->arenas[a].sums);
	for (size_t i = 0; i < p->nheaps; i++) {
		const struct pm_sums *h = &p->heaps[i].sums;
		struct pm_sums *a = &p->arenas[p->heaps[i].arena].sums;
		a->link_fwd += h->link_fwd;
		a->link_bwd += h->link_bwd;
		a->binned += h->binned;
		a->binned_bytes += h->binned_bytes;
		a->link_broken |= h->link_broken;
		a->guess_nodes += h->guess_nodes;
		a->guess_links += h->guess_links;
		a->guess_tails += h->guess_tails;
		for (int k = 0; k < PM_NFASTBINS; k++)
			a->guessed[k] += h->guessed[k];
	}
}

bool pm_link_sums_settle(struct pm_state *p)
{
	bool agree = true;
	add_up_sums(p);
	for (size_t a = 0; a < p->narenas && agree; a++) {
		struct pm_arena *ar = &p->arenas[a];
		uint64_t fwd = ar->sums.link_fwd, bwd = ar->sums.link_bwd;
		if (ar->uninit)
			agree = ar->sums.binned == 0;
		else
			agree = !ar->sums.link_broken &&
				head_sums(p, ar, &fwd, &bwd) && fwd == bwd;
	}
	p->bins_summed = agree;
	if (agree)
		for (size_t a = 0; a < p->narenas; a++)
			atomic_fetch_add(&p->s->work.summed,
					 p->arenas[a].sums.binned);
	else
		atomic_fetch_add(&p->s->work.sums_failed, 1);
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
		h->sums.guess_nodes = h->sums.guess_links = 0;
		h->sums.guess_tails = 0;
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

/* Give each of heap h's guesses (tags that are PM_TAG_BINNED) to
   restate as the chunk in use it is after all.  */
static void unguess(struct pm_state *p, const struct pm_heap *h,
		    hw_chunk_fn *restate, void *cookie)
{
	uint64_t granules = (h->end - h->start) >> 4;
	for (uint64_t g = 0; g < granules; g++) {
		if (!h->tags[g >> 2]) {
			g |= 3;           /* the byte's other granules */
			continue;
		}
		if (((h->tags[g >> 2] >> ((g & 3) * 2)) & 3) != PM_TAG_BINNED)
			continue;
		uint64_t chunk = h->start + (g << 4), field;
		if (!hw_read_u64(p->t, chunk + 8, &field))
			continue;
		uint64_t sz = field & ~(uint64_t)PM_SIZE_BITS;
		struct hw_chunk c = {
			.addr = chunk + PM_HDR, .chunk = chunk,
			.chunk_size = sz, .arena = h->arena,
			.size = sz - p->l.usable_slack,
			.where = HW_WHERE_HEAP, .used = true,
		};
		restate(cookie, &c);
	}
}

bool pm_fast_guess_settle(struct pm_state *p, bool complete,
			  hw_chunk_fn *restate, void *cookie)
{
	bool agree = complete;
	add_up_sums(p);
	for (size_t a = 0; a < p->narenas && agree; a++) {
		const struct pm_arena *ar = &p->arenas[a];
		uint64_t links = ar->sums.guess_links;
		for (int i = 0; i < PM_NFASTBINS; i++)
			if (ar->fast_heads >> i & 1)
				links += pm_fast_hash(ar->fast_head[i],
						   (uint64_t)(i + 2) * 16);
		agree = ar->sums.guess_nodes == links &&
			ar->sums.guess_tails ==
			(uint64_t)__builtin_popcount(ar->fast_heads);
	}
	for (size_t i = 0; i < p->nheaps; i++) {
		struct pm_heap *h = &p->heaps[i];
		uint64_t guessed = 0;
		for (int k = 0; k < PM_NFASTBINS; k++)
			guessed += h->sums.guessed[k];
		if (!guessed)
			continue;
		if (!agree && restate)
			unguess(p, h, restate, cookie);
		settle_tags(h, agree);
	}
	if (agree) {
		for (size_t a = 0; a < p->narenas; a++) {
			struct pm_arena *ar = &p->arenas[a];
			for (int k = 0; k < PM_NFASTBINS; k++) {
				uint64_t n = ar->sums.guessed[k];
				ar->fast[k].count += n;
				ar->fast[k].bytes += n * (uint64_t)(k + 2) * 16;
				ar->fast_done[k] = true;
				atomic_fetch_add(&p->s->work.guessed, n);
			}
		}
		p->fast_lists_done = true;
	} else if (complete) {
		atomic_fetch_add(&p->s->work.sums_failed, 1);
	}
	return agree;
}

/* ---- the lists settled before a walk in address order ------------------ */

bool pm_walk_by_sums(struct pm_state *p, unsigned nparts, hw_chunk_fn *fn,
		     void *const cookies[], hw_chunk_fn *restate,
		     bool may_guess)
{
	pm_find_mmapped(p);
	bool guess = may_guess && pm_fast_guess_begin(p);
	if (guess)
		pm_walk_tcaches_unsorted(p);
	else
		pm_walk_lists_but_sorted(p);
	bool ok = pm_walk_chunks_parallel(p, nparts, fn, cookies,
					  PM_WALK_SUMS |
					  (guess ? PM_WALK_GUESS_FAST : 0));
	bool fast_ok = !guess || pm_fast_guess_settle(p, ok, ok ? restate
								 : NULL,
						      cookies[0]);
	if (!fast_ok) {
		/* The guesses are back in use: the lists say which chunks
		   to give as free again.  */
		pm_walk_fast_lists(p);
		if (ok && restate)
			ok = pm_retract_parked(p, restate, cookies[0]) &&
			     pm_retract_fast_orphans(p, restate, cookies[0]);
	}
	/* (A walk fn stopped settles nothing: its caller gives up.)  */
	if (ok && (!pm_link_sums_settle(p) || !fast_ok)) {
		pm_walk_lists(p);
		pm_walk_list_findings(p);
	}
	return ok;
}

void pm_settle_lists(struct pm_state *p)
{
	void *cookies[PM_MAX_PARTS] = { NULL };
	unsigned nparts = hw_threads(p->s);
	if (nparts > PM_MAX_PARTS)
		nparts = PM_MAX_PARTS;
	atomic_fetch_add(&p->s->work.walks, 1);
	/* Nothing is counted, so the guesses need no taking back.  */
	pm_walk_by_sums(p, nparts, pm_take_nothing, cookies, NULL, true);
}
