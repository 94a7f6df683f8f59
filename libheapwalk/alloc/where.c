/* where.c - the names of the places a block can be in (enum hw_where),
 * as every report and the JSON schema spell them.
 */
#include "alloc.h"

/* Each name once: the table and its size checks are made from this list.  */
#define WHERE_NAMES(X) \
	X(HW_WHERE_HEAP, "heap")           X(HW_WHERE_MMAPPED, "mmapped") \
	X(HW_WHERE_TCACHE, "tcache")       X(HW_WHERE_FASTBIN, "fastbin") \
	X(HW_WHERE_UNSORTED, "unsorted")   X(HW_WHERE_SMALLBIN, "smallbin") \
	X(HW_WHERE_LARGEBIN, "largebin")   X(HW_WHERE_TOP, "top") \
	X(HW_WHERE_UNBINNED, "unbinned")   X(HW_WHERE_SLAB, "slab") \
	X(HW_WHERE_LARGE, "large")         X(HW_WHERE_SLAB_FREE, "slab-free") \
	X(HW_WHERE_DIRTY, "dirty")         X(HW_WHERE_MUZZY, "muzzy") \
	X(HW_WHERE_RETAINED, "retained")   X(HW_WHERE_SPAN, "span") \
	X(HW_WHERE_CENTRAL, "central")     X(HW_WHERE_TRANSFER, "transfer") \
	X(HW_WHERE_PAGEHEAP, "pageheap")   X(HW_WHERE_RETURNED, "returned") \
	X(HW_WHERE_TCACHE_STRUCT, "tcache-struct") \
	X(HW_WHERE_GROUP, "group")         X(HW_WHERE_AVAIL, "avail") \
	X(HW_WHERE_FREED, "freed") \
	X(HW_WHERE_COUNT, "?")

#define NAME(w, name) [w] = name,
/* (A name must leave room for its NUL within the padding.)  */
#define FITS(w, name) _Static_assert(sizeof name <= HW_WHERE_NAME_ROOM, \
				     "place name too long: " name);
const char hw_where_names[HW_WHERE_COUNT + 1][HW_WHERE_NAME_ROOM] = {
	WHERE_NAMES(NAME)
};
WHERE_NAMES(FITS)

static unsigned where_index(enum hw_where w)
{
	return (unsigned)w < HW_WHERE_COUNT ? (unsigned)w : HW_WHERE_COUNT;
}

const char *hw_where_name(enum hw_where w)
{
	return hw_where_names[where_index(w)];
}
