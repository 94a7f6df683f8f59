/* files.c - the mapped files' writable data, where mimalloc's statics
 * (the main heap, 3.x's page map root) lie, found by what they hold.
 *
 * Walked region by region, not file by file: a core may name a hundred
 * thousand files (t0218), and looking each one's range up would cost
 * the square of that.  A file's writable data is each writable region
 * mapped from it, and the anonymous one right after it (its .bss past
 * the file's last page).
 */
#include <string.h>

#include "mimalloc.h"

/* The file whose writable data region i is, or -1.  */
static int32_t data_file(const struct hw_target *t, size_t i)
{
	const struct hw_region *r = &t->regions[i];
	if (!(r->prot & HW_PROT_W))
		return -1;
	if (r->file >= 0)
		return r->file;
	if (i > 0 && t->regions[i - 1].file >= 0 &&
	    t->regions[i - 1].end == r->start)
		return t->regions[i - 1].file;
	return -1;
}

const char *mi_file_holding(const struct hw_target *t, uint64_t a)
{
	const struct hw_region *r = hw_region_of(t, a);
	if (!r)
		return NULL;
	int32_t f = data_file(t, (size_t)(r - t->regions));
	return f >= 0 && (size_t)f < t->nfiles ? t->files[f].path : NULL;
}

bool mi_file_words(struct hw_target *t, uint64_t skip, mi_word_fn *fn,
		   void *cookie)
{
	for (size_t i = 0; i < t->nregions; i++) {
		int32_t f = data_file(t, i);
		if (f < 0 || (size_t)f >= t->nfiles)
			continue;
		uint64_t end = t->regions[i].end;
		uint64_t a = (t->regions[i].start + skip + 7) & ~7ull;
		while (a + 8 <= end) {
			const uint8_t *p;
			uint64_t run = hw_readable_run(t, a, &p), w;
			if (!run) {
				a = (hw_next_readable(t, a, end) + 7) & ~7ull;
				continue;
			}
			uint64_t stop = a + run < end ? a + run : end;
			for (uint64_t x = a; x + 8 <= stop; x += 8) {
				memcpy(&w, p + (x - a), 8);
				if (fn(cookie, x, w, t->files[f].path))
					return true;
			}
			a = (stop + 7) & ~7ull;
		}
	}
	return false;
}
