/* listrows.h - one free list's entries, as `bins --list` shows them
 * (alloc/listrows.c): every entry in JSON, the first ones on a line in
 * text, and how the list ends.
 */
#ifndef HW_ALLOC_LISTROWS_H
#define HW_ALLOC_LISTROWS_H

#include <stddef.h>
#include <stdint.h>

struct hw_emitter;

/* Entries shown in text; JSON has them all.  */
#define HW_LIST_TEXT_MAX 12

/* Inside a row the caller opened (em_row_open): JSON an array "list" of
   {"addr"}, text one line "    A -> B -> ... -> end".  A list that
   broke ends instead at `bad`, which `says` explains (says NULL: the
   list ended well).  */
void hw_list_rows(struct hw_emitter *e, const uint64_t *entries, size_t n,
		  uint64_t bad, const char *says);

#endif /* HW_ALLOC_LISTROWS_H */
