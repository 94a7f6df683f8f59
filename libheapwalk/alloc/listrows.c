/* listrows.c - one free list's entries in a report row (listrows.h).
 *
 * ptmalloc's chains, jemalloc's tcache stacks and tcmalloc's lists are
 * shown alike, in the walkers' own reports (alloc/, below the commands):
 * the order is the one the allocator hands the entries out in.
 */
#include <stdio.h>

#include "../emit/emit.h"
#include "listrows.h"

static const struct em_field LIST_COLS[] = { { .key = "addr" } };
static const struct em_table LIST_JSON = {
	.key = "list", .cols = LIST_COLS, .ncols = 1, .only = EM_JSON_ONLY };
static const struct em_field LIST_TEXT_COLS[] = { { .pre = "    " } };
static const struct em_table LIST_TEXT = {
	.cols = LIST_TEXT_COLS, .ncols = 1, .flags = EM_TB_NO_HEADER,
	.only = EM_TEXT_ONLY };

void hw_list_rows(struct hw_emitter *e, const uint64_t *entries, size_t n,
		  uint64_t bad, const char *says)
{
	em_table_begin(e, &LIST_JSON);
	for (size_t i = 0; i < n; i++) {
		const struct em_val v[] = { ev_addr(entries[i]) };
		em_row(e, v);
	}
	em_table_end(e);
	char line[HW_LIST_TEXT_MAX * 24 + 160];
	size_t at = 0;
	for (size_t i = 0; i < n && i < HW_LIST_TEXT_MAX; i++)
		at += (size_t)snprintf(line + at, sizeof line - at, "%s0x%llx",
				       i ? " -> " : "",
				       (unsigned long long)entries[i]);
	if (n > HW_LIST_TEXT_MAX)
		at += (size_t)snprintf(line + at, sizeof line - at,
				       " -> ... (%zu more)",
				       n - HW_LIST_TEXT_MAX);
	if (!says)
		snprintf(line + at, sizeof line - at, "%send", n ? " -> " : "");
	else
		snprintf(line + at, sizeof line - at, "%s0x%llx (%s)",
			 n ? " -> " : "", (unsigned long long)bad, says);
	em_table_begin(e, &LIST_TEXT);
	const struct em_val v[] = { ev_str(line) };
	em_row(e, v);
	em_table_end(e);
}
