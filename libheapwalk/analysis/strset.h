/* strset.h - a set of strings, each kept once, so that equal names are
 * equal pointers: C++ class names (vtype.c) and a diff's type names
 * (commands/diff/names.c) are compared and grouped by pointer.
 */
#ifndef HW_STRSET_H
#define HW_STRSET_H

#include <stddef.h>

/* Zeroed: empty.  Open addressing on the text; cap a power of two or 0. */
struct hw_strset {
	char **slot;
	size_t cap, n;
};

/* The set's copy of name, added as a copy when new; NULL when out of
   memory.  */
const char *hw_strset_add(struct hw_strset *set, const char *name);
/* The same for a name the caller malloc'd: the set keeps `owned` when it
   is new and frees it otherwise (and when out of memory: NULL).  */
const char *hw_strset_take(struct hw_strset *set, char *owned);
/* Frees every name and the table; the set is empty again.  */
void hw_strset_free(struct hw_strset *set);

#endif /* HW_STRSET_H */
