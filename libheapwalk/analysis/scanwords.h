/* scanwords.h - the one loop that reads a range of the target word by
 * word and hands on the words that may point into the heap.
 *
 * The leaks scan (reach.c) and the refs / why queries (refs.c) must see
 * the same words, or `why` could miss a chain `leaks` followed.  It is
 * static inline, always inlined, and each caller passes a static
 * callback by name: the compiler then folds the callback into the loop,
 * so the leaks scan's inner loop stays a load, a mask, a compare and its
 * visit, as fast as when it was written out in reach.c.
 */
#ifndef HW_SCANWORDS_H
#define HW_SCANWORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../target/target.h"

/* Called with the address of the word (slot) and its masked value v;
   returning false stops the scan.  */
typedef bool hw_word_fn(void *cookie, uint64_t slot, uint64_t v);

/* fn(cookie, slot, v) for every aligned word of [start, end) the target
   holds whose value masked with mask lies in [lo, hi).  What the target
   lacks (a core cut short, a page it does not have) is skipped in one
   step (hw_next_readable) and, when unreadable is not NULL, its bytes
   added to *unreadable.  *hint (NULL at first) is the region of the last scan,
   the caller's to keep between scans of nearby ranges (blocks one after
   another), or NULL.  Returns false when fn stopped the scan.  */
__attribute__((always_inline))
static inline bool hw_scan_words(struct hw_target *t,
				 const struct hw_region **hint, uint64_t start,
				 uint64_t end, uint64_t mask, uint64_t lo,
				 uint64_t hi, hw_word_fn *fn, void *cookie,
				 uint64_t *unreadable)
{
	uint64_t span = hi - lo;
	const struct hw_region *own = NULL;
	if (!hint)
		hint = &own;
	start = (start + 7) & ~(uint64_t)7;
	while (start < end && end - start >= 8) {
		const uint8_t *p;
		uint64_t run = hw_readable_run_near(t, hint, start, &p);
		if (run < 8) {
			/* Up to where the target holds bytes again: the
			   rest of a core's region (a segment's p_memsz may
			   claim terabytes the file lacks), a page of a live
			   process's.  */
			uint64_t next = hw_next_readable(t, start, end);
			if (unreadable)
				*unreadable += next - start;
			start = next;
			continue;
		}
		if (run > end - start)
			run = end - start;
		size_t words = (size_t)(run / 8);
		for (size_t i = 0; i < words; i++) {
			uint64_t v;
			memcpy(&v, p + 8 * i, 8);
			v &= mask;
			if (v - lo < span &&
			    !fn(cookie, start + 8 * (uint64_t)i, v))
				return false;
		}
		start += (uint64_t)words * 8;
	}
	return true;
}

#endif
