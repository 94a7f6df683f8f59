/* where.c - the places a block can be in (enum hw_where) and what each
 * means to the reports: its name, as every report and the JSON schema
 * spell it; its state class; the frag/map column it counts in when it
 * is a reserve; whether it is a slab's small object, a thread cache's or
 * mapped on its own; its colour and legend in `map`.  Shared code asks
 * this table (hw_place), never a place's or an allocator's name, so a
 * new place is one row here.
 */
#include "alloc.h"

/* One row per place, each fact once: the names' table, the places'
   table and their size checks are made from it.
     X(place, name, state, reserve column, flags, colour, legend)
   Colours: one hue per family (blues in use, greens and yellows free in
   lists, greys and pinks page-level reserves), told apart within it.  */
#define SLOT HW_PLACE_SLOT
#define CACHED HW_PLACE_CACHED
#define MMAPPED HW_PLACE_MMAPPED
#define PLACES(X) \
	X(HW_WHERE_HEAP, "heap", IN_USE, NONE, 0, \
	  "#4e79a7", "in use") \
	X(HW_WHERE_MMAPPED, "mmapped", IN_USE, NONE, MMAPPED, \
	  "#9c755f", "in use, mmapped on its own") \
	X(HW_WHERE_TCACHE, "tcache", FREE, NONE, SLOT | CACHED, \
	  "#f28e2b", "free, in a thread cache") \
	X(HW_WHERE_FASTBIN, "fastbin", FREE, NONE, 0, \
	  "#edc948", "free, in a fastbin") \
	X(HW_WHERE_UNSORTED, "unsorted", FREE, NONE, 0, \
	  "#8cd17d", "free, in the unsorted bin") \
	X(HW_WHERE_SMALLBIN, "smallbin", FREE, NONE, 0, \
	  "#59a14f", "free, in a small bin") \
	X(HW_WHERE_LARGEBIN, "largebin", FREE, NONE, 0, \
	  "#2e6b30", "free, in a large bin") \
	X(HW_WHERE_TOP, "top", RESERVE, TOP, 0, \
	  "#bab0ac", "free, at the heap's end") \
	X(HW_WHERE_UNBINNED, "unbinned", FREE, NONE, 0, \
	  "#e15759", "free by its header, in no list") \
	X(HW_WHERE_SLAB, "slab", IN_USE, NONE, SLOT, \
	  "#4e79a7", "in use, a slab region") \
	X(HW_WHERE_LARGE, "large", IN_USE, NONE, 0, \
	  "#1f3f66", "in use, a large extent") \
	X(HW_WHERE_SLAB_FREE, "slab-free", FREE, NONE, SLOT, \
	  "#a0cbe8", "free slab region") \
	X(HW_WHERE_DIRTY, "dirty", RESERVE, DIRTY, 0, \
	  "#ff9da7", "unused pages, not yet purged") \
	X(HW_WHERE_MUZZY, "muzzy", RESERVE, MUZZY, 0, \
	  "#d4a6c8", "unused pages, lazily purged") \
	X(HW_WHERE_RETAINED, "retained", RESERVE, RETAINED, 0, \
	  "#e4e4e4", "address space only, no memory") \
	X(HW_WHERE_SPAN, "span", IN_USE, NONE, SLOT, \
	  "#4e79a7", "in use, an object of a span") \
	X(HW_WHERE_CENTRAL, "central", FREE, NONE, SLOT, \
	  "#a0cbe8", "free, on its span's list") \
	X(HW_WHERE_TRANSFER, "transfer", FREE, NONE, SLOT, \
	  "#edc948", "free, in a transfer slot") \
	X(HW_WHERE_PAGEHEAP, "pageheap", RESERVE, DIRTY, 0, \
	  "#ff9da7", "free pages in the page heap") \
	X(HW_WHERE_RETURNED, "returned", RESERVE, RETAINED, 0, \
	  "#e4e4e4", "pages given back to the system") \
	X(HW_WHERE_TCACHE_STRUCT, "tcache-struct", IN_USE, NONE, 0, \
	  "#76b7b2", "in use by glibc: a tcache") \
	X(HW_WHERE_GROUP, "group", IN_USE, NONE, SLOT, \
	  "#4e79a7", "in use, a slot of a group") \
	X(HW_WHERE_AVAIL, "avail", FREE, NONE, SLOT, \
	  "#a0cbe8", "free slot, ready to hand out") \
	X(HW_WHERE_FREED, "freed", FREE, NONE, SLOT, \
	  "#edc948", "free slot, freed or never used") \
	X(HW_WHERE_MI_PAGE, "page", IN_USE, NONE, SLOT, \
	  "#4e79a7", "in use, a block of a page") \
	X(HW_WHERE_MI_HUGE, "huge", IN_USE, NONE, MMAPPED, \
	  "#9c755f", "in use, a huge segment's block") \
	X(HW_WHERE_MI_FREE, "page-free", FREE, NONE, SLOT, \
	  "#a0cbe8", "free, on its page's free list") \
	X(HW_WHERE_MI_LOCAL, "local-free", FREE, NONE, SLOT, \
	  "#edc948", "free, on its page's local list") \
	X(HW_WHERE_MI_THREAD, "thread-free", FREE, NONE, SLOT, \
	  "#f28e2b", "free, freed by another thread") \
	X(HW_WHERE_MI_RESERVED, "page-reserved", RESERVE, DIRTY, 0, \
	  "#ff9da7", "page memory not yet made blocks") \
	X(HW_WHERE_COUNT, "?", UNKNOWN, NONE, 0, \
	  "#000000", "state not known")

#define NAME(w, name, state, reserve, flags, colour, what) [w] = name,
/* (A name must leave room for its NUL within the padding.)  */
#define FITS(w, name, state, reserve, flags, colour, what) \
	_Static_assert(sizeof name <= HW_WHERE_NAME_ROOM, \
		       "place name too long: " name);
const char hw_where_names[HW_WHERE_COUNT + 1][HW_WHERE_NAME_ROOM] = {
	PLACES(NAME)
};
PLACES(FITS)

#define PLACE(w, name, state, reserve, flags, colour, what) \
	[w] = { hw_where_names[w], HW_PLACE_##state, HW_RESERVE_##reserve, \
		flags, colour, what },
const struct hw_place hw_places[HW_WHERE_COUNT + 1] = {
	PLACES(PLACE)
};

/* Every place has its row: a place added to the enum but not here would
   have no name, and count as in use in no column.  */
#define ONE(w, name, state, reserve, flags, colour, what) + 1
_Static_assert(0 PLACES(ONE) == HW_WHERE_COUNT + 1,
	       "every place (enum hw_where) needs its row in PLACES");

const char *hw_where_name(enum hw_where w)
{
	return hw_place((unsigned)w)->name;
}

bool hw_alloc_has_reserve(const struct hw_allocator_ops *a,
			  enum hw_reserve col)
{
	for (unsigned w = 0; w < HW_WHERE_COUNT; w++)
		if ((a->reserve_places & HW_PLACE_BIT(w)) &&
		    hw_places[w].reserve == col)
			return true;
	return false;
}
