/* blockrow.h - a block as `chunks` and `chunk ADDR` show it
 * (report/blockrow.c).
 */
#ifndef HW_REPORT_BLOCKROW_H
#define HW_REPORT_BLOCKROW_H

#include "../alloc/alloc.h"
#include "../emit/emit.h"

/* The columns: the first is chunk ADDR's (which of the three blocks the
   row is), `chunks` starts at the second.  ptmalloc blocks are chunks
   (header address and size); jemalloc's name their extent and size
   index in JSON, and show the block's own start and size in text.  The
   last two are labelled "chunk" and "chunk size"; a command names
   jemalloc's "extent" and "extent size" in its copy
   (hw_block_cols_for).  */
#define HW_NBLOCK_COLS 11   /* a block's values: all columns but the first */
extern const struct em_field hw_block_cols[HW_NBLOCK_COLS + 1];

/* hw_block_cols + 1 in cols, the last two headers naming what holds a
   block for allocator a: ptmalloc's chunk, jemalloc's extent, tcmalloc's
   span, mallocng's slot ("slot size" made in size_label), for chunks,
   chunk ADDR and view.  */
void hw_block_cols_for(const struct hw_allocator_ops *a,
		       struct em_field cols[HW_NBLOCK_COLS],
		       char *size_label, size_t label_len);

/* Block ch as a packed row of hw_block_cols + 1 (`chunks`, millions of
   rows), or as its HW_NBLOCK_COLS values.  */
void hw_block_pack(struct em_packed_row *r, const struct hw_chunk *ch);
void hw_block_vals(struct em_val *v, const struct hw_chunk *ch);

#endif /* HW_REPORT_BLOCKROW_H */
