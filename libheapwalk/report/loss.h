/* loss.h - loss records as `leaks` and `diff --leaks` show them alike
 * (report/loss.c).
 */
#ifndef HW_REPORT_LOSS_H
#define HW_REPORT_LOSS_H

#include <stddef.h>
#include <stdint.h>

#include "../alloc/alloc.h"
#include "../analysis/blockmap.h"

/* The kind a block is reported as: its mark (enum bm_mark), but a lost
   one (definite or indirect) that its allocator's walk says may be free
   (hw_chunk.maybe_free: damage cost a free list blocks like it) is
   HW_KIND_UNKNOWN: calling it lost could be false, and a false definite
   leak is the one answer leaks must never give.  */
#define HW_KIND_UNKNOWN 4
static inline unsigned hw_loss_kind(enum bm_mark m, const struct hw_chunk *c)
{
	return c->maybe_free && (m == BM_UNREACHED || m == BM_INDIRECT)
		       ? HW_KIND_UNKNOWN : (unsigned)m;
}

/* Their order: the most bytes first; then by kind (an enum bm_mark),
   size, and class, NULL last.  */
struct hw_loss_key {
	uint64_t size, count;
	unsigned kind;
	const char *type;
};
int hw_loss_order(const struct hw_loss_key *x, const struct hw_loss_key *y);

/* A block's first n bytes (at most 16) as "a5 a5 00 ..  |..x.|" in out
   (96 bytes hold 16).  */
void hw_first_bytes_text(const uint8_t *b, size_t n, char *out, size_t len);

/* The n bytes at b as 2n lowercase hex digits ("a5a500..."), then a NUL,
   in out (2n + 1 bytes): `leaks --json`'s "head".  */
void hw_hex_bytes(const uint8_t *b, size_t n, char *out);

#endif /* HW_REPORT_LOSS_H */
