/* view.c - the view command (view ADDR [COUNT] [--bytes N]): the bytes of
 * a stretch of heap, block by block from the one holding ADDR, each
 * block's row (as `chunks` shows it) over its bytes as hexdump -C shows
 * them -- a ptmalloc chunk's from its header, so that prev_size and the
 * size field are seen where they sit.  pwndbg's vis_heap_chunks, in
 * heapwalk's form: JSON gives each block with its bytes in hex.
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../emit/emit.h"
#include "../report/args.h"
#include "../report/blockrow.h"
#include "../report/bytes.h"
#include "command.h"

#define DEFAULT_COUNT 8
#define MAX_COUNT 1000
#define DEFAULT_BYTES 256
#define MAX_BYTES 65536

struct view_walk {
	uint64_t addr;
	struct hw_chunk *blocks;
	size_t n, count;
};

/* From the block holding addr, count blocks in the walk's order.  */
static bool take_block(void *cookie, const struct hw_chunk *c)
{
	struct view_walk *w = cookie;
	if (!w->n && !hw_block_holds(c, w->addr))
		return true;
	w->blocks[w->n++] = *c;
	return w->n < w->count;
}

static bool has_0x(const char *a)
{
	return a[0] == '0' && (a[1] == 'x' || a[1] == 'X');
}

/* ADDR [COUNT] as typed.  COUNT ADDR is taken too when only the second
   word is written with 0x (gdb's `heap view` took its address last
   before 0.1): the two cannot be mistaken for one another then.  */
static enum hw_status parse(struct hw_session *s, int argc,
			    char *const argv[], struct view_walk *w,
			    uint64_t *nbytes)
{
	const char *words[2];
	int nwords = 0;
	w->count = DEFAULT_COUNT;
	*nbytes = DEFAULT_BYTES;
	for (int i = 1; i < argc; i++) {
		const char *v = hw_args_value(argc, argv, &i, "--bytes");
		if (v) {
			if (!hw_args_size(v, nbytes) || !*nbytes ||
			    *nbytes > MAX_BYTES)
				return hw_error(s, HW_USAGE, "view --bytes: '%s' "
						"is not a count from 1 to %d", v,
						MAX_BYTES);
		} else if (nwords < 2 && argv[i][0] != '-') {
			words[nwords++] = argv[i];
		} else {
			return hw_error(s, HW_USAGE, "view: unexpected '%s' "
					"(ADDR [COUNT] [--bytes N])", argv[i]);
		}
	}
	if (!nwords)
		return hw_error(s, HW_USAGE, "view: expected an address "
				"(ADDR [COUNT] [--bytes N])");
	const char *addr = words[0], *count = nwords > 1 ? words[1] : NULL;
	if (count && !has_0x(addr) && has_0x(count)) {
		addr = words[1];
		count = words[0];
	}
	if (!hw_args_addr(addr, &w->addr))
		return hw_error(s, HW_USAGE, "view: '%s' is not an address "
				"(hexadecimal, with or without 0x)", addr);
	if (count && (!hw_args_size(count, &w->count) || !w->count ||
		      w->count > MAX_COUNT))
		return hw_error(s, HW_USAGE, "view: '%s' is not a count of "
				"blocks from 1 to %d", count, MAX_COUNT);
	return HW_OK;
}

/* A block's row, and under it (text) its bytes.  */
static const struct em_field DUMP_COLS[] = {
	{ .pre = "  ", .form = EM_T_HEX0, .digits = 16 },
	{ .join = "  " },
};
static const struct em_table DUMP = {
	.cols = DUMP_COLS, .ncols = 2, .flags = EM_TB_NO_HEADER,
	.only = EM_TEXT_ONLY };

static enum hw_status view_run(const struct hw_cmd *c)
{
	struct view_walk w = { 0 };
	uint64_t nbytes;
	enum hw_status st = parse(c->s, c->argc, c->argv, &w, &nbytes);
	if (st != HW_OK)
		return st;
	w.blocks = calloc(w.count, sizeof *w.blocks);
	if (!w.blocks)
		return hw_error(c->s, HW_BAD_TARGET, "out of memory");
	/* The walk of the blocks around addr has them all but where the
	   stretch runs past its heap (or extents, or spans).  */
	hw_walk_around(c->s, w.addr, 0, w.count - 1, take_block, &w);
	if (w.n < w.count) {
		w.n = 0;
		hw_walk_blocks(c->s, take_block, &w);
	}
	struct hw_emitter *e = c->e;
	unsigned hdr = c->s->alloc->header_bytes;
	/* The columns of `chunks`, and in JSON each block's bytes in hex.  */
	struct em_field cols[HW_NBLOCK_COLS + 2];
	char size_label[32];
	hw_block_cols_for(c->s->alloc, cols, size_label, sizeof size_label);
	cols[HW_NBLOCK_COLS] = (struct em_field){ .key = "from",
						  .only = EM_JSON_ONLY };
	cols[HW_NBLOCK_COLS + 1] = (struct em_field){ .key = "bytes",
						      .only = EM_JSON_ONLY };
	const struct em_table table = { .key = "blocks", .cols = cols,
					.ncols = HW_NBLOCK_COLS + 2,
					.flags = EM_TB_ROW_COLOURS };
	em_doc_begin(e);
	em_table_begin(e, &table);
	for (size_t i = 0; i < w.n && !em_failed(e); i++) {
		const struct hw_chunk *b = &w.blocks[i];
		/* A ptmalloc chunk from its header; the rest from the block's
		   own start.  */
		uint64_t from = b->addr >= hdr ? b->addr - hdr : b->addr;
		/* (A chunk's last usable word is the next one's prev_size:
		   its bytes end at the next header.)  */
		uint64_t len = b->chunk == from && b->chunk_size
			       ? b->chunk_size : b->size + (b->addr - from);
		size_t n = (size_t)(len < nbytes ? len : nbytes);
		struct hw_bytes by;
		hw_bytes_read(c->s->target, from, n, &by);
		struct em_val v[HW_NBLOCK_COLS + 2];
		hw_block_vals(v, b);
		v[HW_NBLOCK_COLS] = ev_addr(from);
		v[HW_NBLOCK_COLS + 1] = by.have ? ev_str(by.hex) : ev_null();
		em_row_open(e, v);
		em_table_begin(e, &DUMP);
		hw_bytes_rows(e, &by);
		em_table_end(e);
		em_row_close(e);
		if (n < len)
			em_notef(e, "  ... %llu bytes more (view --bytes N "
				 "shows up to N a block)",
				 (unsigned long long)(len - n));
		hw_bytes_free(&by);
	}
	em_table_end(e);
	if (!w.n)
		em_notef(e, "(0x%llx is in no block)",
			 (unsigned long long)w.addr);
	em_doc_end(e);
	free(w.blocks);
	return HW_OK;
}

static const struct hw_command_opt view_opts[] = {
	HW_OPT_ADDR,
	{ "COUNT", "how many blocks from the one holding ADDR (8; at most "
		   "1000)" },
	{ "--bytes N", "at most N bytes of each block (256)" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_view = {
	.name = "view", .run = view_run, .args = "ADDR [COUNT] [--bytes N]",
	.summary = "the bytes of the heap block by block from ADDR, each "
		   "block's row over its bytes (a ptmalloc chunk's from its "
		   "header)",
	.opts = view_opts, .example = "core view 0x55d4c2a1b2c0 4",
	.needs = HW_NEED_CHUNKS,
};
