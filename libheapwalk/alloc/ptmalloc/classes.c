/* classes.c - ptmalloc's size classes: its bins.
 *
 * glibc serves a request of n bytes from a chunk of request2size(n) =
 * (n + 8 + 15) & ~15 bytes (at least MINSIZE), and files free chunks by
 * chunk size: one small bin per 16-byte chunk size below 0x400, then the
 * large bins of largebin_index (64-bit: 64-byte steps, then 512, 4096,
 * 32768 and 262144, then one bin for everything from 512 KiB on).  A class
 * here is one bin's chunk sizes [lo, hi], given as the request sizes that
 * land in it: lo - 23 .. hi - 8 (0 .. 24 for the first).  Every usable
 * size of a chunk in the bin lies in that range: usable = chunk size - 8
 * for heap chunks, - 16 for mmapped chunks and with memory tagging.
 *
 * Mmapped chunks are classed by the same bins (they are page multiples
 * from the mmap threshold, 128 KiB to 32 MiB, on): the bins are glibc's
 * notion of "the same size" whatever holds the chunk.  glibc's last bin
 * is unbounded; from there on the classes are powers of two instead
 * (requests 524265 .. 1 MiB, then up to 2 MiB, ...), so that a 1 MiB and
 * a 1 GiB allocation do not share a row.
 */
#include "ptmalloc.h"

/* request2size's slack: a request of n bytes takes chunk
   (n + PM_REQ_SLACK + 15) & ~15.  */
#define PM_REQ_SLACK 8
/* Chunk size where glibc's last large bin (126) starts: 512 KiB (its
   index formula gives 126 for sz >> 18 == 2 and for everything above).  */
#define PM_LAST_BIN ((uint64_t)2 << 18)

/* The largebin_index regimes: chunk sizes from `first` on with
   (size >> shift) <= limit share a bin per 1 << shift bytes.  */
struct bin_regime {
	uint64_t first;
	unsigned shift;
	uint64_t limit;
};

static const struct bin_regime regimes[] = {
	{ 0x400, 6, 48 },
	{ 49 << 6, 9, 20 },
	{ 21 << 9, 12, 10 },
	{ 11 << 12, 15, 4 },
	{ 5 << 15, 18, 2 },
};

/* [*lo, *hi]: the chunk sizes (multiples of 16) that share chunk size
   cs's bin within cs's regime, for MINSIZE <= cs < PM_LAST_BIN.  */
static void regime_bounds(uint64_t cs, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = cs;
	if (cs < 0x400)
		return;
	for (size_t i = 0; i < sizeof regimes / sizeof regimes[0]; i++) {
		const struct bin_regime *r = &regimes[i];
		if ((cs >> r->shift) > r->limit)
			continue;
		uint64_t start = (cs >> r->shift) << r->shift;
		*lo = start > r->first ? start : r->first;
		*hi = start + ((uint64_t)1 << r->shift) - 16;
		return;
	}
}

/* [*lo, *hi]: the chunk sizes of cs's bin.  A bin can straddle two
   regimes (bin 120 is 40960..45055 by 4096s and 45056..65535 by 32768s),
   so the neighbouring regimes' ranges are joined while largebin_index
   says they are the same bin.  */
static void bin_bounds(uint64_t cs, uint64_t *lo, uint64_t *hi)
{
	int bin = pm_bin_index(cs);
	uint64_t l, h;
	regime_bounds(cs, lo, hi);
	while (*lo > 0x400 && pm_bin_index(*lo - 16) == bin) {
		regime_bounds(*lo - 16, &l, &h);
		*lo = l;
	}
	while (*hi + 16 < PM_LAST_BIN && pm_bin_index(*hi + 16) == bin) {
		regime_bounds(*hi + 16, &l, &h);
		*hi = h;
	}
}

/* The power-of-two class (above glibc's last bin) of usable size u.  */
static uint64_t pow2_class(uint64_t u, uint64_t *min)
{
	uint64_t first = PM_LAST_BIN - PM_REQ_SLACK - 15;
	if (u > (uint64_t)1 << 63) {
		*min = ((uint64_t)1 << 63) + 1;
		return UINT64_MAX;
	}
	uint64_t hi = PM_LAST_BIN << 1;
	while (hi < u)
		hi <<= 1;
	*min = hi == PM_LAST_BIN << 1 ? first : (hi >> 1) + 1;
	return hi;
}

uint64_t pm_size_class(void *state, uint64_t usable, uint64_t *min)
{
	(void)state;
	/* The chunk a request of `usable` bytes would take: also the chunk
	   of every chunk whose usable size this is (heap, mmapped or
	   tagged: its usable size is 8 or 16 short of a multiple of 16).  */
	if (usable >= PM_LAST_BIN - PM_REQ_SLACK - 15)
		return pow2_class(usable, min);
	uint64_t cs = (usable + PM_REQ_SLACK + 15) & ~(uint64_t)15;
	if (cs < PM_MINSIZE)
		cs = PM_MINSIZE;
	uint64_t lo, hi;
	bin_bounds(cs, &lo, &hi);
	*min = lo == PM_MINSIZE ? 0 : lo - PM_REQ_SLACK - 15;
	return hi - PM_REQ_SLACK;
}
