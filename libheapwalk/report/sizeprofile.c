/* sizeprofile.c - what `sizes` counts, kept as plain arrays for `diff`
 * (commands/diff/), which compares two snapshots' profiles.
 */
#include <stdlib.h>
#include <string.h>

#include "sizeprofile.h"
#include "totals.h"

void hw_size_profile_free(struct hw_size_profile *p)
{
	free(p->classes);
	free(p->arenas);
	memset(p, 0, sizeof *p);
}

enum hw_status hw_size_profile(struct hw_session *s, struct hw_size_profile *p)
{
	memset(p, 0, sizeof *p);
	struct hw_totals t;
	enum hw_status st = hw_totals_gather(s, &t, NULL);
	if (st != HW_OK)
		return st;
	hw_maps_acc_free(&t.maps);
	size_t n = 0, na = 0;
	struct hw_size_row *rows = hw_size_rows(s, &t.sizes, false, &n);
	free(t.sizes.slots);
	for (size_t i = 0; i < t.narenas; i++)
		na += t.arenas[i].used || t.arenas[i].free;
	p->classes = calloc(n ? n : 1, sizeof *p->classes);
	p->arenas = calloc(na ? na : 1, sizeof *p->arenas);
	if (!rows || !p->classes || !p->arenas) {
		free(rows);
		free(t.arenas);
		hw_size_profile_free(p);
		return hw_error(s, HW_BAD_TARGET, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		p->classes[i] = (struct hw_class_total){
			.min = rows[i].min, .max = rows[i].c.size,
			.used = rows[i].c.used, .used_bytes = rows[i].c.used_bytes,
			.free = rows[i].c.free, .free_bytes = rows[i].c.free_bytes };
	p->nclasses = n;
	for (size_t i = 0; i < t.narenas; i++) {
		const struct hw_arena_count *a = &t.arenas[i];
		if (!a->used && !a->free)
			continue;
		p->arenas[p->narenas++] = (struct hw_arena_total){
			.arena = (int32_t)i - 1, .addr = hw_arena_slot_addr(s, i),
			.used = a->used, .used_bytes = a->used_bytes,
			.free = a->free, .free_bytes = a->free_bytes };
	}
	p->used = t.used;
	p->used_bytes = t.used_bytes;
	p->free = t.free;
	p->free_bytes = t.free_bytes;
	free(rows);
	free(t.arenas);
	return HW_OK;
}
