/* segments.c - the pieces of a non-contiguous main arena.
 *
 * When the program break cannot grow (a mapping right after the brk heap,
 * RLIMIT_DATA), glibc's sysmalloc maps memory instead (at least 1 MiB a
 * time), marks the main arena NONCONTIGUOUS and moves top there.  The old
 * top is ended by two fenceposts (chunks of size 2*SIZE_SZ, PREV_INUSE;
 * the first loses P when the shrunk old top is freed) that fill the piece
 * up to its end; whatever was left of the old top is freed into the bins.
 * The arena keeps no list of its pieces, so they are found from the
 * addresses it does give: sbrk_base starts the first, top lies in the
 * newest, and the bin and fastbin heads point into the others.  A piece
 * is accepted only when its chunk chain runs unbroken from its start to
 * its fenceposts or to top; glibc counts every piece in system_mem, so
 * the pieces found must add up to it, else the walk is partial.
 */
#include "ptmalloc.h"

/* Anonymous mmaps made one after another are often adjacent, and the
   kernel merges them into one mapping: pieces follow each other there.  */
#define SEG_MAX 4096
/* How far below a bin entry a piece's start is looked for.  */
#define SEG_SEARCH_PAGES 1024

/* Follow the chunk chain of the piece starting at chunk c, with nothing
   at or past limit.  Returns the end of the piece (after its second
   fencepost, or the end of top), or 0 if the chain breaks.  When `via` is
   not 0 the chain must have a chunk starting there.  */
static uint64_t piece_end(struct pm_state *p, const struct pm_arena *ar,
			  uint64_t c, uint64_t limit, uint64_t via)
{
	bool passed = via == 0;
	/* Each step moves at least 16 bytes: bounded by the mapping.  */
	while (c + PM_HDR <= limit) {
		uint64_t field;
		if (c == via)
			passed = true;
		if (c == ar->top) {
			uint64_t end = c + ar->top_size;
			return passed && end <= limit && end > c ? end : 0;
		}
		if (!hw_read_u64(p->t, c + 8, &field))
			return 0;
		uint64_t sz = field & ~(uint64_t)PM_SIZE_BITS;
		if (sz == PM_HDR) {
			uint64_t next;
			if (c + 2 * PM_HDR > limit ||
			    !hw_read_u64(p->t, c + PM_HDR + 8, &next) ||
			    next != (PM_HDR | PM_PREV_INUSE))
				return 0;
			/* An old top shrunk to 2*SIZE_SZ is not freed and
			   looks like one more fencepost before the two.  */
			if (c + 3 * PM_HDR <= limit &&
			    hw_read_u64(p->t, c + 2 * PM_HDR + 8, &next) &&
			    next == (PM_HDR | PM_PREV_INUSE))
				c += PM_HDR;
			return passed ? c + 2 * PM_HDR : 0;
		}
		if (sz < PM_MINSIZE || (sz & 15) || sz > limit - c ||
		    (field & (PM_IS_MMAPPED | PM_NON_MAIN_ARENA)))
			return 0;
		if (via && c > via)
			return 0;
		c += sz;
	}
	return 0;
}

/* Searches below an entry that found nothing; past this many the
   arena's addresses are taken as damaged and not searched around.  */
#define SEG_MAX_FAILED 8

struct seg_found {
	uint64_t total;       /* bytes of the pieces, as system_mem counts */
	unsigned n;
	unsigned failed;      /* searches that found no piece */
};

static bool covered(const struct pm_state *p, uint64_t addr)
{
	for (size_t i = 0; i < p->nheaps; i++)
		if (p->heaps[i].arena == 0 && addr >= p->heaps[i].start &&
		    addr < p->heaps[i].end)
			return true;
	return false;
}

/* Take the piece at raw address `raw` (its mapping start, or sbrk_base),
   then every piece that directly follows it in the same mapping.  Pieces
   already taken end the run.  */
static void take_run(struct pm_state *p, const struct pm_arena *ar,
		     struct seg_found *f, uint64_t raw, uint64_t limit,
		     uint64_t via)
{
	while (raw < limit && f->n < SEG_MAX && !covered(p, raw)) {
		uint64_t start = pm_first_chunk(raw);
		uint64_t end = piece_end(p, ar, start, limit, via);
		if (!end)
			return;
		if (!pm_add_heap(p, start, end, 0, 0))
			return;
		f->total += end - raw;
		f->n++;
		via = 0;
		/* Pieces are mmapped whole pages; a mapped chunk between
		   them (IS_MMAPPED) is pm_find_mmapped's, and ends the run
		   like anything else that is not a chunk chain.  */
		raw = end;
	}
}

/* The piece holding chunk `addr`, an address the arena gave (`what`).  */
static void find_piece(struct pm_state *p, const struct pm_arena *ar,
		       struct seg_found *f, uint64_t addr, const char *what)
{
	if (covered(p, addr))
		return;
	const struct hw_region *r = hw_region_of(p->t, addr);
	if (r && r->file < 0 && (r->prot & HW_PROT_W) &&
	    f->failed < SEG_MAX_FAILED) {
		/* From the mapping's start first (pieces stacked there by
		   the kernel's merging), then from each page below addr.  */
		take_run(p, ar, f, r->start, r->end, 0);
		uint64_t ps = p->pagesize ? p->pagesize : 4096;
		uint64_t a = addr & ~(ps - 1);
		for (unsigned i = 0; !covered(p, addr) && i < SEG_SEARCH_PAGES &&
		     a >= r->start; i++, a -= ps) {
			take_run(p, ar, f, a, r->end, addr);
			if (a < ps)
				break;
		}
		if (covered(p, addr))
			return;
		f->failed++;
	}
	hw_partial(p->s, addr, "main arena is non-contiguous: no piece of "
		   "it found around %s 0x%llx; its chunks are not walked",
		   what, (unsigned long long)addr);
}

void pm_main_segments(struct pm_state *p, struct pm_arena *ar)
{
	struct seg_found f = { 0, 0, 0 };
	size_t first = p->nheaps;
	const struct hw_region *r = hw_region_of(p->t, p->sbrk_base);
	if (r)
		take_run(p, ar, &f, p->sbrk_base, r->end, 0);
	if (p->nheaps == first)
		hw_partial(p->s, p->sbrk_base, "main arena is non-contiguous: "
			   "no chunk chain from sbrk_base 0x%llx",
			   (unsigned long long)p->sbrk_base);
	find_piece(p, ar, &f, ar->top, "top");
	for (int i = 0; p->l.ms_fastbins >= 0 && i < PM_NFASTBINS; i++) {
		uint64_t c;
		if (hw_read_u64(p->t, ar->addr + (uint64_t)p->l.ms_fastbins +
				8 * (uint64_t)i, &c) && c && !(c & 15))
			find_piece(p, ar, &f, c, "a fastbin entry");
	}
	for (int i = 1; i < PM_NBINS; i++) {
		uint64_t b = pm_bin_at(p, ar->addr, i), fd, bk;
		if (!hw_read_u64(p->t, b + 16, &fd) ||
		    !hw_read_u64(p->t, b + 24, &bk))
			continue;
		if (fd != b && fd && !(fd & 15))
			find_piece(p, ar, &f, fd, "a bin entry");
		if (bk != b && bk && bk != fd && !(bk & 15))
			find_piece(p, ar, &f, bk, "a bin entry");
	}
	if (f.total != ar->system_mem)
		hw_partial(p->s, ar->addr, "main arena is non-contiguous: its "
			   "%u pieces found hold 0x%llx bytes but system_mem "
			   "is 0x%llx; the rest was not found", f.n,
			   (unsigned long long)f.total,
			   (unsigned long long)ar->system_mem);
	else
		hw_note(p->s, ar->addr, "main arena is non-contiguous: %u "
			"pieces, all of system_mem", f.n);
}
