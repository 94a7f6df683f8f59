/* blockrow.c - one block as a row of `chunks` and `chunk ADDR`.  */
#include <stdio.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "blockrow.h"

/* The states as words (emit.h: each in EM_WORD_ROOM bytes).  */
static const char state_words[2][EM_WORD_ROOM] = { "free", "used" };
_Static_assert(HW_WHERE_NAME_ROOM == EM_WORD_ROOM,
	       "the places' names are a packed column's words");

const struct em_field hw_block_cols[HW_NBLOCK_COLS + 1] = {
	{ .width = -6, .only = EM_TEXT_ONLY },
	{ .key = "addr", .label = "address", .width = -18, .form = EM_T_HEX0,
	  .digits = 16, .kind = EM_K_ADDR },
	{ .key = "size", .label = "size", .width = 12, .kind = EM_K_U64 },
	{ .key = "state", .label = "state", .join = "  ", .width = -5,
	  .kind = EM_K_STR, .words = state_words[0], .nwords = 2 },
	{ .key = "where", .label = "where", .width = -13, .kind = EM_K_STR,
	  .words = hw_where_names[0], .nwords = HW_WHERE_COUNT + 1 },
	{ .key = "arena", .label = "arena", .width = 5, .kind = EM_K_I64 },
	{ .key = "extent", .only = EM_JSON_ONLY, .kind = EM_K_ADDR },
	{ .key = "szind", .only = EM_JSON_ONLY, .kind = EM_K_U64 },
	{ .key = "chunk", .label = "chunk", .join = "  ", .width = -18,
	  .form = EM_T_HEX0, .digits = 16, .kind = EM_K_ADDR },
	{ .key = "chunk_size", .label = "chunk size", .width = 10,
	  .kind = EM_K_U64 },
	{ .key = "orphaned", .only = EM_JSON_ONLY, .kind = EM_K_BOOL },
	{ .key = "maybe_free", .only = EM_JSON_ONLY, .kind = EM_K_BOOL },
};

void hw_block_cols_for(const struct hw_allocator_ops *a,
		       struct em_field cols[HW_NBLOCK_COLS],
		       char *size_label, size_t label_len)
{
	memcpy(cols, hw_block_cols + 1, HW_NBLOCK_COLS * sizeof *cols);
	if (a && a->container) {
		snprintf(size_label, label_len, "%s size", a->container);
		cols[7].label = a->container;
		cols[8].label = size_label;
	}
}

/* The columns by bit (hw_block_cols + 1).  */
enum {
	COL_ALWAYS = 0x1f,         /* addr, size, state, where, arena */
	COL_EXTENT = 0x60,         /* extent, szind */
	COL_CHUNK = 0x180,         /* chunk, chunk_size */
	COL_ORPHANED = 0x200,
	COL_MAYBE_FREE = 0x400,
};

void hw_block_pack(struct em_packed_row *r, const struct hw_chunk *ch)
{
	/* A jemalloc block names its extent (a column text leaves out);
	   its own start and size stand in text only where a chunk's are.  */
	uint32_t extent = ch->extent ? COL_EXTENT : 0;
	r->cols = COL_ALWAYS | COL_CHUNK | extent |
		  (ch->orphan ? COL_ORPHANED : 0) |
		  (ch->maybe_free ? COL_MAYBE_FREE : 0);
	r->text_only = extent ? COL_CHUNK : 0;
	r->w[0] = ch->addr;
	r->w[1] = ch->size;
	r->w[2] = ch->used;
	r->w[3] = (unsigned)ch->where;
	r->w[4] = (uint64_t)(int64_t)ch->arena;
	r->w[5] = ch->extent;
	r->w[6] = ch->szind;
	r->w[7] = ch->chunk;
	r->w[8] = ch->chunk_size;
	r->w[9] = 1;
	r->w[10] = 1;
}

void hw_block_vals(struct em_val *v, const struct hw_chunk *ch)
{
	struct em_packed_row r;
	hw_block_pack(&r, ch);
	em_unpack(hw_block_cols + 1, HW_NBLOCK_COLS, &r, v);
}
