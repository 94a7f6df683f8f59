/* chunks.c - the chunks command: every block, one row each, in walk
 * order (JSON Lines in JSON: a stream, not one document).
 */
#include <stdio.h>
#include <string.h>

#include "../emit/emit.h"
#include "../report/blockrow.h"
#include "../report/pipe.h"
#include "command.h"

struct chunks_walk {
	int filter;     /* 0 all, 1 used, 2 free */
};

/* One row; runs in several threads at once (hw_walk_rows_piped).  */
static bool print_chunk(void *cookie, struct hw_emitter *e,
			const struct hw_chunk *ch)
{
	const struct chunks_walk *w = cookie;
	if ((w->filter == 1 && !ch->used) || (w->filter == 2 && ch->used))
		return true;
	struct em_val v[HW_NBLOCK_COLS];
	hw_block_vals(v, ch);
	em_row(e, v);
	return !em_failed(e);
}

static enum hw_status chunks_run(const struct hw_cmd *c)
{
	struct chunks_walk w = { 0 };
	for (int i = 1; i < c->argc; i++) {
		int f = !strcmp(c->argv[i], "--used") ? 1
			: !strcmp(c->argv[i], "--free") ? 2 : 0;
		if (!f)
			return hw_error(c->s, HW_USAGE, "chunks: unknown "
					"argument '%s' (--used or --free)",
					c->argv[i]);
		if (w.filter && w.filter != f)
			return hw_error(c->s, HW_USAGE, "chunks: --used and "
					"--free exclude each other (give "
					"neither for every chunk)");
		w.filter = f;
	}
	/* The last two headers name what holds the block: ptmalloc's
	   chunk, jemalloc's extent (a slab of regions, or a large one),
	   tcmalloc's span.  */
	struct em_field cols[HW_NBLOCK_COLS];
	char size_label[32];
	memcpy(cols, hw_block_cols + 1, sizeof cols);
	if (c->s->alloc->container) {
		snprintf(size_label, sizeof size_label, "%s size",
			 c->s->alloc->container);
		cols[7].label = c->s->alloc->container;
		cols[8].label = size_label;
	}
	const struct em_table table = { .cols = cols, .ncols = HW_NBLOCK_COLS,
					.flags = EM_TB_LINES };
	em_table_begin(c->e, &table);
	hw_walk_rows_piped(c->s, c->e, print_chunk, &w);
	em_table_end(c->e);
	/* JSON Lines has no place for a trailer; summary --json says it.  */
	if (!em_failed(c->e) && c->s->partial.places)
		em_notef(c->e, "(partial, first at 0x%llx: %s)",
			 (unsigned long long)c->s->partial.addr,
			 c->s->partial.why);
	return HW_OK;
}

static const struct hw_command_opt chunks_opts[] = {
	{ "--used", "only the chunks in use" },
	{ "--free", "only the free chunks" },
	{ NULL, NULL } };

const struct hw_command hw_cmd_chunks = {
	.name = "chunks", .run = chunks_run, .args = "[--used|--free]",
	.summary = "every chunk", .opts = chunks_opts,
	.example = "core chunks --free --json", .needs = HW_NEED_CHUNKS,
};
