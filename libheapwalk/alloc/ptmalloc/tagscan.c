/* tagscan.c - the chunks of a heap that carry one tag, with their sizes.
 *
 * A heap's tag map (two bits per 16 bytes) is mostly zeros: it is read
 * eight bytes (32 granules) at a time.  The chunks it names are far
 * apart, each header a cache miss: a batch of them is prefetched before
 * any is read.  Used after a walk, to give the chunks of some lists in
 * another state (walk.c) or to settle the fastbin guesses bin by bin
 * (linksums.c).
 */
#include "ptmalloc.h"

/* Bit 0 of each two-bit tag in v that equals `tag`.  */
static uint64_t tags_equal(uint64_t v, enum pm_tag tag)
{
	const uint64_t low = 0x5555555555555555ull;
	uint64_t hi = v >> 1;
	switch (tag) {
	case PM_TAG_FAST:
		return v & ~hi & low;
	case PM_TAG_UNSORTED:
		return ~v & hi & low;
	case PM_TAG_BINNED:
		return v & hi & low;
	default:
		return ~v & ~hi & low;
	}
}

bool pm_each_tagged(struct pm_state *p, struct pm_heap *h, enum pm_tag tag,
		    pm_tagged_fn *fn, void *arg)
{
	enum { BATCH = 32 };
	uint64_t offs[BATCH];
	const uint8_t *base = NULL;
	uint64_t run = hw_readable_run(p->t, h->start, &base);
	uint64_t nbytes = (((h->end - h->start) >> 4) + 3) / 4;
	uint64_t b = 0, word = 0, v = 0;
	for (;;) {
		unsigned n = 0;
		while (n < BATCH) {
			if (!v) {
				if (b >= nbytes)
					break;
				uint64_t len = nbytes - b < 8 ? nbytes - b : 8;
				memcpy(&v, h->tags + b, len);
				if (len < 8)
					v &= (1ull << (8 * len)) - 1;
				v = tags_equal(v, tag);
				if (len < 8)
					v &= (1ull << (8 * len)) - 1;
				word = b;
				b += 8;
				continue;
			}
			unsigned k = (unsigned)__builtin_ctzll(v) / 2;
			v &= v - 1;
			uint64_t off = (word * 4 + k) << 4;
			if (off + PM_HDR <= run)
				__builtin_prefetch(base + off + 8);
			offs[n++] = off;
		}
		if (!n)
			return true;
		for (unsigned j = 0; j < n; j++) {
			uint64_t off = offs[j], chunk = h->start + off, field;
			if (off + PM_HDR <= run)
				memcpy(&field, base + off + 8, 8);
			else if (!hw_read_u64(p->t, chunk + 8, &field))
				continue;
			if (!fn(arg, h, chunk, field))
				return false;
		}
	}
}
