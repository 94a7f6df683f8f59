/* where.c - the names of the places a block can be in (enum hw_where),
 * as every report and the JSON schema spell them.
 */
#include "alloc.h"

static const char *const where_names[HW_WHERE_COUNT] = {
	[HW_WHERE_HEAP] = "heap",         [HW_WHERE_MMAPPED] = "mmapped",
	[HW_WHERE_TCACHE] = "tcache",     [HW_WHERE_FASTBIN] = "fastbin",
	[HW_WHERE_UNSORTED] = "unsorted", [HW_WHERE_SMALLBIN] = "smallbin",
	[HW_WHERE_LARGEBIN] = "largebin", [HW_WHERE_TOP] = "top",
	[HW_WHERE_UNBINNED] = "unbinned", [HW_WHERE_SLAB] = "slab",
	[HW_WHERE_LARGE] = "large",       [HW_WHERE_SLAB_FREE] = "slab-free",
	[HW_WHERE_DIRTY] = "dirty",       [HW_WHERE_MUZZY] = "muzzy",
	[HW_WHERE_RETAINED] = "retained", [HW_WHERE_SPAN] = "span",
	[HW_WHERE_CENTRAL] = "central",   [HW_WHERE_TRANSFER] = "transfer",
	[HW_WHERE_PAGEHEAP] = "pageheap", [HW_WHERE_RETURNED] = "returned",
};

const char *hw_where_name(enum hw_where w)
{
	return (unsigned)w < HW_WHERE_COUNT ? where_names[w] : "?";
}
