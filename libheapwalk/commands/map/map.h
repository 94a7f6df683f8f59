/* map.h - the heap map (`map -o FILE.svg`): map.c walks the heap and lays
 * the picture out, svg.c writes it.
 *
 * The picture is a strip per contiguous run of blocks (a ptmalloc heap, a
 * run of mmapped chunks that touch, a run of jemalloc extents), grouped
 * by arena and in address order within it.  A strip is cut into rows of
 * MAP_WIDTH pixels, like a hex dump, at a scale of its own: a power of
 * two bytes per pixel, chosen so that the whole picture stays within a
 * budget of rows however large the heap.  Each pixel takes the colour of
 * the state that holds most of its bytes, paler when that state holds
 * less than 7/8 of them (a heap scattered with small free blocks shows
 * as such at any scale), and adjacent pixels that look the same are one
 * rectangle, so the SVG has at most MAP_WIDTH rectangles a row whatever
 * the number of blocks.  One scale for the whole picture (a strip's
 * height is in proportion to its bytes), but for jemalloc's retained
 * address space, which has no memory behind it: each run of it is one
 * row.  Each row starts with its address; mmapped chunks that touch are
 * told apart by a thin line.  Every rectangle carries the
 * bytes of each state it covers (data-state / data-bytes, and data-mix
 * when it covers more than one), so the figures add up exactly.
 */
#ifndef HW_MAP_H
#define HW_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "../../alloc/alloc.h"

struct hw_emitter;

#define MAP_WIDTH 1024        /* pixels in a row */
#define MAP_MARGIN 8          /* left and right of the picture */
#define MAP_GUTTER 100        /* left of the rows: each row's address */
#define MAP_ROW_PITCH 12      /* a row's height, gap included */
#define MAP_MIN_SHIFT 4       /* finest scale: 16 bytes a pixel */
/* The states a pixel counts: the walkers' `where`, and one more for a
   block whose state the walk did not say.  */
#define MAP_UNKNOWN HW_WHERE_COUNT
#define MAP_NSTATES (HW_WHERE_COUNT + 1)
#define MAP_SHADES 3          /* a pixel's state holds >= 7/8, 5/8, less */

/* One contiguous run of blocks, as the walk delivered it.  */
struct map_strip {
	uint64_t start, end;      /* [start, end): block headers included */
	uint64_t nchunks;
	int32_t arena;
	bool mmapped;             /* ptmalloc chunks mmapped on their own */
	bool collapsed;           /* address space with nothing behind it
				     (a place in the retained column:
				     jemalloc's retained, tcmalloc's
				     returned): one row whatever its size,
				     not to scale */
	uint8_t shift;            /* log2 of its bytes per pixel */
	uint32_t rows;
	uint32_t y;               /* its first row's top, in the picture */
};

/* The state name a rectangle's data-state and class give.  */
const char *map_state_name(unsigned state);

/* ---- svg.c: the writer ---------------------------------------------- */

/* The rows being drawn: one row's pixels at a time (rows are finished in
   address order, as the walk delivers a strip's blocks).  */
struct map_svg {
	struct hw_emitter *out;
	uint64_t (*px)[MAP_NSTATES];   /* [MAP_WIDTH]: bytes per state */
	uint32_t *starts;              /* [MAP_WIDTH]: blocks starting there */
	uint32_t xmin, xmax;           /* pixels touched in the row (none:
					  xmin MAP_WIDTH, xmax 0) */
	uint64_t rects;                /* rectangles written */
	const char *noun;              /* what a block is called: "chunk"
					  (ptmalloc), "block" (jemalloc's
					  regions and extents) */
};

/* What the picture's head says (strings are the caller's, NUL-ended;
   lines may be NULL).  */
struct map_head {
	const char *target, *allocator;
	const char *lines[5];          /* figures, scale, shades, partial */
	const uint64_t *state_bytes;   /* [MAP_NSTATES]: the legend's */
	uint32_t height;               /* of the whole picture */
};

/* Height of the head (title, lines, legend) for that many states.  */
uint32_t map_svg_head_height(unsigned nstates);
/* true on success; false when out of memory.  */
bool map_svg_init(struct map_svg *w, struct hw_emitter *out,
		  const char *noun);
void map_svg_release(struct map_svg *w);
void map_svg_begin(struct map_svg *w, const struct map_head *h);
/* Two lines of text above a group of strips (an arena's heading), the
   first's baseline at y; one when detail is "".  */
void map_svg_heading(struct map_svg *w, uint32_t y, const char *title,
		     const char *detail);
/* A strip's group (its label and its rows' rectangles go inside); kind
   names what the strip is ("heap", "mmapped", "extents").  */
void map_svg_strip_begin(struct map_svg *w, const struct map_strip *st,
			 const char *kind);
void map_svg_strip_end(struct map_svg *w);
/* Add bytes of a state to pixel x of the current row; starts: whether a
   block starts in it.  */
static inline void map_svg_add(struct map_svg *w, uint32_t x, unsigned state,
			       uint64_t bytes, bool starts)
{
	w->px[x][state] += bytes;
	w->starts[x] += starts;
	if (x < w->xmin)
		w->xmin = x;
	if (x > w->xmax)
		w->xmax = x;
}
/* Write the current row (row `row` of strip st) as rectangles, and empty
   it.  */
void map_svg_row(struct map_svg *w, const struct map_strip *st, uint32_t row);
void map_svg_end(struct map_svg *w);

#endif /* HW_MAP_H */
