/* chains.c - one free list followed from its head, entry by entry, for
 * `bins --list`: what the list holds in its own order, and how it ends.
 *
 * The counting walks (lists.c) take every list at once and keep only
 * totals and tags; a view of one list needs its order, so it is followed
 * again here, one list at a time.  Each step is checked as glibc would
 * check it before trusting it (alignment, the chunk's size against the
 * bin's, a bin's bk pointing back) and the walk stops at the first
 * failure, saying where; a cycle is caught by Brent's method (no set of
 * seen nodes), and no list is followed further than p->list_limit.
 */
#include <stdlib.h>

#include "ptmalloc.h"

static bool push(struct pm_chain *ch, uint64_t user)
{
	if (ch->n == ch->cap) {
		size_t cap = ch->cap ? 2 * ch->cap : 64;
		uint64_t *v = realloc(ch->entries, cap * sizeof *v);
		if (!v) {
			ch->end = PM_CHAIN_OOM;
			return false;
		}
		ch->entries = v;
		ch->cap = cap;
	}
	ch->entries[ch->n++] = user;
	return true;
}

/* Brent's cycle check: true when node was met before.  */
struct brent {
	uint64_t saved;
	size_t power, lam;
};

static bool seen(struct brent *b, uint64_t node)
{
	if (node == b->saved)
		return true;
	if (++b->lam == b->power) {
		b->saved = node;
		b->power *= 2;
		b->lam = 0;
	}
	return false;
}

static void stop(struct pm_chain *ch, enum pm_chain_end end, uint64_t at)
{
	ch->end = end;
	ch->bad = at;
}

/* A singly-linked list (a tcache bin, a fastbin): `first` as stored in
   the head (at `head`), each entry's link at entry + link_off, an entry
   `into` bytes into its chunk, every chunk of size lo..hi.  */
static void follow_single(struct pm_state *p, struct pm_chain *ch,
			  uint64_t head, unsigned into, unsigned link_off,
			  uint64_t lo, uint64_t hi)
{
	uint64_t stored;
	if (!hw_read_u64(p->t, head, &stored)) {
		stop(ch, PM_CHAIN_UNREADABLE, head);
		return;
	}
	/* The head itself is never safe-linked: only the entries' links.  */
	uint64_t e = stored;
	struct brent b = { .saved = 0, .power = 1 };
	while (e) {
		uint64_t size;
		if (e & 15) {
			stop(ch, PM_CHAIN_MISALIGNED, e);
			return;
		}
		if (!hw_read_u64(p->t, e - into + 8, &size)) {
			stop(ch, PM_CHAIN_UNREADABLE, e);
			return;
		}
		size &= ~(uint64_t)PM_SIZE_BITS;
		if (size < lo || size > hi) {
			stop(ch, PM_CHAIN_WRONG_SIZE, e);
			return;
		}
		if (seen(&b, e)) {
			stop(ch, PM_CHAIN_CYCLE, e);
			return;
		}
		if (ch->n > p->list_limit) {
			stop(ch, PM_CHAIN_LIMIT, e);
			return;
		}
		if (!push(ch, e - into + PM_HDR))
			return;
		if (!hw_read_u64(p->t, e + link_off, &stored)) {
			stop(ch, PM_CHAIN_UNREADABLE, e + link_off);
			return;
		}
		e = pm_reveal(p, e + link_off, stored);
	}
	ch->end = PM_CHAIN_END;
}

void pm_chain_tcache(struct pm_state *p, const struct pm_tcache *tc,
		     unsigned bin, struct pm_chain *ch)
{
	uint64_t lo, hi;
	pm_tcache_bin_sizes(bin, &lo, &hi);
	*ch = (struct pm_chain){ 0 };
	follow_single(p, ch, tc->addr + (uint64_t)p->l.tc_entries + 8 * bin,
		      PM_HDR, 0, lo, hi);
}

void pm_chain_fast(struct pm_state *p, size_t arena, unsigned bin,
		   struct pm_chain *ch)
{
	uint64_t size = (uint64_t)(bin + 2) * 16;
	*ch = (struct pm_chain){ 0 };
	follow_single(p, ch, p->arenas[arena].addr +
		      (uint64_t)p->l.ms_fastbins + 8 * bin, 0, PM_HDR, size,
		      size);
}

void pm_chain_bin(struct pm_state *p, size_t arena, unsigned bin,
		  struct pm_chain *ch)
{
	*ch = (struct pm_chain){ 0 };
	/* glibc's bin_at(): the bin's fd and bk are read as a chunk's,
	   from a header 16 bytes before them.  */
	uint64_t hdr = pm_bin_at(p, p->arenas[arena].addr, (int)bin);
	uint64_t c, prev = hdr;
	if (!hw_read_u64(p->t, hdr + 16, &c)) {
		stop(ch, PM_CHAIN_UNREADABLE, hdr + 16);
		return;
	}
	struct brent b = { .saved = 0, .power = 1 };
	while (c != hdr) {
		uint64_t w[4];
		if (c & 15) {
			stop(ch, PM_CHAIN_MISALIGNED, c);
			return;
		}
		if (!hw_read(p->t, c, w, sizeof w)) {
			stop(ch, PM_CHAIN_UNREADABLE, c);
			return;
		}
		uint64_t size = w[1] & ~(uint64_t)PM_SIZE_BITS;
		if (bin > 1 && pm_bin_index(size) != (int)bin) {
			stop(ch, PM_CHAIN_WRONG_SIZE, c);
			return;
		}
		if (w[3] != prev) {
			stop(ch, PM_CHAIN_BK, c);
			return;
		}
		if (seen(&b, c)) {
			stop(ch, PM_CHAIN_CYCLE, c);
			return;
		}
		if (ch->n > p->list_limit) {
			stop(ch, PM_CHAIN_LIMIT, c);
			return;
		}
		if (!push(ch, c + PM_HDR))
			return;
		prev = c;
		c = w[2];
	}
	ch->end = PM_CHAIN_END;
}

const char *pm_chain_end_name(enum pm_chain_end end)
{
	switch (end) {
	case PM_CHAIN_END: return "end";
	case PM_CHAIN_MISALIGNED: return "misaligned";
	case PM_CHAIN_UNREADABLE: return "unreadable";
	case PM_CHAIN_WRONG_SIZE: return "wrong-size";
	case PM_CHAIN_BK: return "bk-mismatch";
	case PM_CHAIN_CYCLE: return "cycle";
	case PM_CHAIN_LIMIT: return "limit";
	case PM_CHAIN_OOM: return "out-of-memory";
	}
	return "?";
}
