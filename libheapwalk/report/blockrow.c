/* blockrow.c - one block as a row of `chunks` and `chunk ADDR`.  */
#include "../alloc/alloc.h"
#include "blockrow.h"

const struct em_field hw_block_cols[HW_NBLOCK_COLS + 1] = {
	{ .width = -6, .only = EM_TEXT_ONLY },
	{ .key = "addr", .label = "address", .width = -18, .form = EM_T_HEX0,
	  .digits = 16 },
	{ .key = "size", .label = "size", .width = 12 },
	{ .key = "state", .label = "state", .join = "  ", .width = -5 },
	{ .key = "where", .label = "where", .width = -13 },
	{ .key = "arena", .label = "arena", .width = 5 },
	{ .key = "extent", .only = EM_JSON_ONLY },
	{ .key = "szind", .only = EM_JSON_ONLY },
	{ .key = "chunk", .label = "chunk", .join = "  ", .width = -18,
	  .form = EM_T_HEX0, .digits = 16 },
	{ .key = "chunk_size", .label = "chunk size", .width = 10 },
	{ .key = "orphaned", .only = EM_JSON_ONLY },
};
_Static_assert(HW_WHERE_NAME_ROOM >= EM_WORD_ROOM,
	       "a place's name is copied as a word");

/* The states as words (emit.h: each in EM_WORD_ROOM bytes).  */
static const char state_words[2][EM_WORD_ROOM] = { "free", "used" };

void hw_block_vals(struct em_val *v, const struct hw_chunk *ch)
{
	bool extent = ch->extent != 0;
	uint8_t chunk_only = extent ? EM_TEXT_ONLY : EM_BOTH;
	v[0] = ev_addr(ch->addr);
	v[1] = ev_u64(ch->size);
	v[2] = ev_word(state_words[ch->used], 4);
	v[3] = ev_word(hw_where_name((enum hw_where)ch->where),
		       hw_where_name_len((enum hw_where)ch->where));
	v[4] = ev_i64(ch->arena);
	v[5] = extent ? ev_addr(ch->extent) : ev_absent();
	v[6] = extent ? ev_u64(ch->szind) : ev_absent();
	v[7] = (struct em_val){ .kind = EM_K_ADDR, .only = chunk_only,
				.u = ch->chunk };
	v[8] = (struct em_val){ .kind = EM_K_U64, .only = chunk_only,
				.u = ch->chunk_size };
	/* Free in a list that no longer reaches it (damage): only then.  */
	v[9] = ch->orphan ? ev_bool(true) : ev_absent();
}
